/* ctx.h: communication contexts. On the host path a context needs no state
 * of its own for ordering and completion (those are CPU fences); on the
 * fabric it owns a transport context (endpoint and counters). It carries
 * its options and its team, against which the PE numbers of its operations
 * are counted. The default context is a static object (SHMEM_CTX_DEFAULT)
 * on SHMEM_TEAM_WORLD. */
#ifndef SHOAL_CORE_CTX_H
#define SHOAL_CORE_CTX_H

#include <stdint.h>

#define SHOAL_CTX_MAGIC 0x43545821u

struct shoal_team;

struct shoal_ctx {
    uint32_t magic;            /* SHOAL_CTX_MAGIC while the context is alive */
    long options;
    struct shoal_team *team;
    struct shoal_tctx *tctx;        /* the transport's context (NULL: its default) */
    struct shoal_ctx *next_of_team; /* the team's list of its contexts */
};

static inline int shoal_ctx_valid(const struct shoal_ctx *c) { return c && c->magic == SHOAL_CTX_MAGIC; }

#endif

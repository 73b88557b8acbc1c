/* ctx.c: context management. Contexts are cheap on the host path (no
 * endpoint of their own); each records its options and team. */
#include <shmem.h>
#include <stdlib.h>

#include "api/check.h"

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    static const char *call = "shmem_team_create_ctx";
    shoal_check_init(call);
    if (!ctx) shoal_api_fail(call, "ctx is a null pointer");
    *ctx = SHMEM_CTX_INVALID;
    const long known = SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE;
    if (options & ~known)
        shoal_api_fail(call, "options 0x%lx have unknown bits 0x%lx (known: SHMEM_CTX_SERIALIZED, "
                       "SHMEM_CTX_PRIVATE, SHMEM_CTX_NOSTORE)", options, options & ~known);
    if (team == SHMEM_TEAM_INVALID) return -1;
    if (!shoal_team_valid(team)) shoal_api_fail(call, "team %p is not a valid team", (void *)team);
    if (team->my_rank < 0) return -1;
    if ((team->config_mask & SHMEM_TEAM_NUM_CONTEXTS) && team->contexts >= team->config.num_contexts) return -1;
    struct shoal_ctx *c = calloc(1, sizeof *c);
    if (!c) return -1;
    c->magic = SHOAL_CTX_MAGIC;
    c->options = options;
    c->team = team;
    c->next_of_team = team->ctx_list;
    team->ctx_list = c;
    team->contexts++;
    *ctx = c;
    return 0;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx) { return shmem_team_create_ctx(SHMEM_TEAM_WORLD, options, ctx); }

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    static const char *call = "shmem_ctx_destroy";
    shoal_check_init(call);
    if (ctx == SHMEM_CTX_INVALID) return;
    if (ctx == SHMEM_CTX_DEFAULT) shoal_api_fail(call, "SHMEM_CTX_DEFAULT cannot be destroyed");
    shoal_check_ctx(call, ctx);
    /* Destroying a context completes its outstanding operations. */
    shoal_rt.transport->quiet();
    struct shoal_team *team = ctx->team;
    for (struct shoal_ctx **p = &team->ctx_list; *p; p = &(*p)->next_of_team)
        if (*p == ctx) {
            *p = ctx->next_of_team;
            break;
        }
    team->contexts--;
    ctx->magic = 0;
    free(ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    static const char *call = "shmem_ctx_get_team";
    shoal_check_init(call);
    if (!team) shoal_api_fail(call, "team is a null pointer");
    if (ctx == SHMEM_CTX_INVALID) {
        *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    shoal_check_ctx(call, ctx);
    *team = ctx->team;
    return 0;
}

/* Sessions (1.6) tell the library a burst of operations is coming; on the
 * host path there is nothing to prepare, so only the context is checked. */
void shmem_ctx_session_start(shmem_ctx_t ctx) { shoal_check_init("shmem_ctx_session_start"); shoal_check_ctx("shmem_ctx_session_start", ctx); }
void shmem_ctx_session_stop(shmem_ctx_t ctx) { shoal_check_init("shmem_ctx_session_stop"); shoal_check_ctx("shmem_ctx_session_stop", ctx); }

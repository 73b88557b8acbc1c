/* ctx.h: communication contexts. On the host path a context carries no
 * state of its own beyond its options: ordering and completion are CPU
 * fences. The default context is a static object (SHMEM_CTX_DEFAULT). */
#ifndef SHOAL_CORE_CTX_H
#define SHOAL_CORE_CTX_H

struct shoal_ctx {
    long options;
    int is_default;
};

#endif

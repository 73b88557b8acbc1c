/* ctx.c: context management. Contexts are cheap on the host path (no
 * endpoint of their own); each records its options and team.
 *
 * Context objects come from a pool of chunks that are never returned to
 * libc, so shoal_api_ctx_known can tell a live handle from a garbage or
 * destroyed one without following an unknown pointer: a handle is known
 * when it is a slot of a chunk whose magic is set. Destroyed slots go to
 * the back of a FIFO, so a stale handle stays invalid as long as possible.
 * Lookups take no lock (chunks are published with release ordering);
 * create and destroy take pool_lock. */
#include <pthread.h>
#include <shmem.h>
#include <stdlib.h>

#include "api/check.h"
#include "api/profiling.h"

#define CTX_CHUNK 64
#define CTX_CHUNKS_MAX 256 /* 16384 contexts alive at once */

static struct shoal_ctx *chunks[CTX_CHUNKS_MAX];
static int n_chunks; /* atomic: chunks[0, n_chunks) are published */
static struct shoal_ctx *free_head, *free_tail; /* FIFO of free slots through next_of_team */
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

int shoal_api_ctx_known(shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_DEFAULT) return 1;
    const uintptr_t p = (uintptr_t)ctx;
    const int n = __atomic_load_n(&n_chunks, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n; i++) {
        const uintptr_t base = (uintptr_t)chunks[i];
        if (p < base || p >= base + CTX_CHUNK * sizeof(struct shoal_ctx)) continue;
        if ((p - base) % sizeof(struct shoal_ctx)) return 0;
        return __atomic_load_n(&ctx->magic, __ATOMIC_ACQUIRE) == SHOAL_CTX_MAGIC;
    }
    return 0;
}

static struct shoal_ctx *ctx_take(void)
{
    struct shoal_ctx *c = NULL;
    pthread_mutex_lock(&pool_lock);
    if (!free_head && n_chunks < CTX_CHUNKS_MAX) {
        struct shoal_ctx *chunk = calloc(CTX_CHUNK, sizeof *chunk);
        if (chunk) {
            for (int i = 0; i < CTX_CHUNK; i++) chunk[i].next_of_team = i + 1 < CTX_CHUNK ? &chunk[i + 1] : NULL;
            free_head = chunk;
            free_tail = &chunk[CTX_CHUNK - 1];
            chunks[n_chunks] = chunk;
            __atomic_store_n(&n_chunks, n_chunks + 1, __ATOMIC_RELEASE);
        }
    }
    if (free_head) {
        c = free_head;
        free_head = c->next_of_team;
        if (!free_head) free_tail = NULL;
        c->next_of_team = NULL;
    }
    pthread_mutex_unlock(&pool_lock);
    return c;
}

/* Puts c back on the free list; pool_lock is held. */
static void pool_return_locked(struct shoal_ctx *c)
{
    __atomic_store_n(&c->magic, 0, __ATOMIC_RELEASE);
    c->team = NULL;
    c->next_of_team = NULL;
    if (free_tail) free_tail->next_of_team = c;
    else free_head = c;
    free_tail = c;
}

/* Unlinks c from its team and returns it to the pool. */
static void ctx_give_back(struct shoal_ctx *c)
{
    pthread_mutex_lock(&pool_lock);
    struct shoal_team *team = c->team;
    for (struct shoal_ctx **p = &team->ctx_list; *p; p = &(*p)->next_of_team)
        if (*p == c) {
            *p = c->next_of_team;
            break;
        }
    team->contexts--;
    pool_return_locked(c);
    pthread_mutex_unlock(&pool_lock);
}

static int create_ctx(const char *call, shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    shoal_check_init(call);
    if (!ctx) shoal_api_fail(call, "ctx is a null pointer");
    *ctx = SHMEM_CTX_INVALID;
    /* Options only promise how the context will be used, so a bit this
     * library does not know (a later standard's) is dropped: a context that
     * relies on no promise is correct for any use. */
    options &= SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE;
    if (team == SHMEM_TEAM_INVALID) return -1;
    if (!shoal_api_team_known(team))
        shoal_api_fail(call, "team %p is not a valid team (never created, or already destroyed)", (void *)team);
    if (team->my_rank < 0) return -1;
    struct shoal_ctx *c = ctx_take();
    if (!c) return -1;
    if (shoal_rt.transport->ctx_create(&c->tctx) != SHOAL_OK) {
        pthread_mutex_lock(&pool_lock);
        pool_return_locked(c);
        pthread_mutex_unlock(&pool_lock);
        return -1;
    }
    /* Threads may create and destroy contexts of one team at once. */
    pthread_mutex_lock(&pool_lock);
    if ((team->config_mask & SHMEM_TEAM_NUM_CONTEXTS) && team->contexts >= team->config.num_contexts) {
        pool_return_locked(c);
        pthread_mutex_unlock(&pool_lock);
        shoal_rt.transport->ctx_destroy(c->tctx);
        c->tctx = NULL;
        return -1;
    }
    c->options = options;
    c->team = team;
    c->next_of_team = team->ctx_list;
    team->ctx_list = c;
    team->contexts++;
    __atomic_store_n(&c->magic, SHOAL_CTX_MAGIC, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&pool_lock);
    *ctx = c;
    return 0;
}

SHOAL_WEAK_ALIAS(shmem_team_create_ctx);
int pshmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    return create_ctx("shmem_team_create_ctx", team, options, ctx);
}

SHOAL_WEAK_ALIAS(shmem_ctx_create);
int pshmem_ctx_create(long options, shmem_ctx_t *ctx) { return create_ctx("shmem_ctx_create", SHMEM_TEAM_WORLD, options, ctx); }

SHOAL_WEAK_ALIAS(shmem_ctx_destroy);
void pshmem_ctx_destroy(shmem_ctx_t ctx)
{
    static const char *call = "shmem_ctx_destroy";
    shoal_check_init(call);
    if (ctx == SHMEM_CTX_INVALID) return;
    if (ctx == SHMEM_CTX_DEFAULT) shoal_api_fail(call, "SHMEM_CTX_DEFAULT cannot be destroyed");
    shoal_check_ctx(call, ctx);
    /* Destroying a context completes its outstanding operations. */
    shoal_rt.transport->quiet(ctx->tctx);
    shoal_rt.transport->ctx_destroy(ctx->tctx);
    ctx->tctx = NULL;
    ctx_give_back(ctx);
}

SHOAL_WEAK_ALIAS(shmem_ctx_get_team);
int pshmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
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

/* Sessions (1.6) tell the library a burst of operations is coming. They are
 * hints: on the host path stores go straight to the peer, so there is
 * nothing to prepare, and no option or mask bit changes what any call does
 * (the standard: no combination of options is undefined). Unknown bits are
 * ignored, as bits of a later standard would be. The context must still be
 * a real one; SHMEM_CTX_INVALID makes both calls do nothing. */
SHOAL_WEAK_ALIAS(shmem_ctx_session_start);
void pshmem_ctx_session_start(shmem_ctx_t ctx, long options, const shmem_ctx_session_config_t *config,
                              long config_mask)
{
    static const char *call = "shmem_ctx_session_start";
    shoal_check_init(call);
    (void)options;
    if (ctx == SHMEM_CTX_INVALID) return;
    shoal_check_ctx(call, ctx);
    if ((config_mask & SHMEM_CTX_SESSION_TOTAL_OPS) && !config)
        shoal_api_fail(call, "config is a null pointer, but config_mask 0x%lx asks for its fields", config_mask);
}

SHOAL_WEAK_ALIAS(shmem_ctx_session_stop);
void pshmem_ctx_session_stop(shmem_ctx_t ctx)
{
    static const char *call = "shmem_ctx_session_stop";
    shoal_check_init(call);
    if (ctx == SHMEM_CTX_INVALID) return;
    shoal_check_ctx(call, ctx);
}

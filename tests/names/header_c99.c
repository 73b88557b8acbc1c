/* shmem.h compiles as C99: the typed names are declared and the C11 generic
 * macros are left out. */
#include <shmem.h>

#if defined(shmem_put) || defined(shmem_wait_until) || defined(shmem_wait)
#error "the C11 generic macros must not be defined before C11"
#endif
#if defined(shmem_atomic_fetch_add) || defined(shmem_fadd) || defined(shmem_put_signal)
#error "the C11 generic AMO and signal macros must not be defined before C11"
#endif
#if defined(shmem_sum_reduce) || defined(shmem_broadcast) || defined(shmem_alltoalls)
#error "the C11 generic collective macros must not be defined before C11"
#endif

void names_c99(int *dest, const int *source, long *ivar, uint64_t *sig, float _Complex *z, long *psync);

void names_c99(int *dest, const int *source, long *ivar, uint64_t *sig, float _Complex *z, long *psync)
{
    shmem_int_put(dest, source, 1, 0);
    shmem_ctx_int_iput(SHMEM_CTX_DEFAULT, dest, source, 2, 1, 1, 0);
    shmem_long_wait_until(ivar, SHMEM_CMP_NE, 0);
    *dest = shmem_int_atomic_fetch_add(dest, 1, 0);
    shmem_ctx_long_atomic_compare_swap_nbi(SHMEM_CTX_DEFAULT, ivar, ivar, 0, 1, 0);
    *dest = shmem_int_fadd(dest, 1, 0);
    shmem_int_put_signal(dest, source, 1, sig, 1, SHMEM_SIGNAL_ADD, 0);
    shmem_ctx_putmem_signal_nbi(SHMEM_CTX_DEFAULT, dest, source, sizeof(int), sig, 1, SHMEM_SIGNAL_SET, 0);
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, dest, source, 1);
    shmem_complexf_prod_reduce(SHMEM_TEAM_WORLD, z, z, 1);
    shmem_complexf_sum_inscan(SHMEM_TEAM_WORLD, z, z, 1);
    shmem_complexf_sum_to_all(z, z, 1, 0, 0, 1, z, psync);
    shmem_int_broadcast(SHMEM_TEAM_WORLD, dest, source, 1, 0);
    shmem_alltoallsmem(SHMEM_TEAM_WORLD, dest, source, 1, 1, sizeof(int));
    shmem_fcollect64(dest, source, 1, 0, 0, 1, psync);
}

/* issue 14 (h-spec): before C11, shmem_sync is the deprecated four-argument
 * function, not a macro; shmem_team_sync is the team form. The 1.6
 * session calls have the standard's shape. */
#if defined(shmem_sync)
#error "shmem_sync must stay the deprecated function before C11"
#endif
void names_c99_spec(long *psync, shmem_ctx_t ctx);
void names_c99_spec(long *psync, shmem_ctx_t ctx)
{
    void (*deprecated_sync)(int, int, int, long *) = shmem_sync;
    deprecated_sync(0, 0, 1, psync);
    shmem_sync(0, 0, 1, psync);
    (void)shmem_team_sync(SHMEM_TEAM_WORLD);
    shmem_ctx_session_config_t config = {.total_ops = 4};
    shmem_ctx_session_start(ctx, SHMEM_CTX_SESSION_BATCH, &config, SHMEM_CTX_SESSION_TOTAL_OPS);
    shmem_ctx_session_stop(ctx);
}

/* issue 16 (h-prof): pshmem.h and <mpp/pshmem.h> compile as C99 too; the
 * addresses make the declarations' types part of the check. */
#include <mpp/pshmem.h>
#include <pshmem.h>
void (*names_c99_pshmem_put)(void *, const void *, size_t, int) = pshmem_putmem;
void (*names_c99_pshmem_wait)(long *, int, long) = pshmem_wait_until;
int (*names_c99_pshmem_sync)(shmem_team_t) = pshmem_team_sync;

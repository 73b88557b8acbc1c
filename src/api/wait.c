/* wait.c: the byte-based wait/test entry points (wait_api.h): checks, then
 * the wait core in src/sync. */
#include "api/wait_api.h"

#include "api/check.h"
#include "observe/observe.h"
#include "observe/blocked.h"
#include "sync/backoff.h"
#include "sync/wait.h"

static struct shoal_scalar scalar_of(shoal_kind_t kind)
{
    return (struct shoal_scalar){.size = kind / 2u, .is_signed = (int)(kind & 1u)};
}

static struct shoal_scalar check_wait(const char *call, const void *ivars, size_t nelems, shoal_kind_t kind,
                                      int cmp)
{
    shoal_check_init(call);
    struct shoal_scalar t = scalar_of(kind);
    if (SHOAL_UNLIKELY(!shoal_cmp_valid(cmp)))
        shoal_api_fail(call, "comparison %d is not one of SHMEM_CMP_EQ, NE, GT, GE, LT, LE (%d to %d)", cmp,
                       SHMEM_CMP_EQ, SHMEM_CMP_LE);
    size_t off, bytes = shoal_check_bytes(call, nelems, t.size);
    if (nelems) {
        shoal_check_symmetric(call, "ivars", ivars, bytes, &off);
        shoal_check_aligned(call, "ivars", ivars, t.size);
    }
    return t;
}

void shoal_api_wait_until(void *ivar, shoal_kind_t kind, int cmp, const void *value, const char *call)
{
    struct shoal_scalar t = check_wait(call, ivar, 1, kind, cmp);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_WAIT, call, -1, t.size);
    shoal_blocked_wait(call, ivar, t.size, t.is_signed, cmp, shoal_scalar_read(t, value), 0);
    shoal_wait_scalar(t, ivar, cmp, shoal_scalar_read(t, value));
    shoal_blocked_end();
    if (t.size == 8) SHOAL_OBS_WAIT_SEEN(sp, ivar, __atomic_load_n((const uint64_t *)ivar, __ATOMIC_RELAXED));
}

int shoal_api_test(void *ivar, shoal_kind_t kind, int cmp, const void *value, const char *call)
{
    struct shoal_scalar t = check_wait(call, ivar, 1, kind, cmp);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_WAIT, call, -1, t.size);
    /* A test polled in a loop shows in a hang report as the last call. */
    shoal_blocked_polled(call, ivar, t.size, t.is_signed, cmp, shoal_scalar_read(t, value), 0);
    int holds = shoal_cmp_holds(t, cmp, shoal_scalar_load(t, ivar), shoal_scalar_read(t, value));
    if (!holds) shoal_backoff_poll_failed();
    return holds;
}

/* Fairness of the any forms: a series of calls must eventually return every
 * satisfied index, so each scan of an array starts one past the index the
 * last call on that array returned. Each thread remembers the last few
 * arrays it scanned (no lock, and each thread's own series of calls is
 * fair). An array it does not remember starts at a random index, which no
 * pattern of calls can keep away from an index for long. */
#define ANY_CURSORS 8
struct any_cursor {
    const void *ivars;
    size_t next;
};
static _Thread_local struct any_cursor any_cursors[ANY_CURSORS];
static _Thread_local unsigned any_evict;
static _Thread_local uint64_t any_random;

static size_t random_start(void)
{
    if (!any_random) any_random = (uint64_t)(uintptr_t)&any_random * 0x9E3779B97F4A7C15ull | 1u;
    any_random ^= any_random << 13; /* xorshift64 */
    any_random ^= any_random >> 7;
    any_random ^= any_random << 17;
    return (size_t)(any_random >> 11);
}

static struct any_cursor *any_cursor_of(const void *ivars, size_t *start)
{
    for (int i = 0; i < ANY_CURSORS; i++)
        if (any_cursors[i].ivars == ivars) {
            *start = any_cursors[i].next;
            return &any_cursors[i];
        }
    struct any_cursor *c = &any_cursors[any_evict++ % ANY_CURSORS];
    c->ivars = ivars;
    *start = random_start();
    return c;
}

static size_t wait_set(const char *call, void *ivars, size_t nelems, size_t *indices, const int *status,
                       shoal_kind_t kind, int cmp, const void *value, const void *values,
                       enum shoal_wait_mode mode, int blocking)
{
    struct shoal_scalar t = check_wait(call, ivars, nelems, kind, cmp);
    SHOAL_OBS_SPAN(sp, SHOAL_OBS_WAIT, call, -1, (uint64_t)nelems * t.size);
    if (SHOAL_UNLIKELY(mode == SHOAL_WAIT_SOME && nelems && !indices))
        shoal_api_fail(call, "indices is a null pointer, but nelems is %zu", nelems);
    /* The _vector forms pass values and no value. */
    if (SHOAL_UNLIKELY(!values && !value && nelems))
        shoal_api_fail(call, "cmp_values is a null pointer, but nelems is %zu", nelems);
    uint64_t scalar = values ? 0 : shoal_scalar_read(t, value);
    size_t start = 0;
    struct any_cursor *cursor = mode == SHOAL_WAIT_ANY && nelems ? any_cursor_of(ivars, &start) : NULL;
    if (nelems) start %= nelems;
    if (blocking) shoal_blocked_wait(call, ivars, t.size, t.is_signed, cmp, scalar, nelems);
    else shoal_blocked_polled(call, ivars, t.size, t.is_signed, cmp, scalar, nelems);
    size_t result = shoal_wait_set(t, ivars, nelems, indices, status, cmp, scalar, values, mode, blocking, start);
    if (blocking) shoal_blocked_end();
    if (cursor && result != SIZE_MAX) cursor->next = result + 1;
    /* A failed test is usually polled in a loop: with more PEs than cores,
     * let the PE that would satisfy it run. */
    if (!blocking && ((mode == SHOAL_WAIT_ANY && result == SIZE_MAX) || (mode != SHOAL_WAIT_ANY && result == 0)))
        shoal_backoff_poll_failed();
    return result;
}

void shoal_api_wait_until_all(void *ivars, size_t nelems, const int *status, shoal_kind_t kind, int cmp,
                              const void *value, const void *values, const char *call)
{
    wait_set(call, ivars, nelems, NULL, status, kind, cmp, value, values, SHOAL_WAIT_ALL, 1);
}

size_t shoal_api_wait_until_any(void *ivars, size_t nelems, const int *status, shoal_kind_t kind, int cmp,
                                const void *value, const void *values, const char *call)
{
    return wait_set(call, ivars, nelems, NULL, status, kind, cmp, value, values, SHOAL_WAIT_ANY, 1);
}

size_t shoal_api_wait_until_some(void *ivars, size_t nelems, size_t *indices, const int *status,
                                 shoal_kind_t kind, int cmp, const void *value, const void *values,
                                 const char *call)
{
    return wait_set(call, ivars, nelems, indices, status, kind, cmp, value, values, SHOAL_WAIT_SOME, 1);
}

int shoal_api_test_all(void *ivars, size_t nelems, const int *status, shoal_kind_t kind, int cmp,
                       const void *value, const void *values, const char *call)
{
    return (int)wait_set(call, ivars, nelems, NULL, status, kind, cmp, value, values, SHOAL_WAIT_ALL, 0);
}

size_t shoal_api_test_any(void *ivars, size_t nelems, const int *status, shoal_kind_t kind, int cmp,
                          const void *value, const void *values, const char *call)
{
    return wait_set(call, ivars, nelems, NULL, status, kind, cmp, value, values, SHOAL_WAIT_ANY, 0);
}

size_t shoal_api_test_some(void *ivars, size_t nelems, size_t *indices, const int *status,
                           shoal_kind_t kind, int cmp, const void *value, const void *values,
                           const char *call)
{
    return wait_set(call, ivars, nelems, indices, status, kind, cmp, value, values, SHOAL_WAIT_SOME, 0);
}

/* team.c: team management.
 * 1. SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED queries (SHARED is exactly the
 *    PEs shmem_ptr reaches; on one host with the default transport, every
 *    PE), team_ptr and translate_pe on them.
 * 2. split_strided with strides 1, 2, 3 and start offsets 0..2, and a split
 *    of a split (world stride 4): my_pe, n_pes, translate_pe to and from
 *    world and between sibling teams (-1 for non-members and out-of-range
 *    PEs), team_ptr, get_config, and data put to team PEs through
 *    translate_pe landing on the right world PE after shmem_team_sync.
 * 3. split_2d with xrange 1, 2, 3 and > npes, also of a strided parent.
 * 4. SHMEM_TEAM_NUM_CONTEXTS in the config, read back by get_config, and
 *    that many contexts created on the team.
 * 5. Destroy and re-create teams many times (more than SHMEM_TEAMS_MAX), and
 *    several teams held at once, destroyed out of order.
 * 6. SHMEM_TEAM_INVALID: my_pe/n_pes -1, translate -1, create_ctx and
 *    get_config nonzero, split of it nonzero with INVALID out, destroy no-op. */
#include <shmem.h>
#include <stdlib.h>
#include <string.h>

#include "api_util.h"

static int me, npes;
static long *buf; /* npes + 1 longs per PE */

/* Rank of world PE pe in the (start, stride, size) set, or -1. */
static int rank_in(int pe, int start, int stride, int size)
{
    if (pe < start) return -1;
    if (size == 1) return pe == start ? 0 : -1;
    if ((pe - start) % stride) return -1;
    int r = (pe - start) / stride;
    return r < size ? r : -1;
}

/* World PE p's rank in SHMEM_TEAM_SHARED (-1: not on this PE's host). */
static int shared_rank(int p) { return shmem_team_translate_pe(SHMEM_TEAM_WORLD, p, SHMEM_TEAM_SHARED); }

/* One oshrun node and no forced fabric: every PE shares this host's memory. */
static int one_host_default_transport(void)
{
    const char *t = getenv("SHMEM_TRANSPORT");
    return !getenv("SHOAL_NODE_RANK") && (!t || (strcmp(t, "ofi") && strcmp(t, "tls")));
}

/* Checks team t against the world PEs start + i*stride, i < size. */
static void check_geometry(shmem_team_t t, int start, int stride, int size, const char *what)
{
    const int rank = rank_in(me, start, stride, size);
    if (rank < 0) {
        CHECK_MSG(t == SHMEM_TEAM_INVALID, "%s: PE %d is no member but got a team", what, me);
        CHECK_MSG(shmem_team_my_pe(t) == -1 && shmem_team_n_pes(t) == -1, "%s: queries on INVALID", what);
        return;
    }
    CHECK_MSG(t != SHMEM_TEAM_INVALID, "%s: member PE %d got SHMEM_TEAM_INVALID", what, me);
    if (t == SHMEM_TEAM_INVALID) return;
    CHECK_MSG(shmem_team_my_pe(t) == rank, "%s: team_my_pe %d, expected %d", what, shmem_team_my_pe(t), rank);
    CHECK_MSG(shmem_team_n_pes(t) == size, "%s: team_n_pes %d, expected %d", what, shmem_team_n_pes(t), size);
    for (int r = 0; r < size; r++) {
        const int w = start + r * stride;
        int got = shmem_team_translate_pe(t, r, SHMEM_TEAM_WORLD);
        CHECK_MSG(got == w, "%s: translate team PE %d to world: %d, expected %d", what, r, got, w);
        got = shmem_team_translate_pe(t, r, SHMEM_TEAM_SHARED);
        CHECK_MSG(got == shared_rank(w), "%s: translate team PE %d to SHARED: %d, expected %d", what, r, got,
                  shared_rank(w));
        void *p = shmem_team_ptr(t, buf, r), *q = shmem_ptr(buf, w);
        CHECK_MSG(p == q && (p != NULL) == (shared_rank(w) >= 0), "%s: team_ptr(%d) %p, shmem_ptr(world %d) %p",
                  what, r, p, w, q);
    }
    for (int w = 0; w < npes; w++) {
        int got = shmem_team_translate_pe(SHMEM_TEAM_WORLD, w, t);
        int want = rank_in(w, start, stride, size);
        CHECK_MSG(got == want, "%s: translate world PE %d into team: %d, expected %d", what, w, got, want);
    }
    CHECK_MSG(shmem_team_translate_pe(t, -1, SHMEM_TEAM_WORLD) == -1, "%s: translate PE -1", what);
    CHECK_MSG(shmem_team_translate_pe(t, size, SHMEM_TEAM_WORLD) == -1, "%s: translate PE n_pes", what);
    CHECK_MSG(shmem_team_translate_pe(t, 0, SHMEM_TEAM_INVALID) == -1, "%s: translate into INVALID", what);
    CHECK_MSG(shmem_team_ptr(t, buf, size) == NULL, "%s: team_ptr past the team", what);
    CHECK_MSG(shmem_team_ptr(t, buf, -1) == NULL, "%s: team_ptr(-1)", what);

    /* Data: every member writes its world PE number into slot rank of
     * every team PE, addressed through translate_pe. */
    for (int i = 0; i <= npes; i++) buf[i] = -5;
    shmem_team_sync(t);
    for (int r = 0; r < size; r++)
        shmem_long_p(&buf[rank], 1000 + me, shmem_team_translate_pe(t, r, SHMEM_TEAM_WORLD));
    shmem_quiet();
    shmem_team_sync(t);
    for (int r = 0; r < size; r++)
        CHECK_MSG(buf[r] == 1000 + start + r * stride, "%s: slot %d holds %ld, expected %d", what, r, buf[r],
                  1000 + start + r * stride);
    for (int i = size; i <= npes; i++) CHECK_MSG(buf[i] == -5, "%s: slot %d written (%ld)", what, i, buf[i]);
    shmem_team_sync(t);
}

static void predefined(void)
{
    CHECK(shmem_team_my_pe(SHMEM_TEAM_WORLD) == me);
    CHECK(shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes);
    /* SHARED: the PEs shmem_ptr reaches, in world order. */
    int shared = 0;
    for (int p = 0; p < npes; p++) {
        CHECK_MSG(shared_rank(p) == (shmem_ptr(buf, p) ? shared : -1), "world PE %d: SHARED rank %d", p,
                  shared_rank(p));
        if (shmem_ptr(buf, p)) shared++;
    }
    CHECK(shared_rank(me) >= 0);
    CHECK_MSG(shmem_team_n_pes(SHMEM_TEAM_SHARED) == shared, "SHARED has %d PEs, shmem_ptr reaches %d",
              shmem_team_n_pes(SHMEM_TEAM_SHARED), shared);
    CHECK(shmem_team_my_pe(SHMEM_TEAM_SHARED) == shared_rank(me));
    if (one_host_default_transport())
        CHECK_MSG(shared == npes, "one host, default transport: SHARED has %d of %d PEs", shared, npes);
    shmem_team_config_t cfg = {.num_contexts = 77};
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &cfg) == 0);
    CHECK_MSG(cfg.num_contexts == 0, "world num_contexts %d", cfg.num_contexts);
    cfg.num_contexts = 77;
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, 0, &cfg) == 0);
    CHECK_MSG(cfg.num_contexts == 77, "get_config with mask 0 changed the config (%d)", cfg.num_contexts);
    for (int p = 0; p < npes; p++) {
        const int r = shared_rank(p);
        if (r >= 0) {
            CHECK(shmem_team_translate_pe(SHMEM_TEAM_SHARED, r, SHMEM_TEAM_WORLD) == p);
            CHECK(shmem_team_ptr(SHMEM_TEAM_SHARED, buf, r) == shmem_ptr(buf, p));
        }
        CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, buf, p) == shmem_ptr(buf, p));
    }
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, npes, SHMEM_TEAM_SHARED) == -1);
    CHECK(shmem_team_ptr(SHMEM_TEAM_WORLD, buf, me) == buf);
    check_geometry(SHMEM_TEAM_WORLD, 0, 1, npes, "world");
    /* SHARED is strided over world: from its first PE by the gap to its second. */
    const int s0 = shmem_team_translate_pe(SHMEM_TEAM_SHARED, 0, SHMEM_TEAM_WORLD);
    const int s1 = shared > 1 ? shmem_team_translate_pe(SHMEM_TEAM_SHARED, 1, SHMEM_TEAM_WORLD) : s0 + 1;
    check_geometry(SHMEM_TEAM_SHARED, s0, s1 - s0, shared, "shared");
}

static void strided(void)
{
    char what[96];
    for (int stride = 1; stride <= 3; stride++)
        for (int start = 0; start <= 2; start++) {
            if (start >= npes) continue;
            const int size = (npes - 1 - start) / stride + 1;
            shmem_team_t t = SHMEM_TEAM_INVALID;
            int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &t);
            const int member = rank_in(me, start, stride, size) >= 0;
            snprintf(what, sizeof what, "split(start %d, stride %d, size %d)", start, stride, size);
            CHECK_MSG(member ? rc == 0 : 1, "%s returned %d", what, rc);
            check_geometry(t, start, stride, size, what);
            /* A smaller team, and one PE. */
            if (size > 1) {
                shmem_team_t u;
                rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size - 1, NULL, 0, &u);
                snprintf(what, sizeof what, "split(start %d, stride %d, size %d)", start, stride, size - 1);
                check_geometry(u, start, stride, size - 1, what);
                shmem_team_destroy(u);
            }
            shmem_team_t one;
            rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, npes - 1, stride, 1, NULL, 0, &one);
            check_geometry(one, npes - 1, 1, 1, "split of the last PE alone");
            shmem_team_destroy(one);

            /* Siblings: translate between t and a team of stride 1 from 1,
             * and between t and the split of t with stride 2. */
            shmem_team_t sib = SHMEM_TEAM_INVALID;
            if (npes > 1) {
                shmem_team_split_strided(SHMEM_TEAM_WORLD, 1, 1, npes - 1, NULL, 0, &sib);
                check_geometry(sib, 1, 1, npes - 1, "sibling from 1");
            }
            if (t != SHMEM_TEAM_INVALID && sib != SHMEM_TEAM_INVALID) {
                for (int r = 0; r < size; r++) {
                    const int w = start + r * stride;
                    int got = shmem_team_translate_pe(t, r, sib), want = w >= 1 ? w - 1 : -1;
                    CHECK_MSG(got == want, "%s: team PE %d into sibling: %d, expected %d", what, r, got, want);
                }
                for (int r = 0; r < npes - 1; r++) {
                    int got = shmem_team_translate_pe(sib, r, t), want = rank_in(r + 1, start, stride, size);
                    CHECK_MSG(got == want, "%s: sibling PE %d into team: %d, expected %d", what, r, got, want);
                }
            }
            if (t != SHMEM_TEAM_INVALID && size > 1) {
                /* Split of the split: team ranks 1, 3, 5, ... */
                const int sub_size = size / 2;
                shmem_team_t sub = SHMEM_TEAM_INVALID;
                rc = shmem_team_split_strided(t, 1, 2, sub_size, NULL, 0, &sub);
                CHECK_MSG(rank_in(me, start + stride, 2 * stride, sub_size) < 0 || rc == 0, "nested split rc %d", rc);
                snprintf(what, sizeof what, "split(split %d/%d, 1, 2, %d)", start, stride, sub_size);
                check_geometry(sub, start + stride, 2 * stride, sub_size, what);
                if (sub != SHMEM_TEAM_INVALID) {
                    for (int r = 0; r < sub_size; r++)
                        CHECK(shmem_team_translate_pe(sub, r, t) == 1 + 2 * r);
                    CHECK(shmem_team_translate_pe(t, 0, sub) == -1);
                }
                shmem_team_destroy(sub);
            }
            shmem_team_destroy(sib);
            shmem_team_destroy(t);
        }
}

static void split2d_check(shmem_team_t parent, int pstart, int pstride, int psize, int xrange)
{
    const int prank = rank_in(me, pstart, pstride, psize);
    if (prank < 0) return;
    shmem_team_t x = SHMEM_TEAM_INVALID, y = SHMEM_TEAM_INVALID;
    int rc = shmem_team_split_2d(parent, xrange, NULL, 0, &x, NULL, 0, &y);
    CHECK_MSG(rc == 0, "split_2d(xrange %d) returned %d", xrange, rc);
    const int xr = xrange > psize ? psize : xrange;
    const int x0 = prank / xr * xr, col = prank % xr;
    const int xsize = psize - x0 < xr ? psize - x0 : xr;
    const int ysize = (psize - col + xr - 1) / xr;
    char what[96];
    snprintf(what, sizeof what, "split_2d x axis (parent %d/%d/%d, xrange %d)", pstart, pstride, psize, xrange);
    /* x and y teams are local to their members; check_geometry syncs only
     * within the team. */
    check_geometry(x, pstart + x0 * pstride, pstride, xsize, what);
    snprintf(what, sizeof what, "split_2d y axis (parent %d/%d/%d, xrange %d)", pstart, pstride, psize, xrange);
    check_geometry(y, pstart + col * pstride, pstride * xr, ysize, what);
    if (x != SHMEM_TEAM_INVALID && y != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_my_pe(x) == col);
        CHECK(shmem_team_my_pe(y) == prank / xr);
        /* The x and y teams meet in this PE only. */
        for (int r = 0; r < xsize; r++) {
            int got = shmem_team_translate_pe(x, r, y);
            CHECK_MSG(got == (r == col ? prank / xr : -1), "x PE %d into y: %d", r, got);
        }
    }
    shmem_team_destroy(x);
    shmem_team_destroy(y);
}

static void split2d(void)
{
    const int xr[4] = {1, 2, 3, npes + 1};
    for (int i = 0; i < 4; i++) split2d_check(SHMEM_TEAM_WORLD, 0, 1, npes, xr[i]);
    /* A strided parent: the odd PEs (or PE 0 alone with 1 PE). */
    const int start = npes > 1 ? 1 : 0, size = npes > 1 ? npes / 2 : 1;
    shmem_team_t odd;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, start, 2, size, NULL, 0, &odd);
    for (int i = 0; i < 4; i++) split2d_check(odd, start, 2, size, xr[i]);
    shmem_team_destroy(odd);
    shmem_barrier_all();
}

static void config(void)
{
    shmem_team_config_t cfg = {.num_contexts = 3};
    shmem_team_t t;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &cfg, SHMEM_TEAM_NUM_CONTEXTS, &t);
    CHECK(rc == 0 && t != SHMEM_TEAM_INVALID);
    shmem_team_config_t got = {.num_contexts = -1};
    CHECK(shmem_team_get_config(t, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0);
    CHECK_MSG(got.num_contexts == 3, "num_contexts read back %d", got.num_contexts);
    shmem_ctx_t ctx[3];
    for (int i = 0; i < 3; i++) {
        CHECK(shmem_team_create_ctx(t, 0, &ctx[i]) == 0);
        shmem_team_t owner = SHMEM_TEAM_INVALID;
        CHECK(shmem_ctx_get_team(ctx[i], &owner) == 0 && owner == t);
    }
    for (int i = 0; i < 3; i++) shmem_ctx_destroy(ctx[i]);
    shmem_team_destroy(t);

    /* No config: num_contexts reads as 0. 2-D with configs on both axes. */
    rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &t);
    got.num_contexts = -1;
    CHECK(shmem_team_get_config(t, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 0);
    shmem_team_destroy(t);
    shmem_team_config_t xc = {.num_contexts = 1}, yc = {.num_contexts = 2};
    shmem_team_t x, y;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, 2, &xc, SHMEM_TEAM_NUM_CONTEXTS, &x, &yc, SHMEM_TEAM_NUM_CONTEXTS, &y) == 0);
    CHECK(shmem_team_get_config(x, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 1);
    CHECK(shmem_team_get_config(y, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 2);
    shmem_team_destroy(x);
    shmem_team_destroy(y);
}

/* More creations than SHMEM_TEAMS_MAX allows at once: slots are reused. */
static void churn(void)
{
    for (int round = 0; round < 150; round++) {
        const int stride = 1 + round % 3, start = npes > 1 ? round % 2 : 0;
        const int size = (npes - 1 - start) / stride + 1;
        shmem_team_t t;
        int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, start, stride, size, NULL, 0, &t);
        const int rank = rank_in(me, start, stride, size);
        CHECK_MSG(rank < 0 || (rc == 0 && shmem_team_my_pe(t) == rank), "churn round %d: rc %d my_pe %d", round, rc,
                  shmem_team_my_pe(t));
        if (rank >= 0 && round % 10 == 0) {
            /* Use it: a sync and a ring put inside the team. */
            const int n = shmem_team_n_pes(t);
            buf[0] = -1;
            shmem_team_sync(t);
            shmem_long_p(&buf[0], round * 100 + rank,
                         shmem_team_translate_pe(t, (rank + 1) % n, SHMEM_TEAM_WORLD));
            shmem_quiet();
            shmem_team_sync(t);
            CHECK_MSG(buf[0] == round * 100 + (rank + n - 1) % n, "churn round %d: ring got %ld", round, buf[0]);
            shmem_team_sync(t);
        }
        shmem_team_destroy(t);
        if (round % 3 == 0) {
            shmem_team_t x, y;
            rc = shmem_team_split_2d(SHMEM_TEAM_WORLD, 1 + round % 4, NULL, 0, &x, NULL, 0, &y);
            CHECK_MSG(rc == 0 && x != SHMEM_TEAM_INVALID && y != SHMEM_TEAM_INVALID, "churn 2d round %d rc %d", round, rc);
            shmem_team_destroy(y);
            shmem_team_destroy(x);
        }
    }
    /* Eight held at once, destroyed out of order, then eight more. */
    for (int pass = 0; pass < 3; pass++) {
        shmem_team_t held[8];
        for (int i = 0; i < 8; i++) {
            int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, NULL, 0, &held[i]);
            CHECK_MSG(rc == 0 && shmem_team_my_pe(held[i]) == me, "held %d pass %d", i, pass);
        }
        /* All distinct and independent: a put in each, checked. */
        for (int i = 0; i < 8; i++) {
            buf[0] = -1;
            shmem_team_sync(held[i]);
            shmem_long_p(&buf[0], i * 1000 + me, (me + 1) % npes);
            shmem_quiet();
            shmem_team_sync(held[(i + 3) % 8]);
            CHECK_MSG(buf[0] == i * 1000 + (me + npes - 1) % npes, "held team %d pass %d: %ld", i, pass, buf[0]);
            shmem_team_sync(held[i]);
        }
        const int order[8] = {3, 0, 7, 5, 1, 6, 2, 4};
        for (int i = 0; i < 8; i++) shmem_team_destroy(held[order[i]]);
    }
    shmem_barrier_all();
}

static void invalid(void)
{
    CHECK(shmem_team_my_pe(SHMEM_TEAM_INVALID) == -1);
    CHECK(shmem_team_n_pes(SHMEM_TEAM_INVALID) == -1);
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_INVALID, 0, SHMEM_TEAM_WORLD) == -1);
    CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 0, SHMEM_TEAM_INVALID) == -1);
    CHECK(shmem_team_ptr(SHMEM_TEAM_INVALID, buf, 0) == NULL);
    shmem_team_config_t cfg;
    CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &cfg) != 0);
    shmem_ctx_t ctx = SHMEM_CTX_DEFAULT;
    CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &ctx) != 0);
    CHECK(ctx == SHMEM_CTX_INVALID);
    shmem_team_t t = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_INVALID, 0, 1, 1, NULL, 0, &t) != 0);
    CHECK(t == SHMEM_TEAM_INVALID);
    shmem_team_t x = SHMEM_TEAM_WORLD, y = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_2d(SHMEM_TEAM_INVALID, 1, NULL, 0, &x, NULL, 0, &y) != 0);
    CHECK(x == SHMEM_TEAM_INVALID && y == SHMEM_TEAM_INVALID);
    shmem_team_destroy(SHMEM_TEAM_INVALID);
    /* A non-member's handle is INVALID and behaves the same. */
    shmem_team_t zero;
    shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &zero);
    if (me != 0) {
        CHECK(zero == SHMEM_TEAM_INVALID);
        CHECK(shmem_team_create_ctx(zero, 0, &ctx) != 0 && ctx == SHMEM_CTX_INVALID);
    } else {
        CHECK(zero != SHMEM_TEAM_INVALID && shmem_team_n_pes(zero) == 1 && shmem_team_my_pe(zero) == 0);
    }
    shmem_team_destroy(zero);
    shmem_barrier_all();
}

int main(void)
{
    shmem_init();
    me = shmem_my_pe();
    npes = shmem_n_pes();
    test_pe = me;
    buf = shmem_malloc((size_t)(npes + 1) * sizeof(long));
    CHECK(buf != NULL);
    if (!buf) return test_finish();
    predefined();
    strided();
    split2d();
    config();
    churn();
    invalid();
    shmem_barrier_all();
    shmem_free(buf);
    shmem_finalize();
    return test_finish();
}

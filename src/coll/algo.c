/* algo.c: which algorithm runs each collective.
 *
 * Each kind of collective has a small table of algorithms (which exist,
 * under which names). SHMEM_COLL_ALGORITHM forces them for testing and
 * tuning: a comma list of NAME (every kind that has NAME uses it; kinds
 * without it keep choosing) or KIND:NAME (that kind only; an error if the
 * kind has no such algorithm); later items override earlier ones and
 * "auto" undoes everything before it. Otherwise the choice is by size and group:
 * every member must make the same choice for the same call, so it depends
 * only on arguments all members share (bytes, group size) and the setting.
 * The setting is parsed once, before the first collective (the public
 * layer calls shoal_coll_setup), and never changes afterwards. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "coll/coll.h"
#include "core/runtime.h"
#include "sync/group.h"

static const char *const kind_names[SHOAL_COLL_KINDS] = {"barrier", "broadcast", "collect",
                                                          "alltoall", "reduce", "scan"};

/* Names of each kind's algorithms, NULL where the kind has none. */
static const char *const algo_names[SHOAL_COLL_KINDS][SHOAL_ALGOS] = {
    [SHOAL_COLL_BARRIER] = {"dissemination", "linear"},
    [SHOAL_COLL_BROADCAST] = {"direct", "linear", "oneshot"},
    [SHOAL_COLL_COLLECT] = {"direct", "linear"},
    [SHOAL_COLL_ALLTOALL] = {"direct", NULL},
    [SHOAL_COLL_REDUCE] = {"direct", "linear", "oneshot"},
    [SHOAL_COLL_SCAN] = {"direct", NULL},
};

static int forced[SHOAL_COLL_KINDS]; /* algorithm index, or -1: choose */
static int setup_bad;                 /* the setting names no algorithm */
static char setup_error[256];

/* The algorithm of kind called name ("direct" also names the barrier's
 * dissemination, the direct barrier on one host), or -1. */
static int algo_of(int kind, const char *name, size_t len)
{
    for (int a = 0; a < SHOAL_ALGOS; a++) {
        const char *known = algo_names[kind][a];
        if (known && strlen(known) == len && !strncmp(known, name, len)) return a;
    }
    if (kind == SHOAL_COLL_BARRIER && len == 6 && !strncmp(name, "direct", 6)) return SHOAL_ALGO_DIRECT;
    return -1;
}

static int parse_token(const char *tok, size_t len)
{
    const char *colon = memchr(tok, ':', len);
    if (!colon) {
        if (len == 4 && !strncmp(tok, "auto", 4)) {
            for (int k = 0; k < SHOAL_COLL_KINDS; k++) forced[k] = -1;
            return 0;
        }
        int any = 0;
        for (int k = 0; k < SHOAL_COLL_KINDS; k++) {
            int a = algo_of(k, tok, len);
            if (a >= 0) { forced[k] = a; any = 1; }
        }
        if (!any)
            snprintf(setup_error, sizeof setup_error, "no collective has an algorithm named '%.*s'", (int)len, tok);
        return any ? 0 : -1;
    }
    size_t klen = (size_t)(colon - tok), nlen = len - klen - 1;
    for (int k = 0; k < SHOAL_COLL_KINDS; k++) {
        if (strlen(kind_names[k]) != klen || strncmp(kind_names[k], tok, klen)) continue;
        if (nlen == 4 && !strncmp(colon + 1, "auto", 4)) { forced[k] = -1; return 0; }
        int a = algo_of(k, colon + 1, nlen);
        if (a < 0) {
            snprintf(setup_error, sizeof setup_error, "%s has no algorithm named '%.*s' (it has %s%s%s%s%s)",
                     kind_names[k], (int)nlen, colon + 1, algo_names[k][0], algo_names[k][1] ? ", " : "",
                     algo_names[k][1] ? algo_names[k][1] : "", algo_names[k][2] ? ", " : "",
                     algo_names[k][2] ? algo_names[k][2] : "");
            return -1;
        }
        forced[k] = a;
        return 0;
    }
    snprintf(setup_error, sizeof setup_error,
             "no collective kind '%.*s' (kinds: barrier, broadcast, collect, alltoall, reduce, scan)", (int)klen, tok);
    return -1;
}

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static void parse_setting(void)
{
    for (int k = 0; k < SHOAL_COLL_KINDS; k++) forced[k] = -1;
    const char *v = shoal_rt.config.coll_algorithm ? shoal_rt.config.coll_algorithm : "auto";
    int bad = 0;
    for (const char *p = v; *p && !bad;) {
        size_t len = strcspn(p, ",");
        if (len) bad = parse_token(p, len) < 0;
        p += len;
        if (*p == ',') p++;
    }
    setup_bad = bad;
}

shoal_status_t shoal_coll_setup(char *err, size_t errlen)
{
    pthread_once(&setup_once, parse_setting);
    if (setup_bad) {
        snprintf(err, errlen, "SHMEM_COLL_ALGORITHM='%s': %s", shoal_rt.config.coll_algorithm, setup_error);
        return SHOAL_ERR_INVAL;
    }
    return SHOAL_OK;
}

enum shoal_coll_algo shoal_coll_choose(enum shoal_coll_kind kind, const struct shoal_group *g, size_t bytes)
{
    const int oneshot_fits =
        (kind == SHOAL_COLL_REDUCE || kind == SHOAL_COLL_BROADCAST) && shoal_coll_oneshot_fits(g, bytes);
    if (forced[kind] >= 0) {
        /* A forced one-shot falls back to direct where it cannot run (active
         * sets, vectors past SHOAL_ONESHOT_BYTES, large teams). */
        if (forced[kind] == SHOAL_ALGO_ONESHOT && !oneshot_fits) return SHOAL_ALGO_DIRECT;
        return (enum shoal_coll_algo)forced[kind];
    }
    /* Small reductions and broadcasts on a team: one exchange of lines and
     * no barrier beat the two barriers of the direct algorithms
     * (bench/bench_coll.c). */
    if (oneshot_fits) return SHOAL_ALGO_ONESHOT;
    /* Otherwise, on one host, the direct algorithms win at every size
     * measured (2-8 PEs, 8 B to 1 MiB): the work is spread over all members
     * and nothing is staged through a root; the dissemination barrier beats
     * the central counter even at 2 PEs. Size and member count will choose
     * more once members are reached only through RMA. */
    return SHOAL_ALGO_DIRECT;
}

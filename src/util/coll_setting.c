/* coll_setting.c: the words of SHMEM_COLL_ALGORITHM and their parser
 * (coll_setting.h); coll/algo.c says what the algorithms are. */
#include "util/coll_setting.h"

#include <stdio.h>
#include <string.h>

static const char *const kind_names[SHOAL_COLL_KINDS] = {"barrier", "broadcast", "collect",
                                                          "alltoall", "reduce", "scan"};

/* Names of each kind's algorithms, NULL where the kind has none. */
static const char *const algo_names[SHOAL_COLL_KINDS][SHOAL_ALGOS] = {
    [SHOAL_COLL_BARRIER] = {"dissemination", "linear", [SHOAL_ALGO_HIER] = "hier"},
    [SHOAL_COLL_BROADCAST] = {"direct", "linear", "oneshot", "tree"},
    [SHOAL_COLL_COLLECT] = {"direct", "linear", "oneshot", [SHOAL_ALGO_HIER] = "hier", [SHOAL_ALGO_BRUCK] = "bruck",
                            [SHOAL_ALGO_PAIRWISE] = "pairwise"},
    [SHOAL_COLL_ALLTOALL] = {"direct", [SHOAL_ALGO_BRUCK] = "bruck", [SHOAL_ALGO_PAIRWISE] = "pairwise"},
    [SHOAL_COLL_REDUCE] = {"direct", "linear", "oneshot", "tree", "hier", [SHOAL_ALGO_RD] = "rd",
                           [SHOAL_ALGO_RING] = "ring"},
    [SHOAL_COLL_SCAN] = {"direct", [SHOAL_ALGO_RD] = "rd", [SHOAL_ALGO_RING] = "ring"},
};

const char *shoal_coll_algo_name(enum shoal_coll_kind kind, enum shoal_coll_algo algo)
{
    const char *name = kind < SHOAL_COLL_KINDS && algo < SHOAL_ALGOS ? algo_names[kind][algo] : NULL;
    return name ? name : "?";
}

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

static int parse_token(const char *tok, size_t len, int *forced, char *setup_error, size_t errlen)
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
            snprintf(setup_error, errlen, "no collective has an algorithm named '%.*s'", (int)len, tok);
        return any ? 0 : -1;
    }
    size_t klen = (size_t)(colon - tok), nlen = len - klen - 1;
    for (int k = 0; k < SHOAL_COLL_KINDS; k++) {
        if (strlen(kind_names[k]) != klen || strncmp(kind_names[k], tok, klen)) continue;
        if (nlen == 4 && !strncmp(colon + 1, "auto", 4)) { forced[k] = -1; return 0; }
        int a = algo_of(k, colon + 1, nlen);
        if (a < 0) {
            char has[128] = "";
            for (int i = 0, at = 0; i < SHOAL_ALGOS; i++)
                if (algo_names[k][i] && at < (int)sizeof has)
                    at += snprintf(has + at, sizeof has - (size_t)at, "%s%s", at ? ", " : "", algo_names[k][i]);
            snprintf(setup_error, errlen, "%s has no algorithm named '%.*s' (it has %s)", kind_names[k],
                     (int)nlen, colon + 1, has);
            return -1;
        }
        forced[k] = a;
        return 0;
    }
    snprintf(setup_error, errlen,
             "no collective kind '%.*s' (kinds: barrier, broadcast, collect, alltoall, reduce, scan)", (int)klen, tok);
    return -1;
}

shoal_status_t shoal_coll_setting_parse(const char *text, int forced[SHOAL_COLL_KINDS], char *err, size_t errlen)
{
    int scratch[SHOAL_COLL_KINDS];
    char why[256];
    if (!forced) forced = scratch;
    for (int k = 0; k < SHOAL_COLL_KINDS; k++) forced[k] = -1;
    const char *v = text ? text : "auto";
    for (const char *p = v; *p;) {
        size_t len = strcspn(p, ",");
        if (len && parse_token(p, len, forced, why, sizeof why) < 0) {
            snprintf(err, errlen, "SHMEM_COLL_ALGORITHM='%s': %s", v, why);
            return SHOAL_ERR_INVAL;
        }
        p += len;
        if (*p == ',') p++;
    }
    return SHOAL_OK;
}

shoal_status_t shoal_coll_setting_check(const char *text, char *err, size_t errlen)
{
    return shoal_coll_setting_parse(text, NULL, err, errlen);
}

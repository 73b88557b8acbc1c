/* coll_setting.h: SHMEM_COLL_ALGORITHM, the collective algorithms a user
 * may force. Its words and their parser live here, below the collectives,
 * so that shmem_init (through the configuration table) and shmem-config
 * --diagnose judge a value with the same code; coll/algo.c applies it. */
#ifndef SHOAL_UTIL_COLL_SETTING_H
#define SHOAL_UTIL_COLL_SETTING_H

#include <stddef.h>

#include "util/status.h"

enum shoal_coll_kind {
    SHOAL_COLL_BARRIER, SHOAL_COLL_BROADCAST, SHOAL_COLL_COLLECT, SHOAL_COLL_ALLTOALL, SHOAL_COLL_REDUCE,
    SHOAL_COLL_SCAN, SHOAL_COLL_KINDS
};
enum shoal_coll_algo {
    SHOAL_ALGO_DIRECT, SHOAL_ALGO_LINEAR, SHOAL_ALGO_ONESHOT, SHOAL_ALGO_TREE, SHOAL_ALGO_HIER, SHOAL_ALGO_RD,
    SHOAL_ALGO_BRUCK, SHOAL_ALGO_RING, SHOAL_ALGO_PAIRWISE, SHOAL_ALGOS
};

/* Parses a SHMEM_COLL_ALGORITHM value: forced[kind] becomes the algorithm
 * forced for that kind, or -1 (choose). On a word it does not know, writes
 * one line to err ("SHMEM_COLL_ALGORITHM='x': ...") and returns
 * SHOAL_ERR_INVAL. forced may be NULL (check only). */
shoal_status_t shoal_coll_setting_parse(const char *text, int forced[SHOAL_COLL_KINDS], char *err, size_t errlen);

/* The name of kind's algorithm algo ("dissemination", "tree", ...), for traces. */
const char *shoal_coll_algo_name(enum shoal_coll_kind kind, enum shoal_coll_algo algo);

/* The configuration table's check of the variable. */
shoal_status_t shoal_coll_setting_check(const char *text, char *err, size_t errlen);

#endif

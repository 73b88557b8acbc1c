/* config.h: every SHMEM_* setting is declared once, in config.c's table
 * (name, type, default, help). Parsing, `shmem-config --diagnose` and
 * docs/configuration.md are all produced from that table. */
#ifndef SHOAL_UTIL_CONFIG_H
#define SHOAL_UTIL_CONFIG_H

#include <stddef.h>

#include "util/status.h"

typedef enum shoal_config_type {
    SHOAL_CONFIG_SIZE,   /* byte count with optional K/M/G/T suffix */
    SHOAL_CONFIG_BOOL,   /* 0/1, yes/no, true/false, on/off */
    SHOAL_CONFIG_INT,    /* decimal integer >= 0 */
    SHOAL_CONFIG_STRING
} shoal_config_type_t;

typedef enum shoal_config_source { SHOAL_CONFIG_FROM_DEFAULT, SHOAL_CONFIG_FROM_ENV } shoal_config_source_t;

/* Values in force. Field order is irrelevant; the table maps names to fields. */
struct shoal_config {
    size_t symmetric_size;
    int debug;
    int print_version;
    int print_info;
    long wait_spin;
    const char *wait_policy; /* auto, spin, yield, sleep */
    const char *transport;
    const char *encrypt; /* auto, required, off: data between hosts */
    const char *tls_pair; /* auto, on, off: one connection per pair of PEs (transport/tls/tls_pair.c) */
    long teams_max;
    const char *coll_algorithm;
    /* The bootstrap between hosts (oshrun --nnodes; see docs/bootstrap.md). */
    int bootstrap_tls;
    const char *bootstrap_secret_file;
    const char *bootstrap_tls_ca;
    const char *bootstrap_tls_cert;
    const char *bootstrap_tls_key;
    /* Where data endpoints listen (boot/bind_addr.h). */
    const char *network_iface;
    long fabric_timeout; /* seconds an ofi operation may wait for a peer */
    const char *fabric_progress_thread; /* auto, on, off: ofi's progress thread */
    /* oshrun between hosts: a node silent this long (seconds) is lost. */
    long bootstrap_liveness_timeout;
    /* 0: globals stay private (Python: its globals are the interpreter's). */
    int symmetric_static;
    /* Traces and statistics (src/observe, docs/observability.md). */
    const char *trace;  /* SHMEM_TRACE: path of the merged trace; empty: off */
    long trace_buffer;  /* events each thread's ring keeps */
    const char *stats;  /* SHMEM_STATS: 0, 1 or json:PATH */
    /* Bytes of GPU heap per PE (issue 18, src/cuda). */
    size_t gpu_symmetric_size;
};

struct shoal_config_var {
    const char *name;
    shoal_config_type_t type;
    const char *default_value;
    const char *help;
    size_t offset; /* of the field in struct shoal_config */
    /* Sizes and integers: the accepted range (min == max == 0: any value
     * the type holds). A value outside is refused, never clamped. */
    long long min, max;
    const char *unit;    /* integers: what the number counts ("seconds"), for messages */
    const char *choices; /* strings: the accepted words, "a|b|c"; NULL: any text */
    /* strings: a parser of the value's own syntax, or NULL */
    shoal_status_t (*check)(const char *text, char *err, size_t errlen);
};

extern const struct shoal_config_var shoal_config_vars[];
extern const size_t shoal_config_var_count;

/* Fills cfg from defaults and the environment. On a bad value, returns
 * SHOAL_ERR_INVAL or SHOAL_ERR_RANGE and writes one line naming the
 * variable, the value and what it may be to err (shoal_config_parse). */
shoal_status_t shoal_config_load(struct shoal_config *cfg, shoal_config_source_t *sources,
                                 char *err, size_t errlen);

/* Parses text as var's value and checks it against the row's range or
 * choices: the one check shared by shmem_init, oshrun and shmem-config
 * --diagnose. Stores the value through `value` (a field of var's type;
 * NULL to check only). On failure writes one line such as
 * "SHMEM_TEAMS_MAX=0 is out of range: 2 to 256" to err. */
shoal_status_t shoal_config_parse(const struct shoal_config_var *var, const char *text, void *value, char *err,
                                  size_t errlen);

/* What a value of var may be: "a size from 1 MiB to 16 TiB",
 * "one of auto, shm, ofi, tls", ... */
char *shoal_config_describe(const struct shoal_config_var *var, char *buf, size_t len);

/* Names in the environment that look like settings but are not in the
 * table (config_names.c). shoal_config_unknown writes one line naming
 * them, each with the closest known name when one is close, and returns
 * how many there are (0: none, nothing written). Names other OpenSHMEM
 * implementations read for their own internals are left alone
 * (shoal_config_foreign). */
int shoal_config_unknown(char *line, size_t len);
const char *shoal_config_closest(const char *name, size_t len);
int shoal_config_foreign(const char *name, size_t len);
int shoal_config_known(const char *name, size_t len);

/* "size", "boolean", ... and what a value looks like ("a size such as
 * 512M or 2G"), for messages and the generated reference. */
const char *shoal_config_type_name(shoal_config_type_t type);
const char *shoal_config_type_hint(shoal_config_type_t type);

/* "64", "64k", "1M", "2GiB", "1.5G" -> bytes. Rejects overflow and junk. */
shoal_status_t shoal_parse_size(const char *text, size_t *out);
shoal_status_t shoal_parse_bool(const char *text, int *out);
shoal_status_t shoal_parse_int(const char *text, long *out);

#endif

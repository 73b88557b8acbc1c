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
    const char *transport;
    const char *encrypt; /* auto, required, off: data between hosts */
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
};

struct shoal_config_var {
    const char *name;
    shoal_config_type_t type;
    const char *default_value;
    const char *help;
    size_t offset; /* of the field in struct shoal_config */
};

extern const struct shoal_config_var shoal_config_vars[];
extern const size_t shoal_config_var_count;

/* Fills cfg from defaults and the environment. On a bad value, returns
 * SHOAL_ERR_INVAL and writes one line naming the variable and value to err. */
shoal_status_t shoal_config_load(struct shoal_config *cfg, shoal_config_source_t *sources,
                                 char *err, size_t errlen);

/* "size", "boolean", ... and what a value looks like ("a size such as
 * 512M or 2G"), for messages and the generated reference. */
const char *shoal_config_type_name(shoal_config_type_t type);
const char *shoal_config_type_hint(shoal_config_type_t type);

/* "64", "64k", "1M", "2GiB", "1.5G" -> bytes. Rejects overflow and junk. */
shoal_status_t shoal_parse_size(const char *text, size_t *out);
shoal_status_t shoal_parse_bool(const char *text, int *out);
shoal_status_t shoal_parse_int(const char *text, long *out);

#endif

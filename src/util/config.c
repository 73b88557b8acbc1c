/* config.c: the configuration table and its parsers. */
#include "util/config.h"
#include "util/coll_setting.h"
#include "util/log.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define FIELD(f) .offset = offsetof(struct shoal_config, f)

static shoal_status_t check_stats(const char *text, char *err, size_t errlen);

const struct shoal_config_var shoal_config_vars[] = {
    {"SHMEM_SYMMETRIC_SIZE", SHOAL_CONFIG_SIZE, "1G",
     "Bytes of symmetric heap per PE (suffixes K, M, G, T), 1M to 16T. Reserved lazily: untouched pages cost no "
     "memory, but every PE maps the heaps of its host's PEs, and all of them must fit in the 128 TiB address space.",
     FIELD(symmetric_size), .min = 1LL << 20, .max = 16LL << 40},
    {"SHMEM_DEBUG", SHOAL_CONFIG_BOOL, "0",
     "Enable expensive consistency checks and debug logging.", FIELD(debug)},
    {"SHMEM_VERSION", SHOAL_CONFIG_BOOL, "0", "Print the library version at start-up (PE 0).",
     FIELD(print_version)},
    {"SHMEM_INFO", SHOAL_CONFIG_BOOL, "0", "Print the configuration in force at start-up (PE 0).",
     FIELD(print_info)},
    {"SHMEM_WAIT_SPIN", SHOAL_CONFIG_INT, "65536",
     "Most polls a waiting PE spins before it starts to yield and sleep, 0 to 10000000 (some milliseconds of "
     "spinning); under SHMEM_WAIT_POLICY=auto waits spin less while the CPUs are contended and not at all while more "
     "PEs of this machine are awake than it has cores "
     "(docs/design.md, 'Waiting on shared cores', says when setting it still helps).",
     FIELD(wait_spin), .min = 0, .max = 10000000, .unit = "polls"},
    /* issue 17 (h-wait): waits on shared cores */
    {"SHMEM_WAIT_POLICY", SHOAL_CONFIG_STRING, "auto",
     "How a waiting PE passes the time: 'auto' (spin, then yield, then sleep until the writer wakes it, "
     "each phase as long as the machine's contention measured while running allows), 'spin' (never give "
     "the core up), 'yield' (yield at once, never sleep) or 'sleep' (sleep at once). When a manual setting "
     "still helps, with measurements: docs/design.md, 'Waiting on shared cores'.",
     FIELD(wait_policy), .choices = "auto|spin|yield|sleep"},
    {"SHMEM_TRANSPORT", SHOAL_CONFIG_STRING, "auto",
     "How PEs reach each other: 'auto' (shared memory on this host; between hosts as SHMEM_ENCRYPT decides), "
     "'shm' (one host only), 'ofi' (libfabric for every PE, this host's included) or 'tls' (encrypted TLS "
     "streams for every PE, this host's included); the last two test those paths on one machine.",
     FIELD(transport), .choices = "auto|shm|ofi|tls"},
    {"SHMEM_ENCRYPT", SHOAL_CONFIG_STRING, "auto",
     "Encryption of data between hosts: 'auto' (TLS 1.3 streams where the best network is TCP; RDMA hardware "
     "such as verbs, efa or cxi carries data unencrypted, announced at start-up), 'required' (TLS between "
     "every pair of hosts, RDMA or not; refuses to start where that cannot be) or 'off' (libfabric tcp in the "
     "clear: trusted networks only).",
     FIELD(encrypt), .choices = "auto|required|off"},
    {"SHMEM_TLS_PAIR", SHOAL_CONFIG_STRING, "auto",
     "Whether the encrypted streams this PE opens share one TCP connection with its peers' streams to it, so "
     "either PE's data carries the other's acknowledgements: 'on', 'off' (a connection per stream) or 'auto' "
     "(on, unless the kernel's tls module is loaded: a shared connection's TLS runs in user space, a stream of "
     "its own may use kernel TLS). Peers' shared connections are accepted either way.",
     FIELD(tls_pair), .choices = "auto|on|off"},
    {"SHMEM_TEAMS_MAX", SHOAL_CONFIG_INT, "64",
     "Most teams (SHMEM_TEAM_WORLD and SHMEM_TEAM_SHARED included) a job may hold at once, 2 to 256.",
     FIELD(teams_max), .min = 2, .max = 256, .unit = "teams"},
    {"SHMEM_COLL_ALGORITHM", SHOAL_CONFIG_STRING, "auto",
     "Collective algorithms: 'auto' (by size and team), or a comma list of NAME or KIND:NAME forcing them "
     "(kinds barrier, broadcast, collect, alltoall, reduce, scan; names direct, linear, dissemination, oneshot "
     "(one-host reduce, broadcast and small fcollect), "
     "hier (barrier, small reduce and fcollect across hosts: one leader per host), tree (broadcast, reduce), "
     "rd (recursive-doubling reduce and sum scan of small vectors), "
     "ring (ring reduce-scatter + allgather reduce; sum scan passed member to member), bruck (Bruck's fcollect, collect and small alltoall), "
     "pairwise (alltoall of larger blocks across hosts: each member puts each block into its member's dest with "
     "a flag; collect on teams too wide for bruck: each member puts its block into every dest)).",
     FIELD(coll_algorithm), .check = shoal_coll_setting_check},
    {"SHMEM_BOOTSTRAP_TLS", SHOAL_CONFIG_BOOL, "1",
     "TLS 1.3 on the bootstrap between hosts (oshrun --nnodes). Turning it off leaves job membership, "
     "addresses and keys unencrypted and unauthenticated; only an explicit 0/no/false/off does it (empty counts as "
     "unset), and oshrun warns at start-up.",
     FIELD(bootstrap_tls)},
    {"SHMEM_BOOTSTRAP_SECRET_FILE", SHOAL_CONFIG_STRING, "",
     "File holding the job secret that authenticates the hosts of a job (TLS 1.3 pre-shared key). Must be "
     "owned by the user and mode 0600; make one with 'oshrun --make-secret FILE' and copy it to every host.",
     FIELD(bootstrap_secret_file)},
    {"SHMEM_BOOTSTRAP_TLS_CA", SHOAL_CONFIG_STRING, "",
     "Instead of a job secret: PEM file of the CA whose certificates the hosts of a job accept from each other.",
     FIELD(bootstrap_tls_ca)},
    {"SHMEM_BOOTSTRAP_TLS_CERT", SHOAL_CONFIG_STRING, "",
     "PEM certificate (chain) this host presents on the bootstrap; used with SHMEM_BOOTSTRAP_TLS_CA and _KEY.",
     FIELD(bootstrap_tls_cert)},
    {"SHMEM_BOOTSTRAP_TLS_KEY", SHOAL_CONFIG_STRING, "",
     "PEM private key of SHMEM_BOOTSTRAP_TLS_CERT.", FIELD(bootstrap_tls_key)},
    {"SHMEM_NETWORK_IFACE", SHOAL_CONFIG_STRING, "",
     "Network interface (e.g. eth1) whose IPv4 address the data endpoints between hosts listen on. Empty: "
     "FI_TCP_IFACE if set, else loopback for a one-host job, else the interface of the route to the rendezvous "
     "host (oshrun) or to another node (PMI/PMIx). Endpoints never listen on every interface.",
     FIELD(network_iface)},
    {"SHMEM_BOOTSTRAP_LIVENESS_TIMEOUT", SHOAL_CONFIG_INT, "30",
     "Seconds without any message (heartbeats flow every few seconds both ways) after which an oshrun declares "
     "another node of the job lost and stops the job (a cut link, a frozen or vanished host); 1 to 86400.",
     FIELD(bootstrap_liveness_timeout), .min = 1, .max = 86400, .unit = "seconds"},
    {"SHMEM_SYMMETRIC_STATIC", SHOAL_CONFIG_BOOL, "1",
     "Make the program's global and static variables symmetric at start-up (remapping its data segment, which "
     "needs a single-threaded process). 0 leaves them private and only the heap is remotely accessible: what "
     "the Python package sets, since a Python program's globals are the interpreter's.",
     FIELD(symmetric_static)},
    {"SHMEM_FABRIC_TIMEOUT", SHOAL_CONFIG_INT, "60",
     "Seconds a libfabric (ofi) operation may wait for a peer before the job ends with a line naming the "
     "operation and the PE (a peer that stopped answering); 1 to 86400.",
     FIELD(fabric_timeout), .min = 1, .max = 86400, .unit = "seconds"},
    {"SHMEM_FABRIC_PROGRESS_THREAD", SHOAL_CONFIG_STRING, "auto",
     "Whether each PE runs a thread that serves peers' libfabric (ofi) operations while the PE computes: "
     "'auto' (only for providers whose data moves only when polled, manual progress such as tcp;ofi_rxm), "
     "'on', or 'off' (for measurements: a PE then serves peers only while it waits inside Shoal, so a peer's "
     "operation on a PE that computes or sits in shmem_finalize stalls, up to SHMEM_FABRIC_TIMEOUT).",
     FIELD(fabric_progress_thread), .choices = "auto|on|off"},
    /* Traces and statistics (src/observe, docs/observability.md). */
    {"SHMEM_TRACE", SHOAL_CONFIG_STRING, "",
     "Record a timeline of every Shoal call (RMA, atomics, signals, waits, barriers, collectives, allocations) "
     "and write it to this path as Chrome/Perfetto trace-event JSON, one process per PE; oshrun merges the PEs' "
     "parts when the job ends (without oshrun each PE writes PATH.N.json). Empty: off.",
     FIELD(trace)},
    {"SHMEM_TRACE_BUFFER", SHOAL_CONFIG_INT, "65536",
     "Events each thread's trace ring buffer keeps (72 bytes each), 16 to 67108864; when a thread records more, "
     "the oldest are dropped and the trace and a warning say how many.",
     FIELD(trace_buffer), .min = 16, .max = 1L << 26, .unit = "events"},
    {"SHMEM_STATS", SHOAL_CONFIG_STRING, "0",
     "Count calls, bytes and time blocked per operation family and PE, and bytes between each pair of PEs: '1' "
     "prints one table for the job when it ends (oshrun merges the PEs' counts), 'json:PATH' writes the same "
     "data to PATH as JSON, '0' is off.",
     FIELD(stats), .check = check_stats},
    /* Issue 18: the CUDA part (docs/cuda.md). */
    {"SHMEM_GPU_SYMMETRIC_SIZE", SHOAL_CONFIG_SIZE, "256M",
     "Bytes of symmetric GPU heap per PE (shmemx_gpu_malloc; builds with the CUDA part), 1M to 1T. Allocated "
     "with cudaMalloc at the first shmemx_gpu_malloc, never before, and mapped by every PE of the host "
     "through CUDA IPC.",
     FIELD(gpu_symmetric_size), .min = 1LL << 20, .max = 1LL << 40},
};
const size_t shoal_config_var_count = sizeof shoal_config_vars / sizeof shoal_config_vars[0];

static shoal_status_t check_stats(const char *text, char *err, size_t errlen)
{
    if (!strcmp(text, "0") || !strcmp(text, "1") || (!strncmp(text, "json:", 5) && text[5])) return SHOAL_OK;
    snprintf(err, errlen, "SHMEM_STATS='%s' is not valid: expected 0, 1 or json:PATH", text);
    return SHOAL_ERR_INVAL;
}

shoal_status_t shoal_parse_size(const char *text, size_t *out)
{
    if (!text) return SHOAL_ERR_INVAL;
    while (isspace((unsigned char)*text)) text++;
    if (!isdigit((unsigned char)*text)) return SHOAL_ERR_INVAL;
    errno = 0;
    char *end;
    unsigned long long whole = strtoull(text, &end, 10);
    if (errno) return SHOAL_ERR_RANGE;
    double frac = 0.0;
    if (*end == '.') {
        const char *p = end + 1;
        double scale = 0.1;
        if (!isdigit((unsigned char)*p)) return SHOAL_ERR_INVAL;
        while (isdigit((unsigned char)*p)) { frac += (*p - '0') * scale; scale /= 10; p++; }
        end = (char *)p;
    }
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: break;
    }
    if (shift && (*end == 'i' || *end == 'I')) end++;
    if (shift && (*end == 'b' || *end == 'B')) end++;
    else if (!shift && (*end == 'b' || *end == 'B')) end++;
    while (isspace((unsigned char)*end)) end++;
    if (*end) return SHOAL_ERR_INVAL;
    if (frac != 0.0 && shift == 0) return SHOAL_ERR_INVAL;
    if (shift && whole > (SIZE_MAX >> shift)) return SHOAL_ERR_RANGE;
    size_t value = (size_t)whole << shift;
    size_t extra = (size_t)(frac * (double)((size_t)1 << shift));
    if (value > SIZE_MAX - extra) return SHOAL_ERR_RANGE;
    *out = value + extra;
    return SHOAL_OK;
}

shoal_status_t shoal_parse_bool(const char *text, int *out)
{
    static const char *const yes[] = {"1", "y", "yes", "true", "on"};
    static const char *const no[] = {"0", "n", "no", "false", "off", ""};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        if (!strcasecmp(text, yes[i])) { *out = 1; return SHOAL_OK; }
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        if (!strcasecmp(text, no[i])) { *out = 0; return SHOAL_OK; }
    return SHOAL_ERR_INVAL;
}

shoal_status_t shoal_parse_int(const char *text, long *out)
{
    char *end;
    errno = 0;
    if (!isdigit((unsigned char)*text)) return SHOAL_ERR_INVAL;
    long v = strtol(text, &end, 10);
    if (errno) return SHOAL_ERR_RANGE;
    if (*end) return SHOAL_ERR_INVAL;
    *out = v;
    return SHOAL_OK;
}

const char *shoal_config_type_name(shoal_config_type_t type)
{
    switch (type) {
    case SHOAL_CONFIG_SIZE: return "size";
    case SHOAL_CONFIG_BOOL: return "boolean";
    case SHOAL_CONFIG_INT: return "integer";
    case SHOAL_CONFIG_STRING: return "string";
    }
    return "?";
}

const char *shoal_config_type_hint(shoal_config_type_t type)
{
    switch (type) {
    case SHOAL_CONFIG_SIZE: return "a size such as 512M or 2G";
    case SHOAL_CONFIG_BOOL: return "0 or 1";
    case SHOAL_CONFIG_INT: return "a non-negative integer";
    case SHOAL_CONFIG_STRING: return "a string";
    }
    return "?";
}

static shoal_status_t parse_typed(const struct shoal_config_var *var, const char *text, void *value)
{
    size_t size;
    long number;
    int flag;
    shoal_status_t st;
    switch (var->type) {
    case SHOAL_CONFIG_SIZE:
        st = shoal_parse_size(text, &size);
        if (st == SHOAL_OK && value) *(size_t *)value = size;
        return st;
    case SHOAL_CONFIG_BOOL:
        st = shoal_parse_bool(text, &flag);
        if (st == SHOAL_OK && value) *(int *)value = flag;
        return st;
    case SHOAL_CONFIG_INT:
        st = shoal_parse_int(text, &number);
        if (st == SHOAL_OK && value) *(long *)value = number;
        return st;
    case SHOAL_CONFIG_STRING:
        if (value) *(const char **)value = text;
        return SHOAL_OK;
    }
    return SHOAL_ERR_INVAL;
}

static int has_range(const struct shoal_config_var *var) { return var->min != 0 || var->max != 0; }

/* "1 MiB" for sizes, "256" for numbers. */
static char *limit_text(const struct shoal_config_var *var, long long v, char *buf, size_t len)
{
    if (var->type == SHOAL_CONFIG_SIZE) return shoal_format_bytes((unsigned long long)v, buf, len);
    snprintf(buf, len, "%lld", v);
    return buf;
}

/* "auto|shm|ofi" -> "auto, shm, ofi" */
static void choice_list(const char *choices, char *buf, size_t len)
{
    size_t n = 0;
    for (const char *c = choices; *c && n + 3 < len; c++) {
        if (*c == '|') {
            buf[n++] = ',';
            buf[n++] = ' ';
        } else {
            buf[n++] = *c;
        }
    }
    buf[n] = 0;
}

static int is_choice(const char *choices, const char *text)
{
    size_t tlen = strlen(text);
    for (const char *c = choices; *c;) {
        size_t n = strcspn(c, "|");
        if (n == tlen && !strncmp(c, text, n)) return 1;
        c += n;
        if (*c == '|') c++;
    }
    return 0;
}

char *shoal_config_describe(const struct shoal_config_var *var, char *buf, size_t len)
{
    char lo[32], hi[32], words[256];
    if (var->type == SHOAL_CONFIG_STRING && var->choices) {
        choice_list(var->choices, words, sizeof words);
        snprintf(buf, len, "one of %s", words);
    } else if (var->type == SHOAL_CONFIG_SIZE && has_range(var)) {
        snprintf(buf, len, "a size from %s to %s (suffixes K, M, G, T)", limit_text(var, var->min, lo, sizeof lo),
                 limit_text(var, var->max, hi, sizeof hi));
    } else if (var->type == SHOAL_CONFIG_INT && has_range(var)) {
        snprintf(buf, len, "an integer from %lld to %lld%s%s", var->min, var->max, var->unit ? " " : "",
                 var->unit ? var->unit : "");
    } else {
        snprintf(buf, len, "%s", shoal_config_type_hint(var->type));
    }
    return buf;
}

shoal_status_t shoal_config_parse(const struct shoal_config_var *var, const char *text, void *value, char *err,
                                  size_t errlen)
{
    char what[320], lo[32], hi[32];
    union {
        size_t size;
        long number;
        int flag;
        const char *text;
    } v;
    shoal_status_t st = parse_typed(var, text, &v);
    if (st != SHOAL_OK) {
        snprintf(err, errlen, "%s='%s' is not valid: expected %s", var->name, text,
                 shoal_config_describe(var, what, sizeof what));
        return st;
    }
    if (var->type == SHOAL_CONFIG_STRING && var->choices && !is_choice(var->choices, text)) {
        snprintf(err, errlen, "%s='%s' is not valid: expected %s", var->name, text,
                 shoal_config_describe(var, what, sizeof what));
        return SHOAL_ERR_INVAL;
    }
    if (var->type == SHOAL_CONFIG_STRING && var->check) {
        st = var->check(text, err, errlen);
        if (st != SHOAL_OK) return st;
    }
    if ((var->type == SHOAL_CONFIG_SIZE || var->type == SHOAL_CONFIG_INT) && has_range(var)) {
        /* Sizes above LLONG_MAX are out of every range. */
        long long n = var->type == SHOAL_CONFIG_SIZE ? (v.size > (size_t)LLONG_MAX ? LLONG_MAX : (long long)v.size)
                                                     : v.number;
        if (n < var->min || n > var->max) {
            snprintf(err, errlen, "%s=%s is out of range: %s to %s%s%s", var->name, text,
                     limit_text(var, var->min, lo, sizeof lo), limit_text(var, var->max, hi, sizeof hi),
                     var->unit ? " " : "", var->unit ? var->unit : "");
            return SHOAL_ERR_RANGE;
        }
    }
    return parse_typed(var, text, value);
}

shoal_status_t shoal_config_load(struct shoal_config *cfg, shoal_config_source_t *sources,
                                 char *err, size_t errlen)
{
    char internal[320];
    memset(cfg, 0, sizeof *cfg);
    for (size_t i = 0; i < shoal_config_var_count; i++) {
        const struct shoal_config_var *var = &shoal_config_vars[i];
        char *field = (char *)cfg + var->offset;
        if (shoal_config_parse(var, var->default_value, field, internal, sizeof internal) != SHOAL_OK) {
            snprintf(err, errlen, "internal: bad default: %s", internal);
            return SHOAL_ERR_INVAL;
        }
        const char *env = getenv(var->name);
        if (sources) sources[i] = env ? SHOAL_CONFIG_FROM_ENV : SHOAL_CONFIG_FROM_DEFAULT;
        if (!env) continue;
        shoal_status_t st = shoal_config_parse(var, env, field, err, errlen);
        if (st != SHOAL_OK) return st;
    }
    return SHOAL_OK;
}

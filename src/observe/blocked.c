/* blocked.c: the per-thread records of blocking calls (blocked.h) and the
 * signal handler that reports them to oshrun (where_wire.h). */
#include "observe/blocked.h"

#include <errno.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "core/route.h"
#include "core/runtime.h"
#include "core/internal.h"
#include "core/team.h"

#define SLOTS SHOAL_WHERE_MAX_THREADS

static struct shoal_blocked slots[SLOTS];
/* Threads beyond SLOTS share this one; it is never reported. */
static _Thread_local struct shoal_blocked spare;
_Thread_local struct shoal_blocked *shoal_blocked_mine __attribute__((tls_model("initial-exec")));

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static pthread_key_t slot_key;

static void release_slot(void *p)
{
    struct shoal_blocked *b = p;
    __atomic_store_n(&b->active, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&b->used, 0, __ATOMIC_RELEASE);
}

static void make_key(void) { pthread_key_create(&slot_key, release_slot); }

struct shoal_blocked *shoal_blocked_claim(void)
{
    pthread_once(&key_once, make_key);
    struct shoal_blocked *b = &spare;
    for (int i = 0; i < SLOTS; i++) {
        int32_t free_slot = 0;
        if (__atomic_compare_exchange_n(&slots[i].used, &free_slot, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
            b = &slots[i];
            pthread_setspecific(slot_key, b);
            break;
        }
    }
    b->call = NULL;
    b->tid = (int32_t)syscall(SYS_gettid);
    shoal_blocked_mine = b;
    return b;
}

/* ---- collective numbers ---- */

/* Collectives this PE entered per team slot; a new team in a slot starts
 * again (shoal_blocked_team_new), so members number them alike. */
static uint64_t coll_count[SHOAL_TEAM_SLOTS_MAX];
static uint64_t active_set_count;

void shoal_blocked_team_new(int slot) { __atomic_store_n(&coll_count[slot], 0, __ATOMIC_RELAXED); }

void shoal_blocked_coll(const char *call, const struct shoal_team *team, int start, int stride, int size,
                        size_t bytes, int root)
{
    struct shoal_blocked *b = shoal_blocked_open(call);
    if (team) {
        const int slot = team->slot;
        b->seq = __atomic_add_fetch(&coll_count[slot], 1, __ATOMIC_RELAXED);
        b->team = slot == 0 ? SHOAL_WHERE_WORLD : slot == 1 ? SHOAL_WHERE_SHARED : SHOAL_WHERE_TEAM;
        b->team_slot = slot;
        b->team_start = team->start;
        b->team_stride = team->stride;
        b->team_size = team->size;
    } else {
        b->seq = __atomic_add_fetch(&active_set_count, 1, __ATOMIC_RELAXED);
        b->team = SHOAL_WHERE_ACTIVE_SET;
        b->team_slot = -1;
        b->team_start = start;
        b->team_stride = stride;
        b->team_size = size;
    }
    b->bytes = bytes;
    b->root = root;
    shoal_blocked_publish(b, SHOAL_WHERE_COLL);
}

uint64_t shoal_blocked_coll_seq(const struct shoal_team *team)
{
    return __atomic_load_n(&coll_count[team->slot], __ATOMIC_RELAXED);
}

/* ---- held locks ---- */

static const void *locks_held[SHOAL_WHERE_MAX_LOCKS];

void shoal_blocked_lock_held(const void *lock, int held)
{
    for (int i = 0; i < SHOAL_WHERE_MAX_LOCKS; i++) {
        const void *want = held ? NULL : lock;
        if (__atomic_compare_exchange_n(&locks_held[i], &want, held ? lock : NULL, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return;
    }
}

/* ---- the report ---- */

static int where_fd = -1;
static int32_t my_rank; /* SHOAL_RANK: known before the runtime is */
static uintptr_t exe_bias; /* the program's load bias, for symbol lookup in oshrun */

static uint64_t load_scalar(const void *p, int size)
{
    switch (size) {
    case 2: return __atomic_load_n((const uint16_t *)p, __ATOMIC_RELAXED);
    case 4: return __atomic_load_n((const uint32_t *)p, __ATOMIC_RELAXED);
    case 8: return __atomic_load_n((const uint64_t *)p, __ATOMIC_RELAXED);
    }
    return 0;
}

static int64_t sign_extend(uint64_t v, int size)
{
    return size == 2 ? (int16_t)v : size == 4 ? (int32_t)v : (int64_t)v;
}

/* Where addr lies: heap or static segment and offset, else the address. */
static void locate(const void *addr, int32_t *seg, uint64_t *off)
{
    size_t o;
    int s = addr ? shoal_route_segment(addr, 1, &o) : -1;
    *seg = s < 0 ? SHOAL_WHERE_SEG_NONE : s == SHOAL_SEG_HEAP ? SHOAL_WHERE_SEG_HEAP : SHOAL_WHERE_SEG_STATIC;
    *off = s < 0 ? (uint64_t)(uintptr_t)addr : (uint64_t)o;
}

/* Copies slot b into t (async-signal-safe: loads and stores only). */
static void copy_slot(const struct shoal_blocked *b, struct shoal_where_thread *t, uint64_t now)
{
    const uint32_t kind = __atomic_load_n(&b->active, __ATOMIC_ACQUIRE);
    const char *call = b->call;
    size_t i = 0;
    if (call)
        for (; call[i] && i < SHOAL_WHERE_CALL_LEN - 1; i++) t->call[i] = call[i];
    t->call[i] = '\0';
    t->kind = kind;
    t->last_kind = b->last;
    t->tid = b->tid;
    t->main_thread = b->tid == (int32_t)getpid();
    t->team = (uint32_t)b->team;
    t->team_slot = b->team_slot;
    t->team_start = b->team_start;
    t->team_stride = b->team_stride;
    t->team_size = b->team_size;
    t->root = b->root;
    t->seq = b->seq;
    t->bytes = b->bytes;
    t->size = (uint32_t)b->size;
    t->is_signed = b->is_signed;
    t->cmp = b->cmp;
    t->nelems = b->nelems;
    t->expected = b->expected;
    t->peer = b->peer;
    locate(b->addr, &t->seg, &t->offset);
    t->exe_off = b->addr ? (uint64_t)((uintptr_t)b->addr - exe_bias) : 0;
    if ((kind == SHOAL_WHERE_WAIT || (!kind && b->last == SHOAL_WHERE_WAIT)) && b->addr) {
        uint64_t v = load_scalar(b->addr, b->size);
        t->current = b->is_signed ? (uint64_t)sign_extend(v, b->size) : v;
    }
    t->blocked_ns = b->since_ns && now > b->since_ns ? now - b->since_ns : 0;
    /* Rewritten while we copied: say so rather than mix two calls. */
    t->changing = __atomic_load_n(&b->active, __ATOMIC_ACQUIRE) != kind || b->call != call;
}

static void on_where(int sig)
{
    (void)sig;
    const int saved = errno;
    struct shoal_where_msg m;
    memset(&m, 0, sizeof m);
    m.magic = SHOAL_WHERE_MAGIC;
    m.pe = my_rank;
    m.pid = (int32_t)getpid();
    m.state = shoal_rt.finalized     ? SHOAL_WHERE_FINALIZED
              : shoal_rt.initialized ? SHOAL_WHERE_RUNNING
                                     : SHOAL_WHERE_STARTING;
    const uint64_t now = shoal_blocked_clock();
    for (int i = 0; i < SLOTS; i++) {
        if (!__atomic_load_n(&slots[i].used, __ATOMIC_ACQUIRE) || !slots[i].call) continue;
        copy_slot(&slots[i], &m.threads[m.nthreads++], now);
    }
    for (int i = 0; i < SHOAL_WHERE_MAX_LOCKS; i++) {
        const void *l = __atomic_load_n(&locks_held[i], __ATOMIC_RELAXED);
        if (!l) continue;
        uint64_t off;
        locate(l, &m.lock_seg[m.nlocks], &off);
        m.lock_exe_off[m.nlocks] = (uint64_t)((uintptr_t)l - exe_bias);
        m.lock_off[m.nlocks++] = off;
    }
    /* One datagram: it arrives whole or not at all, and never blocks. */
    ssize_t n = send(where_fd, &m, SHOAL_WHERE_MSG_SIZE(m.nthreads), MSG_DONTWAIT);
    (void)n;
    errno = saved;
}

static int find_bias(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(uintptr_t *)data = (uintptr_t)info->dlpi_addr;
    return 1; /* the first object is the program */
}

void shoal_blocked_install(void)
{
    const char *name = getenv("SHOAL_WHERE_SOCKET"), *rank = getenv("SHOAL_RANK");
    if (!name || !rank || where_fd >= 0) return;
    my_rank = (int32_t)atoi(rank);
    struct sockaddr_un a;
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    const size_t len = strlen(name);
    if (len == 0 || len >= sizeof a.sun_path - 1) return;
    memcpy(a.sun_path + 1, name, len); /* abstract: sun_path[0] stays NUL */
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    if (connect(fd, (struct sockaddr *)&a, (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + len)) != 0) {
        close(fd);
        return;
    }
    where_fd = fd;
    dl_iterate_phdr(find_bias, &exe_bias);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_where;
    sa.sa_flags = SA_RESTART;
    sigfillset(&sa.sa_mask);
    if (sigaction(SHOAL_WHERE_SIGNAL, &sa, NULL) != 0) return;
    struct shoal_where_msg m = {.magic = SHOAL_WHERE_MAGIC, .pe = my_rank, .pid = (int32_t)getpid(),
                                .state = SHOAL_WHERE_READY};
    ssize_t n = send(where_fd, &m, SHOAL_WHERE_MSG_SIZE(0), MSG_DONTWAIT);
    (void)n;
}

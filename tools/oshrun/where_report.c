/* where_report.c: the hang report's text (where.h): one line per PE (and
 * per extra blocked thread), then a verdict when the answers show one. */
#include <elf.h>
#include <fcntl.h>
#include <shmem.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oshrun.h"
#include "where.h"

/* The data object of the program of pid that holds vaddr, from its ELF
 * symbol table: name and offset into it. 0 when none is found. */
static int symbol_of(int pid, uint64_t vaddr, char *name, size_t len, uint64_t *into)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/exe", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0) return 0;
    if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(Elf64_Ehdr)) {
        close(fd);
        return 0;
    }
    const size_t size = (size_t)st.st_size;
    const unsigned char *img = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (img == MAP_FAILED) return 0;
    int found = 0;
    const Elf64_Ehdr *eh = (const void *)img;
    if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        goto out;
    const Elf64_Shdr *sh = (const void *)(img + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size) continue;
        const Elf64_Sym *sym = (const void *)(img + sh[i].sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof *sym; k++) {
            if (ELF64_ST_TYPE(sym[k].st_info) != STT_OBJECT || sym[k].st_name >= strs->sh_size) continue;
            if (vaddr < sym[k].st_value || vaddr >= sym[k].st_value + (sym[k].st_size ? sym[k].st_size : 1)) continue;
            snprintf(name, len, "%.*s", (int)(strs->sh_size - sym[k].st_name),
                     (const char *)img + strs->sh_offset + sym[k].st_name);
            *into = vaddr - sym[k].st_value;
            found = 1;
            break;
        }
    }
out:
    munmap((void *)img, size);
    return found;
}

/* "&flag [static]", "heap+0x40", "&arr+8 [static]" or "0x7f00...". */
static void address(int pid, int32_t seg, uint64_t off, uint64_t exe_off, char *buf, size_t len)
{
    char name[128];
    uint64_t into = 0;
    if (seg == SHOAL_WHERE_SEG_HEAP) {
        snprintf(buf, len, "heap+0x%llx", (unsigned long long)off);
    } else if (seg == SHOAL_WHERE_SEG_STATIC && symbol_of(pid, exe_off, name, sizeof name, &into)) {
        if (into) snprintf(buf, len, "&%s+%llu [static]", name, (unsigned long long)into);
        else snprintf(buf, len, "&%s [static]", name);
    } else if (seg == SHOAL_WHERE_SEG_STATIC) {
        snprintf(buf, len, "static+0x%llx", (unsigned long long)off);
    } else {
        snprintf(buf, len, "0x%llx", (unsigned long long)off);
    }
}

static const char *cmp_name(int cmp)
{
    switch (cmp) {
    case SHMEM_CMP_EQ: return "SHMEM_CMP_EQ";
    case SHMEM_CMP_NE: return "SHMEM_CMP_NE";
    case SHMEM_CMP_GT: return "SHMEM_CMP_GT";
    case SHMEM_CMP_GE: return "SHMEM_CMP_GE";
    case SHMEM_CMP_LT: return "SHMEM_CMP_LT";
    case SHMEM_CMP_LE: return "SHMEM_CMP_LE";
    }
    return "SHMEM_CMP_?";
}

static void value(const struct shoal_where_thread *t, uint64_t v, char *buf, size_t len)
{
    if (t->is_signed) snprintf(buf, len, "%lld", (long long)v);
    else snprintf(buf, len, "%llu", (unsigned long long)v);
}

/* "world, #17" or "team 3 (PEs 0+2*k, 2 PEs), #1". */
static void team_text(const struct shoal_where_thread *t, char *buf, size_t len)
{
    switch (t->team) {
    case SHOAL_WHERE_WORLD: snprintf(buf, len, "world, #%llu", (unsigned long long)t->seq); break;
    case SHOAL_WHERE_SHARED: snprintf(buf, len, "shared, #%llu", (unsigned long long)t->seq); break;
    case SHOAL_WHERE_TEAM:
        snprintf(buf, len, "team %d of %d PEs from PE %d stride %d, #%llu", t->team_slot, t->team_size,
                 t->team_start, t->team_stride, (unsigned long long)t->seq);
        break;
    default:
        snprintf(buf, len, "active set of %d PEs from PE %d stride %d, #%llu", t->team_size, t->team_start,
                 t->team_stride, (unsigned long long)t->seq);
    }
}

/* The call with its arguments, as the program wrote it. */
static void call_text(int pid, const struct shoal_where_thread *t, char *buf, size_t len)
{
    char where[192], a[32], b[32], team[128];
    switch (t->kind ? t->kind : t->last_kind) {
    case SHOAL_WHERE_WAIT:
        address(pid, t->seg, t->offset, t->exe_off, where, sizeof where);
        value(t, t->expected, a, sizeof a);
        value(t, t->current, b, sizeof b);
        if (t->nelems)
            snprintf(buf, len, "%s(%s, %llu elements, %s, %s) current [0] %s", t->call, where,
                     (unsigned long long)t->nelems, cmp_name(t->cmp), a, b);
        else
            snprintf(buf, len, "%s(%s, %s, %s) current %s", t->call, where, cmp_name(t->cmp), a, b);
        break;
    case SHOAL_WHERE_COLL:
        team_text(t, team, sizeof team);
        if (t->root >= 0) snprintf(buf, len, "%s (%s, root %d, %llu B)", t->call, team, t->root,
                                   (unsigned long long)t->bytes);
        else if (t->bytes) snprintf(buf, len, "%s (%s, %llu B)", t->call, team, (unsigned long long)t->bytes);
        else snprintf(buf, len, "%s (%s)", t->call, team);
        break;
    case SHOAL_WHERE_LOCK:
        address(pid, t->seg, t->offset, t->exe_off, where, sizeof where);
        snprintf(buf, len, "%s(%s)", t->call, where);
        break;
    default: snprintf(buf, len, "%s", t->call); break;
    }
}

/* The thread that speaks for a PE: a blocked one, the initial thread first. */
static const struct shoal_where_thread *main_of(const struct shoal_where_msg *m)
{
    const struct shoal_where_thread *best = NULL;
    for (uint32_t i = 0; i < m->nthreads; i++) {
        const struct shoal_where_thread *t = &m->threads[i];
        if (!best || (t->kind && !best->kind) || (t->kind && t->main_thread && !best->main_thread)) best = t;
    }
    return best;
}

enum pe_state { GONE, NO_ANSWER, FINISHED, IDLE, BLOCKED };

static enum pe_state state_of(const struct oshrun_job *job, int r, const struct shoal_where_thread **t)
{
    const struct oshrun_pe *pe = &job->pes[r];
    *t = NULL;
    if (!pe->running) return pe->finalized ? FINISHED : GONE;
    if (!job->where->answered[r]) return NO_ANSWER;
    *t = main_of(&job->where->answers[r]);
    if (job->where->answers[r].state == SHOAL_WHERE_FINALIZED) return FINISHED;
    if (!*t || !(*t)->kind) return IDLE;
    return (*t)->kind == SHOAL_WHERE_FINALIZE ? FINISHED : BLOCKED;
}

static void pe_line(const struct oshrun_job *job, int r, FILE *f)
{
    const struct oshrun_pe *pe = &job->pes[r];
    const struct shoal_where_msg *m = &job->where->answers[r];
    const struct shoal_where_thread *t;
    char text[512];
    switch (state_of(job, r, &t)) {
    case GONE: fprintf(f, "PE %d: exited without calling shmem_finalize\n", pe->rank); return;
    case NO_ANSWER:
        fprintf(f, "PE %d: no answer (%s)\n", pe->rank,
                job->where->ready[r] ? "it did not answer within a second" : "not a Shoal program, or not initialized");
        return;
    default: break;
    }
    if (!pe->running) {
        fprintf(f, "PE %d: exited after shmem_finalize\n", pe->rank);
        return;
    }
    if (m->state == SHOAL_WHERE_FINALIZED) {
        fprintf(f, "PE %d: finalized, still running\n", pe->rank);
        return;
    }
    if (m->state == SHOAL_WHERE_STARTING) {
        fprintf(f, "PE %d: in shmem_init, starting up\n", pe->rank);
        return;
    }
    for (uint32_t i = 0; i < m->nthreads; i++) {
        const struct shoal_where_thread *u = &m->threads[i];
        if (u != t && !u->kind) continue; /* idle extra threads say nothing */
        char who[48];
        if (u == t) snprintf(who, sizeof who, "PE %d", pe->rank);
        else snprintf(who, sizeof who, "PE %d thread %d", pe->rank, u->tid);
        call_text(m->pid, u, text, sizeof text);
        const double s = (double)u->blocked_ns * 1e-9;
        if (!u->kind && u->blocked_ns)
            fprintf(f, "%s: in no blocking Shoal call (last: %s, entered %.1f s ago)\n", who, text, s);
        else if (!u->kind)
            fprintf(f, "%s: in no blocking Shoal call (last: %s)\n", who, u->call[0] ? text : "none");
        else if (u->kind == SHOAL_WHERE_FINALIZE)
            fprintf(f, "%s: in shmem_finalize, waiting for the other PEs, %.1f s\n", who, s);
        else
            fprintf(f, "%s: %s, blocked %.1f s%s\n", who, text, s, u->changing ? " (changing as it was read)" : "");
    }
    for (uint32_t i = 0; i < m->nlocks; i++) {
        char where[192];
        address(m->pid, m->lock_seg[i], m->lock_off[i], m->lock_exe_off[i], where, sizeof where);
        fprintf(f, "PE %d: holds the lock at %s\n", pe->rank, where);
    }
}

static int same_team(const struct shoal_where_thread *a, const struct shoal_where_thread *b)
{
    return a->team == b->team && a->team_slot == b->team_slot && a->team_start == b->team_start &&
           a->team_stride == b->team_stride && a->team_size == b->team_size;
}

/* 1 when world PE rank is a member of t's team. */
static int member(const struct shoal_where_thread *t, int rank)
{
    if (t->team == SHOAL_WHERE_SHARED) return 1; /* this host's PEs: all of these */
    long d = rank - t->team_start;
    return d >= 0 && t->team_stride > 0 && d % t->team_stride == 0 && d / t->team_stride < t->team_size;
}

static void verdict(const struct oshrun_job *job, FILE *f)
{
    const int n = job->npes;
    char a[512], b[512];
    int waits = 0, finished = 0;
    for (int r = 0; r < n; r++) {
        const struct shoal_where_thread *t;
        enum pe_state s = state_of(job, r, &t);
        waits += s == BLOCKED && t->kind == SHOAL_WHERE_WAIT;
        finished += s == FINISHED;
    }
    /* A lock held by a PE blocked elsewhere. */
    for (int r = 0; r < n; r++) {
        const struct shoal_where_thread *t, *u;
        if (state_of(job, r, &t) != BLOCKED || t->kind != SHOAL_WHERE_LOCK) continue;
        for (int q = 0; q < n; q++) {
            enum pe_state s = state_of(job, q, &u);
            const struct shoal_where_msg *m = &job->where->answers[q];
            if (q == r || !job->where->answered[q]) continue;
            for (uint32_t i = 0; i < m->nlocks; i++) {
                if (m->lock_seg[i] != t->seg || m->lock_off[i] != t->offset) continue;
                call_text(job->where->answers[r].pid, t, a, sizeof a);
                if (u && s == BLOCKED) call_text(m->pid, u, b, sizeof b);
                fprintf(f, "verdict: PE %d waits in %s for a lock PE %d holds, and PE %d %s%s: the lock is never "
                        "released\n", job->pes[r].rank, a, job->pes[q].rank, job->pes[q].rank,
                        s == BLOCKED ? "is blocked in " : s == FINISHED ? "has reached shmem_finalize" : "runs",
                        s == BLOCKED ? b : "");
                return;
            }
        }
    }
    /* PEs in different collectives, or one in a collective its fellow
     * member is not in. */
    for (int r = 0; r < n; r++) {
        const struct shoal_where_thread *t, *u;
        if (state_of(job, r, &t) != BLOCKED || t->kind != SHOAL_WHERE_COLL) continue;
        for (int q = 0; q < n; q++) {
            enum pe_state s = state_of(job, q, &u);
            if (q == r || !member(t, job->pes[q].rank)) continue;
            call_text(job->where->answers[r].pid, t, a, sizeof a);
            if (s == BLOCKED && u->kind == SHOAL_WHERE_COLL && same_team(t, u) &&
                (u->seq != t->seq || strcmp(u->call, t->call) != 0)) {
                call_text(job->where->answers[q].pid, u, b, sizeof b);
                fprintf(f, "verdict: PE %d is in %s while PE %d is in %s: the PEs disagree on the sequence of "
                        "collectives\n", job->pes[r].rank, a, job->pes[q].rank, b);
                return;
            }
            if (s == BLOCKED && u->kind == SHOAL_WHERE_COLL && !same_team(t, u)) {
                call_text(job->where->answers[q].pid, u, b, sizeof b);
                fprintf(f, "verdict: PE %d is in %s while PE %d, a member of that team, is in %s: the PEs disagree "
                        "on the sequence of collectives\n", job->pes[r].rank, a, job->pes[q].rank, b);
                return;
            }
            if (s == BLOCKED && u->kind != SHOAL_WHERE_COLL) {
                fprintf(f, "verdict: PE %d is in %s while PE %d %s in %s: the PEs disagree on the sequence of "
                        "collectives\n", job->pes[r].rank, a, job->pes[q].rank,
                        u->kind == SHOAL_WHERE_WAIT ? "waits" : "is", u->call);
                return;
            }
            if (s == FINISHED || s == GONE) {
                fprintf(f, "verdict: PE %d is in %s, but PE %d has %s: it will never join\n", job->pes[r].rank, a,
                        job->pes[q].rank, s == GONE ? "exited" : "reached shmem_finalize");
                return;
            }
        }
    }
    /* A wait (or a test polled in a loop) nobody is left to satisfy. */
    if (finished == n - 1 && n == job->size) {
        for (int r = 0; r < n; r++) {
            const struct shoal_where_thread *t;
            enum pe_state s = state_of(job, r, &t);
            /* A test (no age) polled in a loop. */
            const int polls = s == IDLE && t && t->last_kind == SHOAL_WHERE_WAIT && t->blocked_ns == 0;
            if (!(s == BLOCKED && t->kind == SHOAL_WHERE_WAIT) && !polls) continue;
            call_text(job->where->answers[r].pid, t, a, sizeof a);
            fprintf(f, "verdict: PE %d %s %s, but every other PE has finished (in shmem_finalize or exited): "
                    "the value it waits for will never come\n", job->pes[r].rank, polls ? "polls" : "waits in", a);
        }
        return;
    }
    if (waits == n && n > 1 && n == job->size)
        fprintf(f, "verdict: every PE waits for a value another PE should write: none of them will (a cycle of "
                "waits, or a store that was never made)\n");
}

void oshrun_where_print(const struct oshrun_job *job, FILE *f, int lines_only)
{
    const struct oshrun_where *w = job->where;
    const int whole_job = !job->net || w->remote_expect > 0;
    if (!lines_only) fprintf(f, "oshrun: where each PE is%s:\n", whole_job ? "" : " (this host's PEs)");
    for (int r = 0; r < job->npes; r++) pe_line(job, r, f);
    if (lines_only) return;
    if (w->remote_len) fwrite(w->remote, 1, w->remote_len, f);
    for (int n = 1; n < w->remote_expect + 1; n++)
        if (!w->remote_got[n]) fprintf(f, "node %d: no answer\n", n);
    verdict(job, f);
}

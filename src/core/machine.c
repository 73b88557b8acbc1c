/* machine.c: the board of running PEs of one machine (machine.h). */
#include "core/machine.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* A slot: JOINED once its PE mapped the board, plus the number of that PE's
 * threads asleep in a wait; LEFT counts as asleep for good. */
#define JOINED 0x80000000u
#define LEFT 0x40000000u

static struct {
    uint32_t *slots; /* NULL: no board */
    uint32_t *mine;
    int pes;
    int complete;    /* every slot joined: the count is the machine's */
    int creator;     /* unlinks the name once every PE has mapped it */
    int unlinked;
    char name[32];
} board;

static size_t board_bytes(int pes) { return (size_t)pes * sizeof(uint32_t); }

static void board_name(uint64_t name) { snprintf(board.name, sizeof board.name, "/shoal-m-%016llx", (unsigned long long)name); }

static int map_board(int fd, int pes)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || st.st_size < (off_t)board_bytes(pes)) return 0;
    void *p = mmap(NULL, board_bytes(pes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return 0;
    board.slots = p;
    board.pes = pes;
    return 1;
}

static void unlink_once(void)
{
    if (board.creator && !__atomic_exchange_n(&board.unlinked, 1, __ATOMIC_RELAXED)) shm_unlink(board.name);
}

int shoal_machine_board_create(int pes, uint64_t name)
{
    if (pes < 2) return 0;
    board_name(name);
    int fd = shm_open(board.name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd < 0) return 0;
    /* A new object reads as zeros: every slot "not joined". */
    const int ok = ftruncate(fd, (off_t)board_bytes(pes)) == 0 && map_board(fd, pes);
    close(fd);
    if (!ok) {
        shm_unlink(board.name);
        return 0;
    }
    board.creator = 1;
    return 1;
}

void shoal_machine_board_join(int rank, int pes, uint64_t name, int creator)
{
    /* A lowest PE that could not create the board must not open one of
     * the same name that somebody else made. */
    if (pes < 2 || rank < 0 || rank >= pes || (rank == 0 && !creator)) return;
    if (!creator) {
        board_name(name);
        /* Another host's /dev/shm, or a creator that failed: no board. */
        int fd = shm_open(board.name, O_RDWR, 0);
        if (fd < 0) return;
        const int ok = map_board(fd, pes);
        close(fd);
        if (!ok) return;
    }
    if (!board.slots) return;
    board.mine = &board.slots[rank];
    __atomic_store_n(board.mine, JOINED, __ATOMIC_RELEASE);
}

int shoal_machine_running(void)
{
    if (!board.slots) return -1;
    int running = 0, joined = 0;
    for (int i = 0; i < board.pes; i++) {
        const uint32_t s = __atomic_load_n(&board.slots[i], __ATOMIC_RELAXED);
        joined += (s & JOINED) != 0;
        running += s == JOINED;
    }
    if (!__atomic_load_n(&board.complete, __ATOMIC_RELAXED)) {
        if (joined < board.pes) return -1;
        __atomic_store_n(&board.complete, 1, __ATOMIC_RELAXED);
        unlink_once(); /* every PE holds its mapping: the name is no longer needed */
    }
    return running;
}

void shoal_machine_sleep_begin(void)
{
    if (board.mine) __atomic_fetch_add(board.mine, 1, __ATOMIC_RELAXED);
}

void shoal_machine_sleep_end(void)
{
    if (board.mine) __atomic_fetch_sub(board.mine, 1, __ATOMIC_RELAXED);
}

void shoal_machine_board_close(void)
{
    if (!board.slots) return;
    if (board.mine) __atomic_store_n(board.mine, JOINED | LEFT, __ATOMIC_RELEASE);
    unlink_once();
    munmap(board.slots, board_bytes(board.pes));
    board.slots = board.mine = NULL;
    board.complete = 0;
}

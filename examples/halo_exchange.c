/* halo_exchange: Jacobi iterations of the 5-point stencil on an NY x NX grid
 * split into blocks of rows, one per PE. Each step a PE needs the last row
 * of the PE above and the first row of the PE below (its halos).
 *
 * Each step a PE first sends its edge rows with put_signal into the
 * neighbours' halo buffers (signal = step + 1), then updates its interior
 * rows, which need no halo, while those rows travel; only then does it wait
 * for its own halos and update its two edge rows. Halo buffers alternate by
 * step parity: a neighbour can be at most one step ahead, so it never
 * overwrites a halo that is still being read.
 * The grid after the last step is checked against a serial run.
 *
 * Usage: oshrun -n 4 halo_exchange [NY NX STEPS]   (default 256 256 100; NY >= PEs) */
#include <shmem.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TOP, BOTTOM };

static double initial(int y, int x)
{
    uint32_t h = (uint32_t)y * 2654435761u ^ (uint32_t)x * 0x85EBCA6Bu;
    h ^= h >> 15;
    h *= 0x2C1B3C6Du;
    h ^= h >> 12;
    return (double)(h & 0xFFFF) / 65536.0;
}

/* One row of the update: out[x] = (up + down + left + right) / 4, with 0
 * outside the grid on the left and right. */
static void update_row(double *out, const double *up, const double *mid, const double *down, int nx)
{
    for (int x = 0; x < nx; x++) {
        const double l = x > 0 ? mid[x - 1] : 0.0, r = x < nx - 1 ? mid[x + 1] : 0.0;
        out[x] = 0.25 * (up[x] + down[x] + l + r);
    }
}

int main(int argc, char **argv)
{
    shmem_init();
    const int me = shmem_my_pe(), npes = shmem_n_pes();
    const int NY = argc > 1 ? atoi(argv[1]) : 256, NX = argc > 2 ? atoi(argv[2]) : 256;
    const int STEPS = argc > 3 ? atoi(argv[3]) : 100;
    if (NY < npes || NX <= 0 || STEPS < 0) {
        if (me == 0) fprintf(stderr, "usage: halo_exchange [NY NX STEPS] with NY >= PEs\n");
        shmem_finalize();
        return 2;
    }
    const int y0 = (int)((long)NY * me / npes), ny = (int)((long)NY * (me + 1) / npes) - y0;
    const int up = me > 0 ? me - 1 : -1, down = me < npes - 1 ? me + 1 : -1;

    /* Symmetric: halos [parity][TOP/BOTTOM][NX] and their signals. */
    double *halo = shmem_calloc((size_t)4 * NX, sizeof *halo);
    uint64_t *sig = shmem_calloc(4, sizeof *sig);
    double *u = malloc((size_t)ny * NX * sizeof *u), *un = malloc((size_t)ny * NX * sizeof *un);
    double *hot = malloc((size_t)NX * sizeof *hot), *cold = calloc((size_t)NX, sizeof *cold);
    for (int x = 0; x < NX; x++) hot[x] = 1.0; /* the fixed row above the grid */
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < NX; x++) u[(size_t)y * NX + x] = initial(y0 + y, x);
    shmem_barrier_all();

    for (int step = 0; step < STEPS; step++) {
        const int par = step % 2;
        double *h_top = halo + (size_t)(2 * par + TOP) * NX, *h_bot = halo + (size_t)(2 * par + BOTTOM) * NX;
        uint64_t *s_top = &sig[2 * par + TOP], *s_bot = &sig[2 * par + BOTTOM];
        /* My first row is the bottom halo of the PE above, my last the top halo of the PE below. */
        if (up >= 0)
            shmem_putmem_signal(h_bot, u, (size_t)NX * sizeof *u, s_bot, (uint64_t)step + 1, SHMEM_SIGNAL_SET, up);
        if (down >= 0)
            shmem_putmem_signal(h_top, u + (size_t)(ny - 1) * NX, (size_t)NX * sizeof *u, s_top, (uint64_t)step + 1,
                                SHMEM_SIGNAL_SET, down);
        /* Interior rows while the halos travel. */
        for (int y = 1; y < ny - 1; y++)
            update_row(un + (size_t)y * NX, u + (size_t)(y - 1) * NX, u + (size_t)y * NX, u + (size_t)(y + 1) * NX, NX);
        /* Edge rows once the halos are in. */
        const double *above = hot, *below = cold;
        if (up >= 0) {
            shmem_signal_wait_until(s_top, SHMEM_CMP_GE, (uint64_t)step + 1);
            above = h_top;
        }
        if (down >= 0) {
            shmem_signal_wait_until(s_bot, SHMEM_CMP_GE, (uint64_t)step + 1);
            below = h_bot;
        }
        update_row(un, above, u, ny > 1 ? u + NX : below, NX);
        if (ny > 1) update_row(un + (size_t)(ny - 1) * NX, u + (size_t)(ny - 2) * NX, u + (size_t)(ny - 1) * NX, below, NX);
        double *t = u;
        u = un;
        un = t;
    }

    /* Serial run of the whole grid, compared with this PE's rows. */
    double *g = malloc((size_t)NY * NX * sizeof *g), *gn = malloc((size_t)NY * NX * sizeof *gn);
    for (int y = 0; y < NY; y++)
        for (int x = 0; x < NX; x++) g[(size_t)y * NX + x] = initial(y, x);
    for (int step = 0; step < STEPS; step++) {
        for (int y = 0; y < NY; y++)
            update_row(gn + (size_t)y * NX, y > 0 ? g + (size_t)(y - 1) * NX : hot, g + (size_t)y * NX,
                       y < NY - 1 ? g + (size_t)(y + 1) * NX : cold, NX);
        double *t = g;
        g = gn;
        gn = t;
    }
    long bad = 0;
    double sum = 0;
    for (int y = 0; y < ny; y++)
        for (int x = 0; x < NX; x++) {
            const double got = u[(size_t)y * NX + x], want = g[(size_t)(y0 + y) * NX + x];
            sum += got;
            /* Same operations in the same order: the results are identical. */
            if (got != want && bad++ < 5)
                fprintf(stderr, "PE %d: u[%d][%d] = %.17g, serial %.17g\n", me, y0 + y, x, got, want);
        }
    printf("halo_exchange: PE %d rows %d..%d after %d steps: sum %.6f, %s\n", me, y0, y0 + ny - 1, STEPS, sum,
           bad ? "MISMATCH" : "matches the serial run");

    shmem_barrier_all();
    free(gn);
    free(g);
    free(cold);
    free(hot);
    free(un);
    free(u);
    shmem_free(sig);
    shmem_free(halo);
    shmem_finalize();
    return bad ? 1 : 0;
}

/* strided_gather: PE 0 reads one column of every PE's row-major matrix with
 * a single strided get (iget) and prints it. */
#include <shmem.h>
#include <stdio.h>

#define ROWS 4
#define COLS 5
static double matrix[ROWS][COLS];

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++) matrix[r][c] = me * 100 + r * 10 + c;
    shmem_barrier_all();
    int status = 0;
    if (me == 0) {
        for (int pe = 0; pe < npes; pe++) {
            double column[ROWS];
            shmem_double_iget(column, &matrix[0][2], 1, COLS, ROWS, pe);
            printf("PE 0: column 2 of PE %d's matrix:", pe);
            for (int r = 0; r < ROWS; r++) {
                printf(" %g", column[r]);
                if (column[r] != pe * 100 + r * 10 + 2) status = 1;
            }
            printf("\n");
        }
    }
    shmem_barrier_all();
    shmem_finalize();
    return status;
}

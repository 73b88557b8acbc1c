/* pshmem.h and <mpp/pshmem.h> compile without the C11 generic macros;
 * taking the addresses makes the declarations' types part of the check. */
#include <mpp/pshmem.h>
#include <pshmem.h>

void (*prof_header_put)(void *, const void *, size_t, int) = pshmem_putmem;
void (*prof_header_wait)(long *, int, long) = pshmem_wait_until;
int (*prof_header_sync)(shmem_team_t) = pshmem_team_sync;

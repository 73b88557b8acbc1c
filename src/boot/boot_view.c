/* boot_view.c: an allgather's result read where it arrived (boot.h), for
 * any bootstrap: in place where the bootstrap can leave it there (oshrun's
 * shared memory file, its socket's message), else in a buffer that the
 * plain allgather fills. */
#include "boot/boot.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

shoal_status_t shoal_boot_allgather_view(shoal_boot_t *boot, const void *send, size_t len,
                                         struct shoal_boot_view *view)
{
    memset(view, 0, sizeof *view);
    if (boot->ops->allgather_view) return boot->ops->allgather_view(boot, send, len, view);
    if (len && !(view->heap = malloc(len * (size_t)boot->size))) return SHOAL_ERR_NOMEM;
    view->data = view->heap;
    return boot->ops->allgather(boot, send, len, view->heap);
}

void shoal_boot_view_release(struct shoal_boot_view *view)
{
    if (view->map) munmap(view->map, view->map_len);
    free(view->heap);
    memset(view, 0, sizeof *view);
}

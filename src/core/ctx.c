/* ctx.c: the default context object behind SHMEM_CTX_DEFAULT. */
#include <shmem.h>

#include "core/ctx.h"

struct shoal_ctx shmem_ctx_default_object = {.options = 0, .is_default = 1};

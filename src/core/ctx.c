/* ctx.c: the default context object behind SHMEM_CTX_DEFAULT. */
#include <shmem.h>

#include "core/ctx.h"

struct shoal_ctx shmem_ctx_default_object = {
    .magic = SHOAL_CTX_MAGIC, .options = 0, .team = &shmem_team_world_object, .next_of_team = 0};

/* own_wait.c: the hook of own_wait.h. */
#include "util/own_wait.h"

#include <stddef.h>

int (*shoal_own_wait_hook)(void) = NULL;

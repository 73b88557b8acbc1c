/* test_static_remap_nopie.c: test_static_remap.c for a non-PIE executable
 * (absolute addresses, load bias 0). Needs -fno-pie at compile and -no-pie
 * at link; built as PIE it skips (exit 77). */
#define STATIC_REMAP_WANT_NOPIE 1
#include "test_static_remap.c"

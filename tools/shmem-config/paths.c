/* paths.c: finds everything from the tool's own location, so an install
 * can be moved (like oshcc, which uses readlink -f of itself). In the build
 * tree the tool sits next to oshrun and shoal-selftest; headers are in the
 * source tree and the library in the build tree. Installed, the relative
 * paths from bin/ to the other install directories come from CMake. */
#include "shmem_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if !defined(SHOAL_BUILD_TOOLS_DIR) || !defined(SHOAL_BIN_TO_PREFIX) || !defined(SHOAL_BIN_TO_LIBEXEC)
#error "the build must define SHOAL_BUILD_* and SHOAL_BIN_TO_* (see tools/CMakeLists.txt)"
#endif

/* dest = dir/rel, canonical when it exists. */
static void join(char *dest, const char *dir, const char *rel, const char *leaf)
{
    char joined[PATH_MAX * 2];
    snprintf(joined, sizeof joined, "%s/%s%s%s", dir, rel, leaf ? "/" : "", leaf ? leaf : "");
    if (!realpath(joined, dest)) snprintf(dest, PATH_MAX, "%.*s", PATH_MAX - 1, joined);
}

int sc_paths_find(struct sc_paths *paths)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n < 0) {
        fprintf(stderr, "shmem-config: cannot read /proc/self/exe: %s\n", strerror(errno));
        return -1;
    }
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (!slash) {
        fprintf(stderr, "shmem-config: /proc/self/exe is not a path: %s\n", self);
        return -1;
    }
    *slash = '\0';
    snprintf(paths->bindir, sizeof paths->bindir, "%s", self[0] ? self : "/");

    char build_tools[PATH_MAX];
    paths->build_tree = realpath(SHOAL_BUILD_TOOLS_DIR, build_tools) && !strcmp(build_tools, paths->bindir);
    if (paths->build_tree) {
        join(paths->prefix, SHOAL_BUILD_ROOT, ".", NULL);
        join(paths->includedir, SHOAL_SOURCE_INCLUDEDIR, ".", NULL);
        join(paths->libdir, SHOAL_BUILD_LIBDIR, ".", NULL);
        join(paths->selftest, paths->bindir, ".", "shoal-selftest");
    } else {
        join(paths->prefix, paths->bindir, SHOAL_BIN_TO_PREFIX, NULL);
        join(paths->includedir, paths->bindir, SHOAL_BIN_TO_INCLUDE, NULL);
        join(paths->libdir, paths->bindir, SHOAL_BIN_TO_LIB, NULL);
        join(paths->selftest, paths->bindir, SHOAL_BIN_TO_LIBEXEC, "shoal-selftest");
    }
    join(paths->oshrun, paths->bindir, ".", "oshrun");
    return 0;
}

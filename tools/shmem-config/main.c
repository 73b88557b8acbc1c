/* main.c: shmem-config entry point. Path options print one line in
 * pkg-config style; the others are described in usage(). */
#include "shmem_config.h"

#include <shmem.h>
#include <stdio.h>
#include <string.h>

#ifndef SHOAL_SANITIZE_STRING
#define SHOAL_SANITIZE_STRING ""
#endif

static void usage(FILE *f)
{
    fputs("Usage: shmem-config OPTION\n"
          "Describes this Shoal installation and checks that it works here.\n"
          "\n"
          "Options:\n"
          "  --version    Shoal version and the OpenSHMEM version it implements\n"
          "  --cflags     compiler flags for OpenSHMEM programs\n"
          "  --libs       linker flags for OpenSHMEM programs (combines with --cflags)\n"
          "  --prefix     installation prefix (the build directory when run from it)\n"
          "  --diagnose   JSON: build, every SHMEM_* setting with its value in force and\n"
          "               source, host resources, launcher, and problems with next steps\n"
          "  --check      run a 2-PE self-test (put, get, atomic, barrier, reduction)\n"
          "               under oshrun; the exit status is the self-test's\n"
          "  --markdown   the configuration reference (docs/configuration.md)\n"
          "  -h, --help   show this help and exit\n",
          f);
}

/* --cflags and --libs may be combined, as with pkg-config. */
static int print_flags(int argc, char *argv[])
{
    struct sc_paths paths;
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--cflags") != 0 && strcmp(argv[i], "--libs") != 0) {
            fprintf(stderr, "shmem-config: only --cflags and --libs combine; got '%s'\n", argv[i]);
            return 2;
        }
    if (sc_paths_find(&paths) != 0) return 1;
    for (int i = 1; i < argc; i++) {
        if (i > 1) putchar(' ');
        if (!strcmp(argv[i], "--cflags"))
            printf("-I%s", paths.includedir);
        else /* the same link line as oshcc */
            printf("-L%s -Wl,-rpath,%s -lshoal -lpthread", paths.libdir, paths.libdir);
        /* A sanitized libshoal needs the sanitizer runtime loaded first. */
        if (!strcmp(argv[i], "--libs") && SHOAL_SANITIZE_STRING[0]) printf(" -fsanitize=%s", SHOAL_SANITIZE_STRING);
    }
    putchar('\n');
    return 0;
}

int main(int argc, char *argv[])
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *opt = argv[1];
    if (!strcmp(opt, "--cflags") || !strcmp(opt, "--libs")) return print_flags(argc, argv);
    if (argc > 2) {
        fprintf(stderr, "shmem-config: %s takes no arguments\n", opt);
        return 2;
    }
    if (!strcmp(opt, "-h") || !strcmp(opt, "--help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(opt, "--version")) {
        printf("Shoal %s\nOpenSHMEM %d.%d\n", SHOAL_VERSION_STRING, SHMEM_MAJOR_VERSION, SHMEM_MINOR_VERSION);
        return 0;
    }
    if (!strcmp(opt, "--diagnose")) return sc_diagnose(stdout);
    if (!strcmp(opt, "--markdown")) return sc_markdown(stdout);
    if (!strcmp(opt, "--prefix") || !strcmp(opt, "--check")) {
        struct sc_paths paths;
        if (sc_paths_find(&paths) != 0) return 1;
        if (!strcmp(opt, "--check")) return sc_check(&paths);
        printf("%s\n", paths.prefix);
        return 0;
    }
    fprintf(stderr, "shmem-config: unknown option '%s'\n", opt);
    usage(stderr);
    return 2;
}

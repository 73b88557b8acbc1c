/* main.c: oshrun entry point. */
#include "oshrun.h"

#include <stdio.h>

#ifndef SHOAL_VERSION_STRING
#define SHOAL_VERSION_STRING "unknown"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: oshrun -n N [options] PROGRAM [ARGS...]\n"
            "Runs N processing elements (PEs) of an OpenSHMEM program on this host.\n"
            "\n"
            "Options:\n"
            "  -n N, -np N, --npes N  number of PEs to start (1 to %d)\n"
            "  --timeout SECONDS      stop the job after SECONDS; exit status 124\n"
            "  --tag-output           prefix each line of output with \"[PE n] \"\n"
            "  -h, --help             show this help and exit\n"
            "  --version              show the Shoal version and exit\n"
            "\n"
            "Exit status: that of the first PE that failed (128+N for signal N), 0 when\n"
            "all PEs succeed, 124 on timeout, 127 when PROGRAM cannot be found, 126 when\n"
            "it cannot be executed, 2 for bad arguments. When a PE fails, or exits without\n"
            "calling shmem_finalize, the others are stopped within a second.\n"
            "Signals INT, TERM, HUP, QUIT, USR1 and USR2 are forwarded to the PEs.\n",
            OSHRUN_MAX_PES);
}

int main(int argc, char *argv[])
{
    struct oshrun_options opt;
    char err[512];
    switch (oshrun_parse_args(argc, argv, &opt, err, sizeof err)) {
    case OSHRUN_PARSE_HELP:
        usage(stdout);
        return 0;
    case OSHRUN_PARSE_VERSION:
        printf("oshrun (Shoal) %s\n", SHOAL_VERSION_STRING);
        return 0;
    case OSHRUN_PARSE_ERROR:
        fprintf(stderr, "oshrun: %s\nTry 'oshrun --help' for more information.\n", err);
        return 2;
    case OSHRUN_PARSE_RUN: break;
    }
    return oshrun_run(&opt, argv + opt.prog_index);
}

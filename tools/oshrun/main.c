/* main.c: oshrun entry point. */
#include "oshrun.h"
#include "tls.h"
#include "where.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>

#ifndef SHOAL_VERSION_STRING
#define SHOAL_VERSION_STRING "unknown"
#endif

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: oshrun -n N [options] PROGRAM [ARGS...]\n"
            "       oshrun --make-secret FILE\n"
            "       oshrun --where [PID]\n"
            "Runs N processing elements (PEs) of an OpenSHMEM program on this host.\n"
            "\n"
            "Options:\n"
            "  -n N, -np N, --npes N  number of PEs to start (1 to %d)\n"
            "  --timeout SECONDS      stop the job after SECONDS; exit status 124\n"
            "  --nnodes H             the job spans H hosts; run oshrun once on each\n"
            "  --node-rank R          this host's number, 0 to H-1 (its PEs follow host R-1's)\n"
            "  --rendezvous HOST:PORT address node 0 listens on and the others connect to\n"
            "                         (within --timeout, else 60 s); TLS 1.3, see\n"
            "                         SHMEM_BOOTSTRAP_SECRET_FILE in docs/bootstrap.md\n"
            "  --tree-fanout K        children per node in the tree that carries the\n"
            "                         start-up allgathers (1 to %d, default %d; the same on\n"
            "                         every node)\n"
            "  --make-secret FILE     write a new random job secret to FILE (mode 0600)\n"
            "  --where [PID]          print where each PE of the running job (oshrun's PID;\n"
            "                         may be left out when one job of yours runs) is blocked\n"
            "  --tag-output           prefix each line of output with \"[PE n] \"\n"
            "  -x VAR[=VALUE]         set VAR to VALUE in every PE (a bare VAR passes on\n"
            "                         oshrun's value, as every PE inherits it anyway);\n"
            "                         across hosts each host's oshrun applies its own -x\n"
            "  --bind-to core|none    bind each PE to a core of those oshrun may use\n"
            "                         (PE i on this host to core i), or leave them free.\n"
            "                         Default: core when 2 or more PEs fit one per core on\n"
            "                         one host, none otherwise (and across hosts)\n"
            "  -h, --help             show this help and exit\n"
            "  --version              show the Shoal version and exit\n"
            "\n"
            "Exit status: that of the first PE that failed (128+N for signal N), 0 when\n"
            "all PEs succeed, 124 on timeout, 127 when PROGRAM cannot be found, 126 when\n"
            "it cannot be executed, 2 for bad arguments. When a PE fails, or exits without\n"
            "calling shmem_finalize, the others are stopped within a second.\n"
            "PE output is passed on a whole line at a time, so lines of different PEs never\n"
            "mix (each PE's stdout and stderr are pipes to oshrun).\n"
            "SIGUSR1 and --timeout print a hang report: where each PE is blocked, and a\n"
            "verdict when one is evident (docs/observability.md).\n"
            "Signals INT, TERM, HUP, QUIT and USR2 are forwarded to the PEs (USR1 only to\n"
            "programs that do not use Shoal); the first\n"
            "INT, TERM, HUP or QUIT stops the job (\"job stopped by SIGINT\"), a second one\n"
            "kills the PEs, and oshrun then ends by that signal. When the reader of its\n"
            "output goes away (oshrun ... | head), oshrun stops the PEs and ends quietly\n"
            "by SIGPIPE.\n",
            OSHRUN_MAX_PES, OSHRUN_MAX_FANOUT, OSHRUN_TREE_FANOUT);
}

int main(int argc, char *argv[])
{
    struct oshrun_options opt;
    char err[512];
    /* An action of its own, outside the run syntax the parser checks. */
    if (argc >= 2 && strcmp(argv[1], "--make-secret") == 0) {
        if (argc != 3 || !argv[2][0]) {
            fprintf(stderr, "oshrun: --make-secret needs exactly one FILE\n");
            return 2;
        }
        return oshrun_make_secret(argv[2]);
    }
    if (argc >= 2 && strcmp(argv[1], "--where") == 0) {
        if (argc > 3) {
            fprintf(stderr, "oshrun: --where takes at most one PID\n");
            return 2;
        }
        return oshrun_where_client(argc == 3 ? argv[2] : NULL);
    }
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
    int die_by = 0, status = oshrun_run(&opt, argv + opt.prog_index, &die_by);
    if (die_by) {
        /* Interrupted (Ctrl-C) or cut off (a closed pipe): end by the same
         * signal, so a calling shell or script sees it was. */
        sigset_t set;
        fflush(NULL);
        signal(die_by, SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, die_by);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(die_by);
    }
    return status;
}

/* check.c: --check runs shoal-selftest on 2 PEs under the oshrun next to
 * this tool, passes its output through and returns its exit status. */
#include "shmem_config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK_PES "2"
#define CHECK_TIMEOUT_S "120" /* a hung self-test is a failure, not a hang */

int sc_check(const struct sc_paths *paths)
{
    const char *need[] = {paths->oshrun, paths->selftest};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
        if (access(need[i], X_OK) != 0) {
            fprintf(stderr, "shmem-config: cannot run %s: %s\n", need[i], strerror(errno));
            return 1;
        }
    printf("shmem-config: %s -n %s %s\n", paths->oshrun, CHECK_PES, paths->selftest);
    fflush(stdout);

    char *const argv[] = {(char *)"oshrun", (char *)"-n", (char *)CHECK_PES, (char *)"--timeout",
                          (char *)CHECK_TIMEOUT_S, (char *)paths->selftest, NULL};
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "shmem-config: fork failed: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        execv(paths->oshrun, argv);
        fprintf(stderr, "shmem-config: cannot execute %s: %s\n", paths->oshrun, strerror(errno));
        _exit(127);
    }
    int wstatus;
    while (waitpid(pid, &wstatus, 0) < 0)
        if (errno != EINTR) {
            fprintf(stderr, "shmem-config: waiting for oshrun failed: %s\n", strerror(errno));
            return 1;
        }
    int status = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 128 + WTERMSIG(wstatus);
    if (status == 0)
        printf("shmem-config: self-test passed\n");
    else
        printf("shmem-config: self-test FAILED (exit status %d%s)\n", status,
               status == 124 ? ": timed out" : "");
    return status;
}

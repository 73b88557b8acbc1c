/* boot.c: picks the bootstrap. oshrun sets SHOAL_BOOT_FD, SHOAL_RANK and
 * SHOAL_SIZE; without them the program is a one-PE job. */
#include "boot/boot.h"
#include "util/log.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* Strict decimal int in [min, max]; 0 on success. */
static int env_int(const char *name, long min, long max, int *out)
{
    const char *text = getenv(name);
    char *end;
    long v;
    if (!text || !*text) {
        shoal_error("boot", "SHOAL_BOOT_FD is set but %s is not; was this program started by oshrun?", name);
        return -1;
    }
    errno = 0;
    v = strtol(text, &end, 10);
    if (errno || *end || end == text || v < min || v > max) {
        shoal_error("boot", "%s='%s' is not a number in [%ld, %ld]", name, text, min, max);
        return -1;
    }
    *out = (int)v;
    return 0;
}

shoal_status_t shoal_boot_open(shoal_boot_t **out)
{
    int fd, rank, size;
    shoal_status_t st;
    if (!out) return SHOAL_ERR_INVAL;
    if (!getenv("SHOAL_BOOT_FD")) return shoal_boot_open_single(out);
    if (env_int("SHOAL_BOOT_FD", 0, INT_MAX, &fd) || env_int("SHOAL_SIZE", 1, INT_MAX, &size) ||
        env_int("SHOAL_RANK", 0, size - 1, &rank))
        return SHOAL_ERR_INVAL;
    /* Programs this PE starts must not mistake an unrelated descriptor for
     * a launcher socket (the socket itself is close-on-exec from here on). */
    unsetenv("SHOAL_BOOT_FD");
    st = shoal_boot_open_launcher(fd, rank, size, out);
    if (st != SHOAL_OK && st != SHOAL_ERR_SYS) close(fd);
    return st;
}

/* FNV-1a, to fold the identity into a short key. */
static uint64_t fold(uint64_t h, const char *s)
{
    for (; *s; s++) h = (h ^ (unsigned char)*s) * UINT64_C(0x100000001b3);
    return h;
}

void shoal_boot_default_node_key(char key[SHOAL_NODE_KEY_MAX])
{
    char host[256] = "", boot_id[64] = "", netns[64] = "";
    gethostname(host, sizeof host - 1);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (!fgets(boot_id, sizeof boot_id, f)) boot_id[0] = 0;
        fclose(f);
    }
    ssize_t n = readlink("/proc/self/ns/net", netns, sizeof netns - 1);
    netns[n > 0 ? n : 0] = 0;
    uint64_t h = fold(fold(UINT64_C(0xcbf29ce484222325), boot_id), netns);
    snprintf(key, SHOAL_NODE_KEY_MAX, "%.40s/%016llx", host, (unsigned long long)h);
}

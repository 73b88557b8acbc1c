/* fabric_probe.c: whether shmem_init loaded libfabric, for the start-up
 * test (netns.fabric_probe.*). Between hosts, SHMEM_ENCRYPT=auto asks
 * whether RDMA adapters are here; where the kernel lists none it must not
 * load libfabric to find out (its providers' start-up costs about 0.3 s
 * per PE). NETNS_EXPECT_FABRIC=0: libfabric must not be mapped after
 * shmem_init (unless this host lists RDMA adapters, where the probe runs);
 * =1: it must be (SHMEM_ENCRYPT=off, which uses it: shows the check can
 * see it). */
#include <dirent.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static int mapped(const char *name)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f) return -1;
    char line[1024];
    int found = 0;
    while (!found && fgets(line, sizeof line, f)) found = strstr(line, name) != NULL;
    fclose(f);
    return found;
}

/* Whether dir holds an entry other than . and .. */
static int has_entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 0;
    const struct dirent *e;
    int found = 0;
    while (!found && (e = readdir(d))) found = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return found;
}

static int adapters_listed(void) { return has_entries("/sys/class/infiniband") || has_entries("/sys/class/cxi"); }

int main(void)
{
    const char *want = getenv("NETNS_EXPECT_FABRIC");
    shmem_init();
    const int me = shmem_my_pe(), fabric = mapped("libfabric");
    int bad = 0;
    if (!want || (strcmp(want, "0") && strcmp(want, "1"))) {
        fprintf(stderr, "PE %d: set NETNS_EXPECT_FABRIC to 0 or 1\n", me);
        bad = 1;
    } else if (fabric < 0) {
        fprintf(stderr, "PE %d: cannot read /proc/self/maps\n", me);
        bad = 1;
    } else if (!strcmp(want, "1") && !fabric) {
        fprintf(stderr, "PE %d: libfabric is not mapped, yet SHMEM_ENCRYPT=off carries the data over it\n", me);
        bad = 1;
    } else if (!strcmp(want, "0") && fabric) {
        if (adapters_listed())
            printf("PE %d: this host lists RDMA adapters, so the probe loaded libfabric (nothing to check)\n", me);
        else {
            fprintf(stderr, "PE %d: shmem_init loaded libfabric although no RDMA adapter is listed\n", me);
            bad = 1;
        }
    } else {
        printf("PE %d: libfabric %s, as expected\n", me, fabric ? "mapped" : "not mapped");
    }
    shmem_finalize();
    return bad;
}

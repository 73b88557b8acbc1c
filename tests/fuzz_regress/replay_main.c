/* replay_main.c: stands in for libFuzzer's driver. Feeds every regular file
 * of each directory (or file) named on the command line, in name order, to
 * LLVMFuzzerTestOneInput, so the seed corpus and every past crash replay
 * in the ordinary test suite with the ordinary compiler. A directory that
 * does not exist is skipped (a target may have no regressions yet); at
 * least one input must be found. A failing input aborts inside the target,
 * after this prints its name. */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            fprintf(stderr, "replay: out of memory\n");
            return -1;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap) break;
        cap *= 2;
        buf = realloc(buf, cap);
    }
    int bad = ferror(f);
    fclose(f); /* before the target runs: it checks for leaked descriptors */
    if (bad) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}

static int skip_hidden(const struct dirent *e) { return e->d_name[0] != '.'; }

int main(int argc, char **argv)
{
    int count = 0;
    for (int a = 1; a < argc; a++) {
        struct stat st;
        if (stat(argv[a], &st) != 0) continue;
        if (!S_ISDIR(st.st_mode)) {
            if (replay_file(argv[a]) != 0) return 1;
            count++;
            continue;
        }
        struct dirent **names;
        int n = scandir(argv[a], &names, skip_hidden, alphasort);
        if (n < 0) {
            fprintf(stderr, "replay: %s: %s\n", argv[a], strerror(errno));
            return 1;
        }
        for (int i = 0; i < n; i++) {
            char path[4096];
            snprintf(path, sizeof path, "%s/%s", argv[a], names[i]->d_name);
            free(names[i]);
            if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
                if (replay_file(path) != 0) return 1;
                count++;
            }
        }
        free(names);
    }
    if (count == 0) {
        fprintf(stderr, "replay: no inputs found\n");
        return 1;
    }
    printf("replay: %d inputs passed\n", count);
    return 0;
}

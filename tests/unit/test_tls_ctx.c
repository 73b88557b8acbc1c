/* test_tls_ctx.c: a tls context costs nothing per PE it has not talked to
 * (src/transport/tls/tls_client.c). At 65,536 PEs a context made and
 * quieted before any stream exists must stay under 2 MiB of resident memory
 * (its streams, about 500 bytes each, were once made for every PE up front:
 * 32 MiB) and its quiet must look at no stream. Prints what a context and an
 * empty quiet cost, figures, not checks. One process, no peers. */
#include "harness.h"
#include "transport/tls/tls.h"
#include "util/clock.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "VmRSS:", 6) == 0) kib = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kib;
}

int main(void)
{
    enum { PES = 65536, QUIETS = 1000 };
    shoal_tls.n_pes = PES;
    shoal_tls.my_pe = 0;
    const long before = rss_kib();
    double t = shoal_now_ns() / 1e3;
    shoal_tctx_t *ctx = NULL;
    CHECK(shoal_tls_ctx_create(&ctx) == SHOAL_OK && ctx != NULL);
    if (!ctx) return test_finish();
    const double create_us = shoal_now_ns() / 1e3 - t;
    t = shoal_now_ns() / 1e3;
    for (int i = 0; i < QUIETS; i++) shoal_tls_quiet(ctx);
    const double quiet_us = (shoal_now_ns() / 1e3 - t) / QUIETS;
    const long grown = rss_kib() - before;
    CHECK_MSG(before > 0 && grown < 2048, "a context of %d PEs and %d quiets grew the resident memory by %ld KiB",
              PES, QUIETS, grown);
    CHECK(__atomic_load_n(&ctx->n_used, __ATOMIC_RELAXED) == 0);
    for (int pe = 0; pe < PES; pe++) CHECK(ctx->conn[pe] == NULL);
    printf("tls context of %d PEs: made in %.0f us, %ld KiB resident after %d quiets, %.3f us a quiet\n", PES,
           create_us, grown, QUIETS, quiet_us);
    shoal_tls_ctx_destroy(ctx);
    return test_finish();
}

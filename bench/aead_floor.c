/* aead_floor.c: the most an encrypted stream can carry on this machine,
 * from its cipher alone. The encrypted transport seals every byte once at
 * the sender and opens it once at the receiver, with TLS_AES_128_GCM_SHA256
 * in 16 KiB records; when both ends share this host's cores (one host, or
 * namespace hosts), both run at once. So no encrypted stream here beats
 * two threads doing just that, with no copy, no system call and no TCP.
 * bench/tls_vs_ofi.sh runs it beside the libraries and sets the 0.8x
 * bandwidth target against it. Uses libcrypto's EVP interface, as OpenSSL's
 * TLS record layer does.
 *   aead_floor     prints, as the bench/ probes do (figure,size,pes,value,
 *                  unit; the median of 3 timed runs):
 *   aead_seal      one thread sealing 16 KiB records (GB/s, 1e9 B/s)
 *   aead_stream    one thread sealing while another opens what was sealed
 *                  (GB/s of plaintext through both: the stream's ceiling) */
#ifndef _GNU_SOURCE /* the build passes it */
#define _GNU_SOURCE
#endif
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { RUNS = 3, RECORD = 16384, TAG = 16, RECORDS = 4096 }; /* 64 MiB a run */

static unsigned char key[16], iv[12];
static unsigned char *plain, *opened;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void die(const char *what)
{
    fprintf(stderr, "aead_floor: %s failed\n", what);
    exit(1);
}

/* Seals a run of records into sealed (enc), or opens those in sealed; the
 * nonce changes per record as TLS 1.3's does. Returns the seconds it took. */
static double crypt_all(int enc, unsigned char *sealed)
{
    EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
    if (!c || !EVP_CipherInit_ex(c, EVP_aes_128_gcm(), NULL, key, NULL, enc)) die("EVP_CipherInit_ex");
    const double t = now_s();
    for (int r = 0; r < RECORDS; r++) {
        unsigned char nonce[12];
        memcpy(nonce, iv, sizeof nonce);
        nonce[11] ^= (unsigned char)r;
        nonce[10] ^= (unsigned char)(r >> 8);
        unsigned char *in = enc ? plain : sealed + (size_t)r * (RECORD + TAG);
        unsigned char *out = enc ? sealed + (size_t)r * (RECORD + TAG) : opened;
        int n = 0, fin = 0;
        if (!EVP_CipherInit_ex(c, NULL, NULL, NULL, nonce, enc)) die("EVP_CipherInit_ex (nonce)");
        if (!enc && !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_SET_TAG, TAG, in + RECORD)) die("set tag");
        if (!EVP_CipherUpdate(c, out, &n, in, RECORD)) die("EVP_CipherUpdate");
        if (!EVP_CipherFinal_ex(c, out + n, &fin)) die(enc ? "EVP_CipherFinal_ex" : "opening a sealed record");
        if (enc && !EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_GCM_GET_TAG, TAG, out + RECORD)) die("get tag");
    }
    const double took = now_s() - t;
    EVP_CIPHER_CTX_free(c);
    return took;
}

struct opening {
    unsigned char *sealed;
    double seconds;
};

static void *opener(void *arg)
{
    struct opening *o = arg;
    o->seconds = crypt_all(0, o->sealed);
    return NULL;
}

int main(void)
{
    const size_t run_bytes = (size_t)RECORDS * (RECORD + TAG);
    plain = malloc(RECORD);
    opened = malloc(RECORD);
    unsigned char *sealed = malloc(run_bytes), *scratch = malloc(run_bytes);
    if (!plain || !opened || !sealed || !scratch) die("malloc");
    for (int i = 0; i < RECORD; i++) plain[i] = (unsigned char)(i * 7 + 1);
    for (size_t i = 0; i < sizeof key; i++) key[i] = (unsigned char)(i * 13 + 5);
    for (size_t i = 0; i < sizeof iv; i++) iv[i] = (unsigned char)(i * 3 + 2);
    crypt_all(1, sealed); /* also warms up; the opener opens these records */
    memset(scratch, 0, run_bytes);
    const double bytes = (double)RECORDS * RECORD;
    double seal[RUNS], stream[RUNS];
    for (int k = 0; k < RUNS; k++) seal[k] = bytes / crypt_all(1, scratch) / 1e9;
    for (int k = 0; k < RUNS; k++) {
        struct opening o = {sealed, 0};
        pthread_t th;
        if (pthread_create(&th, NULL, opener, &o)) die("pthread_create");
        const double seal_s = crypt_all(1, scratch);
        pthread_join(th, NULL);
        stream[k] = bytes / (seal_s > o.seconds ? seal_s : o.seconds) / 1e9;
    }
    qsort(seal, RUNS, sizeof seal[0], cmp_double);
    qsort(stream, RUNS, sizeof stream[0], cmp_double);
    printf("# aead_floor: AES-128-GCM (EVP), %d-byte records, %d MiB a run\n", RECORD, RECORDS * RECORD >> 20);
    printf("# figure,size,pes,value,unit (value: median of %d runs)\n", RUNS);
    printf("aead_seal,%d,1,%.3f,GB/s\n", RECORD, seal[RUNS / 2]);
    printf("aead_stream,%d,2,%.3f,GB/s\n", RECORD, stream[RUNS / 2]);
    free(plain);
    free(opened);
    free(sealed);
    free(scratch);
    return 0;
}

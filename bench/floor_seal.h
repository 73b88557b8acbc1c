/* floor_seal.h: TLS 1.3 records as the encrypted transport's streams carry
 * them (TLS_AES_128_GCM_SHA256: the 5-byte record header as associated
 * data, the inner content type after the payload, a 16-byte tag, the nonce
 * the IV XOR the record's sequence number), sealed and opened through
 * libcrypto's EVP interface as OpenSSL's record layer does. For the floor
 * probes (stream_floor.c, tcp_floor.c), which measure what sealing costs,
 * not what it protects: the key is a fixed pattern both ends know. Each
 * function returns 0, or -1 where libcrypto failed or a record did not
 * open; the probe says what failed. */
#ifndef SHOAL_BENCH_FLOOR_SEAL_H
#define SHOAL_BENCH_FLOOR_SEAL_H

#include <openssl/evp.h>
#include <string.h>

enum { FLOOR_SEAL_HEADER = 5, FLOOR_SEAL_TAG = 16, FLOOR_SEAL_APP_DATA = 0x17 };
/* Bytes on the wire of one record of len payload bytes. */
#define FLOOR_SEALED(len) (FLOOR_SEAL_HEADER + (len) + 1 + FLOOR_SEAL_TAG)

/* One direction of a stream: its cipher and the next record's number. */
struct floor_seal {
    EVP_CIPHER_CTX *cipher;
    unsigned char iv[12];
    unsigned long long seq;
};

/* sealing: 1 for the sending end, 0 for the receiving one. */
static inline int floor_seal_init(struct floor_seal *s, int sealing)
{
    unsigned char key[16];
    for (size_t i = 0; i < sizeof key; i++) key[i] = (unsigned char)(i * 13 + 5);
    for (size_t i = 0; i < sizeof s->iv; i++) s->iv[i] = (unsigned char)(i * 3 + 2);
    s->seq = 0;
    s->cipher = EVP_CIPHER_CTX_new();
    if (!s->cipher) return -1;
    const int ok = sealing ? EVP_EncryptInit_ex(s->cipher, EVP_aes_128_gcm(), NULL, key, NULL)
                           : EVP_DecryptInit_ex(s->cipher, EVP_aes_128_gcm(), NULL, key, NULL);
    return ok ? 0 : -1;
}

static inline void floor_seal_free(struct floor_seal *s) { EVP_CIPHER_CTX_free(s->cipher); }

static inline void floor_seal_nonce(const struct floor_seal *s, unsigned char nonce[12])
{
    memcpy(nonce, s->iv, 12);
    for (int i = 0; i < 8; i++) nonce[11 - i] ^= (unsigned char)(s->seq >> (8 * i));
}

/* Seals len bytes of plain into one record at out (FLOOR_SEALED(len) bytes). */
static inline int floor_seal(struct floor_seal *s, const unsigned char *plain, int len, unsigned char *out)
{
    static const unsigned char inner_type = FLOOR_SEAL_APP_DATA;
    unsigned char nonce[12];
    const int body = len + 1 + FLOOR_SEAL_TAG;
    unsigned char *const payload = out + FLOOR_SEAL_HEADER, *const tag = payload + len + 1;
    int n;
    floor_seal_nonce(s, nonce);
    s->seq++;
    out[0] = FLOOR_SEAL_APP_DATA, out[1] = 3, out[2] = 3;
    out[3] = (unsigned char)(body >> 8), out[4] = (unsigned char)body;
    return EVP_EncryptInit_ex(s->cipher, NULL, NULL, NULL, nonce) &&
                   EVP_EncryptUpdate(s->cipher, NULL, &n, out, FLOOR_SEAL_HEADER) &&
                   EVP_EncryptUpdate(s->cipher, payload, &n, plain, len) &&
                   EVP_EncryptUpdate(s->cipher, payload + len, &n, &inner_type, 1) &&
                   EVP_EncryptFinal_ex(s->cipher, tag, &n) &&
                   EVP_CIPHER_CTX_ctrl(s->cipher, EVP_CTRL_GCM_GET_TAG, FLOOR_SEAL_TAG, tag)
               ? 0
               : -1;
}

/* Opens the record of len payload bytes at rec in place: its payload is
 * then at rec + FLOOR_SEAL_HEADER. Fails where the tag does not match. */
static inline int floor_open(struct floor_seal *s, unsigned char *rec, int len)
{
    unsigned char nonce[12];
    unsigned char *const payload = rec + FLOOR_SEAL_HEADER, *const tag = payload + len + 1;
    int n;
    floor_seal_nonce(s, nonce);
    s->seq++;
    return EVP_DecryptInit_ex(s->cipher, NULL, NULL, NULL, nonce) &&
                   EVP_DecryptUpdate(s->cipher, NULL, &n, rec, FLOOR_SEAL_HEADER) &&
                   EVP_DecryptUpdate(s->cipher, payload, &n, payload, len + 1) &&
                   EVP_CIPHER_CTX_ctrl(s->cipher, EVP_CTRL_GCM_SET_TAG, FLOOR_SEAL_TAG, tag) &&
                   EVP_DecryptFinal_ex(s->cipher, tag, &n) && payload[len] == FLOOR_SEAL_APP_DATA
               ? 0
               : -1;
}

#endif

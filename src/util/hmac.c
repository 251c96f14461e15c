/*
 * hmac.c - SHA-256 and HMAC-SHA-256, written from their definitions (FIPS 180-4
 * section 6.2; RFC 2104) for the tcp transport's admission (transport/tcp). Small and
 * not fast: it runs a few times per connection, at setup. Checked against the RFC 4231
 * test vectors by tests/unit/test_hmac.c.
 */
#include "util/hmac.h"

#include <string.h>

/* The first 32 bits of the fractional parts of the cube roots of the first 64 primes. */
static const uint32_t sha256_k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
    0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
    0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
    0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
    0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
    0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
    0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
    0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
    0xc67178f2};

static uint32_t rotr(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

/* One 64-byte block into the state (FIPS 180-4, 6.2.2). */
static void sha256_block(uint32_t h[8], const uint8_t *p)
{
    uint32_t w[64];
    for (int t = 0; t < 16; t++)
        w[t] = (uint32_t)p[4 * t] << 24 | (uint32_t)p[4 * t + 1] << 16 |
               (uint32_t)p[4 * t + 2] << 8 | (uint32_t)p[4 * t + 3];
    for (int t = 16; t < 64; t++) {
        uint32_t s0 = rotr(w[t - 15], 7) ^ rotr(w[t - 15], 18) ^ (w[t - 15] >> 3);
        uint32_t s1 = rotr(w[t - 2], 17) ^ rotr(w[t - 2], 19) ^ (w[t - 2] >> 10);
        w[t] = w[t - 16] + s0 + w[t - 7] + s1;
    }
    uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
    for (int t = 0; t < 64; t++) {
        uint32_t t1 = k + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                      sha256_k[t] + w[t];
        uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        k = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    h[0] += a;
    h[1] += b;
    h[2] += c;
    h[3] += d;
    h[4] += e;
    h[5] += f;
    h[6] += g;
    h[7] += k;
}

void util_sha256_init(struct util_sha256 *s)
{
    /* The first 32 bits of the fractional parts of the square roots of the first 8 primes. */
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->bytes = 0;
    s->nbuf = 0;
}

void util_sha256_update(struct util_sha256 *s, const void *data, size_t len)
{
    const uint8_t *p = data;
    s->bytes += len;
    while (len) {
        size_t take = UTIL_SHA256_BLOCK - s->nbuf;
        if (take > len) take = len;
        memcpy(s->buf + s->nbuf, p, take);
        s->nbuf += take;
        p += take;
        len -= take;
        if (s->nbuf == UTIL_SHA256_BLOCK) {
            sha256_block(s->h, s->buf);
            s->nbuf = 0;
        }
    }
}

void util_sha256_final(struct util_sha256 *s, uint8_t out[UTIL_SHA256_BYTES])
{
    /* Padding (5.1.1): a 1 bit, zeros up to 56 mod 64 bytes, the bit length big-endian. */
    uint64_t bits = s->bytes * 8;
    uint8_t pad = 0x80;
    util_sha256_update(s, &pad, 1);
    pad = 0;
    while (s->nbuf != 56)
        util_sha256_update(s, &pad, 1);
    uint8_t len[8];
    for (int i = 0; i < 8; i++)
        len[i] = (uint8_t)(bits >> (56 - 8 * i));
    util_sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) {
        out[4 * i] = (uint8_t)(s->h[i] >> 24);
        out[4 * i + 1] = (uint8_t)(s->h[i] >> 16);
        out[4 * i + 2] = (uint8_t)(s->h[i] >> 8);
        out[4 * i + 3] = (uint8_t)s->h[i];
    }
}

void util_hmac_sha256(const void *key, size_t keylen, const void *const *msg, const size_t *len,
                      int n, uint8_t out[UTIL_SHA256_BYTES])
{
    /* RFC 2104: H((K ^ opad) || H((K ^ ipad) || text)), K hashed first if longer than a
     * block and zero-padded to one. */
    uint8_t k[UTIL_SHA256_BLOCK] = {0}, pad[UTIL_SHA256_BLOCK], inner[UTIL_SHA256_BYTES];
    struct util_sha256 s;
    if (keylen > UTIL_SHA256_BLOCK) {
        util_sha256_init(&s);
        util_sha256_update(&s, key, keylen);
        util_sha256_final(&s, k);
    } else if (keylen) {
        memcpy(k, key, keylen);
    }
    for (int i = 0; i < UTIL_SHA256_BLOCK; i++)
        pad[i] = k[i] ^ 0x36;
    util_sha256_init(&s);
    util_sha256_update(&s, pad, sizeof pad);
    for (int i = 0; i < n; i++)
        util_sha256_update(&s, msg[i], len[i]);
    util_sha256_final(&s, inner);
    for (int i = 0; i < UTIL_SHA256_BLOCK; i++)
        pad[i] = k[i] ^ 0x5c;
    util_sha256_init(&s);
    util_sha256_update(&s, pad, sizeof pad);
    util_sha256_update(&s, inner, sizeof inner);
    util_sha256_final(&s, out);
}

int util_memeq_ct(const void *a, const void *b, size_t n)
{
    const volatile uint8_t *x = a, *y = b;
    uint8_t d = 0;
    for (size_t i = 0; i < n; i++)
        d |= x[i] ^ y[i];
    return d != 0;
}

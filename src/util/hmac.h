/*
 * hmac.h - SHA-256 (FIPS 180-4) and HMAC-SHA-256 (RFC 2104), for the tcp transport's
 * challenge-response admission: a peer proves it knows the job secret by the MAC of
 * fresh nonces, so the secret itself never crosses the wire.
 */
#ifndef TERN_UTIL_HMAC_H
#define TERN_UTIL_HMAC_H

#include <stddef.h>
#include <stdint.h>

#define UTIL_SHA256_BYTES 32
#define UTIL_SHA256_BLOCK 64

struct util_sha256 {
    uint32_t h[8];
    uint64_t bytes; /* message length so far */
    uint8_t buf[UTIL_SHA256_BLOCK];
    size_t nbuf;
};

/* Incremental SHA-256: init, any number of updates, final writes the 32-byte digest. */
void util_sha256_init(struct util_sha256 *s);
void util_sha256_update(struct util_sha256 *s, const void *data, size_t len);
void util_sha256_final(struct util_sha256 *s, uint8_t out[UTIL_SHA256_BYTES]);

/* HMAC-SHA-256 of the concatenation of n message pieces msg[i] (len[i] bytes each) under
 * key (any length), written to out. */
void util_hmac_sha256(const void *key, size_t keylen, const void *const *msg, const size_t *len,
                      int n, uint8_t out[UTIL_SHA256_BYTES]);

/* Compare n bytes in time that does not depend on where they differ: 0 if equal. */
int util_memeq_ct(const void *a, const void *b, size_t n);

#endif

/*
 * fuzz_tcp_frame.c - libFuzzer target for the tcp transport's wire parsers
 * (src/transport/tcp/tcp_frame.c): arbitrary bytes as they would arrive on a
 * connection, walked the way tcp.c walks them, plus the handshake check and the
 * secret parser on their own.
 *
 * The first input byte picks the largest MSG payload, how the stream is split into
 * reads (so the fuzzer also explores frames that arrive a few bytes at a time; the
 * verdict for every frame must not depend on the split) and whether the stream starts
 * admitted (the handshake's HMAC proof cannot be guessed, so MSG parsing is reached that
 * way). Before admission the walk is the acceptor's: a HELLO, then an AUTH checked
 * against the proof for the job secret fixed here (bytes 0..15).
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transport/tcp/tcp_frame.h"

#define FUZZ_ASSERT(c)                                                                             \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

static const uint8_t fuzz_secret[TCP_SECRET_BYTES] = {0, 1, 2,  3,  4,  5,  6,  7,
                                                      8, 9, 10, 11, 12, 13, 14, 15};

/* One handshake frame as the acceptor sees it: 0 to go on, or the refusal. */
static int fuzz_handshake(const struct tcp_fhdr *h, const uint8_t *payload, int *hs, int *authed,
                          uint8_t nonce[TCP_NONCE_BYTES], int *rank)
{
    if (h->type == TCP_FRAME_HELLO) {
        if (*hs != 0) return TCP_FE_ORDER;
        int rc = tcp_hello_check(payload, h->len, 4, rank, nonce);
        if (rc) return rc;
        FUZZ_ASSERT(*rank >= 0 && *rank < 4);
        *hs = 1;
        return 0;
    }
    FUZZ_ASSERT(h->type == TCP_FRAME_AUTH);
    if (*hs != 1) return TCP_FE_ORDER;
    static const uint8_t mine[TCP_NONCE_BYTES];
    uint8_t want[TCP_MAC_BYTES];
    tcp_auth_mac(fuzz_secret, TCP_ROLE_CONNECTOR, nonce, mine, *rank, 0, want);
    int rc = tcp_auth_check(payload, h->len, want);
    if (rc) return rc;
    *authed = 1;
    return 0;
}

/* Walk a stream given whole; returns how many frames were accepted. */
static int fuzz_walk(const uint8_t *data, size_t size, size_t max_len, int authed, int *verdict)
{
    size_t off = 0;
    int frames = 0, hs = 0, rank = -1;
    uint8_t nonce[TCP_NONCE_BYTES];
    *verdict = 0;
    for (;;) {
        struct tcp_fhdr h;
        long total = tcp_frame_next(data + off, size - off, max_len, authed, &h);
        if (total <= 0) {
            *verdict = (int)total;
            return frames;
        }
        FUZZ_ASSERT((size_t)total == sizeof h + h.len);
        FUZZ_ASSERT(authed ? (h.type == TCP_FRAME_PAD ? h.len <= TCP_PAD_MAX
                                                      : h.len > 0 && h.len <= max_len)
                           : h.len == sizeof(struct tcp_hello));
        if ((size_t)total > size - off) return frames; /* incomplete: need more */
        const uint8_t *payload = data + off + sizeof h;
        if (!authed) {
            int rc = fuzz_handshake(&h, payload, &hs, &authed, nonce, &rank);
            if (rc) {
                *verdict = rc;
                return frames;
            }
        } else {
            FUZZ_ASSERT((h.type == TCP_FRAME_MSG || h.type == TCP_FRAME_PAD) && authed);
            volatile uint8_t sink = 0;
            for (size_t i = 0; i < h.len; i++)
                sink ^= payload[i];
            (void)sink;
        }
        off += (size_t)total;
        frames++;
    }
}

/* The same stream, revealed `step` bytes at a time like a socket that trickles. */
static int fuzz_walk_trickle(const uint8_t *data, size_t size, size_t max_len, size_t step,
                             int authed, int *verdict)
{
    size_t off = 0, have = 0;
    int frames = 0, hs = 0, rank = -1;
    uint8_t nonce[TCP_NONCE_BYTES];
    *verdict = 0;
    while (have < size || have == 0) {
        have = have + step < size ? have + step : size;
        for (;;) {
            struct tcp_fhdr h;
            long total = tcp_frame_next(data + off, have - off, max_len, authed, &h);
            if (total < 0) {
                *verdict = (int)total;
                return frames;
            }
            if (total == 0 || (size_t)total > have - off) break;
            if (!authed) {
                int rc = fuzz_handshake(&h, data + off + sizeof h, &hs, &authed, nonce, &rank);
                if (rc) {
                    *verdict = rc;
                    return frames;
                }
            }
            off += (size_t)total;
            frames++;
        }
        if (have == size) break;
    }
    return frames;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0) return 0;
    uint8_t mode = data[0];
    data++;
    size--;
    static const size_t max_lens[4] = {1, 64, 4096, (size_t)1 << 20};
    size_t max_len = max_lens[mode & 3];
    size_t step = (size_t)((mode >> 2) & 0x1f) + 1;
    int trusted = mode >> 7;

    int v1, v2;
    int n1 = fuzz_walk(data, size, max_len, trusted, &v1);
    int n2 = fuzz_walk_trickle(data, size, max_len, step, trusted, &v2);
    /* What is accepted or refused must not depend on how the bytes were split. */
    FUZZ_ASSERT(n1 == n2);
    FUZZ_ASSERT(v1 == v2);

    int rank;
    uint8_t nonce[TCP_NONCE_BYTES];
    (void)tcp_hello_check(data, size, 1 + (mode & 7), &rank, nonce);

    char hex[2 * TCP_SECRET_BYTES + 2];
    size_t n = size < sizeof hex - 1 ? size : sizeof hex - 1;
    memcpy(hex, data, n);
    hex[n] = '\0';
    uint8_t s[TCP_SECRET_BYTES];
    if (tcp_secret_parse(hex, s) == 0) {
        char back[2 * TCP_SECRET_BYTES + 1];
        tcp_secret_format(s, back);
        for (size_t i = 0; i < 2 * TCP_SECRET_BYTES; i++)
            FUZZ_ASSERT((back[i] | 0x20) == (hex[i] | 0x20));
    }
    FUZZ_ASSERT(tcp_frame_strerror(-(int)(mode % 12)) != NULL);
    return 0;
}

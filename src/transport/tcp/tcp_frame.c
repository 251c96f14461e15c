/*
 * tcp_frame.c - the pure parsers of the tcp transport's wire format (see tcp_frame.h).
 * Everything here is bounds-checked against the bytes given and never trusts a length
 * or a rank read from the wire; it is fuzzed by tests/fuzz/fuzz_tcp_frame.c.
 */
#include "transport/tcp/tcp_frame.h"

#include <string.h>

#include "util/hmac.h"

_Static_assert(sizeof(struct tcp_fhdr) == 8, "frame header is 8 bytes on the wire");
_Static_assert(sizeof(struct tcp_hello) == 32, "hello is 32 bytes on the wire");
_Static_assert(sizeof(struct tcp_auth) == 32, "auth is 32 bytes on the wire");

const char *tcp_frame_strerror(int err)
{
    switch (err) {
#define TCP_FRAME_ERR_CASE(name, value, text)                                                      \
    case value:                                                                                    \
        return text;
        TCP_FRAME_ERRORS(TCP_FRAME_ERR_CASE)
#undef TCP_FRAME_ERR_CASE
    default:
        return "unknown frame error";
    }
}

long tcp_frame_next(const void *buf, size_t avail, size_t max_len, int authed, struct tcp_fhdr *out)
{
    struct tcp_fhdr h;
    if (avail < sizeof h) {
        /* Reject garbage as early as its first byte allows: a stranger that sends a
         * few wrong bytes and then waits must not hold the connection open. */
        uint16_t magic = TCP_FRAME_MAGIC;
        size_t n = avail < sizeof magic ? avail : sizeof magic;
        if (memcmp(buf, &magic, n) != 0) return TCP_FE_MAGIC;
        return 0;
    }
    memcpy(&h, buf, sizeof h);
    if (h.magic != TCP_FRAME_MAGIC) return TCP_FE_MAGIC;
    if (h.flags != 0) return TCP_FE_FLAGS;
    if (!authed) {
        if (h.type != TCP_FRAME_HELLO && h.type != TCP_FRAME_AUTH) return TCP_FE_TYPE;
        if (h.len !=
            (h.type == TCP_FRAME_HELLO ? sizeof(struct tcp_hello) : sizeof(struct tcp_auth)))
            return TCP_FE_LENGTH;
    } else {
        if (h.type == TCP_FRAME_PAD) {
            if (h.len > TCP_PAD_MAX) return TCP_FE_LENGTH;
        } else {
            if (h.type != TCP_FRAME_MSG) return TCP_FE_TYPE;
            if (h.len == 0 || h.len > max_len) return TCP_FE_LENGTH;
        }
    }
    *out = h;
    return (long)(sizeof h + h.len);
}

int tcp_hello_check(const void *payload, size_t len, int size, int *rank,
                    uint8_t nonce[TCP_NONCE_BYTES])
{
    struct tcp_hello m;
    if (len != sizeof m) return TCP_FE_LENGTH;
    memcpy(&m, payload, sizeof m);
    if (m.magic != TCP_HELLO_MAGIC) return TCP_FE_HELLO_MAGIC;
    if (m.version != TCP_PROTO_VERSION || m.flags != 0) return TCP_FE_VERSION;
    if (m.size != size || m.rank < 0 || m.rank >= size) return TCP_FE_RANK;
    *rank = m.rank;
    memcpy(nonce, m.nonce, TCP_NONCE_BYTES);
    return 0;
}

void tcp_hello_make(struct tcp_hello_frame *f, const uint8_t nonce[TCP_NONCE_BYTES], int rank,
                    int size)
{
    memset(f, 0, sizeof *f);
    f->h.magic = TCP_FRAME_MAGIC;
    f->h.type = TCP_FRAME_HELLO;
    f->h.len = sizeof f->hello;
    f->hello.magic = TCP_HELLO_MAGIC;
    f->hello.version = TCP_PROTO_VERSION;
    f->hello.rank = rank;
    f->hello.size = size;
    memcpy(f->hello.nonce, nonce, TCP_NONCE_BYTES);
}

void tcp_auth_mac(const uint8_t secret[TCP_SECRET_BYTES], enum tcp_role role,
                  const uint8_t nc[TCP_NONCE_BYTES], const uint8_t na[TCP_NONCE_BYTES], int rc,
                  int ra, uint8_t mac[TCP_MAC_BYTES])
{
    static const char label[] = "tern-tcp-auth-v2";
    /* Fixed-width, little-endian integers: the message is the same on every host. */
    uint8_t ints[12];
    const uint32_t v[3] = {(uint32_t)role, (uint32_t)rc, (uint32_t)ra};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 4; k++)
            ints[4 * i + k] = (uint8_t)(v[i] >> (8 * k));
    const void *msg[4] = {label, ints, nc, na};
    const size_t len[4] = {sizeof label - 1, sizeof ints, TCP_NONCE_BYTES, TCP_NONCE_BYTES};
    util_hmac_sha256(secret, TCP_SECRET_BYTES, msg, len, 4, mac);
}

void tcp_auth_make(struct tcp_auth_frame *f, const uint8_t mac[TCP_MAC_BYTES])
{
    memset(f, 0, sizeof *f);
    f->h.magic = TCP_FRAME_MAGIC;
    f->h.type = TCP_FRAME_AUTH;
    f->h.len = sizeof f->auth;
    memcpy(f->auth.mac, mac, TCP_MAC_BYTES);
}

int tcp_auth_check(const void *payload, size_t len, const uint8_t want[TCP_MAC_BYTES])
{
    if (len != sizeof(struct tcp_auth)) return TCP_FE_LENGTH;
    return util_memeq_ct(payload, want, TCP_MAC_BYTES) ? TCP_FE_SECRET : 0;
}

static int tcp_hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int tcp_secret_parse(const char *hex, uint8_t out[TCP_SECRET_BYTES])
{
    uint8_t tmp[TCP_SECRET_BYTES];
    for (int i = 0; i < TCP_SECRET_BYTES; i++) {
        int hi = tcp_hexval(hex[2 * i]);
        if (hi < 0) return -1;
        int lo = tcp_hexval(hex[2 * i + 1]);
        if (lo < 0) return -1;
        tmp[i] = (uint8_t)(hi << 4 | lo);
    }
    if (hex[2 * TCP_SECRET_BYTES] != '\0') return -1;
    memcpy(out, tmp, sizeof tmp);
    return 0;
}

void tcp_secret_format(const uint8_t secret[TCP_SECRET_BYTES], char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < TCP_SECRET_BYTES; i++) {
        out[2 * i] = digits[secret[i] >> 4];
        out[2 * i + 1] = digits[secret[i] & 15];
    }
    out[2 * TCP_SECRET_BYTES] = '\0';
}

/*
 * tcp_frame.h - the wire format of the tcp transport and its pure parsers.
 *
 * A connection carries a byte stream of frames, each an 8-byte header followed by
 * `len` payload bytes:
 *
 *     uint16 magic (TCP_FRAME_MAGIC)  uint8 type  uint8 flags (0)  uint32 len
 *
 * in host byte order (tern assumes one byte order per job; a peer of the other order
 * fails the magic check). The handshake is a challenge-response in which the job secret
 * never crosses the wire: the connecting side C sends a HELLO (struct tcp_hello: its
 * rank, the protocol version and a fresh random nonce), the accepting side A answers with
 * its own HELLO, C sends an AUTH (struct tcp_auth) whose MAC proves it knows the secret,
 * and A, having checked it, answers with an AUTH that proves the same of A. The MACs are
 * HMAC-SHA-256 under the secret of both nonces and both ranks with the prover's role,
 * so one side's proof can neither be replayed on another connection nor reflected
 * back. Every later frame is a MSG carrying one core frame. Nothing here does I/O, so the parsers
 * can be unit-tested and fuzzed (tests/fuzz/fuzz_tcp_frame.c) on arbitrary bytes.
 */
#ifndef TERN_TRANSPORT_TCP_FRAME_H
#define TERN_TRANSPORT_TCP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define TCP_FRAME_MAGIC   0x7446u     /* "Ft" in memory on little-endian hosts */
#define TCP_HELLO_MAGIC   0x6e726574u /* "tern" */
#define TCP_PROTO_VERSION 3u
#define TCP_SECRET_BYTES  16
#define TCP_NONCE_BYTES   16
#define TCP_MAC_BYTES     32

enum tcp_frame_type {
    TCP_FRAME_HELLO = 1, /* handshake: struct tcp_hello */
    TCP_FRAME_MSG = 2,   /* one core frame */
    TCP_FRAME_AUTH = 3,  /* handshake: struct tcp_auth */
    /* len bytes (at most TCP_PAD_MAX, possibly 0) to skip: sent before a MSG to move its
     * payload's place in the kernel's socket buffer pages (tcp.c, tcp_pad_for) */
    TCP_FRAME_PAD = 4,
};
#define TCP_PAD_MAX 64

struct tcp_fhdr {
    uint16_t magic;
    uint8_t type;
    uint8_t flags;
    uint32_t len; /* payload bytes after this header */
};

struct tcp_hello {
    uint32_t magic;                 /* TCP_HELLO_MAGIC */
    uint16_t version;               /* TCP_PROTO_VERSION */
    uint16_t flags;                 /* 0 */
    int32_t rank;                   /* sender's world rank */
    int32_t size;                   /* sender's idea of the job size */
    uint8_t nonce[TCP_NONCE_BYTES]; /* fresh random bytes: the challenge to the other side */
};

struct tcp_auth {
    uint8_t mac[TCP_MAC_BYTES]; /* see tcp_auth_mac */
};

/* Why a stream or a handshake was refused (negative; 0 is fine). */
#define TCP_FRAME_ERRORS(X)                                                                        \
    X(MAGIC, -1, "bad frame magic (not a tern peer, or garbage)")                                  \
    X(TYPE, -2, "unknown frame type, or a frame not allowed in this state")                        \
    X(FLAGS, -3, "reserved frame flags set")                                                       \
    X(LENGTH, -4, "frame length out of range")                                                     \
    X(HELLO_MAGIC, -5, "handshake magic mismatch")                                                 \
    X(VERSION, -6, "unsupported protocol version")                                                 \
    X(RANK, -7, "rank out of range or job size mismatch")                                          \
    X(SECRET, -8, "handshake proof does not match the job secret")                                 \
    X(ORDER, -9, "handshake frames out of order")

enum tcp_frame_err {
#define TCP_FRAME_ERR_ENUM(name, value, text) TCP_FE_##name = (value),
    TCP_FRAME_ERRORS(TCP_FRAME_ERR_ENUM)
#undef TCP_FRAME_ERR_ENUM
};

/* A sentence for a TCP_FE_* code (never NULL). */
const char *tcp_frame_strerror(int err);

/*
 * Look at the next frame of a stream: `buf` holds the `avail` bytes received so far
 * from the frame's first byte on. `authed` says whether the handshake is done: before
 * it only a HELLO or an AUTH of exactly their payload sizes is allowed (their order is
 * the caller's to check), after it only MSG frames of at most `max_len` payload bytes. Returns 0 if
 * fewer than 8 bytes are there (need more), the frame's total size (header included; possibly more
 * than `avail`) with its header in *out, or a TCP_FE_* error.
 */
long tcp_frame_next(const void *buf, size_t avail, size_t max_len, int authed,
                    struct tcp_fhdr *out);

/*
 * Check a HELLO payload of `len` bytes against the job: magic, version, rank in
 * [0, size), size equal to ours. Returns 0 with the sender's rank in *rank and its nonce
 * in nonce, or a TCP_FE_* error.
 */
int tcp_hello_check(const void *payload, size_t len, int size, int *rank,
                    uint8_t nonce[TCP_NONCE_BYTES]);

/* Fill a HELLO frame (header + payload) for rank `rank` of a job of `size`. */
struct tcp_hello_frame {
    struct tcp_fhdr h;
    struct tcp_hello hello;
};
void tcp_hello_make(struct tcp_hello_frame *f, const uint8_t nonce[TCP_NONCE_BYTES], int rank,
                    int size);

/* Who proves: the side that connected, or the side that accepted. */
enum tcp_role { TCP_ROLE_CONNECTOR = 1, TCP_ROLE_ACCEPTOR = 2 };

/*
 * The proof of `role` on the connection between connector rank rc (nonce nc) and
 * acceptor rank ra (nonce na): HMAC-SHA-256 under the secret of a label, the role, both
 * nonces and both ranks, written to mac.
 */
void tcp_auth_mac(const uint8_t secret[TCP_SECRET_BYTES], enum tcp_role role,
                  const uint8_t nc[TCP_NONCE_BYTES], const uint8_t na[TCP_NONCE_BYTES], int rc,
                  int ra, uint8_t mac[TCP_MAC_BYTES]);

/* An AUTH frame carrying mac. */
struct tcp_auth_frame {
    struct tcp_fhdr h;
    struct tcp_auth auth;
};
void tcp_auth_make(struct tcp_auth_frame *f, const uint8_t mac[TCP_MAC_BYTES]);

/* Check an AUTH payload of `len` bytes against the expected mac (in constant time).
 * Returns 0 or a TCP_FE_* error. */
int tcp_auth_check(const void *payload, size_t len, const uint8_t want[TCP_MAC_BYTES]);

/* Parse a secret written as 2*TCP_SECRET_BYTES hex digits. Returns 0 or -1. */
int tcp_secret_parse(const char *hex, uint8_t out[TCP_SECRET_BYTES]);

/* Write a secret as hex into out (at least 2*TCP_SECRET_BYTES+1 bytes). */
void tcp_secret_format(const uint8_t secret[TCP_SECRET_BYTES], char *out);

#endif

/*
 * conv_common.h - helpers of the conversation tests: message payloads that carry their
 * sender and sequence number and a length-dependent pattern, so a receiver can check
 * every byte and say exactly which message it got.
 */
#ifndef TERN_TESTS_MP_CONV_COMMON_H
#define TERN_TESTS_MP_CONV_COMMON_H

#include "mp_check.h"

/* Message header (first 16 bytes of every test message). */
struct conv_msg_hdr {
    int32_t sender;
    int32_t seq;
    uint32_t len;  /* whole message */
    uint32_t kind; /* 0 data, 1 stop */
};

#define CONV_T_DATA 0
#define CONV_T_STOP 1

/* Length of message seq of sender: mostly small, some larger than a shm cell, a few
 * larger than a small tcp frame, so chunking is exercised. */
static inline size_t conv_t_len(int sender, int seq)
{
    uint64_t x = mp_seed((uint64_t)sender, (uint64_t)seq, 77, 0);
    if (seq % 37 == 5) return 70000 + (size_t)(x % 20000);
    if (seq % 11 == 3) return 5000 + (size_t)(x % 4000);
    return sizeof(struct conv_msg_hdr) + (size_t)(x % 200);
}

static inline uint64_t conv_t_seed(int sender, int seq)
{
    return mp_seed((uint64_t)sender, (uint64_t)seq, 991, 3);
}

static inline void conv_t_fill(unsigned char *buf, int sender, int seq, uint32_t kind, size_t len)
{
    struct conv_msg_hdr h = {sender, seq, (uint32_t)len, kind};
    memcpy(buf, &h, sizeof h);
    mp_fill(buf + sizeof h, len - sizeof h, conv_t_seed(sender, seq));
}

/* Check a received message byte for byte; returns its header. */
static inline struct conv_msg_hdr conv_t_check(const unsigned char *buf, size_t len)
{
    struct conv_msg_hdr h;
    CHECKF(len >= sizeof h, "message of %zu bytes is shorter than a header", len);
    memcpy(&h, buf, sizeof h);
    CHECKF(h.len == len, "message from %d seq %d: %zu bytes arrived, header says %u", h.sender,
           h.seq, len, h.len);
    if (h.kind == CONV_T_DATA)
        CHECKF(len == conv_t_len(h.sender, h.seq), "message from %d seq %d has %zu bytes, not %zu",
               h.sender, h.seq, len, conv_t_len(h.sender, h.seq));
    CHECK_PATTERN(buf + sizeof h, len - sizeof h, conv_t_seed(h.sender, h.seq),
                  "message from %d seq %d", h.sender, h.seq);
    return h;
}

/* Send message seq (kind) of `sender` on conv. */
static inline void conv_t_send(tern_conv_t c, int sender, int seq, uint32_t kind)
{
    size_t len = kind == CONV_T_DATA ? conv_t_len(sender, seq) : sizeof(struct conv_msg_hdr) + 8;
    unsigned char *buf = mp_malloc(len);
    conv_t_fill(buf, sender, seq, kind, len);
    CHECK_OK(tern_conv_send(c, buf, len));
    free(buf);
}

/* tern_conv_trysend of message seq: returns TERN_OK or TERN_ERR_AGAIN (anything else fails). */
static inline int conv_t_trysend(tern_conv_t c, int sender, int seq, uint32_t kind)
{
    size_t len = kind == CONV_T_DATA ? conv_t_len(sender, seq) : sizeof(struct conv_msg_hdr) + 8;
    unsigned char *buf = mp_malloc(len);
    conv_t_fill(buf, sender, seq, kind, len);
    int rc = tern_conv_trysend(c, buf, len);
    if (rc != TERN_ERR_AGAIN) CHECK_OK(rc);
    free(buf);
    return rc;
}

#define CONV_T_CAP 100000

#endif

/*
 * ctl.h - the control channel between the root ternrun and a proxy (ternrun --proxy)
 * on another host: a byte stream carried by the launch agent's stdin and stdout
 * (ssh, ip netns exec, ...), cut into length-prefixed frames.
 *
 * A frame is a 16-byte header (payload length, type, two int arguments; host byte
 * order: tern does not mix byte orders, see "Out of scope" in docs/ARCHITECTURE.md) and
 * the payload. Payloads that carry lists (argv, environment, key-value pairs) are NUL-separated strings, so no
 * value needs escaping. Both ends queue what they send and never block on the
 * other: the root serves many proxies, and a proxy must keep serving PMI to its
 * ranks while the root is busy.
 *
 *   root -> proxy                          proxy -> root
 *   SETUP  "key=value" strings             STARTED     arg=rank, arg2=pid
 *   ENV    "NAME=value" strings            OUT         arg=1|2 (stdout|stderr), bytes
 *   ARGV   the program and its arguments   BARRIER_IN  the host's puts since the last
 *   KVS    key, value, ... (first entries)             barrier: key, value, ...
 *   START  start the ranks                 FINALIZED   arg=rank
 *   BARRIER_OUT  new entries; release      EXIT        arg=rank, arg2=wait status
 *   SIGNAL arg=signal for every rank       FAIL        arg=exit code, the one line
 *   REPORT_REQ  hang report wanted         REPORT      arg=rank, its report block;
 *                                                      arg=-1 after the host's last
 *   PEER_FAILED arg=rank died, the job     TOLERANT    arg=rank handles peer failures
 *               goes on                    DIED        arg=rank, arg2=code, its line
 *
 * The root closing the channel (or dying) means: kill every rank now and exit.
 */
#ifndef TERNRUN_CTL_H
#define TERNRUN_CTL_H

#include <stddef.h>
#include <stdint.h>

#define RUN_CTL_MAX_PAYLOAD (16u << 20)

enum run_ctl_type {
    RUN_CTL_SETUP = 1,
    RUN_CTL_ENV,
    RUN_CTL_ARGV,
    RUN_CTL_KVS,
    RUN_CTL_START,
    RUN_CTL_BARRIER_OUT,
    RUN_CTL_SIGNAL,
    RUN_CTL_REPORT_REQ,  /* ask every rank for the hang report */
    RUN_CTL_PEER_FAILED, /* arg=rank died and the job goes on: tell tolerant ranks */
    RUN_CTL_STARTED = 32,
    RUN_CTL_OUT,
    RUN_CTL_BARRIER_IN,
    RUN_CTL_FINALIZED,
    RUN_CTL_EXIT,
    RUN_CTL_FAIL,
    RUN_CTL_REPORT,   /* arg=rank: its block of the hang report; arg=-1: all sent */
    RUN_CTL_TOLERANT, /* arg=rank said tern_tolerate */
    RUN_CTL_DIED,     /* arg=rank died (arg2=exit code, payload its line): root judges */
};

struct run_ctl_hdr {
    uint32_t len; /* payload bytes */
    uint16_t type;
    uint16_t zero;
    int32_t arg;
    int32_t arg2;
};

/* Incoming frames, buffered until whole. */
struct run_ctl_reader {
    char *buf;
    size_t len, cap, skip;
    char *frame; /* the payload handed out by run_ctl_next, NUL-terminated */
    size_t frame_cap;
};

/* Outgoing bytes not yet written; `fd` is non-blocking. */
struct run_ctl_queue {
    int fd;
    char *buf;
    size_t len, off, cap;
    int broken; /* a write failed: the other end is gone */
};

/*
 * Read what is available. Returns >0 bytes read, 0 at end of stream, -1 on error
 * (errno; EAGAIN when nothing is ready).
 */
long run_ctl_fill(struct run_ctl_reader *r, int fd);

/*
 * Take the next whole frame: 1 with *h and *payload (valid until the next call; the
 * payload is followed by a NUL byte), 0 if more bytes are needed, -1 if the header
 * is malformed (unknown layout or a payload over RUN_CTL_MAX_PAYLOAD).
 */
int run_ctl_next(struct run_ctl_reader *r, struct run_ctl_hdr *h, char **payload);

void run_ctl_reader_free(struct run_ctl_reader *r);

/* Queue a frame and write what the fd takes now. Returns 0, or -1 if broken. */
int run_ctl_send(struct run_ctl_queue *q, int type, int arg, int arg2, const void *payload,
                 size_t len);

/* Write queued bytes. Returns 1 if some remain, 0 if empty, -1 if broken. */
int run_ctl_flush(struct run_ctl_queue *q);

/* Write queued bytes, waiting for the fd as long as needed (at exit). */
void run_ctl_flush_blocking(struct run_ctl_queue *q, int timeout_ms);

void run_ctl_queue_free(struct run_ctl_queue *q);

/*
 * Walk NUL-separated strings of a payload: returns the string at *pos and advances
 * it, or NULL at the end. A payload is always NUL-terminated by the reader, so the
 * last string is too.
 */
const char *run_ctl_str(const char *payload, size_t len, size_t *pos);

#endif

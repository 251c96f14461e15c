/*
 * transport.h - the interface every transport implements: a small table of
 * operations that move opaque frames between this process and one peer. Transports
 * know nothing of tags, communicators or requests; the core decides protocols from the
 * limits a transport reports. This header includes nothing from core/.
 *
 * A new transport is one folder under src/transport/ and one line in transport.c.
 */
#ifndef TERN_TRANSPORT_H
#define TERN_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct boot;

/* Up-call: a frame of `len` bytes arrived from world rank `src`. The bytes are valid
 * only during the call; the core copies what it keeps. The core may call tl send ops
 * from inside this call, but never poll. */
typedef void (*tl_recv_fn)(int src, const void *frame, size_t len);

/* Up-call: world rank `rank` can no longer be reached (its connection closed or broke).
 * Called from poll() only, never from inside send(); the transport's send() to that
 * rank returns TERN_ERR_PEER_FAILED from then on. */
typedef void (*tl_failed_fn)(int rank);

/* What the transport was given when opened. */
struct tl_env {
    struct boot *boot;
    tl_recv_fn recv;
    tl_failed_fn failed;
};

struct tl_limits {
    size_t max_frame;  /* largest frame send() accepts, header included */
    size_t max_inline; /* frames up to this size take the fastest path (e.g. one cache line) */
    size_t eager_max;  /* payload size up to which the core should send eagerly */
    int has_get;       /* get() can pull from a peer's memory (single copy) */
};

struct tl_ops {
    size_t size; /* sizeof(struct tl_ops) the transport was built with */
    const char *name;

    /* Can this transport reach world rank `rank`? Decided once per peer at init. */
    int (*reaches)(const struct boot *boot, int rank);

    /* Create local resources for the peers in `peers[0..n-1]` and publish what they
     * need (business card) with boot_put. Called before the first boot fence. */
    int (*open)(const struct tl_env *env, const int *peers, int n);

    /* Attach to the peers' resources (after the first fence). */
    int (*connect)(void);

    /* Every peer attached (after the second fence): drop names, e.g. unlink segments. */
    int (*ready)(void);

    /* Send one whole frame gathered from iov (total bytes <= max_frame).
     * Returns 0, TERN_ERR_AGAIN if there is no room now (nothing was sent), or an error. */
    int (*send)(int dest, const struct iovec *iov, int iovcnt, size_t total);

    /* Deliver arrived frames through env->recv. Returns how many, or a negative error. */
    int (*poll)(void);

    /* Single-copy pull of len bytes at `remote` in process `src` into `local`.
     * TERN_ERR_UNSUPPORTED if not possible (the core then falls back to streaming). */
    int (*get)(int src, void *local, uint64_t remote, size_t len);

    /* Doorbell: announce that this process is about to sleep (senders will ring it). */
    void (*sleep_begin)(void);
    /* Sleep until rung or timeout_ms elapsed. */
    void (*sleep_wait)(int timeout_ms);
    /* No longer sleeping. */
    void (*sleep_end)(void);

    /* Nonzero while frames that send() accepted are not yet wholly handed to the system
     * (e.g. the unsent tail of a partial socket write); the core keeps progressing
     * before finalize's barrier until it is 0. */
    int (*busy)(void);

    /* Liveness check: report every peer found dead through env->failed. The core calls
     * it while it waits, at most every TERN_FAILURE_CHECK_MS; transports that learn of
     * deaths by themselves (a closed connection) use tl_stub_noop. */
    int (*health)(void);

    /* Report limits. */
    void (*limits)(struct tl_limits *out);

    /* Release everything. */
    void (*close)(void);

    /* Called by another thread of this process: make a sleep_wait under way (or the next
     * one) return now. The core uses it when threads share the library (one thread sleeps
     * on the doorbells while another completes what it waits for). */
    void (*wake_self)(void);
};

/* Shared stubs for operations a transport does not support (never leave a slot NULL). */
int tl_stub_get(int src, void *local, uint64_t remote, size_t len);
void tl_stub_sleep_begin(void);
void tl_stub_sleep_wait(int timeout_ms);
void tl_stub_sleep_end(void);
void tl_stub_wake_self(void);
int tl_stub_noop(void);

/* Registry, in order of preference. */
extern const struct tl_ops tl_self_ops;
extern const struct tl_ops tl_shm_ops;
extern const struct tl_ops tl_tcp_ops;

/* All transports known to this build, NULL-terminated. */
extern const struct tl_ops *const tl_registry[];

/* Copy an iovec list into dst. */
void tl_iov_copy(void *dst, const struct iovec *iov, int iovcnt);

#endif

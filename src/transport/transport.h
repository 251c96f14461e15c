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
#include <stdio.h>
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

/* Up-call (optional, for transports that read a byte stream): the first `hlen` bytes
 * (`head`, hlen = min(len, env->place_head)) of a frame of `len` bytes from `src` are in,
 * the rest not yet. Return the number n >= 1 of pieces *iov[0..n-1] (the caller's
 * memory: a receive buffer, or the blocks of a non-contiguous one) where bytes
 * [hlen, len) of that frame are to be written in order, or 0 to get the whole frame
 * through recv() as usual. The array belongs to the core and stays valid until placed()
 * or failed(); the transport may advance its entries as it fills them. After a nonzero
 * answer the transport writes those bytes there directly (no copy through its own
 * buffer) and calls placed() with the same arguments once they are all in, or
 * failed(src) if the connection breaks first. The head is opaque to the transport. */
typedef int (*tl_place_fn)(int src, const void *head, size_t hlen, size_t len, struct iovec **iov);
typedef void (*tl_placed_fn)(int src, const void *head, size_t hlen, size_t len);

/* Up-call: a frame that send_ref() accepted with `cookie` is now wholly handed to the
 * system; the payload it referenced may be reused. err is 0, or TERN_ERR_FAULT if part of
 * that payload could not be read (zeros went in its place). Called from poll() only. */
typedef void (*tl_sent_fn)(void *cookie, int err);

/* What the transport was given when opened. */
struct tl_env {
    struct boot *boot;
    tl_recv_fn recv;
    tl_failed_fn failed;
    tl_place_fn place;   /* may be NULL */
    tl_placed_fn placed; /* set when place is */
    size_t place_head;   /* bytes of a frame's head place() needs to decide (<= 64) */
    tl_sent_fn sent;
};

/* Pieces of one frame every transport's send() takes (a header plus a datatype's blocks). */
#define TL_MAX_IOV 64
/* Pieces of each side of one getv() call (the kernel's IOV_MAX). */
#define TL_GETV_MAX_IOV 1024

/* What a transport can do, reported in tl_limits.caps (one bit each). The core copies
 * them per peer and answers the layers above with predicates (core_peer_caps() and
 * friends in core.h, whose CORE_CAP_* bits have the same values): nothing outside
 * src/transport and src/core asks which transport reaches a peer, only what it can do. */
/* wake() rings a sleeping peer's doorbell. */
#define TL_CAP_WAKE 0x01u
/* The peer's memory can be mapped here (it shares this node's memory: shared segments),
 * so loads and stores reach it. */
#define TL_CAP_MAP 0x02u
/* send_ref() can keep pointing at a payload. */
#define TL_CAP_SEND_REF 0x04u
/* sleep_wait() sleeps on a kernel object that every event able to advance this
 * transport wakes (tcp: its epoll set: arrivals, room to send). A process waiting on
 * such transports alone sleeps after a short spin (TERN_TCP_SPIN_COUNT) rather than
 * spinning and yielding: on a loaded machine a sleeper is woken at once, a spinner waits
 * for its next time slice. */
#define TL_CAP_KERNEL_WAIT 0x08u
/* get()/getv() pull from the peer's memory (single copy). */
#define TL_CAP_GET 0x10u
/* One-sided put into the peer's memory: no transport has a put() operation yet, so none
 * reports it. */
#define TL_CAP_PUT 0x20u
/* CPU atomics on the peer's mapped memory are atomic with the peer's own (coherent
 * shared memory; only with TL_CAP_MAP). */
#define TL_CAP_ATOMIC 0x40u

struct tl_limits {
    size_t max_frame;  /* largest frame send() accepts, header included */
    size_t max_inline; /* frames up to this size take the fastest path (e.g. one cache line) */
    size_t eager_max;  /* payload size up to which the core should send eagerly */
    size_t stream_max; /* ... and while a rendezvous to the same peer is still in flight (a
                          stream: both sides copying beats the receiver copying alone);
                          0: eager_max */
    size_t adapt_min;  /* payloads above this and up to adapt_max go eagerly or by get() as */
    size_t adapt_max;  /* the receiver's timings of both advise (core/adapt.h); 0: never */
    size_t rv_min;     /* rendezvous payloads above this are pulled (get()) or streamed as the
                          receiver's timings of both advise (core/adapt.h); 0: always get() */
    size_t nt_max;     /* adaptive payloads up to this may be sent with send_nt() as the
                          receiver's timings advise; 0: never */
    size_t posted_max; /* no get(): payloads up to this may go eagerly, one at a time, to a
                          receiver whose receives are posted when they arrive (it says so);
                          0: eager_max */
    unsigned caps;     /* TL_CAP_* */
};

struct tl_ops {
    size_t size; /* sizeof(struct tl_ops) the transport was built with */
    const char *name;
    /* Nonzero: used for every peer it reaches whatever TERN_TRANSPORTS lists, because it
     * needs nothing configured (self). */
    int implicit;

    /* Can this transport reach world rank `rank`? Decided once per peer at init. */
    int (*reaches)(const struct boot *boot, int rank);

    /* Create local resources for the peers in `peers[0..n-1]` and publish what they
     * need (business card) with boot_put. Called before the first boot fence. */
    int (*open)(const struct tl_env *env, const int *peers, int n);

    /* Attach to the peers' resources (after the first fence). */
    int (*connect)(void);

    /* Every peer attached (after the second fence): drop names, e.g. unlink segments. */
    int (*ready)(void);

    /* Send one whole frame gathered from iov (total bytes <= max_frame, at most
     * TL_MAX_IOV pieces).
     * Returns 0, TERN_ERR_AGAIN if there is no room now (nothing was sent), or an error.
     * TERN_ERR_FAULT: part of the frame could not be read (a bad user buffer); the frame
     * went out whole with zeros in place of those bytes, so the stream is intact and only
     * the send that owns the frame fails. */
    int (*send)(int dest, const struct iovec *iov, int iovcnt, size_t total);

    /* Like send(), but the payload is written around the caches (non-temporal stores),
     * for a receiver on another core whose cache the lines would otherwise have to leave
     * first. Optional: NULL where a transport has no such copy (the core then uses
     * send()). */
    int (*send_nt)(int dest, const struct iovec *iov, int iovcnt, size_t total);

    /* Like send(), but the last iov entry (the payload) is not copied if the system takes
     * only part of the frame: the transport keeps pointing at it and reports `cookie`
     * through env->sent once the frame is wholly out. Returns 0 (all out now, no
     * up-call), 1 (accepted, sent(cookie) follows), TERN_ERR_AGAIN or an error.
     * tl_stub_send_ref answers TERN_ERR_UNSUPPORTED: the core then uses send(). */
    int (*send_ref)(int dest, const struct iovec *iov, int iovcnt, size_t total, void *cookie);

    /* The payload a send_ref() to dest still points at must no longer be used after this
     * call (its send was abandoned or its peer failed): copy what is unsent and forget
     * the cookie (no sent() up-call for it). */
    void (*unref)(int dest);

    /* The destination place() gave for the frame now arriving from src must no longer
     * be written: read the rest of that frame into scratch memory (placed() still
     * follows). */
    void (*place_abort)(int src);

    /* Deliver arrived frames through env->recv. Returns how many, or a negative error. */
    int (*poll)(void);

    /* Single-copy pull of len bytes at `remote` in process `src` into `local`.
     * TERN_ERR_UNSUPPORTED if not possible (the core then falls back to streaming);
     * TERN_ERR_FAULT if the sender's memory could not be read (its buffer is bad). */
    int (*get)(int src, void *local, uint64_t remote, size_t len);

    /* Vectored single-copy pull: the `total` bytes of process src's pieces remote[0..nr)
     * land, in order, in my pieces local[0..nl) (both sides add up to total; at most
     * TL_GETV_MAX_IOV pieces each). A non-contiguous message moves from the sender's
     * blocks to the receiver's with no temporary. TERN_ERR_UNSUPPORTED as for get(). */
    int (*getv)(int src, const struct iovec *local, int nl, const struct iovec *remote, int nr,
                size_t total);

    /* Doorbell: announce that this process is about to sleep (senders will ring it). */
    void (*sleep_begin)(void);
    /* Sleep until rung or timeout_ms elapsed. */
    void (*sleep_wait)(int timeout_ms);
    /* No longer sleeping. */
    void (*sleep_end)(void);

    /* Ring world rank `rank`'s doorbell if it sleeps: for a layer that published something
     * to it outside of frames (the collectives' shared region). No-op where a frame is
     * the only way to wake a peer. */
    void (*wake)(int rank);

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
int tl_stub_getv(int src, const struct iovec *local, int nl, const struct iovec *remote, int nr,
                 size_t total);
int tl_stub_send_ref(int dest, const struct iovec *iov, int iovcnt, size_t total, void *cookie);
void tl_stub_unref(int rank); /* also for place_abort */
void tl_stub_sleep_begin(void);
void tl_stub_sleep_wait(int timeout_ms);
void tl_stub_sleep_end(void);
void tl_stub_wake_self(void);
int tl_stub_noop(void);
void tl_stub_wake(int rank);

/* Registry, in order of preference. */
extern const struct tl_ops tl_self_ops;
extern const struct tl_ops tl_shm_ops;
extern const struct tl_ops tl_tcp_ops;
#ifdef TERN_HAVE_OFI
extern const struct tl_ops tl_ofi_ops; /* built only with libfabric (TERN_HAVE_OFI) */
#define TL_OFI_ENTRY &tl_ofi_ops,
#else
#define TL_OFI_ENTRY
#endif

/* Print what ternrun --info says of the fabric: the libfabric providers found and the
 * one the ofi transport would choose (loads libfabric; "not built" without it). */
void tl_fabric_info(FILE *out);

/* All transports known to this build, NULL-terminated. */
extern const struct tl_ops *const tl_registry[];

/* Copy an iovec list into dst. */
void tl_iov_copy(void *dst, const struct iovec *iov, int iovcnt);
/* Copy between two iovec lists of this process (total bytes, in order). */
void tl_iov_move(const struct iovec *dst, int nd, const struct iovec *src, int ns, size_t total);

#endif

/*
 * tcp.c - the TCP transport: peers on other nodes (and, with TERN_TRANSPORTS=tcp, on
 * this one).
 *
 * Connections. Every process listens on one socket per usable address (never the
 * wildcard address) and publishes them, best first, as tern-tcp-<rank> =
 * "ip/prefix:port[,ip/prefix:port...]". Usable: loopback alone when the whole job is on
 * one node; else the interfaces TERN_TCP_IF lists; else every IPv4 interface that is up
 * and not loopback, running ones first and virtual bridges (docker0, virbr0, br-*,
 * veth*, ...) last. After the first boot fence each process connects to every tcp peer
 * of LOWER rank and accepts the ones of higher rank, so each pair has exactly one
 * connection, made at startup. Of the peer's addresses it dials first one on the subnet
 * of one of its own real interfaces, then one the kernel routes through a real
 * interface (asked with connect() on a UDP socket), then one reached only through a
 * virtual bridge; an address that is one of its own (docker0's 172.17.0.1 sits on
 * every host) only for a peer on its node, and an unroutable one never. A failed dial
 * moves on to the next address. connect() returns once every connection has completed
 * its handshake both ways. A connection whose two ends are on this host runs reno, not
 * the system's congestion control (TERN_TCP_CC, see tcp_set_cc).
 *
 * Admission. Each side proves it knows the job secret without sending it: HELLOs carry
 * the ranks and fresh nonces, then AUTHs carry HMAC-SHA-256 proofs over both, the
 * connecting side's first (tcp_frame.h). The secret is 128 random bits that the launcher
 * puts in the key-value store as tern-secret (ternrun does); under a launcher that does
 * not, rank 0 makes one and publishes it before the first fence and the others read it
 * after. A connection that sends anything else, claims a rank that is not expected to
 * connect (lower, not a tcp peer, already connected, or failed: a dead rank is never
 * admitted again), fails the proof, or has not completed the handshake within
 * TERN_TCP_HANDSHAKE_TIMEOUT is closed and logged (at most TCP_REFUSE_BURST lines per
 * TCP_REFUSE_WINDOW_MS, then a count); nothing else changes (the listener stays open for
 * the whole job). A malformed frame on an admitted connection closes it and marks that
 * peer failed.
 *
 * Framing. Each core frame goes out as an 8-byte header plus the core's iovec in one
 * sendmsg (writev with MSG_NOSIGNAL), straight from the caller's memory. send() accepts
 * a whole frame or nothing: if the socket takes only part of it, the unsent tail is
 * copied to the connection's send buffer and the frame counts as sent; send_ref()
 * copies only the header part of the tail and keeps pointing at the payload until the
 * tail is out, then owes the core a sent() up-call (made from poll). The next send to
 * that peer returns TERN_ERR_AGAIN until the tail is gone (the core queues meanwhile).
 * Tails are flushed by poll() when epoll reports the socket writable.
 *
 * Receiving. Sockets are non-blocking and driven by one level-triggered epoll set. Each
 * connection reads into its own buffer of one maximal frame: small frames in batches
 * (up to 64 KiB per recv), and once the header of a large frame is in, exactly the rest
 * of that frame, so large frames are never moved inside the buffer. Complete frames go
 * to the core's recv up-call straight from that buffer. A frame of TCP_PLACE_MIN bytes
 * or more whose end is not in yet is offered to the core's place() up-call as soon as
 * its head (env->place_head bytes, opaque here) is in; if the core names a destination
 * (a posted user buffer), the payload bytes already read are moved there and the rest
 * is read straight into it with recv(), and placed() follows. After a large frame the
 * next read takes one head alone, so back-to-back large frames (a rendezvous stream)
 * are read with no copy at all; small frames keep the batched reads.
 *
 * Sleeping. sleep_wait() is epoll_wait on the same set, so a blocked process sleeps
 * in the kernel and wakes when a frame (or a new connection) arrives or a send tail
 * can move. With TERN_TCP_LOWAT set (default off), while a placed frame streams in, a
 * sleep raises that socket's SO_RCVLOWAT to it (at most the frame's rest), so the sleeper
 * wakes once per that many bytes, not per segment; the mark is back at 1 byte when the
 * sleep ends.
 *
 * Failure. EOF, ECONNRESET or any other socket error on an admitted connection marks
 * the peer failed through the env's failed() up-call (from poll(), never inside send()).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <limits.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "tern.h"
#include "transport/tcp/tcp_addr.h"
#include "transport/tcp/tcp_frame.h"
#include "transport/transport.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/tunables.h"

#define TCP_READ_BATCH         ((size_t)64 << 10) /* bytes per recv when frames are small */
#define TCP_MAX_STRANGERS      64                 /* connections still in their handshake */
#define TCP_CONNECT_TIMEOUT_MS 60000
#define TCP_MAX_IOV            (TL_MAX_IOV + 3)     /* + the frame header and a PAD's two */
#define TCP_PLACE_MIN          ((size_t)32 << 10)   /* frames worth reading in place */
#define TCP_HEAD_MAX           64                   /* bytes of head place() may want */
#define TCP_MAX_LISTEN         8                    /* addresses published per process */
#define TCP_STASH              32                   /* events one epoll_wait takes */
#define TCP_RBUF_MIN           (2 * TCP_READ_BATCH) /* receive buffer of a connection */
#define TCP_ACCEPT_BACKOFF_MS  100 /* listeners unwatched after accept() ran out of fds */
#define TCP_REFUSE_BURST       20  /* refusals logged per window, then only counted */
#define TCP_REFUSE_WINDOW_MS   10000

struct tcp_conn {
    int fd;
    int rank;         /* peer's world rank: known at once for outgoing, after HELLO otherwise */
    int outgoing;     /* I connected, so I sent the first HELLO */
    int authed;       /* the handshake is complete: the peer proved it knows the secret */
    int hs;           /* handshake step: 0 no HELLO from the peer yet, 1 its HELLO is in */
    int claim;        /* accepted connection: the rank its HELLO claims */
    long deadline_ms; /* accepted connection: closed if not admitted by then */
    uint8_t nonce[TCP_NONCE_BYTES], their_nonce[TCP_NONCE_BYTES];
    int dead;     /* closed; freed by tcp_reap() */
    int reported; /* failed() up-call made */
    uint32_t events;
    char who[64]; /* address, for messages */
    /* receive buffer: frames from their first byte */
    unsigned char *rbuf;
    size_t rcap, rlen;
    /* the unsent tail of the last accepted frame: copied bytes, then referenced ones */
    unsigned char *sbuf;
    size_t scap, soff, slen;
    const unsigned char *ref; /* send_ref(): the unsent part of the caller's payload */
    size_t reflen;
    void *cookie; /* sent() owed once the tail is gone */
    int fault;    /* the referenced payload could not be read: sent() says TERN_ERR_FAULT */
    /* a frame being read in place (place() gave the pieces dst[0..dn), filled in order;
     * dst advances past full pieces and the current one's start moves as it fills) */
    struct iovec *dst;
    int dn;
    size_t dst_len, dst_got; /* payload bytes after the head: wanted, arrived */
    int discard;             /* place_abort(): read the rest into rbuf instead */
    unsigned char head[TCP_HEAD_MAX];
    size_t hlen, flen;
    int asked; /* place() was asked about the frame at rbuf[0] */
    int exact; /* the last frame was large: read the next head alone (it may be placed) */
    int lowat; /* SO_RCVLOWAT in force (0: the default, 1 byte) */
    /* coalescing (TERN_TCP_CORK): bytes went out with MSG_MORE and wait in the kernel for
     * tcp_push(); txgen is tcp.npolls + 1 when a frame went out since the last poll */
    int corked;
    unsigned long txgen;
    struct tcp_conn *next; /* all connections */
};

static struct {
    tl_recv_fn recv;
    tl_failed_fn failed;
    tl_place_fn place;
    tl_placed_fn placed;
    tl_sent_fn sent;
    size_t place_head;
    int nowed; /* connections owing a sent() up-call with their tail gone */
    struct epoll_event stash[TCP_STASH]; /* events sleep_wait() got, for the next poll */
    int nstash;
    int sleeping;         /* between sleep_begin and sleep_end: a thread may be in epoll_wait */
    unsigned long npolls; /* polls so far (a sleeper's events are stale after one) */
    int ncorked;          /* connections with corked bytes (TERN_TCP_CORK) */
    unsigned long n_push; /* pushes of corked bytes, reported at TERN_DEBUG=1 */
    unsigned long n_pad;  /* PAD frames sent (tcp_pad_for), reported at TERN_DEBUG=1 */
    /* what the copy-avoidance achieved, reported at TERN_DEBUG=1 when the job ends */
    unsigned long n_placed, n_buffered, n_ref, n_tail;
    unsigned long long b_placed, b_precopy, b_buffered, b_ref, b_tail;
    struct boot *boot;
    int rank, size;
    int epfd;
    int lfd[TCP_MAX_LISTEN]; /* one listener per address published */
    int nlfd;
    int spare_fd;            /* kept open to be given up for accept-and-close (EMFILE) */
    long accept_resume_ms;   /* listeners unwatched until then (no spare), else 0 */
    unsigned long n_dropped; /* connections dropped for want of a descriptor */
    int starved_logged;      /* that was said once */
    struct tcp_cand *mine;   /* my listening addresses, best first */
    int nmine;
    char *is_peer;          /* by world rank: served by this transport */
    struct tcp_conn **peer; /* by world rank: the connection, or NULL */
    int npeers, nauthed, nstrangers, nbusy;
    int reap; /* some connection is dead and waits to be freed */
    struct tcp_conn *conns;
    uint8_t secret[TCP_SECRET_BYTES];
    int have_secret;
    long rl_start;                    /* refusal log: start of the window */
    unsigned long rl_count, rl_quiet; /* refusals in the window, of them not logged */
    size_t max_len;                   /* largest MSG payload (a core frame) */
} tcp;

/* Thread wake-ups (wake_self in transport.h): an eventfd in the epoll set, told apart from
 * connections by its data pointer. poll() skips it; only the sleeper drains it, after
 * its epoll_wait returns, so a wake-up is never eaten by another thread's poll. */
static int tcp_wakefd = -1;
static char tcp_wake_tag;

static int tcp_reaches(const struct boot *boot, int rank)
{
    return rank != boot->rank;
}

/* ---- connections ----------------------------------------------------------- */

static void tcp_sockopts(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (util_tun.tcp_sndbuf) {
        int v = util_tun.tcp_sndbuf > (1u << 30) ? 1 << 30 : (int)util_tun.tcp_sndbuf;
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
    }
    if (util_tun.tcp_rcvbuf) {
        int v = util_tun.tcp_rcvbuf > (1u << 30) ? 1 << 30 : (int)util_tun.tcp_rcvbuf;
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
    }
}

/* Is the other end of connected socket fd on this host (loopback, or my own address)? */
static int tcp_same_host(int fd)
{
    struct sockaddr_in me, peer;
    socklen_t ml = sizeof me, pl = sizeof peer;
    if (getsockname(fd, (struct sockaddr *)&me, &ml) != 0 ||
        getpeername(fd, (struct sockaddr *)&peer, &pl) != 0 || me.sin_family != AF_INET ||
        peer.sin_family != AF_INET)
        return 0;
    return (ntohl(peer.sin_addr.s_addr) >> 24) == 127 || peer.sin_addr.s_addr == me.sin_addr.s_addr;
}

/*
 * The congestion control of a connected socket (TERN_TCP_CC). Inside one host there is
 * no network to be fair to and nothing is lost, but a congestion control still limits
 * the bytes in flight and may pace them: bbr (a common system default) estimates the
 * path's bandwidth from what a ping-pong lets it see, paces to that and keeps its window
 * near 3 MiB on loopback, so every message over a few MiB waits for ACKs and runs at
 * about 2 GB/s. reno (built into every kernel and always allowed without privileges)
 * neither paces nor caps the window when nothing is lost. Across hosts the system's
 * choice is kept. A refusal (a name the kernel lacks or does not allow) is said once.
 */
static void tcp_set_cc(int fd)
{
    const char *want = util_tun.tcp_cc ? util_tun.tcp_cc : "";
    if (want[0] == '\0') return;
    if (strcmp(want, "auto") == 0) {
        if (!tcp_same_host(fd)) return;
        want = "reno";
    }
    char cur[32] = "";
    socklen_t cl = sizeof cur;
    if (getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, cur, &cl) == 0 &&
        strncmp(cur, want, sizeof cur) == 0)
        return;
    if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, want, (socklen_t)strlen(want)) != 0) {
        static int said;
        if (!said++)
            UTIL_ERROR("tcp: cannot use congestion control '%s' (TERN_TCP_CC): %s; keeping '%s'",
                       want, strerror(errno), cur[0] ? cur : "the default");
        return;
    }
    UTIL_DEBUG(1, "tcp: congestion control %s instead of %s (TERN_TCP_CC=%s)", want,
               cur[0] ? cur : "?", util_tun.tcp_cc);
}

static int tcp_epoll_set(struct tcp_conn *c, uint32_t events)
{
    if (c->events == events) return 0;
    struct epoll_event ev = {.events = events, .data.ptr = c};
    int rc = epoll_ctl(tcp.epfd, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev);
    if (rc == 0) c->events = events;
    return rc;
}

static long tcp_now_ms(void);

static struct tcp_conn *tcp_conn_new(int fd, int rank, int outgoing, const char *who)
{
    struct tcp_conn *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->fd = fd;
    c->rank = rank;
    c->outgoing = outgoing;
    /* Truncation of a long peer description is fine: it is only for messages. */
    size_t n = strlen(who);
    if (n >= sizeof c->who) n = sizeof c->who - 1;
    memcpy(c->who, who, n);
    c->who[n] = '\0';
    /* Until the handshake, room for one HELLO only: strangers cost little memory. */
    c->rcap = sizeof(struct tcp_hello_frame);
    c->rbuf = malloc(c->rcap);
    if (c->rbuf == NULL || tcp_epoll_set(c, EPOLLIN) != 0) {
        free(c->rbuf);
        free(c);
        return NULL;
    }
    if (getrandom(c->nonce, sizeof c->nonce, 0) != (ssize_t)sizeof c->nonce) {
        epoll_ctl(tcp.epfd, EPOLL_CTL_DEL, fd, NULL);
        free(c->rbuf);
        free(c);
        return NULL;
    }
    c->next = tcp.conns;
    tcp.conns = c;
    if (!outgoing) {
        long t = util_tun.tcp_handshake_timeout > 0 ? util_tun.tcp_handshake_timeout : 1;
        c->deadline_ms = tcp_now_ms() + t * 1000L;
        tcp.nstrangers++;
    }
    return c;
}

/* Close a connection now; the memory goes in tcp_reap(), outside every loop over it. */
static void tcp_conn_close(struct tcp_conn *c)
{
    if (c->dead) return;
    c->dead = 1;
    tcp.reap = 1;
    if (c->slen || c->reflen) tcp.nbusy--;
    if (c->cookie && !c->slen && !c->reflen) tcp.nowed--;
    if (c->corked) tcp.ncorked--;
    c->corked = 0;
    c->slen = c->reflen = 0;
    c->cookie = NULL; /* the core fails the request through the failed() up-call */
    c->dst = NULL;
    if (!c->authed && !c->outgoing) tcp.nstrangers--;
    close(c->fd); /* also leaves the epoll set */
    c->fd = -1;
    if (c->rank >= 0 && tcp.peer[c->rank] == c) {
        if (c->authed) tcp.nauthed--;
    }
}

/* An admitted connection (or one I made) broke: the peer is gone. */
static void tcp_conn_fail(struct tcp_conn *c, const char *why)
{
    if (c->dead) return;
    if (c->rank >= 0 && tcp.peer[c->rank] == c)
        UTIL_DEBUG(1, "tcp: connection to rank %d closed: %s", c->rank, why);
    tcp_conn_close(c);
}

/* Log a refusal, at most TCP_REFUSE_BURST per TCP_REFUSE_WINDOW_MS: a flood of strangers
 * must not flood the job's stderr. The rest are counted and the count is said later. */
static void tcp_refusal_log(const char *who, const char *why)
{
    long now = tcp_now_ms();
    if (tcp.rl_start == 0 || now - tcp.rl_start >= TCP_REFUSE_WINDOW_MS) {
        if (tcp.rl_quiet)
            UTIL_ERROR("tcp: %lu more refused connection(s) were not logged", tcp.rl_quiet);
        tcp.rl_start = now;
        tcp.rl_count = tcp.rl_quiet = 0;
    }
    if (tcp.rl_count++ < TCP_REFUSE_BURST)
        UTIL_ERROR("tcp: refused connection from %s: %s", who, why);
    else
        tcp.rl_quiet++;
}

/* Refuse a connection that has not completed its handshake, saying why. */
static void tcp_conn_refuse(struct tcp_conn *c, const char *why)
{
    tcp_refusal_log(c->who, why);
    tcp_conn_close(c);
}

/* Close accepted connections whose handshake has run out of time. */
static void tcp_strangers_expire(void)
{
    long now = tcp_now_ms();
    for (struct tcp_conn *c = tcp.conns; c; c = c->next)
        if (!c->dead && !c->authed && !c->outgoing && now >= c->deadline_ms)
            tcp_conn_refuse(c, "handshake not completed in time");
}

/* Free dead connections and report the peers they served. */
static void tcp_reap(void)
{
    if (!tcp.reap) return;
    tcp.reap = 0;
    struct tcp_conn **pp = &tcp.conns;
    while (*pp) {
        struct tcp_conn *c = *pp;
        if (!c->dead) {
            pp = &c->next;
            continue;
        }
        *pp = c->next;
        if (c->rank >= 0 && tcp.peer[c->rank] == c) {
            /* The slot stays non-NULL (a tombstone would be freed): mark it instead. */
            tcp.peer[c->rank] = NULL;
            tcp.is_peer[c->rank] = 2; /* failed */
            if (tcp.failed) tcp.failed(c->rank);
        }
        free(c->rbuf);
        free(c->sbuf);
        free(c);
    }
}

/* ---- sending --------------------------------------------------------------- */

static int tcp_tail_salvage(struct tcp_conn *c, const struct iovec *p, int pn);

/* Push the unsent tail as far as the socket takes it (the connection may die). When it
 * is gone and a sent() up-call is owed, it is made here if `upcall`, else by poll(). */
static void tcp_conn_flush(struct tcp_conn *c, int upcall)
{
    while (c->slen || c->reflen) {
        struct iovec v[2];
        int n = 0;
        if (c->slen) v[n++] = (struct iovec){c->sbuf + c->soff, c->slen};
        if (c->reflen) v[n++] = (struct iovec){(void *)c->ref, c->reflen};
        struct msghdr mh = {.msg_iov = v, .msg_iovlen = (size_t)n};
        ssize_t w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            if (errno == EFAULT && c->reflen && tcp_tail_salvage(c, NULL, 0) == 0) continue;
            tcp_conn_fail(c, strerror(errno));
            return;
        }
        size_t done = (size_t)w, k = done < c->slen ? done : c->slen;
        c->soff += k;
        c->slen -= k;
        done -= k;
        c->ref += done;
        c->reflen -= done;
    }
    tcp.nbusy--;
    tcp_epoll_set(c, EPOLLIN);
    if (c->cookie) {
        if (upcall) {
            void *ck = c->cookie;
            int err = c->fault ? TERN_ERR_FAULT : 0;
            c->cookie = NULL;
            c->fault = 0;
            tcp.sent(ck, err);
        } else {
            tcp.nowed++;
        }
    }
}

/* Make the sent() up-calls owed by connections whose tails went out inside send(). */
static void tcp_sent_owed(void)
{
    for (struct tcp_conn *c = tcp.conns; c && tcp.nowed; c = c->next) {
        if (c->dead || !c->cookie || c->slen || c->reflen) continue;
        void *ck = c->cookie;
        int err = c->fault ? TERN_ERR_FAULT : 0;
        c->cookie = NULL;
        c->fault = 0;
        tcp.nowed--;
        tcp.sent(ck, err);
    }
}

/* Hand the corked bytes of every connection to the wire (TCP_NODELAY pushes them). */
static void tcp_push(void)
{
    int one = 1;
    for (struct tcp_conn *c = tcp.conns; c && tcp.ncorked; c = c->next) {
        if (!c->corked) continue;
        c->corked = 0;
        tcp.ncorked--;
        tcp.n_push++;
        setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
}

/* Make sure sbuf holds at least `need` bytes from its start. */
static int tcp_sbuf_room(struct tcp_conn *c, size_t need)
{
    if (c->scap >= need) return 0;
    size_t cap = tcp.max_len + sizeof(struct tcp_fhdr);
    if (cap < need) cap = need;
    unsigned char *b = realloc(c->sbuf, cap);
    if (b == NULL) return -1;
    c->sbuf = b;
    c->scap = cap;
    return 0;
}

/*
 * A bad user buffer. sendmsg() fails with EFAULT, and nothing of the bytes it was given
 * in that call is in the stream (the kernel drops a partly filled chunk), but an earlier
 * call may have sent the frame's start. The frame is finished from the send buffer: its
 * unsent bytes (the pieces p[0..pn) when a frame is being written, else the referenced
 * tail) are copied with process_vm_readv on this process, which stops at the first
 * unreadable byte instead of crashing, and the rest are zeros. So the headers go out
 * intact, the stream stays in step, the peer is not blamed, and the send that owns the
 * frame fails with TERN_ERR_FAULT. Returns 0, or -1 if it cannot be repaired.
 */
static int tcp_tail_salvage(struct tcp_conn *c, const struct iovec *p, int pn)
{
    struct iovec ref = {(void *)c->ref, c->reflen};
    if (p) {
        c->slen = 0; /* a frame being written has no tail yet */
    } else {
        p = &ref;
        pn = 1;
    }
    size_t bytes = 0;
    for (int i = 0; i < pn; i++)
        bytes += p[i].iov_len;
    if (c->soff && c->slen) memmove(c->sbuf, c->sbuf + c->soff, c->slen); /* copied part first */
    c->soff = 0;
    if (tcp_sbuf_room(c, c->slen + bytes) != 0) return -1;
    struct iovec local = {c->sbuf + c->slen, bytes};
    ssize_t got;
    do
        got = process_vm_readv(getpid(), &local, 1, p, (unsigned long)pn, 0);
    while (got < 0 && errno == EINTR);
    if (got < 0 && errno != EFAULT) return -1; /* no safe copy here (seccomp?) */
    if (got < 0) got = 0;
    memset(c->sbuf + c->slen + got, 0, bytes - (size_t)got);
    c->slen += bytes;
    c->ref = NULL;
    c->reflen = 0;
    c->fault = 1;
    UTIL_DEBUG(1, "tcp: a send buffer to rank %d could not be read: %zu bytes sent as zeros",
               c->rank, bytes - (size_t)got);
    return 0;
}

/*
 * Write a whole frame gathered from v[0..n-1] (total bytes) or nothing. With a cookie,
 * the unsent part of v[n-1] is referenced, not copied, and sent(cookie) is owed.
 * Returns 0 (all sent, or the rest kept as the tail), 1 (the tail references v[n-1]),
 * TERN_ERR_AGAIN, TERN_ERR_FAULT (a bad buffer: the frame goes out with zeros for what
 * could not be read, see tcp_tail_salvage) or TERN_ERR_PEER_FAILED.
 */
static int tcp_conn_write(struct tcp_conn *c, struct iovec *v, int n, size_t total, void *cookie)
{
    struct iovec cur[TCP_MAX_IOV], *p = cur;
    memcpy(cur, v, (size_t)n * sizeof *v);
    int pn = n, fault = 0;
    size_t done = 0;
    int flags = MSG_NOSIGNAL;
    /* Coalescing: a frame that follows another one to this peer since the last poll is
     * a burst; it waits in the kernel (MSG_MORE) and goes out with the rest at the next
     * poll or sleep (tcp_push), one transmit and one wake-up of the peer for the lot. */
    if (c->authed && total <= util_tun.tcp_cork && c->txgen == tcp.npolls + 1) flags |= MSG_MORE;
    /* After a partial write, one more try tells a full socket (EAGAIN) from a bad
     * buffer (EFAULT: the kernel copied up to the first unreadable byte). */
    while (done < total) {
        struct msghdr mh = {.msg_iov = p, .msg_iovlen = (size_t)pn};
        ssize_t w = sendmsg(c->fd, &mh, flags);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (errno == EFAULT) {
                fault = 1;
                break;
            }
            tcp_conn_fail(c, strerror(errno));
            return TERN_ERR_PEER_FAILED;
        }
        done += (size_t)w;
        size_t k = (size_t)w; /* skip what went out */
        while (pn && k >= p->iov_len) {
            k -= p->iov_len;
            p++;
            pn--;
        }
        if (pn && k) {
            p->iov_base = (char *)p->iov_base + k;
            p->iov_len -= k;
        }
    }
    if (done == 0 && !fault) return TERN_ERR_AGAIN;
    if (done) { /* without MSG_MORE the kernel pushed whatever was corked before */
        c->txgen = tcp.npolls + 1;
        if (!c->corked != !(flags & MSG_MORE)) {
            c->corked = !c->corked;
            tcp.ncorked += c->corked ? 1 : -1;
        }
    }
    if (done == total) return 0;
    if (fault) {
        if (tcp_tail_salvage(c, p, pn) != 0) {
            tcp_conn_fail(c, "a send buffer could not be read");
            return TERN_ERR_PEER_FAILED;
        }
        tcp.nbusy++;
        tcp_epoll_set(c, EPOLLIN | EPOLLOUT);
        c->fault = 0; /* no sent() up-call for this frame: the caller is told now */
        return TERN_ERR_FAULT;
    }
    /* Partial: the frame is accepted, its tail waits in the connection. */
    size_t rest = total - done;
    int ncopy = n; /* iov entries whose unsent part is copied */
    size_t refd = 0;
    if (cookie) {
        size_t last = v[n - 1].iov_len, before = total - last;
        refd = done > before ? total - done : last;
        ncopy = n - 1;
    }
    if (tcp_sbuf_room(c, rest - refd) != 0) {
        /* Half a frame is on the wire: the stream cannot be repaired. */
        tcp_conn_fail(c, "out of memory for a send tail");
        return TERN_ERR_PEER_FAILED;
    }
    size_t at = 0;
    for (int i = 0; i < ncopy; i++) {
        size_t len = v[i].iov_len;
        if (done >= len) {
            done -= len;
            continue;
        }
        util_copy(c->sbuf + at, (char *)v[i].iov_base + done, len - done);
        at += len - done;
        done = 0;
    }
    c->soff = 0;
    c->slen = rest - refd;
    tcp.n_tail++;
    tcp.b_tail += rest - refd;
    if (refd) {
        tcp.n_ref++;
        tcp.b_ref += refd;
    }
    if (refd) {
        c->ref = (const unsigned char *)v[n - 1].iov_base + (v[n - 1].iov_len - refd);
        c->reflen = refd;
        c->cookie = cookie;
    }
    tcp.nbusy++;
    tcp_epoll_set(c, EPOLLIN | EPOLLOUT);
    return refd ? 1 : 0;
}

/*
 * Bytes of PAD frame (its header included) to send before a frame whose payload, at user
 * address `payload`, follows `before` bytes of headers in the stream; 0 for none. The
 * kernel copies a frame into its socket buffer pages with rep movsb, which AMD Zen runs
 * 8-30x slower when the destination lies 1-31 bytes past the source modulo 4 KiB
 * (util/mem.h has the user-space side). In a ping-pong each frame starts at offset 0 of
 * the socket's page fragment (reused from its start once the last frame's buffers were
 * freed), so the payload lands `before` bytes into a page: with tern's 24 bytes of
 * headers and a page-aligned buffer, exactly the slow case (a 128 KiB copy 2.2x slower
 * in a plain loopback ping-pong). A PAD of 8-31 bytes moves it to 32. Where the fragment
 * does not start at 0 (a stream) the guess is as good as none and costs nothing.
 */
static size_t tcp_pad_for(size_t before, const void *payload)
{
    size_t d = (before - ((uintptr_t)payload & 4095)) & 4095;
    if (d == 0 || d >= 32) return 0;
    size_t s = 32 - d;
    return s < sizeof(struct tcp_fhdr) ? sizeof(struct tcp_fhdr) : s;
}

static int tcp_send_ref(int dest, const struct iovec *iov, int iovcnt, size_t total, void *cookie)
{
    struct tcp_conn *c = tcp.peer[dest];
    if (c == NULL || c->dead) return TERN_ERR_PEER_FAILED;
    if (c->slen || c->reflen) {
        tcp_conn_flush(c, 0);
        if (c->dead) return TERN_ERR_PEER_FAILED;
        if (c->slen || c->reflen) return TERN_ERR_AGAIN;
    }
    /* An owed sent() goes first (from poll), so a request never has two frames out. */
    if (c->cookie) return TERN_ERR_AGAIN;
    if (iovcnt + 3 > TCP_MAX_IOV || total == 0 || total > tcp.max_len) return TERN_ERR_INTERNAL;
    struct tcp_fhdr h = {.magic = TCP_FRAME_MAGIC, .type = TCP_FRAME_MSG, .len = (uint32_t)total};
    /* A PAD frame: its header, then zeros (TCP_PAD_MAX at most) */
    static const unsigned char zeros[TCP_PAD_MAX];
    struct tcp_fhdr ph = {.magic = TCP_FRAME_MAGIC, .type = TCP_FRAME_PAD};
    struct iovec v[TCP_MAX_IOV];
    int n = 0;
    size_t pad = 0;
    if (iovcnt > 1 && util_tun.tcp_pad && iov[iovcnt - 1].iov_len >= util_tun.tcp_pad) {
        size_t before = sizeof h + total - iov[iovcnt - 1].iov_len;
        pad = tcp_pad_for(before, iov[iovcnt - 1].iov_base);
        if (pad) {
            ph.len = (uint32_t)(pad - sizeof ph);
            v[n++] = (struct iovec){&ph, sizeof ph};
            if (ph.len) v[n++] = (struct iovec){(void *)zeros, ph.len};
            tcp.n_pad++;
        }
    }
    v[n].iov_base = &h;
    v[n++].iov_len = sizeof h;
    for (int i = 0; i < iovcnt; i++)
        v[n++] = iov[i];
    return tcp_conn_write(c, v, n, pad + sizeof h + total, cookie);
}

static int tcp_send(int dest, const struct iovec *iov, int iovcnt, size_t total)
{
    return tcp_send_ref(dest, iov, iovcnt, total, NULL);
}

/* The caller takes back the payload a tail points at: copy the unsent part. */
static void tcp_unref(int dest)
{
    struct tcp_conn *c = tcp.peer[dest];
    if (c == NULL || c->dead) return;
    if (c->cookie && !c->slen && !c->reflen) tcp.nowed--;
    c->cookie = NULL;
    if (c->reflen == 0) return;
    if (c->soff) { /* keep the copied part at the start */
        memmove(c->sbuf, c->sbuf + c->soff, c->slen);
        c->soff = 0;
    }
    if (tcp_sbuf_room(c, c->slen + c->reflen) != 0) {
        tcp_conn_fail(c, "out of memory for a send tail");
        return;
    }
    memcpy(c->sbuf + c->slen, c->ref, c->reflen);
    tcp.b_tail += c->reflen;
    c->slen += c->reflen;
    c->reflen = 0;
    c->ref = NULL;
}

static void tcp_place_abort(int src)
{
    struct tcp_conn *c = tcp.peer[src];
    if (c && !c->dead && c->dst) c->discard = 1;
}

/* Write one handshake frame. A fresh socket always has room for it. */
static int tcp_send_small(struct tcp_conn *c, void *f, size_t len)
{
    struct iovec v = {f, len};
    int rc = tcp_conn_write(c, &v, 1, len, NULL);
    return rc == TERN_ERR_AGAIN ? TERN_ERR_TRANSPORT : rc;
}

static int tcp_send_hello(struct tcp_conn *c)
{
    struct tcp_hello_frame f;
    tcp_hello_make(&f, c->nonce, tcp.rank, tcp.size);
    return tcp_send_small(c, &f, sizeof f);
}

/* The proof of `role` on connection c (whose peer rank is `peer`). */
static void tcp_conn_mac(const struct tcp_conn *c, enum tcp_role role, int peer,
                         uint8_t mac[TCP_MAC_BYTES])
{
    if (c->outgoing) /* I am the connector */
        tcp_auth_mac(tcp.secret, role, c->nonce, c->their_nonce, tcp.rank, peer, mac);
    else
        tcp_auth_mac(tcp.secret, role, c->their_nonce, c->nonce, peer, tcp.rank, mac);
}

static int tcp_send_auth(struct tcp_conn *c, enum tcp_role role, int peer)
{
    uint8_t mac[TCP_MAC_BYTES];
    tcp_conn_mac(c, role, peer, mac);
    struct tcp_auth_frame f;
    tcp_auth_make(&f, mac);
    return tcp_send_small(c, &f, sizeof f);
}

/* Is `rank` one that may connect to me now? Only higher tcp peers, once each, and never
 * one that has failed (an impostor must not take a dead rank's place). */
static int tcp_may_connect(int rank)
{
    return rank > tcp.rank && tcp.is_peer[rank] == 1 && tcp.peer[rank] == NULL;
}

/* ---- receiving ------------------------------------------------------------- */

/* A HELLO arrived on a connection that has not completed its handshake. */
static void tcp_conn_hello(struct tcp_conn *c, const void *payload, size_t len)
{
    int rank;
    char why[96];
    if (c->hs != 0) {
        tcp_conn_refuse(c, tcp_frame_strerror(TCP_FE_ORDER));
        return;
    }
    int rc = tcp_hello_check(payload, len, tcp.size, &rank, c->their_nonce);
    if (rc) {
        tcp_conn_refuse(c, tcp_frame_strerror(rc));
        return;
    }
    c->hs = 1;
    if (c->outgoing) {
        if (rank != c->rank) {
            snprintf(why, sizeof why, "answered as rank %d, expected rank %d", rank, c->rank);
            tcp_conn_refuse(c, why);
            return;
        }
        /* The acceptor's challenge: I prove first, it proves after checking mine. */
        if (tcp_send_auth(c, TCP_ROLE_CONNECTOR, c->rank) != 0)
            tcp_conn_fail(c, "cannot answer the handshake");
        return;
    }
    if (!tcp_may_connect(rank)) {
        snprintf(why, sizeof why, "claims rank %d, which is not expected to connect", rank);
        tcp_conn_refuse(c, why);
        return;
    }
    c->claim = rank;
    if (tcp_send_hello(c) != 0) tcp_conn_refuse(c, "cannot send the challenge");
}

/* The handshake is complete: the connection serves its peer. */
static void tcp_conn_admit(struct tcp_conn *c)
{
    c->authed = 1;
    tcp.nauthed++;
    /* Room for batched small frames; grown to a whole frame only for a large one that
     * is not placed (an unexpected message, say), so idle peers cost little memory. */
    size_t cap = tcp.max_len + sizeof(struct tcp_fhdr);
    if (cap > TCP_RBUF_MIN) cap = TCP_RBUF_MIN;
    unsigned char *b = realloc(c->rbuf, cap);
    if (b == NULL) {
        tcp_conn_fail(c, "out of memory for a receive buffer");
        return;
    }
    c->rbuf = b;
    c->rcap = cap;
    UTIL_DEBUG(1, "tcp: connection with rank %d (%s) admitted", c->rank, c->who);
}

/* An AUTH arrived: the peer's proof that it knows the secret. */
static void tcp_conn_auth(struct tcp_conn *c, const void *payload, size_t len)
{
    if (c->hs != 1) {
        tcp_conn_refuse(c, tcp_frame_strerror(TCP_FE_ORDER));
        return;
    }
    int peer = c->outgoing ? c->rank : c->claim;
    uint8_t want[TCP_MAC_BYTES];
    tcp_conn_mac(c, c->outgoing ? TCP_ROLE_ACCEPTOR : TCP_ROLE_CONNECTOR, peer, want);
    int rc = tcp_auth_check(payload, len, want);
    if (rc) {
        tcp_conn_refuse(c, tcp_frame_strerror(rc));
        return;
    }
    if (c->outgoing) {
        tcp_conn_admit(c);
        return;
    }
    /* Checked again: another connection may have claimed the rank meanwhile, or the
     * rank may have failed. */
    if (!tcp_may_connect(peer)) {
        char why[96];
        snprintf(why, sizeof why, "rank %d may no longer connect", peer);
        tcp_conn_refuse(c, why);
        return;
    }
    c->rank = peer;
    tcp.peer[peer] = c;
    tcp.nstrangers--;
    if (tcp_send_auth(c, TCP_ROLE_ACCEPTOR, peer) != 0) {
        tcp_conn_fail(c, "cannot answer the handshake");
        return;
    }
    tcp_conn_admit(c);
}

/* The pieces of a placed frame took n more bytes: advance past them. */
static void tcp_dst_advance(struct tcp_conn *c, size_t n)
{
    c->dst_got += n;
    while (n > 0 && c->dn > 0) {
        size_t k = c->dst->iov_len < n ? c->dst->iov_len : n;
        c->dst->iov_base = (char *)c->dst->iov_base + k;
        c->dst->iov_len -= k;
        n -= k;
        if (c->dst->iov_len == 0) {
            c->dst++;
            c->dn--;
        }
    }
}

/* Copy n bytes that arrived with the head into the placed frame's pieces. */
static void tcp_dst_fill(struct tcp_conn *c, const unsigned char *src, size_t n)
{
    tcp.b_precopy += n;
    while (n > 0 && c->dn > 0) {
        size_t k = c->dst->iov_len < n ? c->dst->iov_len : n;
        memcpy(c->dst->iov_base, src, k);
        src += k;
        n -= k;
        tcp_dst_advance(c, k);
    }
}

/* Ask the core where the payload of the incomplete frame at `off` (header `h`) goes.
 * On an answer, the bytes of it already here are moved there and the connection reads
 * the rest straight in: returns 1. */
static int tcp_conn_place(struct tcp_conn *c, size_t off, const struct tcp_fhdr *h)
{
    size_t avail = c->rlen - off, hl = tcp.place_head < h->len ? tcp.place_head : h->len;
    if (c->asked || tcp.place == NULL || h->len < TCP_PLACE_MIN || avail < sizeof *h + hl) return 0;
    c->asked = 1;
    const unsigned char *head = c->rbuf + off + sizeof *h;
    struct iovec *dst;
    int dn = tcp.place(c->rank, head, hl, h->len, &dst);
    if (dn <= 0) return 0;
    memcpy(c->head, head, hl);
    c->hlen = hl;
    c->flen = h->len;
    c->dst = dst;
    c->dn = dn;
    c->dst_len = h->len - hl;
    c->dst_got = 0;
    c->discard = 0;
    tcp_dst_fill(c, head + hl, avail - sizeof *h - hl); /* < dst_len: the frame is incomplete */
    tcp.n_placed++;
    tcp.b_placed += h->len;
    c->rlen = off; /* the frame's bytes are no longer in rbuf */
    return 1;
}

/* Deliver every complete frame in the buffer; keep the partial rest at its start. */
static int tcp_conn_deliver(struct tcp_conn *c)
{
    size_t off = 0;
    int n = 0;
    while (!c->dead) {
        struct tcp_fhdr h;
        long total = tcp_frame_next(c->rbuf + off, c->rlen - off, tcp.max_len, c->authed, &h);
        if (total == 0) break;
        if (total < 0) {
            if (!c->authed) {
                tcp_conn_refuse(c, tcp_frame_strerror((int)total));
            } else {
                UTIL_ERROR("tcp: malformed frame from rank %d (%s): %s; closing the connection",
                           c->rank, c->who, tcp_frame_strerror((int)total));
                tcp_conn_close(c);
            }
            return n;
        }
        if ((size_t)total > c->rlen - off) {
            if (c->authed && h.type == TCP_FRAME_MSG) tcp_conn_place(c, off, &h);
            break;
        }
        const unsigned char *payload = c->rbuf + off + sizeof h;
        off += (size_t)total;
        if (h.type == TCP_FRAME_PAD) continue; /* nothing to deliver; exact stays as it was */
        c->asked = 0;
        c->exact = h.len >= TCP_PLACE_MIN;
        if (h.type == TCP_FRAME_HELLO) {
            tcp_conn_hello(c, payload, h.len);
        } else if (h.type == TCP_FRAME_AUTH) {
            tcp_conn_auth(c, payload, h.len);
        } else {
            if (h.len >= TCP_PLACE_MIN) {
                tcp.n_buffered++;
                tcp.b_buffered += h.len;
            }
            tcp.recv(c->rank, payload, h.len);
            n++;
        }
    }
    if (c->dead) return n;
    if (off) {
        c->rlen -= off;
        if (c->rlen) memmove(c->rbuf, c->rbuf + off, c->rlen);
    }
    return n;
}

/* How many bytes the next recv into rbuf should ask for. */
static size_t tcp_conn_want(const struct tcp_conn *c)
{
    struct tcp_fhdr h;
    size_t head = sizeof h + tcp.place_head;
    if (c->authed && c->rlen >= sizeof h) {
        memcpy(&h, c->rbuf, sizeof h);
        size_t total = sizeof h + (size_t)h.len;
        /* A frame that may be placed: its head first, alone. */
        if (!c->asked && tcp.place && h.len >= TCP_PLACE_MIN && c->rlen < head)
            return head - c->rlen;
        /* A large frame: read exactly its rest, so it ends at the end of the data and
         * nothing has to be moved after it. (The header was checked by deliver.) */
        if (total > TCP_READ_BATCH && total <= c->rcap) return total - c->rlen;
    } else if (c->authed && c->exact && tcp.place && c->rlen < head) {
        /* After a large frame another often follows: take its head alone, so its
         * payload can go straight where it belongs. */
        return head - c->rlen;
    }
    size_t room = c->rcap - c->rlen;
    return room < TCP_READ_BATCH ? room : TCP_READ_BATCH;
}

/*
 * The socket's receive low-water mark: epoll reports it readable (and the kernel wakes a
 * sleeper) only once `bytes` are in. Set only for a sleep (sleep_begin/sleep_end) while
 * the rest of a placed frame streams in: a sleeper woken per loopback segment (64 KiB)
 * pays a context switch each time, tens of microseconds on a loaded machine, while a
 * caller that polls (a free core) keeps reading each piece as it comes, overlapping its
 * copy with the sender's. The frame's sender is committed to send all of it, so waiting
 * for min(TERN_TCP_LOWAT, rest) bytes cannot wait for ever. (The kernel still wakes
 * early under memory pressure, on a closing connection or a zero window.)
 */
static void tcp_conn_lowat(struct tcp_conn *c, size_t bytes)
{
    size_t most = util_tun.tcp_lowat > INT_MAX ? INT_MAX : util_tun.tcp_lowat;
    int v = bytes > most ? (int)most : bytes < 1 ? 1 : (int)bytes;
    if (v == (c->lowat ? c->lowat : 1)) return;
    if (setsockopt(c->fd, SOL_SOCKET, SO_RCVLOWAT, &v, sizeof v) == 0) c->lowat = v;
}

/* Read into the destination of a placed frame; placed() once it is all in.
 * Returns 1 when the frame completed, 0 when the socket is drained, -1 on close. */
static int tcp_conn_read_placed(struct tcp_conn *c)
{
    for (;;) {
        size_t want = c->dst_len - c->dst_got;
        ssize_t got;
        if (c->discard) {
            if (want > c->rcap) want = c->rcap;
            got = recv(c->fd, c->rbuf, want, 0);
        } else if (c->dn == 1) {
            got = recv(c->fd, c->dst->iov_base, want, 0);
        } else { /* a non-contiguous receive's blocks */
            int n = c->dn < IOV_MAX ? c->dn : IOV_MAX;
            want = 0;
            for (int i = 0; i < n; i++)
                want += c->dst[i].iov_len;
            got = readv(c->fd, c->dst, n);
        }
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
            tcp_conn_fail(c, strerror(errno));
            return -1;
        }
        if (got == 0) {
            tcp_conn_fail(c, "closed by the peer");
            return -1;
        }
        if (c->discard)
            c->dst_got += (size_t)got;
        else
            tcp_dst_advance(c, (size_t)got);
        if (c->dst_got == c->dst_len) {
            c->dst = NULL;
            c->asked = 0;
            c->exact = 1;
            if (c->lowat > 1) tcp_conn_lowat(c, 1);
            tcp.placed(c->rank, c->head, c->hlen, c->flen);
            return 1;
        }
        if (!c->discard && (size_t)got < want) return 0; /* short read: drained */
    }
}

static int tcp_conn_read(struct tcp_conn *c)
{
    int n = 0;
    /* A bounded number of reads, so one busy peer cannot starve the others. */
    for (int round = 0; round < 16 && !c->dead; round++) {
        if (c->dst) {
            int k = tcp_conn_read_placed(c);
            if (k <= 0) break;
            n++;
            continue;
        }
        if (c->authed && c->rlen >= sizeof(struct tcp_fhdr)) {
            /* The frame at rbuf[0] is larger than rbuf and will not be placed: grow. */
            struct tcp_fhdr h;
            memcpy(&h, c->rbuf, sizeof h);
            size_t total = sizeof h + (size_t)h.len;
            int placeable = !c->asked && tcp.place && h.len >= TCP_PLACE_MIN;
            if (total > c->rcap && !placeable) {
                unsigned char *b = realloc(c->rbuf, total);
                if (b == NULL) {
                    tcp_conn_fail(c, "out of memory for a receive buffer");
                    break;
                }
                c->rbuf = b;
                c->rcap = total;
            }
        }
        size_t want = tcp_conn_want(c);
        if (want == 0) { /* cannot happen: deliver always makes room */
            tcp_conn_close(c);
            break;
        }
        ssize_t got = recv(c->fd, c->rbuf + c->rlen, want, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) break;
            if (c->authed || c->outgoing)
                tcp_conn_fail(c, strerror(errno));
            else
                tcp_conn_refuse(c, strerror(errno));
            break;
        }
        if (got == 0) {
            if (c->authed || c->outgoing)
                tcp_conn_fail(c, "closed by the peer");
            else
                tcp_conn_refuse(c, "closed before completing the handshake");
            break;
        }
        c->rlen += (size_t)got;
        n += tcp_conn_deliver(c);
        if ((size_t)got < want && c->dst == NULL) break; /* drained */
    }
    return n;
}

/* Watch the listeners (EPOLLIN) or stop watching them (0). */
static void tcp_listen_watch(uint32_t events)
{
    for (int l = 0; l < tcp.nlfd; l++) {
        struct epoll_event ev = {.events = events, .data.ptr = NULL};
        epoll_ctl(tcp.epfd, EPOLL_CTL_MOD, tcp.lfd[l], &ev);
    }
}

/*
 * accept() failed for want of a descriptor or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM).
 * The connection stays queued and keeps the listener readable, so doing nothing would
 * spin and log on every poll. Give up the spare descriptor, accept the connection into
 * it and close it (the peer sees it closed: a peer of this job could not be served
 * anyway), then take the spare again. Without a spare, stop watching the listeners for
 * TCP_ACCEPT_BACKOFF_MS. Logged once per job; the count of drops at the end.
 * Returns 1 if a connection was dropped (try the listener again), 0 if not.
 */
static int tcp_accept_starved(int lfd, int err)
{
    if (!tcp.starved_logged++)
        UTIL_ERROR("tcp: cannot accept connections: %s; dropping them until descriptors are "
                   "free (raise ulimit -n); logged once",
                   strerror(err));
    if (tcp.spare_fd >= 0) {
        close(tcp.spare_fd);
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) close(fd);
        tcp.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
            tcp.n_dropped++;
            return 1;
        }
    }
    tcp.accept_resume_ms = tcp_now_ms() + TCP_ACCEPT_BACKOFF_MS;
    if (tcp.accept_resume_ms == 0) tcp.accept_resume_ms = 1;
    tcp_listen_watch(0);
    return 0;
}

static void tcp_accept_all(void)
{
    for (int l = 0; l < tcp.nlfd && tcp.accept_resume_ms == 0;) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(tcp.lfd[l], (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (e == EINTR || e == ECONNABORTED) continue;
            if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
                if (!tcp_accept_starved(tcp.lfd[l], e)) l++;
                continue;
            }
            if (e != EAGAIN && e != EWOULDBLOCK) UTIL_ERROR("tcp: accept failed: %s", strerror(e));
            l++; /* this listener is drained */
            continue;
        }
        char who[64], ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
        snprintf(who, sizeof who, "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
        if (tcp.nstrangers >= TCP_MAX_STRANGERS) {
            tcp_refusal_log(who, "too many connections in their handshake");
            close(fd);
            continue;
        }
        tcp_sockopts(fd);
        tcp_set_cc(fd);
        if (tcp_conn_new(fd, -1, 0, who) == NULL) {
            UTIL_ERROR("tcp: refused connection from %s: out of memory", who);
            close(fd);
        }
    }
}

/* Take a thread's wake-up (tcp_wake_self) off the eventfd so epoll stops reporting it. */
static void tcp_wake_drain(void)
{
    uint64_t v;
    if (read(tcp_wakefd, &v, sizeof v) < 0) { /* EAGAIN: already taken */
    }
}

static int tcp_poll(void)
{
    struct epoll_event evbuf[32], *ev = evbuf;
    int n = 0;
    if (tcp.ncorked) tcp_push(); /* first, so the peer works on them while I read */
    tcp.npolls++;                /* a sleeping thread's events may be stale now (tcp_sleep_end) */
    if (__builtin_expect(tcp.nstrangers > 0, 0)) tcp_strangers_expire();
    if (tcp.accept_resume_ms && tcp_now_ms() >= tcp.accept_resume_ms) {
        tcp.accept_resume_ms = 0; /* descriptors may be free again: accept again */
        tcp_listen_watch(EPOLLIN);
    }
    if (tcp.nowed) tcp_sent_owed(); /* before any failure up-call of this poll */
    int k;
    if (tcp.nstash) { /* what woke sleep_wait(): no second epoll_wait for it */
        ev = tcp.stash;
        k = tcp.nstash;
        tcp.nstash = 0;
    } else {
        k = epoll_wait(tcp.epfd, ev, 32, 0);
    }
    for (int i = 0; i < k; i++) {
        struct tcp_conn *c = ev[i].data.ptr;
        if (c == (void *)&tcp_wake_tag) { /* another thread woke us: level-triggered */
            /* Not while a thread sleeps in epoll_wait (sleep_begin .. sleep_end): the
             * wake-up is its. Drained here, it could be gone before the sleeper's
             * epoll_wait collects it, and epoll_wait then sleeps on (a lost wake-up, up
             * to TERN_SLEEP_MS). The sleeper drains it in sleep_wait. */
            if (!tcp.sleeping) tcp_wake_drain();
            continue;
        }
        if (c == NULL) {
            tcp_accept_all();
            continue;
        }
        if (c->dead) continue;
        if ((ev[i].events & EPOLLOUT) && (c->slen || c->reflen)) tcp_conn_flush(c, 1);
        if (!c->dead && (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) n += tcp_conn_read(c);
    }
    tcp_reap();
    return n;
}

/* ---- setup ----------------------------------------------------------------- */

/* Listen on c (any port); append "ip/prefix:port" to the published list. */
static int tcp_listen_on(const struct tcp_cand *c, char *list, size_t cap)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return TERN_ERR_TRANSPORT;
    tcp_sockopts(fd); /* accepted sockets inherit the buffer sizes */
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = c->ip};
    socklen_t sl = sizeof sa;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &sl) != 0 ||
        epoll_ctl(tcp.epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        UTIL_DEBUG(1, "tcp: cannot listen on %s (%s): %s", inet_ntoa(c->ip), c->name,
                   strerror(errno));
        close(fd);
        return TERN_ERR_TRANSPORT;
    }
    tcp.lfd[tcp.nlfd++] = fd;
    char ip[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &c->ip, ip, sizeof ip);
    size_t len = strlen(list);
    snprintf(list + len, cap - len, "%s%s/%d:%u", len ? "," : "", ip,
             __builtin_popcount(c->mask.s_addr), (unsigned)ntohs(sa.sin_port));
    UTIL_DEBUG(1, "tcp: listening on %s:%u (%s)", ip, (unsigned)ntohs(sa.sin_port), c->name);
    return 0;
}

static int tcp_open(const struct tl_env *env, const int *peers, int n)
{
    struct boot *b = env->boot;
    memset(&tcp, 0, sizeof tcp);
    tcp.epfd = -1;
    tcp.spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC); /* see tcp_accept_starved */
    tcp.recv = env->recv;
    tcp.failed = env->failed;
    tcp.place = env->placed && env->place_head <= TCP_HEAD_MAX ? env->place : NULL;
    tcp.placed = env->placed;
    tcp.place_head = env->place_head;
    tcp.sent = env->sent;
    tcp.boot = b;
    tcp.rank = b->rank;
    tcp.size = b->size;
    tcp.npeers = n;
    tcp.is_peer = calloc((size_t)b->size, 1);
    tcp.peer = calloc((size_t)b->size, sizeof *tcp.peer);
    if (tcp.is_peer == NULL || tcp.peer == NULL) return TERN_ERR_NOMEM;
    for (int i = 0; i < n; i++)
        tcp.is_peer[peers[i]] = 1;
    size_t mf = util_tun.tcp_max_frame;
    if (mf < 4096 || mf > ((size_t)1 << 30)) {
        UTIL_ERROR("tcp: TERN_TCP_MAX_FRAME must be between 4 KiB and 1 GiB");
        return TERN_ERR_TUNABLE;
    }
    tcp.max_len = mf - sizeof(struct tcp_fhdr);

    /* The job secret: the launcher's, or one rank 0 makes now (see the top). */
    char hex[2 * TCP_SECRET_BYTES + 8];
    if (boot_get(b, "tern-secret", hex, sizeof hex) == 0) {
        if (tcp_secret_parse(hex, tcp.secret) != 0) {
            UTIL_ERROR("tcp: the launcher's tern-secret is not %d hex digits",
                       2 * TCP_SECRET_BYTES);
            return TERN_ERR_BOOT;
        }
        tcp.have_secret = 1;
        UTIL_DEBUG(1, "tcp: job secret from the launcher");
    } else if (b->rank == 0) {
        if (getrandom(tcp.secret, sizeof tcp.secret, 0) != (ssize_t)sizeof tcp.secret) {
            UTIL_ERROR("tcp: getrandom: %s", strerror(errno));
            return TERN_ERR_TRANSPORT;
        }
        tcp_secret_format(tcp.secret, hex);
        int rc = boot_put(b, "tern-secret", hex);
        if (rc) return rc;
        tcp.have_secret = 1;
        UTIL_DEBUG(1, "tcp: the launcher has no tern-secret: made one and published it");
    }

    struct tcp_cand cand[TCP_MAX_LISTEN];
    int ncand = tcp_candidates(b, cand, TCP_MAX_LISTEN);
    if (ncand < 0) return ncand;
    tcp.epfd = epoll_create1(EPOLL_CLOEXEC);
    if (tcp.epfd < 0) {
        UTIL_ERROR("tcp: epoll_create1: %s", strerror(errno));
        return TERN_ERR_TRANSPORT;
    }
    char list[TCP_MAX_LISTEN * 32] = "";
    tcp.mine = calloc(TCP_MAX_LISTEN, sizeof *tcp.mine);
    if (tcp.mine == NULL) return TERN_ERR_NOMEM;
    for (int i = 0; i < ncand; i++)
        if (tcp_listen_on(&cand[i], list, sizeof list) == 0) tcp.mine[tcp.nmine++] = cand[i];
    if (tcp.nlfd == 0) {
        UTIL_ERROR("tcp: cannot listen on any interface (%s first): %s", cand[0].name,
                   strerror(errno));
        return TERN_ERR_TRANSPORT;
    }
    tcp_wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event wev = {.events = EPOLLIN, .data.ptr = &tcp_wake_tag};
    if (tcp_wakefd < 0 || epoll_ctl(tcp.epfd, EPOLL_CTL_ADD, tcp_wakefd, &wev) != 0)
        return TERN_ERR_TRANSPORT;
    char key[64];
    snprintf(key, sizeof key, "tern-tcp-%d", b->rank);
    return boot_put(b, key, list);
}

/* One address a peer published, with how well it suits me (lower is better). */
struct tcp_peer_addr {
    struct sockaddr_in sa;
    int prefix;
    int score; /* 0 on a subnet of one of my interfaces, 1 routed through a real one,
                  2 only through a virtual bridge, 3 one of my own addresses; -1 unroutable */
    int order; /* position in the peer's list (its own preference) */
};

/* Score a peer's address: see struct tcp_peer_addr. The kernel is asked which local
 * address it would use (connect() of a UDP socket sends nothing). */
static int tcp_addr_score(const struct sockaddr_in *sa, int same_node)
{
    for (int i = 0; i < tcp.nmine; i++)
        if (tcp.mine[i].ip.s_addr == sa->sin_addr.s_addr && !same_node) return 3;
    for (int i = 0; i < tcp.nmine; i++) {
        const struct tcp_cand *m = &tcp.mine[i];
        if (m->rank < 2 && ((sa->sin_addr.s_addr ^ m->ip.s_addr) & m->mask.s_addr) == 0) return 0;
    }
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return 2;
    struct sockaddr_in me;
    socklen_t sl = sizeof me;
    int score = -1;
    if (connect(fd, (const struct sockaddr *)sa, sizeof *sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&me, &sl) == 0) {
        char name[IF_NAMESIZE + 1];
        score = tcp_if_of(me.sin_addr, name, sizeof name) ? 2 : 1;
    }
    close(fd);
    return score;
}

/* Connect to sa within timeout_ms. Returns the connected (blocking) socket or -1. */
static int tcp_dial(const struct sockaddr_in *sa, int timeout_ms, int *err)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *err = errno;
        return -1;
    }
    tcp_sockopts(fd); /* before connect: the window scale is agreed in the SYN */
    int c = connect(fd, (const struct sockaddr *)sa, sizeof *sa);
    if (c != 0 && errno == EINPROGRESS) {
        struct pollfd pf = {.fd = fd, .events = POLLOUT};
        int k;
        do
            k = poll(&pf, 1, timeout_ms);
        while (k < 0 && errno == EINTR);
        int e = ETIMEDOUT;
        socklen_t el = sizeof e;
        if (k == 1) getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &el);
        c = e ? -1 : 0;
        errno = e;
    }
    if (c != 0) {
        *err = errno;
        close(fd);
        return -1;
    }
    tcp_set_cc(fd);
    return fd;
}

/* Connect to rank q (lower than mine) through the best of its published addresses that
 * answers, and send my HELLO. */
static int tcp_connect_to(int q)
{
    char key[64], val[TCP_MAX_LISTEN * 32];
    snprintf(key, sizeof key, "tern-tcp-%d", q);
    int rc = boot_get(tcp.boot, key, val, sizeof val);
    if (rc) return rc;
    struct tcp_peer_addr pa[TCP_MAX_LISTEN];
    int n = 0;
    int same_node = tcp.boot->node_of && tcp.boot->node_of[q] == tcp.boot->node_of[tcp.rank];
    for (char *save = NULL, *tok = strtok_r(val, ",", &save); tok && n < TCP_MAX_LISTEN;
         tok = strtok_r(NULL, ",", &save)) {
        char ip[INET_ADDRSTRLEN + 1];
        int prefix;
        unsigned port;
        struct tcp_peer_addr *a = &pa[n];
        memset(a, 0, sizeof *a);
        a->sa.sin_family = AF_INET;
        if (sscanf(tok, "%15[0-9.]/%d:%u", ip, &prefix, &port) != 3 ||
            inet_pton(AF_INET, ip, &a->sa.sin_addr) != 1 || prefix < 0 || prefix > 32 ||
            port == 0 || port > 65535) {
            UTIL_ERROR("tcp: rank %d published a bad address '%s'", q, tok);
            return TERN_ERR_BOOT;
        }
        a->sa.sin_port = htons((uint16_t)port);
        a->prefix = prefix;
        a->order = n;
        a->score = tcp_addr_score(&a->sa, same_node);
        n++;
    }
    /* Best score first, the peer's own order among equals (insertion sort: n <= 8). */
    for (int a = 1; a < n; a++)
        for (int k = a;
             k > 0 && (pa[k - 1].score > pa[k].score ||
                       (pa[k - 1].score == pa[k].score && pa[k - 1].order > pa[k].order));
             k--) {
            struct tcp_peer_addr t = pa[k];
            pa[k] = pa[k - 1];
            pa[k - 1] = t;
        }
    int fd = -1, err = ENETUNREACH, tried = 0;
    char who[80] = "";
    for (int i = 0; i < n && fd < 0; i++) {
        if (pa[i].score < 0) continue; /* no route at all */
        char ip[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &pa[i].sa.sin_addr, ip, sizeof ip);
        snprintf(who, sizeof who, "%s:%u", ip, (unsigned)ntohs(pa[i].sa.sin_port));
        /* With alternatives left, do not wait long for a silent address. */
        fd = tcp_dial(&pa[i].sa, i + 1 < n ? 5000 : TCP_CONNECT_TIMEOUT_MS, &err);
        tried++;
        if (fd < 0) UTIL_DEBUG(1, "tcp: rank %d at %s: %s", q, who, strerror(err));
    }
    if (fd < 0) {
        UTIL_ERROR("tcp: cannot connect to rank %d (%d of its %d addresses tried, last %s): %s", q,
                   tried, n, tried ? who : "none routable", strerror(err));
        return TERN_ERR_TRANSPORT;
    }
    struct sockaddr_in me;
    socklen_t sl = sizeof me;
    char ifname[IF_NAMESIZE + 1] = "?";
    if (getsockname(fd, (struct sockaddr *)&me, &sl) == 0)
        tcp_if_of(me.sin_addr, ifname, sizeof ifname);
    UTIL_DEBUG(1, "tcp: rank %d reached at %s via %s", q, who, ifname);
    struct tcp_conn *conn = tcp_conn_new(fd, q, 1, who);
    if (conn == NULL) {
        close(fd);
        return TERN_ERR_NOMEM;
    }
    tcp.peer[q] = conn;
    return tcp_send_hello(conn);
}

static long tcp_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000L + ts.tv_nsec / 1000000L;
}

static int tcp_connect(void)
{
    if (!tcp.have_secret) {
        char hex[2 * TCP_SECRET_BYTES + 8];
        int rc = boot_get(tcp.boot, "tern-secret", hex, sizeof hex);
        if (rc || tcp_secret_parse(hex, tcp.secret) != 0) {
            UTIL_ERROR("tcp: no valid job secret (tern-secret) in the key-value store");
            return rc ? rc : TERN_ERR_BOOT;
        }
        tcp.have_secret = 1;
    }
    for (int q = 0; q < tcp.rank; q++) {
        if (!tcp.is_peer[q]) continue;
        int rc = tcp_connect_to(q);
        if (rc) return rc;
    }
    /* Wait for the higher ranks to connect and everyone's HELLO. No core frame can
     * arrive yet: nobody sends before the fence that follows. */
    long deadline = tcp_now_ms() + TCP_CONNECT_TIMEOUT_MS;
    while (tcp.nauthed < tcp.npeers) {
        tcp_poll();
        for (int q = 0; q < tcp.size; q++)
            if (tcp.is_peer[q] == 2) {
                UTIL_ERROR("tcp: connection with rank %d failed during setup", q);
                return TERN_ERR_TRANSPORT;
            }
        if (tcp.nauthed >= tcp.npeers) break;
        long left = deadline - tcp_now_ms();
        if (left <= 0) {
            UTIL_ERROR("tcp: only %d of %d peers connected within %d s", tcp.nauthed, tcp.npeers,
                       TCP_CONNECT_TIMEOUT_MS / 1000);
            return TERN_ERR_TRANSPORT;
        }
        struct epoll_event ev;
        epoll_wait(tcp.epfd, &ev, 1, left < 100 ? (int)left : 100);
    }
    return 0;
}

static int tcp_busy(void)
{
    return tcp.nbusy > 0 || tcp.ncorked > 0;
}

/*
 * Sleeping. With threads (core/thread.c) sleep_begin and sleep_end run under the core's
 * lock but sleep_wait does not, while other threads poll and send: what sleep_wait
 * touches is its own. The events it gets are handed to the next poll (saving it an
 * epoll_wait) only if no poll ran meanwhile: a poll may have consumed that data or
 * reaped a connection an event points at. Dropped events come back (level-triggered).
 */
static struct {
    int skip;            /* work is due that no fd event would announce */
    unsigned long polls; /* tcp.npolls when the sleep began */
    int n;               /* events taken while asleep */
    struct epoll_event ev[TCP_STASH];
} tcp_slp;

static void tcp_sleep_begin(void)
{
    if (tcp.ncorked) tcp_push(); /* never sleep on frames the peer cannot see */
    tcp.sleeping = 1;
    tcp_slp.skip = tcp.nowed || tcp.nstash;
    tcp_slp.polls = tcp.npolls;
    tcp_slp.n = 0;
    if (!tcp_slp.skip && util_tun.tcp_lowat)
        for (struct tcp_conn *c = tcp.conns; c; c = c->next)
            if (c->dst && !c->dead && !c->discard) tcp_conn_lowat(c, c->dst_len - c->dst_got);
}

static void tcp_sleep_wait(int timeout_ms)
{
    if (tcp_slp.skip) return;
    if (tcp.nstrangers && (timeout_ms < 0 || timeout_ms > 1000))
        timeout_ms = 1000;      /* wake to close strangers whose handshake timed out */
    if (tcp.accept_resume_ms) { /* wake to watch the listeners again */
        long left = tcp.accept_resume_ms - tcp_now_ms();
        if (left < 0) left = 0;
        if (timeout_ms < 0 || left < timeout_ms) timeout_ms = (int)left;
    }
    int k = epoll_wait(tcp.epfd, tcp_slp.ev, TCP_STASH, timeout_ms);
    tcp_slp.n = k > 0 ? k : 0;
    for (int i = 0; i < tcp_slp.n; i++)
        if (tcp_slp.ev[i].data.ptr == &tcp_wake_tag) tcp_wake_drain();
}

static void tcp_sleep_end(void)
{
    if (util_tun.tcp_lowat) /* off: no mark was raised, no walk over every connection */
        for (struct tcp_conn *c = tcp.conns; c; c = c->next)
            if (c->lowat > 1 && !c->dead) tcp_conn_lowat(c, 1);
    if (tcp_slp.n && tcp.npolls == tcp_slp.polls && tcp.nstash == 0) {
        memcpy(tcp.stash, tcp_slp.ev, (size_t)tcp_slp.n * sizeof tcp_slp.ev[0]);
        tcp.nstash = tcp_slp.n;
    }
    tcp_slp.n = 0;
    tcp.sleeping = 0;
}

static void tcp_wake_self(void)
{
    uint64_t one = 1;
    if (write(tcp_wakefd, &one, sizeof one) < 0) { /* counter full: a wake-up is pending */
    }
}

static void tcp_limits(struct tl_limits *out)
{
    /* A peer that may be on another node: no shared memory, no get(); a send can keep
     * pointing at its payload, and a sleeper waits in epoll_wait. */
    *out = (struct tl_limits){.max_frame = tcp.max_len,
                              .max_inline = 64,
                              .eager_max = util_tun.tcp_eager_max,
                              .posted_max = util_tun.tcp_eager_posted_max,
                              .caps = TL_CAP_SEND_REF | TL_CAP_KERNEL_WAIT};
}

static void tcp_close(void)
{
    UTIL_DEBUG(1,
               "tcp: received in place %lu frames (%llu B, %llu B of them copied from the read "
               "ahead), through the buffer %lu frames of 32 KiB+ (%llu B); partial writes %lu "
               "(%llu B copied, %lu frames by reference: %llu B not copied); pushes of corked "
               "frames %lu; PAD frames %lu",
               tcp.n_placed, tcp.b_placed, tcp.b_precopy, tcp.n_buffered, tcp.b_buffered,
               tcp.n_tail, tcp.b_tail, tcp.n_ref, tcp.b_ref, tcp.n_push, tcp.n_pad);
    for (struct tcp_conn *c = tcp.conns; c; c = c->next) {
        /* Keep the failed() up-call quiet: this is the end of the job. */
        if (c->rank >= 0 && tcp.peer[c->rank] == c) tcp.peer[c->rank] = NULL;
        tcp_conn_close(c);
    }
    tcp.failed = NULL;
    tcp_reap();
    for (int i = 0; i < tcp.nlfd; i++)
        close(tcp.lfd[i]);
    if (tcp.rl_quiet)
        UTIL_ERROR("tcp: %lu more refused connection(s) were not logged", tcp.rl_quiet);
    if (tcp.n_dropped)
        UTIL_ERROR("tcp: %lu incoming connection(s) were dropped for want of a descriptor",
                   tcp.n_dropped);
    if (tcp.spare_fd >= 0) close(tcp.spare_fd);
    free(tcp.mine);
    if (tcp.epfd >= 0) close(tcp.epfd);
    if (tcp_wakefd >= 0) close(tcp_wakefd);
    tcp_wakefd = -1;
    free(tcp.is_peer);
    free(tcp.peer);
    memset(&tcp, 0, sizeof tcp);
    tcp.epfd = -1;
    tcp.spare_fd = -1;
}

const struct tl_ops tl_tcp_ops = {
    .size = sizeof(struct tl_ops),
    .name = "tcp",
    .reaches = tcp_reaches,
    .open = tcp_open,
    .connect = tcp_connect,
    .ready = tl_stub_noop,
    .send = tcp_send,
    .send_ref = tcp_send_ref,
    .unref = tcp_unref,
    .place_abort = tcp_place_abort,
    .poll = tcp_poll,
    .get = tl_stub_get,
    .getv = tl_stub_getv,
    .sleep_begin = tcp_sleep_begin,
    .sleep_wait = tcp_sleep_wait,
    .sleep_end = tcp_sleep_end,
    .wake = tl_stub_wake,
    .busy = tcp_busy,
    .health = tl_stub_noop,
    .limits = tcp_limits,
    .close = tcp_close,
    .wake_self = tcp_wake_self,
};

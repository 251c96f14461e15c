/*
 * tcp.c - the TCP transport: peers on other nodes (and, with TERN_TRANSPORTS=tcp, on
 * this one).
 *
 * Connections. Every process listens on one socket (loopback when the whole job is on
 * one node, else TERN_TCP_IF or the first non-loopback IPv4 interface; never the
 * wildcard address) and publishes "ip:port" as tern-tcp-<rank>. After the first boot
 * fence each process connects to every tcp peer of LOWER rank and accepts the ones of
 * higher rank, so each pair has exactly one connection, made at startup. connect()
 * returns once every connection has completed its handshake both ways.
 *
 * Admission. The first frame in each direction is a HELLO with the job secret, the
 * sender's rank and the protocol version (tcp_frame.h). The secret is 128 random bits
 * that the launcher puts in the key-value store as tern-secret (ternrun does); under a
 * launcher that does not, rank 0 makes one and publishes it before the first fence and
 * the others read it after. A connection whose first bytes are not a valid HELLO with
 * the right secret, an expected rank and our version is closed and logged; nothing
 * else changes (the listener stays open for the whole job). The acceptor answers a good
 * HELLO with its own, so both sides know whom they talk to. A malformed frame on an
 * admitted connection closes it and marks that peer failed.
 *
 * Framing. Each core frame goes out as an 8-byte header plus the core's iovec in one
 * sendmsg (writev with MSG_NOSIGNAL). send() accepts a whole frame or nothing: if the
 * socket takes only part of it, the unsent tail is copied to the connection's send
 * buffer and the frame counts as sent; the next send() to that peer returns
 * TERN_ERR_AGAIN until the tail is gone (the core queues meanwhile). Tails are flushed
 * by poll() when epoll reports the socket writable.
 *
 * Receiving. Sockets are non-blocking and driven by one level-triggered epoll set. Each
 * connection reads into its own buffer of one maximal frame: small frames in batches
 * (up to 64 KiB per recv), and once the header of a large frame is in, exactly the rest
 * of that frame, so large frames are never moved inside the buffer. Complete frames go
 * to the core's recv up-call straight from that buffer. The core copies DATA payloads
 * into the posted receive buffer: one copy per byte on the receiving side.
 *
 * Sleeping. sleep_wait() is epoll_wait on the same set, so a blocked process sleeps
 * in the kernel and wakes when a frame (or a new connection) arrives or a send tail
 * can move.
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "boot/boot.h"
#include "tern.h"
#include "transport/tcp/tcp_frame.h"
#include "transport/transport.h"
#include "util/log.h"
#include "util/tunables.h"

#define TCP_READ_BATCH         ((size_t)64 << 10) /* bytes per recv when frames are small */
#define TCP_MAX_STRANGERS      64                 /* connections still in their handshake */
#define TCP_CONNECT_TIMEOUT_MS 60000
#define TCP_MAX_IOV            8

struct tcp_conn {
    int fd;
    int rank;     /* peer's world rank: known at once for outgoing, after HELLO otherwise */
    int outgoing; /* I connected, so I sent the first HELLO */
    int authed;   /* the peer's HELLO arrived and was checked */
    int dead;     /* closed; freed by tcp_reap() */
    int reported; /* failed() up-call made */
    uint32_t events;
    char who[64]; /* address, for messages */
    /* receive buffer: frames from their first byte */
    unsigned char *rbuf;
    size_t rcap, rlen;
    /* the unsent tail of the last accepted frame */
    unsigned char *sbuf;
    size_t scap, soff, slen;
    struct tcp_conn *next; /* all connections */
};

static struct {
    tl_recv_fn recv;
    tl_failed_fn failed;
    struct boot *boot;
    int rank, size;
    int epfd, lfd;
    char *is_peer;          /* by world rank: served by this transport */
    struct tcp_conn **peer; /* by world rank: the connection, or NULL */
    int npeers, nauthed, nstrangers, nbusy;
    int reap; /* some connection is dead and waits to be freed */
    struct tcp_conn *conns;
    uint8_t secret[TCP_SECRET_BYTES];
    int have_secret;
    size_t max_len; /* largest MSG payload (a core frame) */
    struct sockaddr_in addr;
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

static int tcp_epoll_set(struct tcp_conn *c, uint32_t events)
{
    if (c->events == events) return 0;
    struct epoll_event ev = {.events = events, .data.ptr = c};
    int rc = epoll_ctl(tcp.epfd, c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, c->fd, &ev);
    if (rc == 0) c->events = events;
    return rc;
}

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
    c->next = tcp.conns;
    tcp.conns = c;
    if (!outgoing) tcp.nstrangers++;
    return c;
}

/* Close a connection now; the memory goes in tcp_reap(), outside every loop over it. */
static void tcp_conn_close(struct tcp_conn *c)
{
    if (c->dead) return;
    c->dead = 1;
    tcp.reap = 1;
    if (c->slen) tcp.nbusy--;
    c->slen = 0;
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

/* Refuse a connection that has not completed its handshake, saying why. */
static void tcp_conn_refuse(struct tcp_conn *c, const char *why)
{
    UTIL_ERROR("tcp: refused connection from %s: %s", c->who, why);
    tcp_conn_close(c);
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

/* Push the unsent tail as far as the socket takes it (the connection may die). */
static void tcp_conn_flush(struct tcp_conn *c)
{
    while (c->slen) {
        ssize_t w = send(c->fd, c->sbuf + c->soff, c->slen, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR) continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK) return;
            tcp_conn_fail(c, strerror(errno));
            return;
        }
        c->soff += (size_t)w;
        c->slen -= (size_t)w;
    }
    tcp.nbusy--;
    tcp_epoll_set(c, EPOLLIN);
}

/*
 * Write a whole frame gathered from v[0..n-1] (total bytes) or nothing.
 * Returns 0 (all sent, or the rest kept as the tail), TERN_ERR_AGAIN or
 * TERN_ERR_PEER_FAILED.
 */
static int tcp_conn_write(struct tcp_conn *c, struct iovec *v, int n, size_t total)
{
    struct msghdr mh = {.msg_iov = v, .msg_iovlen = (size_t)n};
    ssize_t w;
    do
        w = sendmsg(c->fd, &mh, MSG_NOSIGNAL);
    while (w < 0 && errno == EINTR);
    if (w < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return TERN_ERR_AGAIN;
        tcp_conn_fail(c, strerror(errno));
        return TERN_ERR_PEER_FAILED;
    }
    size_t done = (size_t)w;
    if (done == total) return 0;
    /* Partial: the frame is accepted, its tail waits in the connection. */
    size_t rest = total - done;
    if (c->scap < rest) {
        size_t cap = tcp.max_len + sizeof(struct tcp_fhdr);
        if (cap < rest) cap = rest;
        unsigned char *b = realloc(c->sbuf, cap);
        if (b == NULL) {
            /* Half a frame is on the wire: the stream cannot be repaired. */
            tcp_conn_fail(c, "out of memory for a send tail");
            return TERN_ERR_PEER_FAILED;
        }
        c->sbuf = b;
        c->scap = cap;
    }
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        size_t len = v[i].iov_len;
        if (done >= len) {
            done -= len;
            continue;
        }
        memcpy(c->sbuf + at, (char *)v[i].iov_base + done, len - done);
        at += len - done;
        done = 0;
    }
    c->soff = 0;
    c->slen = rest;
    tcp.nbusy++;
    tcp_epoll_set(c, EPOLLIN | EPOLLOUT);
    return 0;
}

static int tcp_send(int dest, const struct iovec *iov, int iovcnt, size_t total)
{
    struct tcp_conn *c = tcp.peer[dest];
    if (c == NULL || c->dead) return TERN_ERR_PEER_FAILED;
    if (c->slen) {
        tcp_conn_flush(c);
        if (c->dead) return TERN_ERR_PEER_FAILED;
        if (c->slen) return TERN_ERR_AGAIN;
    }
    if (iovcnt + 1 > TCP_MAX_IOV || total == 0 || total > tcp.max_len) return TERN_ERR_INTERNAL;
    struct tcp_fhdr h = {.magic = TCP_FRAME_MAGIC, .type = TCP_FRAME_MSG, .len = (uint32_t)total};
    struct iovec v[TCP_MAX_IOV];
    v[0].iov_base = &h;
    v[0].iov_len = sizeof h;
    for (int i = 0; i < iovcnt; i++)
        v[i + 1] = iov[i];
    return tcp_conn_write(c, v, iovcnt + 1, sizeof h + total);
}

static int tcp_send_hello(struct tcp_conn *c)
{
    struct tcp_hello_frame f;
    tcp_hello_make(&f, tcp.secret, tcp.rank, tcp.size);
    struct iovec v = {&f, sizeof f};
    int rc = tcp_conn_write(c, &v, 1, sizeof f);
    /* A fresh socket always has room for 40 bytes. */
    return rc == TERN_ERR_AGAIN ? TERN_ERR_TRANSPORT : rc;
}

/* ---- receiving ------------------------------------------------------------- */

/* A HELLO arrived on a connection that has not completed its handshake. */
static void tcp_conn_hello(struct tcp_conn *c, const void *payload, size_t len)
{
    int rank;
    int rc = tcp_hello_check(payload, len, tcp.secret, tcp.size, &rank);
    if (rc) {
        tcp_conn_refuse(c, tcp_frame_strerror(rc));
        return;
    }
    char why[96];
    if (c->outgoing) {
        if (rank != c->rank) {
            snprintf(why, sizeof why, "answered as rank %d, expected rank %d", rank, c->rank);
            tcp_conn_refuse(c, why);
            return;
        }
    } else {
        /* Only higher ranks connect to me, once each. */
        if (rank <= tcp.rank || !tcp.is_peer[rank] || tcp.peer[rank] != NULL) {
            snprintf(why, sizeof why, "claims rank %d, which is not expected to connect", rank);
            tcp_conn_refuse(c, why);
            return;
        }
        c->rank = rank;
        tcp.peer[rank] = c;
        tcp.nstrangers--;
    }
    c->authed = 1;
    tcp.nauthed++;
    unsigned char *b = realloc(c->rbuf, tcp.max_len + sizeof(struct tcp_fhdr));
    if (b == NULL) {
        tcp_conn_fail(c, "out of memory for a receive buffer");
        return;
    }
    c->rbuf = b;
    c->rcap = tcp.max_len + sizeof(struct tcp_fhdr);
    if (!c->outgoing && tcp_send_hello(c) != 0) {
        tcp_conn_fail(c, "cannot answer the handshake");
        return;
    }
    UTIL_DEBUG(1, "tcp: connection with rank %d (%s) admitted", c->rank, c->who);
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
        if ((size_t)total > c->rlen - off) break;
        const unsigned char *payload = c->rbuf + off + sizeof h;
        off += (size_t)total;
        if (h.type == TCP_FRAME_HELLO) {
            tcp_conn_hello(c, payload, h.len);
        } else {
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

/* How many bytes the next recv should ask for. */
static size_t tcp_conn_want(const struct tcp_conn *c)
{
    struct tcp_fhdr h;
    if (c->authed && c->rlen >= sizeof h) {
        memcpy(&h, c->rbuf, sizeof h);
        size_t total = sizeof h + (size_t)h.len;
        /* A large frame: read exactly its rest, so it ends at the end of the data and
         * nothing has to be moved after it. (The header was checked by deliver.) */
        if (total > TCP_READ_BATCH && total <= c->rcap) return total - c->rlen;
    }
    size_t room = c->rcap - c->rlen;
    return room < TCP_READ_BATCH ? room : TCP_READ_BATCH;
}

static int tcp_conn_read(struct tcp_conn *c)
{
    int n = 0;
    /* A bounded number of reads, so one busy peer cannot starve the others. */
    for (int round = 0; round < 16 && !c->dead; round++) {
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
        if ((size_t)got < want) break; /* drained */
    }
    return n;
}

static void tcp_accept_all(void)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(tcp.lfd, (struct sockaddr *)&sa, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                UTIL_ERROR("tcp: accept failed: %s", strerror(errno));
            return;
        }
        char who[64], ip[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
        snprintf(who, sizeof who, "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
        if (tcp.nstrangers >= TCP_MAX_STRANGERS) {
            UTIL_ERROR("tcp: refused connection from %s: too many connections in their "
                       "handshake",
                       who);
            close(fd);
            continue;
        }
        tcp_sockopts(fd);
        if (tcp_conn_new(fd, -1, 0, who) == NULL) {
            UTIL_ERROR("tcp: refused connection from %s: out of memory", who);
            close(fd);
        }
    }
}

static int tcp_poll(void)
{
    struct epoll_event ev[32];
    int k = epoll_wait(tcp.epfd, ev, 32, 0);
    int n = 0;
    for (int i = 0; i < k; i++) {
        struct tcp_conn *c = ev[i].data.ptr;
        if (c == (void *)&tcp_wake_tag) continue;
        if (c == NULL) {
            tcp_accept_all();
            continue;
        }
        if (c->dead) continue;
        if ((ev[i].events & EPOLLOUT) && c->slen) tcp_conn_flush(c);
        if (!c->dead && (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))) n += tcp_conn_read(c);
    }
    tcp_reap();
    return n;
}

/* ---- setup ----------------------------------------------------------------- */

/* The address to listen on: see the top of the file. */
static int tcp_pick_addr(const struct boot *b, struct in_addr *out)
{
    const char *want = util_tun.tcp_if;
    if ((want == NULL || *want == '\0') && b->local_size == b->size) {
        out->s_addr = htonl(INADDR_LOOPBACK);
        return 0;
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0) {
        UTIL_ERROR("tcp: getifaddrs: %s", strerror(errno));
        return TERN_ERR_TRANSPORT;
    }
    int found = 0;
    for (struct ifaddrs *i = ifs; i && !found; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) continue;
        if (want && *want) {
            if (strcmp(i->ifa_name, want) != 0) continue;
        } else if ((i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP)) {
            continue;
        }
        *out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        found = 1;
    }
    freeifaddrs(ifs);
    if (!found) {
        if (want && *want)
            UTIL_ERROR("tcp: TERN_TCP_IF=%s names no interface with an IPv4 address", want);
        else
            UTIL_ERROR("tcp: no non-loopback IPv4 interface is up (set TERN_TCP_IF)");
        return TERN_ERR_TRANSPORT;
    }
    return 0;
}

static int tcp_open(const struct tl_env *env, const int *peers, int n)
{
    struct boot *b = env->boot;
    memset(&tcp, 0, sizeof tcp);
    tcp.lfd = tcp.epfd = -1;
    tcp.recv = env->recv;
    tcp.failed = env->failed;
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

    struct in_addr ip;
    int rc = tcp_pick_addr(b, &ip);
    if (rc) return rc;
    tcp.epfd = epoll_create1(EPOLL_CLOEXEC);
    tcp.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (tcp.epfd < 0 || tcp.lfd < 0) {
        UTIL_ERROR("tcp: cannot create sockets: %s", strerror(errno));
        return TERN_ERR_TRANSPORT;
    }
    tcp_sockopts(tcp.lfd); /* accepted sockets inherit the buffer sizes */
    tcp.addr.sin_family = AF_INET;
    tcp.addr.sin_addr = ip;
    tcp.addr.sin_port = 0;
    socklen_t sl = sizeof tcp.addr;
    if (bind(tcp.lfd, (struct sockaddr *)&tcp.addr, sizeof tcp.addr) != 0 ||
        listen(tcp.lfd, SOMAXCONN) != 0 ||
        getsockname(tcp.lfd, (struct sockaddr *)&tcp.addr, &sl) != 0) {
        UTIL_ERROR("tcp: cannot listen on %s: %s", inet_ntoa(ip), strerror(errno));
        return TERN_ERR_TRANSPORT;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = NULL};
    if (epoll_ctl(tcp.epfd, EPOLL_CTL_ADD, tcp.lfd, &ev) != 0) return TERN_ERR_TRANSPORT;
    tcp_wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event wev = {.events = EPOLLIN, .data.ptr = &tcp_wake_tag};
    if (tcp_wakefd < 0 || epoll_ctl(tcp.epfd, EPOLL_CTL_ADD, tcp_wakefd, &wev) != 0)
        return TERN_ERR_TRANSPORT;

    char key[64], val[64], ips[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &tcp.addr.sin_addr, ips, sizeof ips);
    snprintf(key, sizeof key, "tern-tcp-%d", b->rank);
    snprintf(val, sizeof val, "%s:%u", ips, (unsigned)ntohs(tcp.addr.sin_port));
    UTIL_DEBUG(1, "tcp: listening on %s", val);
    return boot_put(b, key, val);
}

/* Connect to rank q (lower than mine) and send my HELLO. */
static int tcp_connect_to(int q)
{
    char key[64], val[64];
    snprintf(key, sizeof key, "tern-tcp-%d", q);
    int rc = boot_get(tcp.boot, key, val, sizeof val);
    if (rc) return rc;
    char *colon = strrchr(val, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (colon == NULL) return TERN_ERR_BOOT;
    *colon = '\0';
    long port = strtol(colon + 1, NULL, 10);
    if (inet_pton(AF_INET, val, &sa.sin_addr) != 1 || port <= 0 || port > 65535) {
        UTIL_ERROR("tcp: rank %d published a bad address '%s'", q, val);
        return TERN_ERR_BOOT;
    }
    sa.sin_port = htons((uint16_t)port);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return TERN_ERR_TRANSPORT;
    tcp_sockopts(fd); /* before connect: the window scale is agreed in the SYN */
    int c;
    do
        c = connect(fd, (struct sockaddr *)&sa, sizeof sa);
    while (c != 0 && errno == EINTR);
    if (c != 0) {
        UTIL_ERROR("tcp: cannot connect to rank %d at %s:%ld: %s", q, val, port, strerror(errno));
        close(fd);
        return TERN_ERR_TRANSPORT;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    char who[80];
    snprintf(who, sizeof who, "%s:%ld", val, port);
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
    return tcp.nbusy > 0;
}

static void tcp_sleep_wait(int timeout_ms)
{
    struct epoll_event ev;
    uint64_t v;
    if (epoll_wait(tcp.epfd, &ev, 1, timeout_ms) > 0 && read(tcp_wakefd, &v, sizeof v) < 0) {
        /* EAGAIN: it was a socket, not a wake-up */
    }
}

static void tcp_wake_self(void)
{
    uint64_t one = 1;
    if (write(tcp_wakefd, &one, sizeof one) < 0) { /* counter full: a wake-up is pending */
    }
}

static void tcp_limits(struct tl_limits *out)
{
    out->max_frame = tcp.max_len;
    out->max_inline = 64;
    out->eager_max = util_tun.tcp_eager_max;
    out->has_get = 0;
}

static void tcp_close(void)
{
    for (struct tcp_conn *c = tcp.conns; c; c = c->next) {
        /* Keep the failed() up-call quiet: this is the end of the job. */
        if (c->rank >= 0 && tcp.peer[c->rank] == c) tcp.peer[c->rank] = NULL;
        tcp_conn_close(c);
    }
    tcp.failed = NULL;
    tcp_reap();
    if (tcp.lfd >= 0) close(tcp.lfd);
    if (tcp.epfd >= 0) close(tcp.epfd);
    if (tcp_wakefd >= 0) close(tcp_wakefd);
    tcp_wakefd = -1;
    free(tcp.is_peer);
    free(tcp.peer);
    memset(&tcp, 0, sizeof tcp);
    tcp.lfd = tcp.epfd = -1;
}

const struct tl_ops tl_tcp_ops = {
    .size = sizeof(struct tl_ops),
    .name = "tcp",
    .reaches = tcp_reaches,
    .open = tcp_open,
    .connect = tcp_connect,
    .ready = tl_stub_noop,
    .send = tcp_send,
    .poll = tcp_poll,
    .get = tl_stub_get,
    .sleep_begin = tl_stub_sleep_begin,
    .sleep_wait = tcp_sleep_wait,
    .sleep_end = tl_stub_sleep_end,
    .busy = tcp_busy,
    .health = tl_stub_noop,
    .limits = tcp_limits,
    .close = tcp_close,
    .wake_self = tcp_wake_self,
};

/*
 * proto.c - the point-to-point protocols on top of transport frames.
 *
 *   eager       payload travels with the header in one frame (one cache line when it
 *               fits); a synchronous send also waits for the receiver's ACK.
 *   rendezvous  the sender announces (RTS: length, address); the receiver, once it has
 *               matched, pulls the data in one copy with the transport's get() and
 *               answers FIN. Where get() is impossible it answers CTS and the sender
 *               streams DATA frames that land straight in the posted buffer.
 *
 * Zero copy on byte-stream transports (tcp). Payloads of CORE_REF_MIN bytes or more go
 * out with send_ref(): the transport points at the user's buffer instead of copying an
 * unsent tail, and the send request completes only at its sent() up-call (state
 * SENDING meanwhile). On the receiving side the transport asks place() where a
 * frame's payload goes once its head is in: an EAGER frame that matches a posted
 * receive, or a DATA frame of a matched rendezvous, is then read by the transport
 * straight into the user's buffer, and placed() completes the work.
 *
 * The choice is per message from the limits the peer's transport reports. Frames a
 * transport cannot take now wait in the peer's pending queue, in order, so sends to one
 * peer never overtake each other.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_tl.h"
#include "trace/trace.h"
#include "util/cpu.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/tunables.h"

/* Payloads at least this large are sent by reference where the transport can. */
#define CORE_REF_MIN 4096

/* Is a payload of n bytes one whose copies and pulls to or from peer p are timed (adapt.h):
 * one that goes as the receiver advises, everywhere or in a one-way stream? */
static inline int core_adapt_size(const struct core_peer *p, size_t n)
{
    return n > p->adapt_min && n <= p->adapt_top;
}

/* The adaptive timings' clock: the CPU's invariant counter where there is one (a read
 * costs a few ns; clock_gettime's 35 ns, four times per message, made 12 KiB streams 25%
 * slower), else CLOCK_MONOTONIC in ns. */
static int core_adapt_tsc;
/* The clock and CLOCK_MONOTONIC (util_cpu_ticks(0)) at init, so that the report can give
 * ns (core_adapt_report). */
static uint64_t core_adapt_t0, core_adapt_ns0;

void core_adapt_clock_init(void)
{
    core_adapt_tsc = util_cpu_counter_invariant();
    core_adapt_t0 = util_cpu_ticks(core_adapt_tsc);
    core_adapt_ns0 = util_cpu_ticks(0);
}

static inline double core_adapt_clock(void)
{
    return (double)util_cpu_ticks(core_adapt_tsc);
}

/* ns per clock tick over the job's life (1 without the CPU's counter). */
static double core_adapt_ns_per_tick(void)
{
    if (!core_adapt_tsc) return 1.0;
    double dt = (double)(util_cpu_ticks(core_adapt_tsc) - core_adapt_t0);
    return dt > 0 ? (double)(util_cpu_ticks(0) - core_adapt_ns0) / dt : 0.0;
}

/* A cost per byte in ticks as ns per byte, or -1 where nothing was timed. */
static double core_adapt_ns(double ticks_per_byte, int timed, double ns_per_tick)
{
    return timed && ticks_per_byte > 0 ? ticks_per_byte * ns_per_tick : -1.0;
}

/*
 * TERN_ADAPT_REPORT (or TERN_DEBUG=1): one line per size class this rank timed as a
 * receiver, on stderr, in
 * `key=value` words (`ternbench crossover` reads them): what each way of moving a
 * message of that class from `peer` cost, in ns per byte (-1: not timed), and the way
 * chosen at the end (way=fixed: only one way was timed, so no choice was made and the
 * sender's fixed limits decided, e.g. a ping-pong above TERN_SHM_ADAPT_MAX). kind=eager
 * lines are the adaptive middle sizes (the peer's copy into shared memory as it reported
 * it, mine out of it, both again for frames written around the caches, and my pulls);
 * kind=rv lines the large rendezvous classes (pulled or streamed; period: messages
 * between two runs of the way not taken). hi=0: no upper bound.
 */
static void core_adapt_report_lines(void)
{
    double ns = core_adapt_ns_per_tick();
    for (int r = 0; r < core.size; r++) {
        const struct core_peer *p = &core.peers[r];
        for (int k = 0; k < CORE_ADAPT_CLASSES && p->adapt_min; k++) {
            const struct core_adapt_class *c = &p->adapt.c[k];
            if (!(c->out.n || c->out_nt.n || c->pull.n)) continue;
            size_t hi = k < CORE_ADAPT_CLASSES - 1 ? p->adapt_min << (k + 1) : 0;
            fprintf(stderr,
                    "tern-adapt rank=%d peer=%d kind=eager lo=%zu hi=%zu eager_in=%.4f "
                    "out=%.4f out_n=%u nt_in=%.4f nt_out=%.4f nt_n=%u pull=%.4f pull_n=%u "
                    "way=%s\n",
                    core.rank, r, (p->adapt_min << k) + 1, hi,
                    core_adapt_ns(c->peer_in, c->peer_in > 0, ns),
                    core_adapt_ns(c->out.npb, c->out.n != 0, ns), c->out.n,
                    core_adapt_ns(c->peer_in_nt, c->peer_in_nt > 0, ns),
                    core_adapt_ns(c->out_nt.npb, c->out_nt.n != 0, ns), c->out_nt.n,
                    core_adapt_ns(c->pull.npb, c->pull.n != 0, ns), c->pull.n,
                    !(c->out.n || c->out_nt.n) || !c->pull.n ? "fixed"
                    : c->rndv                                ? "rndv"
                    : c->nt                                  ? "nt"
                                                             : "eager");
        }
        for (int k = 0; k < CORE_ADAPT_CLASSES && p->rv_min; k++) {
            const struct core_rv_class *c = &p->rv[k];
            if (c->n[CORE_RV_PULL] == 0 && c->n[CORE_RV_STREAM] == 0) continue;
            size_t hi = k < CORE_ADAPT_CLASSES - 1 ? p->rv_min << (k + 1) : 0;
            double pull = core_rv_cost(c, CORE_RV_PULL), stream = core_rv_cost(c, CORE_RV_STREAM);
            fprintf(stderr,
                    "tern-adapt rank=%d peer=%d kind=rv lo=%zu hi=%zu pull=%.4f pull_n=%u "
                    "stream=%.4f stream_n=%u way=%s period=%u\n",
                    core.rank, r, (p->rv_min << k) + 1, hi, core_adapt_ns(pull, pull >= 0, ns),
                    c->n[CORE_RV_PULL], core_adapt_ns(stream, stream >= 0, ns),
                    c->n[CORE_RV_STREAM], c->way == CORE_RV_PULL ? "pull" : "stream",
                    c->period ? c->period : CORE_RV_PERIOD_MIN);
        }
    }
    fflush(stderr);
}

void core_adapt_report(void)
{
    for (int r = 0; r < core.size; r++)
        for (int k = 0; k < CORE_ADAPT_CLASSES; k++)
            if (core.peers[r].adapt_tally[k].bursts)
                UTIL_DEBUG(1,
                           "adaptive sizes to rank %d, class %d: %u bursts against its advice, "
                           "one every %u messages now",
                           r, k, core.peers[r].adapt_tally[k].bursts,
                           core.peers[r].adapt_tally[k].period);
    if (util_tun.adapt_report || util_tun.debug >= 1) core_adapt_report_lines();
}

/* A timed copy of n bytes out of peer src's frame (how 0: written as usual, 2: around the
 * caches) or a pull of its message (how 1) went into the averages; the advice to src
 * follows them. */
static void core_adapt_took(int src, int how, double t0, size_t n)
{
    struct core_peer *p = &core.peers[src];
    int k = core_adapt_class(n, p->adapt_min);
    struct core_adapt_class *c = &p->adapt.c[k];
    core_adapt_fold(how == 1   ? &c->pull
                    : how == 2 ? &c->out_nt
                               : &c->out,
                    core_adapt_clock() - t0, n);
    p->adapt.received++;
    core_adapt_prefer(&p->adapt, k);
    p->adv_out = core_adapt_advice(&p->adapt);
}

/* Copy n bytes out of peer src's frame (with header flags `flags`), timed when the size is
 * an adaptive one (one copy in CORE_ADAPT_SAMPLE of those that came the way I advise, every
 * one that came another way), as a copy out of a frame written around the caches or not. */
static void core_frame_copy(int src, uint8_t flags, void *dst, const void *payload, size_t n)
{
    struct core_peer *p = &core.peers[src];
    if (!core_adapt_size(p, n)) {
        util_copy(dst, payload, n);
        return;
    }
    int k = core_adapt_class(n, p->adapt_min);
    int nt = (flags & CORE_FLAG_NT) != 0;
    int other = core_adapt_says_rndv(p->adv_out, k) || nt != ((p->adv_out & CORE_FLAG_ADV_NT) != 0);
    if (!core_adapt_sampled(&p->adapt.copies, other)) {
        util_copy(dst, payload, n);
        p->adapt.received++;
        return;
    }
    double t0 = core_adapt_clock();
    util_copy(dst, payload, n);
    core_adapt_took(src, nt ? 2 : 0, t0, n);
}

/* Send one frame of request r whose last iov entry is its payload. */
static int core_req_send(core_req_t *r, const struct iovec *iov, int n, size_t total)
{
    struct core_peer *p = &core.peers[r->peer];
    if ((p->caps & CORE_CAP_SEND_REF) && iov[n - 1].iov_len >= CORE_REF_MIN) {
        int rc = p->tl->send_ref(r->peer, iov, n, total, r);
        if (rc == TERN_ERR_FAULT) r->fault = 1; /* the frame went out, unreadable bytes as 0 */
        if (rc != 1) return rc == TERN_ERR_FAULT ? 0 : rc;
        r->ref = 1;
        return 0;
    }
    int rc = r->nt ? p->tl->send_nt(r->peer, iov, n, total) : p->tl->send(r->peer, iov, n, total);
    if (rc == TERN_ERR_FAULT) r->fault = 1;
    return rc == TERN_ERR_FAULT ? 0 : rc;
}

/* A send's protocol is done: it completes, or waits for the transport to let go. */
static void core_send_finish(core_req_t *r)
{
    if (r->ref)
        r->state = CORE_RS_SENDING;
    else
        core_req_complete(r, TERN_OK);
}

void core_frame_sent(void *cookie, int err)
{
    core_req_t *r = cookie;
    if (!r->ref) return;
    if (err == TERN_ERR_FAULT) r->fault = 1;
    r->ref = 0;
    if (r->state == CORE_RS_SENDING) core_req_complete(r, TERN_OK);
}

static void core_pend_append(int dest, struct core_pend *pd)
{
    struct core_peer *p = &core.peers[dest];
    pd->next = NULL;
    if (p->pend_tail)
        p->pend_tail->next = pd;
    else {
        p->pend_head = pd;
        core.npending++;
        /* A thread asleep decided so while nothing was pending; now something waits for
         * room, which no doorbell announces: it must go back to polling. */
        if (__builtin_expect(core_mt, 0)) core_mt_wake(CORE_WAKE_ALL);
    }
    p->pend_tail = pd;
}

/* Send one frame of total bytes to dest now, or queue it until the transport has room. */
static int core_send_frame(int dest, const struct iovec *iov, int iovcnt, size_t total)
{
    struct core_peer *p = &core.peers[dest];
    if (p->failed) return TERN_ERR_PEER_FAILED;
    /* A frame to myself rings no doorbell: another thread may sleep waiting for it. */
    if (__builtin_expect(core_mt, 0) && dest == core.rank) core_mt_wake(CORE_WAKE_ALL);
    if (p->pend_head == NULL) {
        int rc = p->tl->send(dest, iov, iovcnt, total);
        if (rc != TERN_ERR_AGAIN) return rc;
    }
    struct core_pend *pd = malloc(sizeof *pd + total);
    if (pd == NULL) return TERN_ERR_NOMEM;
    pd->req = NULL;
    pd->len = total;
    tl_iov_copy(pd->frame, iov, iovcnt);
    core_pend_append(dest, pd);
    return 0;
}

static void core_send_ctrl_flags(int dest, uint8_t type, uint8_t flags, uint32_t sreq,
                                 uint32_t rreq)
{
    struct core_hdr h = {.type = type,
                         .flags = (uint8_t)(flags | core.peers[dest].adv_out),
                         .sreq = sreq,
                         .rreq = rreq};
    struct iovec iov = {&h, sizeof h};
    int rc = core_send_frame(dest, &iov, 1, sizeof h);
    if (rc && rc != TERN_ERR_PEER_FAILED)
        UTIL_ERROR("cannot send control frame %d to rank %d: %s", type, dest, tern_strerror(rc));
}

static void core_send_ctrl(int dest, uint8_t type, uint32_t sreq, uint32_t rreq)
{
    core_send_ctrl_flags(dest, type, 0, sreq, rreq);
}

/*
 * One DATA frame of a non-contiguous send, at most *n bytes from r->offset: gathered by
 * the transport from the user's blocks when they fill most of a frame in TL_MAX_IOV - 1
 * pieces, else packed into the core's scratch buffer (one frame, not the message) and
 * sent by copy. *n becomes the bytes the frame carries.
 */
static int core_send_data_lay(core_req_t *r, struct core_data *d, size_t *n)
{
    struct core_cur c = r->cur;
    core_cur_seek(r->lay, &c, r->offset);
    struct iovec iov[TL_MAX_IOV];
    iov[0] = (struct iovec){d, sizeof *d};
    size_t got;
    int k = core_cur_iov(r->lay, r->buf, &c, *n, iov + 1, TL_MAX_IOV - 1, &got);
    if (got == *n || got >= *n / 2) {
        int rc = core_req_send(r, iov, k + 1, sizeof *d + got);
        if (rc == 0) {
            r->cur = c;
            *n = got;
        }
        return rc;
    }
    void *tmp = core_scratch(*n);
    if (tmp == NULL) return TERN_ERR_NOMEM;
    c = r->cur;
    core_lay_gather(r->lay, r->buf, &c, r->offset, tmp, *n);
    iov[1] = (struct iovec){tmp, *n};
    int rc = core.peers[r->peer].tl->send(r->peer, iov, 2, sizeof *d + *n);
    if (rc == 0) r->cur = c;
    return rc;
}

/*
 * Put a send request's next frames on the wire: the eager frame or the RTS for a
 * request that has not started, or DATA frames for one that streams.
 * Returns 0 (nothing more to push now), TERN_ERR_AGAIN (transport full) or an error.
 */
static int core_send_push(core_req_t *r)
{
    struct core_peer *p = &core.peers[r->peer];
    if (r->state == CORE_RS_QUEUED) {
        int rc;
        if (!r->rndv) {
            /* rreq, unused in EAGER, carries my eager sends' cost at adaptive sizes; one
             * copy in CORE_ADAPT_SAMPLE is timed, and every one of a burst. */
            int adaptive = core_adapt_size(p, r->len);
            int k = adaptive ? core_adapt_class(r->len, p->adapt_min) : 0;
            struct core_adapt_class *c = adaptive ? &p->adapt.c[k] : NULL;
            struct core_adapt_avg *in = adaptive ? (r->nt ? &c->in_nt : &c->in) : NULL;
            int timed = adaptive && core_adapt_sampled(&p->adapt_copies,
                                                       core_adapt_in_burst(&p->adapt_tally[k]));
            struct core_hdr h = {.type = CORE_FRAME_EAGER,
                                 .flags = (uint8_t)((r->sync ? CORE_FLAG_SYNC : 0) |
                                                    (r->nt ? CORE_FLAG_NT : 0) | p->adv_out),
                                 .ctx = r->ctx,
                                 .tag = r->tag,
                                 .sreq = r->id,
                                 .rreq = adaptive ? core_adapt_encode(in) : 0};
            struct iovec iov[2] = {{&h, sizeof h}, {r->buf, r->len}};
            double t0 = timed ? core_adapt_clock() : 0;
            rc = core_req_send(r, iov, r->len ? 2 : 1, sizeof h + r->len);
            if (rc) return rc;
            if (timed) core_adapt_fold(in, core_adapt_clock() - t0, r->len);
            if (r->sync)
                r->state = CORE_RS_WAIT_ACK;
            else
                core_send_finish(r);
            return 0;
        }
        /* Receives from that peer already posted make the traffic two-way: they, and the
         * peer's match of this message, are pulled, never streamed (core_recv_rndv). */
        if (p->posted_from > p->recv_both) p->recv_both = p->posted_from;
        struct core_rts m = {
            .h = {.type = CORE_FRAME_RTS,
                  .flags = (uint8_t)(p->adv_out | (p->posted_from ? CORE_FLAG_BOTH : 0)),
                  .ctx = r->ctx,
                  .tag = r->tag,
                  .sreq = r->id},
            .len = r->len,
            .addr = (uint64_t)(uintptr_t)r->buf};
        if (__builtin_expect(r->lay != NULL, 0)) {
            /* Non-contiguous: the receiver pulls from my blocks, reading their list. */
            struct core_rlay rl = {.blk = (uint64_t)(uintptr_t)r->lay->blk,
                                   .extent = r->lay->extent,
                                   .size = r->lay->size,
                                   .nblk = (uint32_t)r->lay->nblk};
            m.h.flags |= CORE_FLAG_LAYOUT;
            struct iovec v[2] = {{&m, sizeof m}, {&rl, sizeof rl}};
            rc = p->tl->send(r->peer, v, 2, sizeof m + sizeof rl);
        } else {
            struct iovec iov = {&m, sizeof m};
            rc = p->tl->send(r->peer, &iov, 1, sizeof m);
        }
        if (rc) return rc;
        r->state = CORE_RS_WAIT_CTS;
        p->rndv_inflight++;
        return 0;
    }
    if (r->state == CORE_RS_STREAM) {
        while (r->offset < r->len) {
            size_t n = r->len - r->offset;
            if (n > p->chunk) n = p->chunk;
            struct core_data d = {.h = {.type = CORE_FRAME_DATA, .sreq = r->id, .rreq = r->rsreq},
                                  .offset = r->offset};
            int rc;
            if (__builtin_expect(r->lay != NULL, 0)) {
                rc = core_send_data_lay(r, &d, &n);
            } else {
                struct iovec iov[2] = {{&d, sizeof d}, {(char *)r->buf + r->offset, n}};
                rc = core_req_send(r, iov, 2, sizeof d + n);
            }
            if (rc) return rc;
            r->offset += n;
        }
        p->rndv_inflight--;
        core_send_finish(r);
    }
    return 0;
}

/* Push r now if its peer has nothing queued, else queue it behind the rest. */
static int core_send_start(core_req_t *r)
{
    struct core_peer *p = &core.peers[r->peer];
    if (p->pend_head == NULL) {
        int rc = core_send_push(r);
        if (rc != TERN_ERR_AGAIN) return rc;
    }
    struct core_pend *pd = malloc(sizeof *pd);
    if (pd == NULL) return TERN_ERR_NOMEM;
    pd->req = r;
    pd->len = 0;
    core_pend_append(r->peer, pd);
    return 0;
}

void core_pend_drain(void)
{
    for (int dest = 0; dest < core.size && core.npending; dest++) {
        struct core_peer *p = &core.peers[dest];
        if (p->pend_head == NULL) continue;
        while (p->pend_head) {
            struct core_pend *pd = p->pend_head;
            int rc;
            if (pd->req) {
                rc = core_send_push(pd->req);
            } else {
                struct iovec iov = {pd->frame, pd->len};
                rc = p->tl->send(dest, &iov, 1, pd->len);
            }
            if (rc == TERN_ERR_AGAIN) break;
            if (rc < 0 && pd->req) core_req_complete(pd->req, rc);
            p->pend_head = pd->next;
            free(pd);
        }
        if (p->pend_head == NULL) {
            p->pend_tail = NULL;
            core.npending--;
        }
    }
}

/*
 * Send a message of len bytes to dest at once as the one EAGER frame core_send_push would
 * send, with none of a request's protocol around it (core_send_now, and core_isend_do's
 * short cut), when it may: eager, at a size the adaptive rules leave alone (neither timed
 * nor advised), nothing queued to that peer before it (order), copied by the transport
 * (not sent by reference), no trace being written, and not to myself from a threaded
 * process (that needs a wake-up). sreq names the request (0: none, so that nothing can
 * cancel or acknowledge it). Returns TERN_ERR_AGAIN having done nothing (it may not, or
 * the transport has no room), else the transport's answer: 0, TERN_ERR_FAULT (sent,
 * unreadable bytes as 0) or another error; the run of sends is counted as core_isend_do
 * counts it.
 */
static inline int core_eager_now(struct core_peer *p, int dest, const void *buf, size_t len,
                                 int tag, uint16_t ctx, uint32_t sreq)
{
    if (len > p->eager_max || core_adapt_size(p, len) || p->pend_head != NULL || p->failed ||
        (len >= CORE_REF_MIN && (p->caps & CORE_CAP_SEND_REF)) || TRACE_ON() ||
        (core_mt && dest == core.rank))
        return TERN_ERR_AGAIN;
    struct core_hdr h = {
        .type = CORE_FRAME_EAGER, .flags = p->adv_out, .ctx = ctx, .tag = tag, .sreq = sreq};
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)buf, len}};
    int rc = p->tl->send(dest, iov, len ? 2 : 1, sizeof h + len);
    if (rc != TERN_ERR_AGAIN) p->sent_run++;
    return rc;
}

/*
 * Large eager messages to a receiver that posts in time (peers with no get(): tcp). A
 * rendezvous costs a round trip of small frames before any data moves: 10-14 us over
 * loopback tcp, 10-25% of a 256 KiB-2 MiB ping-pong. A receiver whose large messages from
 * a peer (above eager_max) found their receive posted CORE_BIG_RUN times in a row says so
 * in every frame to it (the advice bits: CORE_FLAG_ADV with ADV_FROM CORE_ADAPT_NEVER,
 * "none by rendezvous"; ADV_FROM 0 withdraws it at the first that did not). The sender
 * then sends those up to big_max eagerly, read straight into the posted buffer (place()).
 * One at a time: none while another has gone since the last frame heard from that peer,
 * so a receiver that stops posting buffers only the few sent before its withdrawal is
 * heard, and a one-way stream, where the rendezvous lets both sides copy at once, keeps
 * it after its first message.
 */
#define CORE_BIG_RUN 2

/* A frame of type `type` (EAGER or RTS) for a message of len bytes came from peer p,
 * `posted`: its receive was waiting. Counts only large ones (an RTS, or eager above
 * eager_max: small eager frames, the hot path, stop at the first test). */
static inline void core_big_arrived(struct core_peer *p, uint8_t type, uint64_t len, int posted)
{
    if ((type == CORE_FRAME_EAGER && len <= p->eager_max) || p->big_max == 0) return;
    if (!posted)
        p->big_posted = 0;
    else if (p->big_posted < CORE_BIG_RUN)
        p->big_posted++;
    p->adv_out =
        (uint8_t)(CORE_FLAG_ADV |
                  (p->big_posted >= CORE_BIG_RUN ? CORE_ADAPT_NEVER << CORE_FLAG_ADV_SHIFT : 0));
}

/* Advice bits heard from a peer with no get(): may large messages go eagerly? */
static inline int core_big_welcome(uint8_t heard)
{
    return (heard & CORE_FLAG_ADV) &&
           ((heard & CORE_FLAG_ADV_FROM) >> CORE_FLAG_ADV_SHIFT) == CORE_ADAPT_NEVER;
}

/* A frame from src came, with header flags `flags`. */
static inline void core_frame_heard(int src, uint8_t flags)
{
    struct core_peer *p = &core.peers[src];
    if (flags & CORE_FLAG_ADV) p->adv_heard = (uint8_t)(flags & CORE_FLAG_ADV_BITS);
    p->big_unheard = 0;
}

/* Start a send of len bytes from buf (lay: from the blocks of a layout, rendezvous only). */
static inline int core_isend_do(const void *buf, const struct core_layout *lay, size_t len,
                                int dest, int tag, uint16_t ctx, int sync, core_req_t **out)
{
    struct core_peer *p = &core.peers[dest];
    if (p->failed) return TERN_ERR_PEER_FAILED;
    core_req_t *r = core_req_alloc(CORE_REQ_SEND);
    if (r == NULL) return TERN_ERR_NOMEM;
    r->peer = dest;
    r->tag = tag;
    r->ctx = ctx;
    r->buf = (void *)buf;
    r->len = len;
    r->lay = lay;
    if (__builtin_expect(lay != NULL, 0)) r->cur = (struct core_cur){0};
    r->sync = (uint8_t)sync;
    /* A message that may go at once completes here (the EAGER frame core_send_push would
     * send, without its steps): at 8 B about 85 of MPI_Isend's 570 instructions. */
    int now =
        !sync && lay == NULL ? core_eager_now(p, dest, buf, len, tag, ctx, r->id) : TERN_ERR_AGAIN;
    if (now != TERN_ERR_AGAIN) {
        if (now != 0 && now != TERN_ERR_FAULT) {
            core_req_free(r);
            return now;
        }
        core_req_complete(r, now);
        *out = r;
        return 0;
    }
    /* Between adapt_min and adapt_max a message goes as the receiver advises from its
     * timings of both protocols (adapt.h); so does one up to adapt_top (stream_max) in a
     * one-way stream (a third message in a row to a peer I expect nothing from), where
     * which protocol wins moves with the host: eager lets both sides copy at once, and a
     * pull of a buffer the receiver's cache still holds is one local copy. A 32-64 KiB
     * stream was 2x faster than with the rule below in the host's fast phase and 3-4x
     * loaded (ahead of MPICH 4 and Open MPI 5 in both); in ping-pongs above adapt_max
     * the pull (with the sender's help) stays: adaptive there lost 34% loaded at 64 KiB
     * (2026-11-28, docs/PERFORMANCE.md). The advice is followed whole: when it says rendezvous, no
     * message goes eagerly beside a pull in flight, so the pulls the receiver times are
     * what a run of them costs.
     * Otherwise (adaptive sizes off, or a message above them): alone, or with traffic both
     * ways, a message above eager_max goes by single-copy rendezvous, but in a one-way
     * stream one up to stream_max goes eagerly while a rendezvous to the peer is still in
     * flight. A layout always goes by rendezvous (its caller checked the size). */
    int big = len > p->eager_max;
    int advised =
        len > p->adapt_min &&
        (len <= p->adapt_max || (len <= p->adapt_top && p->posted_from == 0 && p->sent_run >= 2));
    if (advised) {
        int k = core_adapt_class(len, p->adapt_min);
        big = core_adapt_pick(p->adv_heard, k, big, len, &p->adapt_tally[k]);
        r->nt = !big && lay == NULL && len <= p->nt_max &&
                core_adapt_nt(p->adv_heard, &p->adapt_tally[k]);
        p->adapt.sent_mark = p->adapt.received;
    }
    if (big && p->big_max && len <= p->big_max && lay == NULL && !p->big_unheard &&
        p->posted_from == 0 && core_big_welcome(p->adv_heard)) {
        big = 0;
        p->big_unheard = 1;
    }
    p->sent_run++;
    r->rndv =
        lay != NULL ||
        (big && (advised || len > p->stream_max || p->rndv_inflight == 0 || p->posted_from > 0));
    r->state = CORE_RS_QUEUED;
    uint64_t t_trace = TRACE_ON() ? trace_send_clock() : 0;
    int rc = core_send_start(r);
    if (rc) {
        core_req_free(r);
        return rc;
    }
    /* A frame to myself rings no doorbell: another thread may sleep waiting for it. */
    if (__builtin_expect(core_mt, 0) && dest == core.rank) core_mt_wake(CORE_WAKE_ALL);
    if (TRACE_ON()) trace_msg_at(t_trace, TRACE_MSG_SEND, dest, tag, ctx, len, r->id, 0);
    *out = r;
    return 0;
}

int core_send_now(const void *buf, size_t len, int dest, int tag, uint16_t ctx)
{
    return core_eager_now(&core.peers[dest], dest, buf, len, tag, ctx, 0);
}

int core_isend(const void *buf, size_t len, int dest, int tag, uint16_t ctx, int sync,
               core_req_t **out)
{
    return core_isend_do(buf, NULL, len, dest, tag, ctx, sync, out);
}

int core_isend_lay(const void *buf, const struct core_layout *lay, size_t len, int dest, int tag,
                   uint16_t ctx, int sync, core_req_t **out)
{
    if (len <= core.peers[dest].eager_max) return TERN_ERR_UNSUPPORTED;
    return core_isend_do(buf, lay, len, dest, tag, ctx, sync, out);
}

int core_isendv(const struct iovec *iov, int iovcnt, size_t len, int dest, int tag, uint16_t ctx,
                int sync, core_req_t **out)
{
    struct core_peer *p = &core.peers[dest];
    if (iovcnt > CORE_SENDV_MAX_IOV || len > p->eager_max ||
        sizeof(struct core_hdr) + len > p->max_frame)
        return TERN_ERR_UNSUPPORTED;
    if (p->failed) return TERN_ERR_PEER_FAILED;
    core_req_t *r = core_req_alloc(CORE_REQ_SEND);
    if (r == NULL) return TERN_ERR_NOMEM;
    r->peer = dest;
    r->tag = tag;
    r->ctx = ctx;
    r->buf = NULL;
    r->len = len;
    r->sync = (uint8_t)sync;
    r->rndv = 0;
    struct core_hdr h = {.type = CORE_FRAME_EAGER,
                         .flags = (uint8_t)((sync ? CORE_FLAG_SYNC : 0) | p->adv_out),
                         .ctx = ctx,
                         .tag = tag,
                         .sreq = r->id};
    struct iovec v[TL_MAX_IOV];
    v[0] = (struct iovec){&h, sizeof h};
    int n = 1;
    for (int i = 0; i < iovcnt; i++)
        if (iov[i].iov_len) v[n++] = iov[i];
    /* Sent now, or copied whole behind what waits for this peer (order is kept). */
    uint64_t t_trace = TRACE_ON() ? trace_send_clock() : 0;
    int rc = core_send_frame(dest, v, n, sizeof h + len);
    if (rc) {
        core_req_free(r);
        return rc;
    }
    if (TRACE_ON()) trace_msg_at(t_trace, TRACE_MSG_SEND, dest, tag, ctx, len, r->id, 0);
    if (sync)
        r->state = CORE_RS_WAIT_ACK;
    else
        core_req_complete(r, TERN_OK);
    *out = r;
    return 0;
}

/*
 * Is one vectored pull (getv) of n bytes worth it next to streaming them through the
 * transport (the sender gathers frames, I scatter them)? The kernel pins the sender's
 * pages once per remote piece (measured on Linux 6.x, x86: ~130 ns a piece, ~25 ns a
 * local one, ~10 GB/s of copy), while streaming costs two pipelined copies: a pull pays
 * when 1/avg_remote + 1/(5 avg_local) <= 1/TERN_SHM_GETV_MIN_BLOCK.
 */
static int core_getv_pays(const struct core_layout *mine, const struct core_rlay *rl, size_t n)
{
    double min = (double)util_tun.shm_getv_min_block;
    if (min <= 0) return 1;
    double ar = rl ? (double)rl->size / rl->nblk : (double)n;
    double al = mine ? (double)mine->size / mine->nblk : (double)n;
    if (ar <= 0 || al <= 0) return 1;
    return 1 / ar + 1 / (5 * al) <= 1 / min;
}

/* A matched receive pulls (or asks for) the data of a rendezvous message; `both`: its RTS
 * said the sender is receiving from me too (CORE_FLAG_BOTH). */
static void core_recv_rndv(core_req_t *r, int src, uint32_t sreq, uint64_t len, uint64_t addr,
                           const struct core_rlay *rl, int both)
{
    struct core_peer *p = &core.peers[src];
    /* Posted before a send of mine to src started? (Receives of those matched by eager
     * messages meanwhile leave the count: it never exceeds the ones still posted.) */
    if (p->recv_both > p->posted_from + 1) p->recv_both = p->posted_from + 1;
    if (p->recv_both > 0) {
        p->recv_both--;
        both = 1;
    }
    r->bytes = len;
    r->rsreq = sreq;
    size_t n = len < r->len ? len : r->len;
    int err = len > r->len ? TERN_ERR_TRUNCATE : TERN_OK;
    if (p->failed) { /* the data is in a process that is gone */
        core_req_complete(r, TERN_ERR_PEER_FAILED);
        return;
    }
    int plain = __builtin_expect(r->lay == NULL && rl == NULL, 1);
    r->rv_t0 = 0;
    /* Large enough to be pulled or streamed as the timings of both say (adapt.h), and
     * alone: not while my own rendezvous sends to that peer are in flight, nor with more
     * receives posted for it (a window), nor where the traffic goes both ways (`both`:
     * the sender had receives from me posted, or this receive was posted before a send of
     * mine to it started, as in a halo exchange or a sendrecv, whose own send may not be
     * posted yet). There neither core is idle, so streaming's second copy is pure cost
     * (two streams at once ran 25-45x a pull), and a cooperative pull shares the one copy
     * between them. */
    struct core_rv_class *rv = plain && p->rv_min && n > p->rv_min && n == len && !both &&
                                       p->rndv_inflight == 0 && p->posted_from == 0
                                   ? &p->rv[core_adapt_class(n, p->rv_min)]
                                   : NULL;
    int way = rv ? core_rv_pick(rv) : CORE_RV_PULL;
    if ((p->caps & CORE_CAP_GET) && way == CORE_RV_PULL &&
        (plain || core_getv_pays(r->lay, rl, n))) {
        int timed = plain && core_adapt_size(p, n);
        double t0 = timed || rv ? core_adapt_clock() : 0;
        int rc = plain ? p->tl->get(src, r->buf, addr, n) : core_lay_get(src, r, rl, addr, n);
        if (timed && rc == 0) core_adapt_took(src, 1, t0, n);
        if (rv && rc == 0) core_rv_took(rv, CORE_RV_PULL, (core_adapt_clock() - t0) / (double)n);
        if (rc == TERN_ERR_FAULT) {
            /* The sender's buffer cannot be read: its send fails (FIN says so), and this
             * receive, which did nothing wrong, gets the message with undefined contents
             * (zeros where a plain buffer is concerned). */
            if (plain && n) memset(r->buf, 0, n);
            core_send_ctrl_flags(src, CORE_FRAME_FIN, CORE_FLAG_FAULT, sreq, 0);
            core_req_complete(r, err);
            return;
        }
        if (rc != TERN_ERR_UNSUPPORTED) {
            /* FIN even on failure, so the sender is never left waiting. */
            core_send_ctrl(src, CORE_FRAME_FIN, sreq, 0);
            core_req_complete(r, rc ? rc : err);
            return;
        }
        p->caps &= ~CORE_CAP_GET; /* not for this peer after all: stream from now on */
        p->rv_min = 0;
        rv = NULL;
    }
    r->state = CORE_RS_STREAM;
    r->offset = 0;
    if (rv) r->rv_t0 = core_adapt_clock(); /* a timed stream (core_rv_stream_done) */
    core_send_ctrl(src, CORE_FRAME_CTS, sreq, r->id);
}

/* The last frame of timed stream r from src is in: its time from its CTS, per byte. (Only
 * a message alone is timed, so nothing else of the peer's waits ahead of its frames.) */
static void core_rv_stream_done(int src, core_req_t *r)
{
    struct core_peer *p = &core.peers[src];
    double ticks = core_adapt_clock() - r->rv_t0;
    r->rv_t0 = 0;
    /* (r->bytes > rv_min, or it would not be timed; rv_min is 0 if pulls failed since.) */
    if (p->rv_min == 0) return;
    core_rv_took(&p->rv[core_adapt_class(r->bytes, p->rv_min)], CORE_RV_STREAM,
                 ticks / (double)r->bytes);
}

/* An eager message for receive r; `framed`: its payload is still in src's frame (not an
 * unexpected message's copy), so a copy of an adaptive size is timed. */
static void core_recv_eager(core_req_t *r, int src, const struct core_hdr *h, const void *payload,
                            size_t plen, int framed)
{
    size_t n = plen < r->len ? plen : r->len;
    if (__builtin_expect(r->lay != NULL, 0))
        core_lay_scatter(r->lay, r->buf, &r->cur, 0, payload, n);
    else if (framed && n)
        core_frame_copy(src, h->flags, r->buf, payload, n);
    else if (n)
        util_copy(r->buf, payload, n);
    r->bytes = plen;
    if (h->flags & CORE_FLAG_SYNC) core_send_ctrl(src, CORE_FRAME_ACK, h->sreq, 0);
    core_req_complete(r, plen > r->len ? TERN_ERR_TRUNCATE : TERN_OK);
}

/* Receive r takes the unexpected message u (already out of its queue) and frees it. */
static void core_recv_unexp(core_req_t *r, struct core_unexp *u)
{
    r->src = u->src;
    r->msg_tag = u->tag;
    /* An eager message completes now: its DONE record says it all (one record less). */
    if (TRACE_ON() && u->type != CORE_FRAME_EAGER)
        trace_msg(TRACE_MSG_MATCH, u->src, u->tag, r->ctx, u->len, r->id, 0);
    if (u->type == CORE_FRAME_EAGER) {
        struct core_hdr h = {.flags = u->flags, .sreq = u->sreq};
        core_recv_eager(r, u->src, &h, u->data, u->len, 0);
    } else {
        struct core_rlay rl;
        if (u->flags & CORE_FLAG_LAYOUT) memcpy(&rl, u->data, sizeof rl);
        core_recv_rndv(r, u->src, u->sreq, u->len, u->addr,
                       (u->flags & CORE_FLAG_LAYOUT) ? &rl : NULL,
                       (u->flags & CORE_FLAG_BOTH) != 0);
    }
    free(u);
}

static inline int core_irecv_do(void *buf, const struct core_layout *lay, size_t cap, int src,
                                int tag, uint16_t ctx, struct tern_comm *comm, core_req_t **out)
{
    struct core_match *m = core_match_get(ctx);
    if (m == NULL) return TERN_ERR_NOMEM;
    core_req_t *r = core_req_alloc(CORE_REQ_RECV);
    if (r == NULL) return TERN_ERR_NOMEM;
    r->lay = lay;
    if (__builtin_expect(lay != NULL, 0)) r->cur = (struct core_cur){0};
    r->peer = src;
    r->tag = tag;
    r->ctx = ctx;
    r->comm = comm;
    r->buf = buf;
    r->len = cap;
    struct core_unexp *u = core_match_find_unexp(m, src, tag, 1);
    if (u == NULL && src >= 0 && core.peers[src].failed) {
        core_req_complete(r, TERN_ERR_PEER_FAILED); /* nothing more will come */
    } else if (u == NULL) {
        core_match_post(m, r);
    } else {
        core_recv_unexp(r, u);
    }
    *out = r;
    return 0;
}

/* ---- matched probe (MPI_Mprobe / MPI_Mrecv) ----------------------------------------
 * A probe that matches takes the message out of its unexpected queue, so no other
 * receive or probe can match it; the receive of that very message comes later. */

int core_improbe(int src, int tag, uint16_t ctx, struct core_unexp **out)
{
    struct core_match *m = core_match_get(ctx);
    if (m == NULL) return TERN_ERR_NOMEM;
    *out = core_match_find_unexp(m, src, tag, 1);
    return 0;
}

int core_imrecv(struct core_unexp *u, void *buf, size_t cap, uint16_t ctx, struct tern_comm *comm,
                core_req_t **out)
{
    core_req_t *r = core_req_alloc(CORE_REQ_RECV);
    if (r == NULL) return TERN_ERR_NOMEM;
    r->peer = u->src;
    r->tag = u->tag;
    r->ctx = ctx;
    r->comm = comm;
    r->buf = buf;
    r->len = cap;
    core_recv_unexp(r, u);
    *out = r;
    return 0;
}

int core_irecv(void *buf, size_t cap, int src, int tag, uint16_t ctx, struct tern_comm *comm,
               core_req_t **out)
{
    return core_irecv_do(buf, NULL, cap, src, tag, ctx, comm, out);
}

int core_irecv_lay(void *buf, const struct core_layout *lay, size_t cap, int src, int tag,
                   uint16_t ctx, struct tern_comm *comm, core_req_t **out)
{
    return core_irecv_do(buf, lay, cap, src, tag, ctx, comm, out);
}

int core_iprobe(int src, int tag, uint16_t ctx, int *flag, int *out_src, int *out_tag,
                size_t *out_len)
{
    struct core_match *m = core_match_get(ctx);
    if (m == NULL) return TERN_ERR_NOMEM;
    struct core_unexp *u = core_match_find_unexp(m, src, tag, 0);
    *flag = u != NULL;
    if (u) {
        *out_src = u->src;
        *out_tag = u->tag;
        *out_len = u->len;
    }
    return 0;
}

/* Keep an arrived message for a receive not yet posted. */
static void core_unexp_add(struct core_match *m, int src, const struct core_hdr *h,
                           const void *payload, size_t plen, uint64_t len, uint64_t addr)
{
    struct core_unexp *u = malloc(sizeof *u + plen);
    if (u == NULL) core_fatal("out of memory queueing an unexpected message");
    u->src = src;
    u->tag = h->tag;
    u->type = h->type;
    u->flags = h->flags;
    u->sreq = h->sreq;
    u->len = len;
    u->addr = addr;
    if (plen) core_frame_copy(src, h->flags, u->data, payload, plen);
    core_match_append_unexp(m, u);
}

/* An EAGER or RTS frame: hand it to the first posted receive that accepts it, or keep
 * it as unexpected. `len` is the whole message, `plen` the payload carried here. */
static void core_frame_match(int src, const struct core_hdr *h, const void *payload, size_t plen,
                             uint64_t len, uint64_t addr)
{
    struct core_match *m = core_match_get(h->ctx);
    if (m == NULL) core_fatal("out of memory for a matching queue");
    core_req_t *r = core_match_find_posted(m, src, h->tag);
    core_big_arrived(&core.peers[src], h->type, len, r != NULL);
    if (r == NULL) {
        core_unexp_add(m, src, h, payload, plen, len, addr);
        return;
    }
    r->src = src;
    r->msg_tag = h->tag;
    if (TRACE_ON() && h->type != CORE_FRAME_EAGER)
        trace_msg(TRACE_MSG_MATCH, src, h->tag, h->ctx, len, r->id, 0);
    if (h->type == CORE_FRAME_EAGER)
        core_recv_eager(r, src, h, payload, plen, 1);
    else
        core_recv_rndv(r, src, h->sreq, len, addr, (h->flags & CORE_FLAG_LAYOUT) ? payload : NULL,
                       (h->flags & CORE_FLAG_BOTH) != 0);
}

/*
 * Active messages that arrive before their handler is registered. A layer registers its
 * handler in its own start-up, after the core's start-up fence, so a faster peer's first
 * message can arrive while this rank is still between the two and progresses (the
 * tracer's clock alignment does; so may a transport finishing its set-up). Such messages
 * wait here, in arrival order, and core_am_register delivers them. Bounded: past
 * CORE_AM_EARLY_MAX bytes they are dropped with an error, as any unknown frame is.
 */
#define CORE_AM_EARLY_MAX ((size_t)64 << 20)
struct core_am_early {
    struct core_am_early *next;
    int src, handler;
    size_t len;
    unsigned char data[];
};
static struct core_am_early *core_am_early_head, **core_am_early_tail = &core_am_early_head;
static size_t core_am_early_bytes;

static int core_am_early_keep(int src, int handler, const void *payload, size_t len)
{
    if (len > CORE_AM_EARLY_MAX - core_am_early_bytes) return 0;
    struct core_am_early *e = malloc(sizeof *e + len);
    if (e == NULL) return 0;
    e->next = NULL;
    e->src = src;
    e->handler = handler;
    e->len = len;
    if (len) util_copy(e->data, payload, len);
    *core_am_early_tail = e;
    core_am_early_tail = &e->next;
    core_am_early_bytes += len;
    return 1;
}

void core_frame_recv(int src, const void *frame, size_t len)
{
    struct core_hdr h;
    if (len < sizeof h) {
        UTIL_ERROR("dropping a %zu-byte frame from rank %d: shorter than a header", len, src);
        return;
    }
    memcpy(&h, frame, sizeof h);
    core_frame_heard(src, h.flags);
    const unsigned char *payload = (const unsigned char *)frame + sizeof h;
    size_t plen = len - sizeof h;
    switch (h.type) {
    case CORE_FRAME_EAGER:
        core.peers[src].sent_run = 0;
        if (h.rreq && core_adapt_size(&core.peers[src], plen)) {
            struct core_peer *p = &core.peers[src];
            struct core_adapt_class *c = &p->adapt.c[core_adapt_class(plen, p->adapt_min)];
            *((h.flags & CORE_FLAG_NT) ? &c->peer_in_nt : &c->peer_in) = core_adapt_decode(h.rreq);
        }
        core_frame_match(src, &h, payload, plen, plen, 0);
        return;
    case CORE_FRAME_RTS: {
        core.peers[src].sent_run = 0;
        struct core_rts m;
        if (len < sizeof m) break;
        memcpy(&m, frame, sizeof m);
        if (h.flags & CORE_FLAG_LAYOUT) { /* the sender's layout follows, kept if unexpected */
            struct core_rlay rl;
            if (len < sizeof m + sizeof rl) break;
            memcpy(&rl, (const char *)frame + sizeof m, sizeof rl);
            core_frame_match(src, &h, &rl, sizeof rl, m.len, m.addr);
            return;
        }
        core_frame_match(src, &h, NULL, 0, m.len, m.addr);
        return;
    }
    case CORE_FRAME_CTS: {
        core_req_t *r = core_req_lookup(h.sreq, CORE_REQ_SEND);
        if (r == NULL || r->state != CORE_RS_WAIT_CTS || r->peer != src) break;
        r->state = CORE_RS_STREAM;
        r->offset = 0;
        r->rsreq = h.rreq;
        int rc = core_send_start(r);
        if (rc) core_req_complete(r, rc);
        return;
    }
    case CORE_FRAME_DATA: {
        struct core_data d;
        if (len < sizeof d) break;
        memcpy(&d, frame, sizeof d);
        core_req_t *r = core_req_lookup(h.rreq, CORE_REQ_RECV);
        if (r == NULL || r->state != CORE_RS_STREAM || r->src != src) break;
        size_t n = len - sizeof d;
        const unsigned char *bytes = (const unsigned char *)frame + sizeof d;
        if (d.offset > r->bytes || n > r->bytes - d.offset) break;
        if (d.offset < r->len) {
            size_t keep = r->len - d.offset < n ? r->len - d.offset : n;
            if (__builtin_expect(r->lay != NULL, 0))
                core_lay_scatter(r->lay, r->buf, &r->cur, d.offset, bytes, keep);
            else
                util_copy((char *)r->buf + d.offset, bytes, keep);
        }
        r->offset += n;
        if (r->offset >= r->bytes) {
            if (r->rv_t0 != 0) core_rv_stream_done(src, r);
            core_req_complete(r, r->bytes > r->len ? TERN_ERR_TRUNCATE : TERN_OK);
        }
        return;
    }
    case CORE_FRAME_FIN: {
        core_req_t *r = core_req_lookup(h.sreq, CORE_REQ_SEND);
        if (r == NULL || r->state != CORE_RS_WAIT_CTS || r->peer != src) break;
        core.peers[src].rndv_inflight--;
        core_req_complete(r, (h.flags & CORE_FLAG_FAULT) ? TERN_ERR_FAULT : TERN_OK);
        return;
    }
    case CORE_FRAME_ACK: {
        core_req_t *r = core_req_lookup(h.sreq, CORE_REQ_SEND);
        if (r == NULL || r->state != CORE_RS_WAIT_ACK || r->peer != src) break;
        core_send_finish(r);
        return;
    }
    case CORE_FRAME_AM: {
        if (h.tag >= 0 && h.tag < CORE_AM_MAX && core.am[h.tag]) {
            core.am[h.tag](src, payload, plen);
            return;
        }
        if (h.tag >= 0 && h.tag < CORE_AM_MAX && core_am_early_keep(src, h.tag, payload, plen))
            return;
        break;
    }
    default:
        break;
    }
    UTIL_ERROR("dropping a malformed or unexpected frame (type %u, %zu bytes) from rank %d",
               (unsigned)h.type, len, src);
}

/* Pieces a placed frame into a non-contiguous receive may take before it is read into
 * the transport's buffer and scattered from there instead: reading a socket into a
 * long list of small blocks costs more than one copy. */
#define CORE_PLACE_MAX_IOV 4096
#define CORE_PLACE_MIN_AVG 512

/* The pieces of bytes [pos, pos + n) of non-contiguous receive r, in peer p's place
 * array: their count, or 0 when they are too many or too small. */
static int core_place_lay(struct core_peer *p, core_req_t *r, size_t pos, size_t n)
{
    struct core_cur c = r->cur;
    core_cur_seek(r->lay, &c, pos);
    int k = 0;
    size_t done = 0;
    while (done < n) {
        if (k == p->piov_cap) {
            if (k >= CORE_PLACE_MAX_IOV) return 0;
            int cap = k ? 2 * k : 64;
            struct iovec *v = realloc(p->piov, (size_t)cap * sizeof *v);
            if (v == NULL) return 0;
            p->piov = v;
            p->piov_cap = cap;
        }
        size_t got;
        k += core_cur_iov(r->lay, r->buf, &c, n - done, p->piov + k, p->piov_cap - k, &got);
        done += got;
    }
    if (k == 0 || n / (size_t)k < CORE_PLACE_MIN_AVG) return 0;
    r->cur = c;
    return k;
}

/*
 * place(): the head of a frame from src is in (transport.h). Answer the user buffer for
 * an EAGER frame that matches a posted receive and fits it, or for a DATA frame of a
 * matched rendezvous that fits; 0 otherwise (the frame then comes through recv, which
 * handles truncation, unexpected messages and malformed frames as always). The head
 * holds the 16-byte header and 8 more bytes: a DATA offset, or an EAGER payload's start.
 * A non-contiguous receive gets the list of its blocks the bytes go to.
 */
int core_frame_place(int src, const void *head, size_t hlen, size_t len, struct iovec **iov)
{
    struct core_data d;
    if (hlen < sizeof d || len < hlen) return 0;
    memcpy(&d, head, sizeof d);
    struct core_peer *p = &core.peers[src];
    if (p->placing) return 0;
    if (d.h.type == CORE_FRAME_EAGER) {
        struct core_match *m = core.match[d.h.ctx];
        size_t plen = len - sizeof(struct core_hdr);
        if (m == NULL || m->posted_head == NULL) return 0;
        core_req_t *r = core_match_peek_posted(m, src, d.h.tag);
        /* Truncation is left to recv(), which reports it as always. */
        if (r == NULL || plen > r->len) return 0;
        size_t have = hlen - sizeof d.h;
        int k = 1;
        if (__builtin_expect(r->lay != NULL, 0)) {
            k = core_place_lay(p, r, have, plen - have);
            if (k == 0) return 0;
            core_lay_scatter(r->lay, r->buf, &(struct core_cur){0}, 0,
                             (const char *)head + sizeof d.h, have);
            *iov = p->piov;
        } else {
            util_copy(r->buf, (const char *)head + sizeof d.h, have);
            p->place1 = (struct iovec){(char *)r->buf + have, plen - have};
            *iov = &p->place1;
        }
        core_match_unpost(m, r);
        core_big_arrived(p, CORE_FRAME_EAGER, plen, 1);
        r->src = src;
        r->msg_tag = d.h.tag;
        r->bytes = plen;
        r->sync = (d.h.flags & CORE_FLAG_SYNC) != 0;
        r->rsreq = d.h.sreq;
        r->state = CORE_RS_STREAM;
        p->placing = r;
        return k;
    }
    if (d.h.type == CORE_FRAME_DATA) {
        core_req_t *r = core_req_lookup(d.h.rreq, CORE_REQ_RECV);
        size_t n = len - sizeof d;
        if (r == NULL || r->state != CORE_RS_STREAM || r->src != src) return 0;
        if (d.offset > r->bytes || n > r->bytes - d.offset || d.offset + n > r->len) return 0;
        int k = 1;
        if (__builtin_expect(r->lay != NULL, 0)) {
            k = core_place_lay(p, r, d.offset, n);
            if (k == 0) return 0;
            *iov = p->piov;
        } else {
            p->place1 = (struct iovec){(char *)r->buf + d.offset, n};
            *iov = &p->place1;
        }
        p->placing = r;
        return k;
    }
    return 0;
}

/* placed(): the payload place() asked for has landed. */
void core_frame_placed(int src, const void *head, size_t hlen, size_t len)
{
    struct core_data d;
    core_req_t *r = core.peers[src].placing;
    core.peers[src].placing = NULL;
    if (r == NULL || hlen < sizeof d || r->state != CORE_RS_STREAM) return;
    memcpy(&d, head, sizeof d);
    core_frame_heard(src, d.h.flags);
    if (d.h.type == CORE_FRAME_EAGER) {
        if (r->sync) core_send_ctrl(src, CORE_FRAME_ACK, r->rsreq, 0);
        core_req_complete(r, TERN_OK);
        return;
    }
    r->offset += len - sizeof d;
    if (r->offset >= r->bytes) {
        if (r->rv_t0 != 0) core_rv_stream_done(src, r);
        core_req_complete(r, r->bytes > r->len ? TERN_ERR_TRUNCATE : TERN_OK);
    }
}

/*
 * The transport lost `rank`: every operation that waits on it completes with
 * TERN_ERR_PEER_FAILED, and so do later ones (core_isend, core_irecv check `failed`).
 * Receives from TERN_ANY_SOURCE stay posted: another rank may still match them.
 */
/* Could world rank `rank` be the sender of a message receive r waits for? */
static int core_req_may_hear(const core_req_t *r, int rank)
{
    return r->comm == NULL || core_comm_rank_of(r->comm, rank) >= 0;
}

void core_peer_failed(int rank)
{
    struct core_peer *p = &core.peers[rank];
    if (p->failed) return;
    p->failed = 1;
    p->placing = NULL;
    core.nfailed++;
    UTIL_DEBUG(1, "rank %d failed: completing its operations with an error", rank);
    struct core_pend *pd = p->pend_head;
    while (pd) { /* the requests among them are failed below */
        struct core_pend *next = pd->next;
        free(pd);
        pd = next;
    }
    if (p->pend_head) core.npending--;
    p->pend_head = p->pend_tail = NULL;
    for (uint32_t id = 1; id < core.nreqs; id++) {
        core_req_t *r = core.reqs[id];
        if (r->state == CORE_RS_FREE || r->state == CORE_RS_DONE) continue;
        if (r->kind == CORE_REQ_SEND) {
            if (r->peer == rank) core_req_complete(r, TERN_ERR_PEER_FAILED);
        } else if (r->state == CORE_RS_STREAM) {
            if (r->src == rank) core_req_complete(r, TERN_ERR_PEER_FAILED);
        } else if (r->state == CORE_RS_POSTED && r->ctx != CORE_CTX_NONE &&
                   (r->peer == rank || (r->peer < 0 && core_req_may_hear(r, rank)))) {
            /* A wildcard receive waiting when a possible sender died fails too: it may
             * have been waiting for that very message. Later ones are posted normally. */
            core_match_unpost(core.match[r->ctx], r);
            core_req_complete(r, TERN_ERR_PEER_FAILED);
        }
    }
    for (int i = 0; i < core.nfailhooks; i++)
        core.failhooks[i](rank);
}

int core_am_register(int handler, core_am_fn fn)
{
    if (handler < 0 || handler >= CORE_AM_MAX || fn == NULL) return TERN_ERR_INVAL;
    /* Two layers on one id would each get the other's messages: refuse the second. */
    if (core.am[handler] && core.am[handler] != fn) return TERN_ERR_EXISTS;
    core.am[handler] = fn;
    /* What arrived for it before it was here, in arrival order. */
    for (struct core_am_early **p = &core_am_early_head, *e; (e = *p) != NULL;) {
        if (e->handler != handler) {
            p = &e->next;
            continue;
        }
        *p = e->next;
        if (core_am_early_tail == &e->next) core_am_early_tail = p;
        core_am_early_bytes -= e->len;
        fn(e->src, e->data, e->len);
        free(e);
    }
    return 0;
}

void core_am_early_free(void)
{
    while (core_am_early_head) {
        struct core_am_early *e = core_am_early_head;
        core_am_early_head = e->next;
        free(e);
    }
    core_am_early_tail = &core_am_early_head;
    core_am_early_bytes = 0;
}

/* Largest payload an active message to dest can carry in one frame. */
size_t core_am_room(int dest)
{
    return core.peers[dest].max_frame - sizeof(struct core_hdr);
}

int core_am_sendv(int dest, int handler, const struct iovec *iov, int iovcnt)
{
    struct iovec v[8];
    size_t len = 0;
    if (iovcnt < 0 || iovcnt > 7) return TERN_ERR_INVAL;
    struct core_hdr h = {.type = CORE_FRAME_AM, .tag = handler};
    v[0] = (struct iovec){&h, sizeof h};
    int n = 1;
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len == 0) continue;
        v[n++] = iov[i];
        len += iov[i].iov_len;
    }
    if (len > core_am_room(dest)) return TERN_ERR_INVAL;
    return core_send_frame(dest, v, n, sizeof h + len);
}

/*
 * trace.c - the tracer's runtime: per-thread record buffers, the per-rank file of
 * self-contained chunks, and the clock alignment with rank 0 (docs/TRACING.md).
 *
 * Why chunks: a rank killed mid-run leaves a file that ends after its last whole chunk,
 * which the readers take as a truncated but valid trace; nothing in a chunk refers to a
 * later one. Each chunk of records carries the tick counter and the monotonic clock read
 * together when it was written, so ticks can be turned into nanoseconds from whatever
 * part of the file survived.
 *
 * Why ticks: a record costs one time-stamp; on x86-64 the invariant TSC (rdtsc, about
 * 7 ns) and on AArch64 the generic timer are several times cheaper than clock_gettime,
 * which matters at 4-8 records per small message. Without an invariant counter ticks
 * are clock_gettime(CLOCK_MONOTONIC) nanoseconds.
 *
 * Why 16-byte units with delta times (format version 2): a LEAVE is one unit, a message
 * two, an ENTER two or three, instead of 56 bytes each; an 8-byte ping-pong writes about
 * 96 bytes per one-way message on each side instead of about 170.
 *
 * Why merged records (version 3, trace_buf.h): a call that maps to one message is one
 * record (MPI_Send: ENTER with its send and its LEAVE; MPI_Recv: ENTER, then the DONE with
 * the LEAVE), the room for a call's records is tested once at its entry, and the
 * point-to-point MPI wrappers write their records inline (trace_mpi_fast.h).
 *
 * Why one record per point-to-point call (version 4): an MPI send or receive with its one
 * message is 3 units (48 bytes) instead of 5-6, kept and written once the call has left
 * (trace_send_leave, trace_pend_write); a collective's internal messages are recorded only
 * with TERN_TRACE_COLL_MSGS=1 (trace_msg_skip), so a collective call is one record.
 */
#define _GNU_SOURCE
#include "trace/trace.h"
#include "trace/trace_buf.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "trace/trace_fn.h"
#include "trace/trace_format.h"
#include "util/cpu.h"
#include "util/log.h"
#include "util/tunables.h"

int trace_on;

/* A thread's buffer pointer starts at this empty one (no room): the one test of room per
 * record also makes the thread's first buffer. */
static struct trace_buf trace_none_buf = {.open = TRACE_NOPOS, .done = TRACE_NOPOS};
__thread struct trace_buf *trace_tls __attribute__((tls_model("initial-exec"))) = &trace_none_buf;
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER; /* the list and the file */
static struct trace_buf *trace_bufs;
static int trace_fd = -1;
static uint32_t trace_cap; /* units per buffer */
static uint64_t trace_written, trace_lost;
int trace_muted; /* the clock ping-pongs are not traced */
int trace_tsc;   /* ticks are the CPU's constant-rate counter, else CLOCK_MONOTONIC ns */
uint64_t trace_adj_ticks;
int trace_coll_msgs; /* TERN_TRACE_COLL_MSGS: record the messages on collective contexts */

/* Whether the counter ticks at one rate on every CPU, in every power state, forever: x86's
 * invariant TSC (CPUID 0x80000007 EDX bit 8, Linux's constant_tsc + nonstop_tsc), or
 * AArch64's generic timer (architected constant rate). TERN_TRACE_CLOCK=mono forces
 * clock_gettime (the fallback, also how it is tested on machines that have the counter). */
static int trace_tsc_usable(void)
{
    const char *want = util_tun.trace_clock;
    if (want != NULL && strcmp(want, "mono") == 0) return 0;
    if (want != NULL && want[0] && strcmp(want, "auto") != 0)
        UTIL_ERROR("trace: TERN_TRACE_CLOCK=%s is neither auto nor mono; using auto", want);
    return util_cpu_counter_invariant();
}

/* The tick counter and the monotonic clock read together: the best of a few tries, the
 * one whose two tick reads are closest (a preemption between the reads would otherwise
 * shift every time the pair anchors). */
static void trace_pair(uint64_t *tick, int64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = trace_ticks();
        int64_t n = trace_ns();
        uint64_t b = trace_ticks();
        if (b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = n;
        }
    }
}

/* A number naming this machine's boot: ranks that share it share CLOCK_MONOTONIC. */
static int64_t trace_boot_id(void)
{
    char buf[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (fgets(buf, sizeof buf, f) == NULL) buf[0] = '\0';
        fclose(f);
    }
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = buf; *p && *p != '\n'; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return buf[0] ? (int64_t)(h >> 1) : -1;
}

/* One chunk, header and payload in one write (O_APPEND: chunks of threads never mix). */
static void trace_write_chunk(uint16_t type, const void *head, size_t hlen, const void *body,
                              size_t blen)
{
    if (trace_fd < 0) return;
    struct trace_chunk c = {.magic = TRACE_CHUNK_MAGIC,
                            .type = type,
                            .version = TRACE_FORMAT_VERSION,
                            .bytes = (uint32_t)(hlen + blen)};
    struct iovec v[3] = {{&c, sizeof c}, {(void *)head, hlen}, {(void *)body, blen}};
    size_t want = sizeof c + hlen + blen;
    ssize_t n = writev(trace_fd, v, 3);
    if (n != (ssize_t)want) {
        UTIL_ERROR("trace: writing %zu bytes to the trace file failed (%s); tracing stops here",
                   want, n < 0 ? strerror(errno) : "short write");
        close(trace_fd);
        trace_fd = -1;
    }
}

/* Write a buffer out as one RECORDS chunk. Called with trace_lock held. */
static void trace_flush_locked(struct trace_buf *b)
{
    b->open = b->done = TRACE_NOPOS; /* a record in a written chunk never grows */
    if (b->n == 0) return;
    struct trace_records_head h = {.tid = b->tid, .n = b->nrec, .t0 = b->chunk_t, .units = b->n};
    trace_pair(&h.tick, &h.ns);
    if (trace_fd >= 0)
        trace_written += b->nrec;
    else
        trace_lost += b->nrec;
    trace_write_chunk(TRACE_CHUNK_RECORDS, &h, sizeof h, b->u, (size_t)b->n * sizeof *b->u);
    b->n = b->nrec = 0;
    b->chunk_t = b->last_t;
}

static struct trace_buf *trace_buf_new(void)
{
    struct trace_buf *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    b->u = malloc((size_t)trace_cap * sizeof *b->u);
    if (b->u == NULL) {
        free(b);
        return NULL;
    }
    /* Touched now: a page fault on the way (one per 256 units) costs more than the
     * records themselves. */
    memset(b->u, 0, (size_t)trace_cap * sizeof *b->u);
    b->cap = trace_cap;
    b->open = b->done = TRACE_NOPOS;
    b->tid = (uint32_t)syscall(SYS_gettid);
    b->last_t = b->chunk_t = trace_ticks();
    pthread_mutex_lock(&trace_lock);
    b->next = trace_bufs;
    trace_bufs = b;
    pthread_mutex_unlock(&trace_lock);
    trace_tls = b;
    return b;
}

__attribute__((noinline, cold)) struct trace_buf *trace_room(struct trace_buf *b, uint32_t need)
{
    (void)need; /* every buffer holds far more than one call's records */
    if (b == &trace_none_buf) return trace_buf_new();
    if (b->pend) trace_pend_write(b); /* kept records have their room */
    pthread_mutex_lock(&trace_lock);
    trace_flush_locked(b);
    pthread_mutex_unlock(&trace_lock);
    return b;
}

/* Called by the generated wrappers, which tested trace_on already. */
void trace_enter(uint16_t fn, const struct trace_args *a, const void *site)
{
    struct trace_buf *b = trace_buf_room(TRACE_ROOM_ENTER);
    if (b != NULL) trace_enter_rec(b, fn, a, site);
}

/* A LEAVE record of its own (the call's ENTER is not the last record). */
void trace_leave_rec(struct trace_buf *b, uint64_t t, uint16_t fn, int rc)
{
    if (__builtin_expect(b->cap - b->n < TRACE_ROOM_LEAVE, 0) &&
        (b = trace_room(b, TRACE_ROOM_LEAVE)) == NULL)
        return;
    trace_commit(b, trace_head(b, t, TRACE_LEAVE, fn, rc, 0));
    b->open = b->done = TRACE_NOPOS;
    b->after_leave = 1;
    b->leave_t = t;
}

void trace_leave(uint16_t fn, int rc)
{
    trace_leave_in(fn, rc);
}

uint64_t trace_clock(void)
{
    return trace_ticks();
}

/* The first message a call sends is stamped with the call's entry: it was handed to tern
 * during the call, a few tens of nanoseconds later, and it saves a clock read on the
 * critical path of a small message. */
uint64_t trace_send_clock(void)
{
    struct trace_buf *b = trace_tls;
    if (b->pend & TRACE_PEND_SEND) return b->p.t;
    if ((b->open != TRACE_NOPOS && !(b->u[b->open].kind & TRACE_UF_MSG))) return b->enter_t;
    return trace_ticks();
}

/* Keep a blocking receive's DONE stamped t beside its kept ENTER (b->pend is
 * TRACE_PEND_RECV), to be written with it by trace_pend_write; open, done and after_leave
 * stay as the ENTER left them. */
static inline __attribute__((always_inline)) void trace_keep_done(struct trace_buf *b, uint64_t t,
                                                                  int peer, int tag, int ctx,
                                                                  uint64_t bytes, uint32_t req,
                                                                  int err)
{
    b->d.t = t;
    b->d.bytes = bytes;
    b->d.peer = peer;
    b->d.tag = tag;
    b->d.err = err;
    b->d.req = req;
    b->d.ctx = (uint16_t)ctx;
    b->d.left = 0;
    b->pend |= TRACE_PEND_DONE;
}

/* A message record kept instead of written (1), or muted (1), or neither (0). Inline in the
 * hooks, which then need no stack frame on their common path: the kept DONE sits between a
 * frame's arrival and the answer to it. */
static inline __attribute__((always_inline)) int trace_msg_keep(uint64_t t, int kind, int peer,
                                                                int tag, int ctx, uint64_t bytes,
                                                                uint32_t req, int err)
{
    if (trace_muted) return 1;
    struct trace_buf *b = trace_tls;
    /* A blocking receive completed (its ENTER is kept, trace_mpi_p2p_in): the DONE is kept
     * too, and written with it after whatever the thread does next has begun
     * (trace_pend_write), so that an answer to it leaves without waiting for the records.
     * Their room was taken with the ENTER. Any other DONE is written now: keeping it would
     * only cost more. */
    if (kind == TRACE_MSG_DONE && b->pend == TRACE_PEND_RECV) {
        trace_keep_done(b, t, peer, tag, ctx, bytes, req, err);
        return 1;
    }
    /* The kept send's message (trace_mpi_send_in; stamped with its entry): kept with it, and
     * written with the call's LEAVE as one record (trace_send_leave), so nothing is
     * written between the frame's departure and the call's return. */
    if (kind == TRACE_MSG_SEND && (b->pend & TRACE_PEND_SEND) && !b->pmsg && t == b->p.t &&
        err == 0) {
        b->m.t = t;
        b->m.bytes = bytes;
        b->m.peer = peer;
        b->m.tag = tag;
        b->m.err = 0;
        b->m.req = req;
        b->m.ctx = (uint16_t)ctx;
        b->pmsg = 1;
        return 1;
    }
    return 0;
}

/* A message record written now (not kept). The request and error come packed in one
 * argument (req | err << 32), so that the hooks reach this with a tail call and need no
 * stack frame of their own. */
static __attribute__((noinline)) void trace_msg_write(uint64_t t, int kind, int peer, int tag,
                                                      int ctx, uint64_t bytes, uint64_t reqerr)
{
    uint32_t req = (uint32_t)reqerr;
    int err = (int)(uint32_t)(reqerr >> 32);
    struct trace_buf *b = trace_buf_now(); /* kept records first */
    uint32_t o = b->open;
    /* The call's own send, right after its ENTER at the ENTER's stamp: one more unit of
     * that record (the room was reserved by the ENTER). */
    if (kind == TRACE_MSG_SEND && o != TRACE_NOPOS && t == b->enter_t &&
        !(b->u[o].kind & TRACE_UF_MSG) && b->u[o].a == peer && b->u[o].b == tag && err == 0) {
        struct trace_unit *u = &b->u[b->n];
        memcpy(u, &bytes, sizeof bytes);
        memcpy((char *)u + 8, &req, sizeof req);
        uint16_t c = (uint16_t)ctx;
        memcpy((char *)u + 12, &c, sizeof c);
        ((unsigned char *)u)[14] = TRACE_MSG_SEND;
        ((unsigned char *)u)[15] = 0;
        b->u[o].kind |= TRACE_UF_MSG;
        b->u[o].units++;
        b->n++;
        b->nrec++;
        return; /* the ENTER stays open: its LEAVE may still join */
    }
    if (__builtin_expect(b->cap - b->n < TRACE_ROOM_MSG, 0) &&
        (b = trace_room(b, TRACE_ROOM_MSG)) == NULL)
        return;
    __builtin_prefetch((const char *)&b->u[b->n] + TRACE_PREFETCH_AHEAD, 1, 3);
    uint32_t at = b->n;
    unsigned n = trace_head(b, t, (unsigned)kind, (uint16_t)ctx, peer, tag);
    uint64_t w[2] = {bytes, (uint64_t)req | (uint64_t)(uint32_t)err << 32};
    memcpy(&b->u[at + n++], w, sizeof w);
    trace_commit(b, n);
    b->open = TRACE_NOPOS;
    b->done = kind == TRACE_MSG_DONE ? at : TRACE_NOPOS;
}

/* The kept receive ENTER, DONE (and the LEAVE joined to it), then the kept send ENTER: in
 * that order they happened. Their room was taken when they were kept. */
static inline void trace_msg_rec(uint64_t t, int kind, int peer, int tag, int ctx, uint64_t bytes,
                                 uint32_t req, int err)
{
    if (!trace_msg_keep(t, kind, peer, tag, ctx, bytes, req, err))
        trace_msg_write(t, kind, peer, tag, ctx, bytes,
                        (uint64_t)req | (uint64_t)(uint32_t)err << 32);
}

/* The kept send's message, after its ENTER (merged into it when it can be). */
static void trace_pmsg_write(struct trace_buf *b)
{
    const struct trace_pdone *m = &b->m;
    b->pmsg = 0;
    trace_msg_rec(m->t, TRACE_MSG_SEND, m->peer, m->tag, m->ctx, m->bytes, m->req, 0);
}

void trace_pend_write(struct trace_buf *b)
{
    int p = b->pend;
    b->pend = 0;
    /* A blocking receive, entered, completed and left: one record when it fits. */
    if ((p & (TRACE_PEND_RECV | TRACE_PEND_DONE)) == (TRACE_PEND_RECV | TRACE_PEND_DONE) &&
        b->d.left && b->d.lfn == b->r.fn &&
        b->r.whole(b, &b->r, TRACE_REC_P2P_RECV, &b->d, b->d.t, b->d.lrc))
        p &= ~(TRACE_PEND_RECV | TRACE_PEND_DONE);
    if (p & TRACE_PEND_RECV) b->r.write(b, &b->r);
    if (p & TRACE_PEND_DONE) {
        const struct trace_pdone *d = &b->d;
        __builtin_prefetch((const char *)&b->u[b->n] + TRACE_PREFETCH_AHEAD, 1, 3);
        uint32_t at = b->n;
        unsigned n = trace_head(b, d->t, TRACE_MSG_DONE, d->ctx, d->peer, d->tag);
        uint64_t w[2] = {d->bytes, (uint64_t)d->req | (uint64_t)(uint32_t)d->err << 32};
        memcpy(&b->u[at + n++], w, sizeof w);
        trace_commit(b, n);
        b->open = TRACE_NOPOS;
        b->done = at;
        if (d->left) trace_leave_join(b, at, 0, d->lfn, d->lrc);
    }
    if (p & TRACE_PEND_SEND) {
        b->p.write(b, &b->p);
        if (b->pmsg) trace_pmsg_write(b);
    }
}

void trace_send_leave(struct trace_buf *b, uint64_t t, uint16_t fn, int rc)
{
    b->pend &= ~TRACE_PEND_SEND;
    if (b->pend) trace_pend_write(b); /* a receive kept before the send */
    b->pmsg = 0;
    if (b->p.whole(b, &b->p, TRACE_REC_P2P_SEND, &b->m, t, rc)) return;
    /* The records of format 3: the ENTER, its send (merged when it can be), the LEAVE. */
    b->p.write(b, &b->p);
    trace_pmsg_write(b);
    trace_leave_at(b, t, fn, rc);
}

/* A message on a collective context (odd: a communicator's ctx + 1, core/comm.c) is part
 * of the collective call it happens in; unless TERN_TRACE_COLL_MSGS asks for it, it is not
 * recorded, and the collective is one record (its ENTER with its LEAVE merged). */
static inline int trace_msg_skip(int ctx)
{
    return (ctx & 1) && !trace_coll_msgs;
}

static __attribute__((noinline)) void trace_msg_slow(int kind, int peer, int tag, int ctx,
                                                     uint64_t bytes, uint32_t req, int err)
{
    trace_msg_rec(trace_ticks(), kind, peer, tag, ctx, bytes, req, err);
}

void trace_msg(int kind, int peer, int tag, int ctx, uint64_t bytes, uint32_t req, int err)
{
    if (trace_msg_skip(ctx)) return;
    /* A blocking receive's completion (its ENTER kept): the clock read and a few stores,
     * with no call and so no stack frame, since it sits between a frame's arrival and the
     * answer to it. Anything else, or the clock without a counter, takes the slow way (a
     * tail call). */
    struct trace_buf *b = trace_tls;
    uint64_t t;
    if (kind == TRACE_MSG_DONE && b->pend == TRACE_PEND_RECV && !trace_muted &&
        trace_ticks_nocall(&t)) {
        trace_keep_done(b, t, peer, tag, ctx, bytes, req, err);
        return;
    }
    trace_msg_slow(kind, peer, tag, ctx, bytes, req, err);
}

void trace_msg_at(uint64_t t, int kind, int peer, int tag, int ctx, uint64_t bytes, uint32_t req,
                  int err)
{
    if (trace_msg_skip(ctx)) return;
    trace_msg_rec(t, kind, peer, tag, ctx, bytes, req, err);
}

/* ---- clock alignment --------------------------------------------------------------
 * Each rank r != 0 ping-pongs with rank 0 TRACE_SYNC_ROUNDS times and keeps the round
 * with the smallest round-trip: rank 0's clock read when it answered is taken to match
 * the middle of that round on r (error at most half that round-trip). Rank 0 serves the
 * ranks one after the other; a dead rank fails its receive at once and is skipped. A rank
 * booted with rank 0 (same boot_id: one kernel, one CLOCK_MONOTONIC) records offset 0. */
#define TRACE_SYNC_ROUNDS 12
#define TRACE_SYNC_TAG    (-4242) /* below every user tag: nothing else can match it */
#define TRACE_SYNC_CTX    1       /* the world communicator's collective context */

static int trace_xfer(int send, void *buf, int peer)
{
    core_req_t *r;
    int rc = send
                 ? core_isend(buf, 2 * sizeof(int64_t), peer, TRACE_SYNC_TAG, TRACE_SYNC_CTX, 0, &r)
                 : core_irecv(buf, 2 * sizeof(int64_t), peer, TRACE_SYNC_TAG, TRACE_SYNC_CTX,
                              &tern__comm_world, &r);
    if (rc) return rc;
    rc = core_wait(r);
    if (rc) return rc; /* the core keeps the request: the peer failed */
    rc = r->err;
    core_req_free(r);
    return rc;
}

static void trace_sync(uint32_t phase)
{
    struct trace_clock c = {.phase = phase, .ok = 1, .offset_ns = 0, .rtt_ns = 0};
    int64_t boot = trace_boot_id();
    trace_muted = 1;
    if (core.rank == 0) {
        for (int r = 1; r < core.size; r++)
            for (int k = 0; k < TRACE_SYNC_ROUNDS; k++) {
                int64_t t[2];
                if (trace_xfer(0, &t, r)) break;
                t[0] = trace_ns();
                t[1] = boot;
                if (trace_xfer(1, &t, r)) break;
            }
    } else if (core.size > 1) {
        int64_t best = INT64_MAX;
        for (int k = 0; k < TRACE_SYNC_ROUNDS; k++) {
            int64_t t0 = trace_ns(), out[2] = {t0, boot}, t_root[2];
            if (trace_xfer(1, out, 0) || trace_xfer(0, t_root, 0)) {
                c.ok = best != INT64_MAX;
                break;
            }
            int64_t t1 = trace_ns();
            if (t1 - t0 < best) {
                best = t1 - t0;
                /* Same boot as rank 0: the same CLOCK_MONOTONIC, offset 0 exactly; the
                 * round trip still bounds what a measurement would have erred by. */
                c.offset_ns =
                    t_root[1] == boot && boot != -1 ? 0 : t_root[0] - (t0 + (t1 - t0) / 2);
                c.rtt_ns = best;
            }
        }
    }
    trace_muted = 0;
    trace_pair(&c.tick, &c.ns);
    trace_write_chunk(TRACE_CHUNK_CLOCK, &c, sizeof c, NULL, 0);
}

/* The executable mappings, so that call sites (return addresses) can be named
 * "binary+0xoffset" and resolved to file:line by the readers. */
static void trace_write_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) return;
    char line[PATH_MAX + 128], *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    if (m == NULL) {
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off;
        char perm[8];
        int pos = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perm, &off, &pos) < 4) continue;
        if (perm[2] != 'x' || pos == 0 || line[pos] != '/') continue;
        fprintf(m, "%lx %lx %lx %s", lo, hi, off, line + pos);
    }
    fclose(f);
    fclose(m);
    trace_write_chunk(TRACE_CHUNK_MAPS, out, len, NULL, 0);
    free(out);
}

/* ns nanoseconds in ticks, from the rate since (tick0, ns0): at least 2 ms of it (a
 * threshold only, so a rough rate does). */
static uint64_t trace_ns_to_ticks(long ns, uint64_t tick0, int64_t ns0)
{
    if (ns <= 0) return 0;
    if (!trace_tsc) return (uint64_t)ns;
    uint64_t tick1;
    int64_t ns1;
    trace_pair(&tick1, &ns1);
    if (ns1 - ns0 < 2000000) {
        struct timespec d = {0, (long)(2000000 - (ns1 - ns0))};
        nanosleep(&d, NULL);
        trace_pair(&tick1, &ns1);
    }
    if (ns1 <= ns0 || tick1 <= tick0) return 0;
    return (uint64_t)((double)ns * (double)(tick1 - tick0) / (double)(ns1 - ns0));
}

void trace_start(void)
{
    const char *dir = util_tun.trace;
    if (dir == NULL || dir[0] == '\0' || trace_on) return;
#ifndef TERN_TRACING
    if (core.rank == 0)
        UTIL_ERROR("trace: TERN_TRACE is set but this tern was built without the tracer");
    return;
#endif
    size_t bytes = util_tun.trace_buffer;
    if (bytes < 4 * TRACE_UNITS_MAX * sizeof(struct trace_unit))
        bytes = 4 * TRACE_UNITS_MAX * sizeof(struct trace_unit); /* 3 calls' room at least */
    trace_cap = (uint32_t)(bytes / sizeof(struct trace_unit));
    trace_tsc = trace_tsc_usable();
    trace_coll_msgs = util_tun.trace_coll_msgs != 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        UTIL_ERROR("trace: cannot make the trace directory %s (%s); not tracing", dir,
                   strerror(errno));
        return;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tern-trace.%d.bin", dir, core.rank);
    trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (trace_fd < 0) {
        UTIL_ERROR("trace: cannot create %s (%s); not tracing", path, strerror(errno));
        return;
    }
    struct trace_header h = {.rank = (uint32_t)core.rank,
                             .size = (uint32_t)core.size,
                             .pid = (uint64_t)getpid(),
                             .tick_is_ns = !trace_tsc,
                             .rec_bytes = sizeof(struct trace_unit),
                             .version_major = TERN_VERSION_MAJOR,
                             .version_minor = TERN_VERSION_MINOR};
    gethostname(h.host, sizeof h.host - 1);
    ssize_t n = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
    if (n < 0) h.exe[0] = '\0';
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    h.realtime_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
    trace_pair(&h.start_tick, &h.start_ns);
    trace_write_chunk(TRACE_CHUNK_HEADER, &h, sizeof h, NULL, 0);
    /* The function names, so the file describes itself. */
    char *names = NULL;
    size_t nlen = 0;
    FILE *m = open_memstream(&names, &nlen);
    if (m) {
        for (int i = 0; i < TRACE_FN_COUNT; i++)
            fprintf(m, "%u %s\n", (unsigned)trace_fn_api[i], trace_fn_names[i]);
        fclose(m);
        trace_write_chunk(TRACE_CHUNK_NAMES, names, nlen, NULL, 0);
        free(names);
    }
    trace_write_maps();
    trace_sync(TRACE_CLOCK_INIT);
    trace_adj_ticks = trace_ns_to_ticks(util_tun.trace_adjacent_ns, h.start_tick, h.start_ns);
    trace_on = 1;
}

void trace_stop(void)
{
    if (!trace_on) return;
    trace_on = 0;
    trace_sync(TRACE_CLOCK_FINI);
    trace_write_maps(); /* libraries loaded since the start */
    pthread_mutex_lock(&trace_lock);
    for (struct trace_buf *b = trace_bufs; b; b = b->next) {
        if (b->pend) trace_pend_write(b);
        trace_flush_locked(b);
    }
    struct trace_end e = {.records = trace_written, .lost = trace_lost};
    trace_write_chunk(TRACE_CHUNK_END, &e, sizeof e, NULL, 0);
    while (trace_bufs) {
        struct trace_buf *b = trace_bufs;
        trace_bufs = b->next;
        free(b->u);
        free(b);
    }
    trace_tls = &trace_none_buf; /* other threads' pointers are never used again: trace_on is 0 */
    if (trace_fd >= 0) close(trace_fd);
    trace_fd = -1;
    pthread_mutex_unlock(&trace_lock);
}

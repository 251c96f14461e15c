/*
 * trace_buf.h - the tracer's per-thread record buffer and its record writers, inline, for
 * trace.c and the MPI argument helper (trace_mpi_args.c), so that a point-to-point call's
 * entry is one out-of-line call. Internal to libtern.
 *
 * Room: a thread's buffer is tested for room once per ENTER (TRACE_ROOM_ENTER units: the
 * call's own ENTER, its send and its leave) and once per message record
 * (TRACE_ROOM_MSG: the message and a leave). A leave merged into the record before it
 * (the common case, see trace_leave in trace.c) therefore needs no test; only a separate
 * LEAVE record tests again.
 *
 * Merged records (format version 3, docs/TRACING.md): a call's ENTER may take its first
 * send (TRACE_UF_MSG: same stamp, same peer and tag) and its LEAVE (TRACE_UF_LEAVE) as
 * extra units while it is the last record of the buffer; a receive's DONE may take the
 * LEAVE of the call it completed in. `open` and `done` say which record can still grow.
 */
#ifndef TERN_TRACE_BUF_H
#define TERN_TRACE_BUF_H

#include <stdint.h>
#include <string.h>
#include <time.h>

#include "trace/trace.h"
#include "trace/trace_format.h"
#include "util/cpu.h"

#define TRACE_NOPOS      UINT32_MAX
#define TRACE_ROOM_ENTER 8 /* ENTER (up to 4 units), its send (1), its leave (1), spare */
#define TRACE_ROOM_MSG   5 /* a message (up to 3 units) and a leave (up to 2) */
#define TRACE_ROOM_LEAVE 2 /* a LEAVE record with its absolute time */

#define TRACE_DEFER_SITES 16 /* call sites whose sends' gaps are remembered */
#define TRACE_DEFER_AFTER 2  /* short gaps in a row before a site's sends are deferred */

struct trace_buf;
struct trace_pdone;
/* A point-to-point call's ENTER, stamped `t` at the call's entry and written later (by
 * trace_pend_write, before any other record): a send's once its frame has left (by the
 * send's message hook), a blocking receive's once the receive has completed and its answer,
 * if any, has left. The look-ups and stores of the ENTER are then off the messages'
 * critical path. Only the MPI point-to-point wrappers make them (trace_mpi_fast.h); `write`
 * writes one. */
struct trace_pend {
    void (*write)(struct trace_buf *b, const struct trace_pend *k);
    /* The whole call as one record (format 4, TRACE_REC_P2P_*): its ENTER, the message `m`
     * and its LEAVE at tl with return code rc; 0 (nothing written) when they do not fit
     * it (a different peer, tag or size, an error, a bad handle, a far stamp). */
    int (*whole)(struct trace_buf *b, const struct trace_pend *k, unsigned kind,
                 const struct trace_pdone *m, uint64_t tl, int rc);
    uint64_t t;
    const void *site;
    int32_t comm, peer, tag, count, datatype;
    uint16_t fn;
};

/* A receive's DONE, stamped when the receive completed and written later (trace_pend_write):
 * between finding a message and handing over the answer to it, the receiver then only
 * reads the clock and keeps these fields; the record, and the LEAVE of the call it
 * completed in (joined when `left`), are written once the answer has left. */
struct trace_pdone {
    uint64_t t, bytes;
    int32_t peer, tag, err, lrc;
    uint32_t req;
    uint16_t ctx, lfn;
    int left;
};

/* Kept records, written in this order (the order they happen in): */
#define TRACE_PEND_RECV 4 /* r holds a receive's ENTER */
#define TRACE_PEND_DONE 2 /* d holds a receive's DONE */
#define TRACE_PEND_SEND 1 /* p holds a send's ENTER */

struct trace_buf {
    struct trace_unit *u;
    uint32_t n, cap; /* units used, units in u */
    uint32_t nrec;   /* events in u (a merged record counts each of its parts) */
    uint32_t open;   /* unit of the last record if it is an ENTER that may still grow */
    uint32_t done;   /* unit of the last record if it is a DONE a leave may join */
    uint32_t tid;
    uint64_t last_t;  /* the last stamp written (the next record's delta counts from it) */
    uint64_t chunk_t; /* last_t when the buffer was last empty: the chunk's t0 */
    uint64_t enter_t; /* the open (or pending) ENTER's stamp */
    int pend;         /* TRACE_PEND_*: records kept, not written yet */
    uint64_t leave_t; /* the stamp of the last LEAVE (kept or written) */
    /* A send's entry shared with the call before it (trace_mpi_send_in): */
    int after_leave; /* the last record was a call's LEAVE, at leave_t */
    int defer;       /* the pending ENTER's stamp is leave_t, checked at the send's LEAVE */
    unsigned dslot;  /* the deferred send's place in dsite */
    /* Per call site (a small table by return address): how many times in a row a send
     * from there came within trace_adj_ticks of the call before it. */
    const void *dsite[TRACE_DEFER_SITES];
    uint8_t dok[TRACE_DEFER_SITES];
    struct trace_pend p; /* a send's ENTER */
    struct trace_pend r; /* a receive's ENTER */
    struct trace_pdone d;
    /* The message of the kept send (p), kept with it while pmsg: the call's LEAVE writes
     * the whole call as one record (trace_send_leave). */
    struct trace_pdone m;
    int pmsg;
    struct trace_buf *next; /* every buffer, for trace_stop */
};

extern __thread struct trace_buf *trace_tls __attribute__((tls_model("initial-exec")));
extern int trace_tsc;
extern int trace_muted;
/* TERN_TRACE_ADJACENT_NS in ticks (trace_start); 0: a send always reads the clock. */
extern uint64_t trace_adj_ticks;
/* The slow way to `need` units of room: the thread's first buffer, or a full one written
 * out. NULL when no buffer can be had. */
struct trace_buf *trace_room(struct trace_buf *b, uint32_t need);

static inline int64_t trace_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The time stamp of a record (see trace.c: the counter when it is invariant). */
static inline uint64_t trace_ticks(void)
{
    return util_cpu_ticks(trace_tsc);
}

/* The counter without a call (*t, 1), or 0 when ticks come from clock_gettime. */
static inline int trace_ticks_nocall(uint64_t *t)
{
    if (__builtin_expect(trace_tsc, 1)) {
        *t = util_cpu_counter();
        return 1;
    }
    return 0;
}

/* Ask for the lines a few records ahead, for writing: on x86 stores reach the cache in
 * program order, so a record's store that misses L1 would hold back the store that hands a
 * message to its peer (measured: a buffer far bigger than the caches, 64 MiB, made an
 * 8-byte ping-pong ~30 % slower than 256 KiB did). Prefetching never faults, so running
 * past the end of the buffer is harmless. */
#define TRACE_PREFETCH_AHEAD 256 /* bytes */

/* Write the records kept (a receive's DONE, a send's ENTER), in the order they happened;
 * their room was taken when they were kept. */
void trace_pend_write(struct trace_buf *b);

/* Write this thread's kept records before any other record. */
static inline struct trace_buf *trace_buf_now(void)
{
    struct trace_buf *b = trace_tls;
    if (__builtin_expect(b->pend, 0)) trace_pend_write(b);
    return b;
}

static inline struct trace_buf *trace_buf_room(uint32_t need)
{
    struct trace_buf *b = trace_buf_now();
    if (__builtin_expect(b->cap - b->n < need, 0))
        b = trace_room(b, need);
    else
        __builtin_prefetch((const char *)&b->u[b->n] + TRACE_PREFETCH_AHEAD, 1, 3);
    return b;
}

/* The first unit of a record stamped t (and the absolute time after it when the delta
 * does not fit 32 bits); returns the units used so far. */
static inline unsigned trace_head(struct trace_buf *b, uint64_t t, unsigned kind, uint16_t fn,
                                  int32_t a, int32_t bb)
{
    struct trace_unit *u = &b->u[b->n];
    int64_t d = (int64_t)(t - b->last_t);
    b->last_t = t;
    u->kind = (uint8_t)kind;
    u->fn = fn;
    u->a = a;
    u->b = bb;
    if (__builtin_expect(d == (int32_t)d, 1)) {
        u->dt = (int32_t)d;
        return 1;
    }
    u->dt = 0;
    u->kind = (uint8_t)(kind | TRACE_UF_ABS);
    uint64_t w[2] = {t, 0};
    memcpy(&u[1], w, sizeof w);
    return 2;
}

static inline void trace_commit(struct trace_buf *b, unsigned units)
{
    b->u[b->n].units = (uint8_t)units;
    b->n += units;
    b->nrec++;
    b->after_leave = 0;
}

/* An ENTER record (the buffer has TRACE_ROOM_ENTER units free). */
static inline void trace_enter_rec_at(struct trace_buf *b, uint64_t t, uint16_t fn,
                                      const struct trace_args *a, const void *site)
{
    int args = a->comm != TRACE_NONE || a->csize != TRACE_NONE || a->root != TRACE_NONE ||
               a->op != TRACE_NONE;
    uint32_t at = b->n;
    unsigned n = trace_head(b, t, TRACE_ENTER | (args ? TRACE_UF_ARGS : 0), fn, a->peer, a->tag);
    uint64_t w[2] = {a->bytes, (uint64_t)(uintptr_t)site};
    memcpy(&b->u[at + n++], w, sizeof w);
    if (args) {
        int32_t g[4] = {a->comm, a->csize, a->root, a->op};
        memcpy(&b->u[at + n++], g, sizeof g);
    }
    trace_commit(b, n);
    b->open = at;
    b->done = TRACE_NOPOS;
    b->enter_t = t;
}

static inline void trace_enter_rec(struct trace_buf *b, uint16_t fn, const struct trace_args *a,
                                   const void *site)
{
    trace_enter_rec_at(b, trace_ticks(), fn, a, site);
}

/* A LEAVE unit after the record at `at` (the last of the buffer), `dt` ticks after that
 * record's last stamp; the room was reserved by the ENTER or the message before it. */
static inline void trace_leave_join(struct trace_buf *b, uint32_t at, int32_t dt, uint16_t fn,
                                    int rc)
{
    struct trace_unit *u = &b->u[b->n];
    u->dt = dt;
    u->kind = TRACE_LEAVE;
    u->units = 0;
    u->fn = fn;
    u->a = rc;
    u->b = 0;
    b->u[at].kind |= TRACE_UF_LEAVE;
    b->u[at].units++;
    b->n++;
    b->nrec++;
    b->open = b->done = TRACE_NOPOS;
    b->after_leave = 1;
    b->leave_t = b->last_t;
}

/* A deferred send (trace_mpi_send_in) is checked at its call's LEAVE, stamped t: the gap
 * from the LEAVE before it, whose stamp it took, to now (the program between the calls and
 * the send itself) must be short. A long one (computation between the calls, a slow send,
 * a preemption, a rendezvous) keeps that stamp, early by at most the gap but never after
 * the frame left, so the message never arrives before it was sent; the site's next sends
 * read the clock again. */
static inline void trace_defer_check(struct trace_buf *b, uint64_t t)
{
    if (b->defer) {
        b->defer = 0;
        if (t - b->enter_t >= trace_adj_ticks) b->dok[b->dslot] = 0;
    }
}

void trace_leave_rec(struct trace_buf *b, uint64_t t, uint16_t fn, int rc);
/* The LEAVE, stamped t, of an MPI send whose message is kept (pmsg): the records kept
 * before it, then the send as one record (trace.c). */
void trace_send_leave(struct trace_buf *b, uint64_t t, uint16_t fn, int rc);

/* A call's LEAVE stamped t: merged into its ENTER if that is still the last record (nothing,
 * or only its own send, happened inside: one record for the whole call), else a record. */
static inline void trace_leave_at(struct trace_buf *b, uint64_t t, uint16_t fn, int rc)
{
    if (b->open != TRACE_NOPOS && b->u[b->open].fn == fn) {
        int64_t d = (int64_t)(t - b->last_t);
        if (__builtin_expect(d == (int32_t)d, 1)) {
            b->last_t = t;
            trace_leave_join(b, b->open, (int32_t)d, fn, rc);
            return;
        }
    }
    trace_leave_rec(b, t, fn, rc);
}

/* A call's leave (trace_leave in trace.c; inline in the point-to-point wrappers). */
static inline void trace_leave_in(uint16_t fn, int rc)
{
    if (!trace_on) return; /* MPI_Finalize: tracing ended inside the call */
    struct trace_buf *b = trace_tls;
    /* A call that completed a receive last is left when it completed (a blocking receive
     * returns right after; the stamp is shared): the LEAVE joins that DONE record, kept
     * with it while the DONE is not written yet. */
    if ((b->pend & ~TRACE_PEND_RECV) == TRACE_PEND_DONE && !b->d.left) {
        b->d.left = 1;
        b->d.lfn = fn;
        b->d.lrc = rc;
        b->after_leave = 1;
        b->leave_t = b->d.t;
        trace_defer_check(b, b->d.t);
        return;
    }
    /* An MPI send whose message is kept with its ENTER (trace_msg): one record. */
    if (b->pmsg && b->p.fn == fn) {
        uint64_t t = trace_ticks();
        trace_defer_check(b, t);
        trace_send_leave(b, t, fn, rc);
        return;
    }
    b = trace_buf_now();
    if (b->done != TRACE_NOPOS) {
        trace_defer_check(b, b->last_t);
        trace_leave_join(b, b->done, 0, fn, rc);
        return;
    }
    uint64_t t = trace_ticks();
    trace_defer_check(b, t);
    trace_leave_at(b, t, fn, rc);
}

#endif

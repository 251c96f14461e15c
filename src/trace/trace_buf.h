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
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "trace/trace.h"
#include "trace/trace_format.h"

#define TRACE_NOPOS      UINT32_MAX
#define TRACE_ROOM_ENTER 8 /* ENTER (up to 4 units), its send (1), its leave (1), spare */
#define TRACE_ROOM_MSG   5 /* a message (up to 3 units) and a leave (up to 2) */
#define TRACE_ROOM_LEAVE 2 /* a LEAVE record with its absolute time */

struct trace_buf {
    struct trace_unit *u;
    uint32_t n, cap; /* units used, units in u */
    uint32_t nrec;   /* events in u (a merged record counts each of its parts) */
    uint32_t open;   /* unit of the last record if it is an ENTER that may still grow */
    uint32_t done;   /* unit of the last record if it is a DONE a leave may join */
    uint32_t tid;
    uint64_t last_t;        /* the last stamp written (the next record's delta counts from it) */
    uint64_t chunk_t;       /* last_t when the buffer was last empty: the chunk's t0 */
    uint64_t enter_t;       /* the open ENTER's stamp */
    struct trace_buf *next; /* every buffer, for trace_stop */
};

extern __thread struct trace_buf *trace_tls __attribute__((tls_model("initial-exec")));
extern int trace_tsc;
extern int trace_muted;
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
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(trace_tsc, 1)) return __rdtsc();
#elif defined(__aarch64__)
    if (__builtin_expect(trace_tsc, 1)) {
        uint64_t v;
        __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
        return v;
    }
#endif
    return (uint64_t)trace_ns();
}

static inline struct trace_buf *trace_buf_room(uint32_t need)
{
    struct trace_buf *b = trace_tls;
    if (__builtin_expect(b->cap - b->n < need, 0)) b = trace_room(b, need);
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
}

/* An ENTER record (the buffer has TRACE_ROOM_ENTER units free). */
static inline void trace_enter_rec(struct trace_buf *b, uint16_t fn, const struct trace_args *a,
                                   const void *site)
{
    uint64_t t = trace_ticks();
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

#endif

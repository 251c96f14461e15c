/*
 * trace_mpi_fast.h - the entry record of an MPI point-to-point call, inline: the generated
 * wrappers of MPI_Send, MPI_Recv, MPI_Isend, ... (gen_trace_wrap.py, p2p_mpi) record their
 * ENTER and LEAVE without a call of their own, since on a small message those calls are
 * on its critical path (docs/TRACING.md, "Cost"). Internal to libtern's MPI layer.
 */
#ifndef TERN_TRACE_MPI_FAST_H
#define TERN_TRACE_MPI_FAST_H

#include "mpi/mpi_impl.h"
#include "trace/trace.h"
#include "trace/trace_buf.h"

/* What a point-to-point call's ENTER holds: context, size, the peer's world rank, tag and
 * bytes, from one look-up of the communicator. A bad handle is recorded as none (the real
 * call reports it). */
static inline void trace_mpi_p2p_args(struct trace_args *out, int comm, int peer, int tag,
                                      int count, int datatype)
{
    struct trace_args a = TRACE_ARGS_INIT;
    const struct mpi_comm *c = mpi_comm_get(comm);
    if (c != NULL && c->tc != NULL) {
        a.comm = c->tc->ctx;
        a.csize = c->tc->size;
        if (peer >= 0 && peer < c->tc->size) peer = core_comm_world(c->tc, peer);
    }
    a.peer = peer;
    a.tag = tag;
    const struct mpi_type *t = mpi_type_get(datatype);
    a.bytes = t != NULL && count > 0 ? (uint64_t)count * (uint64_t)t->size : 0;
    *out = a;
}

/* Write an MPI call's ENTER of three units at b->n, stamped t (d after the last record):
 * (a, bb) in the head, (bytes, site) in the second unit, (ctx, size, g2, g3) in the third;
 * the record the general way (trace_enter_rec_at) makes for these arguments. */
static inline __attribute__((always_inline)) void
trace_mpi_enter3(struct trace_buf *b, uint64_t t, int64_t d, uint16_t fn, int32_t a, int32_t bb,
                 uint64_t bytes, const void *site, const struct tern_comm *tc, int32_t g2,
                 int32_t g3)
{
    uint32_t at = b->n;
    struct trace_unit *u = &b->u[at];
    u->dt = (int32_t)d;
    u->kind = TRACE_ENTER | TRACE_UF_ARGS;
    u->units = 3;
    u->fn = fn;
    u->a = a;
    u->b = bb;
    uint64_t w[2] = {bytes, (uint64_t)(uintptr_t)site};
    memcpy(&u[1], w, sizeof w);
    int32_t g[4] = {tc->ctx, tc->size, g2, g3};
    memcpy(&u[2], g, sizeof g);
    b->last_t = t;
    b->n = at + 3;
    b->nrec++;
    b->after_leave = 0;
    b->open = at;
    b->done = TRACE_NOPOS;
    b->enter_t = t;
}

/* The ENTER of a point-to-point call stamped t, written straight into its three units (the
 * buffer has TRACE_ROOM_ENTER units free): the same record trace_enter_rec_at makes from
 * trace_mpi_p2p_args, without the struct in between and the tests of which arguments are
 * there. A bad communicator or a stamp far from the last goes the general way. */
static inline __attribute__((always_inline)) void trace_mpi_p2p_rec(struct trace_buf *b, uint64_t t,
                                                                    uint16_t fn, int comm, int peer,
                                                                    int tag, int count,
                                                                    int datatype, const void *site)
{
    const struct mpi_comm *c = mpi_comm_get(comm);
    int64_t d = (int64_t)(t - b->last_t);
    if (__builtin_expect(c == NULL || c->tc == NULL || d != (int32_t)d, 0)) {
        struct trace_args a;
        trace_mpi_p2p_args(&a, comm, peer, tag, count, datatype);
        trace_enter_rec_at(b, t, fn, &a, site);
        return;
    }
    const struct tern_comm *tc = c->tc;
    if (peer >= 0 && peer < tc->size) peer = core_comm_world(tc, peer);
    const struct mpi_type *ty = mpi_type_get(datatype);
    uint64_t bytes = ty != NULL && count > 0 ? (uint64_t)count * (uint64_t)ty->size : 0;
    trace_mpi_enter3(b, t, d, fn, peer, tag, bytes, site, tc, TRACE_NONE, TRACE_NONE);
}

/* The ENTER of an MPI collective (trace_wrap_mpi.c, gen_trace_wrap.py coll_mpi): the record
 * the general way (trace_mpi_comm, trace_mpi_rank of the root, trace_mpi_op,
 * trace_mpi_bytes, trace_enter) makes, written inline with one look-up of the
 * communicator. `root` is TRACE_NONE, `has_op` 0 and `count` 0 where the function has
 * none; a bad communicator or a far stamp goes the general way. */
static inline __attribute__((always_inline)) void trace_mpi_coll_in(uint16_t fn, int comm,
                                                                    int count, int datatype,
                                                                    int has_op, int op, int root,
                                                                    const void *site)
{
    struct trace_buf *b = trace_buf_room(TRACE_ROOM_ENTER);
    if (b == NULL) return;
    uint64_t t = trace_ticks();
    const struct mpi_comm *c = mpi_comm_get(comm);
    int64_t d = (int64_t)(t - b->last_t);
    int32_t top = has_op ? trace_mpi_op(op) : TRACE_NONE;
    uint64_t bytes = 0;
    if (count > 0) {
        const struct mpi_type *ty = mpi_type_get(datatype);
        if (ty != NULL) bytes = (uint64_t)count * (uint64_t)ty->size;
    }
    if (__builtin_expect(c == NULL || c->tc == NULL || d != (int32_t)d, 0)) {
        struct trace_args a = TRACE_ARGS_INIT;
        trace_mpi_comm(&a, comm);
        if (root != TRACE_NONE) a.root = trace_mpi_rank(comm, root);
        a.op = top;
        a.bytes = bytes;
        trace_enter_rec_at(b, t, fn, &a, site);
        return;
    }
    const struct tern_comm *tc = c->tc;
    if (root != TRACE_NONE && root >= 0 && root < tc->size) root = core_comm_world(tc, root);
    trace_mpi_enter3(b, t, d, fn, TRACE_NONE, TRACE_NONE, bytes, site, tc, root, top);
}

/* Writes a kept point-to-point ENTER, a receive's or a send's (trace_mpi_args.c). */
void trace_mpi_pend_write(struct trace_buf *b, const struct trace_pend *k);
/* Writes a kept point-to-point call whole, as one record (struct trace_pend's `whole`). */
int trace_mpi_whole(struct trace_buf *b, const struct trace_pend *k, unsigned kind,
                    const struct trace_pdone *m, uint64_t tl, int rc);

/* Keep a point-to-point call's ENTER, stamped t, to be written by trace_mpi_pend_write. */
static inline __attribute__((always_inline)) void trace_mpi_keep(struct trace_pend *k, uint64_t t,
                                                                 uint16_t fn, int comm, int peer,
                                                                 int tag, int count, int datatype,
                                                                 const void *site)
{
    k->t = t;
    k->write = trace_mpi_pend_write;
    k->whole = trace_mpi_whole;
    k->site = site;
    k->comm = comm;
    k->peer = peer;
    k->tag = tag;
    k->count = count;
    k->datatype = datatype;
    k->fn = fn;
}

/* The ENTER of a point-to-point receive (MPI_Recv, MPI_Irecv, MPI_Recv_init): stamped now,
 * kept, and written before the next record (trace_pend_write); a receive that completes
 * before then keeps its DONE too (trace_msg), so that a blocking receive's records are
 * written after the answer to it has left. The room is taken now for the ENTER, the DONE
 * with its LEAVE, and a send's ENTER after it (trace_mpi_send_in). */
static inline __attribute__((always_inline)) void trace_mpi_p2p_in(uint16_t fn, int comm, int peer,
                                                                   int tag, int count, int datatype,
                                                                   const void *site)
{
    struct trace_buf *b = trace_buf_room(2 * TRACE_ROOM_ENTER + TRACE_ROOM_MSG);
    if (b == NULL) return;
    trace_mpi_keep(&b->r, trace_ticks(), fn, comm, peer, tag, count, datatype, site);
    b->pend = TRACE_PEND_RECV; /* trace_buf_room wrote what was kept */
    b->open = b->done = TRACE_NOPOS;
    b->after_leave = 0;
}

/* The entry of an MPI send (MPI_Send, MPI_Isend, ...): only the stamp and the arguments now;
 * the ENTER is written by trace_mpi_pend_write once the frame has left (struct trace_pend).
 * The room for it is taken now.
 *
 * The stamp: a send that comes right after the thread's last call returned (the last
 * record is that call's LEAVE) from a call site whose last TRACE_DEFER_AFTER sends each
 * came within trace_adj_ticks of the call before takes that LEAVE's stamp without reading
 * the clock; the send's LEAVE (trace_defer_check) checks that the gap was short (docs/TRACING.md,
 * "Cost"). In a ping-pong this takes one of the two clock reads between a message's arrival and the
 * reply's departure off that path. */
static inline void trace_mpi_send_in(uint16_t fn, int comm, int peer, int tag, int count,
                                     int datatype, const void *site)
{
    /* Not trace_buf_room: a receive's DONE kept (trace_msg) stays unwritten until the
     * frame has left. Room for it and for this call's records. */
    struct trace_buf *b = trace_tls;
    if (__builtin_expect(
            b->cap - b->n < TRACE_ROOM_ENTER + TRACE_ROOM_MSG || (b->pend & TRACE_PEND_SEND), 0)) {
        b = trace_buf_now();
        if (b->cap - b->n < TRACE_ROOM_ENTER + TRACE_ROOM_MSG &&
            (b = trace_room(b, TRACE_ROOM_ENTER + TRACE_ROOM_MSG)) == NULL)
            return;
    } else {
        __builtin_prefetch((const char *)&b->u[b->n] + TRACE_PREFETCH_AHEAD, 1, 3);
    }
    unsigned h = (unsigned)((uintptr_t)site >> 2) % TRACE_DEFER_SITES;
    if (b->after_leave && b->dsite[h] == site && b->dok[h] >= TRACE_DEFER_AFTER) {
        b->enter_t = b->leave_t;
        b->defer = 1;
        b->dslot = h;
    } else {
        uint64_t t = trace_ticks();
        b->enter_t = t;
        b->defer = 0;
        if (b->dsite[h] != site) {
            b->dsite[h] = site;
            b->dok[h] = 0;
        }
        if (b->after_leave && t - b->leave_t < trace_adj_ticks)
            b->dok[h] += b->dok[h] < TRACE_DEFER_AFTER;
        else
            b->dok[h] = 0;
    }
    b->after_leave = 0;
    trace_mpi_keep(&b->p, b->enter_t, fn, comm, peer, tag, count, datatype, site);
    b->pend |= TRACE_PEND_SEND;
    b->open = b->done = TRACE_NOPOS;
}

#endif

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

/* The ENTER of a point-to-point receive (MPI_Recv, MPI_Irecv, MPI_Recv_init), written now. */
static inline void trace_mpi_p2p_in(uint16_t fn, int comm, int peer, int tag, int count,
                                    int datatype, const void *site)
{
    struct trace_buf *b = trace_buf_room(TRACE_ROOM_ENTER);
    if (b == NULL) return;
    struct trace_args a;
    trace_mpi_p2p_args(&a, comm, peer, tag, count, datatype);
    trace_enter_rec(b, fn, &a, site);
}

/* Writes a send's pending ENTER (trace_mpi_args.c). */
void trace_mpi_send_write(struct trace_buf *b);

/* The entry of an MPI send (MPI_Send, MPI_Isend, ...): only the stamp and the arguments now;
 * the ENTER is written by trace_mpi_send_write once the frame has left (struct trace_pend).
 * The room for it is taken now. */
static inline void trace_mpi_send_in(uint16_t fn, int comm, int peer, int tag, int count,
                                     int datatype, const void *site)
{
    struct trace_buf *b = trace_buf_room(TRACE_ROOM_ENTER);
    if (b == NULL) return;
    b->enter_t = trace_ticks();
    b->p.write = trace_mpi_send_write;
    b->p.site = site;
    b->p.comm = comm;
    b->p.peer = peer;
    b->p.tag = tag;
    b->p.count = count;
    b->p.datatype = datatype;
    b->p.fn = fn;
    b->pend = 1;
    b->open = b->done = TRACE_NOPOS;
}

#endif

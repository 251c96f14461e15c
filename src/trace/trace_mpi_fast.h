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

/* The ENTER of a point-to-point call: one communicator look-up for its context, its size
 * and the peer's world rank; bytes from the datatype's size. A bad handle is recorded as
 * none (the real call reports it). */
static inline void trace_mpi_p2p_in(uint16_t fn, int comm, int peer, int tag, int count,
                                    int datatype, const void *site)
{
    struct trace_buf *b = trace_buf_room(TRACE_ROOM_ENTER);
    if (b == NULL) return;
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
    trace_enter_rec(b, fn, &a, site);
}

#endif

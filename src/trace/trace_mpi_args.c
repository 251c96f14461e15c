/*
 * trace_mpi_args.c - what the generated MPI wrappers record about their arguments
 * (communicator context and size, world ranks, bytes). Part of the MPI layer's objects:
 * it reads the MPI handle tables. Handles are checked here; a bad one is recorded as
 * "none" and the real call reports it.
 */
#include "mpi/mpi_impl.h"
#include "trace/trace.h"
#include "trace/trace_buf.h"
#include "trace/trace_mpi_fast.h"

void trace_mpi_comm(struct trace_args *a, int comm)
{
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL || c->tc == NULL) return;
    a->comm = c->tc->ctx;
    a->csize = c->tc->size;
}

int32_t trace_mpi_rank(int comm, int rank)
{
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL || c->tc == NULL || rank < 0 || rank >= c->tc->size) return rank;
    return core_comm_world(c->tc, rank);
}

uint64_t trace_mpi_bytes(int64_t count, int datatype)
{
    struct mpi_type *t = mpi_type_get(datatype);
    return t != NULL && count > 0 ? (uint64_t)count * (uint64_t)t->size : 0;
}

/* The file keeps a predefined operation as its place in MPI's list (MPI_OP_NULL 0,
 * MPI_MAX 1 ... MPI_NO_OP 14, the order of mpi.h and of tracefile.py's MPI_OPS), whatever
 * the handle values are (they are MPICH's: 0x58000001 ...); a user operation as 100. */
int32_t trace_mpi_op(int op)
{
    if (op == MPI_OP_NULL) return 0;
    if (op >= MPI_MAX && op <= MPI_NO_OP) return (int32_t)(op - MPI_MAX) + 1;
    return 100;
}

void trace_mpi_p2p(uint16_t fn, int comm, int peer, int tag, int count, int datatype,
                   const void *site)
{
    trace_mpi_p2p_in(fn, comm, peer, tag, count, datatype, site);
}

void trace_mpi_pend_write(struct trace_buf *b, const struct trace_pend *k)
{
    trace_mpi_p2p_rec(b, k->t, k->fn, k->comm, k->peer, k->tag, k->count, k->datatype, k->site);
}

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

/* A kept point-to-point call with its message (a send's, or the receive's completion) and
 * its LEAVE as one record of TRACE_P2P_UNITS units (format 4, trace_format.h) when the
 * message has the call's peer, tag, context and bytes, no error, the call returned 0, and
 * the stamps fit; the room was taken when the call was kept. */
int trace_mpi_whole(struct trace_buf *b, const struct trace_pend *k, unsigned kind,
                    const struct trace_pdone *m, uint64_t tl, int rc)
{
    const struct mpi_comm *c = mpi_comm_get(k->comm);
    if (__builtin_expect(c == NULL || c->tc == NULL || rc != 0 || m->err != 0, 0)) return 0;
    const struct tern_comm *tc = c->tc;
    int32_t peer = k->peer;
    if (peer >= 0 && peer < tc->size) peer = core_comm_world(tc, peer);
    const struct mpi_type *ty = mpi_type_get(k->datatype);
    uint64_t bytes = ty != NULL && k->count > 0 ? (uint64_t)k->count * (uint64_t)ty->size : 0;
    int64_t d = (int64_t)(k->t - b->last_t), md = (int64_t)(m->t - k->t), ld = (int64_t)(tl - m->t);
    if (__builtin_expect(peer != m->peer || k->tag != m->tag || bytes != m->bytes ||
                             tc->ctx != m->ctx || tc->size > UINT16_MAX || d != (int32_t)d ||
                             md != (int32_t)md || ld != (int32_t)ld,
                         0))
        return 0;
    struct trace_unit *u = &b->u[b->n];
    u->dt = (int32_t)d;
    u->kind = (uint8_t)kind;
    u->units = TRACE_P2P_UNITS;
    u->fn = k->fn;
    u->a = peer;
    u->b = k->tag;
    uint64_t w[2] = {bytes, (uint64_t)(uintptr_t)k->site};
    memcpy(&u[1], w, sizeof w);
    struct {
        int32_t mdt, ldt;
        uint32_t req;
        uint16_t ctx, csize;
    } x = {(int32_t)md, (int32_t)ld, m->req, tc->ctx, (uint16_t)tc->size};
    _Static_assert(sizeof x == sizeof *u, "a unit");
    memcpy(&u[2], &x, sizeof x);
    b->n += TRACE_P2P_UNITS;
    b->nrec += 3; /* ENTER, the message, LEAVE */
    b->last_t = tl;
    b->open = b->done = TRACE_NOPOS;
    b->after_leave = 1;
    b->leave_t = tl;
    return 1;
}

/*
 * mpi_coll.c - every collective over sizes on MPI, the twin of tern_coll.c: the same
 * operations, sizes and timing (coll_timing.h). Plain MPI calls only, so the same source
 * builds with terncc and with any other MPI's mpicc (bench/compare_coll.sh, ternbench).
 */
#include "prims_mpi.h"

#include "coll_timing.h"

static MPI_Op noop;

/* The reduction that computes nothing: reduce_noop against reduce gives t_c. */
static void noop_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

static void coll_setup(void)
{
    MPI_Op_create(noop_fn, 1, &noop);
}

static void coll_teardown(void)
{
    MPI_Op_free(&noop);
}

static void coll_one(int op, size_t bytes)
{
    MPI_Comm w = MPI_COMM_WORLD;
    char *s = coll_sbuf, *r = coll_rbuf;
    int cnt = (int)(bytes / 8 ? bytes / 8 : 1), b = bp_count(bytes);
    switch (op) {
    case BARRIER:
        MPI_Barrier(w);
        break;
    case BCAST:
        MPI_Bcast(s, b, MPI_BYTE, 0, w);
        break;
    case REDUCE:
        MPI_Reduce(s, r, cnt, MPI_DOUBLE, MPI_SUM, 0, w);
        break;
    case REDUCE_NOOP:
        MPI_Reduce(s, r, cnt, MPI_DOUBLE, noop, 0, w);
        break;
    case ALLREDUCE:
        MPI_Allreduce(s, r, cnt, MPI_DOUBLE, MPI_SUM, w);
        break;
    case ALLREDUCE_NOOP:
        MPI_Allreduce(s, r, cnt, MPI_DOUBLE, noop, w);
        break;
    case GATHER:
        MPI_Gather(s, b, MPI_BYTE, r, b, MPI_BYTE, 0, w);
        break;
    case SCATTER:
        MPI_Scatter(s, b, MPI_BYTE, r, b, MPI_BYTE, 0, w);
        break;
    case ALLGATHER:
        MPI_Allgather(s, b, MPI_BYTE, r, b, MPI_BYTE, w);
        break;
    case ALLTOALL:
        MPI_Alltoall(s, b, MPI_BYTE, r, b, MPI_BYTE, w);
        break;
    case RSB:
        MPI_Reduce_scatter_block(s, r, cnt, MPI_DOUBLE, MPI_SUM, w);
        break;
    case SCAN:
        MPI_Scan(s, r, cnt, MPI_DOUBLE, MPI_SUM, w);
        break;
    }
}

int main(int argc, char **argv)
{
    return coll_main(argc, argv);
}

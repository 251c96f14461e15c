/*
 * mpi_coll.c - the MPI twin of tern_coll.c: the same collectives, sizes and timing
 * (coll_timing.h), built with another MPI's mpicc by bench/compare_coll.sh.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mpi_max(double *in, double *out)
{
    MPI_Allreduce(in, out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}
#define COLL_NOW()        MPI_Wtime()
#define COLL_BARRIER()    MPI_Barrier(MPI_COMM_WORLD)
#define COLL_MAX(in, out) mpi_max(in, out)
#include "coll_timing.h"

static char *sbuf, *rbuf;

static void coll_one(int op, size_t bytes)
{
    MPI_Comm w = MPI_COMM_WORLD;
    int cnt = (int)(bytes / 8 ? bytes / 8 : 1), b = (int)bytes;
    switch (op) {
    case BARRIER:
        MPI_Barrier(w);
        break;
    case BCAST:
        MPI_Bcast(sbuf, b, MPI_BYTE, 0, w);
        break;
    case REDUCE:
        MPI_Reduce(sbuf, rbuf, cnt, MPI_DOUBLE, MPI_SUM, 0, w);
        break;
    case ALLREDUCE:
        MPI_Allreduce(sbuf, rbuf, cnt, MPI_DOUBLE, MPI_SUM, w);
        break;
    case GATHER:
        MPI_Gather(sbuf, b, MPI_BYTE, rbuf, b, MPI_BYTE, 0, w);
        break;
    case SCATTER:
        MPI_Scatter(sbuf, b, MPI_BYTE, rbuf, b, MPI_BYTE, 0, w);
        break;
    case ALLGATHER:
        MPI_Allgather(sbuf, b, MPI_BYTE, rbuf, b, MPI_BYTE, w);
        break;
    case ALLTOALL:
        MPI_Alltoall(sbuf, b, MPI_BYTE, rbuf, b, MPI_BYTE, w);
        break;
    case RSB:
        MPI_Reduce_scatter_block(sbuf, rbuf, cnt, MPI_DOUBLE, MPI_SUM, w);
        break;
    case SCAN:
        MPI_Scan(sbuf, rbuf, cnt, MPI_DOUBLE, MPI_SUM, w);
        break;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    size_t cap = (size_t)np * (1 << 20) + 64;
    sbuf = calloc(1, cap);
    rbuf = calloc(1, cap);
    const char *lib = argc > 2 ? argv[2] : "mpi";
    coll_table(me, np, lib, argc > 1 ? atof(argv[1]) : 1.0);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}

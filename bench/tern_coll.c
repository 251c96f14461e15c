/*
 * tern_coll.c - latency of every collective at 8 B, 1 KiB, 64 KiB and 1 MiB.
 *
 *   ternrun -n 4 build/bench/tern_coll [iterations-scale]
 *
 * Size is the message for bcast, the vector for reductions (doubles), and the block per
 * process for gather, scatter, allgather, alltoall and reduce_scatter_block. Each number
 * is the slowest rank's mean time per call in microseconds (coll_timing.h; mpi_coll.c
 * measures other MPIs the same way). Set TERN_COLL_<OP> to measure one algorithm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tern.h"

static void tern_max(double *in, double *out)
{
    tern_allreduce(in, out, 1, TERN_DOUBLE, TERN_MAX, TERN_COMM_WORLD);
}
#define COLL_NOW()        tern_wtime()
#define COLL_BARRIER()    tern_barrier(TERN_COMM_WORLD)
#define COLL_MAX(in, out) tern_max(in, out)
#include "coll_timing.h"

static char *sbuf, *rbuf;
static int me;

static void coll_one(int op, size_t bytes)
{
    tern_comm_t w = TERN_COMM_WORLD;
    size_t cnt = bytes / 8 ? bytes / 8 : 1;
    int rc = 0;
    switch (op) {
    case BARRIER:
        rc = tern_barrier(w);
        break;
    case BCAST:
        rc = tern_bcast(sbuf, bytes, 0, w);
        break;
    case REDUCE:
        rc = tern_reduce(sbuf, rbuf, cnt, TERN_DOUBLE, TERN_SUM, 0, w);
        break;
    case ALLREDUCE:
        rc = tern_allreduce(sbuf, rbuf, cnt, TERN_DOUBLE, TERN_SUM, w);
        break;
    case GATHER:
        rc = tern_gather(sbuf, bytes, rbuf, 0, w);
        break;
    case SCATTER:
        rc = tern_scatter(sbuf, rbuf, bytes, 0, w);
        break;
    case ALLGATHER:
        rc = tern_allgather(sbuf, rbuf, bytes, w);
        break;
    case ALLTOALL:
        rc = tern_alltoall(sbuf, rbuf, bytes, w);
        break;
    case RSB:
        rc = tern_reduce_scatter_block(sbuf, rbuf, cnt, TERN_DOUBLE, TERN_SUM, w);
        break;
    case SCAN:
        rc = tern_scan(sbuf, rbuf, cnt, TERN_DOUBLE, TERN_SUM, w);
        break;
    }
    if (rc) {
        fprintf(stderr, "rank %d: %s %zu: %s\n", me, coll_names[op], bytes, tern_err_name(rc));
        tern_abort(1);
    }
}

int main(int argc, char **argv)
{
    if (tern_init(&argc, &argv)) return 1;
    me = tern_rank();
    int np = tern_size();
    size_t cap = (size_t)np * (1 << 20) + 64;
    sbuf = calloc(1, cap);
    rbuf = calloc(1, cap);
    coll_table(me, np, "tern", argc > 1 ? atof(argv[1]) : 1.0);
    free(sbuf);
    free(rbuf);
    tern_finalize();
    return 0;
}

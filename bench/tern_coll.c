/*
 * tern_coll.c - latency of every collective at 8 B, 1 KiB, 64 KiB and 1 MiB.
 *
 *   ternrun -n 4 build/bench/tern_coll [iterations-scale]
 *
 * Size is the message for bcast, the vector for reductions (doubles), and the block per
 * process for gather, scatter, allgather, alltoall and reduce_scatter_block. Each number
 * is the slowest rank's mean time per call in microseconds, after a warm-up. Set
 * TERN_COLL_<OP> to measure one algorithm.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tern.h"

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, ALLTOALL, RSB, SCAN, NOPS };
static const char *names[NOPS] = {"barrier",   "bcast",     "reduce",   "allreduce",
                                  "gather",    "scatter",   "allgather", "alltoall",
                                  "red_scat_blk", "scan"};

static char *sbuf, *rbuf;
static int me, np;

static void one(int op, size_t bytes)
{
    tern_comm_t w = TERN_COMM_WORLD;
    size_t cnt = bytes / 8 ? bytes / 8 : 1;
    int rc = 0;
    switch (op) {
    case BARRIER: rc = tern_barrier(w); break;
    case BCAST: rc = tern_bcast(sbuf, bytes, 0, w); break;
    case REDUCE: rc = tern_reduce(sbuf, rbuf, cnt, TERN_DOUBLE, TERN_SUM, 0, w); break;
    case ALLREDUCE: rc = tern_allreduce(sbuf, rbuf, cnt, TERN_DOUBLE, TERN_SUM, w); break;
    case GATHER: rc = tern_gather(sbuf, bytes, rbuf, 0, w); break;
    case SCATTER: rc = tern_scatter(sbuf, rbuf, bytes, 0, w); break;
    case ALLGATHER: rc = tern_allgather(sbuf, rbuf, bytes, w); break;
    case ALLTOALL: rc = tern_alltoall(sbuf, rbuf, bytes, w); break;
    case RSB: rc = tern_reduce_scatter_block(sbuf, rbuf, cnt, TERN_DOUBLE, TERN_SUM, w); break;
    case SCAN: rc = tern_scan(sbuf, rbuf, cnt, TERN_DOUBLE, TERN_SUM, w); break;
    }
    if (rc) {
        fprintf(stderr, "rank %d: %s %zu: %s\n", me, names[op], bytes, tern_err_name(rc));
        tern_abort(1);
    }
}

int main(int argc, char **argv)
{
    if (tern_init(&argc, &argv)) return 1;
    me = tern_rank();
    np = tern_size();
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    const size_t sizes[] = {8, 1024, 64 << 10, 1 << 20};
    const int iters[] = {2000, 1000, 100, 20};
    size_t cap = (size_t)np * (1 << 20) + 64;
    sbuf = calloc(1, cap);
    rbuf = calloc(1, cap);
    if (me == 0) {
        printf("# tern collectives, %d ranks: mean latency per call (us), slowest rank\n", np);
        printf("%-13s %10s %10s %10s %10s\n", "op", "8B", "1KiB", "64KiB", "1MiB");
    }
    for (int op = 0; op < NOPS; op++) {
        double res[4];
        for (int k = 0; k < 4; k++) {
            int n = (int)(iters[k] * scale);
            if (n < 2) n = 2;
            for (int i = 0; i < n / 10 + 1; i++) one(op, sizes[k]);
            tern_barrier(TERN_COMM_WORLD);
            double t0 = tern_wtime();
            for (int i = 0; i < n; i++) one(op, sizes[k]);
            double t = (tern_wtime() - t0) / n * 1e6, tmax = 0;
            tern_allreduce(&t, &tmax, 1, TERN_DOUBLE, TERN_MAX, TERN_COMM_WORLD);
            res[k] = tmax;
            if (op == BARRIER) {
                for (int j = 1; j < 4; j++) res[j] = res[0];
                break;
            }
        }
        if (me == 0)
            printf("%-13s %10.2f %10.2f %10.2f %10.2f\n", names[op], res[0], res[1], res[2],
                   res[3]);
    }
    free(sbuf);
    free(rbuf);
    tern_finalize();
    return 0;
}

/*
 * tern_coll.c - every collective over sizes on the native tern API, the twin of
 * mpi_coll.c (the loop and the timing are coll_timing.h).
 *
 *   ternrun -n 4 build/bench/tern_coll [scale]          the short table
 *   ternrun -n 4 build/bench/tern_coll --csv -s 8,1M    one row per operation and size
 *
 * Each number is the slowest rank's time per call. Set TERN_COLL_<OP> to measure one
 * algorithm.
 */
#include "prims_tern.h"

#include "coll_timing.h"

static tern_op_t noop = TERN_OP_NULL;

/* The reduction that computes nothing: reduce_noop against reduce gives t_c. */
static void noop_fn(const void *in, void *inout, size_t count, tern_datatype_t dt)
{
    (void)in, (void)inout, (void)count, (void)dt;
}

static void coll_setup(void)
{
    bp_check(tern_op_create(noop_fn, 1, &noop), "tern_op_create");
}

static void coll_teardown(void)
{
    bp_check(tern_op_free(&noop), "tern_op_free");
}

static void coll_one(int op, size_t bytes)
{
    tern_comm_t w = TERN_COMM_WORLD;
    char *s = coll_sbuf, *r = coll_rbuf;
    size_t cnt = bytes / 8 ? bytes / 8 : 1;
    int rc = 0;
    switch (op) {
    case BARRIER:
        rc = tern_barrier(w);
        break;
    case BCAST:
        rc = tern_bcast(s, bytes, 0, w);
        break;
    case REDUCE:
        rc = tern_reduce(s, r, cnt, TERN_DOUBLE, TERN_SUM, 0, w);
        break;
    case REDUCE_NOOP:
        rc = tern_reduce(s, r, cnt, TERN_DOUBLE, noop, 0, w);
        break;
    case ALLREDUCE:
        rc = tern_allreduce(s, r, cnt, TERN_DOUBLE, TERN_SUM, w);
        break;
    case ALLREDUCE_NOOP:
        rc = tern_allreduce(s, r, cnt, TERN_DOUBLE, noop, w);
        break;
    case GATHER:
        rc = tern_gather(s, bytes, r, 0, w);
        break;
    case SCATTER:
        rc = tern_scatter(s, r, bytes, 0, w);
        break;
    case ALLGATHER:
        rc = tern_allgather(s, r, bytes, w);
        break;
    case ALLTOALL:
        rc = tern_alltoall(s, r, bytes, w);
        break;
    case RSB:
        rc = tern_reduce_scatter_block(s, r, cnt, TERN_DOUBLE, TERN_SUM, w);
        break;
    case SCAN:
        rc = tern_scan(s, r, cnt, TERN_DOUBLE, TERN_SUM, w);
        break;
    }
    bp_check(rc, coll_names[op]);
}

int main(int argc, char **argv)
{
    return coll_main(argc, argv);
}

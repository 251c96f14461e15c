/*
 * coll_timing.h - the timing loop shared by tern_coll.c and mpi_coll.c, so both measure
 * the same way: warm up, time one call to size the run, then time `n` back-to-back
 * calls (n = the iteration cap, or fewer so a size takes at most BUDGET seconds), and
 * report the slowest rank's mean. The includer defines COLL_NOW() (seconds),
 * COLL_BARRIER() and COLL_MAX(double *in, double *out) (max over ranks, to every rank).
 */
#ifndef TERN_BENCH_COLL_TIMING_H
#define TERN_BENCH_COLL_TIMING_H

#define COLL_BUDGET_S 0.3

enum { BARRIER, BCAST, REDUCE, ALLREDUCE, GATHER, SCATTER, ALLGATHER, ALLTOALL, RSB, SCAN, NOPS };
static const char *const coll_names[NOPS] = {"barrier",      "bcast",   "reduce",    "allreduce",
                                             "gather",       "scatter", "allgather", "alltoall",
                                             "red_scat_blk", "scan"};
static const size_t coll_sizes[4] = {8, 1024, 64 << 10, 1 << 20};
static const int coll_iters[4] = {2000, 1000, 100, 20};

static void coll_one(int op, size_t bytes);

/* Mean microseconds per call of op at `bytes`, slowest rank. */
static double coll_time(int op, size_t bytes, int cap)
{
    coll_one(op, bytes); /* warm-up, and connection set-up where there is any */
    COLL_BARRIER();
    double t0 = COLL_NOW();
    coll_one(op, bytes);
    double one = COLL_NOW() - t0, one_max = 0;
    COLL_MAX(&one, &one_max);
    int n = cap;
    if (one_max > 0 && one_max * n > COLL_BUDGET_S) n = (int)(COLL_BUDGET_S / one_max);
    if (n < 3) n = 3;
    COLL_BARRIER();
    t0 = COLL_NOW();
    for (int i = 0; i < n; i++)
        coll_one(op, bytes);
    double t = (COLL_NOW() - t0) / n * 1e6, tmax = 0;
    COLL_MAX(&t, &tmax);
    return tmax;
}

/* One table: op then the four sizes, as "name t8 t1k t64k t1m" lines after a header. */
static void coll_table(int me, int np, const char *lib, double scale)
{
    if (me == 0) {
        printf("# %s collectives, %d ranks: mean latency per call (us), slowest rank\n", lib, np);
        printf("%-13s %10s %10s %10s %10s\n", "op", "8B", "1KiB", "64KiB", "1MiB");
    }
    for (int op = 0; op < NOPS; op++) {
        double res[4];
        for (int k = 0; k < 4; k++) {
            int cap = (int)(coll_iters[k] * scale);
            res[k] = coll_time(op, coll_sizes[k], cap < 3 ? 3 : cap);
            if (op == BARRIER) {
                for (int j = 1; j < 4; j++)
                    res[j] = res[0];
                break;
            }
        }
        if (me == 0)
            printf("%-13s %10.2f %10.2f %10.2f %10.2f\n", coll_names[op], res[0], res[1], res[2],
                   res[3]);
        fflush(stdout);
    }
}

#endif

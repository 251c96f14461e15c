/*
 * coll_timing.h - the collectives benchmark, written once for tern_coll.c (native API)
 * and mpi_coll.c (MPI, any mpicc): the includer includes prims_tern.h or prims_mpi.h,
 * defines coll_one(op, bytes) (one call of collective `op` on coll_sbuf/coll_rbuf),
 * coll_setup() / coll_teardown() (after init / before finalize, for the no-op reduction
 * operation), and main() returns coll_main(argc, argv).
 *
 * Two modes:
 *  - `prog [scale [label]]`: the short table bench/compare_coll.sh reads (8 B .. 1 MiB,
 *    back-to-back calls, slowest rank's mean).
 *  - `prog --csv [--sizes LIST] [-t TRIALS] ...`: what ternbench records. For every
 *    operation and size: a warm-up, then TRIALS trials of n calls, each call preceded by
 *    a barrier and timed alone (so consecutive calls cannot pipeline into one another);
 *    a trial's value is the slowest rank's mean per call, and a row gives min, median,
 *    max and median absolute deviation over trials. n is the iteration cap or fewer, so
 *    that one (operation, size) takes about --budget seconds: a library that needs
 *    milliseconds per call when oversubscribed still finishes.
 *
 * Size is the message for bcast, the vector for reductions (doubles, size/8 of them, at
 * least one) and the block per process for gather, scatter, allgather, alltoall and
 * reduce_scatter_block. reduce_noop / allreduce_noop are reduce / allreduce with a user
 * operation that does nothing: against the real sum they give the computation time.
 */
#ifndef TERN_BENCH_COLL_TIMING_H
#define TERN_BENCH_COLL_TIMING_H

#include "patterns.h"

#define COLL_BUDGET_S 0.3

enum {
    BARRIER,
    BCAST,
    REDUCE,
    ALLREDUCE,
    GATHER,
    SCATTER,
    ALLGATHER,
    ALLTOALL,
    RSB,
    SCAN,
    COLL_NLEGACY, /* the table mode stops here */
    REDUCE_NOOP = COLL_NLEGACY,
    ALLREDUCE_NOOP,
    NOPS
};
static const char *const coll_names[NOPS] = {
    "barrier",   "bcast",    "reduce",       "allreduce", "gather",      "scatter",
    "allgather", "alltoall", "red_scat_blk", "scan",      "reduce_noop", "allreduce_noop"};
static const size_t coll_sizes[4] = {8, 1024, 64 << 10, 1 << 20};
static const int coll_iters[4] = {2000, 1000, 100, 20};

static char *coll_sbuf, *coll_rbuf;

static void coll_one(int op, size_t bytes);
static void coll_setup(void);
static void coll_teardown(void);

/* ---- table mode (compare_coll.sh) ---- */

/* Mean microseconds per call of op at `bytes`, back to back, slowest rank. */
static double coll_time(int op, size_t bytes, int cap)
{
    coll_one(op, bytes); /* warm-up, and connection set-up where there is any */
    bp_barrier();
    double t0 = bench_now();
    coll_one(op, bytes);
    double one_max = bp_max_double(bench_now() - t0);
    int n = cap;
    if (one_max > 0 && one_max * n > COLL_BUDGET_S) n = (int)(COLL_BUDGET_S / one_max);
    if (n < 3) n = 3;
    bp_barrier();
    t0 = bench_now();
    for (int i = 0; i < n; i++)
        coll_one(op, bytes);
    return bp_max_double((bench_now() - t0) / n * 1e6);
}

/* One table: op then the four sizes, as "name t8 t1k t64k t1m" lines after a header. */
static void coll_table(int me, int np, const char *lib, double scale)
{
    if (me == 0) {
        printf("# %s collectives, %d ranks: mean latency per call (us), slowest rank\n", lib, np);
        printf("%-13s %10s %10s %10s %10s\n", "op", "8B", "1KiB", "64KiB", "1MiB");
    }
    for (int op = 0; op < COLL_NLEGACY; op++) {
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

/* ---- sweep mode (ternbench) ---- */

struct coll_opts {
    size_t sizes[BP_MAX_SIZES];
    int nsizes, trials, cap, csv, meta;
    double budget;
    int want[NOPS];
    const char *label;
};

/* One row: trials of n barrier-separated calls; samples get the slowest rank's mean. */
static long coll_sweep_one(const struct coll_opts *o, int op, size_t bytes, double *samples)
{
    double t0, est = 0;
    coll_one(op, bytes); /* warm-up, and connection set-up where there is any */
    coll_one(op, bytes);
    for (int i = 0; i < 3; i++) { /* the cost of one call, to size the trials */
        bp_barrier();
        t0 = bench_now();
        coll_one(op, bytes);
        est += bench_now() - t0;
    }
    double one_max = bp_max_double(est / 3);
    long n = o->cap;
    double per_trial = o->budget / o->trials;
    if (one_max > 0 && one_max * (double)n > per_trial) n = (long)(per_trial / one_max);
    if (n < 3) n = 3;
    for (int t = 0; t < o->trials; t++) {
        double acc = 0;
        for (long i = 0; i < n; i++) {
            bp_barrier();
            t0 = bench_now();
            coll_one(op, bytes);
            acc += bench_now() - t0;
        }
        samples[t] = bp_max_double(acc / (double)n);
    }
    return n;
}

static void coll_usage(const char *prog)
{
    fprintf(stderr,
            "usage: %s [scale [label]]          the short table (compare_coll.sh)\n"
            "       %s [options]                one row per operation and size\n"
            "  -s, --sizes LIST    sizes, e.g. 8,1K,64K,1M (default 8,64,512,4K,32K,256K,1M)\n"
            "  -t, --trials N      timed trials per size (default 5)\n"
            "  -i, --iters N       most calls per trial (default 200)\n"
            "  -B, --budget SEC    about this long per operation and size (default 0.4)\n"
            "  -o, --ops LIST      of barrier,bcast,reduce,allreduce,gather,scatter,allgather,\n"
            "                      alltoall,red_scat_blk,scan,reduce_noop,allreduce_noop\n"
            "      --csv           machine-readable output\n"
            "      --meta          first print the library version as a # comment\n"
            "      --label NAME    value of the lib column\n",
            prog, prog);
}

static int coll_parse(int argc, char **argv, struct coll_opts *o)
{
    static const struct option lo[] = {
        {"sizes", required_argument, 0, 's'}, {"trials", required_argument, 0, 't'},
        {"iters", required_argument, 0, 'i'}, {"budget", required_argument, 0, 'B'},
        {"ops", required_argument, 0, 'o'},   {"csv", no_argument, 0, 'C'},
        {"meta", no_argument, 0, 'V'},        {"label", required_argument, 0, 'L'},
        {"help", no_argument, 0, 'h'},        {0, 0, 0, 0}};
    const char *sizes = "8,64,512,4K,32K,256K,1M";
    int c, any = 0;
    memset(o, 0, sizeof *o);
    o->trials = 5;
    o->cap = 200;
    o->budget = 0.4;
    optind = 1;
    while ((c = getopt_long(argc, argv, "s:t:i:B:o:h", lo, NULL)) != -1) {
        switch (c) {
        case 's':
            sizes = optarg;
            break;
        case 't':
            o->trials = atoi(optarg);
            break;
        case 'i':
            o->cap = atoi(optarg);
            break;
        case 'B':
            o->budget = atof(optarg);
            break;
        case 'o': {
            char tmp[256];
            if (strlen(optarg) >= sizeof tmp) return -1;
            strcpy(tmp, optarg);
            for (char *save = NULL, *tok = strtok_r(tmp, ",", &save); tok;
                 tok = strtok_r(NULL, ",", &save)) {
                int k = 0;
                while (k < NOPS && strcmp(tok, coll_names[k]))
                    k++;
                if (k == NOPS) return -1;
                o->want[k] = any = 1;
            }
            break;
        }
        case 'C':
            o->csv = 1;
            break;
        case 'V':
            o->meta = 1;
            break;
        case 'L':
            o->label = optarg;
            break;
        default:
            return -1;
        }
    }
    if (!any)
        for (int k = 0; k < NOPS; k++)
            o->want[k] = 1;
    o->nsizes = bp_size_list(sizes, o->sizes, BP_MAX_SIZES);
    if (o->nsizes <= 0 || o->trials < 1 || o->trials > BP_MAX_TRIALS || o->cap < 1 ||
        o->budget <= 0 || optind != argc)
        return -1;
    return 0;
}

static int coll_main(int argc, char **argv)
{
    struct coll_opts o;
    double samples[BP_MAX_TRIALS];
    int table = argc < 2 || argv[1][0] != '-';

    bp_init(&argc, &argv);
    int me = bp_rank(), np = bp_size();
    if (!table && coll_parse(argc, argv, &o) != 0) {
        if (me == 0) coll_usage(argv[0]);
        bp_finalize();
        return 2;
    }
    size_t max = (size_t)1 << 20;
    if (!table)
        for (int k = 0; k < o.nsizes; k++)
            max = o.sizes[k] > max ? o.sizes[k] : max;
    coll_sbuf = bench_alloc((size_t)np * max + 64);
    coll_rbuf = bench_alloc((size_t)np * max + 64);
    if (!coll_sbuf || !coll_rbuf) {
        fprintf(stderr, "%s: rank %d: out of memory\n", argv[0], me);
        bp_abort(2);
    }
    /* Doubles of a harmless value, so a real sum never meets NaN or denormals. */
    for (size_t i = 0; i + sizeof(double) <= (size_t)np * max; i += sizeof(double)) {
        double one = 1.0;
        memcpy(coll_sbuf + i, &one, sizeof one);
    }
    coll_setup();

    if (table) {
        coll_table(me, np, argc > 2 ? argv[2] : bp_lib_name(), argc > 1 ? atof(argv[1]) : 1.0);
    } else {
        const char *lib = o.label ? o.label : bp_lib_name();
        if (me == 0 && o.meta) bp_print_meta();
        if (me == 0 && o.csv) printf("%s\n", bench_csv_header);
        for (int op = 0; op < NOPS; op++) {
            if (!o.want[op]) continue;
            if (me == 0)
                bench_print_heading(o.csv, lib, coll_names[op], "coll", np,
                                    "per call, barrier before each call, slowest rank");
            for (int k = 0; k < o.nsizes; k++) {
                size_t bytes = op == BARRIER ? 0 : o.sizes[k];
                long n = coll_sweep_one(&o, op, bytes, samples);
                if (me == 0) {
                    struct bench_row r = {
                        lib, coll_names[op], "coll", np, bytes, n, o.trials, 0, 0, 0, 0};
                    bench_stats_row(samples, o.trials, &r);
                    bench_print_row(o.csv, &r);
                }
                if (op == BARRIER) break;
            }
        }
    }
    bp_barrier();
    coll_teardown();
    free(coll_sbuf);
    free(coll_rbuf);
    bp_finalize();
    return 0;
}

#endif

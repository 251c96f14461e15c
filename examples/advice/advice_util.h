/*
 * advice_util.h - what the `ternbench advise` example programs share: their command line,
 * the computation between iterations, and the timing line bench/advice.sh reads.
 *
 * Every program runs ITERS iterations of one communication phase with COMPUTE_US of
 * computation between them, in the "before" form (what the advice is about) or, with
 * --after, the form the advice suggests. Both check every byte they receive. Rank 0
 * prints one line: "RESULT <program> <before|after> p=<ranks> n=<bytes> iters=<n>
 * seconds=<slowest rank's time for the loop>".
 */
#ifndef ADVICE_UTIL_H
#define ADVICE_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct advice_opts {
    int after;         /* --after: the advised form */
    long bytes;        /* -n: bytes per block (program-specific meaning) */
    int iters;         /* -i: iterations */
    double compute_us; /* -c: computation between iterations, microseconds */
};

static inline int advice_parse(int argc, char **argv, struct advice_opts *o, long bytes)
{
    o->after = 0;
    o->bytes = bytes;
    o->iters = 200;
    o->compute_us = 50.0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--after") == 0) {
            o->after = 1;
        } else if (strcmp(argv[i], "--before") == 0) {
            o->after = 0;
        } else if (i + 1 < argc && strcmp(argv[i], "-n") == 0) {
            o->bytes = atol(argv[++i]);
        } else if (i + 1 < argc && strcmp(argv[i], "-i") == 0) {
            o->iters = atoi(argv[++i]);
        } else if (i + 1 < argc && strcmp(argv[i], "-c") == 0) {
            o->compute_us = atof(argv[++i]);
        } else {
            int rank;
            MPI_Comm_rank(MPI_COMM_WORLD, &rank);
            if (rank == 0)
                fprintf(stderr,
                        "usage: %s [--before|--after] [-n bytes] [-i iterations] "
                        "[-c compute_us]\n",
                        argv[0]);
            return -1;
        }
    }
    if (o->bytes < 8 || o->iters < 1 || o->compute_us < 0) {
        fprintf(stderr, "%s: need -n >= 8, -i >= 1, -c >= 0\n", argv[0]);
        return -1;
    }
    o->bytes -= o->bytes % 8; /* whole doubles / longs */
    return 0;
}

/* Computation between iterations: spin on the clock (what a real program does there is
   irrelevant to the advice, only that it takes time and touches no message buffer). */
static inline void advice_compute(double us)
{
    double end = MPI_Wtime() + us * 1e-6;
    while (MPI_Wtime() < end)
        ;
}

/* Rank 0 prints the RESULT line; returns the job-wide error count (0: all data right). */
static inline int advice_report(const char *prog, const struct advice_opts *o, double t,
                                long errors)
{
    int rank, size;
    double tmax;
    long nerr;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&errors, &nerr, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("RESULT %s %s p=%d n=%ld iters=%d seconds=%.6f\n", prog,
               o->after ? "after" : "before", size, o->bytes, o->iters, tmax);
        if (nerr) fprintf(stderr, "%s: %ld wrong values received\n", prog, nerr);
    }
    return nerr ? 1 : 0;
}

#endif

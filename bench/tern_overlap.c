/*
 * tern_overlap.c - does communication advance while the program computes?
 *
 * Rank 1 sends SIZE bytes to rank 0 (tern_isend + tern_wait). Rank 0 posts tern_irecv,
 * computes for C milliseconds (a busy loop, no tern call), then tern_waits. Printed per C:
 * the time from the post to completion on rank 0 (median of the trials) and the part of
 * it spent in tern_wait after computing. Without progress in the background the transfer
 * only starts when rank 0 calls tern_wait (a rendezvous needs the receiver's answer), so
 * total ~ C + transfer; with TERN_PROGRESS_THREAD=1 it runs during the computation and
 * total ~ max(C, transfer). The data is checked.
 *
 *   ternrun -n 2 -x TERN_TRANSPORTS=self,tcp [-x TERN_PROGRESS_THREAD=1] tern_overlap \
 *       [-s SIZE_MIB] [-t TRIALS] [C_ms ...]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tern.h>

static void check(int rc, const char *what)
{
    if (rc != TERN_OK) {
        fprintf(stderr, "overlap: rank %d: %s: %s\n", tern_rank(), what, tern_err_name(rc));
        tern_abort(2);
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Busy work for ms milliseconds (floating point, so it cannot be optimised away). */
static volatile double sink;
static void compute(double ms)
{
    double end = now() + ms * 1e-3, x = 1.0;
    while (now() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    sink = x;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    check(tern_init(&argc, &argv), "tern_init");
    int me = tern_rank();
    if (tern_size() != 2) {
        if (me == 0) fprintf(stderr, "overlap: run with 2 ranks\n");
        tern_finalize();
        return 1;
    }
    size_t size = (size_t)16 << 20;
    int trials = 7, opt;
    while ((opt = getopt(argc, argv, "s:t:")) != -1) {
        if (opt == 's')
            size = (size_t)atol(optarg) << 20;
        else if (opt == 't')
            trials = atoi(optarg);
        else
            return 1;
    }
    double deflt[] = {0, 5, 10, 20, 40};
    int nc = argc - optind > 0 ? argc - optind : 5;
    unsigned char *buf = malloc(size);
    double *tot = malloc((size_t)trials * sizeof *tot),
           *waited = malloc((size_t)trials * sizeof *waited);
    if (!buf || !tot || !waited) return 1;
    const char *pt = getenv("TERN_PROGRESS_THREAD");
    if (me == 0)
        printf("# %zu MiB from rank 1 to rank 0, progress thread %s; median of %d trials\n"
               "# compute_ms   total_ms   wait_ms   (total - compute)\n",
               size >> 20, pt && *pt == '1' ? "on" : "off", trials);
    for (int k = 0; k < nc; k++) {
        double c = argc - optind > 0 ? atof(argv[optind + k]) : deflt[k];
        for (int t = 0; t < trials; t++) {
            check(tern_barrier(TERN_COMM_WORLD), "barrier");
            tern_request_t r;
            if (me == 1) {
                for (size_t i = 0; i < size; i++)
                    buf[i] = (unsigned char)(i * 7 + (size_t)t + (i >> 12));
                check(tern_barrier(TERN_COMM_WORLD), "barrier");
                check(tern_isend(buf, size, 0, t, TERN_COMM_WORLD, &r), "isend");
                check(tern_wait(&r, NULL), "wait send");
                continue;
            }
            memset(buf, 0, size);
            check(tern_barrier(TERN_COMM_WORLD), "barrier");
            double t0 = now();
            check(tern_irecv(buf, size, 1, t, TERN_COMM_WORLD, &r), "irecv");
            compute(c);
            double t1 = now();
            check(tern_wait(&r, NULL), "wait recv");
            double t2 = now();
            tot[t] = (t2 - t0) * 1e3;
            waited[t] = (t2 - t1) * 1e3;
            for (size_t i = 0; i < size; i++)
                if (buf[i] != (unsigned char)(i * 7 + (size_t)t + (i >> 12))) {
                    fprintf(stderr, "overlap: byte %zu differs\n", i);
                    tern_abort(3);
                }
        }
        if (me == 0) {
            qsort(tot, (size_t)trials, sizeof *tot, cmp);
            qsort(waited, (size_t)trials, sizeof *waited, cmp);
            printf("%12.1f %10.2f %9.2f %12.2f\n", c, tot[trials / 2], waited[trials / 2],
                   tot[trials / 2] - c);
        }
    }
    free(buf);
    free(tot);
    free(waited);
    check(tern_finalize(), "tern_finalize");
    return 0;
}

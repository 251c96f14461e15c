/*
 * shmem_bench.c - one-sided latency and bandwidth between PE 0 and PE 1, written to the
 * OpenSHMEM 1.4 API only, so the same source builds with tern (terncc / tern-oshcc) and
 * with Open MPI's oshcc: bench/compare_shmem.sh runs both in one session.
 *
 * Patterns (PE 0 issues, PE 1 is the target and waits in a barrier):
 *   put_quiet   shmem_putmem of n bytes + shmem_quiet, per iteration (time to completion)
 *   put         shmem_putmem of n bytes back to back, one quiet at the end (issue rate)
 *   get         shmem_getmem of n bytes (blocking)
 *   fadd        shmem_long_atomic_fetch_add on the heap (blocking, returns the old value)
 *   fadd_global the same on a global variable (tern: always by message, even on a node)
 *   pingpong    put 8 bytes + wait_until for the answer, half the round trip (heap;
 *               pingpong_global: a global variable)
 *   put_bw      bandwidth of shmem_putmem, 16 puts then quiet, n = 8 B .. 4 MiB (x8)
 *   get_bw      bandwidth of shmem_getmem
 * Each value is the best of 5 trials (trial = a fixed time budget). Output: one line per
 * measurement "pattern bytes value unit".
 */
#define _POSIX_C_SOURCE 200809L
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAXB   (4u << 20)
#define TRIALS 5

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static long flag_in; /* pingpong: set by the peer */
static long counter; /* fetch-add target */

/* Iterations that take about `budget` seconds, from a short calibration. */
static long calibrate(double per_iter, double budget)
{
    long n = (long)(budget / (per_iter > 1e-9 ? per_iter : 1e-9));
    return n < 10 ? 10 : n > 2000000 ? 2000000 : n;
}

int main(int argc, char **argv)
{
    double budget = argc > 1 ? atof(argv[1]) : 0.2;
    shmem_init();
    int me = shmem_my_pe();
    if (shmem_n_pes() < 2) {
        if (me == 0) fprintf(stderr, "shmem_bench: needs 2 PEs\n");
        shmem_finalize();
        return 1;
    }
    char *heap = shmem_malloc(MAXB);
    char *local = malloc(MAXB);
    memset(local, 1, MAXB);
    memset(heap, 0, MAXB);
    shmem_barrier_all();
    const size_t lat_sizes[] = {8, 64, 1024, 8192};
    for (int s = 0; s < 4; s++) {
        size_t n = lat_sizes[s];
        const char *names[] = {"put_quiet", "put", "get"};
        for (int pat = 0; pat < 3; pat++) {
            double best = 1e9;
            if (me == 0) {
                long iters = 100;
                for (int t = 0; t < TRIALS + 1; t++) {
                    double t0 = now();
                    for (long i = 0; i < iters; i++) {
                        if (pat == 0) {
                            shmem_putmem(heap, local, n, 1);
                            shmem_quiet();
                        } else if (pat == 1) {
                            shmem_putmem(heap, local, n, 1);
                        } else {
                            shmem_getmem(local, heap, n, 1);
                        }
                    }
                    if (pat == 1) shmem_quiet();
                    double per = (now() - t0) / (double)iters;
                    if (t > 0 && per < best) best = per;
                    iters = calibrate(per, budget);
                }
                printf("%s %zu %.4f us\n", names[pat], n, best * 1e6);
                fflush(stdout);
            }
            shmem_barrier_all();
        }
    }
    /* fetch-add, on the heap and on a global */
    long *hcounter = shmem_malloc(sizeof(long));
    for (int g = 0; g < 2 && me == 0; g++) {
        long *target = g ? &counter : hcounter;
        double best = 1e9;
        long iters = 100;
        for (int t = 0; t < TRIALS + 1; t++) {
            double t0 = now();
            for (long i = 0; i < iters; i++)
                (void)shmem_long_atomic_fetch_add(target, 1, 1);
            double per = (now() - t0) / (double)iters;
            if (t > 0 && per < best) best = per;
            iters = calibrate(per, budget);
        }
        printf("%s 8 %.4f us\n", g ? "fadd_global" : "fadd", best * 1e6);
        fflush(stdout);
    }
    shmem_barrier_all();
    /* pingpong: put 8 bytes into the peer's flag, wait for the peer's answer; on the
     * heap, then on a global */
    long *hflag = shmem_malloc(sizeof(long));
    *hflag = 0;
    shmem_barrier_all();
    for (int g = 0; g < 2; g++) {
        long *flag = g ? &flag_in : hflag;
        double best = 1e9;
        long iters = 1000, seq = 0;
        for (int t = 0; t < TRIALS + 1; t++) {
            shmem_barrier_all();
            double t0 = now();
            for (long i = 0; i < iters; i++) {
                seq++;
                if (me == 0) {
                    shmem_long_p(flag, seq, 1);
                    shmem_long_wait_until(flag, SHMEM_CMP_EQ, -seq);
                } else {
                    shmem_long_wait_until(flag, SHMEM_CMP_EQ, seq);
                    shmem_long_p(flag, -seq, 0);
                }
            }
            double per = (now() - t0) / (double)iters / 2;
            if (t > 0 && per < best) best = per;
            /* both PEs must run the same count: PE 0's calibration decides */
            long *nx = shmem_malloc(sizeof(long));
            *nx = calibrate(per * 2, budget);
            shmem_barrier_all();
            if (me == 1) shmem_getmem(nx, nx, sizeof(long), 0);
            iters = *nx;
            shmem_barrier_all();
            shmem_free(nx);
        }
        if (me == 0) printf("%s 8 %.4f us\n", g ? "pingpong_global" : "pingpong", best * 1e6);
        fflush(stdout);
    }
    /* bandwidth */
    const size_t bw_sizes[] = {8, 64, 512, 4096, 32768, 262144, 2097152, MAXB};
    for (int si = 0; si < 8; si++) {
        size_t n = bw_sizes[si];
        for (int pat = 0; pat < 2; pat++) {
            if (me == 0) {
                double best = 1e9;
                long iters = 16;
                for (int t = 0; t < TRIALS + 1; t++) {
                    double t0 = now();
                    for (long i = 0; i < iters; i++) {
                        if (pat == 0)
                            shmem_putmem(heap, local, n, 1);
                        else
                            shmem_getmem(local, heap, n, 1);
                        if (pat == 0 && i % 16 == 15) shmem_quiet();
                    }
                    shmem_quiet();
                    double per = (now() - t0) / (double)iters;
                    if (t > 0 && per < best) best = per;
                    iters = calibrate(per, budget);
                }
                printf("%s %zu %.1f MB/s\n", pat == 0 ? "put_bw" : "get_bw", n,
                       (double)n / best / 1e6);
                fflush(stdout);
            }
            shmem_barrier_all();
        }
    }
    shmem_barrier_all();
    shmem_free(heap);
    free(local);
    shmem_finalize();
    return 0;
}

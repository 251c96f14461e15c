/*
 * shmem_mpi_rma.c - the MPI one-sided twin of shmem_bench.c (same patterns, same output
 * format), built with each MPI's mpicc by bench/compare_shmem.sh: a window from
 * MPI_Win_allocate under MPI_Win_lock_all; put_quiet is MPI_Put + MPI_Win_flush, put
 * is MPI_Put back to back with one flush, get is MPI_Get + flush, fadd is
 * MPI_Fetch_and_op(MPI_SUM) + flush, pingpong is MPI_Put + flush then polling the local
 * window (MPI_Win_sync), bandwidth is 16 puts (gets) per flush.
 */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
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

static long calibrate(double per_iter, double budget)
{
    long n = (long)(budget / (per_iter > 1e-9 ? per_iter : 1e-9));
    return n < 10 ? 10 : n > 2000000 ? 2000000 : n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    double budget = argc > 1 ? atof(argv[1]) : 0.2;
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np < 2) MPI_Abort(MPI_COMM_WORLD, 1);
    char *base;
    MPI_Win win;
    MPI_Win_allocate(MAXB + 64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win);
    memset(base, 0, MAXB + 64);
    long *flag = (long *)(base + MAXB), *counter = flag + 1;
    MPI_Aint flag_disp = MAXB, counter_disp = MAXB + sizeof(long);
    char *local = malloc(MAXB);
    memset(local, 1, MAXB);
    MPI_Win_lock_all(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    const size_t lat_sizes[] = {8, 64, 1024, 8192};
    for (int s = 0; s < 4; s++) {
        size_t n = lat_sizes[s];
        const char *names[] = {"put_quiet", "put", "get"};
        for (int pat = 0; pat < 3; pat++) {
            if (me == 0) {
                double best = 1e9;
                long iters = 100;
                for (int t = 0; t < TRIALS + 1; t++) {
                    double t0 = now();
                    for (long i = 0; i < iters; i++) {
                        if (pat == 0) {
                            MPI_Put(local, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
                            MPI_Win_flush(1, win);
                        } else if (pat == 1) {
                            MPI_Put(local, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
                        } else {
                            MPI_Get(local, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
                            MPI_Win_flush(1, win);
                        }
                    }
                    if (pat == 1) MPI_Win_flush(1, win);
                    double per = (now() - t0) / (double)iters;
                    if (t > 0 && per < best) best = per;
                    iters = calibrate(per, budget);
                }
                printf("%s %zu %.4f us\n", names[pat], n, best * 1e6);
                fflush(stdout);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    if (me == 0) {
        double best = 1e9;
        long iters = 100, one = 1, old;
        for (int t = 0; t < TRIALS + 1; t++) {
            double t0 = now();
            for (long i = 0; i < iters; i++) {
                MPI_Fetch_and_op(&one, &old, MPI_LONG, 1, counter_disp, MPI_SUM, win);
                MPI_Win_flush(1, win);
            }
            double per = (now() - t0) / (double)iters;
            if (t > 0 && per < best) best = per;
            iters = calibrate(per, budget);
        }
        printf("fadd 8 %.4f us\n", best * 1e6);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    {
        double best = 1e9;
        long iters = 1000, seq = 0;
        for (int t = 0; t < TRIALS + 1; t++) {
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = now();
            for (long i = 0; i < iters; i++) {
                seq++;
                long out = me == 0 ? seq : -seq, want = me == 0 ? -seq : seq;
                if (me == 1) {
                    for (;;) {
                        MPI_Win_sync(win);
                        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == want) break;
                        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &(int){0},
                                   MPI_STATUS_IGNORE); /* progress */
                    }
                }
                MPI_Put(&out, 1, MPI_LONG, 1 - me, flag_disp, 1, MPI_LONG, win);
                MPI_Win_flush(1 - me, win);
                if (me == 0) {
                    for (;;) {
                        MPI_Win_sync(win);
                        if (__atomic_load_n(flag, __ATOMIC_ACQUIRE) == want) break;
                        MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &(int){0},
                                   MPI_STATUS_IGNORE);
                    }
                }
            }
            double per = (now() - t0) / (double)iters / 2;
            if (t > 0 && per < best) best = per;
            long next = calibrate(per * 2, budget);
            MPI_Bcast(&next, 1, MPI_LONG, 0, MPI_COMM_WORLD);
            iters = next;
        }
        if (me == 0) printf("pingpong 8 %.4f us\n", best * 1e6);
        fflush(stdout);
    }
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
                            MPI_Put(local, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
                        else
                            MPI_Get(local, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, win);
                        if (i % 16 == 15) MPI_Win_flush(1, win);
                    }
                    MPI_Win_flush(1, win);
                    double per = (now() - t0) / (double)iters;
                    if (t > 0 && per < best) best = per;
                    iters = calibrate(per, budget);
                }
                printf("%s %zu %.1f MB/s\n", pat == 0 ? "put_bw" : "get_bw", n,
                       (double)n / best / 1e6);
                fflush(stdout);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Win_free(&win);
    free(local);
    MPI_Finalize();
    return 0;
}

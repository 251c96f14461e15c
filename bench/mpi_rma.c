/*
 * mpi_rma.c - one-sided latency and bandwidth, rank 0 to rank 1 in a passive-target
 * epoch (MPI_Win_lock_all) on a window from MPI_Win_allocate: MPI_Put + MPI_Win_flush,
 * MPI_Get + MPI_Win_flush and MPI_Fetch_and_op + MPI_Win_flush latency, and the
 * bandwidth of 64 back-to-back MPI_Puts per flush. Rank 1 waits in MPI_Barrier (inside
 * the library, so implementations that serve RMA in software progress it).
 * Portable MPI: build with terncc, mpicc.openmpi or mpicc.mpich; run on 2 ranks.
 *
 * usage: mpi_rma [max_bytes]   prints one line per (test, size): microseconds or MB/s
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 64

static int iters_for(size_t n)
{
    return n <= 4096 ? 20000 : n <= 65536 ? 2000 : 200;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size != 2) {
        if (rank == 0) fprintf(stderr, "run on 2 ranks\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t max = argc > 1 ? (size_t)atol(argv[1]) : (size_t)1 << 20;
    char *mem, *buf = malloc(max);
    memset(buf, 1, max);
    MPI_Win w;
    MPI_Win_allocate((MPI_Aint)max, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w);
    MPI_Win_lock_all(0, w);
    if (rank == 0) {
        printf("%-12s %9s %12s\n", "test", "bytes", "us_or_MBps");
        long long one = 1, old;
        int it = 20000;
        for (int i = 0; i < 100; i++) {
            MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 1, 0, MPI_SUM, w);
            MPI_Win_flush(1, w);
        }
        double t0 = MPI_Wtime();
        for (int i = 0; i < it; i++) {
            MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, 1, 0, MPI_SUM, w);
            MPI_Win_flush(1, w);
        }
        printf("%-12s %9d %12.3f\n", "fetch_op", 8, (MPI_Wtime() - t0) / it * 1e6);
        for (size_t n = 8; n <= max; n *= 8) {
            it = iters_for(n);
            for (int i = 0; i < 10; i++) {
                MPI_Put(buf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, w);
                MPI_Win_flush(1, w);
            }
            t0 = MPI_Wtime();
            for (int i = 0; i < it; i++) {
                MPI_Put(buf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, w);
                MPI_Win_flush(1, w);
            }
            printf("%-12s %9zu %12.3f\n", "put+flush", n, (MPI_Wtime() - t0) / it * 1e6);
            t0 = MPI_Wtime();
            for (int i = 0; i < it; i++) {
                MPI_Get(buf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, w);
                MPI_Win_flush(1, w);
            }
            printf("%-12s %9zu %12.3f\n", "get+flush", n, (MPI_Wtime() - t0) / it * 1e6);
            int rounds = it / WINDOW > 4 ? it / WINDOW : 4;
            t0 = MPI_Wtime();
            for (int r = 0; r < rounds; r++) {
                for (int k = 0; k < WINDOW; k++)
                    MPI_Put(buf, (int)n, MPI_BYTE, 1, 0, (int)n, MPI_BYTE, w);
                MPI_Win_flush(1, w);
            }
            double s = MPI_Wtime() - t0;
            printf("%-12s %9zu %12.1f\n", "put_bw", n, (double)n * WINDOW * rounds / s / 1e6);
        }
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_unlock_all(w);
    MPI_Win_free(&w);
    free(buf);
    MPI_Finalize();
    return 0;
}

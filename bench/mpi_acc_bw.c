/*
 * mpi_acc_bw.c - bandwidth of large MPI_Accumulate (MPI_SUM) into rank 0: every other rank
 * adds `bytes` of MPI_CHAR (or MPI_INT, MPI_DOUBLE) to the same region of rank 0's window
 * in a lock_all epoch, one MPI_Accumulate + MPI_Win_flush at a time, while rank 0 waits
 * in MPI_Barrier (inside the library, so implementations that apply accumulates in
 * software progress it). Windows from MPI_Win_create (user memory) and MPI_Win_allocate.
 * Prints the aggregate rate at the target: bytes summed into it per second, all origins.
 * Portable MPI: build with terncc, mpicc.openmpi or mpicc.mpich; run on 2 or more ranks.
 *
 * usage: mpi_acc_bw [bytes (1048576)] [iterations (200)] [char|int|double]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double run(int alloc, size_t bytes, int iters, MPI_Datatype dt, int esize)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *base = NULL, *src = malloc(bytes);
    memset(src, 1, bytes);
    MPI_Win w;
    MPI_Aint wsz = rank == 0 ? (MPI_Aint)bytes : 0;
    if (alloc) {
        MPI_Win_allocate(wsz, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &w);
    } else {
        base = rank == 0 ? malloc(bytes) : NULL;
        MPI_Win_create(base, wsz, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &w);
    }
    if (rank == 0) memset(base, 0, bytes);
    int count = (int)(bytes / (size_t)esize);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, w);
    if (rank != 0) { /* warm-up */
        MPI_Accumulate(src, count, dt, 0, 0, count, dt, MPI_SUM, w);
        MPI_Win_flush(0, w);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank != 0)
        for (int i = 0; i < iters; i++) {
            MPI_Accumulate(src, count, dt, 0, 0, count, dt, MPI_SUM, w);
            MPI_Win_flush(0, w);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    MPI_Win_unlock_all(w);
    MPI_Win_free(&w);
    if (!alloc) free(base);
    free(src);
    return (double)bytes * iters * (size - 1) / t / 1e6;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t bytes = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : 1u << 20;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    const char *ty = argc > 3 ? argv[3] : "char";
    MPI_Datatype dt = MPI_CHAR;
    int es = 1;
    if (strcmp(ty, "int") == 0) {
        dt = MPI_INT;
        es = (int)sizeof(int);
    } else if (strcmp(ty, "double") == 0) {
        dt = MPI_DOUBLE;
        es = (int)sizeof(double);
    }
    if (size < 2 || iters < 1 || bytes < (size_t)es) {
        if (rank == 0)
            fprintf(stderr, "usage: mpi_acc_bw [bytes] [iters] [char|int|double], 2+ ranks\n");
        MPI_Finalize();
        return 1;
    }
    for (int alloc = 0; alloc < 2; alloc++) {
        double mbs = run(alloc, bytes, iters, dt, es);
        if (rank == 0)
            printf("acc_bw %s %s ranks=%d bytes=%zu MB/s %.1f\n", alloc ? "allocate" : "create", ty,
                   size, bytes, mbs);
    }
    MPI_Finalize();
    return 0;
}

/*
 * mpi_vector_pingpong.c - ping-pong of a non-contiguous message (MPI_Type_vector of
 * `blocks` blocks of `blen` bytes, stride 2 * blen) next to the same bytes sent
 * contiguously: what a derived datatype costs on top of the data. Portable MPI: build it
 * with terncc, mpicc.openmpi or mpicc.mpich and run it on 2 ranks.
 *
 * usage: mpi_vector_pingpong [iterations [blocks blen]]   prints: shape bytes vector_us contig_us
 *        mpi_vector_pingpong sweep BLEN [MAXBYTES]          the same for 1 KiB .. MAXBYTES
 *                                                           (64 MiB) in blocks of BLEN bytes,
 *                                                           best of 3 trials, MB/s of vector
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double pingpong(int rank, void *buf, int count, MPI_Datatype t, int iters)
{
    int peer = 1 - rank;
    for (int i = 0; i < iters / 10 + 10; i++) { /* warm-up */
        if (rank == 0) {
            MPI_Send(buf, count, t, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, count, t, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, count, t, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, count, t, peer, 0, MPI_COMM_WORLD);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(buf, count, t, peer, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, count, t, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(buf, count, t, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, count, t, peer, 0, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / iters / 2 * 1e6; /* one-way microseconds */
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
    if (argc > 2 && strcmp(argv[1], "sweep") == 0) {
        int blen = atoi(argv[2]);
        size_t maxb = argc > 3 ? (size_t)atol(argv[3]) : (size_t)64 << 20;
        if (blen <= 0) MPI_Abort(MPI_COMM_WORLD, 1);
        if (rank == 0)
            printf("%-9s %7s %9s %11s %11s %7s %9s\n", "bytes", "blen", "blocks", "vector_us",
                   "contig_us", "ratio", "vec_MB/s");
        for (size_t bytes = 1024; bytes <= maxb; bytes *= 4) {
            int blocks = (int)(bytes / (size_t)blen);
            if (blocks < 1) continue;
            char *buf = malloc(2 * bytes);
            memset(buf, rank, 2 * bytes);
            MPI_Datatype v;
            MPI_Type_vector(blocks, blen, 2 * blen, MPI_BYTE, &v);
            MPI_Type_commit(&v);
            /* about 0.1 s of copying at 5 GB/s per measurement, at least 4 round trips */
            int it = (int)(1e9 / 10 / (double)bytes);
            if (it > 2000) it = 2000;
            if (it < 4) it = 4;
            /* best of three alternating trials: the machine may be shared */
            double tv = 1e30, tc = 1e30;
            for (int trial = 0; trial < 3; trial++) {
                double a = pingpong(rank, buf, 1, v, it);
                double b = pingpong(rank, buf, (int)bytes, MPI_BYTE, it);
                if (a < tv) tv = a;
                if (b < tc) tc = b;
            }
            if (rank == 0)
                printf("%-9zu %7d %9d %11.3f %11.3f %7.2f %9.0f\n", bytes, blen, blocks, tv, tc,
                       tv / tc, (double)bytes / tv);
            MPI_Type_free(&v);
            free(buf);
        }
        MPI_Finalize();
        return 0;
    }
    int iters = argc > 1 ? atoi(argv[1]) : 20000;
    static int shapes[][2] = {{8, 64}, {16, 256}, {32, 1024}, {60, 1000}, {8, 65536}};
    size_t nshapes = sizeof shapes / sizeof shapes[0];
    if (argc > 3) { /* one shape */
        shapes[0][0] = atoi(argv[2]);
        shapes[0][1] = atoi(argv[3]);
        nshapes = 1;
    }
    if (rank == 0)
        printf("%-14s %9s %11s %11s %7s\n", "blocks x len", "bytes", "vector_us", "contig_us",
               "ratio");
    for (size_t s = 0; s < nshapes; s++) {
        int blocks = shapes[s][0], blen = shapes[s][1];
        size_t bytes = (size_t)blocks * (size_t)blen;
        char *buf = malloc(2 * bytes);
        memset(buf, rank, 2 * bytes);
        MPI_Datatype v;
        MPI_Type_vector(blocks, blen, 2 * blen, MPI_BYTE, &v);
        MPI_Type_commit(&v);
        int it = bytes > 100000 ? iters / 10 : iters;
        double tv = pingpong(rank, buf, 1, v, it);
        double tc = pingpong(rank, buf, (int)bytes, MPI_BYTE, it);
        if (rank == 0) {
            char shape[32];
            snprintf(shape, sizeof shape, "%d x %d", blocks, blen);
            printf("%-14s %9zu %11.3f %11.3f %7.2f\n", shape, bytes, tv, tc, tv / tc);
        }
        MPI_Type_free(&v);
        free(buf);
    }
    MPI_Finalize();
    return 0;
}

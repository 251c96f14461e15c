/*
 * mpi_mix.c - MPI and SHMEM in one program, built by tern-oshcc (libtern_mpi carries
 * both layers on one core): MPI_Init first, then shmem_init; PE numbers are MPI ranks; a
 * ring of shmem puts is checked, then an MPI_Allreduce of what arrived; shmem_finalize
 * leaves MPI running; MPI_Finalize ends it. With the argument shmem_first, shmem_init
 * starts the core and MPI_Init joins it (MPI_Initialized is 0 until then).
 */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "FAIL [rank %d] ", rank);                                                  \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
    } while (0)

static long box[4];

int main(int argc, char **argv)
{
    int rank = -1, size, flag = -1;
    int shmem_first = argc > 1 && strcmp(argv[1], "shmem_first") == 0;
    if (shmem_first) {
        shmem_init();
        MPI_Initialized(&flag);
        if (flag != 0) FAIL("MPI_Initialized is %d after shmem_init alone", flag);
    }
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) FAIL("MPI_Init failed");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!shmem_first) shmem_init();
    if (shmem_my_pe() != rank || shmem_n_pes() != size) FAIL("PE %d of %d", shmem_my_pe(), size);
    long *heap = shmem_calloc(4, sizeof(long));
    int right = (rank + 1) % size;
    shmem_long_p(&heap[1], 100 + rank, right);
    shmem_long_p(&box[2], 200 + rank, right);
    shmem_barrier_all();
    int left = (rank + size - 1) % size;
    if (heap[1] != 100 + left || box[2] != 200 + left)
        FAIL("got %ld %ld from PE %d", heap[1], box[2], left);
    long sum = 0, mine = heap[1];
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (sum != 100L * size + (long)size * (size - 1) / 2) FAIL("allreduce %ld", sum);
    shmem_free(heap);
    shmem_finalize();
    MPI_Barrier(MPI_COMM_WORLD); /* MPI still works after shmem_finalize */
    MPI_Finalize();
    if (rank == 0) printf("mpi_mix: ok\n");
    return 0;
}

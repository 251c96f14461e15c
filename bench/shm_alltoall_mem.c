/*
 * shm_alltoall_mem.c - shared memory a job holds after a 2 KiB all-to-all repeated 20
 * times (bench/shm_memory.sh). Built with each MPI's mpicc and with terncc. After the
 * exchanges rank 0 reads Shmem from /proc/meminfo while every rank is still alive and
 * prints it in kB; the script subtracts the value the machine had before the job.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long shmem_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Shmem:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kb;
}

int main(int argc, char **argv)
{
    int rank, size, bytes = argc > 1 ? atoi(argv[1]) : 2048, reps = argc > 2 ? atoi(argv[2]) : 20;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *out = malloc((size_t)size * bytes), *in = malloc((size_t)size * bytes);
    for (int i = 0; i < size * bytes; i++)
        out[i] = (char)(rank + i);
    double t0 = MPI_Wtime();
    for (int r = 0; r < reps; r++)
        MPI_Alltoall(out, bytes, MPI_CHAR, in, bytes, MPI_CHAR, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    for (int p = 0; p < size; p++)
        if (in[(size_t)p * bytes + 1] != (char)(p + rank * bytes + 1)) {
            fprintf(stderr, "rank %d: wrong data from %d\n", rank, p);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("shmem_kb %ld time_s %.4f\n", shmem_kb(), t);
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}

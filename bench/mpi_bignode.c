/*
 * mpi_bignode.c - what a job of many ranks on one node pays per phase: start-up (the
 * launcher's spawn, then MPI_Init with its PMI exchange and transport set-up),
 * communicator creation (MPI_Comm_split, MPI_Comm_dup), barrier, an 8-byte allreduce, a
 * 2 KiB-per-peer alltoall, and MPI_Finalize. Built with terncc and with other MPIs'
 * mpicc by bench/bignode.sh, which runs it at 64, 128 and 256 ranks.
 *
 *   mpi_bignode ITERS
 * The launching script exports BIGNODE_T0, the wall-clock time (s since the epoch) just
 * before it started the launcher. Rank 0 prints one line per phase, "name microseconds"
 * (the slowest rank; loops: per call), then "fini_start <epoch s>": the moment the
 * slowest rank entered MPI_Finalize, from which the script times finalize and exit.
 * With BIGNODE_SHMEM0 (the node's Shmem in kB before the launch) it also prints
 * "shmem_kB <kB>": the node's shared memory after the all-to-alls, less that value.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

static double wall(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (double)tv.tv_sec + (double)tv.tv_usec * 1e-6;
}

/* Shmem of /proc/meminfo in kB (-1: unreadable). */
static long shmem_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (f == NULL) return -1;
    char line[128];
    long kb = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "Shmem: %ld kB", &kb) == 1) break;
    fclose(f);
    return kb;
}

/* The slowest rank's value, printed by rank 0 in microseconds. */
static void report(const char *name, double seconds)
{
    double worst = 0;
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Reduce(&seconds, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0) printf("%s %.2f\n", name, worst * 1e6);
}

int main(int argc, char **argv)
{
    double t_main = wall();
    const char *t0s = getenv("BIGNODE_T0");
    double t0 = t0s ? atof(t0s) : t_main;
    MPI_Init(&argc, &argv);
    double t_init = wall();
    int iters = argc > 1 ? atoi(argv[1]) : 100;
    if (iters < 1) iters = 1;
    int me, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    report("launch", t_main - t0);
    report("init", t_init - t_main);

    MPI_Barrier(MPI_COMM_WORLD);
    double t = wall();
    MPI_Comm half, dup;
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, p - me, &half);
    report("comm_split", wall() - t);
    MPI_Barrier(MPI_COMM_WORLD);
    t = wall();
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    report("comm_dup", wall() - t);

    /* First calls set things up (shared regions, connections): time the steady state. */
    MPI_Barrier(dup);
    t = wall();
    for (int i = 0; i < iters; i++)
        MPI_Barrier(dup);
    report("barrier", (wall() - t) / iters);

    long x = me, y = 0;
    MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, dup);
    MPI_Barrier(dup);
    t = wall();
    for (int i = 0; i < iters; i++)
        MPI_Allreduce(&x, &y, 1, MPI_LONG, MPI_SUM, dup);
    report("allreduce_8B", (wall() - t) / iters);
    if (y != (long)p * (p - 1) / 2) {
        fprintf(stderr, "mpi_bignode: allreduce gave %ld, want %ld\n", y, (long)p * (p - 1) / 2);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }

    size_t blk = 2048;
    char *sb = malloc(blk * (size_t)p), *rb = malloc(blk * (size_t)p);
    if (!sb || !rb) MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < p; i++)
        memset(sb + (size_t)i * blk, (me + i) & 0xff, blk);
    int a2a = iters / 10 > 2 ? iters / 10 : 2;
    MPI_Alltoall(sb, (int)blk, MPI_CHAR, rb, (int)blk, MPI_CHAR, dup);
    MPI_Barrier(dup);
    t = wall();
    for (int i = 0; i < a2a; i++)
        MPI_Alltoall(sb, (int)blk, MPI_CHAR, rb, (int)blk, MPI_CHAR, dup);
    report("alltoall_2KiB", (wall() - t) / a2a);
    /* The node's shared memory now, less the value the script read before the launch
     * (BIGNODE_SHMEM0, kB): what this job's segments hold after the all-to-alls. */
    MPI_Barrier(dup);
    const char *shm0 = getenv("BIGNODE_SHMEM0");
    if (me == 0 && shm0) {
        long now = shmem_kb();
        if (now >= 0) printf("shmem_kB %ld\n", now - atol(shm0));
    }
    for (int i = 0; i < p; i++)
        if ((unsigned char)rb[(size_t)i * blk + blk - 1] != (unsigned char)((i + me) & 0xff)) {
            fprintf(stderr, "mpi_bignode: alltoall block %d wrong at rank %d\n", i, me);
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
    free(sb);
    free(rb);

    MPI_Comm_free(&half);
    MPI_Comm_free(&dup);
    double fs = wall(), worst = 0;
    MPI_Reduce(&fs, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (me == 0) {
        printf("fini_start %.6f\n", worst);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}

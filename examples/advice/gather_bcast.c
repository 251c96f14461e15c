/*
 * gather_bcast.c - every rank computes a block, then all ranks need every block.
 *
 * Before: MPI_Gather of the blocks to rank 0, then MPI_Bcast of the whole array from it
 * (two collectives, the second one p times larger). After (--after): one MPI_Allgather,
 * which `ternbench advise` suggests for this phase. -n is the bytes of one rank's block.
 */
#include "advice_util.h"

static double value(int it, int rank, long i)
{
    return (double)it * 1e6 + rank * 1e3 + (double)(i % 997);
}

int main(int argc, char **argv)
{
    struct advice_opts o;
    MPI_Init(&argc, &argv);
    if (advice_parse(argc, argv, &o, 4096)) {
        MPI_Finalize();
        return 2;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = o.bytes / 8;
    double *mine = malloc(n * sizeof *mine);
    double *all = malloc((size_t)size * n * sizeof *all);
    long errors = 0;
    if (!mine || !all) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < o.iters; it++) {
        advice_compute(o.compute_us);
        for (long i = 0; i < n; i++)
            mine[i] = value(it, rank, i);
        if (o.after) {
            MPI_Allgather(mine, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, MPI_COMM_WORLD);
        } else {
            MPI_Gather(mine, (int)n, MPI_DOUBLE, all, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
            MPI_Bcast(all, (int)(size * n), MPI_DOUBLE, 0, MPI_COMM_WORLD);
        }
        for (int r = 0; r < size; r++)
            for (long i = 0; i < n; i++)
                errors += all[r * n + i] != value(it, r, i);
    }
    double t = MPI_Wtime() - t0;
    int rc = advice_report("gather_bcast", &o, t, errors);
    free(mine);
    free(all);
    MPI_Finalize();
    return rc;
}

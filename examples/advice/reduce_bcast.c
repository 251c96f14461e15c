/*
 * reduce_bcast.c - every rank needs the sum of a vector over all ranks.
 *
 * Each iteration computes, then sums -n bytes of doubles (default 4 KiB) over all ranks.
 * Before: MPI_Reduce of the vector to rank 0, then MPI_Bcast of the sum from rank 0 (two
 * collectives, the second waits for the first to finish at the root). After (--after):
 * one MPI_Allreduce, which `ternbench advise` suggests. Every rank checks every element of
 * the sum it ends with (integers in doubles: exact).
 */
#include "advice_util.h"

static double value(int it, int rank, long i)
{
    return (double)((it % 1000) * 7 + rank * 3 + (i % 101));
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
    double *sum = malloc(n * sizeof *sum);
    long errors = 0;
    if (!mine || !sum) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < o.iters; it++) {
        advice_compute(o.compute_us);
        for (long i = 0; i < n; i++)
            mine[i] = value(it, rank, i);
        memset(sum, 0, n * sizeof *sum);
        if (o.after) {
            MPI_Allreduce(mine, sum, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        } else {
            MPI_Reduce(mine, sum, (int)n, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
            MPI_Bcast(sum, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        }
        for (long i = 0; i < n; i++) {
            double want = 0;
            for (int r = 0; r < size; r++)
                want += value(it, r, i);
            errors += sum[i] != want;
        }
    }
    double t = MPI_Wtime() - t0;
    int rc = advice_report("reduce_bcast", &o, t, errors);
    free(mine);
    free(sum);
    MPI_Finalize();
    return rc;
}

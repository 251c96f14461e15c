/*
 * sendloop.c - every rank sends a different block to every other rank.
 *
 * Before: a loop over the peers in rank order, a blocking MPI_Send and MPI_Recv with each
 * (the lower rank of a pair sends first), so the pairs are served one after the other.
 * After (--after): one MPI_Alltoallv, which `ternbench advise` suggests for this phase.
 * -n is the bytes sent to each peer.
 */
#include "advice_util.h"

static long value(int it, int from, int to, long i)
{
    return ((long)it << 40) + ((long)from << 28) + ((long)to << 16) + (i & 0xffff);
}

int main(int argc, char **argv)
{
    struct advice_opts o;
    MPI_Init(&argc, &argv);
    if (advice_parse(argc, argv, &o, 65536)) {
        MPI_Finalize();
        return 2;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = o.bytes / 8;
    long *out = malloc((size_t)size * n * sizeof *out);
    long *in = malloc((size_t)size * n * sizeof *in);
    int *counts = malloc(size * sizeof *counts);
    int *displs = malloc(size * sizeof *displs);
    long errors = 0;
    if (!out || !in || !counts || !displs) MPI_Abort(MPI_COMM_WORLD, 3);
    for (int r = 0; r < size; r++) {
        counts[r] = r == rank ? 0 : (int)n; /* nothing to myself, as in the loop */
        displs[r] = (int)(r * n);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < o.iters; it++) {
        advice_compute(o.compute_us);
        for (int r = 0; r < size; r++)
            for (long i = 0; i < n; i++)
                out[r * n + i] = value(it, rank, r, i);
        if (o.after) {
            MPI_Alltoallv(out, counts, displs, MPI_LONG, in, counts, displs, MPI_LONG,
                          MPI_COMM_WORLD);
        } else {
            for (int r = 0; r < size; r++) {
                if (r == rank) continue;
                if (rank < r) {
                    MPI_Send(out + r * n, (int)n, MPI_LONG, r, it, MPI_COMM_WORLD);
                    MPI_Recv(in + r * n, (int)n, MPI_LONG, r, it, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(in + r * n, (int)n, MPI_LONG, r, it, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
                    MPI_Send(out + r * n, (int)n, MPI_LONG, r, it, MPI_COMM_WORLD);
                }
            }
        }
        for (int r = 0; r < size; r++)
            for (long i = 0; r != rank && i < n; i++)
                errors += in[r * n + i] != value(it, r, rank, i);
    }
    double t = MPI_Wtime() - t0;
    int rc = advice_report("sendloop", &o, t, errors);
    free(out);
    free(in);
    free(counts);
    free(displs);
    MPI_Finalize();
    return rc;
}

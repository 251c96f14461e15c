/*
 * overlap.c - partners exchange a block each iteration, next to computation.
 *
 * Ranks pair up (0 with 1, 2 with 3, ...; an odd last rank only computes). Each iteration
 * computes, then exchanges -n bytes (default 8 KiB, an eager size on shared memory)
 * with the partner. Before: the computation, then a blocking MPI_Sendrecv. After
 * (--after): the exchange is started with MPI_Irecv + MPI_Isend before the computation
 * and completed by MPI_Waitall after it, which `ternbench advise` suggests (overlap).
 * The block sent in iteration `it` is known before that iteration's computation in both
 * forms (as a halo computed in the iteration before would be), so both send the same
 * data; the partner checks every value.
 */
#include "advice_util.h"

static long value(int it, int rank, long i)
{
    return ((long)it << 32) + ((long)rank << 24) + i;
}

int main(int argc, char **argv)
{
    struct advice_opts o;
    MPI_Init(&argc, &argv);
    if (advice_parse(argc, argv, &o, 8192)) {
        MPI_Finalize();
        return 2;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = o.bytes / 8;
    long *out = malloc(n * sizeof *out), *in = malloc(n * sizeof *in);
    long errors = 0;
    int partner = rank ^ 1;
    int active = partner < size;
    if (!out || !in) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < o.iters; it++) {
        if (active) {
            for (long i = 0; i < n; i++)
                out[i] = value(it, rank, i);
            memset(in, 0, n * sizeof *in);
        }
        if (!active) {
            advice_compute(o.compute_us);
            continue;
        }
        if (o.after) {
            MPI_Request rq[2];
            MPI_Irecv(in, (int)n, MPI_LONG, partner, it, MPI_COMM_WORLD, &rq[0]);
            MPI_Isend(out, (int)n, MPI_LONG, partner, it, MPI_COMM_WORLD, &rq[1]);
            advice_compute(o.compute_us);
            MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        } else {
            advice_compute(o.compute_us);
            MPI_Sendrecv(out, (int)n, MPI_LONG, partner, it, in, (int)n, MPI_LONG, partner, it,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (long i = 0; i < n; i++)
            errors += in[i] != value(it, partner, i);
    }
    double t = MPI_Wtime() - t0;
    int rc = advice_report("overlap", &o, t, errors);
    free(out);
    free(in);
    MPI_Finalize();
    return rc;
}

/*
 * smallmsgs.c - a rank sends its partner many small records each iteration.
 *
 * Ranks pair up (0 with 1, 2 with 3, ...; an odd last rank only computes). Before: the
 * even rank sends each of K records as its own message (-n bytes each, K = 64).
 * After (--after): it packs the K records into one buffer and sends one message, which
 * `ternbench advise` suggests (batching). The partner checks every record.
 */
#include "advice_util.h"

#define K 64

static long value(int it, int rec, long i)
{
    return ((long)it << 32) + ((long)rec << 16) + i;
}

int main(int argc, char **argv)
{
    struct advice_opts o;
    MPI_Init(&argc, &argv);
    if (advice_parse(argc, argv, &o, 64)) {
        MPI_Finalize();
        return 2;
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long n = o.bytes / 8; /* longs per record */
    long *buf = malloc(K * n * sizeof *buf);
    long errors = 0;
    int partner = rank ^ 1;
    int active = partner < size;
    if (!buf) MPI_Abort(MPI_COMM_WORLD, 3);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < o.iters; it++) {
        advice_compute(o.compute_us);
        if (!active) continue;
        if (rank % 2 == 0) {
            for (int k = 0; k < K; k++)
                for (long i = 0; i < n; i++)
                    buf[k * n + i] = value(it, k, i);
            if (o.after) {
                MPI_Send(buf, (int)(K * n), MPI_LONG, partner, it, MPI_COMM_WORLD);
            } else {
                for (int k = 0; k < K; k++)
                    MPI_Send(buf + k * n, (int)n, MPI_LONG, partner, it, MPI_COMM_WORLD);
            }
        } else {
            memset(buf, 0, K * n * sizeof *buf);
            if (o.after) {
                MPI_Recv(buf, (int)(K * n), MPI_LONG, partner, it, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            } else {
                for (int k = 0; k < K; k++)
                    MPI_Recv(buf + k * n, (int)n, MPI_LONG, partner, it, MPI_COMM_WORLD,
                             MPI_STATUS_IGNORE);
            }
            for (int k = 0; k < K; k++)
                for (long i = 0; i < n; i++)
                    errors += buf[k * n + i] != value(it, k, i);
        }
    }
    double t = MPI_Wtime() - t0;
    int rc = advice_report("smallmsgs", &o, t, errors);
    free(buf);
    MPI_Finalize();
    return rc;
}

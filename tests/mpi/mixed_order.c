/*
 * mixed_order.c - non-blocking collectives started before a blocking collective on some
 * ranks and after it on others. MPI asks for one order of all collectives on a
 * communicator; MPICH and Open MPI match blocking and non-blocking ones apart, programs
 * rely on it (mpi4py's ULFM test: one rank's MPI_Iallreduce, then MPI_Barrier; the others'
 * MPI_Barrier, then MPI_Iallreduce), and tern used to hang there (coll_sched.c numbers
 * the two kinds apart). Each rank in turn is the one that starts early:
 * - Iallreduce (BAND) around a Barrier, as mpi4py does;
 * - Ibcast and Iallreduce (SUM) around an Allreduce and a Bcast, values checked;
 * - a persistent Allreduce started on either side of a blocking Allreduce.
 * Within each kind the order is the same on every rank, as MPI requires.
 */
#include "mpi_check.h"

static int size;

static void band_around_barrier(int early)
{
    int in = mt_rank == early ? 0xb : 0xd, out = -1;
    MPI_Request q;
    if (mt_rank == early) {
        OK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &q));
        OK(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        OK(MPI_Iallreduce(&in, &out, 1, MPI_INT, MPI_BAND, MPI_COMM_WORLD, &q));
    }
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    CHECKF(out == (size > 1 ? (0xb & 0xd) : 0xb), "BAND %#x", out);
}

static void two_each(int early)
{
    enum { N = 300 }; /* over one eager frame on every transport: the data must stay apart */
    static int bsrc[N];
    int root = (early + 1) % size;
    for (int i = 0; i < N; i++)
        bsrc[i] = mt_rank == root ? i * 7 + early : -1;
    int isum = 0, nb = mt_rank + 1, ball = mt_rank * 10, bsum = 0, bb = mt_rank == early ? 99 : 0;
    MPI_Request q[2];
    if (mt_rank == early) {
        OK(MPI_Ibcast(bsrc, N, MPI_INT, root, MPI_COMM_WORLD, &q[0]));
        OK(MPI_Iallreduce(&nb, &isum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]));
        OK(MPI_Allreduce(&ball, &bsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        OK(MPI_Bcast(&bb, 1, MPI_INT, early, MPI_COMM_WORLD));
    } else {
        OK(MPI_Allreduce(&ball, &bsum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        OK(MPI_Bcast(&bb, 1, MPI_INT, early, MPI_COMM_WORLD));
        OK(MPI_Ibcast(bsrc, N, MPI_INT, root, MPI_COMM_WORLD, &q[0]));
        OK(MPI_Iallreduce(&nb, &isum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[1]));
    }
    OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < N; i++)
        CHECKF(bsrc[i] == i * 7 + early, "Ibcast[%d] = %d", i, bsrc[i]);
    CHECKF(isum == size * (size + 1) / 2, "Iallreduce %d", isum);
    CHECKF(bsum == 10 * size * (size - 1) / 2, "Allreduce %d", bsum);
    CHECKF(bb == 99, "Bcast %d", bb);
}

static void persistent_around_blocking(int early)
{
    int in = mt_rank + 1, out = -1, bin = 2 * mt_rank, bout = -1;
    MPI_Request q;
    OK(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
    for (int round = 0; round < 2; round++) {
        if (mt_rank == early) {
            OK(MPI_Start(&q));
            OK(MPI_Allreduce(&bin, &bout, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
        } else {
            OK(MPI_Allreduce(&bin, &bout, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
            OK(MPI_Start(&q));
        }
        OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        CHECKF(out == size, "persistent MAX %d", out);
        CHECKF(bout == 0, "blocking MIN %d", bout);
    }
    OK(MPI_Request_free(&q));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int early = 0; early < size; early++) {
        OK(MPI_Barrier(MPI_COMM_WORLD));
        band_around_barrier(early);
        two_each(early);
        persistent_around_blocking(early);
    }
    return mt_done("mixed_order");
}

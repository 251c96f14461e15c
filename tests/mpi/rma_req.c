/*
 * rma_req.c - request-based RMA: MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate
 * in passive-target epochs (MPI_Win_lock_all and MPI_Win_lock), on windows of user
 * memory (MPI_Win_create) and allocated ones (MPI_Win_allocate). The origin buffer of a
 * completed Rput/Raccumulate is overwritten at once (local completion means the data was
 * taken); Rget results are checked when their request completes, also into a vector
 * datatype; concurrent Rget_accumulate on one counter return distinct old values.
 * Outside a passive epoch the calls fail with MPI_ERR_RMA_SYNC.
 */
#include "mpi_check.h"

#define M   64 /* ints per rank block */
#define ACC 8  /* ints accumulated by everyone */

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me = mt_rank, np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int nwin = np * M + ACC + 1; /* blocks, accumulate area, counter */
    int *obuf = malloc(2 * M * sizeof(int)), *rbuf = malloc(2 * M * sizeof(int));
    for (int flavor = 0; flavor < 2; flavor++) {
        int *base;
        MPI_Win win;
        if (flavor == 0) {
            base = malloc((size_t)nwin * sizeof(int));
            memset(base, 0, (size_t)nwin * sizeof(int));
            OK(MPI_Win_create(base, (MPI_Aint)nwin * (MPI_Aint)sizeof(int), sizeof(int),
                              MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        } else {
            OK(MPI_Win_allocate((MPI_Aint)nwin * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &base, &win));
            memset(base, 0, (size_t)nwin * sizeof(int));
        }
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Request rq, rqs[4];
        int t = (me + 1) % np;

        /* Not in a passive-target epoch (an erroneous program: Open MPI 4.1's osc/pt2pt
         * does not detect it, tern does). */
#ifdef TERN_MPI
        FAILS(MPI_Rput(obuf, 1, MPI_INT, t, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC);
        FAILS(MPI_Rget(rbuf, 1, MPI_INT, t, 0, 1, MPI_INT, win, &rq), MPI_ERR_RMA_SYNC);
        OK(MPI_Win_fence(0, win));
        FAILS(MPI_Raccumulate(obuf, 1, MPI_INT, t, 0, 1, MPI_INT, MPI_SUM, win, &rq),
              MPI_ERR_RMA_SYNC);
        OK(MPI_Win_fence(0, win));
#endif

        OK(MPI_Win_lock_all(0, win));
        /* Rput my block into t's window; reuse the origin as soon as it completes. */
        for (int i = 0; i < M; i++)
            obuf[i] = me * 1000 + i + flavor;
        OK(MPI_Rput(obuf, M, MPI_INT, t, (MPI_Aint)me * M, M, MPI_INT, win, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        CHECK(rq == MPI_REQUEST_NULL);
        for (int i = 0; i < M; i++)
            obuf[i] = -7;
        /* Raccumulate me + 1 into everyone's accumulate area. */
        for (int r = 0; r < np; r++) {
            for (int i = 0; i < ACC; i++)
                obuf[i] = me + 1;
            OK(MPI_Raccumulate(obuf, ACC, MPI_INT, r, (MPI_Aint)np * M, ACC, MPI_INT, MPI_SUM, win,
                               &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
            for (int i = 0; i < ACC; i++)
                obuf[i] = 1000;
        }
        /* A counter on rank 0: Rget_accumulate(+1) returns the value before. */
        int one = 1, old = -1;
        OK(MPI_Rget_accumulate(&one, 1, MPI_INT, &old, 1, MPI_INT, 0, (MPI_Aint)np * M + ACC, 1,
                               MPI_INT, MPI_SUM, win, &rqs[0]));
        OK(MPI_Wait(&rqs[0], MPI_STATUS_IGNORE));
        CHECK(old >= 0 && old < np);
        OK(MPI_Win_flush_all(win));
        MPI_Barrier(MPI_COMM_WORLD); /* every Rput/Raccumulate is complete at its target */

        /* Read back: my block at t (contiguous and into every other int of rbuf), the
         * accumulate area at t, all with requests completed by Waitall. */
        for (int i = 0; i < 2 * M; i++)
            rbuf[i] = -1;
        int acc[ACC];
        MPI_Datatype vec;
        OK(MPI_Type_vector(M, 1, 2, MPI_INT, &vec));
        OK(MPI_Type_commit(&vec));
        int blk[M];
        OK(MPI_Rget(blk, M, MPI_INT, t, (MPI_Aint)me * M, M, MPI_INT, win, &rqs[0]));
        OK(MPI_Rget(rbuf, 1, vec, t, (MPI_Aint)me * M, M, MPI_INT, win, &rqs[1]));
        OK(MPI_Rget(acc, ACC, MPI_INT, t, (MPI_Aint)np * M, ACC, MPI_INT, win, &rqs[2]));
        int zero = 0, cnt = -1;
        OK(MPI_Rget_accumulate(&zero, 1, MPI_INT, &cnt, 1, MPI_INT, 0, (MPI_Aint)np * M + ACC, 1,
                               MPI_INT, MPI_NO_OP, win, &rqs[3]));
        OK(MPI_Waitall(4, rqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < M; i++) {
            CHECKF(blk[i] == me * 1000 + i + flavor, "flavor %d blk[%d] = %d", flavor, i, blk[i]);
            CHECK(rbuf[2 * i] == me * 1000 + i + flavor && rbuf[2 * i + 1] == -1);
        }
        for (int i = 0; i < ACC; i++)
            CHECKF(acc[i] == np * (np + 1) / 2, "acc[%d] = %d", i, acc[i]);
        CHECKF(cnt == np, "counter %d", cnt);
        /* MPI_PROC_NULL completes at once. */
        OK(MPI_Rput(obuf, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, win, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        OK(MPI_Win_unlock_all(win));
        /* The old counter values are distinct: their sum is 0 + 1 + ... + np-1. */
        int sum = 0;
        OK(MPI_Allreduce(&old, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        CHECK(sum == np * (np - 1) / 2);

        /* Per-target lock: Rget inside MPI_Win_lock(SHARED) / unlock. */
        int src = (me + np - 1) % np, got[M];
        OK(MPI_Win_lock(MPI_LOCK_SHARED, me, 0, win));
        OK(MPI_Rget(got, M, MPI_INT, me, (MPI_Aint)src * M, M, MPI_INT, win, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        OK(MPI_Win_unlock(me, win));
        for (int i = 0; i < M; i++)
            CHECK(got[i] == src * 1000 + i + flavor);
        MPI_Type_free(&vec);
        MPI_Barrier(MPI_COMM_WORLD);
        OK(MPI_Win_free(&win));
        if (flavor == 0) free(base);
    }
    free(obuf);
    free(rbuf);
    return mt_done("rma_req");
}

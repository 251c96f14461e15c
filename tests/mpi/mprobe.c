/*
 * mprobe.c - matched probes: MPI_Mprobe/MPI_Improbe take the message out of matching
 * (a later MPI_Recv or MPI_Iprobe with the same envelope sees the next message, not it),
 * MPI_Mrecv/MPI_Imrecv receive exactly that message (eager and large, contiguous and
 * vector datatypes), MPI_PROC_NULL gives MPI_MESSAGE_NO_PROC, and a bad message handle
 * is MPI_ERR_REQUEST. Every rank sends to every other; data checked byte for byte.
 */
#include "mpi_check.h"

#define BIG (1 << 20) /* past every eager limit: rendezvous */

static int val(int src, int dst, int k, int i)
{
    return src * 1000003 + dst * 10007 + k * 101 + i;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    int me, np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    me = mt_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* PROC_NULL. */
    MPI_Message msg = MPI_MESSAGE_NULL;
    MPI_Status st;
    OK(MPI_Mprobe(MPI_PROC_NULL, 0, MPI_COMM_WORLD, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NO_PROC && st.MPI_SOURCE == MPI_PROC_NULL);
    int x = 7;
    OK(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st));
    CHECK(msg == MPI_MESSAGE_NULL && st.MPI_SOURCE == MPI_PROC_NULL && x == 7);
    int cnt = -1;
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == 0);
    int flag = 0;
    OK(MPI_Improbe(MPI_PROC_NULL, 3, MPI_COMM_WORLD, &flag, &msg, &st));
    CHECK(flag && msg == MPI_MESSAGE_NO_PROC);
    MPI_Request rq;
    OK(MPI_Imrecv(&x, 1, MPI_INT, &msg, &rq));
    CHECK(msg == MPI_MESSAGE_NULL);
    OK(MPI_Wait(&rq, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);

    /* Bad handles. */
    msg = MPI_MESSAGE_NULL;
#ifdef TERN_MPI /* Open MPI 4.1 raises this on MPI_COMM_NULL, whose handler is fatal */
    FAILS(MPI_Mrecv(&x, 1, MPI_INT, &msg, &st), MPI_ERR_REQUEST);
#endif
    FAILS(MPI_Mprobe(np, 0, MPI_COMM_WORLD, &msg, &st), MPI_ERR_RANK);

    /* Each rank sends to every other: two small messages with tag 5 (k = 0, 1), one big
     * with tag 6. The receiver mprobes tag 5 from ANY_SOURCE, then checks that an Iprobe
     * of the same envelope does not see the matched message (it sees the second one or
     * none), receives the second one with MPI_Recv first, and only then the matched one. */
    int n = 64;
    int *sbuf = malloc(2 * (size_t)n * (size_t)np * sizeof(int));
    int *big = malloc(BIG);
    int *bigr = malloc(BIG);
    MPI_Request *sreq = malloc(3 * (size_t)np * sizeof *sreq);
    int ns = 0;
    for (int d = 0; d < np; d++) {
        if (d == me) continue;
        for (int k = 0; k < 2; k++) {
            int *p = sbuf + ((size_t)d * 2 + (size_t)k) * (size_t)n;
            for (int i = 0; i < n; i++)
                p[i] = val(me, d, k, i);
            OK(MPI_Isend(p, n, MPI_INT, d, 5, MPI_COMM_WORLD, &sreq[ns++]));
        }
    }
    for (int i = 0; i < BIG / (int)sizeof(int); i++)
        big[i] = val(me, 0, 9, i);
    for (int d = 0; d < np; d++)
        if (d != me)
            OK(MPI_Isend(big, BIG / (int)sizeof(int), MPI_INT, d, 6, MPI_COMM_WORLD, &sreq[ns++]));

    int got[64] = {0};
    for (int m = 0; m < np - 1; m++) {
        OK(MPI_Mprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &msg, &st));
        int src = st.MPI_SOURCE;
        CHECK(src != me && src >= 0 && src < np && st.MPI_TAG == 5);
        OK(MPI_Get_count(&st, MPI_INT, &cnt));
        CHECK(cnt == n);
        /* The matched message is out of matching: the next one from src is k = 1. */
        int r[64];
        OK(MPI_Recv(r, n, MPI_INT, src, 5, MPI_COMM_WORLD, &st));
        for (int i = 0; i < n; i++)
            CHECKF(r[i] == val(src, me, 1, i), "second message from %d, [%d] = %d", src, i, r[i]);
        /* Received through a vector type: every other int of a 2n buffer. */
        MPI_Datatype vec;
        OK(MPI_Type_vector(n, 1, 2, MPI_INT, &vec));
        OK(MPI_Type_commit(&vec));
        int r2[128];
        for (int i = 0; i < 2 * n; i++)
            r2[i] = -1;
        if (m % 2 == 0) {
            OK(MPI_Mrecv(r2, 1, vec, &msg, &st));
        } else {
            OK(MPI_Imrecv(r2, 1, vec, &msg, &rq));
            CHECK(msg == MPI_MESSAGE_NULL);
            OK(MPI_Wait(&rq, &st));
        }
        CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 5);
        for (int i = 0; i < n; i++)
            CHECKF(r2[2 * i] == val(src, me, 0, i) && r2[2 * i + 1] == -1,
                   "matched message from %d, [%d] = %d", src, i, r2[2 * i]);
        MPI_Type_free(&vec);
        got[src]++;
    }
    /* No tag-5 message is left. */
    OK(MPI_Iprobe(MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &flag, &st));
    CHECK(!flag);

    /* Big messages (rendezvous): improbe until each arrives, receive with Imrecv/Mrecv. */
    for (int m = 0; m < np - 1;) {
        OK(MPI_Improbe(MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &flag, &msg, &st));
        if (!flag) continue;
        int src = st.MPI_SOURCE;
        OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
        CHECK(cnt == BIG);
        /* Truncation is reported on the matched message too. */
        if (m == 0) {
            FAILS(MPI_Mrecv(bigr, 16, MPI_INT, &msg, &st), MPI_ERR_TRUNCATE);
        } else {
            memset(bigr, 0, BIG);
            OK(MPI_Mrecv(bigr, BIG / (int)sizeof(int), MPI_INT, &msg, &st));
            for (int i = 0; i < BIG / (int)sizeof(int); i++)
                CHECKF(bigr[i] == val(src, 0, 9, i), "big from %d [%d]", src, i);
            CHECK(msg == MPI_MESSAGE_NULL); /* (after an error MPICH leaves the handle) */
        }
        m++;
    }
    OK(MPI_Waitall(ns, sreq, MPI_STATUSES_IGNORE));
    for (int d = 0; d < np; d++)
        CHECK(got[d] == (d == me ? 0 : 1));
    free(sbuf);
    free(big);
    free(bigr);
    free(sreq);
    return mt_done("mprobe");
}

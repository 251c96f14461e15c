/*
 * intercomm.c - intercommunicators: MPI_Intercomm_create between the even and the odd
 * world ranks, point-to-point across it (ranks name the remote group), every collective
 * with MPI-3 intercommunicator meaning (data from one group lands in the other), dup,
 * split, create, merge, and the errors of intra-only calls. Every value received is
 * checked against what the sending world rank must have sent. Needs 2+ processes.
 */
#include "mpi_check.h"

static int wsize, lsize, rsize, lrank, side; /* side: 0 even world ranks, 1 odd */
static int remote_world[64];                 /* world rank of each remote rank */

/* The value world rank w puts at position i of its buffers. */
static int val(int w, int i)
{
    return 1000 * (w + 1) + i;
}

static void check_sizes(MPI_Comm ic)
{
    int flag, n;
    OK(MPI_Comm_test_inter(ic, &flag));
    CHECK(flag == 1);
    OK(MPI_Comm_size(ic, &n));
    CHECK(n == lsize);
    OK(MPI_Comm_remote_size(ic, &n));
    CHECK(n == rsize);
    OK(MPI_Comm_rank(ic, &n));
    CHECK(n == lrank);
}

static void p2p(MPI_Comm ic)
{
    /* every process sends to every remote rank; receives by MPI_ANY_SOURCE */
    int out[64], in[64];
    MPI_Request rq[64];
    for (int j = 0; j < rsize; j++) {
        out[j] = val(mt_rank, j);
        OK(MPI_Isend(&out[j], 1, MPI_INT, j, 7, ic, &rq[j]));
    }
    int seen[64] = {0};
    for (int j = 0; j < rsize; j++) {
        MPI_Status st;
        OK(MPI_Recv(&in[j], 1, MPI_INT, MPI_ANY_SOURCE, 7, ic, &st));
        CHECK(st.MPI_SOURCE >= 0 && st.MPI_SOURCE < rsize && !seen[st.MPI_SOURCE]);
        seen[st.MPI_SOURCE] = 1;
        CHECKF(in[j] == val(remote_world[st.MPI_SOURCE], lrank), "got %d from %d", in[j],
               st.MPI_SOURCE);
    }
    OK(MPI_Waitall(rsize, rq, MPI_STATUSES_IGNORE));
    /* a named source, and a probe */
    int x = val(mt_rank, 99), y = -1;
    MPI_Status st;
    if (lrank == 0) OK(MPI_Send(&x, 1, MPI_INT, 0, 8, ic));
    if (lrank == 0) {
        OK(MPI_Probe(0, 8, ic, &st));
        CHECK(st.MPI_SOURCE == 0);
        OK(MPI_Recv(&y, 1, MPI_INT, 0, 8, ic, &st));
        CHECK(y == val(remote_world[0], 99));
    }
}

static void colls(MPI_Comm ic)
{
    int buf[256], ref[256];
    /* bcast: rank 0 of the even group is the root, then rank 0 of the odd group */
    for (int root_side = 0; root_side < 2; root_side++) {
        int root = side == root_side ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        for (int i = 0; i < 5; i++)
            buf[i] = side == root_side && lrank == 0 ? val(mt_rank, i) : -1;
        OK(MPI_Bcast(buf, 5, MPI_INT, root, ic));
        for (int i = 0; i < 5; i++)
            CHECK(buf[i] == (side == root_side ? (lrank == 0 ? val(mt_rank, i) : -1)
                                               : val(remote_world[0], i)));
    }
    /* reduce to rank 0 of the odd group: the even group's sum */
    {
        int root = side == 1 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int s[3] = {val(mt_rank, 0), val(mt_rank, 1), mt_rank}, r[3] = {-1, -1, -1};
        OK(MPI_Reduce(s, r, 3, MPI_INT, MPI_SUM, root, ic));
        if (side == 1 && lrank == 0) {
            int e[3] = {0, 0, 0};
            for (int j = 0; j < rsize; j++) {
                e[0] += val(remote_world[j], 0);
                e[1] += val(remote_world[j], 1);
                e[2] += remote_world[j];
            }
            CHECK(r[0] == e[0] && r[1] == e[1] && r[2] == e[2]);
        } else {
            CHECK(r[0] == -1);
        }
    }
    /* allreduce: each group gets the max and the sum over the other */
    {
        int s = val(mt_rank, 3), r = 0, e = 0;
        OK(MPI_Allreduce(&s, &r, 1, MPI_INT, MPI_SUM, ic));
        for (int j = 0; j < rsize; j++)
            e += val(remote_world[j], 3);
        CHECK(r == e);
        OK(MPI_Allreduce(&s, &r, 1, MPI_INT, MPI_MAX, ic));
        CHECK(r == val(remote_world[rsize - 1], 3));
    }
    /* allgather: the remote group's blocks in remote rank order */
    {
        int s[2] = {val(mt_rank, 0), val(mt_rank, 1)};
        OK(MPI_Allgather(s, 2, MPI_INT, buf, 2, MPI_INT, ic));
        for (int j = 0; j < rsize; j++)
            CHECK(buf[2 * j] == val(remote_world[j], 0) &&
                  buf[2 * j + 1] == val(remote_world[j], 1));
    }
    /* alltoall: block j of remote rank k comes to me when j is my rank */
    {
        int s[64];
        for (int j = 0; j < rsize; j++)
            s[j] = val(mt_rank, j);
        OK(MPI_Alltoall(s, 1, MPI_INT, buf, 1, MPI_INT, ic));
        for (int k = 0; k < rsize; k++)
            CHECK(buf[k] == val(remote_world[k], lrank));
    }
    /* gather / scatter rooted in the even group's rank 0 */
    {
        int root = side == 0 ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int s = val(mt_rank, 5);
        for (int i = 0; i < rsize; i++)
            buf[i] = -1;
        OK(MPI_Gather(&s, 1, MPI_INT, buf, 1, MPI_INT, root, ic));
        if (root == MPI_ROOT)
            for (int k = 0; k < rsize; k++)
                CHECK(buf[k] == val(remote_world[k], 5));
        int sc[64], r = -1;
        for (int k = 0; k < rsize; k++)
            sc[k] = val(mt_rank, 40 + k);
        OK(MPI_Scatter(sc, 1, MPI_INT, &r, 1, MPI_INT, root, ic));
        if (side == 1) CHECK(r == val(remote_world[0], 40 + lrank));
    }
    /* allgatherv / alltoallv: remote rank k sends k+1 values, placed in reverse order */
    {
        int cnt[64], dsp[64], at = 0, s[64];
        for (int k = rsize - 1; k >= 0; k--) {
            cnt[k] = k + 1;
            dsp[k] = at;
            at += k + 1;
        }
        for (int i = 0; i < lrank + 1; i++)
            s[i] = val(mt_rank, i);
        OK(MPI_Allgatherv(s, lrank + 1, MPI_INT, buf, cnt, dsp, MPI_INT, ic));
        for (int k = 0; k < rsize; k++)
            for (int i = 0; i < k + 1; i++)
                CHECK(buf[dsp[k] + i] == val(remote_world[k], i));
        /* alltoallv: to remote rank j I send 1 value val(me, 10 + j) */
        int one[64], od[64], sv[64];
        for (int j = 0; j < rsize; j++) {
            one[j] = 1;
            od[j] = rsize - 1 - j;
            sv[od[j]] = val(mt_rank, 10 + j);
        }
        OK(MPI_Alltoallv(sv, one, od, MPI_INT, buf, one, od, MPI_INT, ic));
        for (int k = 0; k < rsize; k++)
            CHECK(buf[od[k]] == val(remote_world[k], 10 + lrank));
        /* alltoallw with byte displacements */
        int bd[64];
        MPI_Datatype ty[64];
        for (int j = 0; j < rsize; j++) {
            bd[j] = od[j] * (int)sizeof(int);
            ty[j] = MPI_INT;
        }
        memset(buf, 0, sizeof buf);
        OK(MPI_Alltoallw(sv, one, bd, ty, buf, one, bd, ty, ic));
        for (int k = 0; k < rsize; k++)
            CHECK(buf[od[k]] == val(remote_world[k], 10 + lrank));
    }
    /* reduce_scatter_block: the other group's sum of rsize*... vectors of lsize*2 values */
    {
        /* my group's vector scatters over the other group: its length is the other group's
         * size times 2, the same product both ways only when the groups match; use the
         * per-rank counts form with equal totals instead when they differ */
        int total = 2 * lsize * rsize;
        int s[512];
        for (int i = 0; i < total; i++)
            s[i] = val(mt_rank, i);
        int cnt[64];
        for (int i = 0; i < lsize; i++)
            cnt[i] = 2 * rsize; /* sums to total in both groups */
        OK(MPI_Reduce_scatter(s, buf, cnt, MPI_INT, MPI_SUM, ic));
        for (int i = 0; i < 2 * rsize; i++) {
            int e = 0;
            for (int k = 0; k < rsize; k++)
                e += val(remote_world[k], 2 * rsize * lrank + i);
            CHECK(buf[i] == e);
        }
        OK(MPI_Reduce_scatter_block(s, ref, 2 * rsize, MPI_INT, MPI_SUM, ic));
        CHECK(memcmp(ref, buf, (size_t)(2 * rsize) * sizeof(int)) == 0);
    }
    /* barrier and non-blocking forms */
    OK(MPI_Barrier(ic));
    {
        MPI_Request rq;
        int s = val(mt_rank, 1), r = 0, e = 0;
        OK(MPI_Iallreduce(&s, &r, 1, MPI_INT, MPI_SUM, ic, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        for (int j = 0; j < rsize; j++)
            e += val(remote_world[j], 1);
        CHECK(r == e);
        OK(MPI_Ibarrier(ic, &rq));
        OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2 || wsize > 64) {
        if (mt_rank == 0) printf("intercomm: needs 2..64 processes\n");
        MPI_Finalize();
        return 77;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    side = mt_rank % 2;
    MPI_Comm local, ic;
    OK(MPI_Comm_split(MPI_COMM_WORLD, side, mt_rank, &local));
    MPI_Comm_size(local, &lsize);
    MPI_Comm_rank(local, &lrank);
    rsize = side == 0 ? wsize / 2 : (wsize + 1) / 2;
    for (int k = 0; k < rsize; k++)
        remote_world[k] = 2 * k + (1 - side);

    /* errors: intra-communicator arguments */
    {
        int n, flag;
        MPI_Comm m;
#ifdef TERN_MPI /* Open MPI 4.1 does not detect these */
        FAILS(MPI_Comm_remote_size(MPI_COMM_WORLD, &n), MPI_ERR_COMM);
        FAILS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &m), MPI_ERR_COMM);
#else
        (void)n, (void)m;
#endif
        OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
        CHECK(flag == 0);
    }
    OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, 1 - side, 42, &ic));
    check_sizes(ic);
    {
        MPI_Group rg, wg;
        int idx[64], w[64];
        OK(MPI_Comm_remote_group(ic, &rg));
        OK(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        for (int k = 0; k < rsize; k++)
            idx[k] = k;
        OK(MPI_Group_translate_ranks(rg, rsize, idx, wg, w));
        for (int k = 0; k < rsize; k++)
            CHECK(w[k] == remote_world[k]);
        MPI_Group_free(&rg);
        MPI_Group_free(&wg);
    }
    p2p(ic);
    colls(ic);

    /* dup: same groups, a separate context */
    MPI_Comm d;
    OK(MPI_Comm_dup(ic, &d));
    check_sizes(d);
    {
        int x = val(mt_rank, 1), y = -1;
        if (lrank == 0) {
            OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 3, &y, 1, MPI_INT, 0, 3, d, MPI_STATUS_IGNORE));
            CHECK(y == val(remote_world[0], 1));
        }
    }
    colls(d);
    OK(MPI_Comm_free(&d));

    /* idup in the background: local rank 0 of each group first receives from every other
     * remote rank, which sends (synchronously) only after starting its idup - an idup
     * that agreed inside the call would wait for those leaders forever */
    {
        MPI_Comm nd;
        MPI_Request r;
        int buf = 0;
        if (lrank == 0) {
            for (int k = 1; k < rsize; k++) {
                OK(MPI_Recv(&buf, 1, MPI_INT, k, 11, ic, MPI_STATUS_IGNORE));
                CHECK(buf == val(remote_world[k], 11));
            }
            OK(MPI_Comm_idup(ic, &nd, &r));
        } else {
            OK(MPI_Comm_idup(ic, &nd, &r));
            buf = val(mt_rank, 11);
            OK(MPI_Ssend(&buf, 1, MPI_INT, 0, 11, ic));
        }
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        check_sizes(nd);
        colls(nd);
        OK(MPI_Comm_free(&nd));
    }

    /* merge: the odd group asks for high, so the even group comes first */
    MPI_Comm m;
    OK(MPI_Intercomm_merge(ic, side, &m));
    {
        int r, n, flag;
        OK(MPI_Comm_rank(m, &r));
        OK(MPI_Comm_size(m, &n));
        OK(MPI_Comm_test_inter(m, &flag));
        CHECK(n == wsize && flag == 0);
        CHECK(r == (side == 0 ? lrank : (wsize + 1) / 2 + lrank));
        int all[64];
        OK(MPI_Allgather(&mt_rank, 1, MPI_INT, all, 1, MPI_INT, m));
        for (int i = 0; i < wsize; i++)
            CHECK(all[i] == (i < (wsize + 1) / 2 ? 2 * i : 2 * (i - (wsize + 1) / 2) + 1));
    }
    OK(MPI_Comm_free(&m));

    /* split: local rank 0 of each group gets colour 0, the rest colour 1 */
    if (wsize >= 4) {
        MPI_Comm s;
        OK(MPI_Comm_split(ic, lrank == 0 ? 0 : 1, -lrank, &s));
        int n;
        OK(MPI_Comm_remote_size(s, &n));
        int my_n = lrank == 0 ? 1 : lsize - 1, their_n = lrank == 0 ? 1 : rsize - 1;
        CHECK(n == their_n);
        OK(MPI_Comm_size(s, &n));
        CHECK(n == my_n);
        int x = val(mt_rank, 2), y = 0, e = 0;
        OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, s));
        for (int k = lrank == 0 ? 0 : 1; k < (lrank == 0 ? 1 : rsize); k++)
            e += val(remote_world[k], 2);
        CHECK(y == e);
        OK(MPI_Comm_free(&s));
    }
    /* create: the group of local rank 0 only; the others get MPI_COMM_NULL */
    {
        MPI_Group g, g0;
        int zero = 0;
        OK(MPI_Comm_group(ic, &g));
        OK(MPI_Group_incl(g, 1, &zero, &g0));
        MPI_Comm c0;
        OK(MPI_Comm_create(ic, g0, &c0));
        if (lrank == 0) {
            CHECK(c0 != MPI_COMM_NULL);
            int n;
            OK(MPI_Comm_remote_size(c0, &n));
            CHECK(n == 1);
            int x = val(mt_rank, 6), y = -1;
            OK(MPI_Sendrecv(&x, 1, MPI_INT, 0, 1, &y, 1, MPI_INT, 0, 1, c0, MPI_STATUS_IGNORE));
            CHECK(y == val(remote_world[0], 6));
            OK(MPI_Comm_free(&c0));
        } else {
            CHECK(c0 == MPI_COMM_NULL);
        }
        MPI_Group_free(&g);
        MPI_Group_free(&g0);
    }
    /* scans are intra-communicator only */
    {
        int x = 1, y;
        MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
        FAILS(MPI_Scan(&x, &y, 1, MPI_INT, MPI_SUM, ic), MPI_ERR_COMM);
    }
    OK(MPI_Comm_free(&ic));
    OK(MPI_Comm_free(&local));
    return mt_done("intercomm");
}

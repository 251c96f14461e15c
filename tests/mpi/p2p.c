/*
 * p2p.c - MPI point-to-point: every send mode, blocking and not, persistent requests,
 * buffered sends, cancel, probe, the any/some/all completions, MPI_PROC_NULL, wildcards,
 * sendrecv and sendrecv_replace, with the data checked; which calls write a status's
 * MPI_ERROR field. Any number of processes; pairs
 * (0,1), (2,3) ... exchange, an odd last rank talks to itself.
 */
#include <unistd.h>

#include "mpi_check.h"

static int me, np;

static void fill(int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        b[i] = seed * 1000003 + i;
}

static void verify(const int *b, int n, int seed)
{
    for (int i = 0; i < n; i++)
        CHECKF(b[i] == seed * 1000003 + i, "element %d is %d (seed %d)", i, b[i], seed);
}

static int peer(void)
{
    int p = me ^ 1;
    return p < np ? p : me;
}

static void modes(void)
{
    int other = peer();
    int sizes[] = {0, 1, 7, 1000, 100000, 1 << 20};
    for (unsigned k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        int n = sizes[k];
        int *s = malloc((size_t)(n + 1) * sizeof(int)), *r = malloc((size_t)(n + 1) * sizeof(int));
        MPI_Status st;
        fill(s, n, me);
        /* Standard and synchronous: the lower rank sends first (self: nonblocking recv). */
        for (int mode = 0; mode < 3; mode++) {
            memset(r, 0, (size_t)(n + 1) * sizeof(int));
            MPI_Request rq;
            OK(MPI_Irecv(r, n, MPI_INT, other, 10 + mode, MPI_COMM_WORLD, &rq));
            if (mode == 2) OK(MPI_Barrier(MPI_COMM_WORLD)); /* ready: receive surely posted */
            if (mode == 0) OK(MPI_Send(s, n, MPI_INT, other, 10, MPI_COMM_WORLD));
            if (mode == 1) {
                MPI_Request sq;
                OK(MPI_Issend(s, n, MPI_INT, other, 11, MPI_COMM_WORLD, &sq));
                OK(MPI_Wait(&sq, MPI_STATUS_IGNORE));
                CHECK(sq == MPI_REQUEST_NULL);
            }
            if (mode == 2) OK(MPI_Rsend(s, n, MPI_INT, other, 12, MPI_COMM_WORLD));
            OK(MPI_Wait(&rq, &st));
            CHECK(rq == MPI_REQUEST_NULL);
            CHECK(st.MPI_SOURCE == other && st.MPI_TAG == 10 + mode);
            int cnt;
            OK(MPI_Get_count(&st, MPI_INT, &cnt));
            CHECKF(cnt == n, "count %d, expected %d", cnt, n);
            verify(r, n, other);
        }
        if (other != me) {
            /* Blocking synchronous send against a blocking receive, ordered by rank. */
            if (me < other) {
                OK(MPI_Ssend(s, n, MPI_INT, other, 20, MPI_COMM_WORLD));
                OK(MPI_Recv(r, n, MPI_INT, other, 20, MPI_COMM_WORLD, &st));
            } else {
                OK(MPI_Recv(r, n, MPI_INT, other, 20, MPI_COMM_WORLD, &st));
                OK(MPI_Ssend(s, n, MPI_INT, other, 20, MPI_COMM_WORLD));
            }
            verify(r, n, other);
        }
        /* Sendrecv and Sendrecv_replace. */
        OK(MPI_Sendrecv(s, n, MPI_INT, other, 30, r, n, MPI_INT, other, 30, MPI_COMM_WORLD, &st));
        verify(r, n, other);
        memcpy(r, s, (size_t)n * sizeof(int));
        OK(MPI_Sendrecv_replace(r, n, MPI_INT, other, 31, other, 31, MPI_COMM_WORLD, &st));
        verify(r, n, other);
        free(s);
        free(r);
    }
}

static void bsend(void)
{
    int other = peer();
    int n = 5000, bufsize = 4 * (n * (int)sizeof(int) + MPI_BSEND_OVERHEAD);
    char *buf = malloc((size_t)bufsize);
    OK(MPI_Buffer_attach(buf, bufsize));
    int *s = malloc((size_t)n * sizeof(int)), *r = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < 3; i++) {
        fill(s, n, me + 100 * i);
        if (i == 2) {
            MPI_Request q;
            OK(MPI_Ibsend(s, n, MPI_INT, other, 40 + i, MPI_COMM_WORLD, &q));
            OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
        } else {
            OK(MPI_Bsend(s, n, MPI_INT, other, 40 + i, MPI_COMM_WORLD));
        }
        memset(s, 0, (size_t)n * sizeof(int)); /* the data was copied */
    }
    for (int i = 2; i >= 0; i--) { /* receive in reverse tag order: all three are buffered */
        OK(MPI_Recv(r, n, MPI_INT, other, 40 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        verify(r, n, other + 100 * i);
    }
    void *back;
    int backsize;
    OK(MPI_Buffer_detach(&back, &backsize));
    CHECK(back == buf && backsize == bufsize);
    free(buf);
    free(s);
    free(r);
}

static void persistent(void)
{
    int other = peer();
    enum { N = 64 };
    int s[N], r[N];
    MPI_Request q[2];
    OK(MPI_Recv_init(r, N, MPI_INT, other, 50, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Send_init(s, N, MPI_INT, other, 50, MPI_COMM_WORLD, &q[1]));
    for (int it = 0; it < 50; it++) {
        fill(s, N, me * 7 + it);
        if (it % 2) {
            OK(MPI_Startall(2, q));
        } else {
            OK(MPI_Start(&q[0]));
            OK(MPI_Start(&q[1]));
        }
        MPI_Status st[2];
        OK(MPI_Waitall(2, q, st));
        CHECK(q[0] != MPI_REQUEST_NULL && q[1] != MPI_REQUEST_NULL); /* still allocated */
        CHECK(st[0].MPI_SOURCE == other && st[0].MPI_TAG == 50);
        verify(r, N, other * 7 + it);
    }
    /* An inactive persistent request completes at once with an empty status. */
    MPI_Status st;
    int flag = 0;
    OK(MPI_Test(&q[0], &flag, &st));
    CHECK(flag);
    OK(MPI_Request_free(&q[0]));
    OK(MPI_Request_free(&q[1]));
    CHECK(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL);
    /* Ssend_init too. */
    OK(MPI_Recv_init(r, N, MPI_INT, other, 51, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Ssend_init(s, N, MPI_INT, other, 51, MPI_COMM_WORLD, &q[1]));
    OK(MPI_Startall(2, q));
    OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    verify(r, N, other * 7 + 49);
    OK(MPI_Request_free(&q[0]));
    OK(MPI_Request_free(&q[1]));
}

static void cancel(void)
{
    int x = 0;
    MPI_Request q;
    MPI_Status st;
    /* Nobody sends tag 60: the receive can be cancelled. */
    OK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 60, MPI_COMM_WORLD, &q));
    OK(MPI_Cancel(&q));
    OK(MPI_Wait(&q, &st));
    int flag = 0;
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag);
    /* A completed receive is not cancelled. */
    int other = peer(), y = -1;
    OK(MPI_Irecv(&y, 1, MPI_INT, other, 61, MPI_COMM_WORLD, &q));
    OK(MPI_Send(&me, 1, MPI_INT, other, 61, MPI_COMM_WORLD));
    do
        OK(MPI_Test(&q, &flag, &st));
    while (!flag);
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag && y == other);
}

static void probe_and_wildcards(void)
{
    int other = peer(), n = 333;
    int *s = malloc((size_t)n * sizeof(int)), *r = malloc((size_t)n * sizeof(int));
    fill(s, n, me);
    MPI_Request q;
    OK(MPI_Isend(s, n, MPI_INT, other, 70, MPI_COMM_WORLD, &q));
    MPI_Status st;
    OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    int cnt;
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(cnt == n && st.MPI_SOURCE == other && st.MPI_TAG == 70);
    int flag = 0;
    OK(MPI_Iprobe(other, 70, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag);
    OK(MPI_Recv(r, n, MPI_INT, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st));
    verify(r, n, other);
    OK(MPI_Wait(&q, MPI_STATUS_IGNORE));
    OK(MPI_Iprobe(MPI_ANY_SOURCE, 70, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag);
    free(s);
    free(r);

    /* MPI_PROC_NULL: everything completes at once with source MPI_PROC_NULL and no data. */
    int z = 42;
    OK(MPI_Send(&z, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD));
    OK(MPI_Recv(&z, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_INT, &cnt));
    CHECK(z == 42 && st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0);
    OK(MPI_Irecv(&z, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &q));
    OK(MPI_Wait(&q, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
}

/* Rank 0 gathers one message from everyone through Waitany / Waitsome / Testany / Testsome. */
static void any_some(void)
{
    OK(MPI_Barrier(MPI_COMM_WORLD)); /* no message of this phase may meet a wildcard probe above */
    for (int variant = 0; variant < 4; variant++) {
        int tag = 80 + variant;
        if (me != 0) {
            int v = me * 10 + variant;
            OK(MPI_Send(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD));
            continue;
        }
        int n = np - 1, got = 0;
        int *vals = calloc((size_t)np, sizeof(int)), *idx = malloc((size_t)np * sizeof(int));
        MPI_Request *q = malloc((size_t)np * sizeof *q);
        MPI_Status *st = malloc((size_t)np * sizeof *st);
        for (int i = 0; i < n; i++)
            OK(MPI_Irecv(&vals[i + 1], 1, MPI_INT, i + 1, tag, MPI_COMM_WORLD, &q[i]));
        while (got < n) {
            int k = 0, flag = 0, out = 0;
            switch (variant) {
            case 0:
                OK(MPI_Waitany(n, q, &k, &st[0]));
                CHECK(k >= 0 && k < n && st[0].MPI_SOURCE == k + 1);
                got++;
                break;
            case 1:
                OK(MPI_Waitsome(n, q, &out, idx, st));
                CHECK(out >= 1);
                for (int j = 0; j < out; j++)
                    CHECK(st[j].MPI_SOURCE == idx[j] + 1);
                got += out;
                break;
            case 2:
                OK(MPI_Testany(n, q, &k, &flag, &st[0]));
                if (flag) {
                    CHECK(k != MPI_UNDEFINED && st[0].MPI_SOURCE == k + 1);
                    got++;
                }
                break;
            default:
                OK(MPI_Testsome(n, q, &out, idx, st));
                CHECK(out != MPI_UNDEFINED);
                got += out;
                break;
            }
        }
        for (int i = 0; i < n; i++)
            CHECK(q[i] == MPI_REQUEST_NULL && vals[i + 1] == (i + 1) * 10 + variant);
        /* Nothing live left: MPI_UNDEFINED. */
        int k = 0, out = 0, flag = 0;
        if (n > 0) {
            OK(MPI_Waitany(n, q, &k, MPI_STATUS_IGNORE));
            CHECK(k == MPI_UNDEFINED);
            OK(MPI_Waitsome(n, q, &out, idx, MPI_STATUSES_IGNORE));
            CHECK(out == MPI_UNDEFINED);
            OK(MPI_Testall(n, q, &flag, MPI_STATUSES_IGNORE));
            CHECK(flag);
        }
        free(vals);
        free(idx);
        free(q);
        free(st);
    }
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* A send request freed before completion still delivers. */
static void request_free(void)
{
    int other = peer(), v = me + 5, r = -1;
    MPI_Request q;
    OK(MPI_Isend(&v, 1, MPI_INT, other, 90, MPI_COMM_WORLD, &q));
    OK(MPI_Request_free(&q));
    CHECK(q == MPI_REQUEST_NULL);
    OK(MPI_Recv(&r, 1, MPI_INT, other, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(r == other + 5);
    OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Messages between one pair on one communicator are not overtaken. */
static void order(void)
{
    int other = peer(), n = 2000;
    MPI_Request *q = malloc((size_t)n * sizeof *q);
    int *in = malloc((size_t)n * sizeof(int));
    for (int i = 0; i < n; i++)
        OK(MPI_Irecv(&in[i], 1, MPI_INT, other, MPI_ANY_TAG, MPI_COMM_WORLD, &q[i]));
    for (int i = 0; i < n; i++)
        OK(MPI_Send(&i, 1, MPI_INT, other, i % 3, MPI_COMM_WORLD));
    OK(MPI_Waitall(n, q, MPI_STATUSES_IGNORE));
    for (int i = 0; i < n; i++)
        CHECK(in[i] == i);
    free(q);
    free(in);
}

/* Message i of an order_unexpected run: len bytes (i * mul + k). */
static void order_fill(unsigned char *s, int i, int mul, int len)
{
    for (int k = 0; k < len; k++)
        s[k] = (unsigned char)(i * mul + k);
}

/* Receive message i of such a run on tag (the first after a 50 ms sleep) and check it. */
static void order_recv(int other, int tag, unsigned char *in, int cap, int i, int mul, int len)
{
    if (i == 0) usleep(50000);
    MPI_Status st;
    int cnt;
    OK(MPI_Recv(in, cap, MPI_BYTE, other, tag, MPI_COMM_WORLD, &st));
    OK(MPI_Get_count(&st, MPI_BYTE, &cnt));
    CHECKF(cnt == len, "tag %d message %d: %d bytes, expected %d", tag, i, cnt, len);
    for (int k = 0; k < cnt; k++)
        CHECKF(in[k] == (unsigned char)(i * mul + k), "tag %d message %d byte %d is %d", tag, i, k,
               in[k]);
}

/* Sends into a receiver that is not listening yet, each run on one tag; the higher rank
 * of a pair first sleeps 50 ms, then receives every message and checks that each came
 * whole, in the order sent. tern sends an eager message at once (no request for a
 * blocking one: core_send_now; the request completed at once for a non-blocking one)
 * while nothing to that peer waits before it, and through its queue once something does:
 * both must keep the order.
 *   1. 3000 blocking sends of 0-699 bytes (more than the shared-memory slots hold, so
 *      the later ones wait for room) with a 100 KB non-blocking one (rendezvous) every 250.
 *   2. 600 non-blocking 2000-byte sends, more than the sender's cells hold (the later
 *      ones wait in tern's queue with slots still free), then 50 blocking 8-byte ones,
 *      which would fit a slot: they must not overtake. */
static void order_unexpected(void)
{
    int other = peer(), n = 3000, big = 100000, every = 250;
    if (other == me) return;
    int nbig = n / every;
    unsigned char *buf = malloc((size_t)big), *in = malloc((size_t)big);
    unsigned char **bigs = calloc((size_t)nbig, sizeof *bigs);
    MPI_Request *q = malloc((size_t)nbig * sizeof *q);
    CHECK(buf && in && bigs && q);
    for (int i = 0, b = 0; i < n; i++) {
        int len = i % every == every - 1 ? big : (i * 37) % 700;
        if (me > other) {
            order_recv(other, 97, in, big, i, 7, len);
        } else if (len == big) { /* in flight until the end: a buffer of its own */
            CHECK((bigs[b] = malloc((size_t)big)) != NULL);
            order_fill(bigs[b], i, 7, len);
            OK(MPI_Isend(bigs[b], len, MPI_BYTE, other, 97, MPI_COMM_WORLD, &q[b]));
            b++;
        } else {
            order_fill(buf, i, 7, len);
            OK(MPI_Send(buf, len, MPI_BYTE, other, 97, MPI_COMM_WORLD));
        }
    }
    if (me < other) OK(MPI_Waitall(nbig, q, MPI_STATUSES_IGNORE));
    for (int b = 0; b < nbig; b++)
        free(bigs[b]);
    free(bigs);
    free(q);
    int nmid = 600, nsmall = 50, mid = 2000;
    unsigned char *mids = malloc((size_t)nmid * (size_t)mid);
    q = malloc((size_t)nmid * sizeof *q);
    CHECK(mids && q);
    for (int i = 0; i < nmid + nsmall; i++) {
        int len = i < nmid ? mid : 8;
        unsigned char *s = i < nmid ? mids + (size_t)i * (size_t)mid : buf;
        if (me > other) {
            order_recv(other, 98, in, big, i, 11, len);
        } else if (i < nmid) {
            order_fill(s, i, 11, len);
            OK(MPI_Isend(s, len, MPI_BYTE, other, 98, MPI_COMM_WORLD, &q[i]));
        } else {
            order_fill(s, i, 11, len);
            OK(MPI_Send(s, len, MPI_BYTE, other, 98, MPI_COMM_WORLD));
        }
    }
    if (me < other) OK(MPI_Waitall(nmid, q, MPI_STATUSES_IGNORE));
    free(mids);
    free(q);
    free(buf);
    free(in);
}

#if MPI_VERSION >= 4 || defined(TERN_MPI)
static void large_count(void)
{
    int other = peer();
    MPI_Count n = 1000;
    int *s = malloc((size_t)n * sizeof(int)), *r = malloc((size_t)n * sizeof(int));
    fill(s, (int)n, me);
    MPI_Request q;
    MPI_Status st;
    OK(MPI_Irecv_c(r, n, MPI_INT, other, 95, MPI_COMM_WORLD, &q));
    OK(MPI_Send_c(s, n, MPI_INT, other, 95, MPI_COMM_WORLD));
    OK(MPI_Wait(&q, &st));
    MPI_Count c;
    OK(MPI_Get_count_c(&st, MPI_INT, &c));
    CHECK(c == n);
    verify(r, (int)n, other);
    free(s);
    free(r);
}
#endif

/* MPI 3.2.5: calls that return one status never write its MPI_ERROR field, and those that
 * return several write it only when they return MPI_ERR_IN_STATUS (tests/mpi/errors.c
 * checks that case). A sentinel put there before each call must still be there after. */
static void status_error_field(void)
{
    const int mark = MPI_ERR_DIMS;
    int other = peer(), x = me, y = -1, flag = 0, idx = -1, out = -1, idxs[2];
    MPI_Status st, sts[2];
    MPI_Request q[2];
#define MARK(s)       ((s).MPI_ERROR = mark)
#define KEPT(s, what) CHECKF((s).MPI_ERROR == mark, "%s wrote MPI_ERROR (%d)", what, (s).MPI_ERROR)
    MARK(st);
    OK(MPI_Sendrecv(&x, 1, MPI_INT, other, 80, &y, 1, MPI_INT, other, 80, MPI_COMM_WORLD, &st));
    KEPT(st, "MPI_Sendrecv");
    CHECK(y == other);
    OK(MPI_Isend(&x, 1, MPI_INT, other, 81, MPI_COMM_WORLD, &q[0]));
    MARK(st);
    OK(MPI_Probe(other, 81, MPI_COMM_WORLD, &st));
    KEPT(st, "MPI_Probe");
    MARK(st);
    OK(MPI_Iprobe(other, 81, MPI_COMM_WORLD, &flag, &st));
    CHECK(flag);
    KEPT(st, "MPI_Iprobe");
    MARK(st);
    OK(MPI_Recv(&y, 1, MPI_INT, other, 81, MPI_COMM_WORLD, &st));
    KEPT(st, "MPI_Recv");
    MARK(st);
    OK(MPI_Wait(&q[0], &st));
    KEPT(st, "MPI_Wait (send)");
    OK(MPI_Irecv(&y, 1, MPI_INT, other, 82, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Send(&x, 1, MPI_INT, other, 82, MPI_COMM_WORLD));
    do {
        MARK(st);
        OK(MPI_Request_get_status(q[0], &flag, &st));
        KEPT(st, "MPI_Request_get_status");
    } while (!flag);
    MARK(st);
    OK(MPI_Test(&q[0], &flag, &st));
    CHECK(flag && q[0] == MPI_REQUEST_NULL);
    KEPT(st, "MPI_Test");
    OK(MPI_Irecv(&y, 1, MPI_INT, other, 83, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Isend(&x, 1, MPI_INT, other, 83, MPI_COMM_WORLD, &q[1]));
    for (int k = 0; k < 2; k++) {
        MARK(st);
        OK(MPI_Waitany(2, q, &idx, &st));
        KEPT(st, "MPI_Waitany");
    }
    OK(MPI_Irecv(&y, 1, MPI_INT, other, 84, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Isend(&x, 1, MPI_INT, other, 84, MPI_COMM_WORLD, &q[1]));
    MARK(sts[0]);
    MARK(sts[1]);
    OK(MPI_Waitall(2, q, sts));
#if !defined(OPEN_MPI) || OMPI_MAJOR_VERSION >= 5 /* 4.1 writes MPI_SUCCESS in Wait/Testall */
    KEPT(sts[0], "MPI_Waitall");
    KEPT(sts[1], "MPI_Waitall");
#endif
    OK(MPI_Irecv(&y, 1, MPI_INT, other, 85, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Isend(&x, 1, MPI_INT, other, 85, MPI_COMM_WORLD, &q[1]));
    for (int left = 2; left > 0; left -= out) {
        MARK(sts[0]);
        MARK(sts[1]);
        OK(MPI_Waitsome(2, q, &out, idxs, sts));
        CHECK(out >= 1 && out <= left);
#if !defined(OPEN_MPI) || OMPI_MAJOR_VERSION >= 5
        for (int k = 0; k < out; k++)
            KEPT(sts[k], "MPI_Waitsome");
#endif
    }
    MARK(st);
    OK(MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 86, MPI_COMM_WORLD, &st));
    KEPT(st, "MPI_Recv from MPI_PROC_NULL");
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
    q[0] = MPI_REQUEST_NULL;
    MARK(st);
    OK(MPI_Wait(&q[0], &st));
    KEPT(st, "MPI_Wait on MPI_REQUEST_NULL");
#undef MARK
#undef KEPT
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    modes();
    bsend();
    persistent();
    cancel();
    probe_and_wildcards();
    status_error_field();
    any_some();
    request_free();
    order();
    order_unexpected();
#if MPI_VERSION >= 4 || defined(TERN_MPI)
    large_count();
#endif
    return mt_done("p2p");
}

/*
 * mpi4.c - what MPICH's test suite asked for beyond MPI 3.1 basics: persistent
 * collectives started several times (MPI_Allreduce_init, MPI_Bcast_init, MPI_Barrier_init,
 * MPI_Alltoall_init), MPI_Isendrecv and MPI_Isendrecv_replace around a ring, MPI_Cancel of
 * sends nobody has matched (standard, synchronous, buffered, rendezvous-sized: each must be
 * cancelled and never arrive), and the external32 representation (big-endian bytes checked
 * one by one, MPI_LONG as 4 bytes, a round trip of a struct type); MPI_Cart_sub keeping
 * no dimension; a datatype keyval freed twice while in use; MPI_MAXLOC accumulates on
 * MPI_DOUBLE_INT.
 */
#include <stddef.h>
#include <stdint.h>

#include "mpi_check.h"

static int size;

static void persistent(void)
{
    int in[4] = {0}, out[4] = {0}, expect;
    MPI_Request r[4];
    OK(MPI_Allreduce_init(in, out, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    int b[3];
    OK(MPI_Bcast_init(b, 3, MPI_INT, size - 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    OK(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[2]));
    int *a2s = malloc((size_t)size * sizeof(int)), *a2r = malloc((size_t)size * sizeof(int));
    OK(MPI_Alltoall_init(a2s, 1, MPI_INT, a2r, 1, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 4; i++)
            in[i] = (mt_rank + 1) * (round + 1) + i;
        for (int i = 0; i < 3; i++)
            b[i] = mt_rank == size - 1 ? 100 * round + i : -1;
        for (int j = 0; j < size; j++)
            a2s[j] = 1000 * mt_rank + 10 * j + round;
        OK(MPI_Startall(4, r));
        OK(MPI_Waitall(4, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 4; i++) {
            expect = (round + 1) * size * (size + 1) / 2 + i * size;
            CHECKF(out[i] == expect, "round %d out[%d] = %d, want %d", round, i, out[i], expect);
        }
        for (int i = 0; i < 3; i++)
            CHECK(b[i] == 100 * round + i);
        for (int j = 0; j < size; j++)
            CHECK(a2r[j] == 1000 * j + 10 * mt_rank + round);
    }
    /* inactive again: a wait returns at once; then freed */
    OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++)
        OK(MPI_Request_free(&r[i]));
    CHECK(r[0] == MPI_REQUEST_NULL);
    free(a2s);
    free(a2r);
}

static void isendrecv(void)
{
    int right = (mt_rank + 1) % size, left = (mt_rank + size - 1) % size;
    double s[5], d[5];
    for (int i = 0; i < 5; i++)
        s[i] = mt_rank * 10.0 + i;
    MPI_Request r;
    MPI_Status st;
    OK(MPI_Isendrecv(s, 5, MPI_DOUBLE, right, 4, d, 5, MPI_DOUBLE, left, 4, MPI_COMM_WORLD, &r));
    OK(MPI_Wait(&r, &st));
    CHECK(r == MPI_REQUEST_NULL && st.MPI_SOURCE == left && st.MPI_TAG == 4);
    for (int i = 0; i < 5; i++)
        CHECK(d[i] == left * 10.0 + i);
    /* replace, with a strided type: only the chosen elements move */
    int v[8];
    for (int i = 0; i < 8; i++)
        v[i] = 100 * mt_rank + i;
    MPI_Datatype vec;
    OK(MPI_Type_vector(4, 1, 2, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    OK(MPI_Isendrecv_replace(v, 1, vec, right, 5, left, 5, MPI_COMM_WORLD, &r));
    int flag = 0;
    while (!flag)
        OK(MPI_Test(&r, &flag, &st));
    for (int i = 0; i < 8; i++)
        CHECK(v[i] == (i % 2 == 0 ? 100 * left + i : 100 * mt_rank + i));
    MPI_Type_free(&vec);
}

/* Rank 0 starts sends to rank size-1 and cancels them before that rank posts anything;
 * then it tells rank size-1 which ones were cancelled; every other one must arrive. */
static void cancel(void)
{
    int dest = size - 1;
    enum { N = 4 };
    static char big[1 << 20];
    char small[16] = "not cancelled";
    if (mt_rank == 0) {
        int bsize = (int)sizeof big + MPI_BSEND_OVERHEAD;
        char *bbuf = malloc((size_t)bsize);
        OK(MPI_Buffer_attach(bbuf, bsize));
        MPI_Request r[N];
        OK(MPI_Isend(small, sizeof small, MPI_CHAR, dest, 1, MPI_COMM_WORLD, &r[0]));
        OK(MPI_Issend(small, sizeof small, MPI_CHAR, dest, 2, MPI_COMM_WORLD, &r[1]));
        OK(MPI_Ibsend(big, sizeof big, MPI_CHAR, dest, 3, MPI_COMM_WORLD, &r[2]));
        OK(MPI_Isend(big, sizeof big, MPI_CHAR, dest, 4, MPI_COMM_WORLD, &r[3]));
        int done[N];
        for (int i = 0; i < N; i++) {
            MPI_Status st;
            OK(MPI_Cancel(&r[i]));
            OK(MPI_Wait(&r[i], &st));
            OK(MPI_Test_cancelled(&st, &done[i]));
            CHECKF(done[i], "send %d not cancelled", i);
        }
        OK(MPI_Send(done, N, MPI_INT, dest, 9, MPI_COMM_WORLD));
        void *p;
        int n;
        OK(MPI_Buffer_detach(&p, &n));
        free(bbuf);
    }
    if (mt_rank == dest) {
        int done[N];
        OK(MPI_Recv(done, N, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) {
            int flag;
            OK(MPI_Iprobe(0, i + 1, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            CHECKF(flag == !done[i], "message %d: probe %d, cancelled %d", i, flag, done[i]);
            if (flag)
                OK(MPI_Recv(i >= 2 ? big : small, i >= 2 ? (int)sizeof big : (int)sizeof small,
                            MPI_CHAR, 0, i + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void external32(void)
{
    MPI_Aint n;
    OK(MPI_Pack_external_size("external32", 3, MPI_LONG, &n));
    CHECK(n == 12);
    struct {
        int i;
        double d;
        long l;
        short s;
    } x = {0x01020304, 1.0, -2, 0x0506}, y;
    int bl[4] = {1, 1, 1, 1};
    MPI_Aint disp[4] = {offsetof(__typeof__(x), i), offsetof(__typeof__(x), d),
                        offsetof(__typeof__(x), l), offsetof(__typeof__(x), s)};
    MPI_Datatype types[4] = {MPI_INT, MPI_DOUBLE, MPI_LONG, MPI_SHORT}, st;
    OK(MPI_Type_create_struct(4, bl, disp, types, &st));
    OK(MPI_Type_commit(&st));
    OK(MPI_Pack_external_size("external32", 1, st, &n));
    CHECK(n == 4 + 8 + 4 + 2);
    unsigned char buf[64];
    MPI_Aint pos = 0;
    OK(MPI_Pack_external("external32", &x, 1, st, buf, sizeof buf, &pos));
    CHECK(pos == 18);
    static const unsigned char want[18] = {1, 2, 3, 4,    0x3f, 0xf0, 0,    0, 0,
                                           0, 0, 0, 0xff, 0xff, 0xff, 0xfe, 5, 6};
    CHECK(memcmp(buf, want, 18) == 0);
    memset(&y, 0, sizeof y);
    pos = 0;
    OK(MPI_Unpack_external("external32", buf, 18, &pos, &y, 1, st));
    CHECK(pos == 18 && y.i == x.i && y.d == x.d && y.l == x.l && y.s == x.s);
    /* too small an output buffer */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    pos = 0;
    FAILS(MPI_Pack_external("external32", &x, 1, st, buf, 10, &pos), MPI_ERR_TRUNCATE);
    FAILS(MPI_Pack_external_size("native", 1, MPI_INT, &n), MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&st);
}

/* MPI_Cart_sub keeping no dimension: one zero-dimensional communicator, at rank 0 */
static void cart_sub_none(void)
{
    int dims[1] = {size}, periods[1] = {0}, remain[1] = {0}, n, nd;
    MPI_Comm cart, sub;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    OK(MPI_Cart_sub(cart, remain, &sub));
    if (mt_rank == 0) {
        CHECK(sub != MPI_COMM_NULL);
        OK(MPI_Comm_size(sub, &n));
        OK(MPI_Cartdim_get(sub, &nd));
        CHECK(n == 1 && nd == 0);
        OK(MPI_Comm_free(&sub));
    } else {
        CHECK(sub == MPI_COMM_NULL);
    }
    OK(MPI_Comm_free(&cart));
}

/* A datatype keyval freed by the delete callback, then again by the program: MPICH's
 * keyval_double_free_type. */
static int kv_delete(MPI_Datatype t, int keyval, void *attr, void *extra)
{
    (void)t, (void)attr, (void)extra;
    return MPI_Type_free_keyval(&keyval);
}

static void keyval_double_free(void)
{
    MPI_Datatype a, b;
    int kv, kv2;
    OK(MPI_Type_dup(MPI_INT, &a));
    OK(MPI_Type_dup(MPI_INT, &b));
    OK(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, kv_delete, &kv, NULL));
    kv2 = kv;
    OK(MPI_Type_set_attr(a, kv, NULL));
    OK(MPI_Type_set_attr(b, kv, NULL));
    OK(MPI_Type_free(&a));
    OK(MPI_Type_free_keyval(&kv));
    OK(MPI_Type_free_keyval(&kv2));
    OK(MPI_Type_free(&b)); /* last use: the keyval goes */
    CHECK(kv == MPI_KEYVAL_INVALID && kv2 == MPI_KEYVAL_INVALID);
}

/* MPI_Accumulate with MPI_MAXLOC on MPI_DOUBLE_INT (padding after its int): every rank
 * offers (value, rank) to rank 0's window; the largest value and its rank win. */
static void pair_accumulate(void)
{
    struct {
        double v;
        int i;
    } mine[2], *base, got[2];
    MPI_Win win;
    OK(MPI_Win_allocate(2 * (MPI_Aint)sizeof mine[0], (int)sizeof mine[0], MPI_INFO_NULL,
                        MPI_COMM_WORLD, &base, &win));
    base[0].v = base[1].v = -1.0;
    base[0].i = base[1].i = -1;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < 2; k++) {
        mine[k].v = k == 0 ? (double)mt_rank : (double)(size - mt_rank);
        mine[k].i = mt_rank;
    }
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Accumulate(mine, 2, MPI_DOUBLE_INT, 0, 0, 2, MPI_DOUBLE_INT, MPI_MAXLOC, win));
    OK(MPI_Win_unlock(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    OK(MPI_Get_accumulate(NULL, 0, MPI_DOUBLE_INT, got, 2, MPI_DOUBLE_INT, 0, 0, 2, MPI_DOUBLE_INT,
                          MPI_NO_OP, win));
    OK(MPI_Win_unlock(0, win));
    CHECKF(got[0].v == size - 1 && got[0].i == size - 1, "maxloc %g at %d", got[0].v, got[0].i);
    CHECKF(got[1].v == size && got[1].i == 0, "maxloc %g at %d", got[1].v, got[1].i);
    OK(MPI_Win_free(&win));
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    persistent();
    isendrecv();
    cancel();
    external32();
    cart_sub_none();
    keyval_double_free();
    pair_accumulate();
    return mt_done("mpi4");
}

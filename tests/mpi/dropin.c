/*
 * dropin.c - what running existing MPI programs (mpi4py's test suite) found wrong in
 * tern's MPI layer, written here as plain MPI:
 *   buffered sends into a buffer sized exactly as the standard says (MPI_Pack_size +
 *   MPI_BSEND_OVERHEAD per message), unaligned, with many messages in flight at once;
 *   MPI_BOTTOM with absolute-address datatypes (and absolute displacements) in
 *   Alltoallw, Ialltoallw and Neighbor_alltoallw; MPI_Info_dup of MPI_INFO_ENV and the
 *   key order of a duplicate; the envelopes of MPI_Type_create_f90_* types;
 *   MPI_COMM_NULL given to the intercommunicator calls.
 */
#include <stdint.h>

#include "mpi_check.h"

static int size;

/* ---- buffered sends -------------------------------------------------------------------- */

#define BS_N 40

/* Message i's length in ints: odd sizes, a few past every eager threshold. */
static int bs_len(int i)
{
    return i % 10 == 9 ? 20000 + i : 1 + 3 * i;
}

static void test_bsend(void)
{
    int to = (mt_rank + 1) % size, from = (mt_rank + size - 1) % size;
    /* One message sized exactly, the buffer one byte off 16-byte alignment. */
    int ps = 0;
    OK(MPI_Pack_size(13, MPI_CHAR, MPI_COMM_WORLD, &ps));
    char *raw = malloc((size_t)ps + MPI_BSEND_OVERHEAD + 16);
    CHECK(raw != NULL);
    char *b1 = (char *)(((uintptr_t)raw + 16) & ~(uintptr_t)15) + 1;
    OK(MPI_Buffer_attach(b1, ps + MPI_BSEND_OVERHEAD));
    char m[13], r[13];
    for (int i = 0; i < 13; i++) m[i] = (char)(mt_rank * 13 + i);
    OK(MPI_Bsend(m, 13, MPI_CHAR, to, 5, MPI_COMM_WORLD));
    OK(MPI_Recv(r, 13, MPI_CHAR, from, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int i = 0; i < 13; i++) CHECK(r[i] == (char)(from * 13 + i));
    void *got = NULL;
    int gsize = -1;
    OK(MPI_Buffer_detach(&got, &gsize));
    CHECK(got == b1 && gsize == ps + MPI_BSEND_OVERHEAD);
    free(raw);

    /* BS_N messages of odd sizes all buffered before the receiver posts anything. */
    int total = 0;
    for (int i = 0; i < BS_N; i++) {
        OK(MPI_Pack_size(bs_len(i), MPI_INT, MPI_COMM_WORLD, &ps));
        total += ps + MPI_BSEND_OVERHEAD;
    }
    raw = malloc((size_t)total + 8);
    CHECK(raw != NULL);
    OK(MPI_Buffer_attach(raw + 3, total));
    int *msg = malloc(sizeof(int) * 20000 * 2), *in = malloc(sizeof(int) * 20000 * 2);
    CHECK(msg != NULL && in != NULL);
    for (int i = 0; i < BS_N; i++) {
        for (int k = 0; k < bs_len(i); k++) msg[k] = mt_rank * 1000000 + i * 50000 + k;
        OK(MPI_Bsend(msg, bs_len(i), MPI_INT, to, i, MPI_COMM_WORLD));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < BS_N; i++) {
        MPI_Status st;
        OK(MPI_Recv(in, bs_len(i), MPI_INT, from, i, MPI_COMM_WORLD, &st));
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == bs_len(i));
        for (int k = 0; k < bs_len(i); k++)
            CHECKF(in[k] == from * 1000000 + i * 50000 + k, "message %d int %d", i, k);
    }
    OK(MPI_Buffer_detach(&got, &gsize));
    CHECK(got == raw + 3 && gsize == total);
    free(raw);
    free(msg);
    free(in);
}

/* ---- MPI_BOTTOM with absolute addresses -------------------------------------------------- */

#define BT_K 5

static void test_bottom(void)
{
    /* At least two blocks: the neighbour exchange below uses blocks 0 and 1. */
    size_t nblk = (size_t)size + 1;
    int *sb = malloc(sizeof(int) * BT_K * nblk), *rb = malloc(sizeof(int) * BT_K * nblk);
    int *sc = malloc(sizeof(int) * (size_t)size * 4), *sd = sc + size, *rc = sc + 2 * size,
        *rd = sc + 3 * size;
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size * 2), *rt = st + size;
    CHECK(sb && rb && sc && st);
    for (int i = 0; i < size; i++) {
        /* Block i: a one-block hindexed type at the block's absolute address. */
        int bl = BT_K;
        MPI_Aint a;
        OK(MPI_Get_address(&sb[i * BT_K], &a));
        OK(MPI_Type_create_hindexed(1, &bl, &a, MPI_INT, &st[i]));
        OK(MPI_Type_commit(&st[i]));
        OK(MPI_Get_address(&rb[i * BT_K], &a));
        OK(MPI_Type_create_hindexed(1, &bl, &a, MPI_INT, &rt[i]));
        OK(MPI_Type_commit(&rt[i]));
        sc[i] = rc[i] = 1;
        sd[i] = rd[i] = 0;
    }
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < size * BT_K; i++) {
            sb[i] = mt_rank * 1000 + round * 100 + i;
            rb[i] = -1;
        }
        if (round == 0) {
            OK(MPI_Alltoallw(MPI_BOTTOM, sc, sd, st, MPI_BOTTOM, rc, rd, rt, MPI_COMM_WORLD));
        } else {
            MPI_Request rq;
            OK(MPI_Ialltoallw(MPI_BOTTOM, sc, sd, st, MPI_BOTTOM, rc, rd, rt, MPI_COMM_WORLD, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        /* From rank j: its block for me (mt_rank). */
        for (int j = 0; j < size; j++)
            for (int k = 0; k < BT_K; k++)
                CHECKF(rb[j * BT_K + k] == j * 1000 + round * 100 + mt_rank * BT_K + k,
                       "alltoallw round %d from %d [%d]", round, j, k);
    }
    for (int i = 0; i < size; i++) {
        MPI_Type_free(&st[i]);
        MPI_Type_free(&rt[i]);
    }

    /* Neighbor_alltoallw on a directed ring (from the left, to the right: one edge each
     * way at every size), MPI_BOTTOM with absolute MPI_Aint displacements of a predefined
     * type, then with absolute-address types. I send my block 1 into the left's block 0. */
    MPI_Comm ring;
    int left = (mt_rank + size - 1) % size, right = (mt_rank + 1) % size;
    int wl = 1, wr = 1;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &left, &wl, 1, &right, &wr,
                                      MPI_INFO_NULL, 0, &ring));
    int nc = BT_K, one = 1;
    MPI_Aint nsd, nrd, zero = 0;
    MPI_Datatype nst = MPI_INT, nrt = MPI_INT;
    OK(MPI_Get_address(&sb[BT_K], &nsd));
    OK(MPI_Get_address(&rb[0], &nrd));
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 2 * BT_K; i++) {
            sb[i] = mt_rank * 1000 + round * 100 + i;
            rb[i] = -1;
        }
        if (round == 0) {
            OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, &nc, &nsd, &nst, MPI_BOTTOM, &nc, &nrd, &nrt,
                                      ring));
        } else {
            OK(MPI_Type_create_hindexed(1, &nc, &nsd, MPI_INT, &nst));
            OK(MPI_Type_commit(&nst));
            OK(MPI_Type_create_hindexed(1, &nc, &nrd, MPI_INT, &nrt));
            OK(MPI_Type_commit(&nrt));
            OK(MPI_Neighbor_alltoallw(MPI_BOTTOM, &one, &zero, &nst, MPI_BOTTOM, &one, &zero,
                                      &nrt, ring));
            MPI_Type_free(&nst);
            MPI_Type_free(&nrt);
        }
        for (int k = 0; k < BT_K; k++) {
            CHECKF(rb[k] == left * 1000 + round * 100 + BT_K + k, "neighbor round %d [%d] = %d", round, k, rb[k]);
            CHECK(rb[BT_K + k] == -1);
        }
    }
    MPI_Comm_free(&ring);
    free(sb);
    free(rb);
    free(sc);
    free(st);
}

/* ---- MPI_Info_dup ---------------------------------------------------------------------- */

static void test_info(void)
{
    MPI_Info env, in, dup;
    OK(MPI_Info_dup(MPI_INFO_ENV, &env));
    CHECK(env != MPI_INFO_NULL && env != MPI_INFO_ENV);
    int n = -1;
    OK(MPI_Info_get_nkeys(env, &n));
    CHECK(n >= 0);
    OK(MPI_Info_set(env, "tern_dropin", "yes")); /* a new object of its own */
    OK(MPI_Info_free(&env));
    static const char *keys[] = {"zeta", "alpha", "mid", "beta", "omega"};
    OK(MPI_Info_create(&in));
    for (int i = 0; i < 5; i++)
        OK(MPI_Info_set(in, keys[i], keys[4 - i]));
    OK(MPI_Info_dup(in, &dup));
    OK(MPI_Info_get_nkeys(dup, &n));
    CHECK(n == 5);
    for (int i = 0; i < 5; i++) {
        char k1[MPI_MAX_INFO_KEY + 1], k2[MPI_MAX_INFO_KEY + 1], v[64];
        int flag = 0;
        OK(MPI_Info_get_nthkey(in, i, k1));
        OK(MPI_Info_get_nthkey(dup, i, k2));
        CHECKF(strcmp(k1, keys[i]) == 0 && strcmp(k2, keys[i]) == 0, "key %d: %s / %s", i, k1, k2);
        OK(MPI_Info_get(dup, keys[i], (int)sizeof v - 1, v, &flag));
        CHECK(flag && strcmp(v, keys[4 - i]) == 0);
    }
    OK(MPI_Info_free(&in));
    OK(MPI_Info_free(&dup));
}

/* ---- MPI_Type_create_f90_* ------------------------------------------------------------- */

static void check_f90(MPI_Datatype t, int combiner, int ni, int p, int r, int bytes)
{
    int n_i = -1, n_a = -1, n_t = -1, comb = -1, ints[2] = {-7, -7};
    OK(MPI_Type_get_envelope(t, &n_i, &n_a, &n_t, &comb));
    CHECKF(comb == combiner && n_i == ni && n_a == 0 && n_t == 0, "envelope %d %d %d %d", comb,
           n_i, n_a, n_t);
    OK(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL));
    if (ni == 2) CHECK(ints[0] == p && ints[1] == r);
    else CHECK(ints[0] == r);
    int sz = -1;
    OK(MPI_Type_size(t, &sz));
    CHECK(sz == bytes);
}

static void test_f90(void)
{
    MPI_Datatype r1, r2, c1, i1, i2, rr;
    OK(MPI_Type_create_f90_real(6, 30, &r1));
    OK(MPI_Type_create_f90_real(6, 30, &r2));
    CHECK(r1 == r2);
    check_f90(r1, MPI_COMBINER_F90_REAL, 2, 6, 30, 4);
    OK(MPI_Type_create_f90_real(15, MPI_UNDEFINED, &rr));
    CHECK(rr != r1);
    check_f90(rr, MPI_COMBINER_F90_REAL, 2, 15, MPI_UNDEFINED, 8);
    OK(MPI_Type_create_f90_complex(15, 300, &c1));
    check_f90(c1, MPI_COMBINER_F90_COMPLEX, 2, 15, 300, 16);
    OK(MPI_Type_create_f90_integer(9, &i1));
    OK(MPI_Type_create_f90_integer(9, &i2));
    CHECK(i1 == i2);
    check_f90(i1, MPI_COMBINER_F90_INTEGER, 1, 0, 9, 4);
    /* They work as the named types they stand for, in reductions too. */
    double x = mt_rank + 1, y = 0;
    OK(MPI_Allreduce(&x, &y, 1, rr, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == (double)size * (size + 1) / 2);
    int v[3] = {mt_rank, 7, -1}, w[3] = {0, 0, 0}, cnt = -1;
    MPI_Status st;
    OK(MPI_Sendrecv(v, 3, i1, mt_rank, 3, w, 3, i1, mt_rank, 3, MPI_COMM_WORLD, &st));
    CHECK(w[0] == mt_rank && w[1] == 7 && w[2] == -1);
    OK(MPI_Get_elements(&st, i1, &cnt));
    CHECK(cnt == 3);
    /* Predefined: not freed. */
    FAILS(MPI_Type_free(&r2), MPI_ERR_TYPE);
}

/* ---- MPI_COMM_NULL in the intercommunicator calls -------------------------------------- */

static void test_comm_null(void)
{
    MPI_Comm c = MPI_COMM_NULL;
    int n = 0;
    MPI_Group g;
    FAILS(MPI_Intercomm_merge(MPI_COMM_NULL, 0, &c), MPI_ERR_COMM);
    FAILS(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &c), MPI_ERR_COMM); /* not an intercomm */
    FAILS(MPI_Intercomm_create(MPI_COMM_NULL, 0, MPI_COMM_WORLD, 0, 0, &c), MPI_ERR_COMM);
    FAILS(MPI_Comm_remote_size(MPI_COMM_NULL, &n), MPI_ERR_COMM);
    FAILS(MPI_Comm_remote_group(MPI_COMM_NULL, &g), MPI_ERR_COMM);
    FAILS(MPI_Comm_test_inter(MPI_COMM_NULL, &n), MPI_ERR_COMM);
    FAILS(MPI_Comm_accept("port", MPI_INFO_NULL, 0, MPI_COMM_NULL, &c), MPI_ERR_COMM);
    FAILS(MPI_Comm_connect("port", MPI_INFO_NULL, 0, MPI_COMM_NULL, &c), MPI_ERR_COMM);
    FAILS(MPI_Comm_disconnect(&c), MPI_ERR_COMM);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    test_bsend();
    test_bottom();
    test_info();
    test_f90();
    test_comm_null();
    return mt_done("dropin");
}

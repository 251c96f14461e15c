/*
 * coll.c - every MPI collective, blocking and non-blocking, in place where MPI allows,
 * with exact data checks: barrier, bcast, reduce, allreduce, scan, exscan,
 * reduce_scatter(_block), gather(v), scatter(v), allgather(v), alltoall(v/w) (also with
 * non-contiguous types on the per-process side); built-in ops on
 * several types (MPI_SUM on MPI_CHAR, MINLOC/MAXLOC pairs), user ops commutative or not,
 * Reduce_local, derived datatypes in data movement. Run on odd and even process counts.
 */
#include <stdint.h>

#include "mpi_check.h"

static int me, np;

/* Blocking (nb = 0) or non-blocking + wait (nb = 1) forms share one call site. */
#define RUN(nb, blocking, ...)                                                                     \
    do {                                                                                           \
        if (!(nb)) {                                                                               \
            OK(blocking);                                                                          \
        } else {                                                                                   \
            MPI_Request rq_;                                                                       \
            OK(__VA_ARGS__);                                                                       \
            OK(MPI_Wait(&rq_, MPI_STATUS_IGNORE));                                                 \
        }                                                                                          \
    } while (0)

static int val(int rank, int i)
{
    return rank * 1000 + i;
}

static void bcast_barrier(int nb)
{
    for (int root = 0; root < np; root++) {
        int n = 1000 + root;
        int *b = malloc((size_t)n * sizeof(int));
        for (int i = 0; i < n; i++)
            b[i] = me == root ? val(root, i) : -1;
        RUN(nb, MPI_Bcast(b, n, MPI_INT, root, MPI_COMM_WORLD),
            MPI_Ibcast(b, n, MPI_INT, root, MPI_COMM_WORLD, &rq_));
        for (int i = 0; i < n; i++)
            CHECK(b[i] == val(root, i));
        free(b);
    }
    RUN(nb, MPI_Barrier(MPI_COMM_WORLD), MPI_Ibarrier(MPI_COMM_WORLD, &rq_));
    /* A derived type: every other int of 20. */
    MPI_Datatype v;
    OK(MPI_Type_vector(10, 1, 2, MPI_INT, &v));
    OK(MPI_Type_commit(&v));
    int b[20];
    for (int i = 0; i < 20; i++)
        b[i] = me == 0 ? val(0, i) : -1;
    RUN(nb, MPI_Bcast(b, 1, v, 0, MPI_COMM_WORLD), MPI_Ibcast(b, 1, v, 0, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < 20; i++)
        CHECK(b[i] == (i % 2 == 0 || me == 0 ? val(0, i) : -1));
    OK(MPI_Type_free(&v));
}

/* inout[i] = in[i] (x) inout[i] where (x) is 2x2 matrix product: not commutative. */
static void matmul(void *in_, void *io_, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in_;
    int *b = io_;
    for (int k = 0; k < *len; k++, a += 4, b += 4) {
        int r[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2],
                    a[2] * b[1] + a[3] * b[3]};
        memcpy(b, r, sizeof r);
    }
}

static void mat_of(int rank, int *m)
{
    /* Upper triangular with small entries keeps products exact. */
    m[0] = 1, m[1] = rank + 1, m[2] = 0, m[3] = 1 + (rank % 2);
}

static void mat_prod(int lo, int hi, int *out)
{
    int acc[4] = {1, 0, 0, 1};
    for (int r = lo; r <= hi; r++) {
        int m[4], t[4];
        mat_of(r, m);
        t[0] = acc[0] * m[0] + acc[1] * m[2], t[1] = acc[0] * m[1] + acc[1] * m[3];
        t[2] = acc[2] * m[0] + acc[3] * m[2], t[3] = acc[2] * m[1] + acc[3] * m[3];
        memcpy(acc, t, sizeof t);
    }
    memcpy(out, acc, sizeof acc);
}

static void reductions(int nb)
{
    enum { N = 300 };
    int s[N], r[N];
    long ls[N], lr[N];
    double ds[N], dr[N];
    for (int i = 0; i < N; i++)
        s[i] = val(me, i), ls[i] = (long)me * i, ds[i] = me + 0.5 * i;
    for (int root = 0; root < np; root++) {
        memset(r, 0, sizeof r);
        RUN(nb, MPI_Reduce(s, r, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
            MPI_Ireduce(s, r, N, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq_));
        if (me == root)
            for (int i = 0; i < N; i++)
                CHECK(r[i] == 1000 * np * (np - 1) / 2 + np * i);
    }
    /* In place at the root. */
    memcpy(r, s, sizeof r);
    RUN(nb, MPI_Reduce(me == 0 ? MPI_IN_PLACE : r, r, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD),
        MPI_Ireduce(me == 0 ? MPI_IN_PLACE : r, r, N, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD, &rq_));
    if (me == 0)
        for (int i = 0; i < N; i++)
            CHECK(r[i] == val(np - 1, i));
    RUN(nb, MPI_Allreduce(ls, lr, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD),
        MPI_Iallreduce(ls, lr, N, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < N; i++)
        CHECK(lr[i] == (long)i * np * (np - 1) / 2);
    memcpy(dr, ds, sizeof dr);
    RUN(nb, MPI_Allreduce(MPI_IN_PLACE, dr, N, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD),
        MPI_Iallreduce(MPI_IN_PLACE, dr, N, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < N; i++)
        CHECK(dr[i] == 0.5 * i);
    /* MPI_SUM on MPI_CHAR and on unsigned char wraps like C. */
    signed char c = (signed char)(me + 1), cr = 0;
    OK(MPI_Allreduce(&c, &cr, 1, MPI_SIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD));
    CHECK(cr == (signed char)(np * (np + 1) / 2));
    char cc = 2, ccr = 0;
    OK(MPI_Allreduce(&cc, &ccr, 1, MPI_CHAR, MPI_SUM, MPI_COMM_WORLD));
    CHECK(ccr == (char)(2 * np));
    /* Bitwise and logical. */
    unsigned u = 1u << (me % 32), ur = 0;
    OK(MPI_Allreduce(&u, &ur, 1, MPI_UNSIGNED, MPI_BOR, MPI_COMM_WORLD));
    CHECK(ur == (np >= 32 ? 0xffffffffu : (1u << np) - 1));
    int land = me != 0 || np == 1, lr1 = -1;
    OK(MPI_Allreduce(&land, &lr1, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
    CHECK(lr1 == (np == 1));
    int64_t big = INT64_C(1) << 40, bigr = 0;
    OK(MPI_Allreduce(&big, &bigr, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD));
    CHECK(bigr == np * (INT64_C(1) << 40));
    long double ld = me + 1, ldr = 0;
    OK(MPI_Allreduce(&ld, &ldr, 1, MPI_LONG_DOUBLE, MPI_PROD, MPI_COMM_WORLD));
    long double f = 1;
    for (int i = 1; i <= np; i++)
        f *= i;
    CHECK(ldr == f);
    /* MINLOC / MAXLOC. */
    struct {
        double v;
        int i;
    } dl = {(double)((me * 7) % np), me}, dlr;
    OK(MPI_Allreduce(&dl, &dlr, 1, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD));
    int best = 0;
    for (int i = 0; i < np; i++)
        if ((i * 7) % np > (best * 7) % np) best = i;
    CHECK(dlr.v == (double)((best * 7) % np) && dlr.i == best);
    struct {
        int v, i;
    } il = {np - me, me}, ilr;
    OK(MPI_Allreduce(&il, &ilr, 1, MPI_2INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(ilr.v == 1 && ilr.i == np - 1);
    struct {
        short v;
        int i;
    } sl = {(short)(me % 2), me}, slr;
    OK(MPI_Allreduce(&sl, &slr, 1, MPI_SHORT_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(slr.v == 0 && slr.i == 0);

    /* A non-commutative user op: results in rank order. */
    MPI_Op op;
    OK(MPI_Op_create(matmul, 0, &op));
    int commute = 1;
    OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0);
    MPI_Datatype mat;
    OK(MPI_Type_contiguous(4, MPI_INT, &mat));
    OK(MPI_Type_commit(&mat));
    int m[8], mr[8], want[4];
    mat_of(me, m);
    mat_of(me, m + 4);
    RUN(nb, MPI_Allreduce(m, mr, 2, mat, op, MPI_COMM_WORLD),
        MPI_Iallreduce(m, mr, 2, mat, op, MPI_COMM_WORLD, &rq_));
    mat_prod(0, np - 1, want);
    CHECK(memcmp(mr, want, sizeof want) == 0 && memcmp(mr + 4, want, sizeof want) == 0);
    for (int root = 0; root<np; root += np> 2 ? np - 1 : 1) {
        memset(mr, 0, sizeof mr);
        OK(MPI_Reduce(m, mr, 1, mat, op, root, MPI_COMM_WORLD));
        if (me == root) CHECK(memcmp(mr, want, sizeof want) == 0);
    }
    RUN(nb, MPI_Scan(m, mr, 1, mat, op, MPI_COMM_WORLD),
        MPI_Iscan(m, mr, 1, mat, op, MPI_COMM_WORLD, &rq_));
    mat_prod(0, me, want);
    CHECK(memcmp(mr, want, sizeof want) == 0);
    memset(mr, 0x7f, sizeof mr);
    RUN(nb, MPI_Exscan(m, mr, 1, mat, op, MPI_COMM_WORLD),
        MPI_Iexscan(m, mr, 1, mat, op, MPI_COMM_WORLD, &rq_));
    if (me > 0) {
        mat_prod(0, me - 1, want);
        CHECK(memcmp(mr, want, sizeof want) == 0);
    }
    /* Reduce_local. */
    int a[4], b[4];
    mat_of(1, a);
    mat_of(2, b);
    OK(MPI_Reduce_local(a, b, 1, mat, op));
    mat_prod(1, 2, want);
    CHECK(memcmp(b, want, sizeof want) == 0);
    OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
    OK(MPI_Type_free(&mat));
    int x = 3, y = 4;
    OK(MPI_Reduce_local(&x, &y, 1, MPI_INT, MPI_PROD));
    CHECK(y == 12);

    /* Scan with a built-in op, in place. */
    int sc = me + 1;
    RUN(nb, MPI_Scan(MPI_IN_PLACE, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
        MPI_Iscan(MPI_IN_PLACE, &sc, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq_));
    CHECK(sc == (me + 1) * (me + 2) / 2);

    /* Reduce_scatter_block and reduce_scatter (rank i gets i + 1 elements). */
    int *in = malloc((size_t)(np * (np + 3)) * sizeof(int)),
        *out = malloc((size_t)(np + 3) * sizeof(int));
    for (int i = 0; i < np * 3; i++)
        in[i] = i + me;
    RUN(nb, MPI_Reduce_scatter_block(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
        MPI_Ireduce_scatter_block(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq_));
    for (int k = 0; k < 3; k++)
        CHECK(out[k] == np * (me * 3 + k) + np * (np - 1) / 2);
    int *counts = malloc((size_t)np * sizeof(int)), total = 0;
    for (int i = 0; i < np; i++)
        counts[i] = i + 1, total += i + 1;
    for (int i = 0; i < total; i++)
        in[i] = i * (me + 1);
    RUN(nb, MPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
        MPI_Ireduce_scatter(in, out, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq_));
    int first = me * (me + 1) / 2;
    for (int k = 0; k <= me; k++)
        CHECK(out[k] == (first + k) * np * (np + 1) / 2);
    free(in);
    free(out);
    free(counts);
}

static void movement(int nb)
{
    int n = 5;
    int *s = malloc((size_t)(n * np) * sizeof(int)), *r = malloc((size_t)(n * np) * sizeof(int));
    for (int root = 0; root < np; root++) {
        for (int i = 0; i < n; i++)
            s[i] = val(me, i);
        memset(r, 0, (size_t)(n * np) * sizeof(int));
        RUN(nb, MPI_Gather(s, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD),
            MPI_Igather(s, n, MPI_INT, r, n, MPI_INT, root, MPI_COMM_WORLD, &rq_));
        if (me == root)
            for (int p = 0; p < np; p++)
                for (int i = 0; i < n; i++)
                    CHECK(r[p * n + i] == val(p, i));
        /* Scatter back what was gathered. */
        int got[5] = {0};
        RUN(nb, MPI_Scatter(r, n, MPI_INT, got, n, MPI_INT, root, MPI_COMM_WORLD),
            MPI_Iscatter(r, n, MPI_INT, got, n, MPI_INT, root, MPI_COMM_WORLD, &rq_));
        for (int i = 0; i < n; i++)
            CHECK(got[i] == val(me, i));
    }
    /* Gather in place at the root; scatter in place at the root. */
    for (int i = 0; i < n * np; i++)
        r[i] = me == 0 ? (i / n == 0 ? val(0, i % n) : -1) : val(me, i);
    RUN(nb, MPI_Gather(me == 0 ? MPI_IN_PLACE : r, n, MPI_INT, r, n, MPI_INT, 0, MPI_COMM_WORLD),
        MPI_Igather(me == 0 ? MPI_IN_PLACE : r, n, MPI_INT, r, n, MPI_INT, 0, MPI_COMM_WORLD,
                    &rq_));
    if (me == 0)
        for (int i = 0; i < n * np; i++)
            CHECK(r[i] == val(i / n, i % n));
    /* Allgather, plain and in place. */
    for (int i = 0; i < n; i++)
        s[i] = val(me, i);
    RUN(nb, MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD),
        MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < n * np; i++)
        CHECK(r[i] == val(i / n, i % n));
    for (int i = 0; i < n * np; i++)
        r[i] = i / n == me ? val(me, i % n) : -1;
    RUN(nb, MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD),
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, r, n, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int i = 0; i < n * np; i++)
        CHECK(r[i] == val(i / n, i % n));
    /* Alltoall: block p of s goes to p. */
    for (int i = 0; i < n * np; i++)
        s[i] = val(me, i);
    RUN(nb, MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD),
        MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int p = 0; p < np; p++)
        for (int i = 0; i < n; i++)
            CHECK(r[p * n + i] == val(p, me * n + i));
    /* Gather with a derived receive type: the root lays blocks out with a stride of 2. */
    MPI_Datatype str, strr;
    OK(MPI_Type_vector(n, 1, 2, MPI_INT, &str));
    OK(MPI_Type_create_resized(str, 0, (MPI_Aint)(2 * n) * (MPI_Aint)sizeof(int), &strr));
    OK(MPI_Type_commit(&strr));
    int *wide = malloc((size_t)(2 * n * np) * sizeof(int));
    for (int i = 0; i < 2 * n * np; i++)
        wide[i] = -1;
    for (int i = 0; i < n; i++)
        s[i] = val(me, i);
    RUN(nb, MPI_Gather(s, n, MPI_INT, wide, 1, strr, 0, MPI_COMM_WORLD),
        MPI_Igather(s, n, MPI_INT, wide, 1, strr, 0, MPI_COMM_WORLD, &rq_));
    if (me == 0)
        for (int p = 0; p < np; p++)
            for (int i = 0; i < 2 * n; i++)
                CHECK(wide[p * 2 * n + i] == (i % 2 ? -1 : val(p, i / 2)));
    free(wide);
    OK(MPI_Type_free(&str));
    OK(MPI_Type_free(&strr));
    free(s);
    free(r);
}

static void vmovement(int nb)
{
    /* Process p contributes p + 1 ints; blocks are placed with a gap of 1. */
    int *counts = malloc((size_t)np * sizeof(int)), *displs = malloc((size_t)np * sizeof(int));
    int total = 0;
    for (int p = 0; p < np; p++) {
        counts[p] = p + 1;
        displs[p] = total;
        total += p + 2;
    }
    int *s = malloc((size_t)(np + 1) * sizeof(int)), *r = malloc((size_t)total * sizeof(int));
    for (int i = 0; i <= me; i++)
        s[i] = val(me, i);
    for (int root = 0; root < np; root++) {
        for (int i = 0; i < total; i++)
            r[i] = -1;
        RUN(nb, MPI_Gatherv(s, me + 1, MPI_INT, r, counts, displs, MPI_INT, root, MPI_COMM_WORLD),
            MPI_Igatherv(s, me + 1, MPI_INT, r, counts, displs, MPI_INT, root, MPI_COMM_WORLD,
                         &rq_));
        if (me == root)
            for (int p = 0; p < np; p++) {
                for (int i = 0; i <= p; i++)
                    CHECK(r[displs[p] + i] == val(p, i));
                CHECK(r[displs[p] + p + 1] == -1);
            }
        int got[64];
        memset(got, 0, sizeof got);
        RUN(nb,
            MPI_Scatterv(r, counts, displs, MPI_INT, got, me + 1, MPI_INT, root, MPI_COMM_WORLD),
            MPI_Iscatterv(r, counts, displs, MPI_INT, got, me + 1, MPI_INT, root, MPI_COMM_WORLD,
                          &rq_));
        for (int i = 0; i <= me; i++)
            CHECK(got[i] == val(me, i));
    }
    for (int i = 0; i < total; i++)
        r[i] = -1;
    RUN(nb, MPI_Allgatherv(s, me + 1, MPI_INT, r, counts, displs, MPI_INT, MPI_COMM_WORLD),
        MPI_Iallgatherv(s, me + 1, MPI_INT, r, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int p = 0; p < np; p++)
        for (int i = 0; i <= p; i++)
            CHECK(r[displs[p] + i] == val(p, i));
    /* Alltoallv: I send (me + 1) ints to every p; p receives (q + 1) from q. */
    int *sc = malloc((size_t)np * sizeof(int)), *sd = malloc((size_t)np * sizeof(int));
    int *rc = malloc((size_t)np * sizeof(int)), *rd = malloc((size_t)np * sizeof(int));
    int *sb = malloc((size_t)(np * (me + 1)) * sizeof(int)),
        *rb = malloc((size_t)total * sizeof(int));
    for (int p = 0; p < np; p++) {
        sc[p] = me + 1;
        sd[p] = p * (me + 1);
        rc[p] = p + 1;
        rd[p] = displs[p];
        for (int i = 0; i <= me; i++)
            sb[p * (me + 1) + i] = val(me, p * 100 + i);
    }
    RUN(nb, MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD),
        MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, MPI_COMM_WORLD, &rq_));
    for (int p = 0; p < np; p++)
        for (int i = 0; i <= p; i++)
            CHECK(rb[rd[p] + i] == val(p, me * 100 + i));
    free(sc), free(sd), free(rc), free(rd), free(sb), free(rb);
    free(counts), free(displs), free(s), free(r);
}

/* The v collectives and alltoallw with a non-contiguous type on the side with the
 * per-process arrays: E is two ints at offsets 0 and 2 of a 3-int extent (the middle
 * int must stay untouched). Block p holds p + 1 E elements = 2 (p + 1) ints. */
static MPI_Datatype mkE(void)
{
    MPI_Datatype v, e;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v));
    OK(MPI_Type_create_resized(v, 0, 3 * (MPI_Aint)sizeof(int), &e));
    OK(MPI_Type_commit(&e));
    OK(MPI_Type_free(&v));
    return e;
}

/* Check rank p's block of n E elements at element displacement d of b. */
static void checkE(const int *b, int d, int n, int p, int base)
{
    for (int k = 0; k < n; k++) {
        CHECKF(b[3 * (d + k)] == val(p, base + 2 * k), "E block of %d [%d].0", p, k);
        CHECKF(b[3 * (d + k) + 1] == -1, "E block of %d [%d] gap written", p, k);
        CHECKF(b[3 * (d + k) + 2] == val(p, base + 2 * k + 1), "E block of %d [%d].1", p, k);
    }
}

static void putE(int *b, int d, int n, int p, int base)
{
    for (int k = 0; k < n; k++) {
        b[3 * (d + k)] = val(p, base + 2 * k);
        b[3 * (d + k) + 2] = val(p, base + 2 * k + 1);
    }
}

static void vtypes(int nb)
{
    MPI_Datatype E = mkE();
    int *counts = malloc((size_t)np * sizeof(int)), *displs = malloc((size_t)np * sizeof(int));
    int total = 0;
    for (int p = 0; p < np; p++) {
        counts[p] = p + 1;
        displs[p] = total;
        total += p + 2; /* one element of gap between blocks */
    }
    int *r = malloc((size_t)(3 * total) * sizeof(int)), s[128], got[128];
    for (int i = 0; i < 2 * (me + 1); i++)
        s[i] = val(me, i);
    for (int root = 0; root < np; root++) {
        for (int i = 0; i < 3 * total; i++)
            r[i] = -1;
        RUN(nb, MPI_Gatherv(s, 2 * (me + 1), MPI_INT, r, counts, displs, E, root, MPI_COMM_WORLD),
            MPI_Igatherv(s, 2 * (me + 1), MPI_INT, r, counts, displs, E, root, MPI_COMM_WORLD,
                         &rq_));
        if (me == root)
            for (int p = 0; p < np; p++) {
                checkE(r, displs[p], p + 1, p, 0);
                CHECK(r[3 * (displs[p] + p + 1)] == -1); /* the gap element */
            }
        for (int i = 0; i < 128; i++)
            got[i] = -7;
        RUN(nb,
            MPI_Scatterv(r, counts, displs, E, got, 2 * (me + 1), MPI_INT, root, MPI_COMM_WORLD),
            MPI_Iscatterv(r, counts, displs, E, got, 2 * (me + 1), MPI_INT, root, MPI_COMM_WORLD,
                          &rq_));
        for (int i = 0; i < 2 * (me + 1); i++)
            CHECK(got[i] == val(me, i));
        CHECK(got[2 * (me + 1)] == -7);
    }
    /* Allgatherv, then in place (my block already in r). */
    for (int ip = 0; ip < 2; ip++) {
        for (int i = 0; i < 3 * total; i++)
            r[i] = -1;
        if (ip) putE(r, displs[me], me + 1, me, 0);
        const void *sb = ip ? MPI_IN_PLACE : (const void *)s;
        RUN(nb, MPI_Allgatherv(sb, 2 * (me + 1), MPI_INT, r, counts, displs, E, MPI_COMM_WORLD),
            MPI_Iallgatherv(sb, 2 * (me + 1), MPI_INT, r, counts, displs, E, MPI_COMM_WORLD, &rq_));
        for (int p = 0; p < np; p++)
            checkE(r, displs[p], p + 1, p, 0);
    }
    /* Alltoallv with E on both sides: me sends me + 1 elements to q (base q * 100);
     * q's block from p is p + 1 elements at displs[p]. */
    int *sc = malloc((size_t)np * sizeof(int)), *sd = malloc((size_t)np * sizeof(int));
    int *sbuf = malloc((size_t)(3 * np * (me + 1)) * sizeof(int));
    for (int q = 0; q < np; q++) {
        sc[q] = me + 1;
        sd[q] = q * (me + 1);
        putE(sbuf, sd[q], me + 1, me, q * 100);
    }
    for (int i = 0; i < 3 * total; i++)
        r[i] = -1;
    RUN(nb, MPI_Alltoallv(sbuf, sc, sd, E, r, counts, displs, E, MPI_COMM_WORLD),
        MPI_Ialltoallv(sbuf, sc, sd, E, r, counts, displs, E, MPI_COMM_WORLD, &rq_));
    for (int p = 0; p < np; p++)
        checkE(r, displs[p], p + 1, p, me * 100);
    /* Alltoallw: to even q plain ints, to odd q E elements; from q with q % 3 == 0 plain
     * ints, else E elements; displacements in bytes. */
    int *wsc = malloc((size_t)np * sizeof(int)), *wsd = malloc((size_t)np * sizeof(int));
    int *wrc = malloc((size_t)np * sizeof(int)), *wrd = malloc((size_t)np * sizeof(int));
    MPI_Datatype *wst = malloc((size_t)np * sizeof *wst), *wrt = malloc((size_t)np * sizeof *wrt);
    int *ws = malloc((size_t)(3 * np * (me + 1)) * sizeof(int));
    for (int i = 0; i < 3 * np * (me + 1); i++)
        ws[i] = -1;
    for (int q = 0; q < np; q++) {
        int at = q * 3 * (me + 1); /* ints */
        wsd[q] = at * (int)sizeof(int);
        if (q % 2 == 0) {
            wst[q] = MPI_INT;
            wsc[q] = 2 * (me + 1);
            for (int i = 0; i < 2 * (me + 1); i++)
                ws[at + i] = val(me, q * 100 + i);
        } else {
            wst[q] = E;
            wsc[q] = me + 1;
            putE(ws, at / 3, me + 1, me, q * 100);
        }
        wrd[q] = 3 * displs[q] * (int)sizeof(int);
        wrt[q] = q % 3 == 0 ? MPI_INT : E;
        wrc[q] = q % 3 == 0 ? 2 * (q + 1) : q + 1;
    }
    for (int i = 0; i < 3 * total; i++)
        r[i] = -1;
    RUN(nb, MPI_Alltoallw(ws, wsc, wsd, wst, r, wrc, wrd, wrt, MPI_COMM_WORLD),
        MPI_Ialltoallw(ws, wsc, wsd, wst, r, wrc, wrd, wrt, MPI_COMM_WORLD, &rq_));
    for (int p = 0; p < np; p++) {
        if (p % 3 == 0) {
            for (int i = 0; i < 2 * (p + 1); i++)
                CHECKF(r[3 * displs[p] + i] == val(p, me * 100 + i), "alltoallw ints from %d", p);
            CHECK(r[3 * displs[p] + 2 * (p + 1)] == -1);
        } else {
            checkE(r, displs[p], p + 1, p, me * 100);
        }
    }
    /* Alltoallw in place: the receive side describes both. */
    for (int i = 0; i < 3 * total; i++)
        r[i] = -1;
    for (int q = 0; q < np; q++) {
        wrt[q] = q % 2 ? E : MPI_INT;
        wrc[q] = q % 2 ? (me < q ? me : q) + 1 : 2 * ((me < q ? me : q) + 1);
        if (q % 2)
            putE(r, displs[q], wrc[q], me, q * 100);
        else
            for (int i = 0; i < wrc[q]; i++)
                r[3 * displs[q] + i] = val(me, q * 100 + i);
    }
    RUN(nb, MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r, wrc, wrd, wrt, MPI_COMM_WORLD),
        MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, r, wrc, wrd, wrt, MPI_COMM_WORLD, &rq_));
    for (int q = 0; q < np; q++) {
        int n = (me < q ? me : q) + 1;
        if (q % 2)
            checkE(r, displs[q], n, q, me * 100);
        else
            for (int i = 0; i < 2 * n; i++)
                CHECKF(r[3 * displs[q] + i] == val(q, me * 100 + i), "in-place alltoallw %d", q);
    }
    free(wsc), free(wsd), free(wrc), free(wrd), free(wst), free(wrt), free(ws);
    free(sc), free(sd), free(sbuf), free(r), free(counts), free(displs);
    OK(MPI_Type_free(&E));
}

/* Several non-blocking collectives in flight at once, completed in reverse order. */
static void overlap(void)
{
    int a = me, b = 0, c[2] = {me, me}, d[2] = {0, 0};
    MPI_Request q[3];
    OK(MPI_Iallreduce(&a, &b, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Ibarrier(MPI_COMM_WORLD, &q[1]));
    OK(MPI_Iallreduce(c, d, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q[2]));
    OK(MPI_Wait(&q[2], MPI_STATUS_IGNORE));
    OK(MPI_Wait(&q[1], MPI_STATUS_IGNORE));
    int flag = 0;
    while (!flag)
        OK(MPI_Test(&q[0], &flag, MPI_STATUS_IGNORE));
    CHECK(b == np * (np - 1) / 2 && d[0] == np - 1 && d[1] == np - 1);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int nb = 0; nb < 2; nb++) {
        bcast_barrier(nb);
        reductions(nb);
        movement(nb);
        vmovement(nb);
        vtypes(nb);
    }
    overlap();
    return mt_done("coll");
}

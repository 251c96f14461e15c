/*
 * coll_ops.c - every collective, checked value by value, under whatever algorithms the
 * environment forces (tests.list runs it with several TERN_COLL_* sets at 1..8 ranks).
 *
 *  - data movement (bcast, gather(v), scatter(v), allgather(v), alltoall(v)): sizes 0, 1,
 *    13, 777 and one larger than every threshold; every root; in place and not; the v
 *    forms with irregular sizes (some zero) and scrambled displacements. Guard bytes after
 *    every receive area must survive.
 *  - reductions (reduce at every root, allreduce, reduce_scatter(_block), scan, exscan):
 *    every built-in (op, datatype) pair at counts 0, 1, 7, 300 and, for a few pairs, a
 *    vector larger than every threshold; a non-commutative user op (product of 2x2
 *    matrices of 16-bit integers packed in a uint64). Results are compared exactly with a
 *    serial reference that every rank computes from everybody's inputs.
 *  - every other call goes through the non-blocking form + tern_wait.
 *  - the whole suite again (small sizes) on a split communicator with reversed ranks,
 *    while a non-blocking allreduce on the world is in flight.
 * A mismatch names rank, operation, datatype, size, root and element index.
 */
#include "mp_check.h"

static int me, np;      /* in the communicator under test */
static int calls;       /* alternates blocking / non-blocking */
static tern_op_t matop; /* the user op */
static int big = 1;     /* run the sizes above every threshold */

/* Blocking form, or non-blocking form + wait on every other call. */
#define CALL(blocking, nonblocking)                                                                \
    do {                                                                                           \
        if (calls++ % 2) {                                                                         \
            tern_request_t rq_ = TERN_REQUEST_NULL;                                                \
            CHECK_OK(nonblocking);                                                                 \
            CHECK_OK(tern_wait(&rq_, NULL));                                                       \
            CHECK(rq_ == TERN_REQUEST_NULL);                                                       \
        } else {                                                                                   \
            CHECK_OK(blocking);                                                                    \
        }                                                                                          \
    } while (0)

static void *xalloc(size_t n)
{
    void *p = malloc(n + MP_GUARD_LEN);
    CHECK(p != NULL);
    memset(p, 0xee, n);
    mp_guard_set(p, n);
    return p;
}

/* ====================== data movement ======================================= */

static uint64_t seed_of(int rank, int salt, size_t size)
{
    return mp_seed((uint64_t)rank, (uint64_t)salt, size, 77);
}

/* Irregular size of the block from rank a (to rank b) for a nominal size. */
static size_t vsize(size_t nominal, int a, int b)
{
    if (nominal == 0) return 0;
    long v = (long)nominal + (a * 5 + b * 3) % 7 - 3;
    return v > 0 ? (size_t)v : 0;
}

/* Displacements with gaps, in reverse rank order; returns the extent. */
static size_t vdispls(const size_t *counts, size_t *displs, int n)
{
    size_t off = 0;
    for (int i = n - 1; i >= 0; i--) {
        displs[i] = off;
        off += counts[i] + 3;
    }
    return off;
}

static void t_bcast(tern_comm_t c, size_t b)
{
    for (int root = 0; root < np; root++) {
        MP_WHERE("bcast size %zu root %d (rank %d of %d)", b, root, me, np);
        char *buf = xalloc(b);
        if (me == root) mp_fill(buf, b, seed_of(root, 1, b));
        CALL(tern_bcast(buf, b, root, c), tern_ibcast(buf, b, root, c, &rq_));
        CHECK_PATTERN(buf, b, seed_of(root, 1, b), "%s", mp_where);
        CHECK_GUARD(buf, b, "%s", mp_where);
        free(buf);
    }
}

static void t_gather(tern_comm_t c, size_t b)
{
    for (int root = 0; root < np; root++)
        for (int inplace = 0; inplace < 2; inplace++) {
            MP_WHERE("gather size %zu root %d in-place %d (rank %d of %d)", b, root, inplace, me,
                     np);
            char *s = xalloc(b), *r = xalloc(b * np);
            mp_fill(s, b, seed_of(me, 2, b));
            const void *sb = s;
            if (inplace && me == root) {
                mp_fill(r + (size_t)me * b, b, seed_of(me, 2, b));
                sb = TERN_IN_PLACE;
            }
            CALL(tern_gather(sb, b, r, root, c), tern_igather(sb, b, r, root, c, &rq_));
            if (me == root)
                for (int q = 0; q < np; q++)
                    CHECK_PATTERN(r + (size_t)q * b, b, seed_of(q, 2, b), "%.180s block %d",
                                  mp_where, q);
            CHECK_GUARD(r, b * np, "%s", mp_where);
            free(s);
            free(r);

            MP_WHERE("gatherv size %zu root %d in-place %d (rank %d of %d)", b, root, inplace, me,
                     np);
            size_t counts[16], displs[16];
            for (int q = 0; q < np; q++)
                counts[q] = vsize(b, q, root);
            size_t ext = vdispls(counts, displs, np), mine = counts[me];
            s = xalloc(mine);
            r = xalloc(ext);
            mp_fill(s, mine, seed_of(me, 3, b));
            sb = s;
            if (inplace && me == root) {
                mp_fill(r + displs[me], mine, seed_of(me, 3, b));
                sb = TERN_IN_PLACE;
            }
            CALL(tern_gatherv(sb, mine, r, counts, displs, root, c),
                 tern_igatherv(sb, mine, r, counts, displs, root, c, &rq_));
            if (me == root)
                for (int q = 0; q < np; q++)
                    CHECK_PATTERN(r + displs[q], counts[q], seed_of(q, 3, b), "%.180s block %d",
                                  mp_where, q);
            CHECK_GUARD(r, ext, "%s", mp_where);
            free(s);
            free(r);
        }
}

static void t_scatter(tern_comm_t c, size_t b)
{
    for (int root = 0; root < np; root++)
        for (int inplace = 0; inplace < 2; inplace++) {
            MP_WHERE("scatter size %zu root %d in-place %d (rank %d of %d)", b, root, inplace, me,
                     np);
            char *s = xalloc(b * np), *r = xalloc(b);
            if (me == root)
                for (int q = 0; q < np; q++)
                    mp_fill(s + (size_t)q * b, b, seed_of(q, 4, b));
            void *rb = inplace && me == root ? TERN_IN_PLACE : r;
            CALL(tern_scatter(s, rb, b, root, c), tern_iscatter(s, rb, b, root, c, &rq_));
            if (rb != TERN_IN_PLACE) CHECK_PATTERN(r, b, seed_of(me, 4, b), "%s", mp_where);
            if (me == root)
                for (int q = 0; q < np; q++)
                    CHECK_PATTERN(s + (size_t)q * b, b, seed_of(q, 4, b), "%.180s sbuf %d",
                                  mp_where, q);
            CHECK_GUARD(r, b, "%s", mp_where);
            free(s);
            free(r);

            MP_WHERE("scatterv size %zu root %d in-place %d (rank %d of %d)", b, root, inplace, me,
                     np);
            size_t counts[16], displs[16];
            for (int q = 0; q < np; q++)
                counts[q] = vsize(b, root, q);
            size_t ext = vdispls(counts, displs, np), mine = counts[me];
            s = xalloc(ext);
            r = xalloc(mine);
            if (me == root)
                for (int q = 0; q < np; q++)
                    mp_fill(s + displs[q], counts[q], seed_of(q, 5, b));
            rb = inplace && me == root ? TERN_IN_PLACE : r;
            CALL(tern_scatterv(s, counts, displs, rb, mine, root, c),
                 tern_iscatterv(s, counts, displs, rb, mine, root, c, &rq_));
            if (rb != TERN_IN_PLACE) CHECK_PATTERN(r, mine, seed_of(me, 5, b), "%s", mp_where);
            CHECK_GUARD(r, mine, "%s", mp_where);
            free(s);
            free(r);
        }
}

static void t_allgather(tern_comm_t c, size_t b)
{
    for (int inplace = 0; inplace < 2; inplace++) {
        MP_WHERE("allgather size %zu in-place %d (rank %d of %d)", b, inplace, me, np);
        char *s = xalloc(b), *r = xalloc(b * np);
        mp_fill(s, b, seed_of(me, 6, b));
        const void *sb = s;
        if (inplace) {
            mp_fill(r + (size_t)me * b, b, seed_of(me, 6, b));
            sb = TERN_IN_PLACE;
        }
        CALL(tern_allgather(sb, r, b, c), tern_iallgather(sb, r, b, c, &rq_));
        for (int q = 0; q < np; q++)
            CHECK_PATTERN(r + (size_t)q * b, b, seed_of(q, 6, b), "%.180s block %d", mp_where, q);
        CHECK_GUARD(r, b * np, "%s", mp_where);
        free(s);
        free(r);

        MP_WHERE("allgatherv size %zu in-place %d (rank %d of %d)", b, inplace, me, np);
        size_t counts[16], displs[16];
        for (int q = 0; q < np; q++)
            counts[q] = vsize(b, q, 0);
        size_t ext = vdispls(counts, displs, np), mine = counts[me];
        s = xalloc(mine);
        r = xalloc(ext);
        mp_fill(s, mine, seed_of(me, 7, b));
        sb = s;
        if (inplace) {
            mp_fill(r + displs[me], mine, seed_of(me, 7, b));
            sb = TERN_IN_PLACE;
        }
        CALL(tern_allgatherv(sb, mine, r, counts, displs, c),
             tern_iallgatherv(sb, mine, r, counts, displs, c, &rq_));
        for (int q = 0; q < np; q++)
            CHECK_PATTERN(r + displs[q], counts[q], seed_of(q, 7, b), "%.180s block %d", mp_where,
                          q);
        CHECK_GUARD(r, ext, "%s", mp_where);
        free(s);
        free(r);
    }
}

static void t_alltoall(tern_comm_t c, size_t b)
{
    for (int inplace = 0; inplace < 2; inplace++) {
        MP_WHERE("alltoall size %zu in-place %d (rank %d of %d)", b, inplace, me, np);
        char *s = xalloc(b * np), *r = xalloc(b * np);
        char *src = inplace ? r : s;
        for (int q = 0; q < np; q++)
            mp_fill(src + (size_t)q * b, b, seed_of(me * 64 + q, 8, b));
        const void *sb = inplace ? TERN_IN_PLACE : s;
        CALL(tern_alltoall(sb, r, b, c), tern_ialltoall(sb, r, b, c, &rq_));
        for (int q = 0; q < np; q++)
            CHECK_PATTERN(r + (size_t)q * b, b, seed_of(q * 64 + me, 8, b), "%.180s block from %d",
                          mp_where, q);
        CHECK_GUARD(r, b * np, "%s", mp_where);
        free(s);
        free(r);

        MP_WHERE("alltoallv size %zu in-place %d (rank %d of %d)", b, inplace, me, np);
        size_t sc[16], sd[16], rc[16], rd[16];
        for (int q = 0; q < np; q++) {
            sc[q] = vsize(b, me, q);
            rc[q] = vsize(b, q, me);
        }
        if (inplace) /* in place needs the same layout both ways */
            for (int q = 0; q < np; q++)
                sc[q] = rc[q] = vsize(b, 0, 0);
        size_t sext = vdispls(sc, sd, np), rext = vdispls(rc, rd, np);
        s = xalloc(sext);
        r = xalloc(rext);
        src = inplace ? r : s;
        size_t *sdd = inplace ? rd : sd;
        for (int q = 0; q < np; q++)
            mp_fill(src + sdd[q], sc[q], seed_of(me * 64 + q, 9, b));
        sb = inplace ? TERN_IN_PLACE : s;
        CALL(tern_alltoallv(sb, sc, sd, r, rc, rd, c),
             tern_ialltoallv(sb, sc, sd, r, rc, rd, c, &rq_));
        for (int q = 0; q < np; q++)
            CHECK_PATTERN(r + rd[q], rc[q], seed_of(q * 64 + me, 9, b), "%.180s block from %d",
                          mp_where, q);
        CHECK_GUARD(r, rext, "%s", mp_where);
        free(s);
        free(r);
    }
}

/* ====================== reductions ========================================== */

static const char *dt_name(tern_datatype_t dt)
{
    static const char *n[] = {"int8",      "int16",      "int32",   "int64",   "uint8",
                              "uint16",    "uint32",     "uint64",  "float",   "double",
                              "float_int", "double_int", "int_int", "long_int"};
    return (unsigned)dt < sizeof n / sizeof n[0] ? n[dt] : "?";
}

static const char *op_name(tern_op_t op)
{
    static const char *n[] = {"sum",  "prod", "min", "max",  "land",   "lor",
                              "lxor", "band", "bor", "bxor", "minloc", "maxloc"};
    if (op == matop) return "user-matrix";
    return (unsigned)op < sizeof n / sizeof n[0] ? n[op] : "?";
}

static int is_int(tern_datatype_t dt)
{
    return dt <= TERN_UINT64;
}

static int is_unsigned(tern_datatype_t dt)
{
    return dt >= TERN_UINT8 && dt <= TERN_UINT64;
}

/* 2x2 matrices of uint16 packed in a uint64: [a b; c d] = a | b<<16 | c<<32 | d<<48. */
static uint64_t matmul(uint64_t x, uint64_t y)
{
    uint32_t a = x & 0xffff, b = (x >> 16) & 0xffff, c = (x >> 32) & 0xffff, d = x >> 48;
    uint32_t e = y & 0xffff, f = (y >> 16) & 0xffff, g = (y >> 32) & 0xffff, h = y >> 48;
    uint64_t r0 = (a * e + b * g) & 0xffff, r1 = (a * f + b * h) & 0xffff;
    uint64_t r2 = (c * e + d * g) & 0xffff, r3 = (c * f + d * h) & 0xffff;
    return r0 | r1 << 16 | r2 << 32 | r3 << 48;
}

static void matop_fn(const void *in, void *inout, size_t count, tern_datatype_t dt)
{
    if (dt != TERN_UINT64) MP_FAIL("user op called with datatype %d", (int)dt);
    const uint64_t *a = in;
    uint64_t *b = inout;
    for (size_t i = 0; i < count; i++)
        b[i] = matmul(a[i], b[i]);
}

/* The input of rank q, element i: small values so that no op overflows. */
static void gen(tern_datatype_t dt, tern_op_t op, int q, size_t i, void *out)
{
    long v;
    if (op == TERN_PROD)
        v = (q + (long)i) % 5 == 0 ? 2 : ((q * 3 + (long)i) % 4 == 0 && !is_unsigned(dt) ? -1 : 1);
    else
        v = (q * 37 + (long)i * 11 + (long)(i >> 5)) % 31 - 15;
    if (is_unsigned(dt) && v < 0) v = -v;
    if (op >= TERN_LAND && op <= TERN_LXOR && v % 3 == 0) v = 0;
    long k = op == TERN_PROD ? 0 : 1; /* products stay tiny: no scaling */
    switch (dt) {
    case TERN_INT8:
        *(int8_t *)out = (int8_t)v;
        break;
    case TERN_INT16:
        *(int16_t *)out = (int16_t)(k ? v * 100 : v);
        break;
    case TERN_INT32:
        *(int32_t *)out = (int32_t)(k ? v * 100000 : v);
        break;
    case TERN_INT64:
        *(int64_t *)out = (int64_t)v * (k ? 1000000000000LL : 1);
        break;
    case TERN_UINT8:
        *(uint8_t *)out = (uint8_t)v;
        break;
    case TERN_UINT16:
        *(uint16_t *)out = (uint16_t)(k ? v * 100 : v);
        break;
    case TERN_UINT32:
        *(uint32_t *)out = (uint32_t)(k ? v * 100000 : v);
        break;
    case TERN_UINT64:
        if (op == matop)
            *(uint64_t *)out = mp_mix64((uint64_t)q * 1000003u + i) & 0x000f000f000f000fULL;
        else
            *(uint64_t *)out = (uint64_t)v << (k ? 33 : 0);
        break;
    case TERN_FLOAT:
        *(float *)out = (float)v * 0.5f;
        break;
    case TERN_DOUBLE:
        *(double *)out = (double)v * 0.25;
        break;
    case TERN_FLOAT_INT:
        *(tern_float_int_t *)out = (tern_float_int_t){(float)(v % 4), (q * 7 + (int)i) % 5};
        break;
    case TERN_DOUBLE_INT:
        *(tern_double_int_t *)out = (tern_double_int_t){(double)(v % 4), (q * 7 + (int)i) % 5};
        break;
    case TERN_INT_INT:
        *(tern_int_int_t *)out = (tern_int_int_t){(int)(v % 4), (q * 7 + (int)i) % 5};
        break;
    case TERN_LONG_INT:
        *(tern_long_int_t *)out = (tern_long_int_t){v % 4, (q * 7 + (int)i) % 5};
        break;
    default:
        MP_FAIL("bad datatype %d", (int)dt);
    }
}

#define REF_ARITH(T)                                                                               \
    {                                                                                              \
        T x = *(const T *)a, y = *(T *)b, z = 0;                                                   \
        switch (op) {                                                                              \
        case TERN_SUM:                                                                             \
            z = (T)(x + y);                                                                        \
            break;                                                                                 \
        case TERN_PROD:                                                                            \
            z = (T)(x * y);                                                                        \
            break;                                                                                 \
        case TERN_MIN:                                                                             \
            z = x < y ? x : y;                                                                     \
            break;                                                                                 \
        case TERN_MAX:                                                                             \
            z = x > y ? x : y;                                                                     \
            break;                                                                                 \
        default:                                                                                   \
            REF_LOGIC(T)                                                                           \
        }                                                                                          \
        *(T *)b = z;                                                                               \
        return;                                                                                    \
    }
#define REF_LOC(T)                                                                                 \
    {                                                                                              \
        T x = *(const T *)a, y = *(T *)b;                                                          \
        int better = op == TERN_MINLOC ? x.val < y.val : x.val > y.val;                            \
        if (better || (x.val == y.val && x.idx < y.idx)) *(T *)b = x;                              \
        return;                                                                                    \
    }

/* b = a op b (a from lower ranks), computed independently of the library. */
static void ref_op(tern_op_t op, tern_datatype_t dt, const void *a, void *b)
{
    if (op == matop) {
        *(uint64_t *)b = matmul(*(const uint64_t *)a, *(uint64_t *)b);
        return;
    }
#define REF_LOGIC(T)                                                                               \
    switch (op) {                                                                                  \
    case TERN_LAND:                                                                                \
        z = (T)((x != 0) && (y != 0));                                                             \
        break;                                                                                     \
    case TERN_LOR:                                                                                 \
        z = (T)((x != 0) || (y != 0));                                                             \
        break;                                                                                     \
    case TERN_LXOR:                                                                                \
        z = (T)((x != 0) != (y != 0));                                                             \
        break;                                                                                     \
    case TERN_BAND:                                                                                \
        z = (T)(x & y);                                                                            \
        break;                                                                                     \
    case TERN_BOR:                                                                                 \
        z = (T)(x | y);                                                                            \
        break;                                                                                     \
    case TERN_BXOR:                                                                                \
        z = (T)(x ^ y);                                                                            \
        break;                                                                                     \
    default:                                                                                       \
        MP_FAIL("no reference for op %d", (int)op);                                                \
    }
    switch (dt) {
    case TERN_INT8:
        REF_ARITH(int8_t)
    case TERN_INT16:
        REF_ARITH(int16_t)
    case TERN_INT32:
        REF_ARITH(int32_t)
    case TERN_INT64:
        REF_ARITH(int64_t)
    case TERN_UINT8:
        REF_ARITH(uint8_t)
    case TERN_UINT16:
        REF_ARITH(uint16_t)
    case TERN_UINT32:
        REF_ARITH(uint32_t)
    case TERN_UINT64:
        REF_ARITH(uint64_t)
    default:
        break;
    }
#undef REF_LOGIC
#define REF_LOGIC(T) MP_FAIL("no reference for op %d on a float", (int)op);
    switch (dt) {
    case TERN_FLOAT:
        REF_ARITH(float)
    case TERN_DOUBLE:
        REF_ARITH(double)
    case TERN_FLOAT_INT:
        REF_LOC(tern_float_int_t)
    case TERN_DOUBLE_INT:
        REF_LOC(tern_double_int_t)
    case TERN_INT_INT:
        REF_LOC(tern_int_int_t)
    case TERN_LONG_INT:
        REF_LOC(tern_long_int_t)
    default:
        MP_FAIL("bad datatype %d", (int)dt);
    }
#undef REF_LOGIC
}

/* Compare one element exactly (pair types field by field: they have padding). */
static int elem_eq(tern_datatype_t dt, const void *x, const void *y)
{
    switch (dt) {
    case TERN_FLOAT_INT:
        return ((const tern_float_int_t *)x)->val == ((const tern_float_int_t *)y)->val &&
               ((const tern_float_int_t *)x)->idx == ((const tern_float_int_t *)y)->idx;
    case TERN_DOUBLE_INT:
        return ((const tern_double_int_t *)x)->val == ((const tern_double_int_t *)y)->val &&
               ((const tern_double_int_t *)x)->idx == ((const tern_double_int_t *)y)->idx;
    case TERN_INT_INT:
        return memcmp(x, y, 8) == 0;
    case TERN_LONG_INT:
        return ((const tern_long_int_t *)x)->val == ((const tern_long_int_t *)y)->val &&
               ((const tern_long_int_t *)x)->idx == ((const tern_long_int_t *)y)->idx;
    default:
        return memcmp(x, y, tern_datatype_size(dt)) == 0;
    }
}

static void fill_input(tern_datatype_t dt, tern_op_t op, int q, size_t first, size_t count,
                       char *buf)
{
    size_t es = tern_datatype_size(dt);
    for (size_t i = 0; i < count; i++)
        gen(dt, op, q, first + i, buf + i * es);
}

/* The reduction over every rank of the first `n` elements, kept for the big vectors. */
static struct {
    tern_datatype_t dt;
    tern_op_t op;
    int np;
    size_t n;
    unsigned char *v;
} cache;

static void reference(tern_datatype_t dt, tern_op_t op, int lo, int hi, size_t i,
                      unsigned char acc[16])
{
    size_t es = tern_datatype_size(dt);
    unsigned char x[16];
    if (lo == 0 && hi == np && cache.v && cache.dt == dt && cache.op == op && cache.np == np &&
        i < cache.n) {
        memcpy(acc, cache.v + i * es, es);
        return;
    }
    memset(acc, 0, 16);
    gen(dt, op, lo, i, acc);
    for (int q = lo + 1; q < hi; q++) {
        memset(x, 0, sizeof x);
        gen(dt, op, q, i, x);
        ref_op(op, dt, acc, x);
        memcpy(acc, x, es);
    }
}

static void cache_build(tern_datatype_t dt, tern_op_t op, size_t n)
{
    size_t es = tern_datatype_size(dt);
    free(cache.v);
    cache.v = NULL;
    unsigned char *v = malloc(n * es), acc[16];
    CHECK(v != NULL);
    for (size_t i = 0; i < n; i++) {
        reference(dt, op, 0, np, i, acc);
        memcpy(v + i * es, acc, es);
    }
    cache.dt = dt, cache.op = op, cache.np = np, cache.n = n, cache.v = v;
}

/* Check buf[0..count) == reduction over ranks [lo, hi) of elements first.. */
static void check_reduced(tern_datatype_t dt, tern_op_t op, int lo, int hi, size_t first,
                          size_t count, const char *buf, const char *what)
{
    size_t es = tern_datatype_size(dt);
    unsigned char acc[16];
    for (size_t i = 0; i < count; i++) {
        reference(dt, op, lo, hi, first + i, acc);
        if (!elem_eq(dt, acc, buf + i * es)) {
            uint64_t g = 0, w = 0;
            memcpy(&g, buf + i * es, es < 8 ? es : 8);
            memcpy(&w, acc, es < 8 ? es : 8);
            MP_FAIL("%s: element %zu (ranks %d..%d) differs: got 0x%" PRIx64
                    ", expected 0x%" PRIx64,
                    what, first + i, lo, hi - 1, g, w);
        }
    }
}

/* full = 0: allreduce and a reduce only (the sweep over every op and datatype). */
static void t_reductions(tern_comm_t c, tern_datatype_t dt, tern_op_t op, size_t n, int full)
{
    size_t es = tern_datatype_size(dt);
    const char *dn = dt_name(dt), *on = op_name(op);
    char *in = xalloc(n * es), *out = xalloc(n * es);
    if (!full) {
        int root = np - 1;
        MP_WHERE("allreduce %s %s count %zu (rank %d of %d)", on, dn, n, me, np);
        fill_input(dt, op, me, 0, n, in);
        CALL(tern_allreduce(in, out, n, dt, op, c), tern_iallreduce(in, out, n, dt, op, c, &rq_));
        check_reduced(dt, op, 0, np, 0, n, out, mp_where);
        MP_WHERE("reduce %s %s count %zu root %d (rank %d of %d)", on, dn, n, root, me, np);
        memset(out, 0xee, n * es);
        CALL(tern_reduce(in, out, n, dt, op, root, c),
             tern_ireduce(in, out, n, dt, op, root, c, &rq_));
        if (me == root) check_reduced(dt, op, 0, np, 0, n, out, mp_where);
        CHECK_GUARD(out, n * es, "%s", mp_where);
        free(in);
        free(out);
        return;
    }
    if (n > 1000) cache_build(dt, op, n);

    for (int ip = 0; ip < 2; ip++) {
        MP_WHERE("allreduce %s %s count %zu in-place %d (rank %d of %d)", on, dn, n, ip, me, np);
        fill_input(dt, op, me, 0, n, ip ? out : in);
        const void *sb = ip ? TERN_IN_PLACE : in;
        CALL(tern_allreduce(sb, out, n, dt, op, c), tern_iallreduce(sb, out, n, dt, op, c, &rq_));
        check_reduced(dt, op, 0, np, 0, n, out, mp_where);
        CHECK_GUARD(out, n * es, "%s", mp_where);

        MP_WHERE("scan %s %s count %zu in-place %d (rank %d of %d)", on, dn, n, ip, me, np);
        fill_input(dt, op, me, 0, n, ip ? out : in);
        CALL(tern_scan(sb, out, n, dt, op, c), tern_iscan(sb, out, n, dt, op, c, &rq_));
        check_reduced(dt, op, 0, me + 1, 0, n, out, mp_where);

        MP_WHERE("exscan %s %s count %zu in-place %d (rank %d of %d)", on, dn, n, ip, me, np);
        fill_input(dt, op, me, 0, n, ip ? out : in);
        if (!ip) memset(out, 0x5a, n * es);
        CALL(tern_exscan(sb, out, n, dt, op, c), tern_iexscan(sb, out, n, dt, op, c, &rq_));
        if (me > 0)
            check_reduced(dt, op, 0, me, 0, n, out, mp_where);
        else if (ip)
            check_reduced(dt, op, 0, 1, 0, n, out, mp_where); /* untouched: still my input */
        else
            for (size_t i = 0; i < n * es; i++)
                CHECKF((unsigned char)out[i] == 0x5a, "%s: rank 0 rbuf byte %zu changed", mp_where,
                       i);
        CHECK_GUARD(out, n * es, "%s", mp_where);
    }
    free(in);
    free(out);

    for (int root = 0; root < np; root++) {
        if (n > 1000 && root != 0 && root != np - 1) continue; /* big: first and last root */
        int ip = root % 2;
        MP_WHERE("reduce %s %s count %zu root %d in-place %d (rank %d of %d)", on, dn, n, root, ip,
                 me, np);
        in = xalloc(n * es);
        out = xalloc(n * es);
        const void *sb = in;
        if (ip && me == root) {
            fill_input(dt, op, me, 0, n, out);
            sb = TERN_IN_PLACE;
        } else {
            fill_input(dt, op, me, 0, n, in);
        }
        CALL(tern_reduce(sb, out, n, dt, op, root, c),
             tern_ireduce(sb, out, n, dt, op, root, c, &rq_));
        if (me == root) check_reduced(dt, op, 0, np, 0, n, out, mp_where);
        CHECK_GUARD(out, n * es, "%s", mp_where);
        free(in);
        free(out);
    }

    /* Big vectors: the whole input of reduce_scatter is n (still above its threshold). */
    if (n > 1000) n /= (size_t)np;
    for (int ip = 0; ip < 2; ip++) {
        MP_WHERE("reduce_scatter_block %s %s count %zu in-place %d (rank %d of %d)", on, dn, n, ip,
                 me, np);
        size_t total = n * (size_t)np;
        in = xalloc(total * es);
        out = xalloc(ip ? total * es : n * es);
        fill_input(dt, op, me, 0, total, ip ? out : in);
        const void *sb = ip ? TERN_IN_PLACE : in;
        CALL(tern_reduce_scatter_block(sb, out, n, dt, op, c),
             tern_ireduce_scatter_block(sb, out, n, dt, op, c, &rq_));
        check_reduced(dt, op, 0, np, (size_t)me * n, n, out, mp_where);
        CHECK_GUARD(out, (ip ? total : n) * es, "%s", mp_where);
        free(in);
        free(out);

        MP_WHERE("reduce_scatter %s %s count %zu in-place %d (rank %d of %d)", on, dn, n, ip, me,
                 np);
        size_t counts[16], first = 0;
        total = 0;
        for (int q = 0; q < np; q++) {
            counts[q] = vsize(n, q, 1);
            if (q < me) first += counts[q];
            total += counts[q];
        }
        in = xalloc(total * es);
        out = xalloc(ip ? total * es : counts[me] * es);
        fill_input(dt, op, me, 0, total, ip ? out : in);
        sb = ip ? TERN_IN_PLACE : in;
        CALL(tern_reduce_scatter(sb, out, counts, dt, op, c),
             tern_ireduce_scatter(sb, out, counts, dt, op, c, &rq_));
        check_reduced(dt, op, 0, np, first, counts[me], out, mp_where);
        CHECK_GUARD(out, (ip ? total : counts[me]) * es, "%s", mp_where);
        free(in);
        free(out);
    }
}

static int op_valid(tern_op_t op, tern_datatype_t dt)
{
    if (op == TERN_MINLOC || op == TERN_MAXLOC) return dt >= TERN_FLOAT_INT;
    if (dt >= TERN_FLOAT_INT) return 0;
    if (op >= TERN_LAND) return is_int(dt);
    return 1;
}

static void suite(tern_comm_t c, const char *name, int with_big)
{
    CHECK_OK(tern_comm_rank(c, &me));
    CHECK_OK(tern_comm_size(c, &np));
    double t0 = mp_now();
    MP_WHERE("barrier on %s", name);
    CALL(tern_barrier(c), tern_ibarrier(c, &rq_));

    const size_t sizes[] = {0, 1, 13, 777};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        t_bcast(c, sizes[k]);
        t_gather(c, sizes[k]);
        t_scatter(c, sizes[k]);
        t_allgather(c, sizes[k]);
        t_alltoall(c, sizes[k]);
    }
    if (with_big) {
        t_bcast(c, 600 << 10); /* > every bcast threshold (512 KiB) */
        t_gather(c, 70 << 10); /* root buffer > 64 KiB */
        t_scatter(c, 70 << 10);
        t_allgather(c, 90 << 10); /* result > 80 KiB */
        t_alltoall(c, 20 << 10);  /* block > 256 B */
    }
    double t1 = mp_now();

    /* Every valid (op, datatype) through allreduce and reduce... */
    for (int dt = 0; dt < TERN_DATATYPE_COUNT; dt++)
        for (int op = 0; op < TERN_OP_BUILTIN_COUNT; op++)
            if (op_valid(op, dt)) t_reductions(c, dt, op, 7, 0);
    /* ...and a representative few through every reduction, every root, every size. */
    static const struct {
        tern_datatype_t dt;
        int op; /* -1: the user op */
    } few[] = {{TERN_INT32, TERN_SUM}, {TERN_DOUBLE, TERN_PROD},      {TERN_UINT8, TERN_BXOR},
               {TERN_INT16, TERN_LOR}, {TERN_FLOAT_INT, TERN_MINLOC}, {TERN_UINT64, -1}};
    const size_t counts[] = {0, 1, 7, 300};
    for (size_t f = 0; f < sizeof few / sizeof few[0]; f++)
        for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
            t_reductions(c, few[f].dt, few[f].op < 0 ? matop : (tern_op_t)few[f].op, counts[k], 1);
    free(cache.v);
    cache.v = NULL;
    if (with_big) {
        /* 8-byte elements: > the 1 MiB allreduce and 512 KiB reduce_scatter thresholds. */
        t_reductions(c, TERN_INT64, TERN_SUM, 140000, 1);
        t_reductions(c, TERN_UINT64, matop, 3000, 1); /* > 2 KiB; ring needs commutative */
        t_reductions(c, TERN_DOUBLE_INT, TERN_MAXLOC, 5000, 1);
    }
    MP_WHERE("barrier at the end on %s", name);
    CHECK_OK(tern_barrier(c));
    if (me == 0)
        printf("coll_ops on %s (%d ranks): data movement %.2f s, reductions %.2f s\n", name, np,
               t1 - t0, mp_now() - t1);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    big = mp_env_int("COLL_BIG", 1);
    CHECK_OK(tern_op_create(matop_fn, 0, &matop));

    suite(TERN_COMM_WORLD, "world", big);

    /* A split communicator (halves, ranks reversed) while the world has a non-blocking
     * allreduce in flight. */
    int wr = tern_rank(), wn = tern_size();
    tern_comm_t half = TERN_COMM_NULL;
    MP_WHERE("split");
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, wr % 2, wn - wr, &half));
    int64_t x = wr + 1, sum = -1;
    tern_request_t wreq;
    CHECK_OK(tern_iallreduce(&x, &sum, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD, &wreq));
    suite(half, wr % 2 ? "odd half" : "even half", 0);
    MP_WHERE("world allreduce overlapping the split suite");
    CHECK_OK(tern_wait(&wreq, NULL));
    CHECK_EQ_INT((int)sum, wn * (wn + 1) / 2);
    CHECK_OK(tern_comm_free(&half));

    /* Integer sums and products that overflow wrap modulo 2^bits, as in MPICH and Open
     * MPI (C leaves signed overflow undefined: UBSan checks the library here). */
    MP_WHERE("overflowing integer sums and products");
    int32_t big32 = INT32_MAX, s32 = 0;
    CHECK_OK(tern_allreduce(&big32, &s32, 1, TERN_INT32, TERN_SUM, TERN_COMM_WORLD));
    CHECK_EQ_INT(s32, (int32_t)((uint32_t)INT32_MAX * (uint32_t)wn));
    int64_t big64 = INT64_MAX, s64 = 0;
    CHECK_OK(tern_allreduce(&big64, &s64, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD));
    CHECK(s64 == (int64_t)((uint64_t)INT64_MAX * (uint64_t)wn));
    uint16_t m16 = 65535, p16 = 0; /* 65535^n mod 2^16: 1 for even n, 65535 for odd */
    CHECK_OK(tern_allreduce(&m16, &p16, 1, TERN_UINT16, TERN_PROD, TERN_COMM_WORLD));
    CHECK_EQ_INT(p16, wn % 2 ? 65535 : 1);
    int32_t m32 = -65536, p32 = 0; /* (-2^16)^n: 0 mod 2^32 from n = 2 on */
    CHECK_OK(tern_allreduce(&m32, &p32, 1, TERN_INT32, TERN_PROD, TERN_COMM_WORLD));
    CHECK_EQ_INT(p32, wn == 1 ? -65536 : 0);

    CHECK_OK(tern_op_free(&matop));
    CHECK(matop == TERN_OP_NULL);
    CHECK_OK(tern_finalize());
    return 0;
}

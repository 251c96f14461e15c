/*
 * coll_hier.c - barrier, bcast, reduce and allreduce checked exactly on a communicator
 * that may span nodes: the hierarchical path of src/coll/coll_hier.c when it does (the
 * network-namespace "nodes" of tests/multihost/netns_test.sh, case hier), the flat ones
 * on one node. Every root, sizes that take the shared region inside a node and sizes
 * that do not, in place and not; int64 sums and maxima; doubles holding integers (so a
 * sum in any order is exact); a non-commutative operation (which must stay flat and
 * rank-ordered); the same on a split communicator (even and odd world ranks) and on its
 * duplicate.
 */
#include "mp_check.h"

/* 2x2 matrices of uint16 packed in a uint64, multiplied: order-sensitive. */
static uint64_t matmul(uint64_t x, uint64_t y)
{
    uint16_t a = (uint16_t)x, b = (uint16_t)(x >> 16), c = (uint16_t)(x >> 32),
             d = (uint16_t)(x >> 48);
    uint16_t e = (uint16_t)y, f = (uint16_t)(y >> 16), g = (uint16_t)(y >> 32),
             h = (uint16_t)(y >> 48);
    uint64_t r0 = (uint16_t)(a * e + b * g), r1 = (uint16_t)(a * f + b * h),
             r2 = (uint16_t)(c * e + d * g), r3 = (uint16_t)(c * f + d * h);
    return r0 | r1 << 16 | r2 << 32 | r3 << 48;
}

static void mat_op(const void *in, void *inout, size_t count, tern_datatype_t dt)
{
    (void)dt;
    const uint64_t *x = in;
    uint64_t *y = inout;
    for (size_t i = 0; i < count; i++)
        y[i] = matmul(x[i], y[i]);
}

static uint64_t mat_of(int rank, size_t i)
{
    uint64_t s = (uint64_t)rank * 7919 + i * 31;
    return (s % 5 + 1) | (s % 3) << 16 | (s % 7) << 32 | 1ull << 48;
}

static int64_t val(int rank, size_t i, int round)
{
    return (int64_t)rank * 1000003 + (int64_t)i * 17 + round;
}

static void check_comm(tern_comm_t comm, const char *name, tern_op_t mat, int rounds)
{
    int p, me;
    CHECK_OK(tern_comm_size(comm, &p));
    CHECK_OK(tern_comm_rank(comm, &me));
    static const size_t counts[] = {1, 700, 9000}; /* 8 B .. 72 KB */
    size_t maxc = 9000;
    int64_t *in = malloc(maxc * 8), *out = malloc(maxc * 8);
    double *din = malloc(maxc * sizeof(double)), *dout = malloc(maxc * sizeof(double));
    uint64_t *min = malloc(maxc * 8), *mout = malloc(maxc * 8);
    CHECK(in && out && din && dout && min && mout);
    for (int round = 0; round < rounds; round++) {
        MP_WHERE("%s round %d barrier", name, round);
        CHECK_OK(tern_barrier(comm));
        for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
            size_t n = counts[ci];
            /* Every root on small communicators; else the first two (a leader and not),
             * the middle and the last (tcp between namespaces is slow on 2 cores). */
            for (int ri = 0; ri < (p <= 4 ? p : 4); ri++) {
                int root = p <= 4 ? ri : ri < 2 ? ri : ri == 2 ? p / 2 : p - 1;
                MP_WHERE("%s round %d bcast n %zu root %d", name, round, n, root);
                for (size_t i = 0; i < n; i++)
                    out[i] = me == root ? val(root, i, round) : -1;
                CHECK_OK(tern_bcast(out, n * 8, root, comm));
                for (size_t i = 0; i < n; i++)
                    CHECKF(out[i] == val(root, i, round), "bcast [%zu] %" PRId64, i, out[i]);

                MP_WHERE("%s round %d reduce n %zu root %d", name, round, n, root);
                int inplace = (round + root) % 2 && me == root;
                for (size_t i = 0; i < n; i++) {
                    in[i] = val(me, i, round);
                    out[i] = inplace ? in[i] : -1;
                }
                CHECK_OK(tern_reduce(inplace ? TERN_IN_PLACE : in, out, n, TERN_INT64, TERN_SUM,
                                     root, comm));
                if (me == root)
                    for (size_t i = 0; i < n; i++) {
                        int64_t want = 0;
                        for (int r = 0; r < p; r++)
                            want += val(r, i, round);
                        CHECKF(out[i] == want, "reduce [%zu] %" PRId64 " want %" PRId64, i, out[i],
                               want);
                    }
            }
            MP_WHERE("%s round %d allreduce n %zu", name, round, n);
            int inplace = round % 2;
            for (size_t i = 0; i < n; i++) {
                in[i] = val(me, i, round);
                out[i] = inplace ? in[i] : -1;
                din[i] = (double)(me + 1) * (double)(i % 1000 + 1);
                dout[i] = inplace ? din[i] : -1;
                min[i] = mat_of(me, i);
            }
            CHECK_OK(
                tern_allreduce(inplace ? TERN_IN_PLACE : in, out, n, TERN_INT64, TERN_SUM, comm));
            for (size_t i = 0; i < n; i++) {
                int64_t want = 0;
                for (int r = 0; r < p; r++)
                    want += val(r, i, round);
                CHECKF(out[i] == want, "allreduce sum [%zu] %" PRId64 " want %" PRId64, i, out[i],
                       want);
            }
            for (size_t i = 0; i < n; i++)
                in[i] = val(me, i, round) * ((me + (int)i) % 3 - 1);
            CHECK_OK(tern_allreduce(in, out, n, TERN_INT64, TERN_MAX, comm));
            for (size_t i = 0; i < n; i++) {
                int64_t want = INT64_MIN;
                for (int r = 0; r < p; r++) {
                    int64_t v = val(r, i, round) * ((r + (int)i) % 3 - 1);
                    if (v > want) want = v;
                }
                CHECKF(out[i] == want, "allreduce max [%zu] %" PRId64 " want %" PRId64, i, out[i],
                       want);
            }
            /* Integer-valued doubles: every partial sum is exact, so any order agrees. */
            CHECK_OK(tern_allreduce(inplace ? TERN_IN_PLACE : din, dout, n, TERN_DOUBLE, TERN_SUM,
                                    comm));
            for (size_t i = 0; i < n; i++) {
                double want = (double)p * (p + 1) / 2 * (double)(i % 1000 + 1);
                CHECKF(dout[i] == want, "allreduce double [%zu] %.1f want %.1f", i, dout[i], want);
            }
            /* Non-commutative: rank order, whatever the layout. */
            CHECK_OK(tern_allreduce(min, mout, n, TERN_UINT64, mat, comm));
            for (size_t i = 0; i < n; i++) {
                uint64_t want = mat_of(p - 1, i);
                for (int r = p - 2; r >= 0; r--)
                    want = matmul(mat_of(r, i), want);
                CHECKF(mout[i] == want, "allreduce non-commutative [%zu]", i);
            }
        }
    }
    free(in);
    free(out);
    free(din);
    free(dout);
    free(min);
    free(mout);
}

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    int me = tern_rank(), p = tern_size();
    tern_op_t mat;
    CHECK_OK(tern_op_create(mat_op, 0, &mat));
    check_comm(TERN_COMM_WORLD, "world", mat, 2);
    tern_comm_t half, dup;
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, me % 2, me, &half));
    check_comm(half, "half", mat, 2);
    CHECK_OK(tern_comm_dup(half, &dup));
    check_comm(dup, "dup", mat, 1);
    CHECK_OK(tern_comm_free(&dup));
    CHECK_OK(tern_comm_free(&half));
    /* World again after the sub-communicators went: its own still work. */
    check_comm(TERN_COMM_WORLD, "world again", mat, 1);
    CHECK_OK(tern_op_free(&mat));
    if (me == 0) printf("coll_hier: ok on %d ranks\n", p);
    return tern_finalize() == TERN_OK ? 0 : 1;
}

/*
 * coll_shm.c - a long random sequence of small blocking collectives, the kind the
 * shared-memory fast path (src/coll/coll_shm.c) serves, checked exactly on every rank.
 *
 * Every rank draws the same sequence from one seed: barrier, bcast, reduce or allreduce,
 * a root, a size (up to 8 KiB, the default TERN_COLL_SHM_MAX, and a little beyond so the
 * message path takes over mid-sequence), in place or not. Back-to-back calls with
 * changing roots are what would expose a rank rewriting its buffer while another still
 * reads it. Reductions use a non-commutative 2x2 integer matrix product, which only
 * gives the reference result when contributions are combined in rank order. Between
 * calls, non-blocking collectives (which take the message path) and a collective on a
 * split communicator run too, so the two paths and two regions interleave.
 */
#include "mp_check.h"

#define ROUNDS   3000
#define MAX_ELEM (9 * 1024 / 8) /* 2x2 matrices of uint16 packed in a uint64 */

/* [a b; c d] = a | b<<16 | c<<32 | d<<48; wrapping uint16 arithmetic, order-sensitive. */
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

static uint64_t contrib(int rank, size_t i, int round)
{
    uint64_t s = (uint64_t)rank * 7919 + i * 31 + (uint64_t)round * 131;
    return (s % 5 + 1) | (s % 3) << 16 | (s % 7) << 32 | 1ull << 48;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    int p = tern_size(), me = mp_rank;
    tern_op_t op;
    CHECK_OK(tern_op_create(mat_op, 0, &op));
    tern_comm_t half;
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, me % 2, p - me, &half));
    int hp;
    CHECK_OK(tern_comm_size(half, &hp));

    uint64_t *in = malloc(MAX_ELEM * 8), *out = malloc(MAX_ELEM * 8), *want = malloc(MAX_ELEM * 8);
    unsigned char *bb = malloc(9 * 1024), *big = malloc((size_t)p * 9 * 1024),
                  *big2 = malloc((size_t)p * 9 * 1024);
    CHECK(in && out && want && bb && big && big2);
    int nshm_sized = 0;
    /* Large jobs (the tree of flags past TERN_COLL_SHM_FLAT_MAX) run fewer rounds. */
    const char *rv = getenv("COLL_SHM_ROUNDS");
    int rounds = rv && atoi(rv) > 0 ? atoi(rv) : ROUNDS;

    for (int round = 0; round < rounds; round++) {
        int kind = (int)(next() % 8), root = (int)(next() % (uint64_t)p);
        size_t n = (size_t)(next() % MAX_ELEM) + 1; /* matrices */
        if (next() % 4 == 0) n = (size_t)(next() % 8) + 1;
        int inplace = (int)(next() % 2);
        if (n * 8 <= 8192) nshm_sized++;
        MP_WHERE("round %d kind %d root %d n %zu inplace %d", round, kind, root, n, inplace);
        switch (kind) {
        case 0:
            CHECK_OK(tern_barrier(TERN_COMM_WORLD));
            break;
        case 1: {
            size_t len = n * 8;
            for (size_t i = 0; i < len; i++)
                bb[i] = me == root ? (unsigned char)(i * 13 + (size_t)round) : 0xee;
            CHECK_OK(tern_bcast(bb, len, root, TERN_COMM_WORLD));
            for (size_t i = 0; i < len; i++)
                if (bb[i] != (unsigned char)(i * 13 + (size_t)round))
                    MP_FAIL("bcast byte %zu is %u", i, bb[i]);
            break;
        }
        case 2:
        case 3: {
            for (size_t i = 0; i < n; i++) {
                in[i] = contrib(me, i, round);
                want[i] = contrib(p - 1, i, round);
                for (int r = p - 2; r >= 0; r--)
                    want[i] = matmul(contrib(r, i, round), want[i]);
            }
            int rc;
            if (kind == 2) {
                if (inplace && me == root) {
                    memcpy(out, in, n * 8);
                    rc = tern_reduce(TERN_IN_PLACE, out, n, TERN_UINT64, op, root, TERN_COMM_WORLD);
                } else {
                    rc = tern_reduce(in, out, n, TERN_UINT64, op, root, TERN_COMM_WORLD);
                }
                CHECK_OK(rc);
                if (me == root)
                    for (size_t i = 0; i < n; i++)
                        if (out[i] != want[i]) MP_FAIL("reduce element %zu wrong", i);
            } else {
                if (inplace) {
                    memcpy(out, in, n * 8);
                    rc = tern_allreduce(TERN_IN_PLACE, out, n, TERN_UINT64, op, TERN_COMM_WORLD);
                } else {
                    rc = tern_allreduce(in, out, n, TERN_UINT64, op, TERN_COMM_WORLD);
                }
                CHECK_OK(rc);
                for (size_t i = 0; i < n; i++)
                    if (out[i] != want[i]) MP_FAIL("allreduce element %zu wrong", i);
            }
            break;
        }
        case 4:                                 /* gather */
        case 5:                                 /* scatter */
        case 6:                                 /* allgather */
        case 7: {                               /* alltoall */
            size_t b = (n * 8) / (size_t)p + 1; /* block per rank: totals around 8 KiB */
            size_t all = b * (size_t)p;
#define BYTE_OF(src, dst, i) ((unsigned char)((src)*37 + (dst)*11 + (i)*3 + round))
            for (int d = 0; d < p; d++)
                for (size_t i = 0; i < b; i++) /* my block for rank d */
                    big[(size_t)d * b + i] = BYTE_OF(me, d, i);
            memset(big2, 0xee, all);
            if (kind == 4 || kind == 6) {
                const unsigned char *mine = big + (size_t)me * b; /* my block: BYTE_OF(me, me, i) */
                if (inplace && (kind == 6 || me == root)) {
                    memcpy(big2 + (size_t)me * b, mine, b);
                    CHECK_OK(kind == 4 ? tern_gather(TERN_IN_PLACE, b, big2, root, TERN_COMM_WORLD)
                                       : tern_allgather(TERN_IN_PLACE, big2, b, TERN_COMM_WORLD));
                } else {
                    CHECK_OK(kind == 4 ? tern_gather(mine, b, big2, root, TERN_COMM_WORLD)
                                       : tern_allgather(mine, big2, b, TERN_COMM_WORLD));
                }
                if (kind == 6 || me == root)
                    for (int src = 0; src < p; src++)
                        for (size_t i = 0; i < b; i++)
                            if (big2[(size_t)src * b + i] != BYTE_OF(src, src, i))
                                MP_FAIL("gather/allgather block %d byte %zu", src, i);
            } else if (kind == 5) {
                unsigned char *got = big2 + (size_t)me * b;
                if (inplace && me == root) {
                    CHECK_OK(tern_scatter(big, TERN_IN_PLACE, b, root, TERN_COMM_WORLD));
                } else {
                    CHECK_OK(tern_scatter(big, got, b, root, TERN_COMM_WORLD));
                    for (size_t i = 0; i < b; i++)
                        if (got[i] != BYTE_OF(root, me, i)) MP_FAIL("scatter byte %zu", i);
                }
            } else {
                if (inplace) {
                    memcpy(big2, big, all);
                    CHECK_OK(tern_alltoall(TERN_IN_PLACE, big2, b, TERN_COMM_WORLD));
                } else {
                    CHECK_OK(tern_alltoall(big, big2, b, TERN_COMM_WORLD));
                }
                for (int src = 0; src < p; src++)
                    for (size_t i = 0; i < b; i++)
                        if (big2[(size_t)src * b + i] != BYTE_OF(src, me, i))
                            MP_FAIL("alltoall block from %d byte %zu", src, i);
            }
            break;
        }
        }
        if (round % 50 == 7) {
            /* A non-blocking collective (message path) around a blocking one. */
            int64_t x = me + round, sum = 0;
            tern_request_t rq;
            CHECK_OK(tern_iallreduce(&x, &sum, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD, &rq));
            int64_t y = 1, ys = 0;
            CHECK_OK(tern_allreduce(&y, &ys, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD));
            CHECK_OK(tern_wait(&rq, NULL));
            CHECK_EQ_INT(sum, (int64_t)p * (p - 1) / 2 + (int64_t)p * round);
            CHECK_EQ_INT(ys, p);
        }
        if (round % 20 == 3) {
            int64_t x = 1, s = 0;
            CHECK_OK(tern_allreduce(&x, &s, 1, TERN_INT64, TERN_SUM, half));
            CHECK_EQ_INT(s, hp);
            CHECK_OK(tern_barrier(half));
        }
    }
    CHECK(nshm_sized > rounds / 2);
    CHECK_OK(tern_comm_free(&half));
    CHECK_OK(tern_op_free(&op));
    free(in);
    free(out);
    free(want);
    free(bb);
    free(big);
    free(big2);
    if (me == 0) printf("coll_shm: %d rounds ok on %d ranks\n", rounds, p);
    return tern_finalize() == TERN_OK ? 0 : 1;
}

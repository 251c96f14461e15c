/*
 * coll_runahead.c - small rooted collectives that run ahead of their readers through the
 * shared region's ring of lines (src/coll/coll_shm.c, TERN_COLL_SHM_LINES), checked byte
 * for byte on every rank.
 *
 * 1. Run-ahead is real: after one barrier, the root of 8-byte bcasts makes LINES - 1 of
 *    them while rank 1 is blocked in a receive that only the root's message after those
 *    calls satisfies. A root that waited for its slowest reader before LINES calls would
 *    never send that message (the test then times out). Rank 1 then reads every one.
 * 2. Long runs of back-to-back bcasts from each root in turn, sizes 0 - 48 bytes (the data
 *    rides in the lines) with every 7th call past them (the big buffers), each call's
 *    bytes a function of the call, and runs of reduces whose non-roots leave at once.
 *
 * COLL_RUNAHEAD_MISMATCH=1 gives rank 1 another TERN_COLL_SHM_LINES than the others
 * (through its environment before tern_init): the members cannot share a region and
 * every call must still be right (by messages).
 */
#include "mp_check.h"

#define RUN     600 /* calls per root in part 2 */
#define MAXDATA 200

/* The ring depth for a TERN_COLL_SHM_LINES value (other values are refused at init). */
static long lines_of(const char *v)
{
    return v ? atol(v) : 256;
}

static unsigned char byte_of(long call, size_t i)
{
    return (unsigned char)(call * 131 + (long)i * 7 + 1);
}

static void sum_op(const void *in, void *inout, size_t count, tern_datatype_t dt)
{
    (void)dt;
    const uint64_t *x = in;
    uint64_t *y = inout;
    for (size_t i = 0; i < count; i++)
        y[i] += x[i];
}

int main(int argc, char **argv)
{
    /* Every rank makes the same calls: the count comes from the job's value. */
    long lines = lines_of(getenv("TERN_COLL_SHM_LINES"));
    const char *mm = getenv("COLL_RUNAHEAD_MISMATCH");
    const char *pr = getenv("PMI_RANK");
    if (mm && atoi(mm) && pr && atoi(pr) == 1) setenv("TERN_COLL_SHM_LINES", "16", 1);

    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    int p = tern_size(), me = mp_rank;
    CHECK(p >= 2);
    unsigned char buf[MAXDATA];
    long call = 0;

    /* 1. The root runs LINES - 1 calls ahead of rank 1, which waits for its word. */
    CHECK_OK(tern_barrier(TERN_COMM_WORLD)); /* the region is made here */
    long ahead = lines - 1;
    if (me == 1) {
        long word = 0;
        tern_status_t st;
        MP_WHERE("rank 1 waiting for the root's word");
        CHECK_OK(tern_recv(&word, sizeof word, 0, 7, TERN_COMM_WORLD, &st));
        CHECKF(word == ahead, "word %ld", word);
    }
    for (long k = 0; k < ahead; k++, call++) {
        MP_WHERE("part 1 call %ld", k);
        for (size_t i = 0; i < 8; i++)
            buf[i] = me == 0 ? byte_of(call, i) : 0xee;
        CHECK_OK(tern_bcast(buf, 8, 0, TERN_COMM_WORLD));
        for (size_t i = 0; i < 8; i++)
            CHECKF(buf[i] == byte_of(call, i), "part 1 call %ld byte %zu is %u", k, i, buf[i]);
    }
    if (me == 0) CHECK_OK(tern_send(&ahead, sizeof ahead, 1, 7, TERN_COMM_WORLD));

    /* 2. Back-to-back runs from every root: bcasts, then reduces. */
    uint64_t in[4], out[4];
    tern_op_t op;
    CHECK_OK(tern_op_create(sum_op, 1, &op));
    for (int root = 0; root < p; root++) {
        for (long k = 0; k < RUN; k++, call++) {
            size_t n = k % 7 == 6 ? 49 + (size_t)(k % (MAXDATA - 48)) : (size_t)(k % 49);
            MP_WHERE("part 2 root %d call %ld n %zu", root, k, n);
            for (size_t i = 0; i < n; i++)
                buf[i] = me == root ? byte_of(call, i) : 0xee;
            CHECK_OK(tern_bcast(buf, n, root, TERN_COMM_WORLD));
            for (size_t i = 0; i < n; i++)
                CHECKF(buf[i] == byte_of(call, i), "bcast byte %zu is %u", i, buf[i]);
        }
        for (long k = 0; k < RUN / 4; k++, call++) {
            MP_WHERE("part 2 root %d reduce %ld", root, k);
            for (int i = 0; i < 4; i++) {
                in[i] = (uint64_t)(call * 1000 + me * 10 + i);
                out[i] = 0xdead;
            }
            CHECK_OK(tern_reduce(in, out, 4, TERN_UINT64, op, root, TERN_COMM_WORLD));
            if (me == root)
                for (int i = 0; i < 4; i++) {
                    uint64_t want = (uint64_t)p * (uint64_t)(call * 1000 + i) +
                                    (uint64_t)(10 * p * (p - 1) / 2);
                    CHECKF(out[i] == want, "reduce element %d is %llu, want %llu", i,
                           (unsigned long long)out[i], (unsigned long long)want);
                }
        }
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_op_free(&op));
    CHECK_OK(tern_finalize());
    return 0;
}

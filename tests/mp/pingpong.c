/*
 * pingpong.c - every message size from 0 B to 64 MiB between pairs of ranks (0-1, 2-3,
 * ...), checked byte for byte on both sides.
 *
 * Sizes: 0..3, every power of two from 4 B to 64 MiB with its neighbours -1 and +1, and
 * odd sizes around the protocol boundaries. Each message is patterned by (size,
 * iteration, sending rank), so a stale buffer, a misplaced block or the peer's own data
 * is caught. The receive buffer has a guard after the message that must stay untouched.
 * The iterations alternate between blocking and non-blocking calls and between a
 * receive buffer of exactly the message size and a larger one. An odd rank out (and a
 * 1-rank job) ping-pongs with itself.
 */
#include "mp_check.h"

#define MAX_SIZE ((size_t)64 << 20)

static size_t sizes[256];
static int nsizes;

static void add_size(size_t s)
{
    if (s > MAX_SIZE) return;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] == s) return;
    sizes[nsizes++] = s;
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

static void make_sizes(void)
{
    for (size_t s = 0; s < 4; s++)
        add_size(s);
    for (size_t p = 4; p <= MAX_SIZE; p *= 2) {
        add_size(p - 1);
        add_size(p);
        add_size(p + 1);
    }
    /* Odd sizes: a cache line minus its header, eager cells, prime-ish sizes. */
    static const size_t odd[] = {5,           7,
                                 13,          40,
                                 48,          56,
                                 100,         1000,
                                 1500,        4000,
                                 10000,       12345,
                                 24576,       40000,
                                 49153,       99999,
                                 123457,      1000000,
                                 3 << 20 | 7, 10000019,
                                 33554435,    MAX_SIZE - 4093};
    for (size_t i = 0; i < sizeof odd / sizeof odd[0]; i++)
        add_size(odd[i]);
    qsort(sizes, (size_t)nsizes, sizeof sizes[0], cmp_size);
}

static int iterations(size_t size)
{
    if (size >= ((size_t)16 << 20)) return 1;
    if (size >= ((size_t)1 << 20)) return 2;
    if (size >= 65536) return 3;
    return 6;
}

static uint64_t seed_of(size_t size, int iter, int rank)
{
    return mp_seed(size, (uint64_t)iter, (uint64_t)rank, 0x9150);
}

/* Receive `size` bytes from `src` into buf by the method of this iteration, and check. */
static void recv_check(uint8_t *buf, size_t size, int src, int tag, int iter, int v, int me)
{
    /* Odd variants offer a receive area larger than the message. */
    size_t cap = (v & 1) ? size + 40 : size;
    tern_status_t st = mp_status_poison();
    mp_guard_set(buf, cap);
    if (cap > size) memset(buf + size, 0x5a, cap - size);
    if ((v / 2) & 1) {
        tern_request_t req = TERN_REQUEST_NULL;
        CHECK_OK(tern_irecv(buf, cap, src, tag, TERN_COMM_WORLD, &req));
        CHECK(req != TERN_REQUEST_NULL);
        CHECK_OK(tern_wait(&req, &st));
        CHECK(req == TERN_REQUEST_NULL);
    } else {
        CHECK_OK(tern_recv(buf, cap, src, tag, TERN_COMM_WORLD, &st));
    }
    CHECK_STATUS(st, src, tag, size);
    CHECK_PATTERN(buf, size, seed_of(size, iter, src), "rank %d got from rank %d, iter %d", me, src,
                  iter);
    for (size_t i = size; i < cap; i++)
        CHECKF(buf[i] == 0x5a,
               "byte %zu of the receive area, past the %zu-byte message, "
               "was changed to 0x%02x",
               i, size, buf[i]);
    CHECK_GUARD(buf, cap, "receive of %zu bytes from rank %d", size, src);
}

static void send_it(const uint8_t *buf, size_t size, int dest, int tag, int v)
{
    if ((v / 2) & 1) {
        tern_request_t req = TERN_REQUEST_NULL;
        CHECK_OK(tern_isend(buf, size, dest, tag, TERN_COMM_WORLD, &req));
        CHECK_OK(tern_wait(&req, NULL));
        CHECK(req == TERN_REQUEST_NULL);
    } else {
        CHECK_OK(tern_send(buf, size, dest, tag, TERN_COMM_WORLD));
    }
}

/* Ping-pong with myself: the receive must be posted (or the send non-blocking) first,
 * since tern_send is synchronous. */
static void self_exchange(uint8_t *sbuf, uint8_t *rbuf, size_t size, int me, int tag, int iter,
                          int v)
{
    tern_request_t rreq = TERN_REQUEST_NULL, sreq = TERN_REQUEST_NULL;
    tern_status_t st = mp_status_poison();
    mp_fill(sbuf, size, seed_of(size, iter, me));
    mp_guard_set(rbuf, size);
    if (v & 1) {
        CHECK_OK(tern_irecv(rbuf, size, me, tag, TERN_COMM_WORLD, &rreq));
        CHECK_OK(tern_send(sbuf, size, me, tag, TERN_COMM_WORLD));
        CHECK_OK(tern_wait(&rreq, &st));
    } else {
        CHECK_OK(tern_isend(sbuf, size, me, tag, TERN_COMM_WORLD, &sreq));
        CHECK_OK(tern_recv(rbuf, size, me, tag, TERN_COMM_WORLD, &st));
        CHECK_OK(tern_wait(&sreq, NULL));
    }
    CHECK_STATUS(st, me, tag, size);
    CHECK_PATTERN(rbuf, size, seed_of(size, iter, me), "self exchange of rank %d, iter %d", me,
                  iter);
    CHECK_GUARD(rbuf, size, "self receive of %zu bytes", size);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = mp_rank, np = tern_size();
    make_sizes();
    size_t max = MAX_SIZE;
    const char *lim = getenv("MP_PINGPONG_MAX");
    if (lim && *lim) max = (size_t)strtoull(lim, NULL, 0);

    int peer = (me ^ 1) < np ? (me ^ 1) : me;
    uint8_t *buf = mp_malloc(max + 64 + MP_GUARD_LEN);
    uint8_t *rbuf = peer == me ? mp_malloc(max + 64 + MP_GUARD_LEN) : NULL;
    double t0 = mp_now();

    for (int si = 0; si < nsizes && sizes[si] <= max; si++) {
        size_t size = sizes[si];
        int tag = si % 97;
        for (int iter = 0; iter < iterations(size); iter++) {
            /* The variant picks blocking or non-blocking calls and the receive area;
             * consecutive sizes cycle through all four combinations. */
            int v = si + iter;
            MP_WHERE("size %zu iter %d variant %d peer %d", size, iter, v, peer);
            if (peer == me) {
                self_exchange(buf, rbuf, size, me, tag, iter, v);
            } else if (me < peer) {
                mp_fill(buf, size, seed_of(size, iter, me));
                send_it(buf, size, peer, tag, v);
                recv_check(buf, size, peer, tag, iter, v, me);
            } else {
                recv_check(buf, size, peer, tag, iter, v, me);
                mp_fill(buf, size, seed_of(size, iter, me));
                send_it(buf, size, peer, tag, v);
            }
        }
    }
    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0)
        printf("pingpong: %d ranks, %d sizes up to %zu bytes, %.2f s\n", np, nsizes, max,
               mp_now() - t0);
    free(buf);
    free(rbuf);
    CHECK_OK(tern_finalize());
    return 0;
}

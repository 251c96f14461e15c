/*
 * shm_sizes.c - every message size from 0 B to 9 KiB, and bands of +-20 bytes around the
 * eager limit (the default 10 KiB and TERN_SHM_EAGER_MAX when set) and around 16, 32 and
 * 64 KiB, between pairs of ranks (0-1, 2-3, ...), checked byte for byte.
 *
 * The shared-memory transport carries a frame in one slot, in consecutive slots, in a
 * cell or in a big cell, and the core sends it eagerly or by rendezvous (single copy)
 * depending on its size (TERN_SHM_EAGER_MAX, TERN_SHM_CELL_SIZE): an off-by-one at any
 * of those boundaries, or at the ring's wrap, shows up at one size only. So every size
 * is tried, not just powers of two:
 *   1. ping-pong: each size once, blocking send and receive, the reply patterned by the
 *      other rank;
 *   2. streaming: windows of WINDOW non-blocking sends of consecutive sizes (the
 *      receiver posts half of its receives before the sends start and half after, so
 *      both the expected and the unexpected paths run), all to one tag, checked in
 *      order;
 *   3. a long one-way stream: LONG_COUNT messages of 8-64 KiB in windows of LONG_WINDOW,
 *      where the core picks eager or rendezvous per message as the receiver's timings
 *      advise and sends a burst the other way every 256 (core/adapt.h), so both protocols
 *      follow each other within one stream, checked byte for byte and in order.
 * The receive area is larger than the message and carries a guard after it. An odd rank
 * out (and a 1-rank job) exchanges with itself.
 */
#include "mp_check.h"

#define MAX_DENSE   ((size_t)9 * 1024)
#define MAX_SIZE    ((size_t)64 * 1024 + 64)
#define WINDOW      16
#define BAND        20
#define LONG_COUNT  1280
#define LONG_WINDOW 32

static size_t *sizes;
static int nsizes;

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return x < y ? -1 : x > y;
}

/* TERN_SHM_EAGER_MAX as the library reads it (a number with an optional k suffix), or 0. */
static size_t eager_max_env(void)
{
    const char *v = getenv("TERN_SHM_EAGER_MAX");
    if (v == NULL || *v == '\0') return 0;
    char *end;
    size_t n = (size_t)strtoull(v, &end, 0);
    return *end == 'k' || *end == 'K' ? n * 1024 : n;
}

static void make_sizes(void)
{
    sizes = mp_malloc((MAX_DENSE + 1 + 8 * (2 * BAND + 1)) * sizeof *sizes);
    for (size_t s = 0; s <= MAX_DENSE; s++)
        sizes[nsizes++] = s;
    /* Beyond the dense range: around the default eager limit (10 KiB) and the one this
     * run sets, around each power of two, and around a cell less the frame's header
     * (16 bytes) where a frame moves from a cell to a big cell. */
    size_t centres[] = {10240,      eager_max_env(), 16384 - 16, 16384,
                        32768 - 16, 32768,           65536 - 16, 65536};
    int nc = (int)(sizeof centres / sizeof centres[0]);
    qsort(centres, (size_t)nc, sizeof centres[0], cmp_size);
    for (int c = 0; c < nc; c++)
        for (size_t s = centres[c] - BAND; s <= centres[c] + BAND; s++)
            if (centres[c] > MAX_DENSE && s > sizes[nsizes - 1] && s <= MAX_SIZE)
                sizes[nsizes++] = s;
}

static uint64_t seed_of(size_t size, int phase, int rank)
{
    return mp_seed(size, (uint64_t)phase, (uint64_t)rank, 0x5123);
}

static void check_recv(const uint8_t *buf, size_t cap, const tern_status_t *st, size_t size,
                       int src, int tag, int phase)
{
    CHECK_STATUS(*st, src, tag, size);
    CHECK_PATTERN(buf, size, seed_of(size, phase, src), "%zu bytes from rank %d, phase %d", size,
                  src, phase);
    for (size_t i = size; i < cap; i++)
        CHECKF(buf[i] == 0x5a, "byte %zu past a %zu-byte message was changed to 0x%02x", i, size,
               buf[i]);
    CHECK_GUARD(buf, cap, "receive of %zu bytes from rank %d", size, src);
}

/* Post a receive of up to size + 24 bytes into buf, its bytes past size set to 0x5a and a
 * guard after it (check_recv checks both). */
static void post_recv(uint8_t *buf, size_t size, int peer, int tag, tern_request_t *r)
{
    memset(buf + size, 0x5a, 24);
    mp_guard_set(buf, size + 24);
    CHECK_OK(tern_irecv(buf, size + 24, peer, tag, TERN_COMM_WORLD, r));
}

/* Phase 1: one round trip per size; the lower rank sends first. */
static void pingpong(uint8_t *sbuf, uint8_t *rbuf, int me, int peer)
{
    for (int i = 0; i < nsizes; i++) {
        size_t size = sizes[i], cap = size + 24;
        int tag = i % 31;
        tern_status_t st = mp_status_poison();
        MP_WHERE("ping-pong of %zu bytes with rank %d", size, peer);
        mp_fill(sbuf, size, seed_of(size, 1, me));
        memset(rbuf + size, 0x5a, cap - size);
        mp_guard_set(rbuf, cap);
        if (peer == me) {
            tern_request_t r = TERN_REQUEST_NULL;
            CHECK_OK(tern_irecv(rbuf, cap, me, tag, TERN_COMM_WORLD, &r));
            CHECK_OK(tern_send(sbuf, size, me, tag, TERN_COMM_WORLD));
            CHECK_OK(tern_wait(&r, &st));
        } else if (me < peer) {
            CHECK_OK(tern_send(sbuf, size, peer, tag, TERN_COMM_WORLD));
            CHECK_OK(tern_recv(rbuf, cap, peer, tag, TERN_COMM_WORLD, &st));
        } else {
            CHECK_OK(tern_recv(rbuf, cap, peer, tag, TERN_COMM_WORLD, &st));
            CHECK_OK(tern_send(sbuf, size, peer, tag, TERN_COMM_WORLD));
        }
        check_recv(rbuf, cap, &st, size, peer, tag, 1);
    }
}

/* Phase 2: the lower rank streams windows of consecutive sizes to the higher one. */
static void stream(uint8_t *sbuf, uint8_t *rbuf, int me, int peer)
{
    int sender = me <= peer, receiver = me >= peer;
    size_t slot = MAX_SIZE + 24 + MP_GUARD_LEN;
    for (int w = 0; w < nsizes; w += WINDOW) {
        int n = nsizes - w < WINDOW ? nsizes - w : WINDOW;
        tern_request_t rr[WINDOW], sr[WINDOW];
        MP_WHERE("stream window of %zu..%zu bytes with rank %d", sizes[w], sizes[w + n - 1], peer);
        if (receiver)
            for (int k = 0; k < n / 2; k++)
                post_recv(rbuf + k * slot, sizes[w + k], peer, 7, &rr[k]);
        /* Both sides meet before the sends, so the receives above are posted and the
         * ones below come after the messages (unexpected). */
        if (peer != me) {
            char token = 0;
            if (sender) {
                CHECK_OK(tern_recv(&token, 1, peer, 8, TERN_COMM_WORLD, NULL));
            } else {
                CHECK_OK(tern_send(&token, 1, peer, 8, TERN_COMM_WORLD));
            }
        }
        if (sender)
            for (int k = 0; k < n; k++) {
                size_t size = sizes[w + k];
                mp_fill(sbuf + k * slot, size, seed_of(size, 2, me));
                CHECK_OK(tern_isend(sbuf + k * slot, size, peer, 7, TERN_COMM_WORLD, &sr[k]));
            }
        if (receiver) {
            for (int k = n / 2; k < n; k++)
                post_recv(rbuf + k * slot, sizes[w + k], peer, 7, &rr[k]);
            for (int k = 0; k < n; k++) {
                tern_status_t st = mp_status_poison();
                CHECK_OK(tern_wait(&rr[k], &st));
                check_recv(rbuf + k * slot, sizes[w + k] + 24, &st, sizes[w + k], peer, 7, 2);
            }
        }
        if (sender)
            for (int k = 0; k < n; k++)
                CHECK_OK(tern_wait(&sr[k], NULL));
    }
}

/* Phase 3's sizes: mostly 32-64 KiB (adaptive only in a one-way stream), some 8-32 KiB. */
static size_t long_size(int i)
{
    return i % 5 == 4 ? 8193 + (size_t)(i * 7919) % (24 * 1024)
                      : 32769 + (size_t)(i * 104729) % 32768;
}

/* Phase 3: the lower rank streams LONG_COUNT messages to the higher one, which posts the
 * receives of even windows before the sends and of odd ones after (unexpected). */
static void long_stream(uint8_t *sbuf, uint8_t *rbuf, int me, int peer)
{
    int sender = me <= peer, receiver = me >= peer;
    size_t slot = MAX_SIZE + 24 + MP_GUARD_LEN;
    for (int w = 0; w < LONG_COUNT; w += LONG_WINDOW) {
        tern_request_t rr[LONG_WINDOW], sr[LONG_WINDOW];
        int early = (w / LONG_WINDOW) % 2 == 0;
        MP_WHERE("one-way stream, messages %d..%d to rank %d", w, w + LONG_WINDOW - 1, peer);
        for (int k = 0; receiver && early && k < LONG_WINDOW; k++)
            post_recv(rbuf + k * slot, long_size(w + k), peer, 9, &rr[k]);
        for (int k = 0; sender && k < LONG_WINDOW; k++) {
            size_t size = long_size(w + k);
            mp_fill(sbuf + k * slot, size, seed_of(size, 3 + w + k, me));
            CHECK_OK(tern_isend(sbuf + k * slot, size, peer, 9, TERN_COMM_WORLD, &sr[k]));
        }
        for (int k = 0; receiver && !early && k < LONG_WINDOW; k++)
            post_recv(rbuf + k * slot, long_size(w + k), peer, 9, &rr[k]);
        if (receiver)
            for (int k = 0; k < LONG_WINDOW; k++) {
                tern_status_t st = mp_status_poison();
                size_t size = long_size(w + k);
                CHECK_OK(tern_wait(&rr[k], &st));
                check_recv(rbuf + k * slot, size + 24, &st, size, peer, 9, 3 + w + k);
            }
        if (sender)
            for (int k = 0; k < LONG_WINDOW; k++)
                CHECK_OK(tern_wait(&sr[k], NULL));
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = mp_rank, np = tern_size();
    int peer = (me ^ 1) < np ? (me ^ 1) : me;
    make_sizes();
    size_t slot = MAX_SIZE + 24 + MP_GUARD_LEN;
    uint8_t *sbuf = mp_malloc(LONG_WINDOW * slot), *rbuf = mp_malloc(LONG_WINDOW * slot);
    double t0 = mp_now();
    pingpong(sbuf, rbuf, me, peer);
    stream(sbuf, rbuf, me, peer);
    long_stream(sbuf, rbuf, me, peer);
    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0)
        printf("shm_sizes: %d ranks, %d sizes from 0 to %zu bytes, %.2f s\n", np, nsizes,
               sizes[nsizes - 1], mp_now() - t0);
    free(sizes);
    free(sbuf);
    free(rbuf);
    CHECK_OK(tern_finalize());
    return 0;
}

/*
 * shm_rndv.c - large rendezvous messages on shared memory, pulled or streamed as the
 * receiver's timings advise (core/adapt.h, core_rv_*), checked byte for byte. Pairs of
 * ranks (0-1, 2-3, ...); an odd rank out exchanges with itself.
 *
 * Above TERN_SHM_RNDV_ADAPT_MIN (1 MiB) a message alone is pulled (process_vm_readv,
 * shared with the sender) or streamed through cells after a CTS: per size class the first
 * one is pulled, the next CORE_RV_KEEP streamed, and then the cheaper way goes on with a
 * run of the other every so often. So every size here moves both ways within a few round
 * trips:
 *   1. ping-pong: ROUNDS round trips at each of several sizes in different classes (the
 *      last, above 8 MiB, shares the last class), every message its own pattern;
 *   2. a window of WINDOW messages one way (receives posted ahead: always pulled);
 *   3. both ways at once (my own sends in flight: always pulled);
 *   4. a receive shorter than the message: TERN_ERR_TRUNCATE, the part that fits intact;
 *   5. ping-pong again, the classes' state carried over from the phases between.
 * Every receive area carries a guard after the message.
 */
#include "mp_check.h"

#define ROUNDS 12
#define WINDOW 4
#define TAG    17

static const size_t sizes[] = {((size_t)1 << 20) + 1,    ((size_t)3 << 19) + 3,
                               (size_t)2 << 20,          ((size_t)3 << 20) + 5,
                               ((size_t)4 << 20) + 4093, ((size_t)9 << 20) + 11};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXSZ  (((size_t)9 << 20) + 11)
#define SLOT   (((size_t)4 << 20) + 4096 + MP_GUARD_LEN) /* phases 2-3: 4 MiB messages */
#define WSIZE  (((size_t)4 << 20) + 4093)

static uint64_t seed_of(int from, size_t n, int phase, int k)
{
    return mp_seed((uint64_t)from, n, (uint64_t)phase, (uint64_t)k);
}

/* Receive one n-byte message from peer into rbuf (cap bytes offered), checked. */
static void recv_checked(uint8_t *rbuf, size_t n, int peer, uint64_t seed)
{
    tern_status_t st;
    memset(rbuf, 0x5a, n);
    mp_guard_set(rbuf, n);
    CHECK_OK(tern_recv(rbuf, n + MP_GUARD_LEN, peer, TAG, TERN_COMM_WORLD, &st));
    CHECK_STATUS(st, peer, TAG, n);
    CHECK_PATTERN(rbuf, n, seed, "%zu bytes from rank %d", n, peer);
    CHECK_GUARD(rbuf, n, "%zu bytes from rank %d", n, peer);
}

static void pingpong(uint8_t *sbuf, uint8_t *rbuf, int me, int peer, int phase)
{
    int lo = me < peer ? me : peer;
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        for (int r = 0; r < ROUNDS; r++) {
            MP_WHERE("ping-pong (phase %d), %zu bytes, round %d", phase, n, r);
            for (int leg = 0; leg < 2; leg++) {
                int from = (leg == 0) == (lo == me) ? me : peer;
                tern_request_t rq = TERN_REQUEST_NULL;
                if (me == from) {
                    mp_fill(sbuf, n, seed_of(me, n, phase, 2 * r + leg));
                    CHECK_OK(tern_isend(sbuf, n, peer, TAG, TERN_COMM_WORLD, &rq));
                }
                if (me != from || peer == me)
                    recv_checked(rbuf, n, peer, seed_of(peer, n, phase, 2 * r + leg));
                if (me == from) CHECK_OK(tern_wait(&rq, NULL));
            }
        }
    }
}

/* A 2 MiB + 1 message into a receive of 1.5 MiB: truncated, the part that fits intact. */
static void truncated(uint8_t *sbuf, uint8_t *rbuf, int me, int peer)
{
    size_t n = ((size_t)2 << 20) + 1, cap = (size_t)3 << 19;
    int lo = me < peer ? me : peer;
    for (int r = 0; r < 2; r++) {
        MP_WHERE("truncated receive, round %d", r);
        tern_request_t rq = TERN_REQUEST_NULL;
        if (me == lo) {
            mp_fill(sbuf, n, seed_of(me, n, 4, r));
            CHECK_OK(tern_isend(sbuf, n, peer, TAG, TERN_COMM_WORLD, &rq));
        }
        if (me != lo || peer == me) {
            tern_status_t st;
            memset(rbuf, 0x5a, cap + MP_GUARD_LEN);
            mp_guard_set(rbuf, cap);
            CHECK_ERR(tern_recv(rbuf, cap, peer, TAG, TERN_COMM_WORLD, &st), TERN_ERR_TRUNCATE);
            CHECK_PATTERN(rbuf, cap, seed_of(peer, n, 4, r), "the part that fits");
            CHECK_GUARD(rbuf, cap, "truncated receive");
        }
        if (me == lo) CHECK_OK(tern_wait(&rq, NULL));
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = tern_rank(), np = tern_size();
    int peer = (me ^ 1) < np ? me ^ 1 : me;
    _Static_assert(WINDOW * SLOT >= MAXSZ + MP_GUARD_LEN, "a window's slots hold any message");
    uint8_t *sbuf = mp_malloc(WINDOW * SLOT), *rbuf = mp_malloc(WINDOW * SLOT);
    int lo = me < peer ? me : peer;

    double t0 = mp_now();
    pingpong(sbuf, rbuf, me, peer, 1);
    for (int r = 0; r < 3; r++) {
        MP_WHERE("one-way window %d", r);
        mp_window(sbuf, rbuf, SLOT, WINDOW, WSIZE, me, peer, lo, 0, 2 * r, TAG);
        mp_window(sbuf, rbuf, SLOT, WINDOW, WSIZE, me, peer, lo == me ? peer : me, 0, 2 * r + 1,
                  TAG);
        MP_WHERE("both ways %d", r);
        mp_window(sbuf, rbuf, SLOT, WINDOW, WSIZE, me, peer, lo, 1, 100 + r, TAG);
    }
    truncated(sbuf, rbuf, me, peer);
    pingpong(sbuf, rbuf, me, peer, 5);

    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0)
        printf("shm_rndv: %d ranks, %zu sizes from %zu to %zu bytes, %.2f s\n", np, NSIZES,
               sizes[0], sizes[NSIZES - 1], mp_now() - t0);
    free(sbuf);
    free(rbuf);
    CHECK_OK(tern_finalize());
    return 0;
}

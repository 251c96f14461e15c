/*
 * shm_coop.c - cooperative single copies on shared memory (receiver and sender share the
 * pull of a rendezvous message), at the sizes where they start and where their pieces
 * change, in the three patterns that steer them, checked byte for byte. Pairs of ranks
 * (0-1, 2-3, ...); an odd rank out exchanges with itself.
 *
 * From TERN_SHM_COOP_MIN the receiver offers the sender pieces of the copy; a copy shorter
 * than two TERN_SHM_COOP_CHUNK pieces is cut in two halves, a longer one in chunks with a
 * short last one. A sender with traffic of its own declines, and the receiver then makes
 * the next 1, 2, 4 .. 64 pulls from that peer plain ones. So:
 *   1. one-way streams: windows of WINDOW non-blocking sends, each message its own
 *      pattern, the sender idle in its wait (it helps);
 *   2. both ways at once: the same windows in both directions (offers declined, the
 *      back-off, then plain pulls), every message checked;
 *   3. one-way again (offers resume), then a ping-pong of every size;
 *   4. a send whose buffer cannot be read: it fails with TERN_ERR_FAULT and the next
 *      message of the same size arrives intact (a fault inside a cooperative copy is the
 *      sender's fault, as one in a plain pull).
 * Every receive area carries a guard after the message.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "mp_check.h"

#define WINDOW 6
#define ROUNDS 3
#define TAG    11

/* Around 32 KiB (the default TERN_SHM_COOP_MIN and the largest adaptive size), 48 KiB
 * (TERN_SHM_COOP_MIN=48k), 64 KiB (the stream-eager limit) and 256 KiB (TERN_SHM_COOP_MIN=256k: two
 * 128 KiB chunks), up to 644 KiB: halves below 256 KiB and 128 KiB chunks from there with the
 * defaults, halves only with 512 KiB chunks, 4 KiB chunks on the TERN_SHM_COOP_CHUNK=4k line. */
static const size_t sizes[] = {8191,   8195,   12289,  20483,  32765,  32768,  32771,  49149,
                               49152,  49155,  65535,  65536,  65539,  98309,  131069, 131072,
                               131075, 196613, 262141, 262144, 262147, 300007, 524291, 659459};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXSZ  ((size_t)659459)
#define SLOT   (MAXSZ + MP_GUARD_LEN)

static uint64_t seed_of(int from, size_t n, int round, int k)
{
    return mp_seed((uint64_t)from, n, (uint64_t)round, (uint64_t)k);
}

static void streams(uint8_t *sbuf, uint8_t *rbuf, int me, int peer, int both, int round0)
{
    int lo = me < peer ? me : peer;
    for (size_t i = 0; i < NSIZES; i++)
        for (int r = 0; r < ROUNDS; r++) {
            MP_WHERE("%s, %zu bytes, round %d", both ? "both ways" : "one way", sizes[i], r);
            mp_window(sbuf, rbuf, SLOT, WINDOW, sizes[i], me, peer, lo, both, round0 + r, TAG);
            /* the other direction too, so that every rank receives one-way streams */
            if (!both)
                mp_window(sbuf, rbuf, SLOT, WINDOW, sizes[i], me, peer, lo == me ? peer : me, 0,
                          round0 + r, TAG);
        }
}

static void pingpong(uint8_t *sbuf, uint8_t *rbuf, int me, int peer)
{
    for (size_t i = 0; i < NSIZES; i++) {
        size_t n = sizes[i];
        MP_WHERE("ping-pong, %zu bytes", n);
        for (int leg = 0; leg < 2; leg++) {
            int from = leg == 0 ? (me < peer ? me : peer) : (me < peer ? peer : me);
            tern_request_t rq = TERN_REQUEST_NULL;
            if (me == from) {
                mp_fill(sbuf, n, seed_of(me, n, 99, leg));
                CHECK_OK(tern_isend(sbuf, n, peer, TAG, TERN_COMM_WORLD, &rq));
            }
            if (me != from || peer == me) {
                tern_status_t st;
                memset(rbuf, 0x5a, n);
                mp_guard_set(rbuf, n);
                CHECK_OK(tern_recv(rbuf, n + MP_GUARD_LEN, peer, TAG, TERN_COMM_WORLD, &st));
                CHECK_STATUS(st, peer, TAG, n);
                CHECK_PATTERN(rbuf, n, seed_of(peer, n, 99, leg), "ping-pong leg %d", leg);
                CHECK_GUARD(rbuf, n, "ping-pong leg %d", leg);
            }
            if (me == from) CHECK_OK(tern_wait(&rq, NULL));
        }
    }
}

/* A send from unreadable memory fails at the sender only; the next one arrives intact. */
static void badbuf(uint8_t *sbuf, uint8_t *rbuf, int me, int peer)
{
    if (peer == me) return;
    size_t n = 300007;
    void *bad = mmap(NULL, n, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(bad != MAP_FAILED);
    for (int k = 0; k < 2; k++) {
        MP_WHERE("unreadable send %d", k);
        if (me < peer) {
            CHECK_ERR(tern_send(bad, n, peer, TAG, TERN_COMM_WORLD), TERN_ERR_FAULT);
            mp_fill(sbuf, n, seed_of(me, n, 7, k));
            CHECK_OK(tern_send(sbuf, n, peer, TAG, TERN_COMM_WORLD));
        } else {
            tern_status_t st;
            CHECK_OK(tern_recv(rbuf, n, peer, TAG, TERN_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, TAG, n);
            CHECK_OK(tern_recv(rbuf, n, peer, TAG, TERN_COMM_WORLD, &st));
            CHECK_PATTERN(rbuf, n, seed_of(peer, n, 7, k), "the send after an unreadable one");
        }
    }
    munmap(bad, n);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = mp_rank, np = tern_size();
    int peer = (me ^ 1) < np ? (me ^ 1) : me;
    uint8_t *sbuf = mp_malloc(WINDOW * SLOT), *rbuf = mp_malloc(WINDOW * SLOT);
    double t0 = mp_now();
    streams(sbuf, rbuf, me, peer, 0, 0);
    streams(sbuf, rbuf, me, peer, 1, 10);
    streams(sbuf, rbuf, me, peer, 0, 20);
    pingpong(sbuf, rbuf, me, peer);
    badbuf(sbuf, rbuf, me, peer);
    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0)
        printf("shm_coop: %d ranks, %zu sizes from %zu to %zu bytes, %.2f s\n", np, NSIZES,
               sizes[0], sizes[NSIZES - 1], mp_now() - t0);
    free(sbuf);
    free(rbuf);
    CHECK_OK(tern_finalize());
    return 0;
}

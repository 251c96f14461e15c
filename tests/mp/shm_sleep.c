/*
 * shm_sleep.c - no frame is missed by a rank that goes to sleep just as it is sent.
 *
 * Run with TERN_SPIN_COUNT=0 TERN_YIELD_COUNT=0 (every wait sleeps on its doorbell at
 * its first empty poll) and TERN_SLEEP_MS=60000, so that a sender that publishes a frame
 * while the receiver is on its way to sleep, and does not ring its bell (a lost
 * wake-up), leaves the receiver asleep for a minute: the round trip check below (and
 * the test's timeout) catches it. With the default TERN_SHM_MEMBARRIER_MAX the senders
 * publish without a fence and the sleepers call membarrier (transport/shm/shm.c,
 * shm_asym_setup); with TERN_SHM_MEMBARRIER_MAX=0 both fence.
 *
 * Pairs 0-1, 2-3, ... (an odd rank out only joins the barriers):
 *  - ROUNDS round trips of 0 B-4000 B messages (one slot, several slots, a cell), the
 *    initiator waiting 0-4 us before each send so that its publish falls at every point
 *    of the peer's way to sleep; every message checked byte for byte, and no round trip
 *    may take SLOW_S seconds;
 *  - BURSTS bursts of BURST non-blocking sends of 1 B-1 KiB that the peer receives one
 *    by one (sleeping whenever it has caught up), then acknowledges.
 */
#include "mp_check.h"

#define ROUNDS    20000
#define BURSTS    400
#define BURST     32
#define SLOW_S    5.0
#define TAG_PP    11
#define TAG_BURST 12
#define TAG_ACK   13

static const size_t pp_sizes[] = {0, 8, 56, 57, 200, 1024, 4000};
#define NPP      (sizeof pp_sizes / sizeof pp_sizes[0])
#define MAX_SIZE 4000

static void spin_us(double us)
{
    double t0 = mp_now();
    while ((mp_now() - t0) * 1e6 < us)
        ;
}

static void pingpong(int me, int peer, int initiator)
{
    uint8_t *b = mp_malloc(MAX_SIZE);
    double worst = 0;
    for (int i = 0; i < ROUNDS; i++) {
        size_t n = pp_sizes[i % NPP];
        uint64_t out = mp_seed(n, (uint64_t)i, (uint64_t)me, 1);
        uint64_t back = mp_seed(n, (uint64_t)i, (uint64_t)peer, 1);
        tern_status_t st = mp_status_poison();
        MP_WHERE("round trip %d of %zu bytes", i, n);
        if (initiator) {
            spin_us((double)(mp_mix64((uint64_t)i) % 41) / 10.0);
            double t0 = mp_now();
            mp_fill(b, n, out);
            CHECK_OK(tern_send(b, n, peer, TAG_PP, TERN_COMM_WORLD));
            CHECK_OK(tern_recv(b, MAX_SIZE, peer, TAG_PP, TERN_COMM_WORLD, &st));
            double dt = mp_now() - t0;
            if (dt > worst) worst = dt;
            CHECK_STATUS(st, peer, TAG_PP, n);
            CHECK_PATTERN(b, n, back, "reply %d", i);
        } else {
            CHECK_OK(tern_recv(b, MAX_SIZE, peer, TAG_PP, TERN_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, TAG_PP, n);
            CHECK_PATTERN(b, n, back, "message %d", i);
            mp_fill(b, n, out);
            CHECK_OK(tern_send(b, n, peer, TAG_PP, TERN_COMM_WORLD));
        }
    }
    CHECKF(worst < SLOW_S, "a round trip took %.3f s: a wake-up was lost", worst);
    free(b);
}

static void bursts(int me, int peer, int sender)
{
    uint8_t *b = mp_malloc((size_t)BURST * 1024);
    tern_request_t r[BURST];
    for (int k = 0; k < BURSTS; k++) {
        MP_WHERE("burst %d", k);
        tern_status_t st = mp_status_poison();
        uint32_t ack = 0;
        if (sender) {
            for (int j = 0; j < BURST; j++) {
                size_t n = 1 + (size_t)(mp_mix64((uint64_t)(k * BURST + j)) % 1024);
                mp_fill(b + (size_t)j * 1024, n,
                        mp_seed(n, (uint64_t)k, (uint64_t)j, (uint64_t)me));
                CHECK_OK(
                    tern_isend(b + (size_t)j * 1024, n, peer, TAG_BURST, TERN_COMM_WORLD, &r[j]));
            }
            CHECK_OK(tern_waitall(BURST, r, NULL));
            CHECK_OK(tern_recv(&ack, sizeof ack, peer, TAG_ACK, TERN_COMM_WORLD, &st));
            CHECK_STATUS(st, peer, TAG_ACK, sizeof ack);
            CHECK_EQ_INT((int)ack, k);
        } else {
            for (int j = 0; j < BURST; j++) {
                size_t n = 1 + (size_t)(mp_mix64((uint64_t)(k * BURST + j)) % 1024);
                CHECK_OK(tern_recv(b, 1024, peer, TAG_BURST, TERN_COMM_WORLD, &st));
                CHECK_STATUS(st, peer, TAG_BURST, n);
                CHECK_PATTERN(b, n, mp_seed(n, (uint64_t)k, (uint64_t)j, (uint64_t)peer),
                              "burst %d message %d", k, j);
            }
            ack = (uint32_t)k;
            CHECK_OK(tern_send(&ack, sizeof ack, peer, TAG_ACK, TERN_COMM_WORLD));
        }
    }
    free(b);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = tern_rank(), np = tern_size();
    int peer = me ^ 1;
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (peer < np) {
        pingpong(me, peer, me % 2 == 0);
        bursts(me, peer, me % 2 == 0);
        bursts(me, peer, me % 2 == 1);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_finalize());
    return 0;
}

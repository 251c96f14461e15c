/*
 * ofi_midsize.c - messages at the edges of ofi_rxm's eager limit and of the ofi
 * transport's frame, sent faster than the receiver takes them.
 *
 * Over tcp;ofi_rxm tern raises FI_OFI_RXM_EAGER_LIMIT to a whole frame
 * (TERN_OFI_RXM_EAGER), so 16 KiB-64 KiB frames are one eager message of rxm instead of
 * SAR segments; messages just above the frame go by RTS and a read. Rank 0 sends rank 1
 * MP_MID_ROUNDS rounds of sizes around 16 KiB (libfabric's own limit), 32 KiB and
 * 64 KiB (the frame, with and without room for tern's headers) and one above it, all
 * with tern_isend while rank 1 sleeps: more than the transport's 64 posted receive
 * buffers arrive before any is taken back, so rxm has to hold the rest as unexpected
 * messages in its own buffers. Rank 1 then receives them in order (tags count up) and
 * checks each byte for byte, with a guard after it; then the same exchange runs the
 * other way while rank 0 sleeps. Run with TERN_OFI_RXM_EAGER on and off, and with a
 * small TERN_OFI_FRAME (eager limit 16 KiB + 128 B): the same bytes must arrive.
 */
#include "mp_check.h"

static const size_t sizes[] = {1,     16000, 16383, 16384, 16385, 16512, 16600, 32768, 50000,
                               65400, 65472, 65536, 65537, 65600, 65664, 65700, 70000};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static uint64_t seed_of(int k, int dir)
{
    return mp_seed((uint64_t)k, 0x3d, (uint64_t)dir, 0);
}

/* One direction: `from` sends n messages while `to` sleeps, then `to` checks them. */
static void exchange(int me, int from, int n, uint8_t **bufs)
{
    if (me == from) {
        tern_request_t *reqs = mp_malloc((size_t)n * sizeof *reqs);
        for (int k = 0; k < n; k++) {
            size_t s = sizes[k % NSIZES];
            mp_fill(bufs[k], s, seed_of(k, from));
            MP_WHERE("isend %d of %zu B", k, s);
            reqs[k] = TERN_REQUEST_NULL;
            CHECK_OK(tern_isend(bufs[k], s, 1 - from, k, TERN_COMM_WORLD, &reqs[k]));
        }
        CHECK_OK(tern_waitall((size_t)n, reqs, NULL));
        free(reqs);
    } else {
        mp_sleep_ms(400); /* the sender is far ahead: the posted buffers run out */
        for (int k = 0; k < n; k++) {
            size_t s = sizes[k % NSIZES];
            tern_status_t st = mp_status_poison();
            mp_guard_set(bufs[k], s);
            MP_WHERE("recv %d of %zu B", k, s);
            CHECK_OK(tern_recv(bufs[k], s, from, TERN_ANY_TAG, TERN_COMM_WORLD, &st));
            CHECK_STATUS(st, from, k, s);
            CHECK_PATTERN(bufs[k], s, seed_of(k, from), "message %d of %zu B", k, s);
            CHECK_GUARD(bufs[k], s, "message %d", k);
        }
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    mp_watchdog(60);
    int me = tern_rank();
    CHECK(tern_size() == 2);
    int n = mp_env_int("MP_MID_ROUNDS", 6) * (int)NSIZES;
    uint8_t **bufs = mp_malloc((size_t)n * sizeof *bufs);
    for (int k = 0; k < n; k++)
        bufs[k] = mp_malloc(sizes[k % NSIZES] + MP_GUARD_LEN);
    exchange(me, 0, n, bufs);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    exchange(me, 1, n, bufs);
    for (int k = 0; k < n; k++)
        free(bufs[k]);
    free(bufs);
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", me);
    return 0;
}

/*
 * ofi_inject.c - frames at the edge of the ofi transport's inject size, and injected
 * frames still in the provider's hands when their sender finalizes.
 *
 * Rank 0 sends rank 1 MP_INJECT_ROUNDS rounds of every size from 0 to 96 B (under
 * tcp;ofi_rxm frames up to 40 B of payload go by fi_inject, larger ones with a send
 * completion, so each round crosses the edge in both directions), then some 100 KiB
 * messages (read by RTS), all with tern_isend; when those have been read, 200 more small
 * ones, and finalizes at once. Rank 1 receives late (it sleeps before the first message
 * and again before the last 200, while rank 0 closes) and checks every message byte for
 * byte, in order (tags count up). Run with TERN_OFI_INJECT
 * on and off: the same bytes must arrive.
 */
#include "mp_check.h"

#define MAXSMALL 96
#define BIG      100000
#define NBIG     4

static uint64_t seed_of(int k)
{
    return mp_seed((uint64_t)k, 0x1e, 0xc7, 0);
}

static size_t size_of(int k, int rounds)
{
    int nsmall = rounds * (MAXSMALL + 1);
    if (k < nsmall) return (size_t)(k % (MAXSMALL + 1));
    if (k < nsmall + NBIG) return BIG + (size_t)(k - nsmall);
    return (size_t)((k - nsmall - NBIG) * 7 % 64);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    mp_watchdog(60);
    int me = tern_rank();
    CHECK(tern_size() == 2);
    int rounds = mp_env_int("MP_INJECT_ROUNDS", 8);
    int n = rounds * (MAXSMALL + 1) + NBIG + 200;
    uint8_t **bufs = mp_malloc((size_t)n * sizeof *bufs);
    for (int k = 0; k < n; k++)
        bufs[k] = mp_malloc(size_of(k, rounds) + MP_GUARD_LEN);
    int tail = n - 200; /* the last 200 (small) go after the big ones are read */
    if (me == 0) {
        tern_request_t *reqs = mp_malloc((size_t)n * sizeof *reqs);
        for (int k = 0; k < n; k++) {
            size_t s = size_of(k, rounds);
            mp_fill(bufs[k], s, seed_of(k));
            MP_WHERE("isend %d of %zu B", k, s);
            reqs[k] = TERN_REQUEST_NULL;
            CHECK_OK(tern_isend(bufs[k], s, 1, k, TERN_COMM_WORLD, &reqs[k]));
            /* The big ones complete when rank 1 has read them; then the tail, sent
             * while rank 1 sleeps again, and finalize right away. */
            if (k == tail - 1) CHECK_OK(tern_waitall((size_t)tail, reqs, NULL));
        }
        CHECK_OK(tern_waitall((size_t)(n - tail), reqs + tail, NULL));
        free(reqs);
    } else {
        for (int k = 0; k < n; k++) {
            if (k == 0 || k == tail) mp_sleep_ms(300); /* rank 0 is ahead, or closing */
            size_t s = size_of(k, rounds);
            tern_status_t st = mp_status_poison();
            mp_guard_set(bufs[k], s);
            MP_WHERE("recv %d of %zu B", k, s);
            CHECK_OK(tern_recv(bufs[k], s, 0, TERN_ANY_TAG, TERN_COMM_WORLD, &st));
            CHECK_STATUS(st, 0, k, s);
            CHECK_PATTERN(bufs[k], s, seed_of(k), "message %d of %zu B", k, s);
            CHECK_GUARD(bufs[k], s, "message %d", k);
        }
    }
    for (int k = 0; k < n; k++)
        free(bufs[k]);
    free(bufs);
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", me);
    return 0;
}

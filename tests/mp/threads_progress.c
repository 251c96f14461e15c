/*
 * threads_progress.c - the progress thread moves data while the program does not call
 * tern at all.
 *
 * Rank 0 posts a receive of 8 MiB (rendezvous on every transport), then sleeps 2 s
 * without calling tern. Rank 1 sends it and times its tern_wait. With
 * TERN_PROGRESS_THREAD=1 rank 0's progress thread answers the rendezvous and takes the
 * data, so the send completes long before rank 0 wakes (bound: 1.5 s; it takes tens of
 * milliseconds). Without it nothing on rank 0 can answer before it wakes, and the test
 * checks that too (the send takes at least the 2 s), so each mode's expectation is
 * tested. The data is checked byte for byte.
 */
#include "mp_check.h"

#define SIZE  ((size_t)8 << 20)
#define NAPMS 2000

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    CHECKF(tern_size() == 2, "needs 2 ranks");
    const char *pt = getenv("TERN_PROGRESS_THREAD");
    int on = pt && *pt == '1';
    unsigned char *buf = mp_malloc(SIZE);
    uint64_t seed = mp_seed(SIZE, 1, 2, 3);
    tern_request_t r;
    if (mp_rank == 0) {
        memset(buf, 0, SIZE);
        CHECK_OK(tern_irecv(buf, SIZE, 1, 5, TERN_COMM_WORLD, &r));
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));
        /* The last thing before the nap: an eager "go" that completes at once, so the
         * data's rendezvous cannot reach us before we stop calling tern. */
        int go = 1;
        tern_request_t g;
        CHECK_OK(tern_isend(&go, sizeof go, 1, 4, TERN_COMM_WORLD, &g));
        CHECK_OK(tern_wait(&g, NULL));
        mp_sleep_ms(NAPMS); /* no tern call meanwhile */
        tern_status_t st;
        CHECK_OK(tern_wait(&r, &st));
        CHECK_EQ_SIZE(st.bytes, SIZE);
        CHECK_PATTERN(buf, SIZE, seed, "8 MiB received while asleep");
    } else {
        mp_fill(buf, SIZE, seed);
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));
        int go = 0;
        CHECK_OK(tern_recv(&go, sizeof go, 0, 4, TERN_COMM_WORLD, NULL));
        double t0 = mp_now();
        CHECK_OK(tern_isend(buf, SIZE, 0, 5, TERN_COMM_WORLD, &r));
        CHECK_OK(tern_wait(&r, NULL));
        double ms = (mp_now() - t0) * 1e3;
        printf("threads_progress: progress thread %s: send of 8 MiB took %.1f ms while the "
               "receiver slept %d ms\n",
               on ? "on" : "off", ms, NAPMS);
        if (on)
            CHECKF(ms < 1500, "the send took %.1f ms: nothing progressed the receiver", ms);
        else
            CHECKF(ms >= NAPMS * 0.9, "the send took %.1f ms with no progress thread", ms);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(buf);
    CHECK_OK(tern_finalize());
    return 0;
}

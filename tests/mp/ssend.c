/*
 * ssend.c - tern_send and tern_issend are synchronous; tern_isend of a small message is
 * not.
 *
 * Rank 1 delays its receive by DELAY_MS after a barrier. It notes (CLOCK_MONOTONIC,
 * which all processes of a machine share) the moment just before it posts the receive
 * and sends that moment to rank 0 afterwards on another tag. Rank 0 checks:
 *  - tern_send returned after that moment;
 *  - tern_issend did not complete in any tern_test call before that moment (it is
 *    tested in a loop while rank 1 sleeps) and its completion came after it;
 *  - tern_isend of a small message completed (within a few tests, well before the
 *    delay is over) although no receive was posted yet.
 * Sizes: empty, small, eager, rendezvous and large. Other ranks only take part in the
 * barriers.
 */
#include "mp_check.h"

#define DELAY_MS 300
#define TAG_DATA 5
#define TAG_TIME 6

static int me;

static uint64_t seed_of(size_t size, int round)
{
    return mp_seed(size, (uint64_t)round, 0x55e, 0);
}

/* Rank 1: sleep, post the receive, report when it was posted. */
static void late_receiver(size_t size, int round, int use_irecv)
{
    uint8_t *b = mp_malloc(size + 1);
    mp_sleep_ms(DELAY_MS);
    tern_status_t st = mp_status_poison();
    double posted = mp_now();
    if (use_irecv) {
        tern_request_t r;
        CHECK_OK(tern_irecv(b, size, 0, TAG_DATA, TERN_COMM_WORLD, &r));
        CHECK_OK(tern_wait(&r, &st));
    } else {
        CHECK_OK(tern_recv(b, size, 0, TAG_DATA, TERN_COMM_WORLD, &st));
    }
    CHECK_STATUS(st, 0, TAG_DATA, size);
    CHECK_PATTERN(b, size, seed_of(size, round), "synchronous message");
    CHECK_OK(tern_send(&posted, sizeof posted, 0, TAG_TIME, TERN_COMM_WORLD));
    free(b);
}

static double posted_time(void)
{
    double t;
    tern_status_t st;
    CHECK_OK(tern_recv(&t, sizeof t, 1, TAG_TIME, TERN_COMM_WORLD, &st));
    CHECK_STATUS(st, 1, TAG_TIME, sizeof t);
    return t;
}

static void blocking_send(size_t size, int round)
{
    MP_WHERE("tern_send of %zu bytes, round %d", size, round);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0) {
        uint8_t *b = mp_malloc(size + 1);
        mp_fill(b, size, seed_of(size, round));
        CHECK_OK(tern_send(b, size, 1, TAG_DATA, TERN_COMM_WORLD));
        double t1 = mp_now();
        double posted = posted_time();
        CHECKF(t1 >= posted,
               "tern_send(%zu bytes) returned %.1f ms before the receiver posted its receive", size,
               (posted - t1) * 1e3);
        /* No bound on how long the send took: how late rank 0 leaves the barrier is the
         * scheduler's business (loaded, it can be most of the delay); the check above is
         * the exact one. */
        free(b);
    } else if (me == 1) {
        late_receiver(size, round, round & 1);
    }
}

static void issend_test(size_t size, int round)
{
    MP_WHERE("tern_issend of %zu bytes, round %d", size, round);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0) {
        uint8_t *b = mp_malloc(size + 1);
        mp_fill(b, size, seed_of(size, round));
        tern_request_t r = TERN_REQUEST_NULL;
        CHECK_OK(tern_issend(b, size, 1, TAG_DATA, TERN_COMM_WORLD, &r));
        int flag = 0, tests = 0;
        double done = 0;
        /* Test until it completes; remember when. */
        while (!flag) {
            tern_status_t st;
            CHECK_OK(tern_test(&r, &flag, &st));
            done = mp_now();
            tests++;
            if (!flag) usleep(200);
        }
        CHECK(r == TERN_REQUEST_NULL);
        double posted = posted_time();
        CHECKF(done >= posted,
               "tern_issend(%zu bytes) completed in tern_test (call %d) %.1f ms before the "
               "receiver posted its receive",
               size, tests, (posted - done) * 1e3);
        free(b);
    } else if (me == 1) {
        late_receiver(size, round, round & 1);
    }
}

static void isend_small(size_t size, int round)
{
    MP_WHERE("tern_isend of %zu bytes, round %d", size, round);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0) {
        uint8_t *b = mp_malloc(size + 1);
        mp_fill(b, size, seed_of(size, round));
        tern_request_t r = TERN_REQUEST_NULL;
        double t0 = mp_now();
        CHECK_OK(tern_isend(b, size, 1, TAG_DATA, TERN_COMM_WORLD, &r));
        int flag = 0, tests = 0;
        double done = t0;
        while (!flag && mp_now() - t0 < 5.0) {
            CHECK_OK(tern_test(&r, &flag, NULL));
            done = mp_now();
            tests++;
        }
        CHECKF(flag, "tern_isend(%zu bytes) did not complete in %d tests (%.1f ms)", size, tests,
               (done - t0) * 1e3);
        CHECK(r == TERN_REQUEST_NULL);
        /* Overwriting the buffer now must not change what rank 1 receives. */
        memset(b, 0xee, size);
        double posted = posted_time();
        CHECKF(done < posted,
               "tern_isend(%zu bytes) completed only %.1f ms after the receive was posted, "
               "not at once (%d tests)",
               size, (done - posted) * 1e3, tests);
        free(b);
    } else if (me == 1) {
        late_receiver(size, round, round & 1);
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    me = mp_rank;
    int np = tern_size();
    if (np < 2) {
        printf("ssend: needs 2 ranks\n");
        CHECK_OK(tern_finalize());
        return 0;
    }
    static const size_t sync_sizes[] = {0, 8, 1000, 16384, 100000, (size_t)8 << 20};
    int round = 0;
    for (size_t i = 0; i < sizeof sync_sizes / sizeof sync_sizes[0]; i++)
        blocking_send(sync_sizes[i], round++);
    static const size_t issend_sizes[] = {0, 8, 4000, (size_t)1 << 20};
    for (size_t i = 0; i < sizeof issend_sizes / sizeof issend_sizes[0]; i++)
        issend_test(issend_sizes[i], round++);
    /* Small enough to go eagerly even with TERN_SHM_EAGER_MAX=1k. */
    static const size_t small_sizes[] = {0, 8, 512};
    for (size_t i = 0; i < sizeof small_sizes / sizeof small_sizes[0]; i++)
        isend_small(small_sizes[i], round++);
    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_finalize());
    if (me == 0) printf("ssend: %d ranks ok\n", np);
    return 0;
}

/*
 * tcp_big.c - large messages go eagerly over tcp to a receiver that posts in time, and
 * by rendezvous again once it has not (core/proto.c, core_big_*; TERN_TCP_EAGER_POSTED_MAX).
 *
 * Rank 0 sends, rank 1 receives (2 ranks, tcp). What is checked, every message byte for
 * byte:
 *  1. After a few messages of SIZE whose receives were posted before they came (rank 1
 *     posts, says "ready", receives and acknowledges: a ping-pong), a tern_isend of SIZE completes
 * while rank 1 has posted no receive for it (it waits on another tag): it went eagerly, and rank 1,
 * whose progress read it, keeps it as unexpected until its receive comes.
 *  2. That message came unexpected, so rank 1 withdraws its advice: the next tern_isend
 *     of SIZE does not complete while rank 1 waits on the other tag (a rendezvous needs
 *     the receive), for HOLD_MS of tests; it completes once the receive is posted.
 *  3. Messages posted in time again bring the eager sends back (1. holds again).
 *  4. A synchronous send (tern_issend) that goes eagerly still completes only after the
 *     receive matched it.
 *  5. An eager message larger than the posted receive: TERN_ERR_TRUNCATE with the whole
 *     size in the status, the buffer's bytes the message's first, the guard untouched.
 * With TERN_TCP_EAGER_POSTED_MAX at or under TERN_TCP_EAGER_MAX (the feature off) checks
 * 1 and 3 expect the rendezvous instead (EXPECT_EAGER=0 in the test's environment).
 */
#include "mp_check.h"

#define SIZE      ((size_t)1 << 20)
#define TAG_BIG   1
#define TAG_GO    2
#define TAG_READY 3
#define TAG_ACK   4
#define HOLD_MS   200
#define EAGER_MS  20000 /* an eager send completes as soon as rank 1's progress reads it */

static int me;
static uint8_t *sbuf, *rbuf;

static uint64_t seed_of(int round)
{
    return mp_seed(SIZE, (uint64_t)round, 0xb16, 0);
}

/* Rank 0: wait for rank 1's "ready", then send message `round` of SIZE and wait for it. */
static void send_when_ready(int round)
{
    tern_status_t st;
    char c;
    CHECK_OK(tern_recv(&c, 1, 1, TAG_READY, TERN_COMM_WORLD, &st));
    mp_fill(sbuf, SIZE, seed_of(round));
    tern_request_t r;
    CHECK_OK(tern_isend(sbuf, SIZE, 1, TAG_BIG, TERN_COMM_WORLD, &r));
    CHECK_OK(tern_wait(&r, &st));
}

/* Rank 1: post a receive of cap bytes, then say "ready". */
static void post_then_ready(size_t cap, tern_request_t *r)
{
    CHECK_OK(tern_irecv(rbuf, cap, 0, TAG_BIG, TERN_COMM_WORLD, r));
    char c = 'r';
    CHECK_OK(tern_send(&c, 1, 0, TAG_READY, TERN_COMM_WORLD));
}

/* Messages whose receive is posted before they are sent, each acknowledged (a ping-pong). */
static void posted_in_time(int *round, int n)
{
    for (int i = 0; i < n; i++, (*round)++) {
        MP_WHERE("message %d posted in time", *round);
        tern_status_t st = mp_status_poison();
        char c = 'a';
        if (me == 0) {
            send_when_ready(*round);
            CHECK_OK(tern_recv(&c, 1, 1, TAG_ACK, TERN_COMM_WORLD, &st));
        } else {
            tern_request_t r;
            post_then_ready(SIZE, &r);
            CHECK_OK(tern_wait(&r, &st));
            CHECK_STATUS(st, 0, TAG_BIG, SIZE);
            CHECK_PATTERN(rbuf, SIZE, seed_of(*round), "message %d posted in time", *round);
            CHECK_OK(tern_send(&c, 1, 0, TAG_ACK, TERN_COMM_WORLD));
        }
    }
}

/* Tests send request r for up to ms milliseconds: did it complete? */
static int completes_within(tern_request_t *r, int ms)
{
    double end = mp_now() + ms * 1e-3;
    int flag = 0;
    tern_status_t st;
    while (!flag && mp_now() < end)
        CHECK_OK(tern_test(r, &flag, &st));
    return flag;
}

/*
 * One message of SIZE sent while rank 1 waits on TAG_GO with no receive posted for it:
 * rank 0 checks whether its send completed by then (`eager`: it must within EAGER_MS; else
 * it must not within HOLD_MS), then lets rank 1 post. `sync`: tern_issend, which must not
 * complete before that whatever the protocol.
 */
static void sent_unposted(int *round, int eager, int sync)
{
    MP_WHERE("message %d sent before its receive (%s, %s)", *round, eager ? "eager" : "rendezvous",
             sync ? "tern_issend" : "tern_isend");
    tern_status_t st = mp_status_poison();
    if (me == 0) {
        mp_fill(sbuf, SIZE, seed_of(*round));
        tern_request_t r;
        CHECK_OK(sync ? tern_issend(sbuf, SIZE, 1, TAG_BIG, TERN_COMM_WORLD, &r)
                      : tern_isend(sbuf, SIZE, 1, TAG_BIG, TERN_COMM_WORLD, &r));
        int done = completes_within(&r, eager && !sync ? EAGER_MS : HOLD_MS);
        if (eager && !sync)
            CHECKF(done,
                   "a %zu-byte tern_isend to a receiver that posts in time did not "
                   "complete before its receive was posted: it did not go eagerly",
                   SIZE);
        else
            CHECKF(!done, "a %zu-byte %s completed before its receive was posted%s", SIZE,
                   sync ? "tern_issend" : "tern_isend",
                   sync ? "" : ": it went eagerly to a receiver that had not posted in time");
        char c = 'g';
        CHECK_OK(tern_send(&c, 1, 1, TAG_GO, TERN_COMM_WORLD));
        if (!done) CHECK_OK(tern_wait(&r, &st));
        CHECK_OK(tern_recv(&c, 1, 1, TAG_ACK, TERN_COMM_WORLD, &st));
    } else {
        char c;
        CHECK_OK(tern_recv(&c, 1, 0, TAG_GO, TERN_COMM_WORLD, &st));
        memset(rbuf, 0, SIZE);
        CHECK_OK(tern_recv(rbuf, SIZE, 0, TAG_BIG, TERN_COMM_WORLD, &st));
        CHECK_STATUS(st, 0, TAG_BIG, SIZE);
        CHECK_PATTERN(rbuf, SIZE, seed_of(*round), "message %d sent before its receive", *round);
        c = 'a';
        CHECK_OK(tern_send(&c, 1, 0, TAG_ACK, TERN_COMM_WORLD));
    }
    (*round)++;
}

/* An eager message of SIZE into a posted receive of SIZE / 2. */
static void truncated(int *round)
{
    MP_WHERE("message %d into a receive of half its size", *round);
    tern_status_t st = mp_status_poison();
    size_t cap = SIZE / 2;
    if (me == 0) {
        send_when_ready(*round);
    } else {
        mp_guard_set(rbuf, cap);
        tern_request_t r;
        post_then_ready(cap, &r);
        CHECK_ERR(tern_wait(&r, &st), TERN_ERR_TRUNCATE);
        CHECK_STATUS(st, 0, TAG_BIG, SIZE);
        CHECK_EQ_INT(st.error, TERN_ERR_TRUNCATE);
        CHECK_PATTERN(rbuf, cap, seed_of(*round), "the truncated message's first %zu bytes", cap);
        CHECK_GUARD(rbuf, cap, "truncated message %d", *round);
    }
    (*round)++;
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    me = mp_rank;
    if (tern_size() != 2) {
        MP_FAIL("tcp_big needs exactly 2 ranks, got %d", tern_size());
    }
    int eager = mp_env_int("EXPECT_EAGER", 1);
    sbuf = mp_malloc(SIZE);
    rbuf = mp_malloc(SIZE + MP_GUARD_LEN);
    int round = 0;
    posted_in_time(&round, 3);
    sent_unposted(&round, eager, 0); /* 1. */
    sent_unposted(&round, 0, 0);     /* 2. withdrawn: rendezvous */
    sent_unposted(&round, 0, 0);     /* ...and still, nothing came in time since */
    posted_in_time(&round, 3);
    sent_unposted(&round, eager, 0); /* 3. */
    posted_in_time(&round, 3);
    sent_unposted(&round, eager, 1); /* 4. */
    posted_in_time(&round, 3);
    truncated(&round); /* 5. */
    posted_in_time(&round, 1);
    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(sbuf);
    free(rbuf);
    CHECK_OK(tern_finalize());
    if (me == 0) printf("tcp_big: %d messages ok%s\n", round, eager ? "" : " (eager sends off)");
    return 0;
}

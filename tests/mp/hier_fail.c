/*
 * hier_fail.c - a rank dies while the survivors create communicators and run their first
 * collectives on them, which is when the hierarchical collectives (coll_hier.c) build
 * their node and leader sub-communicators: every survivor must get TERN_ERR_PEER_FAILED
 * within a bound, never hang, and then go on with checked collectives on a communicator
 * of survivors.
 *
 * The last rank is the victim. Every rank loops: dup TERN_COMM_WORLD, allreduce (int64
 * sum, checked), bcast from a rotating root, barrier, free. The victim dies (SIGKILL, or
 * MP_FAIL_HOW=exit: _exit(3)) in round MP_FAIL_ROUND (default 3) after a pause of
 * MP_FAIL_DELAY_US (default 0), so it dies before, during or after the survivors' lazy
 * build of that round's dup, depending on the delay. Run across (fake or namespace) hosts
 * with TERN_COLL_HIER=1 by tests/multihost/hier_fail_test.sh; on one node it checks the
 * flat paths the same way.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_check.h"

#define ROUNDS     8
#define DETECT_MAX 3.0

static int env_int(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : dflt;
}

/* One round on a fresh dup of the world: its first error, or 0 with results checked. */
static int round_on_dup(int round, int me, int size)
{
    tern_comm_t dup;
    int rc = tern_comm_dup(TERN_COMM_WORLD, &dup);
    if (rc) return rc;
    int64_t x = (int64_t)(me + 1) * (round + 1), sum = 0;
    rc = tern_allreduce(&x, &sum, 1, TERN_INT64, TERN_SUM, dup);
    if (rc == 0) CHECK_EQ_INT(sum, (int64_t)size * (size + 1) / 2 * (round + 1));
    int64_t b = me == round % size ? 1000 + round : -1;
    if (rc == 0) rc = tern_bcast(&b, sizeof b, round % size, dup);
    if (rc == 0) CHECK_EQ_INT(b, 1000 + round);
    if (rc == 0) rc = tern_barrier(dup);
    CHECK_OK(tern_comm_free(&dup)); /* local: succeeds with a member dead too */
    return rc;
}

int main(int argc, char **argv)
{
    const char *how = getenv("MP_FAIL_HOW") ? getenv("MP_FAIL_HOW") : "kill";
    int fail_round = env_int("MP_FAIL_ROUND", 3), delay = env_int("MP_FAIL_DELAY_US", 0);
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    mp_watchdog(60);
    int size = tern_size(), me = mp_rank, victim = size - 1;
    CHECKF(size >= 3, "needs at least 3 ranks, got %d", size);
    CHECK_OK(tern_tolerate_failures());

    tern_comm_t alive;
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, me == victim ? TERN_UNDEFINED : 0, me, &alive));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    int rc = 0, round;
    double t0 = 0;
    for (round = 0; round < ROUNDS; round++) {
        MP_WHERE("round %d on a dup of the world", round);
        t0 = tern_wtime(); /* the failing round must end within the bound */
        if (round == fail_round) {
            if (me == victim) {
                if (delay > 0) usleep((useconds_t)delay);
                if (strcmp(how, "exit") == 0) _exit(3);
                raise(SIGKILL);
            }
        }
        rc = round_on_dup(round, me, size);
        if (rc) break;
    }
    CHECKF(rc == TERN_ERR_PEER_FAILED, "rank %d: round %d gave %s, expected TERN_ERR_PEER_FAILED",
           me, round, tern_err_name(rc));
    /* The victim leaves a round's barrier before the others may have: they can still be in
     * the round before it died. */
    CHECKF(round >= fail_round - 1, "rank %d failed in round %d, before the victim died (round %d)",
           me, round, fail_round);
    double waited = tern_wtime() - t0;
    printf("rank %d: round %d failed after %.3f s\n", me, round, waited);
    CHECKF(waited < DETECT_MAX, "the failure took %.3f s to reach rank %d", waited, me);

    /* Every later collective involving the victim fails at once. */
    int64_t one = 1, out = 0;
    CHECK_ERR(tern_allreduce(&one, &out, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD),
              TERN_ERR_PEER_FAILED);
    CHECK_ERR(tern_barrier(TERN_COMM_WORLD), TERN_ERR_PEER_FAILED);

    /* The survivors' communicator (made while all lived): checked collectives. */
    int n = size - 1;
    for (int r = 0; r < 10; r++) {
        MP_WHERE("survivors' round %d", r);
        int64_t v = (int64_t)(me + 1) * (r + 1), s = 0;
        CHECK_OK(tern_allreduce(&v, &s, 1, TERN_INT64, TERN_SUM, alive));
        CHECK_EQ_INT(s, (int64_t)n * (n + 1) / 2 * (r + 1));
        int64_t b = me == r % n ? 7 * r + 1 : 0;
        CHECK_OK(tern_bcast(&b, sizeof b, r % n, alive));
        CHECK_EQ_INT(b, 7 * r + 1);
        int64_t red = 0;
        CHECK_OK(tern_reduce(&v, &red, 1, TERN_INT64, TERN_SUM, r % n, alive));
        if (me == r % n) CHECK_EQ_INT(red, (int64_t)n * (n + 1) / 2 * (r + 1));
        CHECK_OK(tern_barrier(alive));
    }
    CHECK_OK(tern_comm_free(&alive));
    rc = tern_finalize();
    CHECKF(rc == TERN_OK || rc == TERN_ERR_PEER_FAILED, "tern_finalize returned %s",
           tern_err_name(rc));
    printf("mp-done rank %d\n", me);
    return 0;
}

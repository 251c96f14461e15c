/*
 * peer_fail.c - a rank dies mid-job and the survivors, who called
 * tern_tolerate_failures, are told and go on (tern.h, tern_tolerate_failures).
 *
 * The last rank is the victim; MP_FAIL_HOW says how it goes: kill (SIGKILL), segv,
 * exit (exit code 3 without finalize) or leave (exit 0 without finalize). Before it dies,
 * every survivor is blocked in something that waits on it:
 *   rank 0        a receive from the victim;
 *   rank 1        a wildcard receive on TERN_COMM_WORLD (nobody sends it anything);
 *   ranks 2...    an allreduce on TERN_COMM_WORLD (the victim never joins);
 * and each must get TERN_ERR_PEER_FAILED within a bound (printed; the issue asks for one
 * second, the check allows two so that a loaded CI machine does not fail it). Then:
 * sends to the victim and collectives on TERN_COMM_WORLD fail at once; a communicator
 * made of the survivors before the death still runs collectives with checked results;
 * point-to-point among survivors still carries checked data, large messages included;
 * and a message the victim sent before dying is still delivered. tern_finalize returns.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_check.h"

#define TAG_EARLY  7
#define TAG_NEVER  8
#define TAG_RING   9
#define BIG        (1u << 20)
#define DETECT_MAX 2.0

static void victim_die(const char *how)
{
    if (strcmp(how, "kill") == 0) raise(SIGKILL);
    if (strcmp(how, "segv") == 0) {
        signal(SIGSEGV, SIG_DFL); /* a sanitizer's handler would turn it into exit(1) */
        raise(SIGSEGV);
    }
    if (strcmp(how, "exit") == 0) _exit(3);
    _exit(0); /* "leave": a clean exit, but without tern_finalize */
}

int main(int argc, char **argv)
{
    const char *how = getenv("MP_FAIL_HOW") ? getenv("MP_FAIL_HOW") : "kill";
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    int size = tern_size();
    CHECKF(size >= 3, "needs at least 3 ranks, got %d", size);
    int victim = size - 1, me = mp_rank;
    CHECK_OK(tern_tolerate_failures());

    /* The survivors' own communicator, made while everyone is alive. */
    tern_comm_t alive;
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, me == victim ? TERN_UNDEFINED : 0, me, &alive));

    /* A message that will have arrived before the victim dies. */
    uint64_t early = 0xfeedface00000000ull | (uint64_t)victim;
    if (me == victim) { /* tern_send is synchronous: an eager isend is done once sent */
        tern_request_t rq;
        CHECK_OK(tern_isend(&early, sizeof early, 0, TAG_EARLY, TERN_COMM_WORLD, &rq));
        CHECK_OK(tern_wait(&rq, NULL));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    if (me == victim) {
        usleep(200 * 1000); /* let the survivors block first */
        victim_die(how);
    }

    /* Block in something that needs the victim, and time how long the news takes. */
    double t0 = tern_wtime();
    int rc;
    if (me == 0) {
        char buf[16];
        rc = tern_recv(buf, sizeof buf, victim, TAG_NEVER, TERN_COMM_WORLD, NULL);
    } else if (me == 1) {
        char buf[16];
        rc = tern_recv(buf, sizeof buf, TERN_ANY_SOURCE, TAG_NEVER, TERN_COMM_WORLD, NULL);
    } else {
        int64_t x = me, sum = 0;
        rc = tern_allreduce(&x, &sum, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD);
    }
    double waited = tern_wtime() - t0;
    CHECK_ERR(rc, TERN_ERR_PEER_FAILED);
    printf("rank %d: told of the failure after %.3f s (victim died ~0.2 s in)\n", me, waited);
    CHECKF(waited < DETECT_MAX + 0.2, "the failure took %.3f s to reach rank %d", waited, me);

    /* Whatever involves the victim fails at once. */
    char one = 1;
    CHECK_ERR(tern_send(&one, 1, victim, TAG_NEVER, TERN_COMM_WORLD), TERN_ERR_PEER_FAILED);
    CHECK_ERR(tern_barrier(TERN_COMM_WORLD), TERN_ERR_PEER_FAILED);
    int64_t x = 1, y = 0;
    CHECK_ERR(tern_allreduce(&x, &y, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD),
              TERN_ERR_PEER_FAILED);

    /* What it sent before dying is still there. */
    if (me == 0) {
        uint64_t got = 0;
        CHECK_OK(tern_recv(&got, sizeof got, victim, TAG_EARLY, TERN_COMM_WORLD, NULL));
        CHECK_EQ_INT(got, early);
    }

    /* The survivors' communicator works: collectives with checked results. */
    int n = size - 1;
    for (int round = 0; round < 20; round++) {
        MP_WHERE("survivor allreduce round %d", round);
        int64_t v = (int64_t)(me + 1) * (round + 1), s = 0;
        CHECK_OK(tern_allreduce(&v, &s, 1, TERN_INT64, TERN_SUM, alive));
        CHECK_EQ_INT(s, (int64_t)n * (n + 1) / 2 * (round + 1));
        CHECK_OK(tern_barrier(alive));
    }

    /* Point-to-point among survivors: a ring of small and large checked messages. */
    unsigned char *out = malloc(BIG), *in = malloc(BIG);
    CHECK(out && in);
    for (size_t len = 1; len <= BIG; len *= 16) {
        MP_WHERE("survivor ring len %zu", len);
        int next = (me + 1) % n, prev = (me + n - 1) % n;
        for (size_t i = 0; i < len; i++)
            out[i] = (unsigned char)(i * 7 + (size_t)me);
        tern_request_t rq;
        CHECK_OK(tern_irecv(in, len, prev, TAG_RING, alive, &rq));
        CHECK_OK(tern_send(out, len, next, TAG_RING, alive));
        tern_status_t st;
        CHECK_OK(tern_wait(&rq, &st));
        CHECK_EQ_SIZE(st.bytes, len);
        for (size_t i = 0; i < len; i++)
            if (in[i] != (unsigned char)(i * 7 + (size_t)prev))
                MP_FAIL("byte %zu is %u, expected %u", i, in[i], (unsigned)(i * 7 + (size_t)prev));
    }
    free(out);
    free(in);

    CHECK_OK(tern_comm_free(&alive));
    rc = tern_finalize();
    CHECKF(rc == TERN_OK || rc == TERN_ERR_PEER_FAILED, "tern_finalize returned %s",
           tern_err_name(rc));
    printf("mp-done rank %d\n", me);
    return 0;
}

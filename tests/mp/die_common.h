/*
 * die_common.h - the body of exit_code.c and kill.c: the last rank dies in the middle of
 * communication while every other rank is blocked receiving from it.
 *
 * First the job does real work with the victim (a small exchange with every rank, a
 * rendezvous-size message to rank 0). Then the victim starts one more rendezvous send to
 * rank 0 (which rank 0 never receives) and, 200 ms later, dies: exit(3) or
 * raise(SIGKILL). Every other rank is blocked in tern_recv of a message from the victim
 * that never comes (see MP_DIE_AT below for two more moments). A receive may end with an error
 * (TERN_ERR_PEER_FAILED) or the launcher may kill the process first; a receive that *succeeds* is a
 * failure (exit 5). After an error the survivor waits to be killed by the launcher (the job must
 * end with the victim's status, which expect_fail.sh checks, and quickly), exiting 6 if it is not.
 */
#ifndef TERN_TESTS_MP_DIE_COMMON_H
#define TERN_TESTS_MP_DIE_COMMON_H

#include <signal.h>

#include "mp_check.h"

#define BIG ((size_t)8 << 20)

static void die_now(int me, int by_signal, const char *when)
{
    fprintf(stderr, "rank %d: dying now (%s) %s, on purpose\n", me,
            by_signal ? "SIGKILL" : "exit code 3", when);
    fflush(stderr);
    if (by_signal) raise(SIGKILL);
    _exit(3);
}

static int die_main(int argc, char **argv, int by_signal)
{
    /* MP_DIE_AT: "comm" (default, see above), "init" (the victim dies before calling
     * tern_init, the others are in tern_init or soon blocked) or "finalize" (the
     * others are in tern_finalize). Before init the victim knows itself from the
     * launcher's PMI_RANK / PMI_SIZE. */
    const char *at = getenv("MP_DIE_AT");
    if (!at || !*at) at = "comm";
    if (!strcmp(at, "init")) {
        int prank = mp_env_int("PMI_RANK", -1), psize = mp_env_int("PMI_SIZE", -1);
        CHECKF(prank >= 0 && psize >= 2, "PMI_RANK %d / PMI_SIZE %d", prank, psize);
        if (prank == psize - 1) die_now(prank, by_signal, "before tern_init");
    }
    mp_init(&argc, &argv);
    int me = mp_rank, np = tern_size();
    int victim = np - 1;
    CHECKF(np >= 2, "needs at least 2 ranks");
    uint8_t *b = mp_malloc(BIG);
    int x = 0;

    MP_WHERE("work before the death");
    if (me == victim) {
        for (int r = 0; r < victim; r++) {
            CHECK_OK(tern_recv(&x, sizeof x, r, 1, TERN_COMM_WORLD, NULL));
            CHECK_OK(tern_send(&x, sizeof x, r, 1, TERN_COMM_WORLD));
        }
        mp_fill(b, BIG, 42);
        CHECK_OK(tern_send(b, BIG, 0, 2, TERN_COMM_WORLD));
        /* One more rendezvous message, started but never finished. */
        tern_request_t r;
        CHECK_OK(tern_isend(b, BIG, 0, 2, TERN_COMM_WORLD, &r));
        tern_request_t r2;
        CHECK_OK(tern_irecv(&x, sizeof x, 0, 9, TERN_COMM_WORLD, &r2));
        for (int i = 0; i < 20; i++) {
            int flag;
            CHECK_OK(tern_test(&r2, &flag, NULL));
            mp_sleep_ms(10);
        }
        die_now(me, by_signal,
                !strcmp(at, "finalize") ? "while the others finalize" : "mid-communication");
    }
    x = me;
    CHECK_OK(tern_send(&x, sizeof x, victim, 1, TERN_COMM_WORLD));
    CHECK_OK(tern_recv(&x, sizeof x, victim, 1, TERN_COMM_WORLD, NULL));
    CHECK_EQ_INT(x, me);
    if (me == 0) {
        CHECK_OK(tern_recv(b, BIG, victim, 2, TERN_COMM_WORLD, NULL));
        CHECK_PATTERN(b, BIG, 42, "rendezvous message before the death");
    }
    int rc;
    const char *call = "tern_recv";
    if (!strcmp(at, "finalize")) {
        MP_WHERE("in tern_finalize while a rank dies");
        call = "tern_finalize";
        rc = tern_finalize();
    } else {
        MP_WHERE("blocked in a receive from a dying rank");
        rc = tern_recv(&x, sizeof x, victim, 1, TERN_COMM_WORLD, NULL);
    }
    if (rc == TERN_OK) {
        fprintf(stderr, "FAIL [rank %d]: %s succeeded although rank %d died\n", me, call, victim);
        _exit(5);
    }
    fprintf(stderr,
            "rank %d: %s with the dead rank %d returned %s (fine); waiting for the "
            "launcher to end the job\n",
            me, call, victim, tern_err_name(rc));
    mp_sleep_ms(15000);
    fprintf(stderr,
            "FAIL [rank %d]: the launcher did not end the job 15 s after rank %d "
            "died\n",
            me, victim);
    _exit(6);
}

#endif

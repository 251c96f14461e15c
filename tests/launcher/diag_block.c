/*
 * diag_block.c - a job that blocks on purpose, for the hang report tests
 * (report_test.sh; ternrun --timeout and kill -USR1 of ternrun, see tools/ternrun/report.c).
 *
 *   diag_block deadlock      rank 0 receives from rank 1 (tag 10), rank 1 from rank 0
 *                            (tag 11): both wait forever; ranks 2... wait in an allreduce
 *                            the first two never join.
 *   diag_block wait FILE     rank 0 receives from rank 1 (tag 12); rank 1 runs its own
 *                            code (polls for FILE), then sends; the job then completes.
 *   diag_block tolerate      every rank tolerates failures; rank 1 dies of SIGKILL, rank 0
 *                            receives from rank 2, rank 2 sleeps in pause(): the job can
 *                            only end by a signal to ternrun or its --timeout.
 *
 * With DIAG_NO_PDEATHSIG=1 a rank first cancels the parent-death signal ternrun set, so
 * only the library's own check of the launcher (its PMI socket closing) can end it when
 * ternrun dies (hygiene_test.sh).
 *
 * The waits sit in named functions (never inlined) so that a report's stack can be
 * checked for them.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <sys/prctl.h>
#include <string.h>
#include <unistd.h>

#include "tern.h"

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        int rc_ = (x);                                                                             \
        if (rc_ != TERN_OK) {                                                                      \
            fprintf(stderr, "diag_block: %s failed: %s\n", #x, tern_err_name(rc_));                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__attribute__((noinline)) static int diag_wait_for_partner(int peer, int tag)
{
    char buf[16];
    return tern_recv(buf, sizeof buf, peer, tag, TERN_COMM_WORLD, NULL);
}

__attribute__((noinline)) static int diag_wait_in_allreduce(void)
{
    int64_t x = 1, y = 0;
    return tern_allreduce(&x, &y, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD);
}

__attribute__((noinline)) static void diag_poll_for_file(const char *path)
{
    while (access(path, F_OK) != 0)
        usleep(10 * 1000);
}

int main(int argc, char **argv)
{
    CHECK(tern_init(&argc, &argv));
    int me = tern_rank();
    if (getenv("DIAG_NO_PDEATHSIG") && strcmp(getenv("DIAG_NO_PDEATHSIG"), "1") == 0)
        prctl(PR_SET_PDEATHSIG, 0);
    const char *mode = argc > 1 ? argv[1] : "deadlock";
    if (strcmp(mode, "deadlock") == 0) {
        printf("diag-blocking rank %d\n", me);
        fflush(stdout);
        if (me == 0) CHECK(diag_wait_for_partner(1, 10));
        if (me == 1) CHECK(diag_wait_for_partner(0, 11));
        if (me >= 2) CHECK(diag_wait_in_allreduce());
    } else if (strcmp(mode, "wait") == 0 && argc > 2) {
        printf("diag-blocking rank %d\n", me);
        fflush(stdout);
        if (me == 0) CHECK(diag_wait_for_partner(1, 12));
        if (me == 1) {
            diag_poll_for_file(argv[2]);
            char buf[16] = "go";
            CHECK(tern_send(buf, sizeof buf, 0, 12, TERN_COMM_WORLD));
        }
        CHECK(tern_barrier(TERN_COMM_WORLD));
    } else if (strcmp(mode, "tolerate") == 0) {
        CHECK(tern_tolerate_failures());
        CHECK(tern_barrier(TERN_COMM_WORLD)); /* every rank tolerates before rank 1 dies */
        printf("diag-blocking rank %d\n", me);
        fflush(stdout);
        /* Rank 1 dies only once the others are past the barrier (which would fail). */
        char ok[2] = "k";
        if (me != 1) CHECK(tern_send(ok, sizeof ok, 1, 14, TERN_COMM_WORLD));
        if (me == 1) {
            CHECK(tern_recv(ok, sizeof ok, 0, 14, TERN_COMM_WORLD, NULL));
            CHECK(tern_recv(ok, sizeof ok, 2, 14, TERN_COMM_WORLD, NULL));
            raise(SIGKILL);
        }
        if (me == 0) (void)diag_wait_for_partner(2, 13); /* PEER_FAILED would be a bug too */
        if (me == 2)
            for (;;)
                pause();
    } else {
        fprintf(stderr, "usage: diag_block deadlock | wait FILE | tolerate\n");
        return 2;
    }
    CHECK(tern_finalize());
    printf("diag-done rank %d\n", me);
    return 0;
}

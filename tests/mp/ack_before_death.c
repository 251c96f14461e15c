/*
 * ack_before_death.c - what a rank delivered before it died is taken in before its death
 * is acted on (core_health, core_peer_failed).
 *
 * Rank 0 makes a synchronous send to rank 1 and waits for its acknowledgement, asleep.
 * Rank 2 stops rank 0 (SIGSTOP), lets rank 1 receive the message, acknowledge it and die
 * of SIGKILL, waits until the launcher's news of the death has certainly reached rank 0,
 * and lets rank 0 go on (SIGCONT). Rank 0 then holds both the acknowledgement (in the
 * shared-memory ring or the socket) and the news; its send reached rank 1 and was
 * received, so it must complete with TERN_OK, not TERN_ERR_PEER_FAILED. (Before the fix a
 * rank woken from its sleep read the launcher's news first and failed the send: seen as
 * a rare failure of launcher.hygiene.tolerated on a loaded machine.)
 *
 * Then a send to the dead rank fails at once with TERN_ERR_PEER_FAILED, and the two
 * survivors still exchange checked data.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include "mp_check.h"

#define TAG_MSG   21
#define TAG_GO    22
#define TAG_NEVER 23
#define TAG_AFTER 24

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = mp_rank;
    CHECKF(tern_size() == 3, "needs 3 ranks, got %d", tern_size());
    CHECK_OK(tern_tolerate_failures());
    int64_t mine = (int64_t)getpid(), pids[3];
    CHECK_OK(tern_allgather(&mine, pids, sizeof mine, TERN_COMM_WORLD));
    uint64_t msg = 0x0123456789abcdefull, got = 0;

    if (me == 0) {
        tern_request_t rq;
        CHECK_OK(tern_issend(&msg, sizeof msg, 1, TAG_MSG, TERN_COMM_WORLD, &rq));
        tern_status_t st;
        CHECK_OK(tern_wait(&rq, &st)); /* stopped and resumed in here */
        CHECK_ERR(tern_send(&msg, sizeof msg, 1, TAG_NEVER, TERN_COMM_WORLD), TERN_ERR_PEER_FAILED);
        uint64_t back = 0;
        CHECK_OK(tern_recv(&back, sizeof back, 2, TAG_AFTER, TERN_COMM_WORLD, NULL));
        CHECKF(back == ~msg, "rank 2 sent %#llx, wanted %#llx", (unsigned long long)back,
               (unsigned long long)~msg);
    } else if (me == 1) {
        char go;
        CHECK_OK(tern_recv(&go, 1, 2, TAG_GO, TERN_COMM_WORLD, NULL));
        CHECK_OK(tern_recv(&got, sizeof got, 0, TAG_MSG, TERN_COMM_WORLD, NULL));
        CHECKF(got == msg, "got %#llx from rank 0, wanted %#llx", (unsigned long long)got,
               (unsigned long long)msg);
        raise(SIGKILL); /* the acknowledgement is out: die before rank 0 reads it */
    } else {
        mp_sleep_ms(300); /* rank 0 is past its spin and asleep in tern_wait */
        CHECKF(kill((pid_t)pids[0], SIGSTOP) == 0, "cannot stop rank 0");
        char go = 'g';
        CHECK_OK(tern_send(&go, 1, 1, TAG_GO, TERN_COMM_WORLD));
        /* Rank 1 dies after its acknowledgement; the launcher tells every survivor. */
        CHECK_ERR(tern_recv(&got, sizeof got, 1, TAG_NEVER, TERN_COMM_WORLD, NULL),
                  TERN_ERR_PEER_FAILED);
        mp_sleep_ms(300); /* the news has reached rank 0's launcher socket by now */
        CHECKF(kill((pid_t)pids[0], SIGCONT) == 0, "cannot resume rank 0");
        uint64_t back = ~msg;
        CHECK_OK(tern_send(&back, sizeof back, 0, TAG_AFTER, TERN_COMM_WORLD));
    }
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", me);
    return 0;
}

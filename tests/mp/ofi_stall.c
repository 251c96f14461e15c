/*
 * ofi_stall.c - the ofi transport takes a peer whose sends make no progress for
 * TERN_OFI_SEND_TIMEOUT_MS for dead, so a send to a peer that stopped answering ends
 * with TERN_ERR_PEER_FAILED instead of hanging. tcp;ofi_rxm reports no error for a
 * dead peer (its sends stay in flight), and the launcher's news cannot help here: the
 * peer is stopped (SIGSTOP), not dead. Rank 1 publishes its pid, stops itself; rank 0
 * sends it messages beyond the provider's eager size until one fails, checks the time
 * it took against the timeout, then SIGKILLs rank 1 (the job ends with 137).
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "mp_check.h"

/* Eager for tern (TERN_OFI_EAGER_MAX 32 KiB) but above ofi_rxm's own eager size (16 KiB),
 * so the provider cannot complete the send without the peer. A rendezvous message would
 * only send a small RTS, which completes into the socket, and then wait for a CTS: that
 * wait is not a send in flight and is not detected (the launcher's news is the cover). */
#define LEN (24 * 1024)

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    CHECK_OK(tern_tolerate_failures());
    CHECKF(tern_size() == 2, "needs 2 ranks, has %d", tern_size());
    const char *v = getenv("TERN_OFI_SEND_TIMEOUT_MS");
    double limit = v ? atoi(v) / 1000.0 : 0;
    CHECKF(limit > 0, "set TERN_OFI_SEND_TIMEOUT_MS (got %s)", v ? v : "nothing");
    int me = tern_rank();
    int pid = getpid();
    if (me == 1) {
        CHECK_OK(tern_send(&pid, sizeof pid, 0, 1, TERN_COMM_WORLD));
        raise(SIGSTOP); /* rank 0 kills it while it is stopped */
        MP_FAIL("rank 1 was resumed");
    }
    CHECK_OK(tern_recv(&pid, sizeof pid, 1, 1, TERN_COMM_WORLD, NULL));
    char *buf = mp_malloc(LEN);
    memset(buf, 7, LEN);
    double t0 = mp_now();
    int rc = 0, n = 0;
    while (rc == 0 && mp_now() - t0 < 10 * limit + 30) {
        rc = tern_send(buf, LEN, 1, 2, TERN_COMM_WORLD);
        n++;
    }
    double took = mp_now() - t0;
    printf("rank 0: %s after %d send(s), %.3f s (timeout %.3f s)\n", tern_err_name(rc), n, took,
           limit);
    CHECKF(rc == TERN_ERR_PEER_FAILED, "send to the stopped rank: %s", tern_err_name(rc));
    CHECKF(took >= limit * 0.9 && took < limit + 20, "failed after %.3f s, timeout %.3f s", took,
           limit);
    rc = tern_send(buf, 8, 1, 2, TERN_COMM_WORLD);
    CHECKF(rc == TERN_ERR_PEER_FAILED, "a later send: %s", tern_err_name(rc));
    printf("mp-done rank %d\n", me);
    fflush(stdout);
    free(buf);
    kill(pid, SIGKILL);
    CHECK_OK(tern_finalize());
    return 0;
}

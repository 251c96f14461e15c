/*
 * shm_join_die.c - a rank dies while it is making its shm channels (issue 17). A
 * channel is made on a pair's first frame: the sender counts itself in the receiver's
 * list of senders and takes an entry there (shm_senders_join). The victim (the last
 * rank) has sent nothing to anyone but rank 0 (the start-up barrier's and split's few
 * frames aside): it now sends a first 2 KiB message to every rank in turn and kills
 * itself after a number of them that changes with the run (pid), so it dies before,
 * between or during those joins.
 * Every survivor must then:
 *   - get the victim's message intact or TERN_ERR_PEER_FAILED within 5 s, never hang;
 *   - see a send to the victim and a later receive from it fail with
 *     TERN_ERR_PEER_FAILED;
 *   - make first contact with every other survivor (an all-to-all among survivors on tags
 *     not used before, slot and cell sizes), checked byte for byte: senders that join a
 *     list after the victim's half-made entry must not be hidden behind it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_check.h"

#define LEN 2048

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int size = tern_size(), me = mp_rank, victim = size - 1;
    CHECKF(size >= 4, "needs at least 4 ranks, got %d", size);
    CHECK_OK(tern_tolerate_failures());
    tern_comm_t alive;
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, me == victim ? TERN_UNDEFINED : 0, me, &alive));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    static unsigned char out[LEN], in[LEN];
    if (me == victim) {
        int stop = (int)(getpid() % (unsigned)(size - 1)); /* ranks 0..stop-1 get a message */
        for (int r = 0; r < size - 1; r++) {
            if (r == stop) raise(SIGKILL);
            mp_fill(out, LEN, mp_seed(1, (uint64_t)me, (uint64_t)r, 0));
            CHECK_OK(tern_send(out, LEN, r, 3, TERN_COMM_WORLD)); /* eager: buffered */
        }
        raise(SIGKILL);
    }
    MP_WHERE("receive from the dying rank");
    double t0 = mp_now();
    int rc = tern_recv(in, LEN, victim, 3, TERN_COMM_WORLD, NULL);
    double t = mp_now() - t0;
    CHECKF(rc == TERN_OK || rc == TERN_ERR_PEER_FAILED, "receive from the victim: %s",
           tern_err_name(rc));
    if (rc == TERN_OK)
        CHECK_PATTERN(in, LEN, mp_seed(1, (uint64_t)victim, (uint64_t)me, 0), "victim's message");
    CHECKF(t < 5.0, "the receive took %.2f s", t);
    printf("rank %d: receive from the victim: %s after %.3f s\n", me, tern_err_name(rc), t);
    MP_WHERE("after the death");
    CHECK_ERR(tern_recv(in, LEN, victim, 4, TERN_COMM_WORLD, NULL), TERN_ERR_PEER_FAILED);
    CHECK_ERR(tern_send(out, LEN, victim, 4, TERN_COMM_WORLD), TERN_ERR_PEER_FAILED);

    int n = size - 1;
    unsigned char *sb = mp_malloc((size_t)n * LEN), *rb = mp_malloc((size_t)n * LEN);
    tern_request_t *rq = mp_malloc(2 * (size_t)n * sizeof *rq);
    static const size_t lens[] = {8, LEN};
    for (int round = 0; round < 4; round++) {
        size_t len = lens[round % 2];
        MP_WHERE("survivors' all-to-all round %d", round);
        int k = 0;
        for (int q = 0; q < n; q++)
            if (q != me)
                CHECK_OK(tern_irecv(rb + (size_t)q * len, len, q, 10 + round, alive, &rq[k++]));
        for (int q = 0; q < n; q++)
            if (q != me) {
                mp_fill(sb + (size_t)q * len, len,
                        mp_seed(2, (uint64_t)round, (uint64_t)me, (uint64_t)q));
                CHECK_OK(tern_isend(sb + (size_t)q * len, len, q, 10 + round, alive, &rq[k++]));
            }
        CHECK_OK(tern_waitall((size_t)k, rq, NULL));
        for (int q = 0; q < n; q++)
            if (q != me)
                CHECK_PATTERN(rb + (size_t)q * len, len,
                              mp_seed(2, (uint64_t)round, (uint64_t)q, (uint64_t)me),
                              "round %d from %d", round, q);
    }
    CHECK_OK(tern_barrier(alive));
    free(sb);
    free(rb);
    free(rq);
    tern_finalize();
    printf("mp-done rank %d\n", me);
    return 0;
}

/*
 * shm_pool_dead.c - a receiver dies holding cells of the senders' shm pools (run with a
 * pool of 4 small cells and no big ones, tests.list). The last rank never receives: every
 * survivor sends it 5000-byte messages (each in a cell of the survivor's pool; frames up
 * to 4088 B run over the slot ring instead, with the 256-slot rings tests.list sets) until
 * its pool is empty and the rest wait in the core's queue. Then the victim is killed. The
 * survivors must get TERN_ERR_PEER_FAILED for what could not be delivered (no hang), and
 * then run an all-to-all of cell-sized messages among themselves, checked byte for byte:
 * it needs the cells the dead rank held, so it hangs (and times out) unless they were
 * taken back.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mp_check.h"

#define LEN    5000
#define NSEND  12
#define ROUNDS 30

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    int size = tern_size(), me = mp_rank, victim = size - 1;
    CHECKF(size >= 3, "needs at least 3 ranks, got %d", size);
    CHECK_OK(tern_tolerate_failures());
    tern_comm_t alive;
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, me == victim ? TERN_UNDEFINED : 0, me, &alive));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == victim) {
        usleep(300 * 1000); /* the survivors fill their pools with frames to me */
        raise(SIGKILL);
    }
    static unsigned char out[NSEND][LEN];
    tern_request_t rq[NSEND];
    for (int i = 0; i < NSEND; i++) {
        mp_fill(out[i], LEN, (uint64_t)i);
        CHECK_OK(tern_isend(out[i], LEN, victim, 5, TERN_COMM_WORLD, &rq[i]));
    }
    int failed = 0;
    double t0 = tern_wtime();
    for (int i = 0; i < NSEND; i++) {
        int rc = tern_wait(&rq[i], NULL);
        CHECKF(rc == TERN_OK || rc == TERN_ERR_PEER_FAILED, "send %d to the victim: %s", i,
               tern_strerror(rc));
        failed += rc == TERN_ERR_PEER_FAILED;
    }
    printf("rank %d: %d of %d sends to the dead rank failed after %.3f s\n", me, failed, NSEND,
           tern_wtime() - t0);
    CHECKF(failed >= NSEND - 4, "only %d sends failed: the pool has 4 cells", failed);
    CHECK_ERR(tern_send(out[0], LEN, victim, 5, TERN_COMM_WORLD), TERN_ERR_PEER_FAILED);

    /* All-to-all among survivors through cells: needs the cells the victim held. */
    int n = size - 1;
    unsigned char *sb = malloc((size_t)n * LEN), *rb = malloc((size_t)n * LEN);
    tern_request_t *r2 = malloc(2 * (size_t)n * sizeof *r2);
    CHECK(sb && rb && r2);
    for (int round = 0; round < ROUNDS; round++) {
        MP_WHERE("survivor round %d", round);
        int k = 0;
        for (int p = 0; p < n; p++)
            CHECK_OK(tern_irecv(rb + (size_t)p * LEN, LEN, p, round, alive, &r2[k++]));
        for (int p = 0; p < n; p++) {
            mp_fill(sb + (size_t)p * LEN, LEN, (uint64_t)(round * 100 + me * 10 + p));
            CHECK_OK(tern_isend(sb + (size_t)p * LEN, LEN, p, round, alive, &r2[k++]));
        }
        CHECK_OK(tern_waitall((size_t)k, r2, NULL));
        for (int p = 0; p < n; p++)
            CHECK_PATTERN(rb + (size_t)p * LEN, LEN, (uint64_t)(round * 100 + p * 10 + me),
                          "round %d from %d", round, p);
    }
    CHECK_OK(tern_barrier(alive));
    free(sb);
    free(rb);
    free(r2);
    tern_finalize();
    printf("mp-done rank %d\n", me);
    return 0;
}

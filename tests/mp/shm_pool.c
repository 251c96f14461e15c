/*
 * shm_pool.c - the shm transport's per-process pool of cells under pressure
 * (src/transport/shm/shm_ring.h). Run with a tiny pool (TERN_SHM_CELLS, TERN_SHM_BIG_CELLS
 * in tests.list): every rank sends to every rank at once, many rounds, messages that
 * need small cells and big ones, so every pool runs dry again and again while every
 * process is itself blocked sending. Each message is checked byte for byte; a pool that
 * cannot make progress would hang (the test's timeout), not pass.
 */
#include <stdlib.h>
#include <string.h>

#include "mp_check.h"

#define ROUNDS 40
#define NSIZES 4

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    int size = tern_size(), me = mp_rank;
    /* 3000 B goes in slots (frames up to 4088 B with 256-slot rings: tests.list sets them
     * for 4 ranks, 6 have them anyway); 4500 and 6000 B in small cells; 30 KiB
     * in a big cell while a rendezvous to that peer is in flight, else by rendezvous. */
    static const size_t sizes[NSIZES] = {4500, 6000, 30000, 3000};
    size_t max = 30000;
    unsigned char *out = malloc((size_t)size * max), *in = malloc((size_t)size * max);
    tern_request_t *rq = malloc(2 * (size_t)size * sizeof *rq);
    CHECK(out && in && rq);
    for (int round = 0; round < ROUNDS; round++) {
        size_t len = sizes[round % NSIZES];
        MP_WHERE("round %d, %zu bytes", round, len);
        int n = 0;
        for (int p = 0; p < size; p++) {
            memset(in + (size_t)p * max, 0, len);
            CHECK_OK(tern_irecv(in + (size_t)p * max, len, p, round, TERN_COMM_WORLD, &rq[n++]));
        }
        for (int k = 0; k < size; k++) {
            int p = (me + k) % size;
            mp_fill(out + (size_t)p * max, len, (uint64_t)(round * 1000 + me * 31 + p));
            CHECK_OK(tern_isend(out + (size_t)p * max, len, p, round, TERN_COMM_WORLD, &rq[n++]));
        }
        CHECK_OK(tern_waitall((size_t)n, rq, NULL));
        for (int p = 0; p < size; p++)
            CHECK_PATTERN(in + (size_t)p * max, len, (uint64_t)(round * 1000 + p * 31 + me),
                          "round %d from rank %d", round, p);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(out);
    free(in);
    free(rq);
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", me);
    return 0;
}

/*
 * shm_many.c - many ranks on one node over shm (issue 17): with more than 17 ranks each
 * sender's ring in a receiver's inbox is smaller (TERN_SHM_RING_BUDGET) and rings under
 * a page are packed beside each other. Every pair talks, so every ring and its
 * neighbours are in use at once:
 *   1. all-to-all by point-to-point at 8 B (one slot), 400 B (consecutive slots or a cell,
 *      by the ring's size), 2 KiB (a cell) and 20 KiB (rendezvous), checked byte for byte;
 *   2. a burst of 200 small messages to the next rank before it posts a receive (the ring
 *      fills many times over, the rest waits in the sender's queue), received in order;
 *   3. tern_alltoall of 2 KiB blocks (the collective's own schedule), checked.
 * Neighbouring rings that overlapped or a ring that wrapped wrongly shows as a wrong byte.
 */
#include <stdlib.h>
#include <string.h>

#include "mp_check.h"

#define ROUNDS 3
#define BURST  200

static uint64_t seed_of(int round, int size_i, int from, int to)
{
    return mp_seed((uint64_t)round, (uint64_t)size_i, (uint64_t)from, (uint64_t)to);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int p = tern_size(), me = mp_rank;
    static const size_t lens[] = {8, 400, 2048, 20000};
    unsigned char *sb = mp_malloc((size_t)p * 20000), *rb = mp_malloc((size_t)p * 20000);
    tern_request_t *rq = mp_malloc(2 * (size_t)p * sizeof *rq);

    for (int round = 0; round < ROUNDS; round++)
        for (int li = 0; li < 4; li++) {
            size_t len = lens[li];
            MP_WHERE("all-to-all round %d, %zu B", round, len);
            int k = 0;
            for (int i = 1; i < p; i++) {
                int from = (me - i + p) % p;
                CHECK_OK(
                    tern_irecv(rb + (size_t)from * len, len, from, li, TERN_COMM_WORLD, &rq[k++]));
            }
            for (int i = 1; i < p; i++) {
                int to = (me + i) % p;
                mp_fill(sb + (size_t)to * len, len, seed_of(round, li, me, to));
                CHECK_OK(tern_isend(sb + (size_t)to * len, len, to, li, TERN_COMM_WORLD, &rq[k++]));
            }
            CHECK_OK(tern_waitall((size_t)k, rq, NULL));
            for (int from = 0; from < p; from++)
                if (from != me)
                    CHECK_PATTERN(rb + (size_t)from * len, len, seed_of(round, li, from, me),
                                  "round %d, %zu B from %d", round, len, from);
        }

    /* A burst to the next rank while it is busy elsewhere: the ring fills and wraps. */
    MP_WHERE("burst");
    int next = (me + 1) % p, prev = (me - 1 + p) % p;
    static unsigned char bout[BURST][48], bin[BURST][48];
    tern_request_t brq[BURST];
    for (int i = 0; i < BURST; i++) {
        mp_fill(bout[i], sizeof bout[i], seed_of(i, 9, me, next));
        CHECK_OK(tern_isend(bout[i], sizeof bout[i], next, 100, TERN_COMM_WORLD, &brq[i]));
    }
    mp_sleep_ms(20);
    for (int i = 0; i < BURST; i++)
        CHECK_OK(tern_recv(bin[i], sizeof bin[i], prev, 100, TERN_COMM_WORLD, NULL));
    CHECK_OK(tern_waitall(BURST, brq, NULL));
    for (int i = 0; i < BURST; i++)
        CHECK_PATTERN(bin[i], sizeof bin[i], seed_of(i, 9, prev, me), "burst message %d", i);

    /* The collective. */
    for (int round = 0; round < ROUNDS; round++) {
        MP_WHERE("tern_alltoall round %d", round);
        for (int to = 0; to < p; to++)
            mp_fill(sb + (size_t)to * 2048, 2048, seed_of(round, 7, me, to));
        memset(rb, 0, (size_t)p * 2048);
        CHECK_OK(tern_alltoall(sb, rb, 2048, TERN_COMM_WORLD));
        for (int from = 0; from < p; from++)
            CHECK_PATTERN(rb + (size_t)from * 2048, 2048, seed_of(round, 7, from, me),
                          "alltoall round %d from %d", round, from);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(sb);
    free(rb);
    free(rq);
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", me);
    return 0;
}

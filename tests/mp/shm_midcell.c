/*
 * shm_midcell.c - the shm send pool's mid cells (src/transport/shm/shm_ring.h) in real
 * jobs. With short rings (TERN_SHM_RING_BUDGET in tests.list: 32 slots, frames up to
 * 504 B) every rank sends every rank, all at once, messages right at each boundary:
 * slots | mid cells (TERN_SHM_MID_CELL_SIZE) | small cells | big cells / rendezvous.
 * Pools of one or two cells per class (tests.list) run dry again and again while every
 * process is blocked sending, so mid-sized frames also overflow into small cells. Each
 * message is checked byte for byte; a pool that could not make progress would hang (the
 * test's timeout), not pass.
 */
#include <stdlib.h>
#include <string.h>

#include "mp_check.h"

#define ROUNDS 20
/* Frames are the message plus a 16-byte header: 488/489 B messages sit on the 32-slot
 * rings' limit, 1008/1009 on a 1 KiB mid cell's, 2096/2097 on the default 2112 B mid
 * cell's, 8176/8177 on an 8 KiB small cell's; 20000 B goes by rendezvous or streams
 * through cells (TERN_SHM_CMA=0). */
static const size_t sizes[] = {1, 488, 489, 1008, 1009, 2048, 2096, 2097, 8176, 8177, 20000};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXLEN 20000

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    int size = tern_size(), me = mp_rank;
    size_t per = NSIZES * MAXLEN; /* bytes per peer in each direction */
    unsigned char *out = malloc((size_t)size * per), *in = malloc((size_t)size * per);
    tern_request_t *rq = malloc(2 * NSIZES * (size_t)size * sizeof *rq);
    CHECK(out && in && rq);
    for (int round = 0; round < ROUNDS; round++) {
        MP_WHERE("round %d", round);
        size_t n = 0;
        for (int p = 0; p < size; p++)
            for (size_t s = 0; s < NSIZES; s++) {
                unsigned char *b = in + (size_t)p * per + s * MAXLEN;
                memset(b, 0, sizes[s]);
                CHECK_OK(tern_irecv(b, sizes[s], p, (int)s, TERN_COMM_WORLD, &rq[n++]));
            }
        /* Sizes in a different order each round and per peer, so that frames of every
         * class are queued behind one another in each ring. */
        for (int k = 0; k < size; k++) {
            int p = (me + k) % size;
            for (size_t j = 0; j < NSIZES; j++) {
                size_t s = (j + (size_t)round + (size_t)p) % NSIZES;
                unsigned char *b = out + (size_t)p * per + s * MAXLEN;
                mp_fill(b, sizes[s], (uint64_t)(round * 100000 + me * 1000 + p * 31 + (int)s));
                CHECK_OK(tern_isend(b, sizes[s], p, (int)s, TERN_COMM_WORLD, &rq[n++]));
            }
        }
        CHECK_OK(tern_waitall(n, rq, NULL));
        for (int p = 0; p < size; p++)
            for (size_t s = 0; s < NSIZES; s++)
                CHECK_PATTERN(in + (size_t)p * per + s * MAXLEN, sizes[s],
                              (uint64_t)(round * 100000 + p * 1000 + me * 31 + (int)s),
                              "round %d, %zu bytes from rank %d", round, sizes[s], p);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(out);
    free(in);
    free(rq);
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", me);
    return 0;
}

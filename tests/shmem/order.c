/*
 * order.c - ordering and completion:
 *  - fence: PE 0 puts round i's block (64 KiB, several tcp frames... and a global) to
 *    PE 1, fences, then sets a flag to i; PE 1 waits for the flag and must find round i's
 *    data. Without the fence's ordering the flag could overtake the data;
 *  - quiet: PE 0 puts a block, quiets, and then tells PE 1 with a native tern_send (a
 *    different channel): after quiet the data must already be in place;
 *  - barrier_all completes _nbi puts.
 */
#include "shmem_check.h"

#define ROUNDS 200
#define BLK    (64u << 10)

static char gblock[4096]; /* a global target: reached by messages even on one node */

int main(void)
{
    sh_init();
    int me = sh_me, n = sh_n;
    char *blk = shmem_malloc(BLK);
    long *flag = shmem_calloc(1, sizeof *flag);
    char *src = mp_malloc(BLK);
    CHECK(blk && flag);
    int peer = n - 1;
    for (int i = 1; i <= ROUNDS && n > 1; i++) {
        MP_WHERE("fence round %d", i);
        if (me == 0) {
            mp_fill(src, BLK, mp_seed((uint64_t)i, 9, 0, 0));
            shmem_putmem_nbi(blk, src, BLK, peer);
            shmem_putmem(gblock, src, sizeof gblock, peer);
            shmem_fence();
            shmem_long_p(flag, i, peer);
            /* wait for the ack before the next round overwrites */
            shmem_long_wait_until(flag, SHMEM_CMP_EQ, -i);
        } else if (me == peer) {
            shmem_long_wait_until(flag, SHMEM_CMP_EQ, i);
            CHECK_PATTERN(blk, BLK, mp_seed((uint64_t)i, 9, 0, 0), "fenced block");
            CHECK_PATTERN(gblock, sizeof gblock, mp_seed((uint64_t)i, 9, 0, 0), "fenced global");
            shmem_long_p(flag, -i, 0);
        }
    }
    shmem_barrier_all();
    for (int i = 1; i <= ROUNDS / 4 && n > 1; i++) {
        MP_WHERE("quiet round %d", i);
        if (me == 0) {
            mp_fill(src, BLK, mp_seed((uint64_t)i, 10, 0, 0));
            shmem_putmem_nbi(blk, src, BLK, peer);
            shmem_putmem_nbi(gblock, src, sizeof gblock, peer);
            shmem_quiet();
            CHECK_OK(tern_send(&i, sizeof i, peer, 5, TERN_COMM_WORLD));
            int ack;
            CHECK_OK(tern_recv(&ack, sizeof ack, peer, 6, TERN_COMM_WORLD, NULL));
        } else if (me == peer) {
            int got;
            CHECK_OK(tern_recv(&got, sizeof got, 0, 5, TERN_COMM_WORLD, NULL));
            CHECK_EQ_INT(got, i);
            CHECK_PATTERN(blk, BLK, mp_seed((uint64_t)i, 10, 0, 0), "block after quiet");
            CHECK_PATTERN(gblock, sizeof gblock, mp_seed((uint64_t)i, 10, 0, 0),
                          "global after quiet");
            CHECK_OK(tern_send(&got, sizeof got, 0, 6, TERN_COMM_WORLD));
        }
    }
    shmem_barrier_all(); /* PEs outside the rounds must not write into blk before */
    MP_WHERE("barrier completes nbi");
    mp_fill(src, BLK, mp_seed(11, (uint64_t)me, 0, 0));
    shmem_putmem_nbi(blk, src, BLK, (me + 1) % n);
    shmem_barrier_all();
    CHECK_PATTERN(blk, BLK, mp_seed(11, (uint64_t)((me + n - 1) % n), 0, 0), "nbi before barrier");
    shmem_barrier_all();
    free(src);
    sh_finish();
    return 0;
}

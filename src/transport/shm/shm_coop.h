/*
 * shm_coop.h - whether a cooperative copy paid (pure, unit-tested in test_shm_ring.c).
 *
 * A receiver that shares a large pull with the sender (shm.c, shm_get_coop) takes chunks
 * until none is left and then waits for the chunks the sender took. On a loaded machine
 * the sender may take a chunk and lose its CPU to another task before it finishes: the
 * receiver then waits for that task's time slice to end (milliseconds) for a copy it
 * could have done in microseconds. Measured with 2 busy loops beside a 2-rank ping-pong
 * (2026-11-27, docs/PERFORMANCE.md): 256 KiB 1,174 us per message with cooperative copies
 * against 31 us pulling alone. Such a copy is treated like a declined offer, so the next
 * 1, 2, 4 .. 64 pulls from that peer are plain.
 */
#ifndef TERN_SHM_COOP_H
#define TERN_SHM_COOP_H

#include <stdint.h>

/*
 * Did sharing a copy of nchunks chunks take longer than pulling all of them alone would
 * have? The receiver copied `mine` chunks in mine_s seconds from the start of the copy
 * and the whole copy (its chunks and the wait for the sender's) took total_s seconds.
 * Alone, at its own rate, it would have taken mine_s * nchunks / mine. Returns 1 when
 * total_s was longer than that; 0 otherwise, and when the receiver copied no chunk (no
 * rate to compare with: the sender took them all, so it was not held up).
 */
static inline int shm_coop_was_slower(double mine_s, double total_s, uint32_t mine,
                                      uint32_t nchunks)
{
    if (mine == 0 || nchunks <= mine) return 0;
    return total_s > mine_s * (double)nchunks / (double)mine;
}

#endif

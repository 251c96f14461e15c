/*
 * shm_lazy.c - shm channels are set up on first use (issue 17). Run with 16 ranks on one
 * node (oversubscribed here): each rank talks to two peers only, (rank + 1) and
 * (rank + 5) mod p, with small (slot) and cell-sized messages checked byte for byte.
 * Then each rank counts the pages of its own shm segment that exist in /dev/shm
 * (mincore on its mapping): only the reserved header pages, the channels of its two
 * senders and the few pool cells it used may be there, not the 14 idle channels or the
 * rest of the pool. Before issue 17 every page of the segment was reserved up front.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "mp_check.h"

#define ROUNDS 50
#define BIG    2560

/* My own shm segment's mapping (its name holds "-shm-<rank>-"), or 0. */
static int find_segment(int rank, uintptr_t *lo, uintptr_t *hi)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024], key[64];
    snprintf(key, sizeof key, "-shm-%d-", rank);
    int found = 0;
    while (f && fgets(line, sizeof line, f))
        if (strstr(line, "/tern-") && strstr(line, key) &&
            sscanf(line, "%lx-%lx", (unsigned long *)lo, (unsigned long *)hi) == 2) {
            found = 1;
            break;
        }
    if (f) fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    int size = tern_size(), me = mp_rank;
    int to[2] = {(me + 1) % size, (me + 5) % size};
    int from[2] = {(me + size - 1) % size, (me + size - 5) % size};
    static unsigned char out[2][BIG], in[2][BIG];
    for (int round = 0; round < ROUNDS; round++) {
        size_t len = round % 2 ? BIG : 8;
        MP_WHERE("round %d", round);
        tern_request_t rq[4];
        for (int k = 0; k < 2; k++)
            CHECK_OK(tern_irecv(in[k], len, from[k], k, TERN_COMM_WORLD, &rq[k]));
        for (int k = 0; k < 2; k++) {
            mp_fill(out[k], len, (uint64_t)(round * 1000 + me * 10 + k));
            CHECK_OK(tern_isend(out[k], len, to[k], k, TERN_COMM_WORLD, &rq[2 + k]));
        }
        CHECK_OK(tern_waitall(4, rq, NULL));
        for (int k = 0; k < 2; k++)
            CHECK_PATTERN(in[k], len, (uint64_t)(round * 1000 + from[k] * 10 + k),
                          "round %d from %d", round, from[k]);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    uintptr_t lo = 0, hi = 0;
    CHECKF(find_segment(me, &lo, &hi), "no shm segment of rank %d in /proc/self/maps", me);
    size_t pages = (hi - lo) / 4096, there = 0;
    unsigned char *vec = malloc(pages);
    CHECK(vec != NULL);
    CHECK(mincore((void *)lo, hi - lo, vec) == 0);
    for (size_t i = 0; i < pages; i++)
        there += vec[i] & 1;
    /* Reserved: header, senders list, next words (3); channels: my two senders plus those
     * of the barrier's and the startup's few rounds (at most 8 more; up to 2 pages each
     * for a frame across a page edge); cells of my pool: LIFO reuse keeps them to what is
     * in flight at once (allow 8 one-page frames). The other channels and cells of the
     * 435-page segment must not exist. */
    size_t bound = 3 + (2 + 8) * 2 + 8;
    printf("rank %d: %zu of %zu pages of its shm segment exist (bound %zu)\n", me, there, pages,
           bound);
    CHECKF(there <= bound, "%zu pages of rank %d's shm segment exist, at most %zu expected", there,
           me, bound);
    CHECKF(pages > 4 * bound, "the segment (%zu pages) is too small for this test to mean much",
           pages);
    free(vec);
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", me);
    return 0;
}

/*
 * shm_alias.c - single copies whose destination lies at every interesting distance from
 * their source modulo 4 KiB, checked byte for byte. From 1 to 31 bytes above, the shm
 * transport pulls through a bounce buffer at the source's page offset in pieces of
 * TERN_SHM_ALIAS_BOUNCE (shm.c, shm_get_bounce); elsewhere it pulls directly (or
 * cooperatively). Pairs of ranks (0-1, 2-3, ...) send both ways: rank `lo` sends from page
 * offset SRC_OFF, its peer receives at SRC_OFF + distance, and back; an odd rank out sends
 * to itself. Sizes are rendezvous ones (above TERN_SHM_EAGER_MAX), with tails that are
 * not a multiple of any piece; guards before and after every receive area.
 */
#define _GNU_SOURCE
#include <string.h>

#include "mp_check.h"

#define SRC_OFF 200
#define TAG     7

static const size_t sizes[] = {40001, 65539, 262147, 1048579};
#define NSIZES (sizeof sizes / sizeof sizes[0])
#define MAXSZ  ((size_t)1048579)

static const int dists[] = {0, 1, 8, 16, 24, 31, 32, 33, 64, 4064, 4095};
#define NDISTS (sizeof dists / sizeof dists[0])

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int size = tern_size(), me = mp_rank;
    int peer = (me % 2 == 0) ? me + 1 : me - 1;
    if (peer >= size) peer = me;
    size_t span = MAXSZ + 2 * 4096 + 2 * MP_GUARD_LEN;
    uint8_t *sraw = mp_malloc(span + 4096), *rraw = mp_malloc(span + 4096);
    /* Page-aligned bases, so the offsets below are the offsets within a page. */
    uint8_t *sbase = (uint8_t *)(((uintptr_t)sraw + 4095) & ~(uintptr_t)4095);
    uint8_t *rbase = (uint8_t *)(((uintptr_t)rraw + 4095) & ~(uintptr_t)4095);
    uint8_t *sbuf = sbase + 4096 + SRC_OFF;
    for (size_t d = 0; d < NDISTS; d++)
        for (size_t s = 0; s < NSIZES; s++) {
            size_t n = sizes[s];
            MP_WHERE("distance %d, %zu bytes", dists[d], n);
            /* dst - src == dists[d] (mod 4096), with room for a guard in front. */
            uint8_t *rbuf = rbase + 4096 + (SRC_OFF + (size_t)dists[d]) % 4096;
            memset(rbuf - MP_GUARD_LEN, MP_GUARD_BYTE, MP_GUARD_LEN);
            memset(rbuf, 0, n);
            mp_guard_set(rbuf, n);
            uint64_t mine = mp_seed((uint64_t)me, n, (uint64_t)d, 1);
            uint64_t theirs = mp_seed((uint64_t)peer, n, (uint64_t)d, 1);
            mp_fill(sbuf, n, mine);
            tern_request_t rq[2];
            tern_status_t st[2];
            CHECK_OK(tern_irecv(rbuf, n, peer, TAG, TERN_COMM_WORLD, &rq[0]));
            CHECK_OK(tern_isend(sbuf, n, peer, TAG, TERN_COMM_WORLD, &rq[1]));
            CHECK_OK(tern_waitall(2, rq, st));
            CHECK_STATUS(st[0], peer, TAG, n);
            CHECK_PATTERN(rbuf, n, theirs, "distance %d, %zu bytes from rank %d", dists[d], n,
                          peer);
            CHECK_GUARD(rbuf, n, "distance %d, %zu bytes", dists[d], n);
            for (size_t j = 1; j <= MP_GUARD_LEN; j++)
                CHECKF(rbuf[-(ptrdiff_t)j] == MP_GUARD_BYTE,
                       "distance %d, %zu bytes: byte %zu before the receive area overwritten",
                       dists[d], n, j);
            /* The sender's buffer is unchanged (a pull only reads it). */
            CHECK_PATTERN(sbuf, n, mine, "send buffer after distance %d, %zu bytes", dists[d], n);
        }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(sraw);
    free(rraw);
    CHECK_OK(tern_finalize());
    return 0;
}

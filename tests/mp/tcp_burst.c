/*
 * tcp_burst.c - bursts of non-blocking sends to one peer, the pattern tcp coalesces
 * (TERN_TCP_CORK: every frame after the first of a burst waits in the kernel until the
 * next progress call or sleep). Every message arrives byte for byte and in order, a bad
 * buffer inside a burst or at its end fails only its own send with TERN_ERR_FAULT (the
 * receiver gets zeros, the frames around it are intact), and a sender that blocks right
 * after its burst (sleeping at once with TERN_TCP_SPIN_US=0) does not keep the end of
 * the burst from its peer: the peer answers only once it has the whole burst.
 *
 * Rank 0 sends, rank 1 receives; sizes from 1 B to just over the cork limit (32 KiB) and
 * past the tcp transport's in-place read threshold.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "mp_check.h"

#define BURST   48
#define ROUNDS  3
#define TAG     9
#define TAG_ACK 10

/* Message i of a burst of size n is unreadable at these positions (send fails). */
static int burst_bad(int round, int i)
{
    return round > 0 && (i == 17 || i == BURST - 1);
}

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    CHECKF(tern_size() == 2, "needs 2 ranks");
    const size_t sizes[] = {1, 8, 100, 1000, 4000, 4096, 8000, 16000, 32700, 40000};
    const size_t max = 40000;
    void *bad = mmap(NULL, max, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(bad != MAP_FAILED);
    char *buf[BURST];
    for (int i = 0; i < BURST; i++)
        buf[i] = mp_malloc(max);
    tern_request_t rq[BURST];
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        for (int round = 0; round < ROUNDS; round++) {
            MP_WHERE("size %zu round %d", n, round);
            if (mp_rank == 0) {
                int rc[BURST];
                for (int i = 0; i < BURST; i++) {
                    mp_fill(buf[i], n, n * 1000 + (size_t)(round * BURST + i));
                    const void *src = burst_bad(round, i) ? bad : buf[i];
                    rc[i] = tern_isend(src, n, 1, TAG, TERN_COMM_WORLD, &rq[i]);
                    CHECKF(rc[i] == TERN_OK || (burst_bad(round, i) && rc[i] == TERN_ERR_FAULT),
                           "isend %d: %s", i, tern_strerror(rc[i]));
                }
                /* Block at once for the peer's answer, which needs the whole burst. */
                int ack = 0;
                CHECK_OK(tern_recv(&ack, sizeof ack, 1, TAG_ACK, TERN_COMM_WORLD, NULL));
                CHECK_EQ_INT(ack, round * 1000 + (int)s);
                for (int i = 0; i < BURST; i++) {
                    if (rc[i] != TERN_OK) continue;
                    int w = tern_wait(&rq[i], NULL);
                    CHECKF(w == (burst_bad(round, i) ? TERN_ERR_FAULT : TERN_OK),
                           "send %d of the burst: %s", i, tern_strerror(w));
                }
            } else {
                tern_status_t st[BURST];
                for (int i = 0; i < BURST; i++) {
                    memset(buf[i], 0x5a, n);
                    CHECK_OK(tern_irecv(buf[i], n, 0, TAG, TERN_COMM_WORLD, &rq[i]));
                }
                CHECK_OK(tern_waitall(BURST, rq, st));
                for (int i = 0; i < BURST; i++) {
                    CHECK_EQ_SIZE(st[i].bytes, n);
                    if (burst_bad(round, i)) {
                        for (size_t b = 0; b < n; b++)
                            CHECKF(buf[i][b] == 0, "message %d byte %zu of a bad send is %d", i, b,
                                   buf[i][b]);
                    } else {
                        size_t at =
                            mp_pattern_mismatch(buf[i], n, n * 1000 + (size_t)(round * BURST + i));
                        CHECKF(at == n, "message %d differs at byte %zu", i, at);
                    }
                }
                int ack = round * 1000 + (int)s;
                CHECK_OK(tern_send(&ack, sizeof ack, 0, TAG_ACK, TERN_COMM_WORLD));
            }
        }
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    for (int i = 0; i < BURST; i++)
        free(buf[i]);
    munmap(bad, max);
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", mp_rank);
    return 0;
}

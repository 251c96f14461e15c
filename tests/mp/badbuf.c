/*
 * badbuf.c - a send from memory that cannot be read fails at the sender with
 * TERN_ERR_FAULT, and nobody else is blamed: the receiver gets the message (its contents
 * undefined; zeros here, as the whole buffer is unreadable), the connection survives and
 * the next messages arrive intact. Rank 0 sends, rank 1 receives; on shm (the receiver
 * pulls with cross-memory attach) and on tcp (the sender's writev stops at the fault).
 *
 * Sizes: 100 KiB (tcp: eager, sent by reference; shm: rendezvous, one pull) and 1 MiB
 * (tcp: CTS + DATA frames; shm: a cooperative pull after a 4 KiB probe), each followed
 * by a good message of the same size checked byte for byte.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "mp_check.h"

#define TAG 3

int main(int argc, char **argv)
{
    CHECK_OK(tern_init(&argc, &argv));
    mp_rank = tern_rank();
    CHECKF(tern_size() == 2, "needs 2 ranks");
    const size_t sizes[] = {100 << 10, 1 << 20};
    size_t max = 1 << 20;
    /* Mapped but unreadable: the kernel's copies fail with EFAULT. */
    void *bad = mmap(NULL, max, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(bad != MAP_FAILED);
    char *good = mp_malloc(max);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t n = sizes[i];
        MP_WHERE("size %zu", n);
        if (mp_rank == 0) {
            CHECK_ERR(tern_send(bad, n, 1, TAG, TERN_COMM_WORLD), TERN_ERR_FAULT);
            mp_fill(good, n, n);
            CHECK_OK(tern_send(good, n, 1, TAG, TERN_COMM_WORLD));
            /* A non-blocking one as well: the error comes with its completion. */
            tern_request_t rq;
            int rc = tern_isend(bad, n, 1, TAG, TERN_COMM_WORLD, &rq);
            if (rc == TERN_OK) rc = tern_wait(&rq, NULL);
            CHECK_EQ_INT(rc, TERN_ERR_FAULT);
        } else {
            tern_status_t st;
            for (int k = 0; k < 3; k++) {
                memset(good, 0x5a, n);
                CHECK_OK(tern_recv(good, n, 0, TAG, TERN_COMM_WORLD, &st));
                CHECK_EQ_SIZE(st.bytes, n);
                if (k == 1) {
                    size_t at = mp_pattern_mismatch(good, n, n);
                    CHECKF(at == n, "good message differs at byte %zu", at);
                } else {
                    for (size_t b = 0; b < n; b++)
                        CHECKF(good[b] == 0, "byte %zu of a bad send is %d, wanted 0", b, good[b]);
                }
            }
        }
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(good);
    munmap(bad, max);
    CHECK_OK(tern_finalize());
    printf("mp-done rank %d\n", mp_rank);
    return 0;
}

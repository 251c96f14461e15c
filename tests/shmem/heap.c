/*
 * heap.c - the symmetric heap (run with SHMEM_SYMMETRIC_SIZE=1m):
 *  - every PE gets the same offsets (checked with fcollect of heap offsets);
 *  - exhaustion returns NULL (on every PE) and leaves the heap usable;
 *  - freed neighbours coalesce: after freeing three adjacent blocks a block of their
 *    total size fits at the first one's offset;
 *  - shmem_align honours the alignment, shmem_calloc zeroes, shmem_realloc keeps the
 *    contents (in place and when it moves);
 *  - shmem_ptr gives a pointer that reaches the other PE's block on shm (NULL over tcp).
 */
#include "shmem_check.h"

static char *base; /* the first block: offsets are measured from it */
static int marker; /* a global: shmem_ptr reaches it on shm (globals are shared there) */

static void same_everywhere(void *p, const char *what)
{
    long off = p ? (long)((char *)p - base) : -1;
    long *all = shmem_calloc((size_t)sh_n, sizeof(long));
    long *mine = shmem_malloc(sizeof(long));
    CHECK(all && mine);
    *mine = off;
    CHECK_EQ_INT(shmem_long_fcollect(SHMEM_TEAM_WORLD, all, mine, 1), 0);
    for (int i = 0; i < sh_n; i++)
        CHECKF(all[i] == off, "%s: PE %d got offset %ld, PE %d got %ld", what, i, all[i], sh_me,
               off);
    shmem_free(mine);
    shmem_free(all);
}

int main(void)
{
    sh_init();
    base = shmem_malloc(64);
    CHECK(base != NULL);
    same_everywhere(base, "first");

    MP_WHERE("exhaustion");
    void *huge = shmem_malloc(2u << 20); /* more than the 1 MiB heap */
    CHECK(huge == NULL);
    CHECK(shmem_calloc(1u << 20, 4) == NULL);
    CHECK(shmem_malloc(0) == NULL);
    /* Fill the heap with 64 KiB blocks until it is full: NULL, never a crash. */
    void *blocks[64];
    int nb = 0;
    while (nb < 64 && (blocks[nb] = shmem_malloc(64u << 10)) != NULL)
        nb++;
    CHECKF(nb >= 10 && nb < 64, "%d blocks of 64 KiB fit a 1 MiB heap", nb);
    same_everywhere(blocks[nb - 1], "last block before exhaustion");
    for (int i = nb - 1; i >= 0; i--)
        shmem_free(blocks[i]);

    MP_WHERE("coalescing");
    char *a = shmem_malloc(1000), *b = shmem_malloc(3000), *c = shmem_malloc(5000);
    CHECK(a && b && c && a < b && b < c);
    same_everywhere(c, "c");
    shmem_free(b);
    shmem_free(a);
    shmem_free(c);
    char *big = shmem_malloc(9000);
    CHECKF(big == a, "9000 bytes should reuse the coalesced space at %p, got %p", (void *)a,
           (void *)big);
    /* The whole rest of the heap is one block again. */
    char *rest = shmem_malloc((1u << 20) - 64 - 9024 - 4096);
    CHECK(rest != NULL);
    shmem_free(rest);

    MP_WHERE("calloc, realloc");
    int *z = shmem_calloc(1000, sizeof(int));
    CHECK(z);
    for (int i = 0; i < 1000; i++)
        CHECK(z[i] == 0);
    char *blocker = shmem_malloc(64); /* right after z: no holes are left before it */
    CHECK(blocker == (char *)z + 4032);
    mp_fill(z, 4000, mp_seed(1, 2, 3, (uint64_t)sh_me));
    int *z2 = shmem_realloc(z, 3000); /* shrink in place */
    CHECK(z2 == z);
    CHECK_PATTERN(z2, 3000, mp_seed(1, 2, 3, (uint64_t)sh_me), "after shrinking");
    int *z3 = shmem_realloc(z2, 100000);
    CHECK(z3 != NULL && z3 != z2);
    same_everywhere(z3, "realloc moved");
    CHECK_PATTERN(z3, 3000, mp_seed(1, 2, 3, (uint64_t)sh_me), "after moving");
    CHECK(shmem_realloc(z3, 4u << 20) == NULL); /* too large: old block untouched */
    CHECK_PATTERN(z3, 3000, mp_seed(1, 2, 3, (uint64_t)sh_me), "after a failed realloc");

    MP_WHERE("align");
    char *al = shmem_align(4096, 100);
    CHECK(al && ((uintptr_t)al & 4095) == 0);
    same_everywhere(al, "align");
    CHECK(shmem_align(3, 100) == NULL);

    MP_WHERE("shmem_ptr");
    int right = (sh_me + 1) % sh_n;
    z3[0] = 1000 + sh_me;
    shmem_barrier_all();
    int *rp = shmem_ptr(z3, right);
    const char *tl = getenv("TERN_TRANSPORTS");
    int tcp_only = tl && !strstr(tl, "shm");
    if (right == sh_me)
        CHECK(rp == z3);
    else if (tcp_only)
        CHECK(rp == NULL);
    else {
        CHECK(rp != NULL);
        CHECK_EQ_INT(*rp, 1000 + right);
    }
    marker = 2000 + sh_me;
    shmem_barrier_all();
    int *gm = shmem_ptr(&marker, right);
    if (right == sh_me)
        CHECK(gm == &marker);
    else if (tcp_only)
        CHECK(gm == NULL);
    else {
        CHECK(gm != NULL);
        CHECK_EQ_INT(*gm, 2000 + right);
    }
    shmem_barrier_all();
    char stackvar[8];
    CHECK(shmem_ptr(stackvar, right) == NULL);
    CHECK(!shmem_addr_accessible(stackvar, right));
    CHECK(shmem_addr_accessible(z3, right));
    CHECK(shmem_addr_accessible(&base, right)); /* a global */
    CHECK(shmem_pe_accessible(right));
    CHECK(!shmem_pe_accessible(sh_n));
    shmem_barrier_all();
    shmem_free(z3);
    shmem_free(blocker);
    shmem_free(al);
    shmem_free(big);
    shmem_free(base);
    sh_finish();
    return 0;
}

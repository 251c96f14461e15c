/*
 * test_osh_heap.c - the symmetric-heap allocator (src/shmem/shmem_heap.c) on its own:
 * alignment, exhaustion, coalescing in every order, in-place resize, and a random
 * sequence replayed twice that must hand out the same offsets both times (symmetry
 * rests on this determinism) while the blocks always tile the heap exactly.
 */
#include <stdint.h>
#include <string.h>

#include "shmem/shmem_impl.h"
#include "unit.h"

/* The blocks tile [0, size), sorted, with no two free neighbours. */
static void check_tiling(const struct osh_heap *h)
{
    uint64_t at = 0;
    for (size_t i = 0; i < h->n; i++) {
        CHECK_EQ(h->b[i].off, at);
        CHECK(h->b[i].size > 0);
        if (i > 0) CHECK(h->b[i].used || h->b[i - 1].used);
        at += h->b[i].size;
    }
    CHECK_EQ(at, h->size);
}

static uint64_t rng(uint64_t *s)
{
    *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
    return *s >> 33;
}

/* Random allocations and frees; records the offsets handed out. */
static void replay(uint64_t seed, uint64_t *offs, size_t n)
{
    struct osh_heap h;
    CHECK_EQ(osh_heap_init(&h, 1 << 20), 0);
    uint64_t live[64];
    int nlive = 0;
    for (size_t k = 0; k < n; k++) {
        uint64_t r = rng(&seed);
        if (nlive > 0 && (r % 3 == 0 || nlive == 64)) {
            int i = (int)(r / 3 % (uint64_t)nlive);
            CHECK_EQ(osh_heap_free(&h, live[i]), 0);
            live[i] = live[--nlive];
            offs[k] = UINT64_MAX;
        } else {
            uint64_t off = UINT64_MAX, align = (r & 4) ? 4096 : OSH_ALIGN;
            int rc = osh_heap_alloc(&h, align, 1 + r % 40000, &off);
            if (rc == 0) {
                CHECK_EQ(off % align, 0);
                live[nlive++] = off;
            } else {
                CHECK_EQ(rc, TERN_ERR_NOMEM);
            }
            offs[k] = off;
        }
        check_tiling(&h);
    }
    while (nlive)
        CHECK_EQ(osh_heap_free(&h, live[--nlive]), 0);
    CHECK_EQ(h.n, 1); /* everything coalesced back into one free block */
    osh_heap_release(&h);
}

int main(void)
{
    struct osh_heap h;
    uint64_t a, b, c, d;
    CHECK_EQ(osh_heap_init(&h, 1 << 16), 0);
    CHECK_EQ(osh_heap_alloc(&h, OSH_ALIGN, 100, &a), 0);
    CHECK_EQ(a, 0);
    CHECK_EQ(osh_heap_size_of(&h, a), 128);
    CHECK_EQ(osh_heap_alloc(&h, 1024, 10, &b), 0);
    CHECK_EQ(b, 1024); /* the pad before it stays free */
    CHECK_EQ(osh_heap_alloc(&h, OSH_ALIGN, 64, &c), 0);
    CHECK_EQ(c, 128); /* first fit: into the pad */
    CHECK_EQ(osh_heap_alloc(&h, OSH_ALIGN, 1 << 16, &d), TERN_ERR_NOMEM);
    CHECK_EQ(osh_heap_alloc(&h, OSH_ALIGN, 0, &d), TERN_ERR_NOMEM);
    CHECK_EQ(osh_heap_free(&h, 5), TERN_ERR_INVAL);
    check_tiling(&h);
    /* Free in the middle, then the neighbours: one block again. */
    CHECK_EQ(osh_heap_free(&h, c), 0);
    CHECK_EQ(osh_heap_free(&h, c), TERN_ERR_INVAL); /* double free */
    CHECK_EQ(osh_heap_free(&h, b), 0);
    CHECK_EQ(osh_heap_free(&h, a), 0);
    CHECK_EQ(h.n, 1);
    /* Resize: grow into a free neighbour, refuse past a used one, shrink. */
    CHECK_EQ(osh_heap_alloc(&h, OSH_ALIGN, 1000, &a), 0);
    CHECK_EQ(osh_heap_resize(&h, a, 5000), 0);
    CHECK_EQ(osh_heap_size_of(&h, a), 5056);
    CHECK_EQ(osh_heap_alloc(&h, OSH_ALIGN, 64, &b), 0);
    CHECK_EQ(b, 5056);
    CHECK_EQ(osh_heap_resize(&h, a, 6000), TERN_ERR_NOMEM);
    CHECK_EQ(osh_heap_resize(&h, a, 64), 0);
    CHECK_EQ(osh_heap_alloc(&h, OSH_ALIGN, 4992, &c), 0);
    CHECK_EQ(c, 64); /* the space the shrink gave back */
    check_tiling(&h);
    osh_heap_release(&h);

    uint64_t o1[5000], o2[5000];
    replay(42, o1, 5000);
    replay(42, o2, 5000);
    CHECK(memcmp(o1, o2, sizeof o1) == 0);
    return unit_done("test_osh_heap");
}

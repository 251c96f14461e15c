/*
 * shmem_heap.c - the symmetric heap: a deterministic first-fit allocator over offsets,
 * and the collective shmem_malloc family on it.
 *
 * Symmetry comes from determinism, not from communication: every PE runs the same
 * allocator on the same sequence of calls (the specification requires equal arguments in
 * equal order), so every PE hands out the same offset. The allocator keeps a sorted array
 * of blocks that tile the heap; freeing merges a block with free neighbours, so freed
 * space is reused at full size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmem/shmem_impl.h"
#include "util/tunables.h"

/* ---- the allocator ------------------------------------------------------------------ */

int osh_heap_init(struct osh_heap *h, uint64_t size)
{
    memset(h, 0, sizeof *h);
    h->cap = 64;
    h->b = malloc(h->cap * sizeof *h->b);
    if (h->b == NULL) return TERN_ERR_NOMEM;
    h->size = size;
    h->b[0] = (struct osh_blk){0, size, 0};
    h->n = 1;
    return 0;
}

void osh_heap_release(struct osh_heap *h)
{
    free(h->b);
    memset(h, 0, sizeof *h);
}

/* Index of the block starting at off, or -1. */
static long osh_heap_find(const struct osh_heap *h, uint64_t off)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (h->b[mid].off == off) return (long)mid;
        if (h->b[mid].off < off)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

/* Make room for one more block at index i. */
static int osh_heap_insert(struct osh_heap *h, size_t i, struct osh_blk blk)
{
    if (h->n == h->cap) {
        struct osh_blk *nb = realloc(h->b, 2 * h->cap * sizeof *nb);
        if (nb == NULL) return TERN_ERR_NOMEM;
        h->b = nb;
        h->cap *= 2;
    }
    memmove(&h->b[i + 1], &h->b[i], (h->n - i) * sizeof *h->b);
    h->b[i] = blk;
    h->n++;
    return 0;
}

static void osh_heap_remove(struct osh_heap *h, size_t i)
{
    memmove(&h->b[i], &h->b[i + 1], (h->n - i - 1) * sizeof *h->b);
    h->n--;
}

static uint64_t osh_round(uint64_t x, uint64_t a)
{
    return (x + a - 1) & ~(a - 1);
}

int osh_heap_alloc(struct osh_heap *h, uint64_t align, uint64_t size, uint64_t *off)
{
    if (size == 0 || size > h->size) return TERN_ERR_NOMEM;
    size = osh_round(size, OSH_ALIGN);
    for (size_t i = 0; i < h->n; i++) {
        struct osh_blk b = h->b[i];
        if (b.used) continue;
        uint64_t a = osh_round(b.off, align);
        if (a < b.off || a - b.off > b.size || b.size - (a - b.off) < size) continue;
        /* Split into [pad][used][rest]; the pad and the rest stay free. Reserve the
         * array room first so a failure leaves the heap as it was. */
        if (h->n + 2 > h->cap) {
            struct osh_blk *nb = realloc(h->b, (h->cap * 2 + 2) * sizeof *nb);
            if (nb == NULL) return TERN_ERR_NOMEM;
            h->b = nb;
            h->cap = h->cap * 2 + 2;
        }
        uint64_t end = b.off + b.size;
        size_t k = i;
        if (a > b.off) {
            h->b[k].size = a - b.off;
            k++;
            (void)osh_heap_insert(h, k, (struct osh_blk){a, size, 1});
        } else {
            h->b[k] = (struct osh_blk){a, size, 1};
        }
        if (a + size < end)
            (void)osh_heap_insert(h, k + 1, (struct osh_blk){a + size, end - a - size, 0});
        *off = a;
        return 0;
    }
    return TERN_ERR_NOMEM;
}

int osh_heap_free(struct osh_heap *h, uint64_t off)
{
    long i = osh_heap_find(h, off);
    if (i < 0 || !h->b[i].used) return TERN_ERR_INVAL;
    h->b[i].used = 0;
    if ((size_t)i + 1 < h->n && !h->b[i + 1].used) {
        h->b[i].size += h->b[i + 1].size;
        osh_heap_remove(h, (size_t)i + 1);
    }
    if (i > 0 && !h->b[i - 1].used) {
        h->b[i - 1].size += h->b[i].size;
        osh_heap_remove(h, (size_t)i);
    }
    return 0;
}

uint64_t osh_heap_size_of(const struct osh_heap *h, uint64_t off)
{
    long i = osh_heap_find(h, off);
    return i >= 0 && h->b[i].used ? h->b[i].size : 0;
}

int osh_heap_resize(struct osh_heap *h, uint64_t off, uint64_t size)
{
    long i = osh_heap_find(h, off);
    if (i < 0 || !h->b[i].used || size == 0) return TERN_ERR_INVAL;
    size = osh_round(size, OSH_ALIGN);
    struct osh_blk *b = &h->b[i];
    int next_free = (size_t)i + 1 < h->n && !h->b[i + 1].used;
    uint64_t avail = b->size + (next_free ? h->b[i + 1].size : 0);
    if (size > avail) return TERN_ERR_NOMEM;
    if (size == b->size) return 0;
    if (next_free) {
        /* Move the boundary with the free neighbour (it vanishes if nothing is left). */
        h->b[i + 1].off = off + size;
        h->b[i + 1].size = avail - size;
        b->size = size;
        if (h->b[i + 1].size == 0) osh_heap_remove(h, (size_t)i + 1);
        return 0;
    }
    /* Shrinking with a used (or no) neighbour: the tail becomes a new free block. */
    int rc = osh_heap_insert(h, (size_t)i + 1, (struct osh_blk){off + size, b->size - size, 0});
    if (rc) return rc;
    h->b[i].size = size;
    return 0;
}

/* Free bytes in total and in the largest free block. */
static void osh_heap_stats(const struct osh_heap *h, uint64_t *free_total, uint64_t *largest)
{
    uint64_t t = 0, l = 0;
    for (size_t i = 0; i < h->n; i++)
        if (!h->b[i].used) {
            t += h->b[i].size;
            if (h->b[i].size > l) l = h->b[i].size;
        }
    *free_total = t;
    *largest = l;
}

/* ---- the collective API --------------------------------------------------------------- */

/* Every PE ends an allocation call here, so no PE puts into a block another PE has not
 * allocated (or zeroed) yet. */
static void osh_heap_barrier(void)
{
    shmem_barrier_all();
}

static void osh_heap_exhausted(const char *fn, size_t size)
{
    if (osh.me != 0) return;
    uint64_t total, largest;
    osh_heap_stats(&osh.alloc, &total, &largest);
    fprintf(stderr,
            "tern shmem [PE 0]: %s: symmetric heap exhausted: %zu bytes requested, %llu free "
            "(largest free block %llu) of SHMEM_SYMMETRIC_SIZE=%zu; raise SHMEM_SYMMETRIC_SIZE\n",
            fn, size, (unsigned long long)total, (unsigned long long)largest, osh.heap_size);
}

static void *osh_alloc(const char *fn, size_t align, size_t size)
{
    osh_check(fn);
    if (size == 0) return NULL;
    uint64_t off;
    int rc = osh_heap_alloc(&osh.alloc, align, size, &off);
    if (rc) osh_heap_exhausted(fn, size);
    osh_heap_barrier();
    return rc ? NULL : osh.heap + off;
}

void *shmem_malloc(size_t size)
{
    return osh_alloc("shmem_malloc", OSH_ALIGN, size);
}

void *shmem_malloc_with_hints(size_t size, long hints)
{
    (void)hints;
    return osh_alloc("shmem_malloc_with_hints", OSH_ALIGN, size);
}

void *shmem_calloc(size_t count, size_t size)
{
    osh_check("shmem_calloc");
    if (count == 0 || size == 0) return NULL;
    if (count > SIZE_MAX / size) {
        osh_heap_exhausted("shmem_calloc", SIZE_MAX);
        osh_heap_barrier();
        return NULL;
    }
    uint64_t off;
    int rc = osh_heap_alloc(&osh.alloc, OSH_ALIGN, count * size, &off);
    if (rc)
        osh_heap_exhausted("shmem_calloc", count * size);
    else
        memset(osh.heap + off, 0, count * size);
    osh_heap_barrier();
    return rc ? NULL : osh.heap + off;
}

void *shmem_align(size_t alignment, size_t size)
{
    osh_check("shmem_align");
    if (alignment == 0 || (alignment & (alignment - 1))) {
        if (osh.me == 0)
            fprintf(stderr, "tern shmem [PE 0]: shmem_align: alignment %zu is not a power of two\n",
                    alignment);
        return NULL;
    }
    return osh_alloc("shmem_align", alignment < OSH_ALIGN ? OSH_ALIGN : alignment, size);
}

/* The heap offset of a block pointer, or the fatal error. */
static uint64_t osh_block_off(const char *fn, void *ptr)
{
    uintptr_t a = (uintptr_t)ptr, h = (uintptr_t)osh.heap;
    if (a - h >= osh.heap_size || osh_heap_size_of(&osh.alloc, a - h) == 0)
        osh_fatal(fn, TERN_ERR_INVAL, "%p is not a block of the symmetric heap", ptr);
    return a - h;
}

void shmem_free(void *ptr)
{
    osh_check("shmem_free");
    if (ptr == NULL) return;
    uint64_t off = osh_block_off("shmem_free", ptr);
    /* Nobody may still be writing into the block we give back. */
    osh_heap_barrier();
    (void)osh_heap_free(&osh.alloc, off);
}

void *shmem_realloc(void *ptr, size_t size)
{
    osh_check("shmem_realloc");
    if (ptr == NULL) return shmem_malloc(size);
    if (size == 0) {
        shmem_free(ptr);
        return NULL;
    }
    uint64_t off = osh_block_off("shmem_realloc", ptr);
    osh_heap_barrier();
    void *res = ptr;
    if (osh_heap_resize(&osh.alloc, off, size) != 0) {
        uint64_t old = osh_heap_size_of(&osh.alloc, off), noff;
        if (osh_heap_alloc(&osh.alloc, OSH_ALIGN, size, &noff) == 0) {
            memcpy(osh.heap + noff, ptr, old < size ? old : size);
            (void)osh_heap_free(&osh.alloc, off);
            res = osh.heap + noff;
        } else {
            osh_heap_exhausted("shmem_realloc", size);
            res = NULL;
        }
    }
    osh_heap_barrier();
    return res;
}

void *shmalloc(size_t size)
{
    return shmem_malloc(size);
}

void *shmemalign(size_t alignment, size_t size)
{
    return shmem_align(alignment, size);
}

void *shrealloc(void *ptr, size_t size)
{
    return shmem_realloc(ptr, size);
}

void shfree(void *ptr)
{
    shmem_free(ptr);
}

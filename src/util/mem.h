/*
 * mem.h - util_zero(), clearing a small object on a hot path without `rep stos`, and
 * util_copy(), the copy of message bytes that stays off `rep movsb` where it is slow.
 *
 * GCC expands memset of a known size between roughly 100 bytes and a few KiB into `rep
 * stosq`, whose start-up costs tens of cycles on current x86 cores (and more in a VM):
 * clearing a 160-byte request that way took 15% of a sender's time when streaming 8-byte
 * messages. util_zero stores 16-byte vectors in a loop the compiler cannot turn back into
 * a memset call or a string instruction.
 */
#ifndef TERN_UTIL_MEM_H
#define TERN_UTIL_MEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Clear n bytes at dst; meant for small objects of a size known at compile time. */
static inline void util_zero(void *dst, size_t n)
{
#if defined(__GNUC__)
    typedef uint64_t util_u64x2 __attribute__((vector_size(16), aligned(1), may_alias));
    unsigned char *p = dst;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        *(util_u64x2 *)(p + i) = (util_u64x2){0, 0};
        /* An empty asm that may read p: the loop stays a loop of vector stores. */
        __asm__("" : : "r"(p + i) : "memory");
    }
    if (i < n) memset(p + i, 0, n - i);
#else
    memset(dst, 0, n);
#endif
}

/*
 * util_copy - memcpy for message payloads.
 *
 * From 2112 bytes (x86_rep_movsb_threshold) glibc's memcpy copies with `rep movsb`. On
 * AMD Zen cores that instruction runs 8-30 times slower when the destination lies 1-31
 * bytes above the source modulo 4 KiB: on this project's AMD EPYC machines (glibc 2.36)
 * an 8 KiB copy took 2.9-3.1 us instead of 0.10-0.15 (bench/memcpy_alias). Message
 * copies meet that distance all the time: a page-aligned user buffer copied behind a
 * 16-byte frame header in a page-aligned cell is 16 bytes off. Glibc steers clear of
 * short distances on Intel only. util_copy takes a loop of 16-byte vector loads and
 * stores at those distances (within 2x of memcpy at its best, 8-17x faster than memcpy
 * there), util_copy_short below UTIL_COPY_SHORT, and memcpy everywhere else.
 * dst and src must not overlap.
 */
void util_copy_vec(void *dst, const void *src, size_t n);

/*
 * util_copy_wide - a forward copy of n >= 64 bytes in 128-byte steps of 32-byte AVX2 loads
 * and destination-aligned stores; only where util_copy_wide_ok (the CPU has AVX2, checked
 * once as the library loads). util_copy takes it from UTIL_COPY_WIDE_MIN to
 * util_copy_wide_max (TERN_COPY_WIDE_MAX, set as the library starts; 0: never), and at the
 * distances where `rep movsb` is slow at any size. On the AMD EPYC VM of docs/PERFORMANCE.md
 * a receiver's copies out of shared memory with `rep movsb` ran 2-2.5x slower in some
 * launches than in others (a 32 KiB stream 1.7 or 3.9 us per message, decided per launch),
 * and never with this loop; it matches memcpy elsewhere.
 */
#define UTIL_COPY_WIDE_MIN 2048
extern int util_copy_wide_ok;
extern size_t util_copy_wide_max;
void util_copy_wide(void *dst, const void *src, size_t n);

/*
 * util_copy_nt - a copy whose whole destination lines are written around the caches
 * (non-temporal 32-byte AVX2 stores, then a store fence), the rest with util_copy; plain
 * util_copy where the CPU has no AVX2 or on other architectures (util_copy_wide_ok 0). For
 * the sender's copy into shared memory another core reads next: an ordinary store must
 * first take each line from the cache of the core that read it last (a read for
 * ownership), which costs 5x more where the two cores share no cache (the AMD VM's slow
 * phase: an 8 KiB frame 5.2 us per one-way trip, against 1.7 written around the caches,
 * and 1.6 against 1.7 where they share one; bench/nt_copy.c). The receiver then reads the
 * lines from memory. n of any size; ends with a store fence, so a later release store
 * publishes the data.
 */
void util_copy_nt(void *dst, const void *src, size_t n);

/* Is dst 1-31 bytes above src modulo 4 KiB (where rep movsb is slow on AMD Zen)? */
static inline int util_alias_slow(uintptr_t dst, uintptr_t src)
{
    return ((dst - src) & 4095) - 1 < 31;
}

/*
 * util_copy_short - an inline copy of a few bytes (meant for n below a few hundred): 16-byte
 * vector moves, the last one overlapping, or two overlapping word moves below 16 bytes.
 * For the pieces of a small frame (a 16-byte header, a payload of tens of bytes), where a
 * call to memcpy and its size dispatch cost more than the copy itself. dst and src must
 * not overlap.
 */
static inline void util_copy_short(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
#if defined(__GNUC__)
    if (n >= 16) {
        typedef uint64_t util_u64x2c __attribute__((vector_size(16), aligned(1), may_alias));
        util_u64x2c last = *(const util_u64x2c *)(s + n - 16);
        for (size_t i = 0; i + 16 < n; i += 16) {
            *(util_u64x2c *)(d + i) = *(const util_u64x2c *)(s + i);
            /* An empty asm that may read d: the loop stays a loop (not a call to memcpy). */
            __asm__("" : : "r"(d + i) : "memory");
        }
        *(util_u64x2c *)(d + n - 16) = last;
        return;
    }
#endif
    if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, s, 8);
        memcpy(&b, s + n - 8, 8);
        memcpy(d, &a, 8);
        memcpy(d + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, s, 4);
        memcpy(&b, s + n - 4, 4);
        memcpy(d, &a, 4);
        memcpy(d + n - 4, &b, 4);
    } else if (n) {
        unsigned char a = s[0], b = s[n / 2], c = s[n - 1];
        d[0] = a;
        d[n / 2] = b;
        d[n - 1] = c;
    }
}

/* util_copy copies pieces shorter than this with util_copy_short: a shm receiver's copy of
 * a small payload out of its frame, through memcpy's call and size dispatch, was a tenth
 * of its instructions per message (docs/PERFORMANCE.md, "Small shm frames written
 * inline"). */
#define UTIL_COPY_SHORT 256

static inline void util_copy(void *dst, const void *src, size_t n)
{
    if (n < UTIL_COPY_SHORT) {
        util_copy_short(dst, src, n);
        return;
    }
#if defined(__x86_64__) && defined(__GNUC__)
    if (n >= 1024) {
        int alias = util_alias_slow((uintptr_t)dst, (uintptr_t)src);
        if (n >= UTIL_COPY_WIDE_MIN && util_copy_wide_ok && (n <= util_copy_wide_max || alias)) {
            util_copy_wide(dst, src, n);
            return;
        }
        if (alias) {
            util_copy_vec(dst, src, n);
            return;
        }
    }
#endif
    memcpy(dst, src, n);
}

#endif

/*
 * mem.c - the out-of-line parts of util_copy() (mem.h): a forward copy in 64-byte steps of
 * 16-byte unaligned vector loads and stores, for the source/destination distances where
 * `rep movsb` is slow (SSE2 is in every x86-64, so it needs no CPU check); and the AVX2
 * copy, compiled for AVX2 alone and taken only where the CPU has it.
 */
#include "util/mem.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

int util_copy_wide_ok;
size_t util_copy_wide_max = 65536;

void util_copy_vec(void *dst, const void *src, size_t n)
{
#if defined(__GNUC__)
    typedef uint64_t v16 __attribute__((vector_size(16), aligned(1), may_alias));
    unsigned char *d = dst;
    const unsigned char *s = src;
    while (n >= 64) {
        v16 a = *(const v16 *)s, b = *(const v16 *)(s + 16);
        v16 c = *(const v16 *)(s + 32), e = *(const v16 *)(s + 48);
        *(v16 *)d = a;
        *(v16 *)(d + 16) = b;
        *(v16 *)(d + 32) = c;
        *(v16 *)(d + 48) = e;
        /* Keep it a loop of vector moves: the compiler must not make it a memcpy call. */
        __asm__("" : : "r"(d) : "memory");
        s += 64;
        d += 64;
        n -= 64;
    }
    while (n >= 16) {
        *(v16 *)d = *(const v16 *)s;
        s += 16;
        d += 16;
        n -= 16;
    }
    while (n--)
        *d++ = *s++;
#else
    memcpy(dst, src, n);
#endif
}

#if defined(__x86_64__) && defined(__GNUC__)
__attribute__((constructor)) static void util_mem_init(void)
{
    __builtin_cpu_init();
    util_copy_wide_ok = __builtin_cpu_supports("avx2");
}

__attribute__((target("avx2"))) static void util_copy_nt_avx2(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    /* Up to the first line boundary and after the last one, ordinary stores: a streaming
     * store to part of a line would write the line out partly and read it back. */
    size_t head = (64 - ((uintptr_t)d & 63)) & 63;
    if (head > n) head = n;
    util_copy(d, s, head);
    d += head;
    s += head;
    n -= head;
    while (n >= 64) {
        __m256i a = _mm256_loadu_si256((const __m256i *)s);
        __m256i b = _mm256_loadu_si256((const __m256i *)(s + 32));
        _mm256_stream_si256((__m256i *)d, a);
        _mm256_stream_si256((__m256i *)(d + 32), b);
        d += 64;
        s += 64;
        n -= 64;
    }
    util_copy(d, s, n);
    _mm_sfence();
}

void util_copy_nt(void *dst, const void *src, size_t n)
{
    if (util_copy_wide_ok)
        util_copy_nt_avx2(dst, src, n);
    else
        util_copy(dst, src, n);
}

__attribute__((target("avx2"))) void util_copy_wide(void *dst, const void *src, size_t n)
{
    unsigned char *d = dst;
    const unsigned char *s = src;
    /* The first 32 and the last 64 bytes go unaligned, loaded first; between them the
     * stores are aligned: the first aligned one starts 1-32 bytes in, and the loop stops
     * short of the last 64, which the tail's stores then overlap. */
    __m256i head = _mm256_loadu_si256((const __m256i *)s);
    __m256i t0 = _mm256_loadu_si256((const __m256i *)(s + n - 64));
    __m256i t1 = _mm256_loadu_si256((const __m256i *)(s + n - 32));
    size_t skip = 32 - ((uintptr_t)d & 31);
    unsigned char *p = d + skip, *end = d + n - 64;
    const unsigned char *q = s + skip;
    while (p + 128 <= end) {
        __m256i a = _mm256_loadu_si256((const __m256i *)q);
        __m256i b = _mm256_loadu_si256((const __m256i *)(q + 32));
        __m256i c = _mm256_loadu_si256((const __m256i *)(q + 64));
        __m256i e = _mm256_loadu_si256((const __m256i *)(q + 96));
        _mm256_store_si256((__m256i *)p, a);
        _mm256_store_si256((__m256i *)(p + 32), b);
        _mm256_store_si256((__m256i *)(p + 64), c);
        _mm256_store_si256((__m256i *)(p + 96), e);
        p += 128;
        q += 128;
    }
    while (p < end) {
        _mm256_store_si256((__m256i *)p, _mm256_loadu_si256((const __m256i *)q));
        p += 32;
        q += 32;
    }
    _mm256_storeu_si256((__m256i *)d, head);
    _mm256_storeu_si256((__m256i *)(d + n - 64), t0);
    _mm256_storeu_si256((__m256i *)(d + n - 32), t1);
}
#else
void util_copy_wide(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}

void util_copy_nt(void *dst, const void *src, size_t n)
{
    memcpy(dst, src, n);
}
#endif

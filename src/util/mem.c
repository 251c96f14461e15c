/*
 * mem.c - the out-of-line part of util_copy() (mem.h): a forward copy in 64-byte steps of
 * 16-byte unaligned vector loads and stores, for the source/destination distances where
 * `rep movsb` is slow. SSE2 is in every x86-64, so it needs no CPU check.
 */
#include "util/mem.h"

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

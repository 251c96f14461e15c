/*
 * memcpy_alias.c - how a copy's speed depends on the distance between destination and
 * source modulo 4 KiB: glibc's memcpy against util_copy (src/util/mem.h), one process,
 * warm caches. On AMD Zen, glibc's `rep movsb` (from 2112 bytes) is 8-30 times slower
 * when the destination is 1-31 bytes above the source modulo 4 KiB; util_copy avoids it.
 *
 * usage: memcpy_alias [BYTES ...]   (default 3072 8192 65536)
 * Prints, per size and distance, ns per copy for memcpy and util_copy (best of 5 runs).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/mem.h"

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static double time_copy(int use_util, char *dst, const char *src, size_t n)
{
    int reps = (int)(200000000 / (n + 1000));
    if (reps < 50) reps = 50;
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
        double t0 = now_ns();
        for (int k = 0; k < reps; k++) {
            if (use_util)
                util_copy(dst, src, n);
            else
                memcpy(dst, src, n);
            __asm__ volatile("" : : "r"(dst) : "memory");
        }
        double t = (now_ns() - t0) / reps;
        if (t < best) best = t;
    }
    return best;
}

int main(int argc, char **argv)
{
    size_t def[] = {3072, 8192, 65536};
    int nsize = argc > 1 ? argc - 1 : 3;
    const int dist[] = {0, 8, 16, 24, 31, 32, 36, 40, 48, 56, 63, 64, 4064, 4088};
    size_t cap = 1 << 21;
    char *a = aligned_alloc(4096, cap + 8192), *b = aligned_alloc(4096, cap + 8192);
    if (a == NULL || b == NULL) return 1;
    memset(a, 1, cap + 8192);
    memset(b, 2, cap + 8192);
    printf("%8s %9s %12s %12s %8s\n", "bytes", "dst-src", "memcpy ns", "util_copy ns", "ratio");
    for (int i = 0; i < nsize; i++) {
        size_t n = argc > 1 ? strtoull(argv[i + 1], NULL, 0) : def[i];
        if (n == 0 || n > cap) continue;
        for (size_t j = 0; j < sizeof dist / sizeof dist[0]; j++) {
            double m = time_copy(0, b + dist[j], a, n), u = time_copy(1, b + dist[j], a, n);
            printf("%8zu %9d %12.1f %12.1f %8.2f\n", n, dist[j], m, u, m / u);
        }
    }
    free(a);
    free(b);
    return 0;
}

/*
 * bench_util.h - what every tern benchmark shares, whatever library it measures:
 * the clock, the statistics over trials, the size list, the iteration schedule and
 * the two output formats (a human table and the CSV that bench/compare.sh joins).
 *
 * Header-only on purpose: bench/mpi_*.c are compiled by any mpicc outside CMake, so
 * everything they need must come in through #include from this directory.
 *
 * One row of output is one measurement: a pattern at one message size, run for
 * `trials` trials of `iters` iterations each after a warm-up. Each trial gives an
 * average time per operation; a row reports the minimum and the median of those.
 * What "operation" means is fixed per pattern (one-way message time for a
 * ping-pong, time per message for streaming, per hop for a ring) and printed in
 * the table heading, so numbers from different libraries are comparable.
 */
#ifndef TERN_BENCH_UTIL_H
#define TERN_BENCH_UTIL_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * The clock. Every library is timed with the same clock (not tern_wtime or
 * MPI_Wtime) so that no difference in the numbers can come from the timer.
 */
static inline double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static inline double bench_median_sorted(const double *v, int n)
{
    return (n % 2) ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Minimum and median of n samples (the array is sorted in place). */
static inline void bench_stats(double *v, int n, double *min, double *med)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    *min = v[0];
    *med = bench_median_sorted(v, n);
}

/* "64", "8K", "4M", "1G" (binary multiples) -> bytes; returns 0 on success. */
static inline int bench_parse_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s) return -1;
    switch (*end) {
    case 'k':
    case 'K':
        v <<= 10;
        end++;
        break;
    case 'm':
    case 'M':
        v <<= 20;
        end++;
        break;
    case 'g':
    case 'G':
        v <<= 30;
        end++;
        break;
    default:
        break;
    }
    if (*end == 'i' || *end == 'B') end++;
    if (*end == 'B') end++;
    if (*end) return -1;
    *out = (size_t)v;
    return 0;
}

static inline const char *bench_fmt_size(size_t b, char *buf, size_t n)
{
    if (b >= (1u << 20) && b % (1u << 20) == 0)
        snprintf(buf, n, "%zuM", b >> 20);
    else if (b >= 1024 && b % 1024 == 0)
        snprintf(buf, n, "%zuK", b >> 10);
    else
        snprintf(buf, n, "%zu", b);
    return buf;
}

/*
 * The size list: 0, then powers of two from max(min,1) up to max. With perturb
 * (NetPIPE's -p), each power of two p > 3 also gets p-3 and p+3, which exposes
 * alignment effects and protocol thresholds that sit exactly on a power of two.
 * Returns the number of sizes written to out (capacity cap).
 */
static inline int bench_sizes(size_t min, size_t max, int perturb, size_t *out, int cap)
{
    int n = 0;
    if (min == 0 && n < cap) out[n++] = 0;
    for (size_t p = 1; p <= max && n < cap; p <<= 1) {
        if (perturb && p > 3 && p - 3 >= min && n < cap) out[n++] = p - 3;
        if (p >= min && n < cap) out[n++] = p;
        if (perturb && p > 3 && p + 3 <= max && n < cap) out[n++] = p + 3;
        if (p > SIZE_MAX / 2) break;
    }
    return n;
}

/*
 * The iteration schedule, the same for every library: up to max_iters iterations
 * for small messages, then as many as move `budget` bytes per trial, but never
 * fewer than min_iters.
 */
static inline long bench_iters(size_t bytes, size_t budget, long max_iters, long min_iters)
{
    long it = bytes ? (long)(budget / bytes) : max_iters;
    if (it > max_iters) it = max_iters;
    if (it < min_iters) it = min_iters;
    return it;
}

/* Warm-up iterations before the timed trials of one size. */
static inline long bench_warmup(long iters)
{
    long w = iters / 10;
    return w < 2 ? 2 : w;
}

/* ---- output ------------------------------------------------------------- */

struct bench_row {
    const char *lib;     /* "tern", "openmpi", "mpich", "raw" */
    const char *pattern; /* "pingpong", "stream", "ring", "cacheline", "memcpy" */
    const char *mode;    /* "standard", "sync", "pinned", "unpinned", "-" */
    int nprocs;
    size_t bytes;
    long iters; /* timed iterations per trial */
    int trials;
    double t_min; /* seconds per operation, best trial */
    double t_med; /* seconds per operation, median trial */
    double t_max; /* seconds per operation, worst trial (0: not recorded) */
    double t_mad; /* median absolute deviation of the trials from t_med */
};

/*
 * Everything a row reports about its trials: min, median, max, and the median
 * absolute deviation (a spread that one descheduled trial cannot inflate, unlike
 * the standard deviation). Sorts v in place.
 */
static inline void bench_stats_row(double *v, int n, struct bench_row *r)
{
    double dev[1000];
    bench_stats(v, n, &r->t_min, &r->t_med);
    r->t_max = v[n - 1];
    if (n > (int)(sizeof dev / sizeof dev[0])) n = (int)(sizeof dev / sizeof dev[0]);
    for (int i = 0; i < n; i++)
        dev[i] = v[i] > r->t_med ? v[i] - r->t_med : r->t_med - v[i];
    qsort(dev, (size_t)n, sizeof *dev, bench_cmp_double);
    r->t_mad = bench_median_sorted(dev, n);
}

static const char bench_csv_header[] =
    "lib,pattern,mode,nprocs,bytes,iters,trials,t_min_us,t_med_us,MBps_max,MBps_med,t_max_us,"
    "t_mad_us";

static inline void bench_print_heading(int csv, const char *lib, const char *pattern,
                                       const char *mode, int nprocs, const char *what)
{
    if (csv) return;
    printf("\n# %s %s mode=%s nprocs=%d  (time = %s; MB/s = 1e6 bytes per second)\n", lib, pattern,
           mode, nprocs, what);
    printf("%10s %9s %12s %12s %12s %12s\n", "bytes", "iters", "t_min(us)", "t_med(us)",
           "MB/s(best)", "MB/s(med)");
}

static inline void bench_print_row(int csv, const struct bench_row *r)
{
    double bw_max = r->t_min > 0 ? (double)r->bytes / r->t_min / 1e6 : 0;
    double bw_med = r->t_med > 0 ? (double)r->bytes / r->t_med / 1e6 : 0;
    if (csv)
        printf("%s,%s,%s,%d,%zu,%ld,%d,%.4f,%.4f,%.2f,%.2f,%.4f,%.4f\n", r->lib, r->pattern,
               r->mode, r->nprocs, r->bytes, r->iters, r->trials, r->t_min * 1e6, r->t_med * 1e6,
               bw_max, bw_med, r->t_max * 1e6, r->t_mad * 1e6);
    else
        printf("%10zu %9ld %12.3f %12.3f %12.1f %12.1f\n", r->bytes, r->iters, r->t_min * 1e6,
               r->t_med * 1e6, bw_max, bw_med);
    fflush(stdout);
}

/* Page-aligned buffer, touched so that no page fault lands inside a timed loop. */
static inline void *bench_alloc(size_t bytes)
{
    void *p = NULL;
    if (bytes == 0) bytes = 64;
    if (posix_memalign(&p, 4096, bytes)) return NULL;
    memset(p, 0xa5, bytes);
    return p;
}

#endif /* TERN_BENCH_UTIL_H */

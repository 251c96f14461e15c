/*
 * nt_copy.c - what the sender's copy into shared memory costs written as usual against
 * written around the caches (util_copy against util_copy_nt, src/util/mem.h), outside
 * the library: two forked processes pinned to two cores play ping-pong with n-byte frames
 * through a ring of four frame slots per direction; each copies the frame in, publishes
 * it with a release store, and copies the other's frame out. An ordinary store must first
 * take each line back from the cache of the core that read it last; where the two cores
 * share no cache that costs several times a copy from memory.
 *
 * usage: nt_copy [BYTES ...]   (default 1024 2048 4096 8192 16384 32768)
 * Prints, per size, the one-way time per frame each way and their ratio, and the host's
 * cache-line time between the two cores measured the same way with 8-byte frames.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/cpu.h"
#include "util/mem.h"

#define SLOTS    4
#define SLOT_MAX (64 * 1024)

struct dir {
    _Alignas(64) _Atomic unsigned long seq;
    _Alignas(64) unsigned char ring[SLOTS * SLOT_MAX];
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void pin(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s) != 0) perror("nt_copy: sched_setaffinity");
}

static void copy_in(unsigned char *dst, const unsigned char *src, size_t n, int nt)
{
    if (nt)
        util_copy_nt(dst, src, n);
    else
        util_copy(dst, src, n);
}

/* One-way microseconds per frame of n bytes, each side writing with `nt`. */
static double run(struct dir *d, size_t n, int nt, int iters)
{
    for (int i = 0; i < 2; i++)
        atomic_store(&d[i].seq, 0);
    pid_t pid = fork();
    if (pid < 0) {
        perror("nt_copy: fork");
        exit(1);
    }
    int me = pid == 0;
    pin(me);
    unsigned char *src = aligned_alloc(64, SLOT_MAX), *dst = aligned_alloc(64, SLOT_MAX);
    if (!src || !dst) exit(1);
    memset(src, me + 1, SLOT_MAX);
    memset(dst, 0, SLOT_MAX);
    struct dir *out = &d[me], *in = &d[!me];
    size_t stride = (n + 63) & ~(size_t)63;
    double t0 = 0;
    int warm = iters / 10;
    for (int i = 0; i < iters + warm; i++) {
        if (i == warm) t0 = now_s();
        unsigned long k = (unsigned long)i;
        size_t at = (k % SLOTS) * stride;
        if (me == 1) {
            while (atomic_load_explicit(&in->seq, memory_order_acquire) != k + 1)
                util_cpu_relax();
            util_copy(dst, in->ring + at, n);
        }
        copy_in(out->ring + at, src, n, nt);
        atomic_store_explicit(&out->seq, k + 1, memory_order_release);
        if (me == 0) {
            while (atomic_load_explicit(&in->seq, memory_order_acquire) != k + 1)
                util_cpu_relax();
            util_copy(dst, in->ring + at, n);
        }
    }
    double t = now_s() - t0;
    free(src);
    free(dst);
    if (me == 1) _exit(0);
    waitpid(pid, NULL, 0);
    return t / iters / 2 * 1e6;
}

int main(int argc, char **argv)
{
    size_t def[] = {1024, 2048, 4096, 8192, 16384, 32768};
    size_t nsz = argc > 1 ? (size_t)(argc - 1) : sizeof def / sizeof def[0];
    struct dir *d = mmap(NULL, 2 * sizeof(struct dir), PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (d == MAP_FAILED) {
        perror("nt_copy: mmap");
        return 1;
    }
    memset(d, 0, 2 * sizeof(struct dir));
    printf("# AVX2 streaming stores: %s\n",
           util_copy_wide_ok ? "yes" : "no (util_copy_nt copies as usual)");
    printf("# one-way us per frame, cores 0 and 1; 8-byte frames (the cache-line time): %.3f\n",
           run(d, 8, 0, 200000));
    printf("%10s %12s %12s %8s\n", "bytes", "usual", "around", "ratio");
    for (size_t i = 0; i < nsz; i++) {
        size_t n = argc > 1 ? strtoull(argv[i + 1], NULL, 0) : def[i];
        if (n == 0 || n > SLOT_MAX) {
            fprintf(stderr, "nt_copy: %zu bytes: sizes are 1 to %d\n", n, SLOT_MAX);
            return 2;
        }
        int iters = (int)(400000000 / (n + 4000));
        double a = run(d, n, 0, iters), b = run(d, n, 1, iters);
        printf("%10zu %12.3f %12.3f %8.2f\n", n, a, b, a / b);
    }
    return 0;
}

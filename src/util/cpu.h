/*
 * cpu.h - util_cpu_relax(), the one pause instruction of a spin loop, and the CPU's
 * cycle counter (util_cpu_counter, util_cpu_counter_invariant, util_cpu_ticks), for every
 * architecture:
 * code includes this instead of naming an instruction itself, so the tree builds (and
 * spins politely) wherever a C compiler runs.
 */
#ifndef TERN_UTIL_CPU_H
#define TERN_UTIL_CPU_H

#include <stdint.h>
#include <time.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

/*
 * Tell the CPU that this is a spin-wait loop. On x86 `pause` lets the sibling hyperthread
 * run and avoids the memory-order flush when the loop exits; on aarch64 `yield` is the
 * architected hint. Elsewhere a compiler barrier: the loop reloads what it polls, which
 * is all a spin loop needs to be correct.
 */
static inline void util_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__) || (defined(__arm__) && defined(__ARM_ARCH) && __ARM_ARCH >= 7)
    __asm__ __volatile__("yield" ::: "memory");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}

/* Does the CPU have a counter that ticks at a constant rate whatever the core's clock and
 * sleep state, the same on every core (x86's invariant TSC, aarch64's virtual counter)?
 * Asks the CPU (cpuid) each time: call it once. */
static inline int util_cpu_counter_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) == 0 || a < 0x80000007u) return 0;
    __get_cpuid(0x80000007u, &a, &b, &c, &d);
    return (d >> 8) & 1;
#elif defined(__aarch64__)
    return 1;
#else
    return 0;
#endif
}

/* That counter (0 where there is none: check util_cpu_counter_invariant first). */
static inline uint64_t util_cpu_counter(void)
{
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc();
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v)::"memory");
    return v;
#else
    return 0;
#endif
}

/* A time stamp: the counter when `counter` (the caller's util_cpu_counter_invariant(),
 * asked once), else CLOCK_MONOTONIC in ns. */
static inline uint64_t util_cpu_ticks(int counter)
{
    if (__builtin_expect(counter, 1)) return util_cpu_counter();
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif

/*
 * cpu.h - util_cpu_relax(), the one pause instruction of a spin loop, for every
 * architecture: spinning code includes this instead of naming an instruction itself,
 * so the tree builds (and spins politely) wherever a C compiler runs.
 */
#ifndef TERN_UTIL_CPU_H
#define TERN_UTIL_CPU_H

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

#endif

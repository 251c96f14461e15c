/*
 * atomics.c - atomics under contention and the semantics of every operation.
 *  - every PE increments one counter (on the last PE) 10^5 times, half with atomic_inc
 *    and half with atomic_fetch_inc, and a 32-bit counter on PE 0 with atomic_add: the
 *    totals must be exact; the fetch_inc values one PE saw must be strictly increasing;
 *  - fetch, set, swap, compare_swap (hit and miss), fetch_add, fetch_and/or/xor and the
 *    deprecated names give the values the specification says, for 32- and 64-bit types,
 *    on the heap and on globals.
 */
#include "shmem_check.h"

#define NINC 100000

static long long gcount; /* a global counter, symmetric */

#define SEMANTICS(N, T)                                                                            \
    do {                                                                                           \
        MP_WHERE("semantics " #N);                                                                 \
        T *x = shmem_calloc(1, sizeof(T));                                                         \
        CHECK(x != NULL);                                                                          \
        int t = (me + 1) % n; /* each PE works on its right neighbour's word */                    \
        shmem_barrier_all();                                                                       \
        shmem_##N##_atomic_set(x, (T)5, t);                                                        \
        shmem_quiet();                                                                             \
        CHECK(shmem_##N##_atomic_fetch(x, t) == (T)5);                                             \
        CHECK(shmem_##N##_atomic_swap(x, (T)9, t) == (T)5);                                        \
        CHECK(shmem_##N##_atomic_compare_swap(x, (T)8, (T)1, t) == (T)9);  /* miss */              \
        CHECK(shmem_##N##_atomic_compare_swap(x, (T)9, (T)12, t) == (T)9); /* hit */               \
        CHECK(shmem_##N##_atomic_fetch_add(x, (T)3, t) == (T)12);                                  \
        CHECK(shmem_##N##_atomic_fetch_inc(x, t) == (T)15);                                        \
        shmem_##N##_atomic_add(x, (T)4, t);                                                        \
        shmem_##N##_atomic_inc(x, t);                                                              \
        shmem_quiet();                                                                             \
        CHECK(shmem_##N##_atomic_fetch(x, t) == (T)21);                                            \
        T f = 0;                                                                                   \
        shmem_##N##_atomic_fetch_add_nbi(&f, x, (T)1, t);                                          \
        shmem_quiet();                                                                             \
        CHECK(f == (T)21);                                                                         \
        shmem_barrier_all();                                                                       \
        CHECK(*x == (T)22);                                                                        \
        shmem_free(x);                                                                             \
    } while (0)

#define BITS(N, T)                                                                                 \
    do {                                                                                           \
        MP_WHERE("bitwise " #N);                                                                   \
        T *x = shmem_calloc(1, sizeof(T));                                                         \
        CHECK(x != NULL);                                                                          \
        int t = (me + 1) % n;                                                                      \
        shmem_barrier_all();                                                                       \
        shmem_##N##_atomic_set(x, (T)0xf0f0, t);                                                   \
        shmem_quiet();                                                                             \
        CHECK(shmem_##N##_atomic_fetch_and(x, (T)0x0ff0, t) == (T)0xf0f0);                         \
        CHECK(shmem_##N##_atomic_fetch_or(x, (T)0x000f, t) == (T)0x00f0);                          \
        CHECK(shmem_##N##_atomic_fetch_xor(x, (T)0x0101, t) == (T)0x00ff);                         \
        shmem_##N##_atomic_and(x, (T)0x0ff0, t);                                                   \
        shmem_##N##_atomic_or(x, (T)0x8000, t);                                                    \
        shmem_##N##_atomic_xor(x, (T)0x0001, t);                                                   \
        shmem_quiet();                                                                             \
        CHECK(shmem_##N##_atomic_fetch(x, t) == (T)0x81f1);                                        \
        shmem_barrier_all();                                                                       \
        shmem_free(x);                                                                             \
    } while (0)

int main(void)
{
    sh_init();
    int me = sh_me, n = sh_n, last = n - 1;
    long long *counter = shmem_calloc(1, sizeof *counter);
    int32_t *c32 = shmem_calloc(1, sizeof *c32);
    CHECK(counter && c32);

    MP_WHERE("contention");
    long long prev = -1;
    for (int i = 0; i < NINC; i++) {
        if (i & 1) {
            long long v = shmem_longlong_atomic_fetch_inc(counter, last);
            CHECKF(v > prev, "fetch_inc went back: %lld after %lld", v, prev);
            prev = v;
        } else {
            shmem_longlong_atomic_inc(counter, last);
        }
        shmem_int32_atomic_add(c32, 2, 0);
        if (i % 1000 == 0) shmem_longlong_atomic_add(&gcount, 1000, 0);
    }
    shmem_barrier_all();
    if (me == last) CHECK_EQ_INT(*counter, (long long)n * NINC);
    if (me == 0) CHECK_EQ_INT(*c32, 2LL * n * NINC);
    if (me == 0) CHECK_EQ_INT(gcount, (long long)n * NINC);
    CHECK_EQ_INT(shmem_longlong_atomic_fetch(counter, last), (long long)n * NINC);
    CHECK_EQ_INT(shmem_longlong_atomic_fetch(&gcount, 0), (long long)n * NINC);

#define SEM_ONE(N, T)  SEMANTICS(N, T);
#define BITS_ONE(N, T) BITS(N, T);
    SHMEM__AMO_STD_TYPES(SEM_ONE)
    SHMEM__AMO_BIT_TYPES(BITS_ONE)

    MP_WHERE("float/double and deprecated names");
    double *d = shmem_calloc(2, sizeof *d);
    CHECK(d);
    int t = (me + 1) % n;
    shmem_double_atomic_set(d, 1.5, t);
    shmem_quiet();
    CHECK(shmem_double_atomic_fetch(d, t) == 1.5);
    CHECK(shmem_double_atomic_swap(d, -2.25, t) == 1.5);
    CHECK(shmem_double_swap(d, 4.0, t) == -2.25);
    long *l = (long *)(d + 1);
    shmem_long_set(l, 40, t);
    shmem_quiet();
    CHECK(shmem_long_finc(l, t) == 40);
    CHECK(shmem_long_fadd(l, 2, t) == 41);
    CHECK(shmem_long_cswap(l, 43, 7, t) == 43);
    CHECK(shmem_long_fetch(l, t) == 7);
    shmem_barrier_all();
    shmem_free(d);
    shmem_free(c32);
    shmem_free(counter);
    sh_finish();
    return 0;
}

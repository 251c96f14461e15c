/*
 * aset.c - the OpenSHMEM 1.4 active-set collectives, as the OSU OpenSHMEM benchmarks use
 * them: shmem_barrier / shmem_sync, broadcast32/64 (every root; the root's dest left
 * alone), collect32/64 (a different count per PE), fcollect32/64 and every
 * TYPE_OP_to_all, with results checked, on the whole world, on the even and the odd PEs
 * at the same time (two disjoint sets), on a stride-4 set and on each PE alone; each set
 * twice (its team is made once and reused).
 */
#include "shmem_check.h"

#define N 64

static long psync[SHMEM_REDUCE_SYNC_SIZE];
static long pwrk_l[_SHMEM_REDUCE_MIN_WRKDATA_SIZE];
static int32_t *s32, *d32;
static int64_t *s64, *d64;
static short *rs_short, *rd_short;
static int *rs_int, *rd_int;
static long *rs_long, *rd_long;
static long long *rs_longlong, *rd_longlong;
static float *rs_float, *rd_float;
static double *rs_double, *rd_double;
static long double *rs_longdouble, *rd_longdouble;

/* Member i's element k: small positive numbers for max/min/sum/prod, one bit for the
 * bitwise operations. */
static long val(int i, int k)
{
    return 1 + (i + k) % 3;
}
static long bit(int i, int k)
{
    return 1L << ((i * 3 + k) % 11);
}

#define ARITH(N_, T)                                                                               \
    do {                                                                                           \
        MP_WHERE("set (%d,%d,%d) " #N_ " arithmetic", start, logs, size);                          \
        for (int k = 0; k < N; k++)                                                                \
            rs_##N_[k] = (T)val(me, k);                                                            \
        shmem_##N_##_sum_to_all(rd_##N_, rs_##N_, N, start, logs, size, (T *)pwrk_l, psync);      \
        for (int k = 0; k < N; k++) {                                                              \
            long w = 0;                                                                            \
            for (int i = 0; i < size; i++)                                                         \
                w += val(i, k);                                                                    \
            CHECKF(rd_##N_[k] == (T)w, #N_ " sum [%d]", k);                                        \
        }                                                                                          \
        shmem_##N_##_prod_to_all(rd_##N_, rs_##N_, N, start, logs, size, (T *)pwrk_l, psync);     \
        for (int k = 0; k < N; k++) {                                                              \
            long w = 1;                                                                            \
            for (int i = 0; i < size; i++)                                                         \
                w *= val(i, k);                                                                    \
            CHECKF(rd_##N_[k] == (T)w, #N_ " prod [%d]", k);                                       \
        }                                                                                          \
        shmem_##N_##_max_to_all(rd_##N_, rs_##N_, N, start, logs, size, (T *)pwrk_l, psync);      \
        for (int k = 0; k < N; k++)                                                                \
            CHECKF(rd_##N_[k] == (T)(size >= 3 ? 3 : val(size - 1, k) > val(0, k) ? val(size - 1, k) : val(0, k)), \
                   #N_ " max [%d]", k);                                                            \
        /* In place. */                                                                            \
        shmem_##N_##_min_to_all(rs_##N_, rs_##N_, N, start, logs, size, (T *)pwrk_l, psync);      \
        for (int k = 0; k < N; k++)                                                                \
            CHECKF(rs_##N_[k] == (T)(size >= 3 ? 1 : val(size - 1, k) < val(0, k) ? val(size - 1, k) : val(0, k)), \
                   #N_ " min [%d]", k);                                                            \
    } while (0)

#define BITS(N_, T)                                                                                \
    do {                                                                                           \
        MP_WHERE("set (%d,%d,%d) " #N_ " bitwise", start, logs, size);                             \
        for (int k = 0; k < N; k++)                                                                \
            rs_##N_[k] = (T)(bit(me, k) | 0x1000);                                                 \
        shmem_##N_##_or_to_all(rd_##N_, rs_##N_, N, start, logs, size, (T *)pwrk_l, psync);       \
        for (int k = 0; k < N; k++) {                                                              \
            long w = 0x1000;                                                                       \
            for (int i = 0; i < size; i++)                                                         \
                w |= bit(i, k);                                                                    \
            CHECKF(rd_##N_[k] == (T)w, #N_ " or [%d]", k);                                         \
        }                                                                                          \
        shmem_##N_##_and_to_all(rd_##N_, rs_##N_, N, start, logs, size, (T *)pwrk_l, psync);      \
        for (int k = 0; k < N; k++) {                                                              \
            long w = -1;                                                                           \
            for (int i = 0; i < size; i++)                                                         \
                w &= bit(i, k) | 0x1000;                                                           \
            CHECKF(rd_##N_[k] == (T)w, #N_ " and [%d]", k);                                        \
        }                                                                                          \
        shmem_##N_##_xor_to_all(rd_##N_, rs_##N_, N, start, logs, size, (T *)pwrk_l, psync);      \
        for (int k = 0; k < N; k++) {                                                              \
            long w = 0;                                                                            \
            for (int i = 0; i < size; i++)                                                         \
                w ^= bit(i, k) | 0x1000;                                                           \
            CHECKF(rd_##N_[k] == (T)w, #N_ " xor [%d]", k);                                        \
        }                                                                                          \
    } while (0)

static void run_set(int start, int logs, int size)
{
    int stride = 1 << logs, me = (sh_me - start) / stride;
    MP_WHERE("set (%d,%d,%d) barrier", start, logs, size);
    shmem_barrier(start, logs, size, psync);
    shmem_sync(start, logs, size, psync);

    for (int root = 0; root < size; root++) {
        MP_WHERE("set (%d,%d,%d) broadcast root %d", start, logs, size, root);
        for (int k = 0; k < N; k++) {
            s32[k] = me * 1000 + k;
            s64[k] = ((int64_t)me << 40) + k;
            d32[k] = -1;
            d64[k] = -1;
        }
        shmem_broadcast32(d32, s32, N, root, start, logs, size, psync);
        shmem_broadcast64(d64, s64, N, root, start, logs, size, psync);
        for (int k = 0; k < N; k++) {
            CHECKF(d32[k] == (me == root ? -1 : root * 1000 + k), "broadcast32 [%d]", k);
            CHECKF(d64[k] == (me == root ? -1 : ((int64_t)root << 40) + k), "broadcast64 [%d]", k);
        }
    }

    MP_WHERE("set (%d,%d,%d) fcollect", start, logs, size);
    for (int k = 0; k < N; k++) {
        s32[k] = me * 1000 + k;
        s64[k] = ((int64_t)me << 40) + k;
    }
    shmem_fcollect32(d32, s32, N, start, logs, size, psync);
    shmem_fcollect64(d64, s64, N, start, logs, size, psync);
    for (int i = 0; i < size; i++)
        for (int k = 0; k < N; k++) {
            CHECK(d32[i * N + k] == i * 1000 + k);
            CHECK(d64[i * N + k] == ((int64_t)i << 40) + k);
        }

    MP_WHERE("set (%d,%d,%d) collect", start, logs, size);
    /* Member i gives i + 1 elements. */
    shmem_collect32(d32, s32, (size_t)me + 1, start, logs, size, psync);
    shmem_collect64(d64, s64, (size_t)me + 1, start, logs, size, psync);
    int at = 0;
    for (int i = 0; i < size; i++)
        for (int k = 0; k <= i; k++, at++) {
            CHECK(d32[at] == i * 1000 + k);
            CHECK(d64[at] == ((int64_t)i << 40) + k);
        }

    ARITH(short, short);
    ARITH(int, int);
    ARITH(long, long);
    ARITH(longlong, long long);
    ARITH(float, float);
    ARITH(double, double);
    ARITH(longdouble, long double);
    BITS(short, short);
    BITS(int, int);
    BITS(long, long);
    BITS(longlong, long long);
}

int main(void)
{
    sh_init();
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        psync[i] = SHMEM_SYNC_VALUE;
    size_t big = (size_t)N * (size_t)sh_n;
    s32 = shmem_malloc(N * sizeof *s32);
    d32 = shmem_malloc(big * sizeof *d32);
    s64 = shmem_malloc(N * sizeof *s64);
    d64 = shmem_malloc(big * sizeof *d64);
#define ALLOC(N_, T)                                                                               \
    rs_##N_ = shmem_malloc(N * sizeof(T));                                                         \
    rd_##N_ = shmem_malloc(N * sizeof(T));                                                         \
    CHECK(rs_##N_ && rd_##N_);
    ALLOC(short, short)
    ALLOC(int, int)
    ALLOC(long, long)
    ALLOC(longlong, long long)
    ALLOC(float, float)
    ALLOC(double, double)
    ALLOC(longdouble, long double)
    CHECK(s32 && d32 && s64 && d64);
    for (int rep = 0; rep < 2; rep++) {
        run_set(0, 0, sh_n);
        /* The even PEs and the odd PEs at the same time. */
        if (sh_me % 2 == 0)
            run_set(0, 1, (sh_n + 1) / 2);
        else
            run_set(1, 1, sh_n / 2);
        if (sh_me % 4 == 0) run_set(0, 2, (sh_n + 3) / 4);
        run_set(sh_me, 0, 1);
        shmem_barrier_all();
    }
    for (int i = 0; i < SHMEM_REDUCE_SYNC_SIZE; i++)
        CHECK(psync[i] == SHMEM_SYNC_VALUE);
    sh_finish();
    return 0;
}

/*
 * shmem.h - tern's OpenSHMEM-style API: one-sided put, get and atomics on a symmetric
 * heap, point-to-point synchronisation, locks, teams and collectives. The whole
 * contract of the SHMEM layer; docs/SHMEM.md says what is there and what is not.
 *
 * Conventions that hold for every function below:
 *  - PEs (processing elements) are the ranks of the job: `ternrun -n 4 ./prog` runs 4 PEs.
 *    PE numbers are ranks in TERN_COMM_WORLD.
 *  - A symmetric address is an address in the symmetric heap (shmem_malloc and friends)
 *    or of a global or static variable of the program's executable (see docs/SHMEM.md for
 *    the platform limits). Remote addresses passed to put/get/atomics/signals must be
 *    symmetric; local buffers (the source of a put, the destination of a get) may be any
 *    memory.
 *  - Routines that return void cannot return an error. Bad arguments (a PE out of range,
 *    a non-symmetric remote address, a bad comparison or signal operator) are fatal: the
 *    library prints one line "tern shmem [PE n]: <routine>: <TERN_ERR_NAME>: <what>" on
 *    stderr and ends the whole job with exit code 255 (the documented fatal path).
 *  - A PE that died: operations that wait on it end instead of hanging; their results
 *    are undefined and shmemx_error() reports TERN_ERR_PEER_FAILED (only programs that
 *    called tern_tolerate_failures() ever see this: otherwise ternrun ends the job).
 *  - Thread safety: SHMEM_THREAD_SERIALIZED (one thread at a time calls the library).
 *  - The library can be used in the same program as tern.h and mpi.h: call tern_init or
 *    MPI_Init first (or not at all: shmem_init starts tern itself), then shmem_init;
 *    shmem_finalize then leaves tern running for tern_finalize / MPI_Finalize.
 */
#ifndef TERN_SHMEM_H
#define TERN_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* TERN__HIDE_API: only inside libtern built with tracing, where these names are the
 * hidden real definitions behind the tracing entry points (src/trace). */
#ifndef TERN__HIDE_API
#pragma GCC visibility push(default)
#endif

/* ---- library constants ------------------------------------------------------------ */

#define SHMEM_MAJOR_VERSION  1
#define SHMEM_MINOR_VERSION  5
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define SHMEM_MAX_NAME_LEN   256
#define _SHMEM_MAX_NAME_LEN  SHMEM_MAX_NAME_LEN
#define SHMEM_VENDOR_STRING  "tern"
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

/* Thread levels (shmem_init_thread). tern provides SHMEM_THREAD_SERIALIZED. */
#define SHMEM_THREAD_SINGLE     0
#define SHMEM_THREAD_FUNNELED   1
#define SHMEM_THREAD_SERIALIZED 2
#define SHMEM_THREAD_MULTIPLE   3

/* Comparison operators of wait_until / test / signal_wait_until. */
#define SHMEM_CMP_EQ  0
#define SHMEM_CMP_NE  1
#define SHMEM_CMP_GT  2
#define SHMEM_CMP_GE  3
#define SHMEM_CMP_LT  4
#define SHMEM_CMP_LE  5
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE

/* Signal operators of the put-with-signal routines. */
#define SHMEM_SIGNAL_SET 0
#define SHMEM_SIGNAL_ADD 1

/* Active-set constants (OpenSHMEM 1.4): the pSync and pWrk arrays the active-set routines
 * take are accepted and never touched, so one element of each is enough. */
#define SHMEM_SYNC_VALUE               (-1L)
#define SHMEM_BCAST_SYNC_SIZE          1
#define SHMEM_BARRIER_SYNC_SIZE        1
#define SHMEM_REDUCE_SYNC_SIZE         1
#define SHMEM_COLLECT_SYNC_SIZE        1
#define SHMEM_ALLTOALL_SYNC_SIZE       1
#define SHMEM_SYNC_SIZE                1
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE  1
#define _SHMEM_SYNC_VALUE              SHMEM_SYNC_VALUE
#define _SHMEM_BCAST_SYNC_SIZE         SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE       SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE        SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE       SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_ALLTOALL_SYNC_SIZE      SHMEM_ALLTOALL_SYNC_SIZE
#define _SHMEM_SYNC_SIZE               SHMEM_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

/* ---- setup, exit and query ---------------------------------------------------------- */

/**
 * Start the SHMEM layer (collective over every PE). Starts tern first unless the
 * program already called tern_init or MPI_Init. Maps the symmetric heap of
 * SHMEM_SYMMETRIC_SIZE bytes (k/m/g suffixes, default 128m) on every PE, and, on one
 * node, the heaps of the other PEs of the node. Calling it again is a no-op. Errors are
 * fatal (a bad SHMEM_SYMMETRIC_SIZE, a launcher or transport failure): a line naming the
 * cause goes to stderr and the process exits with 255.
 */
void shmem_init(void);

/** shmem_init that reports the thread level: *provided = SHMEM_THREAD_SERIALIZED when
 * requested is SERIALIZED or MULTIPLE, else requested. Returns 0 (errors are fatal). */
int shmem_init_thread(int requested, int *provided);

/** The thread level of the library (SHMEM_THREAD_SERIALIZED, or less if asked). */
void shmem_query_thread(int *provided);

/**
 * Finish (collective): completes every outstanding operation (shmem_quiet), waits for
 * every PE (barrier), unmaps the heaps, and finalizes tern if shmem_init started it.
 * A second call is a no-op.
 */
void shmem_finalize(void);

/** End every PE of the job at once with `status` as the job's exit code. */
void shmem_global_exit(int status) __attribute__((noreturn));

/** This PE's number (0 .. shmem_n_pes()-1), or -1 before shmem_init. */
int shmem_my_pe(void);

/** Number of PEs, or -1 before shmem_init. */
int shmem_n_pes(void);

/** 1 if pe is a PE of the job that is alive and reachable, else 0. */
int shmem_pe_accessible(int pe);

/** 1 if addr is a symmetric address (heap or global) that PE pe can be reached at, else 0. */
int shmem_addr_accessible(const void *addr, int pe);

/**
 * A pointer through which this PE can load and store the symmetric object `dest` of PE
 * pe directly: for PEs on this node whose memory is mapped (shared memory; globals too
 * unless TERN_SHMEM_SHARE_GLOBALS=0), and for this PE itself. NULL for other PEs and for
 * non-symmetric addresses.
 */
void *shmem_ptr(const void *dest, int pe);

/** The OpenSHMEM version this header follows (1.5). */
void shmem_info_get_version(int *major, int *minor);

/** The vendor string "tern" (at most SHMEM_MAX_NAME_LEN bytes with the NUL). */
void shmem_info_get_name(char *name);

/* Classic (pre-1.2) names. start_pes(n) is shmem_init() (n is ignored). */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);
int my_pe(void);
int num_pes(void);

/* ---- symmetric heap ------------------------------------------------------------------ */
/*
 * Every routine here is collective: every PE calls it with the same arguments in the
 * same order, and gets the same offset in its own heap. Each ends with a barrier over
 * every PE (shmem_free and shmem_realloc also start with one, so no PE still uses the
 * memory), as the OpenSHMEM specification says. Blocks are aligned to 64 bytes.
 * When the heap cannot hold a request the routine returns NULL on every PE and PE 0
 * prints "shmem_malloc: symmetric heap exhausted: ..." with the sizes involved; raise
 * SHMEM_SYMMETRIC_SIZE. A size of 0 returns NULL without a barrier.
 */

/** size bytes of symmetric memory, or NULL (exhausted, or size 0). */
void *shmem_malloc(size_t size);

/** shmem_malloc; hints are accepted and ignored. */
void *shmem_malloc_with_hints(size_t size, long hints);
#define SHMEM_MALLOC_ATOMICS_REMOTE 1L
#define SHMEM_MALLOC_SIGNAL_REMOTE  2L

/** count * size bytes of zeroed symmetric memory (zeroed on every PE before return). */
void *shmem_calloc(size_t count, size_t size);

/** size bytes aligned to `alignment` (a power of two), or NULL (also for a bad alignment). */
void *shmem_align(size_t alignment, size_t size);

/**
 * Grow or shrink a symmetric block, keeping its contents up to the smaller size; it may
 * move (to the same offset on every PE). NULL ptr: shmem_malloc. size 0: shmem_free,
 * returns NULL. On exhaustion returns NULL and the old block is untouched.
 */
void *shmem_realloc(void *ptr, size_t size);

/** Release a block of shmem_malloc/calloc/align/realloc. NULL is a no-op (no barrier). */
void shmem_free(void *ptr);

/* Classic names. */
void *shmalloc(size_t size);
void *shmemalign(size_t alignment, size_t size);
void *shrealloc(void *ptr, size_t size);
void shfree(void *ptr);

/* ---- remote memory access -------------------------------------------------------------
 *
 * put: copy nelems elements from the local `source` to the symmetric `dest` on PE pe.
 *      Returns once source may be reused; the data is delivered by shmem_quiet (or, for
 *      ordering only, shmem_fence) or a barrier.
 * get: copy nelems elements of the symmetric `source` on PE pe to the local `dest`;
 *      returns once the data is in dest.
 * p / g: one element. iput / iget: strided: element i goes from source[i * sst] to
 *      dest[i * tst] (strides in elements, positive).
 * _nbi: non-blocking; source (put) may not be reused and dest (get) is not valid until
 *      shmem_quiet returns.
 * put_signal: the put, then (after the data is delivered) sig_addr on PE pe is set to
 *      `signal` (SHMEM_SIGNAL_SET) or has `signal` added (SHMEM_SIGNAL_ADD), atomically.
 *      A PE waiting with shmem_signal_wait_until sees the data once it sees the signal.
 *
 * On PEs of this node the data moves by memcpy between mapped heaps; to other PEs as
 * active messages served by the target's progress engine.
 */

#define SHMEM__RMA_TYPES(X)                                                                        \
    X(float, float)                                                                                \
    X(double, double)                                                                              \
    X(longdouble, long double)                                                                     \
    X(char, char)                                                                                  \
    X(schar, signed char)                                                                          \
    X(short, short)                                                                                \
    X(int, int)                                                                                    \
    X(long, long)                                                                                  \
    X(longlong, long long)                                                                         \
    X(uchar, unsigned char)                                                                        \
    X(ushort, unsigned short)                                                                      \
    X(uint, unsigned int)                                                                          \
    X(ulong, unsigned long)                                                                        \
    X(ulonglong, unsigned long long)                                                               \
    X(int8, int8_t)                                                                                \
    X(int16, int16_t)                                                                              \
    X(int32, int32_t)                                                                              \
    X(int64, int64_t)                                                                              \
    X(uint8, uint8_t)                                                                              \
    X(uint16, uint16_t)                                                                            \
    X(uint32, uint32_t)                                                                            \
    X(uint64, uint64_t)                                                                            \
    X(size, size_t)                                                                                \
    X(ptrdiff, ptrdiff_t)

#define SHMEM__RMA_DECL(N, T)                                                                      \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe);                         \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe);                         \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe);                     \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe);                     \
    void shmem_##N##_p(T *dest, T value, int pe);                                                  \
    T shmem_##N##_g(const T *source, int pe);                                                      \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t tst, ptrdiff_t sst, size_t nelems,   \
                          int pe);                                                                 \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t tst, ptrdiff_t sst, size_t nelems,   \
                          int pe);                                                                 \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,       \
                                uint64_t signal, int sig_op, int pe);                              \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,   \
                                    uint64_t signal, int sig_op, int pe);
SHMEM__RMA_TYPES(SHMEM__RMA_DECL)

/* Sized forms: elements of 8, 16, 32, 64 or 128 bits; putmem/getmem count bytes. */
#define SHMEM__SIZES(X) X(8) X(16) X(32) X(64) X(128)
#define SHMEM__SIZED_DECL(S)                                                                       \
    void shmem_put##S(void *dest, const void *source, size_t nelems, int pe);                      \
    void shmem_get##S(void *dest, const void *source, size_t nelems, int pe);                      \
    void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe);                \
    void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe);                \
    void shmem_iput##S(void *dest, const void *source, ptrdiff_t tst, ptrdiff_t sst,               \
                       size_t nelems, int pe);                                                     \
    void shmem_iget##S(void *dest, const void *source, ptrdiff_t tst, ptrdiff_t sst,               \
                       size_t nelems, int pe);                                                     \
    void shmem_put##S##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,  \
                               uint64_t signal, int sig_op, int pe);                               \
    void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems,                  \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe);
SHMEM__SIZES(SHMEM__SIZED_DECL)

void shmem_putmem(void *dest, const void *source, size_t nbytes, int pe);
void shmem_getmem(void *dest, const void *source, size_t nbytes, int pe);
void shmem_putmem_nbi(void *dest, const void *source, size_t nbytes, int pe);
void shmem_getmem_nbi(void *dest, const void *source, size_t nbytes, int pe);
void shmem_putmem_signal(void *dest, const void *source, size_t nbytes, uint64_t *sig_addr,
                         uint64_t signal, int sig_op, int pe);
void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nbytes, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe);

/** Atomically read a signal word of this PE. */
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);

/**
 * Wait until the local signal word *sig_addr compares true against cmp_value with cmp
 * (SHMEM_CMP_*), then return its value. Serves remote PEs while waiting; spins, then
 * yields, then sleeps in short naps (never polls forever on an oversubscribed node).
 */
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* ---- atomic memory operations ---------------------------------------------------------
 *
 * Atomic with respect to every other atomic operation on the same object, from any PE
 * (real CPU atomics on mapped memory on one node; the target applies them with CPU
 * atomics when they come as messages). Not atomic with respect to puts and plain stores.
 * fetch_* return the value before the operation; compare_swap stores value only if the
 * old value equals cond, and returns the old value.
 */

/* Standard AMO types: every operation. */
#define SHMEM__AMO_STD_TYPES(X)                                                                    \
    X(int, int)                                                                                    \
    X(long, long)                                                                                  \
    X(longlong, long long)                                                                         \
    X(uint, unsigned int)                                                                          \
    X(ulong, unsigned long)                                                                        \
    X(ulonglong, unsigned long long)                                                               \
    X(int32, int32_t)                                                                              \
    X(int64, int64_t)                                                                              \
    X(uint32, uint32_t)                                                                            \
    X(uint64, uint64_t)                                                                            \
    X(size, size_t)                                                                                \
    X(ptrdiff, ptrdiff_t)
/* Extended AMO types: fetch, set, swap only. */
#define SHMEM__AMO_EXT_TYPES(X) SHMEM__AMO_STD_TYPES(X) X(float, float) X(double, double)
/* Bitwise AMO types: and, or, xor. */
#define SHMEM__AMO_BIT_TYPES(X)                                                                    \
    X(uint, unsigned int)                                                                          \
    X(ulong, unsigned long)                                                                        \
    X(ulonglong, unsigned long long)                                                               \
    X(int32, int32_t)                                                                              \
    X(int64, int64_t)                                                                              \
    X(uint32, uint32_t)                                                                            \
    X(uint64, uint64_t)

#define SHMEM__AMO_EXT_DECL(N, T)                                                                  \
    T shmem_##N##_atomic_fetch(const T *source, int pe);                                           \
    void shmem_##N##_atomic_set(T *dest, T value, int pe);                                         \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe);                                           \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe);                          \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe);
#define SHMEM__AMO_STD_DECL(N, T)                                                                  \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe);                           \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe);                                               \
    void shmem_##N##_atomic_inc(T *dest, int pe);                                                  \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe);                                      \
    void shmem_##N##_atomic_add(T *dest, T value, int pe);                                         \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe);          \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe);                              \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe);
#define SHMEM__AMO_BIT_DECL(N, T)                                                                  \
    T shmem_##N##_atomic_fetch_and(T *dest, T value, int pe);                                      \
    void shmem_##N##_atomic_and(T *dest, T value, int pe);                                         \
    T shmem_##N##_atomic_fetch_or(T *dest, T value, int pe);                                       \
    void shmem_##N##_atomic_or(T *dest, T value, int pe);                                          \
    T shmem_##N##_atomic_fetch_xor(T *dest, T value, int pe);                                      \
    void shmem_##N##_atomic_xor(T *dest, T value, int pe);                                         \
    void shmem_##N##_atomic_fetch_and_nbi(T *fetch, T *dest, T value, int pe);                     \
    void shmem_##N##_atomic_fetch_or_nbi(T *fetch, T *dest, T value, int pe);                      \
    void shmem_##N##_atomic_fetch_xor_nbi(T *fetch, T *dest, T value, int pe);
SHMEM__AMO_EXT_TYPES(SHMEM__AMO_EXT_DECL)
SHMEM__AMO_STD_TYPES(SHMEM__AMO_STD_DECL)
SHMEM__AMO_BIT_TYPES(SHMEM__AMO_BIT_DECL)

/* Deprecated (pre-1.4) atomic names, for int, long, longlong (and float/double for
 * fetch/set/swap): shmem_int_finc, shmem_long_fadd, shmem_longlong_cswap, ... */
#define SHMEM__AMO_OLD_STD_DECL(N, T)                                                              \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe);                                         \
    T shmem_##N##_finc(T *dest, int pe);                                                           \
    void shmem_##N##_inc(T *dest, int pe);                                                         \
    T shmem_##N##_fadd(T *dest, T value, int pe);                                                  \
    void shmem_##N##_add(T *dest, T value, int pe);
#define SHMEM__AMO_OLD_EXT_DECL(N, T)                                                              \
    T shmem_##N##_fetch(const T *source, int pe);                                                  \
    void shmem_##N##_set(T *dest, T value, int pe);                                                \
    T shmem_##N##_swap(T *dest, T value, int pe);
#define SHMEM__AMO_OLD_STD_TYPES(X) X(int, int) X(long, long) X(longlong, long long)
#define SHMEM__AMO_OLD_EXT_TYPES(X) SHMEM__AMO_OLD_STD_TYPES(X) X(float, float) X(double, double)
SHMEM__AMO_OLD_STD_TYPES(SHMEM__AMO_OLD_STD_DECL)
SHMEM__AMO_OLD_EXT_TYPES(SHMEM__AMO_OLD_EXT_DECL)

/* ---- ordering and completion ------------------------------------------------------------ */

/** Order: puts, AMOs and signals to any one PE issued before the fence are delivered
 * before those issued after it (to that PE). */
void shmem_fence(void);

/** Complete: every put, put_signal, non-fetching AMO and _nbi operation this PE issued
 * is delivered (visible to every PE) when shmem_quiet returns. */
void shmem_quiet(void);

/** shmem_quiet on every PE, then wait until every PE got here (collective). */
void shmem_barrier_all(void);

/** Wait until every PE got here; no completion of outstanding operations (collective). */
void shmem_sync_all(void);

/* ---- point-to-point synchronisation ----------------------------------------------------
 *
 * ivar is a symmetric object of the calling PE that other PEs update. wait_until blocks
 * until `*ivar cmp cmp_value` holds (cmp: SHMEM_CMP_EQ, NE, GT, GE, LT, LE); test only
 * checks (1 true, 0 false). The _all/_any/_some forms look at nelems objects, skipping
 * those whose status[i] is non-zero (status may be NULL): _all waits for every one; _any
 * returns the index of one that satisfied (SIZE_MAX if none can: all skipped or nelems
 * 0); _some stores the indices of every one that satisfied in `indices` and returns how
 * many (at least one, 0 if none can). _vector forms compare ivars[i] with cmp_values[i].
 * test_any / test_some return SIZE_MAX / 0 when nothing satisfied yet.
 * While waiting the PE serves remote operations (spin, then yield, then short sleeps).
 */
#define SHMEM__P2P_TYPES(X)                                                                        \
    X(short, short)                                                                                \
    X(ushort, unsigned short)                                                                      \
    X(int, int)                                                                                    \
    X(long, long)                                                                                  \
    X(longlong, long long)                                                                         \
    X(uint, unsigned int)                                                                          \
    X(ulong, unsigned long)                                                                        \
    X(ulonglong, unsigned long long)                                                               \
    X(int32, int32_t)                                                                              \
    X(int64, int64_t)                                                                              \
    X(uint32, uint32_t)                                                                            \
    X(uint64, uint64_t)                                                                            \
    X(size, size_t)                                                                                \
    X(ptrdiff, ptrdiff_t)

#define SHMEM__P2P_DECL(N, T)                                                                      \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                                    \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,           \
                                    T cmp_value);                                                  \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,         \
                                      T cmp_value);                                                \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                   \
                                       const int *status, int cmp, T cmp_value);                   \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,    \
                                           T *cmp_values);                                         \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status, int cmp,  \
                                             T *cmp_values);                                       \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,            \
                                              const int *status, int cmp, T *cmp_values);          \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                                           \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);    \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value); \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,      \
                                 int cmp, T cmp_value);                                            \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,           \
                                    T *cmp_values);                                                \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,        \
                                       T *cmp_values);                                             \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,                  \
                                        const int *status, int cmp, T *cmp_values);                \
    void shmem_##N##_wait(T *ivar, T cmp_value);
SHMEM__P2P_TYPES(SHMEM__P2P_DECL)

/** Deprecated: wait while *ivar == cmp_value. */
void shmem_wait(long *ivar, long cmp_value);

/* ---- locks ---------------------------------------------------------------------------------
 *
 * `lock` is a symmetric long, zero before first use (for example from shmem_calloc or a
 * zero-initialised global), used only through these calls. The lock lives on PE 0: a
 * ticket lock taken with atomics, so PEs get it in the order they asked for it (fair).
 * shmem_clear_lock completes this PE's outstanding puts (shmem_quiet) before releasing,
 * so the next holder sees what was written under the lock.
 */
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
/** Take the lock if it is free: 0 if taken now, 1 if somebody holds it. */
int shmem_test_lock(long *lock);

/* ---- teams ----------------------------------------------------------------------------------
 *
 * A team is an ordered set of PEs with its own numbering; team collectives run on a tern
 * communicator of the team's PEs. SHMEM_TEAM_WORLD has every PE; SHMEM_TEAM_SHARED the PEs
 * of this node (those shmem_ptr reaches when the shm transport is on, else this PE alone).
 */
typedef struct shmem_team *shmem_team_t;
extern struct shmem_team shmem__team_world;
extern struct shmem_team shmem__team_shared;
#define SHMEM_TEAM_WORLD   (&shmem__team_world)
#define SHMEM_TEAM_SHARED  (&shmem__team_shared)
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)

typedef struct {
    int num_contexts;
} shmem_team_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS 1L

/** This PE's number in team, or -1 if it is not a member (or team is invalid). */
int shmem_team_my_pe(shmem_team_t team);

/** Number of PEs in team, or -1 for an invalid team. */
int shmem_team_n_pes(shmem_team_t team);

/** The number in dest_team of PE src_pe of src_team, or -1 if it is not in dest_team. */
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);

/**
 * Collective over parent: a team of the parent's PEs start, start + stride, ...
 * (size PEs; stride may be negative, not 0 unless size is 1). Members get the new team in
 * *new_team, others SHMEM_TEAM_INVALID. Returns 0, or non-zero on bad arguments (also then
 * *new_team = SHMEM_TEAM_INVALID). config and config_mask are accepted and ignored.
 */
int shmem_team_split_strided(shmem_team_t parent, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);

/** The team's configuration (num_contexts 0). Returns 0, or non-zero for an invalid team. */
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);

/** Free a team made by shmem_team_split_strided (collective over it). World and shared
 * cannot be destroyed (ignored). */
void shmem_team_destroy(shmem_team_t team);

/** Wait until every PE of team got here (no completion of outstanding operations).
 * Returns 0, or non-zero for an invalid team or a failed PE. */
int shmem_team_sync(shmem_team_t team);

/* ---- collectives ------------------------------------------------------------------------
 *
 * Collective over the team (every member calls with the same sizes and root); run on the
 * team's tern communicator with tern's algorithms (src/coll, TERN_COLL_* choose them).
 * dest and source need not be symmetric here. Each returns 0, or non-zero on error (an
 * invalid team, a bad root, a failed PE). nelems counts elements (bytes for *mem).
 *  - broadcast: source of team PE PE_root goes to dest on every member (the root too).
 *  - fcollect: every member's nelems elements, concatenated in team order, on every member.
 *  - collect: like fcollect, but nelems may differ between members.
 *  - alltoall: block j of source goes to block i of dest on member j (blocks of nelems).
 *  - TYPE_OP_reduce: elementwise OP over every member's nreduce elements, on every member.
 */
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);

#define SHMEM__COLL_DECL(N, T)                                                                     \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,          \
                              int PE_root);                                                        \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);          \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);           \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);
SHMEM__RMA_TYPES(SHMEM__COLL_DECL)

/* Reduction types: integer types take every operation, floating ones max/min/sum/prod. */
#define SHMEM__RED_INT_TYPES(X)                                                                    \
    X(char, char)                                                                                  \
    X(schar, signed char)                                                                          \
    X(short, short)                                                                                \
    X(int, int)                                                                                    \
    X(long, long)                                                                                  \
    X(longlong, long long)                                                                         \
    X(ptrdiff, ptrdiff_t)                                                                          \
    X(uchar, unsigned char)                                                                        \
    X(ushort, unsigned short)                                                                      \
    X(uint, unsigned int)                                                                          \
    X(ulong, unsigned long)                                                                        \
    X(ulonglong, unsigned long long)                                                               \
    X(int8, int8_t)                                                                                \
    X(int16, int16_t)                                                                              \
    X(int32, int32_t)                                                                              \
    X(int64, int64_t)                                                                              \
    X(uint8, uint8_t)                                                                              \
    X(uint16, uint16_t)                                                                            \
    X(uint32, uint32_t)                                                                            \
    X(uint64, uint64_t)                                                                            \
    X(size, size_t)
#define SHMEM__RED_FLT_TYPES(X) X(float, float) X(double, double)

#define SHMEM__RED_DECL_OP(N, T, OP)                                                               \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define SHMEM__RED_INT_DECL(N, T)                                                                  \
    SHMEM__RED_DECL_OP(N, T, and)                                                                  \
    SHMEM__RED_DECL_OP(N, T, or)                                                                   \
    SHMEM__RED_DECL_OP(N, T, xor)                                                                  \
    SHMEM__RED_DECL_OP(N, T, max)                                                                  \
    SHMEM__RED_DECL_OP(N, T, min)                                                                  \
    SHMEM__RED_DECL_OP(N, T, sum)                                                                  \
    SHMEM__RED_DECL_OP(N, T, prod)
#define SHMEM__RED_FLT_DECL(N, T)                                                                  \
    SHMEM__RED_DECL_OP(N, T, max)                                                                  \
    SHMEM__RED_DECL_OP(N, T, min)                                                                  \
    SHMEM__RED_DECL_OP(N, T, sum)                                                                  \
    SHMEM__RED_DECL_OP(N, T, prod)
SHMEM__RED_INT_TYPES(SHMEM__RED_INT_DECL)
SHMEM__RED_FLT_TYPES(SHMEM__RED_FLT_DECL)

/* ---- active-set collectives (OpenSHMEM 1.4; deprecated by teams in 1.5) ----------------
 *
 * The active set is the world PEs PE_start, PE_start + 2^logPE_stride, ... (PE_size of
 * them); every member calls with the same arguments, in the same order as its other
 * collectives on overlapping sets. Each set is a team made on its first use (by its
 * members only) and kept until shmem_finalize. pSync and pWrk are accepted and never
 * read or written. Bad arguments (a set outside 0..npes-1, a caller not in it, a bad
 * root) are fatal like every bad argument.
 *  - shmem_barrier: shmem_quiet, then wait for every member; shmem_sync: the wait only.
 *  - broadcast32/64: nelems 32/64-bit elements of source on member PE_root (a number in
 *    the set) to dest on every other member; the root's dest is left alone.
 *  - fcollect32/64: every member's nelems elements, concatenated in set order, on every
 *    member; collect32/64: the same, nelems may differ between members.
 *  - TYPE_OP_to_all: elementwise OP over every member's nreduce elements, in dest of
 *    every member (source == dest allowed).
 */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_broadcast32(void *dest, const void *source, size_t nelems, int PE_root, int PE_start,
                       int logPE_stride, int PE_size, long *pSync);
void shmem_broadcast64(void *dest, const void *source, size_t nelems, int PE_root, int PE_start,
                       int logPE_stride, int PE_size, long *pSync);
void shmem_collect32(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride,
                     int PE_size, long *pSync);
void shmem_collect64(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride,
                     int PE_size, long *pSync);
void shmem_fcollect32(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride,
                      int PE_size, long *pSync);
void shmem_fcollect64(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride,
                      int PE_size, long *pSync);

/* The _to_all types: and/or/xor on the integer ones, max/min/sum/prod on all. */
#define SHMEM__TOALL_INT_TYPES(X)                                                                  \
    X(short, short)                                                                                \
    X(int, int)                                                                                    \
    X(long, long)                                                                                  \
    X(longlong, long long)
#define SHMEM__TOALL_FLT_TYPES(X)                                                                  \
    X(float, float)                                                                                \
    X(double, double)                                                                              \
    X(longdouble, long double)
#define SHMEM__TOALL_DECL_OP(N, T, OP)                                                             \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,            \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define SHMEM__TOALL_INT_DECL(N, T)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, and)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, or)                                                                 \
    SHMEM__TOALL_DECL_OP(N, T, xor)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, max)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, min)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, sum)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, prod)
#define SHMEM__TOALL_FLT_DECL(N, T)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, max)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, min)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, sum)                                                                \
    SHMEM__TOALL_DECL_OP(N, T, prod)
SHMEM__TOALL_INT_TYPES(SHMEM__TOALL_INT_DECL)
SHMEM__TOALL_FLT_TYPES(SHMEM__TOALL_FLT_DECL)

/* ---- tern extensions ------------------------------------------------------------------- */

/**
 * The first error an operation that cannot return one met since the last call (then
 * cleared): TERN_ERR_PEER_FAILED when an operation waited on a PE that died, else 0.
 */
int shmemx_error(void);

#ifndef TERN__HIDE_API
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif

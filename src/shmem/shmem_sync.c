/*
 * shmem_sync.c - waiting on memory (wait_until, test and their _all/_any/_some/_vector
 * forms, signal_wait_until), locks, and the global barrier.
 *
 * Waiting on memory differs from waiting on a message: a PE of this node stores straight
 * into our heap and rings no doorbell, so the core's sleep on doorbells (core_block)
 * could oversleep. osh_block waits with the core's wait engine as a memory wait (spin,
 * then yield, then naps that grow from 50 us to 1 ms), calling the progress engine
 * between them so remote PEs keep being served, and checks peer health while it naps.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "shmem/shmem_impl.h"
#include "util/tunables.h"

/* Looks at the memory per progress call: more lowers the latency of stores from this
 * node, fewer that of requests that need the progress engine (globals, other nodes). */
#define OSH_LOOKS 64

/* Block until done(arg) with the memory-wait strategy: progress + spin, yield, then short
 * naps (other PEs' stores ring no doorbell). 0, or TERN_ERR_PEER_FAILED when a PE died
 * (or the launcher went away) during the wait. */
static int osh_block(int (*done)(const void *arg), const void *arg)
{
    struct core_waiter w;
    core_wait_begin(&w, CORE_WAIT_MEM);
    int nfailed = core.nfailed;
    for (;;) {
        /* Look at the memory a few times per progress call: a store from a PE of this
         * node is seen as soon as its cache line arrives, not after a transport poll. */
        for (int k = 0; k < OSH_LOOKS; k++)
            if (done(arg)) return 0;
        if (core_progress() > 0) {
            core_wait_progressed(&w);
            continue;
        }
        if (done(arg)) return 0;
        if (core.nfailed != nfailed || core.launcher_gone) {
            /* Whoever was to store here may be the PE that died: do not wait forever. */
            osh_error(TERN_ERR_PEER_FAILED);
            return TERN_ERR_PEER_FAILED;
        }
        if (core_wait_idle(&w) == CORE_WAIT_SLEEP) (void)core_health();
    }
}

/* ---- comparisons ------------------------------------------------------------------------ */

/* Load element i of an array of `size`-byte integers, widened (sign-extended if sgn). */
static inline int64_t osh_load(const void *base, size_t i, int size, int sgn, int atomic)
{
    const char *p = (const char *)base + i * (size_t)size;
    int m = atomic ? __ATOMIC_ACQUIRE : __ATOMIC_RELAXED;
    switch (size) {
    case 2: {
        uint16_t v = __atomic_load_n((const uint16_t *)p, m);
        return sgn ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
        uint32_t v = __atomic_load_n((const uint32_t *)p, m);
        return sgn ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default:
        return (int64_t)__atomic_load_n((const uint64_t *)p, m);
    }
}

static inline int osh_compare(int64_t a, int64_t b, int cmp, int sgn)
{
    if (sgn) {
        switch (cmp) {
        case SHMEM_CMP_EQ:
            return a == b;
        case SHMEM_CMP_NE:
            return a != b;
        case SHMEM_CMP_GT:
            return a > b;
        case SHMEM_CMP_GE:
            return a >= b;
        case SHMEM_CMP_LT:
            return a < b;
        default:
            return a <= b;
        }
    }
    uint64_t x = (uint64_t)a, y = (uint64_t)b;
    switch (cmp) {
    case SHMEM_CMP_EQ:
        return x == y;
    case SHMEM_CMP_NE:
        return x != y;
    case SHMEM_CMP_GT:
        return x > y;
    case SHMEM_CMP_GE:
        return x >= y;
    case SHMEM_CMP_LT:
        return x < y;
    default:
        return x <= y;
    }
}

enum osh_mode { OSH_ALL, OSH_ANY, OSH_SOME };

/* One wait or test over ivars[0..n). */
struct osh_wait {
    const void *ivars;
    size_t n;
    const int *status;
    int cmp, size, sgn;
    int64_t value;      /* when values is NULL */
    const void *values; /* _vector forms */
    enum osh_mode mode;
    size_t *indices; /* SOME: out */
    size_t result;   /* ANY: index; SOME: count */
};

static int osh_wait_check(const void *arg)
{
    struct osh_wait *w = (struct osh_wait *)(uintptr_t)arg;
    size_t hits = 0, live = 0;
    for (size_t i = 0; i < w->n; i++) {
        if (w->status && w->status[i]) continue;
        live++;
        int64_t v = osh_load(w->ivars, i, w->size, w->sgn, 1);
        int64_t c = w->values ? osh_load(w->values, i, w->size, w->sgn, 0) : w->value;
        if (!osh_compare(v, c, w->cmp, w->sgn)) continue;
        if (w->mode == OSH_ANY) {
            w->result = i;
            return 1;
        }
        if (w->mode == OSH_SOME) w->indices[hits] = i;
        hits++;
    }
    if (w->mode == OSH_ALL) return hits == live;
    if (w->mode == OSH_SOME) {
        w->result = hits;
        return hits > 0 || live == 0;
    }
    w->result = SIZE_MAX;
    return live == 0;
}

static void osh_wait_args(const char *fn, struct osh_wait *w)
{
    osh_check(fn);
    if (w->cmp < SHMEM_CMP_EQ || w->cmp > SHMEM_CMP_LE)
        osh_fatal(fn, TERN_ERR_INVAL, "comparison %d is not one of SHMEM_CMP_*", w->cmp);
    if (w->n && w->ivars == NULL) osh_fatal(fn, TERN_ERR_BUFFER, "NULL ivars");
    if (w->mode == OSH_SOME && w->n && w->indices == NULL)
        osh_fatal(fn, TERN_ERR_BUFFER, "NULL indices");
    if ((uintptr_t)w->ivars & (size_t)(w->size - 1))
        osh_fatal(fn, TERN_ERR_INVAL, "ivars %p is not aligned", w->ivars);
}

/* wait (block = 1) or test; returns the mode's result (1/0 for ALL tests). */
static size_t osh_wait_run(const char *fn, struct osh_wait *w, int block)
{
    osh_wait_args(fn, w);
    if (!block) {
        int ok = osh_wait_check(w);
        if (!ok) (void)core_progress(); /* a test also serves, so a test loop progresses */
        if (!ok) ok = osh_wait_check(w);
        if (w->mode == OSH_ALL) return (size_t)ok;
        if (!ok) return w->mode == OSH_ANY ? SIZE_MAX : 0;
        return w->result;
    }
    (void)osh_block(osh_wait_check, w);
    return w->mode == OSH_ALL ? 1 : w->result;
}

#define OSH_SGN(T) ((T)-1 < (T)1)

#define OSH_P2P_DEF(N, T)                                                                          \
    void shmem_##N##_wait_until(T *ivar, int cmp, T v)                                             \
    {                                                                                              \
        struct osh_wait w = {ivar,       1,    NULL,    cmp,  sizeof(T), OSH_SGN(T),               \
                             (int64_t)v, NULL, OSH_ALL, NULL, 0};                                  \
        osh_wait_run("shmem_" #N "_wait_until", &w, 1);                                            \
    }                                                                                              \
    void shmem_##N##_wait(T *ivar, T v)                                                            \
    {                                                                                              \
        struct osh_wait w = {ivar,       1,    NULL,    SHMEM_CMP_NE, sizeof(T), OSH_SGN(T),       \
                             (int64_t)v, NULL, OSH_ALL, NULL,         0};                          \
        osh_wait_run("shmem_" #N "_wait", &w, 1);                                                  \
    }                                                                                              \
    void shmem_##N##_wait_until_all(T *ivars, size_t n, const int *st, int cmp, T v)               \
    {                                                                                              \
        struct osh_wait w = {ivars,      n,    st,      cmp,  sizeof(T), OSH_SGN(T),               \
                             (int64_t)v, NULL, OSH_ALL, NULL, 0};                                  \
        osh_wait_run("shmem_" #N "_wait_until_all", &w, 1);                                        \
    }                                                                                              \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t n, const int *st, int cmp, T v)             \
    {                                                                                              \
        struct osh_wait w = {ivars,      n,    st,      cmp,  sizeof(T), OSH_SGN(T),               \
                             (int64_t)v, NULL, OSH_ANY, NULL, 0};                                  \
        return osh_wait_run("shmem_" #N "_wait_until_any", &w, 1);                                 \
    }                                                                                              \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t n, size_t *idx, const int *st, int cmp,    \
                                       T v)                                                        \
    {                                                                                              \
        struct osh_wait w = {ivars,      n,    st,       cmp, sizeof(T), OSH_SGN(T),               \
                             (int64_t)v, NULL, OSH_SOME, idx, 0};                                  \
        return osh_wait_run("shmem_" #N "_wait_until_some", &w, 1);                                \
    }                                                                                              \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t n, const int *st, int cmp, T *vs)      \
    {                                                                                              \
        struct osh_wait w = {ivars, n, st, cmp, sizeof(T), OSH_SGN(T), 0, vs, OSH_ALL, NULL, 0};   \
        osh_wait_run("shmem_" #N "_wait_until_all_vector", &w, 1);                                 \
    }                                                                                              \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t n, const int *st, int cmp, T *vs)    \
    {                                                                                              \
        struct osh_wait w = {ivars, n, st, cmp, sizeof(T), OSH_SGN(T), 0, vs, OSH_ANY, NULL, 0};   \
        return osh_wait_run("shmem_" #N "_wait_until_any_vector", &w, 1);                          \
    }                                                                                              \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t n, size_t *idx, const int *st,      \
                                              int cmp, T *vs)                                      \
    {                                                                                              \
        struct osh_wait w = {ivars, n, st, cmp, sizeof(T), OSH_SGN(T), 0, vs, OSH_SOME, idx, 0};   \
        return osh_wait_run("shmem_" #N "_wait_until_some_vector", &w, 1);                         \
    }                                                                                              \
    int shmem_##N##_test(T *ivar, int cmp, T v)                                                    \
    {                                                                                              \
        struct osh_wait w = {ivar,       1,    NULL,    cmp,  sizeof(T), OSH_SGN(T),               \
                             (int64_t)v, NULL, OSH_ALL, NULL, 0};                                  \
        return (int)osh_wait_run("shmem_" #N "_test", &w, 0);                                      \
    }                                                                                              \
    int shmem_##N##_test_all(T *ivars, size_t n, const int *st, int cmp, T v)                      \
    {                                                                                              \
        struct osh_wait w = {ivars,      n,    st,      cmp,  sizeof(T), OSH_SGN(T),               \
                             (int64_t)v, NULL, OSH_ALL, NULL, 0};                                  \
        return (int)osh_wait_run("shmem_" #N "_test_all", &w, 0);                                  \
    }                                                                                              \
    size_t shmem_##N##_test_any(T *ivars, size_t n, const int *st, int cmp, T v)                   \
    {                                                                                              \
        struct osh_wait w = {ivars,      n,    st,      cmp,  sizeof(T), OSH_SGN(T),               \
                             (int64_t)v, NULL, OSH_ANY, NULL, 0};                                  \
        return osh_wait_run("shmem_" #N "_test_any", &w, 0);                                       \
    }                                                                                              \
    size_t shmem_##N##_test_some(T *ivars, size_t n, size_t *idx, const int *st, int cmp, T v)     \
    {                                                                                              \
        struct osh_wait w = {ivars,      n,    st,       cmp, sizeof(T), OSH_SGN(T),               \
                             (int64_t)v, NULL, OSH_SOME, idx, 0};                                  \
        return osh_wait_run("shmem_" #N "_test_some", &w, 0);                                      \
    }                                                                                              \
    int shmem_##N##_test_all_vector(T *ivars, size_t n, const int *st, int cmp, T *vs)             \
    {                                                                                              \
        struct osh_wait w = {ivars, n, st, cmp, sizeof(T), OSH_SGN(T), 0, vs, OSH_ALL, NULL, 0};   \
        return (int)osh_wait_run("shmem_" #N "_test_all_vector", &w, 0);                           \
    }                                                                                              \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t n, const int *st, int cmp, T *vs)          \
    {                                                                                              \
        struct osh_wait w = {ivars, n, st, cmp, sizeof(T), OSH_SGN(T), 0, vs, OSH_ANY, NULL, 0};   \
        return osh_wait_run("shmem_" #N "_test_any_vector", &w, 0);                                \
    }                                                                                              \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t n, size_t *idx, const int *st, int cmp,   \
                                        T *vs)                                                     \
    {                                                                                              \
        struct osh_wait w = {ivars, n, st, cmp, sizeof(T), OSH_SGN(T), 0, vs, OSH_SOME, idx, 0};   \
        return osh_wait_run("shmem_" #N "_test_some_vector", &w, 0);                               \
    }
SHMEM__P2P_TYPES(OSH_P2P_DEF)

void shmem_wait(long *ivar, long cmp_value)
{
    shmem_long_wait(ivar, cmp_value);
}

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    osh_check("shmem_signal_fetch");
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    struct osh_wait w = {sig_addr, 1, NULL, cmp, 8, 0, (int64_t)cmp_value, NULL, OSH_ALL, NULL, 0};
    osh_wait_run("shmem_signal_wait_until", &w, 1);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

/* ---- locks ------------------------------------------------------------------------------ *
 * A ticket lock in PE 0's copy of the long: its first 32-bit word hands out tickets, the
 * second says which ticket is served. Each half is updated with its own 32-bit atomic,
 * so wrap-around of one never carries into the other. */

#define OSH_LOCK_PE 0

static uint32_t *osh_lock_words(const char *fn, long *lock)
{
    osh_check(fn);
    if (lock == NULL) osh_fatal(fn, TERN_ERR_BUFFER, "NULL lock");
    return (uint32_t *)(void *)lock;
}

struct osh_lock_wait {
    const uint32_t *serving;
    uint32_t ticket;
};

static int osh_lock_ready(const void *arg)
{
    const struct osh_lock_wait *w = arg;
    return __atomic_load_n(w->serving, __ATOMIC_ACQUIRE) == w->ticket;
}

void shmem_set_lock(long *lock)
{
    uint32_t *w = osh_lock_words("shmem_set_lock", lock);
    uint32_t t = (uint32_t)osh_amo("shmem_set_lock", OSH_AMO_ADD, &w[0], 4, 1, 0, OSH_LOCK_PE, 1);
    uint32_t *serving = shmem_ptr(&w[1], OSH_LOCK_PE);
    if (serving) {
        struct osh_lock_wait lw = {serving, t};
        (void)osh_block(osh_lock_ready, &lw);
    } else {
        /* Remote owner: poll with fetches, backing off so the owner is not flooded. */
        long nap_us = 1;
        while ((uint32_t)osh_amo("shmem_set_lock", OSH_AMO_FETCH, &w[1], 4, 0, 0, OSH_LOCK_PE, 1) !=
               t) {
            int e = osh.err;
            if (e == TERN_ERR_PEER_FAILED) return;
            struct timespec ts = {0, nap_us * 1000};
            for (int i = 0; i < 4; i++)
                (void)core_progress();
            nanosleep(&ts, NULL);
            if (nap_us < 256) nap_us *= 2;
        }
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

void shmem_clear_lock(long *lock)
{
    uint32_t *w = osh_lock_words("shmem_clear_lock", lock);
    /* What was written under the lock is delivered before the next holder gets it. */
    osh_quiet();
    osh_amo("shmem_clear_lock", OSH_AMO_ADD, &w[1], 4, 1, 0, OSH_LOCK_PE, 0);
    /* The release must reach PE 0 even if we never call the library again. */
    osh_quiet();
}

int shmem_test_lock(long *lock)
{
    uint32_t *w = osh_lock_words("shmem_test_lock", lock);
    uint64_t v = osh_amo("shmem_test_lock", OSH_AMO_FETCH, w, 8, 0, 0, OSH_LOCK_PE, 1);
    uint32_t h[2];
    memcpy(h, &v, sizeof h);
    if (h[0] != h[1]) return 1;
    uint32_t nh[2] = {h[0] + 1, h[1]};
    uint64_t nv;
    memcpy(&nv, nh, sizeof nv);
    uint64_t old = osh_amo("shmem_test_lock", OSH_AMO_CSWAP, w, 8, v, nv, OSH_LOCK_PE, 1);
    if (old != v) return 1;
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    return 0;
}

/* ---- barrier ---------------------------------------------------------------------------- */

void shmem_barrier_all(void)
{
    osh_check("shmem_barrier_all");
    osh_quiet();
    int rc = tern_barrier(SHMEM_TEAM_WORLD->comm);
    if (rc) osh_error(rc);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

void shmem_sync_all(void)
{
    osh_check("shmem_sync_all");
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int rc = tern_barrier(SHMEM_TEAM_WORLD->comm);
    if (rc) osh_error(rc);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

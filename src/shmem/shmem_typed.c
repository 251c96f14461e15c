/*
 * shmem_typed.c - the typed and sized entry points of RMA and atomics, generated from the
 * type lists of shmem.h. Each is a thin call into shmem_rma.c with the element size (and
 * its own name, for error messages).
 */
#include <string.h>

#include "shmem/shmem_impl.h"

/* ---- RMA ----------------------------------------------------------------------------- */

#define OSH_RMA_DEF(N, T)                                                                          \
    void shmem_##N##_put(T *dest, const T *source, size_t nelems, int pe)                          \
    {                                                                                              \
        osh_put("shmem_" #N "_put", dest, source, nelems * sizeof(T), 1, 1, 1, pe);                \
    }                                                                                              \
    void shmem_##N##_put_nbi(T *dest, const T *source, size_t nelems, int pe)                      \
    {                                                                                              \
        osh_put("shmem_" #N "_put_nbi", dest, source, nelems * sizeof(T), 1, 1, 1, pe);            \
    }                                                                                              \
    void shmem_##N##_get(T *dest, const T *source, size_t nelems, int pe)                          \
    {                                                                                              \
        osh_get("shmem_" #N "_get", dest, source, nelems * sizeof(T), 1, 1, 1, pe, 0);             \
    }                                                                                              \
    void shmem_##N##_get_nbi(T *dest, const T *source, size_t nelems, int pe)                      \
    {                                                                                              \
        osh_get("shmem_" #N "_get_nbi", dest, source, nelems * sizeof(T), 1, 1, 1, pe, 1);         \
    }                                                                                              \
    void shmem_##N##_p(T *dest, T value, int pe)                                                   \
    {                                                                                              \
        osh_put("shmem_" #N "_p", dest, &value, sizeof(T), 1, 1, 1, pe);                           \
    }                                                                                              \
    T shmem_##N##_g(const T *source, int pe)                                                       \
    {                                                                                              \
        T v;                                                                                       \
        memset(&v, 0, sizeof v);                                                                   \
        osh_get("shmem_" #N "_g", &v, source, sizeof(T), 1, 1, 1, pe, 0);                          \
        return v;                                                                                  \
    }                                                                                              \
    void shmem_##N##_iput(T *dest, const T *source, ptrdiff_t tst, ptrdiff_t sst, size_t nelems,   \
                          int pe)                                                                  \
    {                                                                                              \
        osh_put("shmem_" #N "_iput", dest, source, nelems, sizeof(T), tst *(ptrdiff_t)sizeof(T),   \
                sst *(ptrdiff_t)sizeof(T), pe);                                                    \
    }                                                                                              \
    void shmem_##N##_iget(T *dest, const T *source, ptrdiff_t tst, ptrdiff_t sst, size_t nelems,   \
                          int pe)                                                                  \
    {                                                                                              \
        osh_get("shmem_" #N "_iget", dest, source, nelems, sizeof(T), tst *(ptrdiff_t)sizeof(T),   \
                sst *(ptrdiff_t)sizeof(T), pe, 0);                                                 \
    }                                                                                              \
    void shmem_##N##_put_signal(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,       \
                                uint64_t signal, int sig_op, int pe)                               \
    {                                                                                              \
        osh_put_signal("shmem_" #N "_put_signal", dest, source, nelems * sizeof(T), sig_addr,      \
                       signal, sig_op, pe);                                                        \
    }                                                                                              \
    void shmem_##N##_put_signal_nbi(T *dest, const T *source, size_t nelems, uint64_t *sig_addr,   \
                                    uint64_t signal, int sig_op, int pe)                           \
    {                                                                                              \
        osh_put_signal("shmem_" #N "_put_signal_nbi", dest, source, nelems * sizeof(T), sig_addr,  \
                       signal, sig_op, pe);                                                        \
    }
SHMEM__RMA_TYPES(OSH_RMA_DEF)

#define OSH_SIZED_DEF(S)                                                                           \
    void shmem_put##S(void *dest, const void *source, size_t nelems, int pe)                       \
    {                                                                                              \
        osh_put("shmem_put" #S, dest, source, nelems *(S / 8), 1, 1, 1, pe);                       \
    }                                                                                              \
    void shmem_get##S(void *dest, const void *source, size_t nelems, int pe)                       \
    {                                                                                              \
        osh_get("shmem_get" #S, dest, source, nelems *(S / 8), 1, 1, 1, pe, 0);                    \
    }                                                                                              \
    void shmem_put##S##_nbi(void *dest, const void *source, size_t nelems, int pe)                 \
    {                                                                                              \
        osh_put("shmem_put" #S "_nbi", dest, source, nelems *(S / 8), 1, 1, 1, pe);                \
    }                                                                                              \
    void shmem_get##S##_nbi(void *dest, const void *source, size_t nelems, int pe)                 \
    {                                                                                              \
        osh_get("shmem_get" #S "_nbi", dest, source, nelems *(S / 8), 1, 1, 1, pe, 1);             \
    }                                                                                              \
    void shmem_iput##S(void *dest, const void *source, ptrdiff_t tst, ptrdiff_t sst,               \
                       size_t nelems, int pe)                                                      \
    {                                                                                              \
        osh_put("shmem_iput" #S, dest, source, nelems, S / 8, tst * (S / 8), sst * (S / 8), pe);   \
    }                                                                                              \
    void shmem_iget##S(void *dest, const void *source, ptrdiff_t tst, ptrdiff_t sst,               \
                       size_t nelems, int pe)                                                      \
    {                                                                                              \
        osh_get("shmem_iget" #S, dest, source, nelems, S / 8, tst * (S / 8), sst * (S / 8), pe,    \
                0);                                                                                \
    }                                                                                              \
    void shmem_put##S##_signal(void *dest, const void *source, size_t nelems, uint64_t *sig_addr,  \
                               uint64_t signal, int sig_op, int pe)                                \
    {                                                                                              \
        osh_put_signal("shmem_put" #S "_signal", dest, source, nelems *(S / 8), sig_addr, signal,  \
                       sig_op, pe);                                                                \
    }                                                                                              \
    void shmem_put##S##_signal_nbi(void *dest, const void *source, size_t nelems,                  \
                                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)        \
    {                                                                                              \
        osh_put_signal("shmem_put" #S "_signal_nbi", dest, source, nelems *(S / 8), sig_addr,      \
                       signal, sig_op, pe);                                                        \
    }
SHMEM__SIZES(OSH_SIZED_DEF)

void shmem_putmem(void *dest, const void *source, size_t nbytes, int pe)
{
    osh_put("shmem_putmem", dest, source, nbytes, 1, 1, 1, pe);
}

void shmem_getmem(void *dest, const void *source, size_t nbytes, int pe)
{
    osh_get("shmem_getmem", dest, source, nbytes, 1, 1, 1, pe, 0);
}

void shmem_putmem_nbi(void *dest, const void *source, size_t nbytes, int pe)
{
    osh_put("shmem_putmem_nbi", dest, source, nbytes, 1, 1, 1, pe);
}

void shmem_getmem_nbi(void *dest, const void *source, size_t nbytes, int pe)
{
    osh_get("shmem_getmem_nbi", dest, source, nbytes, 1, 1, 1, pe, 1);
}

void shmem_putmem_signal(void *dest, const void *source, size_t nbytes, uint64_t *sig_addr,
                         uint64_t signal, int sig_op, int pe)
{
    osh_put_signal("shmem_putmem_signal", dest, source, nbytes, sig_addr, signal, sig_op, pe);
}

void shmem_putmem_signal_nbi(void *dest, const void *source, size_t nbytes, uint64_t *sig_addr,
                             uint64_t signal, int sig_op, int pe)
{
    osh_put_signal("shmem_putmem_signal_nbi", dest, source, nbytes, sig_addr, signal, sig_op, pe);
}

/* ---- atomics ---------------------------------------------------------------------------- */

/* Bits of a value of T in a uint64_t and back (T is 4 or 8 bytes). */
#define OSH_BITS(T, v)                                                                             \
    ({                                                                                             \
        uint64_t b_ = 0;                                                                           \
        if (sizeof(T) == 4) {                                                                      \
            uint32_t w_;                                                                           \
            memcpy(&w_, &(v), 4);                                                                  \
            b_ = w_;                                                                               \
        } else {                                                                                   \
            memcpy(&b_, &(v), sizeof(T));                                                          \
        }                                                                                          \
        b_;                                                                                        \
    })
#define OSH_VAL(T, b)                                                                              \
    ({                                                                                             \
        T v_;                                                                                      \
        uint64_t b2_ = (b);                                                                        \
        if (sizeof(T) == 4) {                                                                      \
            uint32_t w_ = (uint32_t)b2_;                                                           \
            memcpy(&v_, &w_, 4);                                                                   \
        } else {                                                                                   \
            memcpy(&v_, &b2_, sizeof(T));                                                          \
        }                                                                                          \
        v_;                                                                                        \
    })

#define OSH_AMO(FN, T, OP, dest, a, b, pe, fetch)                                                  \
    osh_amo(FN, OP, (void *)(uintptr_t)(dest), sizeof(T), a, b, pe, fetch)

#define OSH_AMO_EXT_DEF(N, T)                                                                      \
    T shmem_##N##_atomic_fetch(const T *source, int pe)                                            \
    {                                                                                              \
        return OSH_VAL(                                                                            \
            T, OSH_AMO("shmem_" #N "_atomic_fetch", T, OSH_AMO_FETCH, source, 0, 0, pe, 1));       \
    }                                                                                              \
    void shmem_##N##_atomic_set(T *dest, T value, int pe)                                          \
    {                                                                                              \
        OSH_AMO("shmem_" #N "_atomic_set", T, OSH_AMO_SET, dest, OSH_BITS(T, value), 0, pe, 0);    \
    }                                                                                              \
    T shmem_##N##_atomic_swap(T *dest, T value, int pe)                                            \
    {                                                                                              \
        return OSH_VAL(T, OSH_AMO("shmem_" #N "_atomic_swap", T, OSH_AMO_SWAP, dest,               \
                                  OSH_BITS(T, value), 0, pe, 1));                                  \
    }                                                                                              \
    void shmem_##N##_atomic_fetch_nbi(T *fetch, const T *source, int pe)                           \
    {                                                                                              \
        *fetch = shmem_##N##_atomic_fetch(source, pe);                                             \
    }                                                                                              \
    void shmem_##N##_atomic_swap_nbi(T *fetch, T *dest, T value, int pe)                           \
    {                                                                                              \
        *fetch = shmem_##N##_atomic_swap(dest, value, pe);                                         \
    }
SHMEM__AMO_EXT_TYPES(OSH_AMO_EXT_DEF)

#define OSH_AMO_STD_DEF(N, T)                                                                      \
    T shmem_##N##_atomic_compare_swap(T *dest, T cond, T value, int pe)                            \
    {                                                                                              \
        return OSH_VAL(T, OSH_AMO("shmem_" #N "_atomic_compare_swap", T, OSH_AMO_CSWAP, dest,      \
                                  OSH_BITS(T, cond), OSH_BITS(T, value), pe, 1));                  \
    }                                                                                              \
    T shmem_##N##_atomic_fetch_inc(T *dest, int pe)                                                \
    {                                                                                              \
        return OSH_VAL(                                                                            \
            T, OSH_AMO("shmem_" #N "_atomic_fetch_inc", T, OSH_AMO_ADD, dest, 1, 0, pe, 1));       \
    }                                                                                              \
    void shmem_##N##_atomic_inc(T *dest, int pe)                                                   \
    {                                                                                              \
        OSH_AMO("shmem_" #N "_atomic_inc", T, OSH_AMO_ADD, dest, 1, 0, pe, 0);                     \
    }                                                                                              \
    T shmem_##N##_atomic_fetch_add(T *dest, T value, int pe)                                       \
    {                                                                                              \
        return OSH_VAL(T, OSH_AMO("shmem_" #N "_atomic_fetch_add", T, OSH_AMO_ADD, dest,           \
                                  OSH_BITS(T, value), 0, pe, 1));                                  \
    }                                                                                              \
    void shmem_##N##_atomic_add(T *dest, T value, int pe)                                          \
    {                                                                                              \
        OSH_AMO("shmem_" #N "_atomic_add", T, OSH_AMO_ADD, dest, OSH_BITS(T, value), 0, pe, 0);    \
    }                                                                                              \
    void shmem_##N##_atomic_compare_swap_nbi(T *fetch, T *dest, T cond, T value, int pe)           \
    {                                                                                              \
        *fetch = shmem_##N##_atomic_compare_swap(dest, cond, value, pe);                           \
    }                                                                                              \
    void shmem_##N##_atomic_fetch_inc_nbi(T *fetch, T *dest, int pe)                               \
    {                                                                                              \
        *fetch = shmem_##N##_atomic_fetch_inc(dest, pe);                                           \
    }                                                                                              \
    void shmem_##N##_atomic_fetch_add_nbi(T *fetch, T *dest, T value, int pe)                      \
    {                                                                                              \
        *fetch = shmem_##N##_atomic_fetch_add(dest, value, pe);                                    \
    }
SHMEM__AMO_STD_TYPES(OSH_AMO_STD_DEF)

#define OSH_AMO_BIT_OP(N, T, OP, CODE)                                                             \
    T shmem_##N##_atomic_fetch_##OP(T *dest, T value, int pe)                                      \
    {                                                                                              \
        return OSH_VAL(T, OSH_AMO("shmem_" #N "_atomic_fetch_" #OP, T, CODE, dest,                 \
                                  OSH_BITS(T, value), 0, pe, 1));                                  \
    }                                                                                              \
    void shmem_##N##_atomic_##OP(T *dest, T value, int pe)                                         \
    {                                                                                              \
        OSH_AMO("shmem_" #N "_atomic_" #OP, T, CODE, dest, OSH_BITS(T, value), 0, pe, 0);          \
    }                                                                                              \
    void shmem_##N##_atomic_fetch_##OP##_nbi(T *fetch, T *dest, T value, int pe)                   \
    {                                                                                              \
        *fetch = shmem_##N##_atomic_fetch_##OP(dest, value, pe);                                   \
    }
#define OSH_AMO_BIT_DEF(N, T)                                                                      \
    OSH_AMO_BIT_OP(N, T, and, OSH_AMO_AND)                                                         \
    OSH_AMO_BIT_OP(N, T, or, OSH_AMO_OR)                                                           \
    OSH_AMO_BIT_OP(N, T, xor, OSH_AMO_XOR)
SHMEM__AMO_BIT_TYPES(OSH_AMO_BIT_DEF)

/* Deprecated names. */
#define OSH_AMO_OLD_STD_DEF(N, T)                                                                  \
    T shmem_##N##_cswap(T *dest, T cond, T value, int pe)                                          \
    {                                                                                              \
        return shmem_##N##_atomic_compare_swap(dest, cond, value, pe);                             \
    }                                                                                              \
    T shmem_##N##_finc(T *dest, int pe)                                                            \
    {                                                                                              \
        return shmem_##N##_atomic_fetch_inc(dest, pe);                                             \
    }                                                                                              \
    void shmem_##N##_inc(T *dest, int pe)                                                          \
    {                                                                                              \
        shmem_##N##_atomic_inc(dest, pe);                                                          \
    }                                                                                              \
    T shmem_##N##_fadd(T *dest, T value, int pe)                                                   \
    {                                                                                              \
        return shmem_##N##_atomic_fetch_add(dest, value, pe);                                      \
    }                                                                                              \
    void shmem_##N##_add(T *dest, T value, int pe)                                                 \
    {                                                                                              \
        shmem_##N##_atomic_add(dest, value, pe);                                                   \
    }
#define OSH_AMO_OLD_EXT_DEF(N, T)                                                                  \
    T shmem_##N##_fetch(const T *source, int pe)                                                   \
    {                                                                                              \
        return shmem_##N##_atomic_fetch(source, pe);                                               \
    }                                                                                              \
    void shmem_##N##_set(T *dest, T value, int pe)                                                 \
    {                                                                                              \
        shmem_##N##_atomic_set(dest, value, pe);                                                   \
    }                                                                                              \
    T shmem_##N##_swap(T *dest, T value, int pe)                                                   \
    {                                                                                              \
        return shmem_##N##_atomic_swap(dest, value, pe);                                           \
    }
SHMEM__AMO_OLD_STD_TYPES(OSH_AMO_OLD_STD_DEF)
SHMEM__AMO_OLD_EXT_TYPES(OSH_AMO_OLD_EXT_DEF)

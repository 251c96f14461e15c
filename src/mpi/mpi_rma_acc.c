/*
 * mpi_rma_acc.c - MPI one-sided accumulates: the arithmetic (a resolved MPI operation on
 * a predefined type, applied element by element with CPU atomics or under the target's
 * accumulate spinlock), compare-and-swap, and MPI_Accumulate, MPI_Get_accumulate,
 * MPI_Fetch_and_op and MPI_Compare_and_swap.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_win_impl.h"
#include "util/log.h"
#include "util/tunables.h"

static int rma_is_int(MPI_Datatype dt)
{
    switch (dt) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_UNSIGNED_CHAR:
    case MPI_BYTE:
    case MPI_WCHAR:
    case MPI_SHORT:
    case MPI_UNSIGNED_SHORT:
    case MPI_INT:
    case MPI_UNSIGNED:
    case MPI_LONG:
    case MPI_UNSIGNED_LONG:
    case MPI_LONG_LONG:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_INT8_T:
    case MPI_INT16_T:
    case MPI_INT32_T:
    case MPI_INT64_T:
    case MPI_UINT8_T:
    case MPI_UINT16_T:
    case MPI_UINT32_T:
    case MPI_UINT64_T:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
        return 1;
    default:
        return 0;
    }
}

/* MPI_SUCCESS or the error class for an accumulate of op on predefined type dt. */
int rma_acc_resolve(MPI_Op op, MPI_Datatype dt, struct rma_acc *a)
{
    struct mpi_type *t = mpi_type_get(dt);
    if (t == NULL || !t->predefined || dt == MPI_PACKED) return MPI_ERR_TYPE;
    /* Elements travel packed (esize bytes); a pair type with padding after its data
     * (MPI_DOUBLE_INT, MPI_LONG_INT, MPI_LONG_DOUBLE_INT) is reduced one element at a
     * time in its own layout (rma_apply). MPI_SHORT_INT, whose padding splits it in two
     * pieces, is put together element by element (rma_pair_feed). */
    if (t->nblk > 1 && dt != MPI_SHORT_INT) return MPI_ERR_TYPE;
    *a = (struct rma_acc){
        .op = op, .dt = dt, .esize = (size_t)t->size, .ext = (size_t)mpi_type_extent(t)};
    if (dt == MPI_SHORT_INT) {
        struct si {
            short v;
            int i;
        };
        a->split = sizeof(short);
        a->off2 = offsetof(struct si, i);
    }
    if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_SUCCESS;
    if (op < MPI_MAX || op > MPI_MAXLOC) return MPI_ERR_OP; /* user operations: not in RMA */
    int rc = mpi_op_resolve(op, dt, &a->o);
    if (rc) return rc;
    a->intsum = op == MPI_SUM && rma_is_int(dt);
    return MPI_SUCCESS;
}

static inline int rma_atomic_ok(size_t esize, const void *p)
{
    return (esize == 1 || esize == 2 || esize == 4 || esize == 8) &&
           ((uintptr_t)p & (esize - 1)) == 0;
}

static void rma_spin_lock(_Atomic uint32_t *l)
{
    for (;;) {
        uint32_t z = 0;
        if (atomic_compare_exchange_weak_explicit(l, &z, 1, memory_order_acquire,
                                                  memory_order_relaxed))
            return;
        /* Held for one element's update; yield, then nap, only if the holder was
         * descheduled. */
        struct core_waiter w;
        core_wait_begin(&w, CORE_WAIT_MEM);
        while (atomic_load_explicit(l, memory_order_relaxed))
            (void)core_wait_idle(&w);
    }
}

static void rma_spin_unlock(_Atomic uint32_t *l)
{
    atomic_store_explicit(l, 0, memory_order_release);
}

#define RMA_ELEM(T)                                                                                \
    do {                                                                                           \
        T *tp = (T *)(void *)tgt, sv, old, nw;                                                     \
        if (a->op == MPI_NO_OP) {                                                                  \
            old = __atomic_load_n(tp, __ATOMIC_ACQUIRE);                                           \
        } else if (memcpy(&sv, src, sizeof sv), 0) {                                               \
        } else if (a->op == MPI_REPLACE) {                                                         \
            old = __atomic_exchange_n(tp, sv, __ATOMIC_ACQ_REL);                                   \
        } else if (a->intsum) {                                                                    \
            old = __atomic_fetch_add(tp, sv, __ATOMIC_ACQ_REL);                                    \
        } else {                                                                                   \
            old = __atomic_load_n(tp, __ATOMIC_RELAXED);                                           \
            do {                                                                                   \
                nw = old;                                                                          \
                a->o.fn(&sv, &nw, 1, a->o.dt);                                                     \
            } while (!__atomic_compare_exchange_n(tp, &old, nw, 0, __ATOMIC_ACQ_REL,               \
                                                  __ATOMIC_RELAXED));                              \
        }                                                                                          \
        if (res) memcpy(res, &old, sizeof old);                                                    \
    } while (0)

/* rma_apply where other processes may update the same memory: CPU atomics per element,
 * or the target's accumulate lock. */
/* Element by element with CPU atomics: tgt aligned to es, es 1, 2, 4 or 8. */
static void rma_apply_atomic(const struct rma_acc *a, char *tgt, const char *src, size_t n,
                             char *res)
{
    size_t es = a->esize;
    for (size_t k = 0; k < n; k += es, tgt += es, src += es, res = res ? res + es : NULL) {
        switch (es) {
        case 1:
            RMA_ELEM(uint8_t);
            break;
        case 2:
            RMA_ELEM(uint16_t);
            break;
        case 4:
            RMA_ELEM(uint32_t);
            break;
        default:
            RMA_ELEM(uint64_t);
            break;
        }
    }
}

/*
 * MPI_SUM on 1-, 2- or 4-byte integers over the 8-byte words from tgt (8-aligned, n a
 * multiple of 8): one compare-and-swap per word, which adds its 8, 4 or 2 elements lane
 * by lane with no carry from one element into the next. Each element is still updated
 * atomically, as the per-element fetch-adds of other operations on it are (x86 and
 * AArch64 order locked accesses of different sizes to one location).
 */
static void rma_sum_words(size_t es, char *tgt, const char *src, size_t n, char *res)
{
    const uint64_t hi = es == 1   ? 0x8080808080808080ull
                        : es == 2 ? 0x8000800080008000ull
                                  : 0x8000000080000000ull;
    for (size_t k = 0; k < n; k += 8) {
        uint64_t *tp = (uint64_t *)(void *)(tgt + k), sv, old, nw;
        memcpy(&sv, src + k, sizeof sv);
        old = __atomic_load_n(tp, __ATOMIC_RELAXED);
        do {
            nw = ((old & ~hi) + (sv & ~hi)) ^ ((old ^ sv) & hi);
        } while (!__atomic_compare_exchange_n(tp, &old, nw, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED));
        if (res) memcpy(res + k, &old, sizeof old);
    }
}

static void rma_apply_shared(struct rma_ctl *ctl, const struct rma_acc *a, char *tgt,
                             const char *src, size_t n, char *res)
{
    size_t es = a->esize;
    if (rma_atomic_ok(es, tgt) && a->intsum && es < 8 && n >= 64) {
        size_t head = (8 - ((uintptr_t)tgt & 7)) & 7, mid = (n - head) & ~(size_t)7;
        rma_apply_atomic(a, tgt, src, head, res);
        rma_sum_words(es, tgt + head, src + head, mid, res ? res + head : NULL);
        rma_apply_atomic(a, tgt + head + mid, src + head + mid, n - head - mid,
                         res ? res + head + mid : NULL);
        return;
    }
    if (rma_atomic_ok(es, tgt)) {
        rma_apply_atomic(a, tgt, src, n, res);
        return;
    }
    /* Under the target's lock, through aligned scratch (the reduction loops assume
     * aligned elements). */
    _Alignas(64) char cur[1024], in[1024];
    rma_spin_lock(&ctl->acc);
    if (a->ext != es && a->op != MPI_REPLACE && a->op != MPI_NO_OP) {
        /* a pair type with padding: each packed element into the type's own layout */
        for (size_t k = 0; k + es <= n; k += es) {
            if (res) memcpy(res + k, tgt + k, es);
            memcpy(cur, tgt + k, es);
            memcpy(in, src + k, es);
            a->o.fn(in, cur, 1, a->o.dt);
            memcpy(tgt + k, cur, es);
        }
        rma_spin_unlock(&ctl->acc);
        return;
    }
    for (size_t k = 0; k < n;) {
        size_t m = n - k < sizeof cur ? n - k : sizeof cur;
        m -= m % es;
        if (m == 0) m = es; /* es > 1024 cannot happen: predefined types are small */
        if (res) memcpy(res + k, tgt + k, m);
        if (a->op == MPI_REPLACE) {
            memcpy(tgt + k, src + k, m);
        } else if (a->op != MPI_NO_OP) {
            memcpy(cur, tgt + k, m);
            memcpy(in, src + k, m);
            a->o.fn(in, cur, m / es, a->o.dt);
            memcpy(tgt + k, cur, m);
        }
        k += m;
    }
    rma_spin_unlock(&ctl->acc);
}

/*
 * As rma_apply, for the one party that makes every update of the memory: the owner of a
 * window of user memory (MPI_Win_create, dynamic), whose accumulates are all applied by
 * its own process (the AM handler, and its own operations on itself) one at a time under
 * the core's lock. No other process writes there, so the reduction runs as one vector
 * loop with plain loads and stores: no per-element CPU atomic, no lock.
 */
static void rma_apply_owned(struct rma_ctl *ctl, const struct rma_acc *a, char *tgt,
                            const char *src, size_t n, char *res)
{
    size_t es = a->esize;
    if (a->ext != es && a->op != MPI_REPLACE && a->op != MPI_NO_OP) {
        rma_apply_shared(ctl, a, tgt, src, n, res); /* padded pair types, per element */
        return;
    }
    if (res) memcpy(res, tgt, n);
    if (a->op == MPI_NO_OP) return;
    if (a->op == MPI_REPLACE) {
        memcpy(tgt, src, n);
        return;
    }
    size_t al = es & (~es + 1); /* what the reduction loops may assume */
    if (al > 16) al = 16;
    if (((uintptr_t)tgt & (al - 1)) == 0 && ((uintptr_t)src & (al - 1)) == 0) {
        a->o.fn(src, tgt, n / es, a->o.dt);
        return;
    }
    _Alignas(64) char cur[4096], in[4096];
    for (size_t k = 0; k < n;) {
        size_t m = n - k < sizeof cur ? n - k : sizeof cur;
        m -= m % es;
        memcpy(cur, tgt + k, m);
        memcpy(in, src + k, m);
        a->o.fn(in, cur, m / es, a->o.dt);
        memcpy(tgt + k, cur, m);
        k += m;
    }
}

/*
 * target[i] = target[i] op src[i] for n bytes (whole elements); the old values go to res
 * when it is not NULL. src and res may be unaligned; target is window memory.
 */
void rma_apply(struct rma_ctl *ctl, const struct rma_acc *a, char *tgt, const char *src, size_t n,
               char *res)
{
    if (a->owned)
        rma_apply_owned(ctl, a, tgt, src, n, res);
    else
        rma_apply_shared(ctl, a, tgt, src, n, res);
}

void rma_acc_lock(struct rma_ctl *ctl)
{
    rma_spin_lock(&ctl->acc);
}

void rma_acc_unlock(struct rma_ctl *ctl)
{
    rma_spin_unlock(&ctl->acc);
}

/*
 * n bytes of an operation on a split pair type (MPI_SHORT_INT): tgt and src are where
 * the next n bytes of the packed element stream live at the target and the origin, res
 * (or NULL) where their old values go. A whole element is applied at once in its own
 * layout, so every element is updated atomically (the caller holds the target's lock).
 */
void rma_pair_feed(struct rma_pair *st, const struct rma_acc *a, char *tgt, const char *src,
                   size_t n, char *res)
{
    size_t es = a->esize, sp = a->split;
    while (n > 0) {
        if (st->have == 0) {
            st->t1 = tgt;
            st->res = res;
        }
        if (st->have == sp) st->t2 = tgt;
        size_t end = st->have < sp ? sp : es, m = end - st->have < n ? end - st->have : n;
        memcpy(st->val + st->have, src, m);
        st->have += m;
        tgt += m;
        src += m;
        if (res) res += m;
        n -= m;
        if (st->have < es) continue;
        _Alignas(16) char cur[32] = {0}, in[32] = {0};
        memcpy(cur, st->t1, sp);
        memcpy(cur + a->off2, st->t2, es - sp);
        if (st->res) {
            memcpy(st->res, cur, sp);
            memcpy(st->res + sp, cur + a->off2, es - sp);
        }
        if (a->op != MPI_NO_OP) {
            memcpy(in, st->val, sp);
            memcpy(in + a->off2, st->val + sp, es - sp);
            if (a->op == MPI_REPLACE)
                memcpy(cur, in, sizeof cur);
            else
                a->o.fn(in, cur, 1, a->o.dt);
            memcpy(st->t1, cur, sp);
            memcpy(st->t2, cur + a->off2, es - sp);
        }
        st->have = 0;
    }
}

/* Compare-and-swap of one element; the old value goes to res. */
void rma_cas(struct rma_ctl *ctl, size_t es, char *tgt, const char *cmp, const char *src, char *res)
{
    if (rma_atomic_ok(es, tgt)) {
#define RMA_CAS(T)                                                                                 \
    do {                                                                                           \
        T c, v;                                                                                    \
        memcpy(&c, cmp, sizeof c);                                                                 \
        memcpy(&v, src, sizeof v);                                                                 \
        __atomic_compare_exchange_n((T *)(void *)tgt, &c, v, 0, __ATOMIC_ACQ_REL,                  \
                                    __ATOMIC_ACQUIRE);                                             \
        memcpy(res, &c, sizeof c);                                                                 \
    } while (0)
        switch (es) {
        case 1:
            RMA_CAS(uint8_t);
            break;
        case 2:
            RMA_CAS(uint16_t);
            break;
        case 4:
            RMA_CAS(uint32_t);
            break;
        default:
            RMA_CAS(uint64_t);
            break;
        }
        return;
    }
    rma_spin_lock(&ctl->acc);
    memcpy(res, tgt, es);
    if (memcmp(tgt, cmp, es) == 0) memcpy(tgt, src, es);
    rma_spin_unlock(&ctl->acc);
}

/* Accumulate (res == NULL) or Get_accumulate. */
int rma_accumulate(const char *fn, const void *obuf, int oc, MPI_Datatype odt, void *rbuf, int rcnt,
                   MPI_Datatype rdt, int r, MPI_Aint disp, int tc, MPI_Datatype tdt, MPI_Op op,
                   MPI_Win win, int fetch)
{
    WIN_CHECK(fn, win);
    struct mpi_type *ot, *tt, *rt = NULL;
    uint64_t toff;
    int rc;
    if (op == MPI_NO_OP) { /* the origin arguments are ignored */
        oc = tc;
        odt = tdt;
    }
    if ((rc = rma_chk_types(oc, odt, tc, tdt, &ot, &tt))) return mpi_err(w->comm, fn, rc);
    if (fetch && (rc = rma_chk_types(rcnt, rdt, tc, tdt, &rt, &tt)))
        return mpi_err(w->comm, fn, rc);
    struct rma_acc a;
    MPI_Datatype basic = tt->basic;
    /* Nothing to move (zero counts or sizes): a valid no-op whatever the types hold. */
    if ((size_t)tc * (size_t)tt->size == 0 && (size_t)oc * (size_t)ot->size == 0 &&
        (!rt || (size_t)rcnt * (size_t)rt->size == 0))
        return r == MPI_PROC_NULL || (r >= 0 && r < w->size) ? MPI_SUCCESS
                                                             : mpi_err(w->comm, fn, MPI_ERR_RANK);
    if (basic == MPI_DATATYPE_NULL || ot->basic != basic || (rt && rt->basic != basic))
        return mpi_err(w->comm, fn, MPI_ERR_TYPE);
    if ((rc = rma_acc_resolve(op, basic, &a))) return mpi_err(w->comm, fn, rc);
    a.owned = rma_owner_updates(w);
    if (op == MPI_NO_OP && !fetch) return MPI_SUCCESS;
    if (r == MPI_PROC_NULL) return MPI_SUCCESS;
    if ((rc = rma_chk_target(w, r, disp, tt, tc, &toff))) return mpi_err(w->comm, fn, rc);
    size_t total = (size_t)tc * (size_t)tt->size;
    if (total == 0) return MPI_SUCCESS;
    struct rma_peer *pe = &w->p[r];
    char *d = rma_direct_base(w, r, toff);
    /* User memory of another process is updated by its owner (AM), so that every update
     * of a location is made by one party with one kind of atomicity. */
    if (d && (w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED ||
              r == w->rank)) {
        char *src = op == MPI_NO_OP ? d : (char *)obuf;
        if (!fetch) {
            rma_direct_op(pe->ctl, RK_ACC, src, op == MPI_NO_OP ? tt : ot, oc, d, tt, tc, &a, NULL);
            return MPI_SUCCESS;
        }
        char *res = rt->contig ? (char *)rbuf + rt->contig_off : malloc(total);
        if (res == NULL) return mpi_err(w->comm, fn, MPI_ERR_NO_MEM);
        rma_direct_op(pe->ctl, RK_GACC, src, op == MPI_NO_OP ? tt : ot, oc, d, tt, tc, &a, res);
        if (!rt->contig) {
            rma_unpack_at(rbuf, rt, rcnt, 0, res, total);
            free(res);
        }
        return MPI_SUCCESS;
    }
    rc = rma_am_op(w, r, fetch ? RK_GACC : RK_ACC, obuf, ot, oc, toff, tt, tc, &a, rbuf, rt, rcnt);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    CORE_CS_SCOPE();
    return rma_accumulate("MPI_Accumulate", origin_addr, origin_count, origin_datatype, NULL, 0,
                          MPI_DATATYPE_NULL, target_rank, target_disp, target_count,
                          target_datatype, op, win, 0);
}
MPI_ALIAS(Accumulate)

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    CORE_CS_SCOPE();
    return rma_accumulate("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype,
                          result_addr, result_count, result_datatype, target_rank, target_disp,
                          target_count, target_datatype, op, win, 1);
}
MPI_ALIAS(Get_accumulate)

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    CORE_CS_SCOPE();
    return rma_accumulate("MPI_Fetch_and_op", origin_addr, 1, datatype, result_addr, 1, datatype,
                          target_rank, target_disp, 1, datatype, op, win, 1);
}
MPI_ALIAS(Fetch_and_op)

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Compare_and_swap";
    WIN_CHECK(fn, win);
    struct mpi_type *t = mpi_type_ok(datatype);
    struct rma_acc a;
    uint64_t toff;
    int rc;
    if (t == NULL || (rc = rma_acc_resolve(MPI_REPLACE, datatype, &a)) ||
        (!rma_is_int(datatype) && datatype != MPI_C_BOOL))
        return mpi_err(w->comm, fn, MPI_ERR_TYPE);
    if (origin_addr == NULL || compare_addr == NULL || result_addr == NULL)
        return mpi_err(w->comm, fn, MPI_ERR_BUFFER);
    if (target_rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if ((rc = rma_chk_target(w, target_rank, target_disp, t, 1, &toff)))
        return mpi_err(w->comm, fn, rc);
    struct rma_peer *pe = &w->p[target_rank];
    char *d = rma_direct_base(w, target_rank, toff);
    if (d && (w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED ||
              target_rank == w->rank)) {
        rma_cas(pe->ctl, a.esize, d, compare_addr, origin_addr, result_addr);
        return MPI_SUCCESS;
    }
    uint32_t token = rma_fetch_slot();
    if (token == UINT32_MAX) return mpi_err(w->comm, fn, MPI_ERR_NO_MEM);
    mpi_type_ref(t);
    rma_fetches[token] = (struct rma_fetch){1, pe, result_addr, t, 1, a.esize, NULL};
    pe->fetching++;
    struct rma_hdr h = {.ctx = w->tc->ctx,
                        .kind = RK_CAS,
                        .op = MPI_REPLACE,
                        .dt = datatype,
                        .nseg = 1,
                        .token = token};
    struct rma_seg seg = {toff, a.esize};
    struct iovec v[4] = {{&h, sizeof h},
                         {&seg, sizeof seg},
                         {(void *)compare_addr, a.esize},
                         {(void *)origin_addr, a.esize}};
    rc = rma_send_req(w, target_rank, v, 4, 0);
    if (rc) {
        rma_fetches[token].used = 0;
        mpi_type_unref(t);
        pe->fetching--;
        return mpi_err(w->comm, fn, mpi_from_tern(rc));
    }
    pe->am_ops++;
    return MPI_SUCCESS;
}
MPI_ALIAS(Compare_and_swap)

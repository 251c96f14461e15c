/*
 * mpi_win.c - one-sided communication (MPI RMA): windows, Put/Get/Accumulate and the
 * atomics, fence, post-start-complete-wait and passive-target locks.
 *
 * Where a target's memory is reached:
 *  - direct: windows made by Win_allocate(_shared) live in one shared-memory segment per
 *    node (made by the node's first rank, mapped by every local rank, unlinked at once),
 *    so Put/Get to a local rank are memcpy and accumulates are CPU atomics; my own window
 *    is always direct.
 *  - CMA: Win_create / Win_create_dynamic memory of a local rank is written and read with
 *    process_vm_writev/readv (iovecs, so non-contiguous layouts need no temporary).
 *  - active messages (AM handler 4: requests, 5: replies) for everything else, and for
 *    accumulates into user memory of another process: the target applies them in its
 *    progress engine, which runs whenever the target is inside any MPI call.
 *
 * Accumulate atomicity: an element of 1, 2, 4 or 8 bytes at an aligned address is updated
 * by a CPU atomic (compare-and-swap loop, or fetch-add / exchange); anything else under
 * the target's accumulate spinlock (in the segment, so local origins and the target's
 * AM handler take the same lock). Which of the two is used depends only on the element
 * type and address, so the same operation on the same location is atomic whoever does it.
 *
 * Every rank has a control block (struct rma_ctl) in its node's segment: the
 * passive-target lock word and the accumulate spinlock. Local origins lock with CPU
 * atomics on it; remote ones send LOCK and the target grants from its AM handler, or
 * later from a progress hook when the lock is busy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "mpi/mpi_impl.h"
#include "util/log.h"
#include "util/tunables.h"

#define RMA_AM_REQ 4 /* origin -> target */
#define RMA_AM_REP 5 /* target -> origin */
#define RMA_MAXSEG 64
#define RMA_EXCL   0x80000000u

enum rma_kind {
    RK_PUT = 1,
    RK_GET,
    RK_ACC,
    RK_GACC, /* Get_accumulate, Fetch_and_op */
    RK_CAS,
    RK_LOCK,
    RK_UNLOCK,
    RK_FLUSH,
    RK_POST,
    RK_COMPLETE,
    /* replies */
    RK_DATA,
    RK_LOCK_ACK,
    RK_ACK, /* flush or unlock done */
};

/* Header of every RMA active message (requests and replies). Followed, in requests, by
 * nseg (offset, length) target pieces and then the origin data. */
struct rma_hdr {
    uint16_t ctx; /* the window: context id of its communicator */
    uint8_t kind;
    uint8_t lock; /* RK_LOCK: 1 exclusive */
    int32_t op;
    int32_t dt;
    uint32_t nseg;
    uint32_t token; /* replies to fetching requests go to this origin slot */
    uint32_t len;   /* requests: bytes of the record after this header */
    uint64_t roff;  /* where the reply's bytes go in the result stream */
};

struct rma_seg {
    uint64_t off, len;
};

/* One per rank, 64 bytes, in the node segment. */
struct rma_ctl {
    _Atomic uint32_t lock; /* RMA_EXCL, or the number of shared holders */
    _Atomic uint32_t acc;  /* accumulate spinlock */
    char pad[56];
};

struct rma_peer {
    int world;
    int disp_unit;
    MPI_Aint size;
    char *direct;        /* its window memory mapped here, or NULL */
    struct rma_ctl *ctl; /* its control block mapped here, or NULL */
    uint64_t base;       /* its base address in its own process (CMA) */
    int pid;
    int cma;           /* process_vm_* may be tried */
    uint32_t am_ops;   /* AM operations since its last completion */
    uint32_t fetching; /* replies still due */
    uint32_t acks, ack_want;
    uint32_t posts;     /* PSCW: POSTs from it not yet taken by Win_start */
    uint32_t completes; /* PSCW: COMPLETEs from it not yet taken by Win_wait */
    int granted;        /* LOCK_ACK arrived */
    int locked;         /* I hold its lock: 0, MPI_LOCK_SHARED or MPI_LOCK_EXCLUSIVE */
    char *batch;        /* small Puts/Accumulates not sent yet (one AM frame of records) */
    size_t blen;
};

struct rma_lockq {
    struct rma_lockq *next;
    int src; /* world rank */
    int excl;
};

struct rma_region {
    char *base;
    size_t len;
};

struct mpi_win {
    MPI_Win handle;
    MPI_Comm comm; /* private duplicate: errors, group, barriers */
    struct tern_comm *tc;
    int flavor;
    int rank, size;
    void *base;
    MPI_Aint wsize;
    int disp_unit;
    int model;
    struct rma_peer *p;
    void *seg;
    size_t seglen;
    struct rma_ctl *myctl;
    struct rma_ctl privctl; /* when no segment is shared */
    struct rma_region *reg;
    int nreg, capreg;
    struct rma_lockq *lockq, *lockq_tail;
    int *agroup, nagroup; /* PSCW access group (window ranks) */
    int *egroup, negroup; /* PSCW exposure group */
    int lock_all;
    char name[MPI_MAX_OBJECT_NAME];
};

static struct mpi_win **rma_wins;
static int rma_nwins;
static struct mpi_win *rma_by_ctx[CORE_CTX_MAX];
static int rma_registered;
static unsigned rma_seq;
static int rma_nqueued; /* windows with queued lock requests */

/* Origin-side slots for replies under way (Get, Get_accumulate, Fetch_and_op, CAS). */
struct rma_fetch {
    int used;
    struct rma_peer *peer;
    char *buf;
    const struct mpi_type *t;
    MPI_Count count;
    size_t left;
    core_req_t *req; /* MPI_Rget / MPI_Rget_accumulate: completed with the slot */
};
static struct rma_fetch *rma_fetches;
/* The request of the MPI_R* call under way (rma_am_op attaches it to its reply slot). */
static core_req_t *rma_cur_req;
static int rma_cur_used;
static uint32_t rma_nfetches;

static inline struct mpi_win *rma_win_get(MPI_Win h)
{
    return h > 0 && h < rma_nwins ? rma_wins[h] : NULL;
}

/* ---- typed-buffer iteration --------------------------------------------------------- */

/* Walks count instances of t as a stream of (offset, length) pieces; a contiguous type
 * is one piece of count * size bytes. */
struct rma_it {
    const struct mpi_type *t;
    MPI_Count n, i;
    int b;
    MPI_Aint in;   /* bytes taken from the current piece */
    MPI_Aint clen; /* contiguous: the one piece's length */
};

static void it_start(struct rma_it *it, const struct mpi_type *t, MPI_Count count)
{
    *it = (struct rma_it){.t = t, .n = count};
    if (t->contig) {
        it->clen = (MPI_Aint)count * (MPI_Aint)t->size;
        it->n = it->clen > 0 ? 1 : 0;
    }
}

/* Remaining bytes of the current piece, and where they are; 0 at the end. */
static size_t it_cur(struct rma_it *it, MPI_Aint *off)
{
    const struct mpi_type *t = it->t;
    while (it->i < it->n) {
        MPI_Aint poff, plen;
        if (t->contig) {
            poff = t->contig_off;
            plen = it->clen;
        } else {
            poff = (MPI_Aint)it->i * mpi_type_extent(t) + t->blk[it->b].off;
            plen = t->blk[it->b].len;
        }
        if (it->in < plen) {
            *off = poff + it->in;
            return (size_t)(plen - it->in);
        }
        it->in = 0;
        if (t->contig) {
            it->i = it->n;
        } else if (++it->b == t->nblk) {
            it->b = 0;
            it->i++;
        }
    }
    return 0;
}

static inline void it_adv(struct rma_it *it, size_t n)
{
    it->in += (MPI_Aint)n;
}

/* Skip the first `n` bytes of the stream. */
static void it_skip(struct rma_it *it, size_t n)
{
    MPI_Aint off;
    while (n > 0) {
        size_t r = it_cur(it, &off);
        if (r == 0) return;
        size_t k = r < n ? r : n;
        it_adv(it, k);
        n -= k;
    }
}

/* Copy `len` bytes of a packed stream into the typed buffer, from stream offset `at`. */
static void rma_unpack_at(char *buf, const struct mpi_type *t, MPI_Count count, size_t at,
                          const char *src, size_t len)
{
    struct rma_it it;
    it_start(&it, t, count);
    it_skip(&it, at);
    MPI_Aint off;
    while (len > 0) {
        size_t r = it_cur(&it, &off);
        if (r == 0) return;
        size_t k = r < len ? r : len;
        memcpy(buf + off, src, k);
        it_adv(&it, k);
        src += k;
        len -= k;
    }
}

/* Copy the next `len` bytes of the typed buffer's stream out (packing). */
static void rma_pack_next(const char *buf, struct rma_it *it, char *dst, size_t len)
{
    MPI_Aint off;
    while (len > 0) {
        size_t r = it_cur(it, &off);
        if (r == 0) return;
        size_t k = r < len ? r : len;
        memcpy(dst, buf + off, k);
        it_adv(it, k);
        dst += k;
        len -= k;
    }
}

/* ---- accumulate arithmetic ------------------------------------------------------------ */

/* A resolved accumulate: MPI operation on a predefined type of esize bytes. */
struct rma_acc {
    MPI_Op op;
    MPI_Datatype dt;
    size_t esize;
    int intsum; /* MPI_SUM on an integer type: fetch-add */
    struct coll_op o;
};

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
static int rma_acc_resolve(MPI_Op op, MPI_Datatype dt, struct rma_acc *a)
{
    struct mpi_type *t = mpi_type_get(dt);
    if (t == NULL || !t->predefined || dt == MPI_PACKED) return MPI_ERR_TYPE;
    /* Elements must be packed as they are stored (pair types with padding are not). */
    if ((MPI_Aint)t->size != mpi_type_extent(t)) return MPI_ERR_TYPE;
    *a = (struct rma_acc){.op = op, .dt = dt, .esize = (size_t)t->size};
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

/*
 * target[i] = target[i] op src[i] for n bytes (whole elements); the old values go to res
 * when it is not NULL. src and res may be unaligned; target is window memory.
 */
static void rma_apply(struct rma_ctl *ctl, const struct rma_acc *a, char *tgt, const char *src,
                      size_t n, char *res)
{
    size_t es = a->esize;
    if (rma_atomic_ok(es, tgt)) {
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
        return;
    }
    /* Under the target's lock, through aligned scratch (the reduction loops assume
     * aligned elements). */
    _Alignas(64) char cur[1024], in[1024];
    rma_spin_lock(&ctl->acc);
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

/* Compare-and-swap of one element; the old value goes to res. */
static void rma_cas(struct rma_ctl *ctl, size_t es, char *tgt, const char *cmp, const char *src,
                    char *res)
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

/* ---- the target side: active messages ------------------------------------------------ */

/* Window memory at target offset off (an address for dynamic windows), or NULL when
 * [off, off+len) is not in the window. */
static char *rma_taddr(struct mpi_win *w, uint64_t off, uint64_t len)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* [off, off+len) may span regions attached next to each other (MPICH's
         * win_dynamic_rma_flush_get does): covered piece by piece. */
        if (off + len < off) return NULL;
        uint64_t at = off, end = off + len;
        do {
            int found = 0;
            for (int i = 0; i < w->nreg && !found; i++) {
                uint64_t b = (uint64_t)(uintptr_t)w->reg[i].base, e = b + w->reg[i].len;
                if (at >= b && at < e) {
                    at = e;
                    found = 1;
                } else if (at == b && len == 0) {
                    found = 1;
                }
            }
            if (!found) return NULL;
        } while (at < end);
        return (char *)(uintptr_t)off;
    }
    if (off + len < off || off + len > (uint64_t)w->wsize) return NULL;
    return (char *)w->base + off;
}

static void rma_reply(int dest, const struct rma_hdr *h, const void *data, size_t len)
{
    struct iovec v[2] = {{(void *)h, sizeof *h}, {(void *)data, len}};
    int rc = core_am_sendv(dest, RMA_AM_REP, v, 2);
    if (rc && rc != TERN_ERR_PEER_FAILED)
        UTIL_ERROR("RMA: cannot answer rank %d: %s", dest, tern_strerror(rc));
}

static int rma_try_lock(struct rma_ctl *c, int excl)
{
    uint32_t v = atomic_load_explicit(&c->lock, memory_order_relaxed);
    if (excl) {
        if (v != 0) return 0;
        return atomic_compare_exchange_strong_explicit(&c->lock, &v, RMA_EXCL, memory_order_acquire,
                                                       memory_order_relaxed);
    }
    if (v & RMA_EXCL) return 0;
    return atomic_compare_exchange_strong_explicit(&c->lock, &v, v + 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

static void rma_unlock_word(struct rma_ctl *c)
{
    uint32_t v = atomic_load_explicit(&c->lock, memory_order_relaxed);
    if (v == RMA_EXCL)
        atomic_store_explicit(&c->lock, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(&c->lock, 1, memory_order_release);
}

/* Grant queued remote lock requests in arrival order while the lock allows. */
static int rma_grant_queued(struct mpi_win *w)
{
    int n = 0;
    while (w->lockq && rma_try_lock(w->myctl, w->lockq->excl)) {
        struct rma_lockq *q = w->lockq;
        w->lockq = q->next;
        if (w->lockq == NULL) {
            w->lockq_tail = NULL;
            rma_nqueued--;
        }
        struct rma_hdr h = {.ctx = w->tc->ctx, .kind = RK_LOCK_ACK};
        rma_reply(q->src, &h, NULL, 0);
        free(q);
        n++;
    }
    return n;
}

static int rma_hook(void)
{
    if (rma_nqueued == 0) return 0;
    int n = 0;
    for (int i = 1; i < rma_nwins; i++)
        if (rma_wins[i] && rma_wins[i]->lockq) n += rma_grant_queued(rma_wins[i]);
    return n;
}

static char rma_scratch[1 << 17];

static void rma_am_one(int src, const void *payload, size_t len)
{
    struct rma_hdr h;
    if (len < sizeof h) goto bad;
    memcpy(&h, payload, sizeof h);
    struct mpi_win *w = rma_by_ctx[h.ctx];
    if (w == NULL || w->myctl == NULL) goto bad; /* no such window (or it failed) */
    int crank = core_comm_rank_of(w->tc, src);
    if (crank < 0) goto bad;
    const char *p = (const char *)payload + sizeof h;
    size_t rest = len - sizeof h;
    if (h.nseg > RMA_MAXSEG || rest < h.nseg * sizeof(struct rma_seg)) goto bad;
    struct rma_seg seg[RMA_MAXSEG];
    memcpy(seg, p, h.nseg * sizeof *seg);
    p += h.nseg * sizeof *seg;
    rest -= h.nseg * sizeof *seg;
    size_t total = 0;
    for (uint32_t i = 0; i < h.nseg; i++) {
        if (rma_taddr(w, seg[i].off, seg[i].len) == NULL) {
            UTIL_ERROR("RMA: rank %d accessed outside window %d (offset %llu, %llu bytes)", src,
                       w->handle, (unsigned long long)seg[i].off, (unsigned long long)seg[i].len);
            goto bad;
        }
        total += seg[i].len;
    }
    struct rma_acc a;
    if ((h.kind == RK_ACC || h.kind == RK_GACC || h.kind == RK_CAS) &&
        rma_acc_resolve(h.op, h.dt, &a) != MPI_SUCCESS)
        goto bad;
    struct rma_hdr r = {.ctx = h.ctx, .kind = RK_DATA, .token = h.token, .roff = h.roff};
    switch (h.kind) {
    case RK_PUT:
    case RK_ACC:
        if (rest != total) goto bad;
        for (uint32_t i = 0; i < h.nseg; i++) {
            char *t = rma_taddr(w, seg[i].off, seg[i].len);
            if (h.kind == RK_PUT)
                memcpy(t, p, seg[i].len);
            else
                rma_apply(w->myctl, &a, t, p, seg[i].len, NULL);
            p += seg[i].len;
        }
        return;
    case RK_GET:
    case RK_GACC:
        if (total > sizeof rma_scratch || (h.kind == RK_GACC && rest != total) ||
            (h.kind == RK_GET && rest != 0))
            goto bad;
        for (uint32_t i = 0, o = 0; i < h.nseg; o += (uint32_t)seg[i].len, i++) {
            char *t = rma_taddr(w, seg[i].off, seg[i].len);
            if (h.kind == RK_GET)
                memcpy(rma_scratch + o, t, seg[i].len);
            else
                rma_apply(w->myctl, &a, t, p + o, seg[i].len, rma_scratch + o);
        }
        rma_reply(src, &r, rma_scratch, total);
        return;
    case RK_CAS:
        if (h.nseg != 1 || total != a.esize || rest != 2 * total) goto bad;
        rma_cas(w->myctl, a.esize, rma_taddr(w, seg[0].off, seg[0].len), p, p + total, rma_scratch);
        rma_reply(src, &r, rma_scratch, total);
        return;
    case RK_LOCK: {
        if (w->lockq == NULL && rma_try_lock(w->myctl, h.lock)) {
            r.kind = RK_LOCK_ACK;
            rma_reply(src, &r, NULL, 0);
            return;
        }
        struct rma_lockq *q = malloc(sizeof *q);
        if (q == NULL) {
            UTIL_ERROR("RMA: out of memory queueing a lock request from rank %d", src);
            return;
        }
        *q = (struct rma_lockq){NULL, src, h.lock};
        if (w->lockq_tail)
            w->lockq_tail->next = q;
        else {
            w->lockq = q;
            rma_nqueued++;
        }
        w->lockq_tail = q;
        return;
    }
    case RK_UNLOCK:
        rma_unlock_word(w->myctl);
        r.kind = RK_ACK;
        rma_reply(src, &r, NULL, 0);
        rma_grant_queued(w);
        return;
    case RK_FLUSH:
        r.kind = RK_ACK;
        rma_reply(src, &r, NULL, 0);
        return;
    case RK_POST:
        w->p[crank].posts++;
        return;
    case RK_COMPLETE:
        w->p[crank].completes++;
        return;
    default:
        break;
    }
bad:
    UTIL_ERROR("RMA: dropping a malformed request (%zu bytes) from rank %d", len, src);
}

/* An RMA request frame holds one or more records (small ones are batched), in order. */
static void rma_am_req(int src, const void *payload, size_t len)
{
    const char *p = payload;
    while (len >= sizeof(struct rma_hdr)) {
        struct rma_hdr h;
        memcpy(&h, p, sizeof h);
        size_t rl = sizeof h + (size_t)h.len;
        if (rl > len) break;
        rma_am_one(src, p, rl);
        p += rl;
        len -= rl;
    }
    if (len) UTIL_ERROR("RMA: dropping %zu bytes of a malformed request from rank %d", len, src);
}

static void rma_am_rep(int src, const void *payload, size_t len)
{
    struct rma_hdr h;
    if (len < sizeof h) goto bad;
    memcpy(&h, payload, sizeof h);
    struct mpi_win *w = rma_by_ctx[h.ctx];
    if (w == NULL) goto bad;
    int crank = core_comm_rank_of(w->tc, src);
    if (crank < 0) goto bad;
    struct rma_peer *pe = &w->p[crank];
    switch (h.kind) {
    case RK_DATA: {
        if (h.token >= rma_nfetches || !rma_fetches[h.token].used) goto bad;
        struct rma_fetch *f = &rma_fetches[h.token];
        size_t n = len - sizeof h;
        if (n > f->left || f->peer != pe) goto bad;
        rma_unpack_at(f->buf, f->t, f->count, h.roff, (const char *)payload + sizeof h, n);
        f->left -= n;
        if (f->left == 0) {
            f->used = 0;
            mpi_type_unref((struct mpi_type *)f->t);
            pe->fetching--;
            if (f->req) core_req_complete(f->req, TERN_OK);
        }
        return;
    }
    case RK_LOCK_ACK:
        pe->granted = 1;
        return;
    case RK_ACK:
        pe->acks++;
        return;
    default:
        break;
    }
bad:
    UTIL_ERROR("RMA: dropping a malformed reply (%zu bytes) from rank %d", len, src);
}

/* ---- windows: creation and release ----------------------------------------------------- */

static int rma_coll_err(int rc)
{
    return rc ? mpi_from_tern(rc) : MPI_SUCCESS;
}

static int rma_barrier(struct mpi_win *w)
{
    struct coll_sched s;
    coll_sched_init(&s, w->tc);
    return rma_coll_err(coll_sched_run(&s, coll_barrier(&s)));
}

static int rma_allgather(struct mpi_win *w, const void *mine, void *all, size_t bytes)
{
    struct coll_sched s;
    coll_sched_init(&s, w->tc);
    return rma_coll_err(coll_sched_run(&s, coll_allgather(&s, mine, all, bytes)));
}

/* Is window rank r on my node for this window's purposes? Shared windows: same node;
 * others: reached through shared memory (TERN_TRANSPORTS may forbid it). */
static int rma_local(const struct mpi_win *w, int world)
{
    if (world == core.rank) return 1;
    if (w->flavor == MPI_WIN_FLAVOR_SHARED)
        return core.boot.node_of == NULL ||
               core.boot.node_of[world] == core.boot.node_of[core.rank];
    return core.peers[world].tl == &tl_shm_ops;
}

struct rma_card {
    int64_t size;
    uint64_t base;
    int32_t disp_unit;
    int32_t pid;
    uint32_t seq;
    uint32_t pad;
};

static MPI_Aint rma_round(MPI_Aint n, int flavor)
{
    return flavor == MPI_WIN_FLAVOR_SHARED ? n : (n + 63) & ~(MPI_Aint)63;
}

/*
 * Collective part of every window creation: exchange sizes, make and map the node
 * segment (control blocks, plus the memory of allocated windows), agree on the id.
 * `size` and `base` are mine (base ignored for allocated flavors, where it is set).
 */
static int rma_setup(struct mpi_win *w, MPI_Aint size, int disp_unit, void *base)
{
    int n = w->size;
    struct rma_card mine = {
        size, (uint64_t)(uintptr_t)base, disp_unit, (int32_t)getpid(), ++rma_seq, 0};
    struct rma_card *all = calloc((size_t)n, sizeof *all);
    w->p = calloc((size_t)n, sizeof *w->p);
    if (all == NULL || w->p == NULL) {
        free(all);
        return MPI_ERR_NO_MEM;
    }
    int rc = rma_allgather(w, &mine, all, sizeof mine);
    if (rc) {
        free(all);
        return rc;
    }
    int alloc = w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED;
    /* The segment: control blocks of the local ranks, then (allocated windows) their
     * memory in rank order. */
    int leader = -1, nloc = 0;
    size_t ctl_bytes, data = 0;
    for (int r = 0; r < n; r++) {
        int wr = core_comm_world(w->tc, r);
        w->p[r].world = wr;
        w->p[r].size = (MPI_Aint)all[r].size;
        w->p[r].disp_unit = all[r].disp_unit;
        w->p[r].base = all[r].base;
        w->p[r].pid = all[r].pid;
        if (!rma_local(w, wr)) continue;
        if (leader < 0) leader = r;
        nloc++;
        if (alloc) data += (size_t)rma_round(w->p[r].size, w->flavor);
    }
    ctl_bytes = ((size_t)nloc * sizeof(struct rma_ctl) + 4095) & ~(size_t)4095;
    w->seglen = ctl_bytes + data;
    char name[64];
    snprintf(name, sizeof name, "/tern-win-%d-%u", all[leader].pid, all[leader].seq);
    int fd = -1, solo = nloc == 1;
    if (solo) {
        /* Alone on the node: private memory will do. */
        w->seg = mmap(NULL, w->seglen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    } else if (w->rank == leader) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd >= 0 && ftruncate(fd, (off_t)w->seglen) != 0) {
            close(fd);
            shm_unlink(name);
            fd = -1;
        }
        if (fd < 0) UTIL_ERROR("RMA: cannot make segment %s: %s", name, strerror(errno));
    }
    rc = rma_barrier(w);
    if (!solo && w->rank != leader) {
        fd = shm_open(name, O_RDWR, 0);
        if (fd < 0) UTIL_ERROR("RMA: cannot open segment %s: %s", name, strerror(errno));
    }
    if (fd >= 0) {
        w->seg = mmap(NULL, w->seglen, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
    }
    if (w->seg == MAP_FAILED) w->seg = NULL;
    /* Ready to serve before the last collective: a peer leaves it (and may send its
     * first lock or put) as soon as it has my contribution. */
    if (w->seg) {
        int li = 0;
        size_t at = ctl_bytes;
        for (int r = 0; r < n; r++) {
            if (!rma_local(w, w->p[r].world)) continue;
            w->p[r].ctl = (struct rma_ctl *)((char *)w->seg + (size_t)li * sizeof(struct rma_ctl));
            if (alloc) {
                w->p[r].direct = (char *)w->seg + at;
                at += (size_t)rma_round(w->p[r].size, w->flavor);
            } else {
                w->p[r].cma = util_tun.shm_cma ? 1 : 0; /* TERN_SHM_CMA=0: active messages */
            }
            li++;
        }
        w->myctl = w->p[w->rank].ctl;
        if (alloc)
            w->base = w->p[w->rank].direct;
        else
            w->p[w->rank].direct = base;
        w->p[w->rank].cma = 0;
    }
    int bad = w->seg == NULL, anybad = 0;
    {
        struct coll_sched s;
        coll_sched_init(&s, w->tc);
        (void)coll_op_resolve(TERN_MAX, TERN_INT32, &s.op);
        int e = rma_coll_err(coll_sched_run(&s, coll_allreduce(&s, &bad, &anybad, 1)));
        if (!rc) rc = e;
    }
    /* Everyone attached (or failed): the name can go, so nothing stays in /dev/shm. */
    if (!solo && w->rank == leader) shm_unlink(name);
    if (rc == 0 && anybad) rc = MPI_ERR_NO_MEM;
    if (rc) {
        free(all);
        return rc;
    }
    free(all);
    return MPI_SUCCESS;
}

static int rma_win_new(const char *fn, MPI_Comm comm, int flavor, MPI_Win *win,
                       struct mpi_win **out)
{
    int rc = mpi_state();
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL || c->tc == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_COMM);
    if (win == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    if (!rma_registered) {
        if (core_am_register(RMA_AM_REQ, rma_am_req) || core_am_register(RMA_AM_REP, rma_am_rep) ||
            core_progress_hook_add(rma_hook))
            return mpi_err(comm, fn, MPI_ERR_INTERN);
        rma_registered = 1;
    }
    struct mpi_win *w = calloc(1, sizeof *w);
    if (w == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    rc = PMPI_Comm_dup(comm, &w->comm);
    if (rc) {
        free(w);
        return rc;
    }
    struct mpi_comm *dc = mpi_comm_get(w->comm);
    dc->errh = MPI_ERRORS_ARE_FATAL; /* a window's default handler (MPI 3.1, 8.3) */
    w->tc = dc->tc;
    w->rank = w->tc->rank;
    w->size = w->tc->size;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    int h = -1;
    for (int i = 1; i < rma_nwins; i++)
        if (rma_wins[i] == NULL) {
            h = i;
            break;
        }
    if (h < 0) {
        int cap = rma_nwins ? rma_nwins * 2 : 8;
        struct mpi_win **t = realloc(rma_wins, (size_t)cap * sizeof *t);
        if (t == NULL) {
            PMPI_Comm_free(&w->comm);
            free(w);
            return mpi_err(comm, fn, MPI_ERR_NO_MEM);
        }
        memset(t + rma_nwins, 0, (size_t)(cap - rma_nwins) * sizeof *t);
        h = rma_nwins ? rma_nwins : 1;
        rma_wins = t;
        rma_nwins = cap;
    }
    w->handle = h;
    rma_wins[h] = w;
    mpi_comm_get(w->comm)->win = h; /* errors on it name the window to user handlers */
    rma_by_ctx[w->tc->ctx] = w;
    *out = w;
    return MPI_SUCCESS;
}

/*
 * The standard one-sided hints of each window (MPI 3.1 11.2.1, 11.2.7), as
 * MPI_Win_get_info reports them: the defaults, then what creation and MPI_Win_set_info
 * gave. None changes what tern does (every operation works under the strictest
 * reading), so other keys are dropped.
 */
static MPI_Info *rma_hints_of; /* by window handle */
static int rma_nhints;
static const char *const rma_hint_keys[][2] = {
    {"no_locks", "false"},
    {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"},
    {"same_size", "false"},
    {"same_disp_unit", "false"},
    {"alloc_shared_noncontig", "false"},
};

static void rma_hints_free(MPI_Win h)
{
    if (h < rma_nhints && rma_hints_of[h] != MPI_INFO_NULL) PMPI_Info_free(&rma_hints_of[h]);
}

static int rma_hints(MPI_Win h, MPI_Info in, int create)
{
    if (h >= rma_nhints) {
        int n = h + 16;
        MPI_Info *t = realloc(rma_hints_of, (size_t)n * sizeof *t);
        if (t == NULL) return MPI_ERR_NO_MEM;
        for (int i = rma_nhints; i < n; i++)
            t[i] = MPI_INFO_NULL;
        rma_hints_of = t;
        rma_nhints = n;
    }
    if (create) {
        rma_hints_free(h);
        int rc = PMPI_Info_create(&rma_hints_of[h]);
        if (rc) return rc;
        for (unsigned k = 0; k < sizeof rma_hint_keys / sizeof *rma_hint_keys; k++)
            PMPI_Info_set(rma_hints_of[h], rma_hint_keys[k][0], rma_hint_keys[k][1]);
    }
    if (in == MPI_INFO_NULL || rma_hints_of[h] == MPI_INFO_NULL) return MPI_SUCCESS;
    char v[MPI_MAX_INFO_VAL + 1];
    for (unsigned k = 0; k < sizeof rma_hint_keys / sizeof *rma_hint_keys; k++) {
        int flag = 0;
        if (PMPI_Info_get(in, rma_hint_keys[k][0], MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS &&
            flag)
            PMPI_Info_set(rma_hints_of[h], rma_hint_keys[k][0], v);
    }
    return MPI_SUCCESS;
}

static void rma_win_release(struct mpi_win *w)
{
    rma_hints_free(w->handle);
    rma_by_ctx[w->tc->ctx] = NULL;
    rma_wins[w->handle] = NULL;
    if (w->lockq) rma_nqueued--;
    while (w->lockq) {
        struct rma_lockq *q = w->lockq;
        w->lockq = q->next;
        free(q);
    }
    if (w->seg) munmap(w->seg, w->seglen);
    PMPI_Comm_free(&w->comm);
    for (int r = 0; r < w->size && w->p; r++)
        free(w->p[r].batch);
    free(w->p);
    free(w->reg);
    free(w->agroup);
    free(w->egroup);
    free(w);
}

/* Finish creating: on failure everyone releases what it made. */
static int rma_win_done(const char *fn, MPI_Comm comm, struct mpi_win *w, int rc, MPI_Win *win)
{
    if (rc) {
        rma_win_release(w);
        *win = MPI_WIN_NULL;
        return mpi_err(comm, fn, rc);
    }
    *win = w->handle;
    return MPI_SUCCESS;
}

/* A window just made records its hints. */
static int rma_made(MPI_Win win, MPI_Info info, int rc)
{
    if (rc == MPI_SUCCESS) rma_hints(win, info, 1);
    return rc;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_create";
    struct mpi_win *w = NULL;
    if (size < 0) return mpi_err(comm, fn, MPI_ERR_SIZE);
    if (disp_unit <= 0) return mpi_err(comm, fn, MPI_ERR_DISP);
    if (size > 0 && base == NULL) return mpi_err(comm, fn, MPI_ERR_BASE);
    int rc = rma_win_new(fn, comm, MPI_WIN_FLAVOR_CREATE, win, &w);
    if (rc) return rc;
    w->base = base;
    w->wsize = size;
    w->disp_unit = disp_unit;
    return rma_made(*win, info,
                    rma_win_done(fn, comm, w, rma_setup(w, size, disp_unit, base), win));
}
MPI_ALIAS(Win_create)

static int rma_allocate(const char *fn, int flavor, MPI_Aint size, int disp_unit, MPI_Comm comm,
                        void *baseptr, MPI_Win *win)
{
    struct mpi_win *w = NULL;
    if (size < 0) return mpi_err(comm, fn, MPI_ERR_SIZE);
    if (disp_unit <= 0) return mpi_err(comm, fn, MPI_ERR_DISP);
    if (baseptr == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    int rc = rma_win_new(fn, comm, flavor, win, &w);
    if (rc) return rc;
    w->wsize = size;
    w->disp_unit = disp_unit;
    rc = rma_setup(w, size, disp_unit, NULL);
    if (rc == 0 && flavor == MPI_WIN_FLAVOR_SHARED)
        for (int r = 0; r < w->size; r++)
            if (w->p[r].direct == NULL) rc = MPI_ERR_RMA_SHARED;
    if (rc == 0) *(void **)baseptr = w->base;
    return rma_win_done(fn, comm, w, rc, win);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    CORE_CS_SCOPE();
    return rma_made(*win, info,
                    rma_allocate("MPI_Win_allocate", MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, comm,
                                 baseptr, win));
}
MPI_ALIAS(Win_allocate)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    CORE_CS_SCOPE();
    return rma_made(*win, info,
                    rma_allocate("MPI_Win_allocate_shared", MPI_WIN_FLAVOR_SHARED, size, disp_unit,
                                 comm, baseptr, win));
}
MPI_ALIAS(Win_allocate_shared)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_create_dynamic";
    struct mpi_win *w = NULL;
    int rc = rma_win_new(fn, comm, MPI_WIN_FLAVOR_DYNAMIC, win, &w);
    if (rc) return rc;
    w->disp_unit = 1;
    return rma_made(*win, info, rma_win_done(fn, comm, w, rma_setup(w, 0, 1, NULL), win));
}
MPI_ALIAS(Win_create_dynamic)

#define WIN_CHECK(fn, h)                                                                           \
    struct mpi_win *w = rma_win_get(h);                                                            \
    do {                                                                                           \
        int rc_ = mpi_state();                                                                     \
        if (rc_) return mpi_err(MPI_COMM_WORLD, fn, rc_);                                          \
        if (w == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_WIN);                            \
    } while (0)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_set_info", win);
    if (!mpi_info_valid(info)) return mpi_err(w->comm, "MPI_Win_set_info", MPI_ERR_INFO);
    return mpi_err(w->comm, "MPI_Win_set_info", rma_hints(win, info, 0));
}
MPI_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_get_info", win);
    if (info_used == NULL) return mpi_err(w->comm, "MPI_Win_get_info", MPI_ERR_ARG);
    if (win < rma_nhints && rma_hints_of[win] != MPI_INFO_NULL)
        return PMPI_Info_dup(rma_hints_of[win], info_used);
    return PMPI_Info_create(info_used);
}
MPI_ALIAS(Win_get_info)

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_attach";
    WIN_CHECK(fn, win);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return mpi_err(w->comm, fn, MPI_ERR_RMA_FLAVOR);
    if (size < 0) return mpi_err(w->comm, fn, MPI_ERR_SIZE);
    if (size > 0 && base == NULL) return mpi_err(w->comm, fn, MPI_ERR_BASE);
    for (int i = 0; i < w->nreg; i++) {
        char *b = w->reg[i].base;
        if ((char *)base < b + w->reg[i].len && b < (char *)base + size)
            return mpi_err(w->comm, fn, MPI_ERR_RMA_ATTACH); /* overlapping regions */
    }
    if (w->nreg == w->capreg) {
        int cap = w->capreg ? 2 * w->capreg : 8;
        struct rma_region *t = realloc(w->reg, (size_t)cap * sizeof *t);
        if (t == NULL) return mpi_err(w->comm, fn, MPI_ERR_NO_MEM);
        w->reg = t;
        w->capreg = cap;
    }
    w->reg[w->nreg++] = (struct rma_region){base, (size_t)size};
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_detach";
    WIN_CHECK(fn, win);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return mpi_err(w->comm, fn, MPI_ERR_RMA_FLAVOR);
    for (int i = 0; i < w->nreg; i++)
        if (w->reg[i].base == base) {
            w->reg[i] = w->reg[--w->nreg];
            return MPI_SUCCESS;
        }
    return mpi_err(w->comm, fn, MPI_ERR_RMA_ATTACH);
}
MPI_ALIAS(Win_detach)

static int rma_done_flags(const void *arg);

int PMPI_Win_free(MPI_Win *win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_free";
    if (win == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    WIN_CHECK(fn, *win);
    for (int r = 0; r < w->size; r++)
        if (w->p[r].locked || w->p[r].fetching) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    /* Every origin finished with me (MPI requires its epochs closed) once all arrive. */
    int rc = rma_barrier(w);
    mpi_attr_free_all(MPI_ATTR_WIN, *win); /* delete callbacks run before the window goes */
    MPI_Comm comm = w->comm;
    (void)comm;
    rma_win_release(w);
    *win = MPI_WIN_NULL;
    return rc ? mpi_err(MPI_COMM_WORLD, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_free)

/* ---- the origin side --------------------------------------------------------------------- */

static const char rma_zero[1 << 16]; /* origin data of MPI_NO_OP (ignored by the target) */

/* Bytes of data one AM (request or reply) to world rank `world` may carry, whole elements. */
static size_t rma_room(int world)
{
    size_t r = core_am_room(world) - sizeof(struct rma_hdr);
    if (r > sizeof rma_scratch) r = sizeof rma_scratch;
    if (r > sizeof rma_zero) r = sizeof rma_zero;
    return r;
}

#define RMA_BATCH_REC 2048 /* records up to this size wait in the batch */

/* Send what waits in r's batch. */
static int rma_batch_flush(struct mpi_win *w, int r)
{
    struct rma_peer *pe = &w->p[r];
    if (pe->blen == 0) return 0;
    struct iovec v = {pe->batch, pe->blen};
    pe->blen = 0;
    return core_am_sendv(pe->world, RMA_AM_REQ, &v, 1);
}

/*
 * Send one request record (v[0] is its header, whose len this sets). Small Puts and
 * Accumulates (batch) are gathered into one frame per target, sent when it fills or
 * before any other request to that target: a run of small puts costs one frame, not
 * one system call each. Order is kept. Returns a tern error code.
 */
static int rma_send_req(struct mpi_win *w, int r, struct iovec *v, int n, int batch)
{
    struct rma_peer *pe = &w->p[r];
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += v[i].iov_len;
    ((struct rma_hdr *)v[0].iov_base)->len = (uint32_t)(len - sizeof(struct rma_hdr));
    size_t room = core_am_room(pe->world);
    int rc;
    if (batch && len <= RMA_BATCH_REC && room >= 4 * RMA_BATCH_REC) {
        if (pe->blen + len > room && (rc = rma_batch_flush(w, r))) return rc;
        if (pe->batch == NULL && (pe->batch = malloc(room)) == NULL) return TERN_ERR_NOMEM;
        tl_iov_copy(pe->batch + pe->blen, v, n);
        pe->blen += len;
        return 0;
    }
    if ((rc = rma_batch_flush(w, r))) return rc;
    return core_am_sendv(pe->world, RMA_AM_REQ, v, n);
}

static uint32_t rma_fetch_slot(void)
{
    for (uint32_t i = 0; i < rma_nfetches; i++)
        if (!rma_fetches[i].used) return i;
    uint32_t cap = rma_nfetches ? 2 * rma_nfetches : 16;
    struct rma_fetch *t = realloc(rma_fetches, cap * sizeof *t);
    if (t == NULL) return UINT32_MAX;
    memset(t + rma_nfetches, 0, (cap - rma_nfetches) * sizeof *t);
    rma_fetches = t;
    uint32_t i = rma_nfetches;
    rma_nfetches = cap;
    return i;
}

/*
 * One operation to target rank r by active messages. kind: RK_PUT, RK_ACC (origin data
 * to the target), RK_GET (target data into the result buffer), RK_GACC (both).
 * `toff` is the target offset (an address in dynamic windows) of the target type's origin.
 */
static int rma_am_op(struct mpi_win *w, int r, int kind, const char *obuf,
                     const struct mpi_type *ot, MPI_Count ocount, uint64_t toff,
                     const struct mpi_type *tt, MPI_Count tcount, const struct rma_acc *a,
                     char *rbuf, const struct mpi_type *rt, MPI_Count rcount)
{
    struct rma_peer *pe = &w->p[r];
    size_t room = rma_room(pe->world);
    size_t es = a ? a->esize : 1;
    int data = kind != RK_GET, fetch = kind == RK_GET || kind == RK_GACC;
    int noop = a && a->op == MPI_NO_OP;
    size_t total = (size_t)tcount * (size_t)tt->size;
    if (total == 0) return MPI_SUCCESS;
    uint32_t token = 0;
    if (fetch) {
        token = rma_fetch_slot();
        if (token == UINT32_MAX) return MPI_ERR_NO_MEM;
        mpi_type_ref((struct mpi_type *)rt);
        rma_fetches[token] = (struct rma_fetch){1, pe, rbuf, rt, rcount, total, rma_cur_req};
        rma_cur_used |= rma_cur_req != NULL;
        pe->fetching++;
    }
    char *pack = NULL;
    if (data && !noop && !ot->contig && (pack = malloc(room)) == NULL) return MPI_ERR_NO_MEM;
    struct rma_it ti, oi;
    it_start(&ti, tt, tcount);
    if (data && !noop) it_start(&oi, ot, ocount);
    size_t stream = 0;
    int rc = 0;
    for (;;) {
        struct rma_seg seg[RMA_MAXSEG];
        uint32_t ns = 0;
        size_t dlen = 0;
        while (ns < RMA_MAXSEG) {
            MPI_Aint to;
            size_t rem = it_cur(&ti, &to);
            if (rem == 0) break;
            size_t used = dlen + (data ? (ns + 1) * sizeof *seg : 0);
            if (used >= room) break;
            size_t avail = (room - used) / es * es;
            if (avail == 0) break;
            size_t n = rem < avail ? rem : avail;
            seg[ns++] = (struct rma_seg){toff + (uint64_t)to, n};
            it_adv(&ti, n);
            dlen += n;
        }
        if (ns == 0) break;
        struct rma_hdr h = {.ctx = w->tc->ctx,
                            .kind = (uint8_t)kind,
                            .op = a ? a->op : 0,
                            .dt = a ? a->dt : 0,
                            .nseg = ns,
                            .token = token,
                            .roff = stream};
        struct iovec v[3] = {{&h, sizeof h}, {seg, ns * sizeof *seg}, {NULL, 0}};
        if (data) {
            if (noop)
                v[2].iov_base = (void *)rma_zero;
            else if (ot->contig)
                v[2].iov_base = (char *)obuf + ot->contig_off + stream;
            else {
                rma_pack_next(obuf, &oi, pack, dlen);
                v[2].iov_base = pack;
            }
            v[2].iov_len = dlen;
        }
        rc = rma_send_req(w, r, v, 3, kind == RK_PUT || kind == RK_ACC);
        if (rc) break;
        stream += dlen;
        pe->am_ops++;
        /* Let a full transport drain before queueing more copies of the data. */
        if (core.npending) core_progress();
    }
    free(pack);
    if (rc && fetch) { /* nothing more will come for the unsent part: fail the slot */
        if (rma_fetches[token].req) core_req_complete(rma_fetches[token].req, rc);
        rma_fetches[token].used = 0;
        mpi_type_unref((struct mpi_type *)rt);
        pe->fetching--;
    }
    return rc ? mpi_from_tern(rc) : MPI_SUCCESS;
}

/* The same operation on memory mapped here: tbase + offsets of the target type. */
static void rma_direct_op(struct rma_ctl *ctl, int kind, char *obuf, const struct mpi_type *ot,
                          MPI_Count ocount, char *tbase, const struct mpi_type *tt,
                          MPI_Count tcount, const struct rma_acc *a, char *res)
{
    struct rma_it oi, ti;
    it_start(&oi, ot, ocount);
    it_start(&ti, tt, tcount);
    size_t s = 0;
    for (;;) {
        MPI_Aint oo, to;
        size_t ro = it_cur(&oi, &oo), rt = it_cur(&ti, &to);
        if (ro == 0 || rt == 0) break;
        size_t n = ro < rt ? ro : rt;
        switch (kind) {
        case RK_PUT:
            memcpy(tbase + to, obuf + oo, n);
            break;
        case RK_GET:
            memcpy(obuf + oo, tbase + to, n);
            break;
        case RK_ACC:
            rma_apply(ctl, a, tbase + to, obuf + oo, n, NULL);
            break;
        default:
            rma_apply(ctl, a, tbase + to, obuf + oo, n, res + s);
            break;
        }
        it_adv(&oi, n);
        it_adv(&ti, n);
        s += n;
    }
}

/* Put or Get by cross-memory attach. TERN_ERR_UNSUPPORTED when the kernel forbids it. */
static int rma_cma_op(struct rma_peer *pe, int write, char *obuf, const struct mpi_type *ot,
                      MPI_Count ocount, uint64_t tbase, const struct mpi_type *tt, MPI_Count tcount)
{
    struct rma_it oi, ti;
    it_start(&oi, ot, ocount);
    it_start(&ti, tt, tcount);
    for (;;) {
        struct iovec l[64], rm[64];
        int k = 0;
        size_t sum = 0;
        while (k < 64) {
            MPI_Aint oo, to;
            size_t ro = it_cur(&oi, &oo), rt = it_cur(&ti, &to);
            if (ro == 0 || rt == 0) break;
            size_t n = ro < rt ? ro : rt;
            l[k] = (struct iovec){obuf + oo, n};
            rm[k] = (struct iovec){(void *)(uintptr_t)(tbase + (uint64_t)to), n};
            k++;
            sum += n;
            it_adv(&oi, n);
            it_adv(&ti, n);
        }
        if (k == 0) return 0;
        for (int i = 0; i < k;) { /* short transfers: go on where the kernel stopped */
            ssize_t got = write ? process_vm_writev(pe->pid, l + i, (unsigned long)(k - i), rm + i,
                                                    (unsigned long)(k - i), 0)
                                : process_vm_readv(pe->pid, l + i, (unsigned long)(k - i), rm + i,
                                                   (unsigned long)(k - i), 0);
            if (got < 0) {
                if (errno == EPERM || errno == ENOSYS) return TERN_ERR_UNSUPPORTED;
                if (errno == ESRCH) return TERN_ERR_PEER_FAILED;
                return TERN_ERR_INVAL;
            }
            if (got == 0) return TERN_ERR_INVAL;
            size_t g = (size_t)got;
            while (i < k && g >= l[i].iov_len) {
                g -= l[i].iov_len;
                i++;
            }
            if (i < k && g) {
                l[i].iov_base = (char *)l[i].iov_base + g;
                l[i].iov_len -= g;
                rm[i].iov_base = (char *)rm[i].iov_base + g;
                rm[i].iov_len -= g;
            }
        }
        (void)sum;
    }
}

/* Common checks of an RMA operation. *skip: target is MPI_PROC_NULL. */
static int rma_chk_target(struct mpi_win *w, int r, MPI_Aint disp, const struct mpi_type *tt,
                          MPI_Count tcount, uint64_t *toff)
{
    if (r < 0 || r >= w->size) return MPI_ERR_RANK;
    if (disp < 0) return MPI_ERR_DISP;
    struct rma_peer *pe = &w->p[r];
    *toff = (uint64_t)disp * (uint64_t)pe->disp_unit;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || tcount == 0 || tt->size == 0) return MPI_SUCCESS;
    MPI_Aint lo = (MPI_Aint)*toff + tt->true_lb;
    MPI_Aint hi = (MPI_Aint)*toff + (MPI_Aint)(tcount - 1) * mpi_type_extent(tt) + tt->true_ub;
    if (lo < 0 || hi > pe->size) return MPI_ERR_RMA_RANGE;
    return MPI_SUCCESS;
}

/* Memory of target r mapped here at offset toff, or NULL. */
static char *rma_direct_base(struct mpi_win *w, int r, uint64_t toff)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) return r == w->rank ? (char *)(uintptr_t)toff : NULL;
    return w->p[r].direct ? w->p[r].direct + toff : NULL;
}

static int rma_chk_types(MPI_Count oc, MPI_Datatype odt, MPI_Count tc, MPI_Datatype tdt,
                         struct mpi_type **ot, struct mpi_type **tt)
{
    if (oc < 0 || tc < 0) return MPI_ERR_COUNT;
    if ((*ot = mpi_type_ok(odt)) == NULL || (*tt = mpi_type_ok(tdt)) == NULL) return MPI_ERR_TYPE;
    if ((MPI_Count)(*ot)->size * oc != (MPI_Count)(*tt)->size * tc) return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

static int rma_putget(const char *fn, int kind, void *obuf, int oc, MPI_Datatype odt, int r,
                      MPI_Aint disp, int tc, MPI_Datatype tdt, MPI_Win win)
{
    WIN_CHECK(fn, win);
    struct mpi_type *ot, *tt;
    uint64_t toff;
    int rc = rma_chk_types(oc, odt, tc, tdt, &ot, &tt);
    if (rc) return mpi_err(w->comm, fn, rc);
    if (r == MPI_PROC_NULL) return MPI_SUCCESS;
    if ((rc = rma_chk_target(w, r, disp, tt, tc, &toff))) return mpi_err(w->comm, fn, rc);
    if (tt->size == 0 || tc == 0) return MPI_SUCCESS;
    struct rma_peer *pe = &w->p[r];
    char *d = rma_direct_base(w, r, toff);
    if (d) {
        rma_direct_op(pe->ctl, kind, obuf, ot, oc, d, tt, tc, NULL, NULL);
        return MPI_SUCCESS;
    }
    if (pe->cma) {
        uint64_t tb = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? toff : pe->base + toff;
        int trc = rma_cma_op(pe, kind == RK_PUT, obuf, ot, oc, tb, tt, tc);
        if (trc == 0) return MPI_SUCCESS;
        if (trc != TERN_ERR_UNSUPPORTED)
            return mpi_err(w->comm, fn,
                           trc == TERN_ERR_INVAL ? MPI_ERR_RMA_RANGE : mpi_from_tern(trc));
        pe->cma = 0; /* the kernel forbids it: active messages from now on */
    }
    rc = kind == RK_PUT ? rma_am_op(w, r, RK_PUT, obuf, ot, oc, toff, tt, tc, NULL, NULL, NULL, 0)
                        : rma_am_op(w, r, RK_GET, NULL, NULL, 0, toff, tt, tc, NULL, obuf, ot, oc);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    CORE_CS_SCOPE();
    return rma_putget("MPI_Put", RK_PUT, (void *)origin_addr, origin_count, origin_datatype,
                      target_rank, target_disp, target_count, target_datatype, win);
}
MPI_ALIAS(Put)

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    CORE_CS_SCOPE();
    return rma_putget("MPI_Get", RK_GET, origin_addr, origin_count, origin_datatype, target_rank,
                      target_disp, target_count, target_datatype, win);
}
MPI_ALIAS(Get)

/* Accumulate (res == NULL) or Get_accumulate. */
static int rma_accumulate(const char *fn, const void *obuf, int oc, MPI_Datatype odt, void *rbuf,
                          int rcnt, MPI_Datatype rdt, int r, MPI_Aint disp, int tc,
                          MPI_Datatype tdt, MPI_Op op, MPI_Win win, int fetch)
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

/* ---- synchronization ------------------------------------------------------------------------ */

/* What a window waits for from one peer (or from every rank of a group). */
struct rma_wait {
    struct mpi_win *w;
    const int *ranks; /* NULL: just `one` */
    int n, one;
    int what; /* 0: replies and acks due, 1: lock granted, 2: posts, 3: completes */
};

static int rma_peer_ready(const struct rma_wait *x, int r)
{
    struct rma_peer *pe = &x->w->p[r];
    if (core.peers[pe->world].failed) return 1;
    switch (x->what) {
    case 0:
        return pe->fetching == 0 && pe->acks >= pe->ack_want;
    case 1:
        return pe->granted;
    case 2:
        return pe->posts > 0;
    default:
        return pe->completes > 0;
    }
}

static int rma_done_flags(const void *arg)
{
    const struct rma_wait *x = arg;
    if (x->ranks == NULL) return rma_peer_ready(x, x->one);
    for (int i = 0; i < x->n; i++)
        if (!rma_peer_ready(x, x->ranks[i])) return 0;
    return 1;
}

/* Wait as described; MPI_ERR_PROC_FAILED-class error if a peer died. */
static int rma_wait(struct mpi_win *w, const int *ranks, int n, int one, int what)
{
    struct rma_wait x = {w, ranks, n, one, what};
    int rc = core_block(rma_done_flags, &x);
    if (rc) return mpi_from_tern(rc);
    for (int i = 0; i < (ranks ? n : 1); i++)
        if (core.peers[w->p[ranks ? ranks[i] : one].world].failed)
            return mpi_from_tern(TERN_ERR_PEER_FAILED);
    return MPI_SUCCESS;
}

static int rma_send_ctl(struct mpi_win *w, int r, int kind, int excl)
{
    struct rma_hdr h = {.ctx = w->tc->ctx, .kind = (uint8_t)kind, .lock = (uint8_t)excl};
    struct iovec v = {&h, sizeof h};
    int rc = rma_send_req(w, r, &v, 1, 0);
    return rc ? mpi_from_tern(rc) : MPI_SUCCESS;
}

/* Start completing what went to r by AM: FLUSH (or UNLOCK, which implies it). */
static int rma_flush_start(struct mpi_win *w, int r, int kind)
{
    struct rma_peer *pe = &w->p[r];
    if (kind == RK_FLUSH && pe->am_ops == 0) return MPI_SUCCESS;
    int rc = rma_send_ctl(w, r, kind, 0);
    if (rc) return rc;
    pe->ack_want++;
    pe->am_ops = 0;
    return MPI_SUCCESS;
}

static int rma_flush(struct mpi_win *w, int r)
{
    /* A flush with nothing to wait for still makes progress: a process spinning on
     * Get_accumulate + flush of its own window (waiting for another's update, which only
     * it, the owner, applies) must serve that update (MPICH linked_list_lockall). */
    core_progress();
    int rc = rma_flush_start(w, r, RK_FLUSH);
    if (rc == 0) rc = rma_wait(w, NULL, 0, r, 0);
    atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

static int rma_flush_all(struct mpi_win *w)
{
    core_progress(); /* as in rma_flush */
    int rc = 0;
    for (int r = 0; r < w->size && rc == 0; r++)
        rc = rma_flush_start(w, r, RK_FLUSH);
    for (int r = 0; r < w->size && rc == 0; r++)
        rc = rma_wait(w, NULL, 0, r, 0);
    atomic_thread_fence(memory_order_seq_cst);
    return rc;
}

int PMPI_Win_fence(int assert, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_fence";
    (void)assert;
    WIN_CHECK(fn, win);
    int rc = rma_flush_all(w);
    if (rc == 0) rc = rma_barrier(w);
    atomic_thread_fence(memory_order_seq_cst);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_fence)

#define RMA_NOCHECK 0x100

/* Begin acquiring r's lock; remote requests are answered later (rma_lock_end). */
static int rma_lock_begin(struct mpi_win *w, int r, int type, int assert)
{
    struct rma_peer *pe = &w->p[r];
    if (assert & MPI_MODE_NOCHECK) {
        pe->locked = type | RMA_NOCHECK;
        return MPI_SUCCESS;
    }
    pe->locked = type;
    if (pe->ctl) return MPI_SUCCESS;
    pe->granted = 0;
    return rma_send_ctl(w, r, RK_LOCK, type == MPI_LOCK_EXCLUSIVE);
}

static int rma_lock_end(struct mpi_win *w, int r)
{
    struct rma_peer *pe = &w->p[r];
    if (pe->locked & RMA_NOCHECK) return MPI_SUCCESS;
    if (pe->ctl) {
        int excl = pe->locked == MPI_LOCK_EXCLUSIVE;
        /* The lock word is shared memory, whose release rings no doorbell: a memory
         * wait, serving requests meanwhile. */
        struct core_waiter wt;
        core_wait_begin(&wt, CORE_WAIT_MEM);
        while (!rma_try_lock(pe->ctl, excl)) {
            if (core_progress() > 0)
                core_wait_progressed(&wt);
            else
                (void)core_wait_idle(&wt);
            if (core.peers[pe->world].failed) return mpi_from_tern(TERN_ERR_PEER_FAILED);
        }
        return MPI_SUCCESS;
    }
    return rma_wait(w, NULL, 0, r, 1);
}

/* Complete everything to r and release its lock. */
static int rma_unlock_begin(struct mpi_win *w, int r)
{
    struct rma_peer *pe = &w->p[r];
    int rc = MPI_SUCCESS;
    if ((pe->locked & RMA_NOCHECK) || pe->ctl) {
        rc = rma_flush(w, r);
        if (!(pe->locked & RMA_NOCHECK)) rma_unlock_word(pe->ctl);
    } else {
        rc = rma_flush_start(w, r, RK_UNLOCK);
    }
    pe->locked = 0;
    return rc;
}

int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_lock";
    WIN_CHECK(fn, win);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return mpi_err(w->comm, fn, MPI_ERR_LOCKTYPE);
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size) return mpi_err(w->comm, fn, MPI_ERR_RANK);
    if (w->p[rank].locked || w->lock_all) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    int rc = rma_lock_begin(w, rank, lock_type, assert);
    if (rc == 0) rc = rma_lock_end(w, rank);
    if (rc) w->p[rank].locked = 0;
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_lock)

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_unlock";
    WIN_CHECK(fn, win);
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size) return mpi_err(w->comm, fn, MPI_ERR_RANK);
    if (!w->p[rank].locked || w->lock_all) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    int rc = rma_unlock_begin(w, rank);
    if (rc == 0) rc = rma_wait(w, NULL, 0, rank, 0);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_unlock)

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_lock_all";
    WIN_CHECK(fn, win);
    if (w->lock_all) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    for (int r = 0; r < w->size; r++)
        if (w->p[r].locked) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    int rc = 0;
    for (int r = 0; r < w->size && rc == 0; r++)
        rc = rma_lock_begin(w, r, MPI_LOCK_SHARED, assert);
    for (int r = 0; r < w->size && rc == 0; r++)
        rc = rma_lock_end(w, r);
    if (rc) return mpi_err(w->comm, fn, rc);
    w->lock_all = 1;
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_unlock_all";
    WIN_CHECK(fn, win);
    if (!w->lock_all) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    int rc = 0;
    for (int r = 0; r < w->size; r++) {
        int e = rma_unlock_begin(w, r);
        if (!rc) rc = e;
    }
    for (int r = 0; r < w->size && rc == 0; r++)
        rc = rma_wait(w, NULL, 0, r, 0);
    w->lock_all = 0;
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_unlock_all)

int PMPI_Win_flush(int rank, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_flush";
    WIN_CHECK(fn, win);
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size) return mpi_err(w->comm, fn, MPI_ERR_RANK);
    int rc = rma_flush(w, rank);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_flush)

int PMPI_Win_flush_all(MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_flush_all";
    WIN_CHECK(fn, win);
    int rc = rma_flush_all(w);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_flush_all)

/* Local completion: data of puts and accumulates is copied out when the call returns;
 * what is left is the replies of gets. */
int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_flush_local";
    WIN_CHECK(fn, win);
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size) return mpi_err(w->comm, fn, MPI_ERR_RANK);
    int rc = w->p[rank].fetching ? rma_wait(w, NULL, 0, rank, 0) : 0;
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_flush_local)

int PMPI_Win_flush_local_all(MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_flush_local_all";
    WIN_CHECK(fn, win);
    int rc = 0;
    for (int r = 0; r < w->size && rc == 0; r++)
        if (w->p[r].fetching) rc = rma_wait(w, NULL, 0, r, 0);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_sync", win);
    atomic_thread_fence(memory_order_seq_cst);
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_sync)

/* The window ranks of a group's members; MPI_ERR_GROUP if one is not in the window. */
static int rma_group_ranks(struct mpi_win *w, MPI_Group g, int **out, int *n)
{
    int gs, rc;
    MPI_Group wg;
    if ((rc = PMPI_Group_size(g, &gs))) return rc;
    int *in = malloc((size_t)(gs ? gs : 1) * sizeof *in),
        *o = malloc((size_t)(gs ? gs : 1) * sizeof *o);
    if (in == NULL || o == NULL) {
        free(in);
        free(o);
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < gs; i++)
        in[i] = i;
    rc = PMPI_Comm_group(w->comm, &wg);
    if (rc == 0) {
        rc = PMPI_Group_translate_ranks(g, gs, in, wg, o);
        PMPI_Group_free(&wg);
    }
    for (int i = 0; rc == 0 && i < gs; i++)
        if (o[i] == MPI_UNDEFINED) rc = MPI_ERR_GROUP;
    free(in);
    if (rc) {
        free(o);
        return rc;
    }
    *out = o;
    *n = gs;
    return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_post";
    (void)assert;
    WIN_CHECK(fn, win);
    if (w->egroup) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    int rc = rma_group_ranks(w, group, &w->egroup, &w->negroup);
    if (rc) return mpi_err(w->comm, fn, rc);
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < w->negroup && rc == 0; i++)
        rc = rma_send_ctl(w, w->egroup[i], RK_POST, 0);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_post)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_start";
    WIN_CHECK(fn, win);
    if (w->agroup) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    int rc = rma_group_ranks(w, group, &w->agroup, &w->nagroup);
    if (rc) return mpi_err(w->comm, fn, rc);
    if (assert & MPI_MODE_NOCHECK) return MPI_SUCCESS;
    rc = rma_wait(w, w->agroup, w->nagroup, 0, 2);
    for (int i = 0; i < w->nagroup; i++)
        w->p[w->agroup[i]].posts--;
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_start)

int PMPI_Win_complete(MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_complete";
    WIN_CHECK(fn, win);
    if (w->agroup == NULL) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    int rc = 0;
    /* Gets must have landed here; everything sent by AM is ordered before COMPLETE. */
    for (int i = 0; i < w->nagroup && rc == 0; i++)
        if (w->p[w->agroup[i]].fetching) rc = rma_wait(w, NULL, 0, w->agroup[i], 0);
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < w->nagroup && rc == 0; i++) {
        rc = rma_send_ctl(w, w->agroup[i], RK_COMPLETE, 0);
        w->p[w->agroup[i]].am_ops = 0;
    }
    free(w->agroup);
    w->agroup = NULL;
    w->nagroup = 0;
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_complete)

static void rma_exposure_end(struct mpi_win *w)
{
    for (int i = 0; i < w->negroup; i++)
        w->p[w->egroup[i]].completes--;
    free(w->egroup);
    w->egroup = NULL;
    w->negroup = 0;
    atomic_thread_fence(memory_order_seq_cst);
}

int PMPI_Win_wait(MPI_Win win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_wait";
    WIN_CHECK(fn, win);
    if (w->egroup == NULL) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    int rc = rma_wait(w, w->egroup, w->negroup, 0, 3);
    rma_exposure_end(w);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_test";
    WIN_CHECK(fn, win);
    if (flag == NULL) return mpi_err(w->comm, fn, MPI_ERR_ARG);
    if (w->egroup == NULL) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    core_progress();
    struct rma_wait x = {w, w->egroup, w->negroup, 0, 3};
    *flag = rma_done_flags(&x);
    if (*flag) rma_exposure_end(w);
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_test)

/* ---- queries ----------------------------------------------------------------------------------
 */

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_get_group", win);
    if (group == NULL) return mpi_err(w->comm, "MPI_Win_get_group", MPI_ERR_ARG);
    return PMPI_Comm_group(w->comm, group);
}
MPI_ALIAS(Win_get_group)

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_get_attr";
    WIN_CHECK(fn, win);
    if (attribute_val == NULL || flag == NULL) return mpi_err(w->comm, fn, MPI_ERR_ARG);
    void *v;
    switch (keyval) {
    case MPI_WIN_BASE:
        v = w->base;
        break;
    case MPI_WIN_SIZE:
        v = &w->wsize;
        break;
    case MPI_WIN_DISP_UNIT:
        v = &w->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        v = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        v = &w->model;
        break;
    default: /* the program's own attributes (mpi_attr.c) */
        return mpi_err(w->comm, fn, mpi_attr_get(MPI_ATTR_WIN, win, keyval, attribute_val, flag));
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_get_attr)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_shared_query";
    WIN_CHECK(fn, win);
    if (size == NULL || disp_unit == NULL || baseptr == NULL)
        return mpi_err(w->comm, fn, MPI_ERR_ARG);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED && w->flavor != MPI_WIN_FLAVOR_ALLOCATE)
        return mpi_err(w->comm, fn, MPI_ERR_RMA_FLAVOR);
    if (rank == MPI_PROC_NULL) { /* the lowest rank with memory */
        rank = 0;
        for (int r = 0; r < w->size; r++)
            if (w->p[r].size > 0) {
                rank = r;
                break;
            }
    }
    if (rank < 0 || rank >= w->size) return mpi_err(w->comm, fn, MPI_ERR_RANK);
    if (w->p[rank].direct == NULL) return mpi_err(w->comm, fn, MPI_ERR_RMA_SHARED);
    *size = w->p[rank].size;
    *disp_unit = w->p[rank].disp_unit;
    /* a rank that gave no memory has no base (NULL, as in MPICH and MPI 4) */
    *(void **)baseptr = w->p[rank].size > 0 ? w->p[rank].direct : NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_shared_query)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_set_errhandler", win);
    return PMPI_Comm_set_errhandler(w->comm, errhandler);
}
MPI_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_get_errhandler", win);
    return PMPI_Comm_get_errhandler(w->comm, errhandler);
}
MPI_ALIAS(Win_get_errhandler)

int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_set_name", win);
    if (name == NULL) return mpi_err(w->comm, "MPI_Win_set_name", MPI_ERR_ARG);
    snprintf(w->name, sizeof w->name, "%s", name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *name, int *len)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_get_name", win);
    if (name == NULL || len == NULL) return mpi_err(w->comm, "MPI_Win_get_name", MPI_ERR_ARG);
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *len = (int)strlen(name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_get_name)

/* MPI_Finalize: windows the program did not free. */
void mpi_win_fini(void)
{
    for (int i = 1; i < rma_nwins; i++)
        if (rma_wins[i]) {
            struct mpi_win *w = rma_wins[i];
            if (w->seg) munmap(w->seg, w->seglen);
            for (int r = 0; r < w->size; r++)
                free(w->p[r].batch);
            free(w->p);
            free(w->reg);
            free(w->agroup);
            free(w->egroup);
            while (w->lockq) {
                struct rma_lockq *q = w->lockq;
                w->lockq = q->next;
                free(q);
            }
            free(w);
        }
    free(rma_wins);
    rma_wins = NULL;
    rma_nwins = 0;
    rma_nqueued = 0;
    memset(rma_by_ctx, 0, sizeof rma_by_ctx);
    free(rma_fetches);
    rma_fetches = NULL;
    rma_nfetches = 0;
}

/* ---- request-based operations: MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate
 * Only within a passive-target epoch (a lock on the target or MPI_Win_lock_all), else
 * MPI_ERR_RMA_SYNC. The request completes at local completion: for Rput and Raccumulate
 * when the origin buffer may be reused, which is when the call returns (the data is
 * stored, written by CMA, or copied into active messages); for Rget and Rget_accumulate
 * when the result has arrived: at once on shared memory and CMA, else when the reply
 * slot the operation used is filled (rma_am_rep) or fails. The request is a core request
 * nobody else knows (state POSTED, no matching context) that those events complete. */

/* A target that died leaves its reply slots unfilled: fail their requests. */
static void rma_req_peer_failed(int world)
{
    for (uint32_t i = 0; i < rma_nfetches; i++) {
        struct rma_fetch *f = &rma_fetches[i];
        if (f->used && f->req && f->peer->world == world) {
            core_req_complete(f->req, TERN_ERR_PEER_FAILED);
            f->req = NULL;
        }
    }
}

static int rma_req_begin(struct mpi_win *w, int target, MPI_Request *request, struct mpi_req **out)
{
    if (request == NULL) return MPI_ERR_ARG;
    if (target >= 0 && target < w->size && !w->lock_all && !w->p[target].locked)
        return MPI_ERR_RMA_SYNC;
    if (target == MPI_PROC_NULL && !w->lock_all) { /* still only within some lock */
        int any = 0;
        for (int r = 0; r < w->size && !any; r++)
            any = w->p[r].locked != 0;
        if (!any) return MPI_ERR_RMA_SYNC;
    }
    if (core_failure_hook_add(rma_req_peer_failed)) return MPI_ERR_INTERN;
    struct mpi_req *mr = mpi_req_new(MPI_RK_COLL, w->comm);
    if (mr == NULL) return MPI_ERR_NO_MEM;
    core_req_t *r = core_req_alloc(CORE_REQ_COLL);
    if (r == NULL) {
        mpi_req_release(mr);
        return MPI_ERR_NO_MEM;
    }
    r->state = CORE_RS_POSTED;
    r->ctx = CORE_CTX_NONE;
    mr->r = r;
    rma_cur_req = r;
    rma_cur_used = 0;
    *out = mr;
    return MPI_SUCCESS;
}

/* After the operation (rc: its result, already reported through the error handler). */
static int rma_req_end(struct mpi_req *mr, int rc, MPI_Request *request)
{
    rma_cur_req = NULL;
    if (rc) { /* a failed operation left no reply slot holding the request */
        core_req_free(mr->r);
        mr->r = NULL;
        mpi_req_release(mr);
        return rc;
    }
    if (!rma_cur_used) core_req_complete(mr->r, TERN_OK); /* done when the call returns */
    *request = mr->handle;
    return MPI_SUCCESS;
}

#define RMA_REQ_BEGIN(fn, win, target, request)                                                    \
    WIN_CHECK(fn, win);                                                                            \
    struct mpi_req *mr;                                                                            \
    int rrc = rma_req_begin(w, target, request, &mr);                                              \
    if (rrc) return mpi_err(w->comm, fn, rrc)

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Rput";
    RMA_REQ_BEGIN(fn, win, target_rank, request);
    rrc = rma_putget(fn, RK_PUT, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                     target_disp, target_count, target_datatype, win);
    return rma_req_end(mr, rrc, request);
}
MPI_ALIAS(Rput)

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Rget";
    RMA_REQ_BEGIN(fn, win, target_rank, request);
    rrc = rma_putget(fn, RK_GET, origin_addr, origin_count, origin_datatype, target_rank,
                     target_disp, target_count, target_datatype, win);
    return rma_req_end(mr, rrc, request);
}
MPI_ALIAS(Rget)

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Raccumulate";
    RMA_REQ_BEGIN(fn, win, target_rank, request);
    rrc = rma_accumulate(fn, origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                         target_rank, target_disp, target_count, target_datatype, op, win, 0);
    return rma_req_end(mr, rrc, request);
}
MPI_ALIAS(Raccumulate)

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Rget_accumulate";
    RMA_REQ_BEGIN(fn, win, target_rank, request);
    rrc = rma_accumulate(fn, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                         result_datatype, target_rank, target_disp, target_count, target_datatype,
                         op, win, 1);
    return rma_req_end(mr, rrc, request);
}
MPI_ALIAS(Rget_accumulate)

/* The private communicator of a window (its errors go through it), or MPI_COMM_NULL when
 * win is not a live window: for the window functions outside this file (mpi_attr.c). */
MPI_Comm mpi_win_comm(MPI_Win win)
{
    struct mpi_win *w = rma_win_get(win);
    return w ? w->comm : MPI_COMM_NULL;
}

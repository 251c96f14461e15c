/*
 * mpi_win_impl.h - internals shared by the files of MPI one-sided communication (MPI
 * RMA): mpi_win.c (windows), mpi_rma_origin.c (Put/Get and the request-based calls),
 * mpi_rma_target.c (the active-message handlers), mpi_rma_acc.c (accumulates and
 * atomics) and mpi_rma_sync.c (fence, post-start-complete-wait, locks, flush).
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
#ifndef TERN_MPI_WIN_IMPL_H
#define TERN_MPI_WIN_IMPL_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/uio.h>

#include "mpi/mpi_impl.h"

#define RMA_AM_REQ CORE_AM_RMA_REQ /* origin -> target (core.h's id table) */
#define RMA_AM_REP CORE_AM_RMA_REP /* target -> origin */
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

/* ---- accumulate arithmetic ------------------------------------------------------------ */

/* A resolved accumulate: MPI operation on a predefined type of esize bytes. */
struct rma_acc {
    MPI_Op op;
    MPI_Datatype dt;
    size_t esize;
    size_t ext; /* the element's extent: above esize for pair types with padding */
    int intsum; /* MPI_SUM on an integer type: fetch-add */
    struct coll_op o;
    /* MPI_SHORT_INT, whose padding splits an element in two pieces: the packed element
     * is the first piece (split bytes) then the second, which the layout holds at off2.
     * Its updates go element by element under the target's lock (rma_pair_feed). */
    size_t split, off2;
    /* Set by the caller when the window's owner makes every update of the memory
     * (windows of user memory): plain vector loops then, no atomics (rma_apply_owned). */
    int owned;
};

/* Feeds the packed element stream of an operation on a split pair type to rma_pair_feed
 * in any cut (the pieces in order); one per operation, under the target's lock. */
struct rma_pair {
    size_t have;         /* bytes of the current packed element seen */
    char *t1, *t2, *res; /* its target pieces and where its old value goes */
    char val[16];        /* the origin's packed element */
};
void rma_pair_feed(struct rma_pair *st, const struct rma_acc *a, char *tgt, const char *src,
                   size_t n, char *res);
void rma_acc_lock(struct rma_ctl *ctl);
void rma_acc_unlock(struct rma_ctl *ctl);

/* Every update of the window's memory is made by its owner's process (user memory:
 * others reach it by AM only), so accumulates there need no atomics. */
static inline int rma_owner_updates(const struct mpi_win *w)
{
    return w->flavor == MPI_WIN_FLAVOR_CREATE || w->flavor == MPI_WIN_FLAVOR_DYNAMIC;
}

#define WIN_CHECK(fn, h)                                                                           \
    struct mpi_win *w = rma_win_get(h);                                                            \
    do {                                                                                           \
        int rc_ = mpi_state();                                                                     \
        if (rc_) return mpi_err(MPI_COMM_WORLD, fn, rc_);                                          \
        if (w == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_WIN);                            \
    } while (0)

/* mpi_win.c */
extern struct mpi_win **rma_wins;
extern int rma_nwins;
extern struct mpi_win *rma_by_ctx[CORE_CTX_MAX];
extern int rma_nqueued;
extern struct rma_fetch *rma_fetches;
extern uint32_t rma_nfetches;
extern char rma_scratch[1 << 17];
int rma_barrier(struct mpi_win *w);

/* mpi_rma_origin.c */
void rma_unpack_at(char *buf, const struct mpi_type *t, MPI_Count count, size_t at, const char *src,
                   size_t len);
int rma_send_req(struct mpi_win *w, int r, struct iovec *v, int n, int batch);
uint32_t rma_fetch_slot(void);
int rma_am_op(struct mpi_win *w, int r, int kind, const char *obuf, const struct mpi_type *ot,
              MPI_Count ocount, uint64_t toff, const struct mpi_type *tt, MPI_Count tcount,
              const struct rma_acc *a, char *rbuf, const struct mpi_type *rt, MPI_Count rcount);
void rma_direct_op(struct rma_ctl *ctl, int kind, char *obuf, const struct mpi_type *ot,
                   MPI_Count ocount, char *tbase, const struct mpi_type *tt, MPI_Count tcount,
                   const struct rma_acc *a, char *res);
int rma_chk_target(struct mpi_win *w, int r, MPI_Aint disp, const struct mpi_type *tt,
                   MPI_Count tcount, uint64_t *toff);
char *rma_direct_base(struct mpi_win *w, int r, uint64_t toff);
int rma_chk_types(MPI_Count oc, MPI_Datatype odt, MPI_Count tc, MPI_Datatype tdt,
                  struct mpi_type **ot, struct mpi_type **tt);

/* mpi_rma_acc.c */
int rma_acc_resolve(MPI_Op op, MPI_Datatype dt, struct rma_acc *a);
void rma_apply(struct rma_ctl *ctl, const struct rma_acc *a, char *tgt, const char *src, size_t n,
               char *res);
void rma_cas(struct rma_ctl *ctl, size_t es, char *tgt, const char *cmp, const char *src,
             char *res);
int rma_accumulate(const char *fn, const void *obuf, int oc, MPI_Datatype odt, void *rbuf, int rcnt,
                   MPI_Datatype rdt, int r, MPI_Aint disp, int tc, MPI_Datatype tdt, MPI_Op op,
                   MPI_Win win, int fetch);

/* mpi_rma_target.c */
int rma_try_lock(struct rma_ctl *c, int excl);
void rma_unlock_word(struct rma_ctl *c);
int rma_hook(void);
void rma_am_req(int src, const void *payload, size_t len);
void rma_am_rep(int src, const void *payload, size_t len);

static inline struct mpi_win *rma_win_get(MPI_Win h)
{
    return h > 0 && h < rma_nwins ? rma_wins[h] : NULL;
}

static inline void it_adv(struct rma_it *it, size_t n)
{
    it->in += (MPI_Aint)n;
}

#endif

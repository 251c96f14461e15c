/*
 * mpi_rma_sync.c - synchronisation of MPI one-sided communication: completion waits and
 * flushes (MPI_Win_flush*, MPI_Win_sync), MPI_Win_fence, passive-target locks
 * (MPI_Win_lock, unlock, lock_all, unlock_all) and post-start-complete-wait
 * (MPI_Win_post, start, complete, wait, test).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_win_impl.h"
#include "util/log.h"
#include "util/tunables.h"

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

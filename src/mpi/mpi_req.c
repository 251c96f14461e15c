/*
 * mpi_req.c - MPI requests: the request objects (a pool of handles), their completion
 * (MPI_Wait, MPI_Test and their any/all/some forms, MPI_Request_get_status), freeing and
 * cancelling (MPI_Request_free, MPI_Cancel, MPI_Test_cancelled), the counts of a status
 * (MPI_Get_count, MPI_Get_elements) and the release of point-to-point state at finalize.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_p2p_impl.h"
#include "util/mem.h"
#include "util/tunables.h"

struct mpi_req **mpi_reqs;
int mpi_nreqs;
static struct mpi_req *mpi_req_pool;
static void **mpi_chunks; /* the blocks of request objects, freed at finalize */

static int mpi_nchunks;

static void mpi_chunks_add(void *p)
{
    void **t = realloc(mpi_chunks, (size_t)(mpi_nchunks + 1) * sizeof *t);
    if (t == NULL) return; /* leaks one block at finalize, nothing worse */
    mpi_chunks = t;
    mpi_chunks[mpi_nchunks++] = p;
}

/* Requests freed with MPI_Request_free while still running: completed in the background. */
struct mpi_orphan {
    struct mpi_orphan *next;
    struct mpi_req *mr;
};
static struct mpi_orphan *mpi_orphans;

struct mpi_req *mpi_req_new(int kind, MPI_Comm comm)
{
    struct mpi_req *mr = mpi_req_pool;
    if (__builtin_expect(mr != NULL, 1)) {
        mpi_req_pool = mr->next_free;
    } else {
        /* Grow the handle table by a chunk of objects; handle 0 is MPI_REQUEST_NULL. */
        int n = mpi_nreqs ? mpi_nreqs * 2 : 64;
        if (n > MPI_HANDLE_SLOT_MASK + 1) return NULL; /* 4 Mi requests live at once */
        struct mpi_req **t = realloc(mpi_reqs, (size_t)n * sizeof *t);
        if (t == NULL) return NULL;
        mpi_reqs = t;
        int first = mpi_nreqs ? mpi_nreqs : 1;
        struct mpi_req *objs = calloc((size_t)(n - first), sizeof *objs);
        if (objs == NULL) return NULL;
        t[0] = NULL;
        for (int i = first; i < n; i++) {
            t[i] = &objs[i - first];
            t[i]->handle = mpi_handle_next(0, i);
        }
        for (int i = n - 1; i > first; i--) {
            t[i]->next_free = mpi_req_pool;
            mpi_req_pool = t[i];
        }
        mr = t[first];
        mpi_chunks_add(objs);
        mpi_nreqs = n;
    }
    /* Pooled objects are all zero but for handle and next_free (mpi_req_release). */
    mr->kind = (uint8_t)kind;
    mr->comm = comm;
    mr->active = 1;
    return mr;
}

void mpi_req_release(struct mpi_req *mr)
{
    if (mr->utype) mpi_type_unref(mr->utype);
    if (mr->ptype) mpi_type_unref(mr->ptype);
    free(mr->tmp);
    if (__builtin_expect(mr->kind >= MPI_RK_SENDRECV, 0)) {
        if (mr->r2) core_req_free(mr->r2);
        free(mr->tmp2);
    }
    if (mr->pcoll) mpi_pcoll_free(mr->pcoll);
    /* Back to all zero, and the user's copy of the handle goes stale (mpi_handle_next). */
    MPI_Request h = mpi_handle_next(mr->handle, mpi_handle_slot(mr->handle));
    util_zero(mr, sizeof *mr);
    mr->handle = h;
    mr->next_free = mpi_req_pool;
    mpi_req_pool = mr;
}

static inline int mpi_req_done(const struct mpi_req *mr)
{
    if (__builtin_expect(mr->r2 != NULL, 0) && mr->r2->state != CORE_RS_DONE) return 0;
    return mr->r == NULL || mr->r->state == CORE_RS_DONE;
}

/* Finish one operation (the request is done): unpack, status, free the core request.
 * The request object itself stays (persistent) or goes (the caller's choice). */
int mpi_req_finish_op(struct mpi_req *mr, MPI_Status *st)
{
    core_req_t *r = mr->r;
    int err = MPI_SUCCESS;
    if (__builtin_expect(mr->r2 != NULL, 0)) { /* MPI_Isendrecv: the send, then the receive */
        core_wait(mr->r2);
        err = mpi_from_tern(mr->r2->err);
        core_req_free(mr->r2);
        mr->r2 = NULL;
        free(mr->tmp2);
        mr->tmp2 = NULL;
        if (err) {
            if (r) core_wait(r);
            mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
            if (r) core_req_free(r);
            mr->r = NULL;
            r = NULL;
        }
    }
    if (err) {
    } else if (mr->proc_null) {
        mpi_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
    } else if (r == NULL) {
        mpi_status_empty(st);
        if (st != MPI_STATUS_IGNORE)
            mpi_status_set_cancelled(st, mr->cancelled); /* a buffered send */
    } else if (__builtin_expect(mr->kind == MPI_RK_GREQ, 0)) {
        err = mpi_greq_finish(mr, st);
    } else if (__builtin_expect(mr->kind == MPI_RK_IDUP, 0)) {
        err = mpi_idup_finish(mr);
        mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    } else {
        err = mpi_from_tern(r->err);
        if (r->kind == CORE_REQ_RECV) {
            size_t got = r->bytes < r->len ? r->bytes : r->len;
            if (mr->unpack && got)
                mpi_unpack((char *)mr->tmp + mr->uoff, got, mr->ubuf, mr->ucount, mr->utype);
            if (st != MPI_STATUS_IGNORE) {
                mpi_status_set(st,
                               mr->cancelled ? MPI_ANY_SOURCE : core_comm_rank_of(r->comm, r->src),
                               mr->cancelled ? MPI_ANY_TAG : r->msg_tag, (MPI_Count)got);
                mpi_status_set_cancelled(st, mr->cancelled);
            }
        } else {
            if (r->kind == CORE_REQ_COLL && mr->unpack && err == MPI_SUCCESS)
                mpi_unpack((char *)mr->tmp + mr->uoff, (size_t)(mr->ucount * mr->utype->size),
                           mr->ubuf, mr->ucount, mr->utype);
            mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
            if (st != MPI_STATUS_IGNORE) mpi_status_set_cancelled(st, mr->cancelled);
        }
        core_req_free(r);
        mr->r = NULL;
    }
    free(mr->tmp);
    mr->tmp = NULL;
    if (mr->utype && !mr->persistent) {
        mpi_type_unref(mr->utype);
        mr->utype = NULL;
    }
    mr->ubuf = NULL;
    mr->unpack = 0;
    mr->active = 0;
    mr->cancelled = 0;
    return err;
}

/*
 * The common completion, inline: a non-persistent send or receive with nothing to unpack
 * or free (contiguous data, a real peer). Returns -1 when the request needs the general
 * path (mpi_req_complete), else its MPI error; the request object is released.
 */
static inline int mpi_req_complete_fast(struct mpi_req *mr, MPI_Status *st)
{
    core_req_t *r = mr->r;
    if (__builtin_expect(r == NULL || mr->kind > MPI_RK_RECV || mr->persistent || mr->tmp != NULL ||
                             mr->utype != NULL || mr->cancelled || r->kind == CORE_REQ_COLL,
                         0))
        return -1;
    int err = __builtin_expect(r->err == 0, 1) ? MPI_SUCCESS : mpi_from_tern(r->err);
    if (st != MPI_STATUS_IGNORE) {
        if (r->kind == CORE_REQ_RECV)
            mpi_status_set(st, core_comm_rank_of(r->comm, r->src), r->msg_tag,
                           (MPI_Count)(r->bytes < r->len ? r->bytes : r->len));
        else
            mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
    }
    core_req_free(r);
    mr->r = NULL; /* every other field but these three is still zero (see the test above) */
    mr->active = 0;
    mr->kind = 0;
    mr->comm = 0;
    mr->handle = mpi_handle_next(mr->handle, mpi_handle_slot(mr->handle));
    mr->next_free = mpi_req_pool;
    mpi_req_pool = mr;
    return err;
}

/* Finish a done request: unpack, fill the status, free what it owns. Returns its MPI error. */
static int mpi_req_complete(struct mpi_req *mr, MPI_Status *st)
{
    int err = mpi_req_finish_op(mr, st);
    if (!mr->persistent) mpi_req_release(mr);
    return err;
}

/* Complete a done request and clear the user's handle unless it is persistent. */
static int mpi_req_take(MPI_Request *h, MPI_Status *st)
{
    struct mpi_req *mr = mpi_req_at(*h);
    int fast = mpi_req_complete_fast(mr, st);
    if (__builtin_expect(fast >= 0, 1)) {
        *h = MPI_REQUEST_NULL;
        return fast;
    }
    int persistent = mr->persistent;
    int err = mpi_req_complete(mr, st);
    if (!persistent) *h = MPI_REQUEST_NULL;
    return err;
}

static void mpi_orphans_reap(void)
{
    for (struct mpi_orphan **p = &mpi_orphans, *o; (o = *p) != NULL;) {
        if (mpi_req_done(o->mr)) {
            o->mr->persistent = 0;
            mpi_req_complete(o->mr, MPI_STATUS_IGNORE);
            *p = o->next;
            free(o);
        } else {
            p = &o->next;
        }
    }
}

/* ---- completion ------------------------------------------------------------------------ */

/* A live request handle, or NULL (MPI_ERR_REQUEST). */
static inline struct mpi_req *mpi_req_live(MPI_Request h)
{
    struct mpi_req *mr = mpi_req_get(h);
    return mr && mr->kind ? mr : NULL;
}

/* Live and taking part in any/some (null and inactive persistent requests do not). */
static inline int mpi_req_counts(MPI_Request h)
{
    struct mpi_req *mr = h == MPI_REQUEST_NULL ? NULL : mpi_req_get(h);
    return mr && mr->kind && mr->active;
}

static int mpi_check_reqs(int n, const MPI_Request reqs[])
{
    if (mpi_state()) return MPI_ERR_OTHER;
    if (n < 0 || (n > 0 && reqs == NULL)) return MPI_ERR_ARG;
    for (int i = 0; i < n; i++)
        if (reqs[i] != MPI_REQUEST_NULL && mpi_req_live(reqs[i]) == NULL) return MPI_ERR_REQUEST;
    return MPI_SUCCESS;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Wait";
    if (__builtin_expect(mpi_state(), 0)) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (request == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (*request == MPI_REQUEST_NULL) {
        mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    struct mpi_req *mr = mpi_req_live(*request);
    if (mr == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_REQUEST);
    MPI_Comm comm = mr->comm;
    if (!mpi_req_done(mr)) {
        int rc = core_wait(mr->r);
        if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    }
    int err = mpi_req_take(request, status);
    return __builtin_expect(err == 0, 1) ? MPI_SUCCESS : mpi_err(comm, fn, err);
}
MPI_ALIAS(Wait)

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Test";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (request == NULL || flag == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (*request == MPI_REQUEST_NULL) {
        *flag = 1;
        mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    struct mpi_req *mr = mpi_req_live(*request);
    if (mr == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_REQUEST);
    MPI_Comm comm = mr->comm;
    if (!mpi_req_done(mr)) core_progress();
    if (!mpi_req_done(mr)) {
        int rc = core_alive();
        if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
        *flag = 0;
        return MPI_SUCCESS;
    }
    *flag = 1;
    return mpi_err(comm, fn, mpi_req_take(request, status));
}
MPI_ALIAS(Test)

/*
 * The MPI_ERROR field of statuses[i], whose operation ended with err, in a call that returns
 * several statuses. MPI (3.2.5) lets such a call write the field only when it returns
 * MPI_ERR_IN_STATUS: so nothing is written until the first error; then every status
 * before it gets MPI_SUCCESS, and each one from then on its own code.
 */
static void mpi_status_in_set(MPI_Status statuses[], int i, int err, int *any_err)
{
    if (err && !*any_err && statuses != MPI_STATUSES_IGNORE)
        for (int j = 0; j < i; j++)
            statuses[j].MPI_ERROR = MPI_SUCCESS;
    if (err) *any_err = 1;
    if (*any_err && statuses != MPI_STATUSES_IGNORE) statuses[i].MPI_ERROR = err;
}

/* Complete requests[i] (done) into statuses[i]; remember the first error's communicator. */
static void mpi_take_into(MPI_Request reqs[], int i, MPI_Status statuses[], int *any_err,
                          MPI_Comm *err_comm)
{
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    struct mpi_req *mr = mpi_req_at(reqs[i]);
    MPI_Comm comm = mr->comm;
    int err = mpi_req_take(&reqs[i], st);
    if (err && !*any_err) *err_comm = comm;
    mpi_status_in_set(statuses, i, err, any_err);
}

/* requests[i] is MPI_REQUEST_NULL: an empty status, in a call returning several. */
static void mpi_null_into(MPI_Status statuses[], int i, int *any_err)
{
    if (statuses == MPI_STATUSES_IGNORE) return;
    mpi_status_empty(&statuses[i]);
    mpi_status_in_set(statuses, i, MPI_SUCCESS, any_err);
}

int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Waitall";
    int rc = mpi_check_reqs(count, requests);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    int any_err = 0;
    MPI_Comm ecomm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL) {
            mpi_null_into(statuses, i, &any_err);
            continue;
        }
        struct mpi_req *mr = mpi_req_at(requests[i]);
        if (!mpi_req_done(mr)) {
            rc = core_wait(mr->r);
            if (rc) return mpi_err(mr->comm, fn, mpi_from_tern(rc));
        }
        mpi_take_into(requests, i, statuses, &any_err, &ecomm);
    }
    return any_err ? mpi_err(ecomm, fn, MPI_ERR_IN_STATUS) : MPI_SUCCESS;
}
MPI_ALIAS(Waitall)

struct mpi_any {
    const MPI_Request *reqs;
    int n;
};

/* Some live request of the set is done (or none is live at all). */
static int mpi_any_done(const void *arg)
{
    const struct mpi_any *a = arg;
    int live = 0;
    for (int i = 0; i < a->n; i++)
        if (mpi_req_counts(a->reqs[i])) {
            live = 1;
            if (mpi_req_done(mpi_req_at(a->reqs[i]))) return 1;
        }
    return !live;
}

static int mpi_find_done(const MPI_Request reqs[], int n, int *live)
{
    *live = 0;
    for (int i = 0; i < n; i++)
        if (mpi_req_counts(reqs[i])) {
            *live = 1;
            if (mpi_req_done(mpi_req_at(reqs[i]))) return i;
        }
    return -1;
}

static int mpi_waitany(const char *fn, int count, MPI_Request reqs[], int *index, int *flag,
                       MPI_Status *status, int block)
{
    int rc = mpi_check_reqs(count, reqs);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    if (index == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_any a = {reqs, count};
    if (block) {
        rc = core_block(mpi_any_done, &a);
        if (rc) return mpi_err(MPI_COMM_WORLD, fn, mpi_from_tern(rc));
    } else {
        core_progress();
    }
    int live, i = mpi_find_done(reqs, count, &live);
    if (!live) {
        *index = MPI_UNDEFINED;
        if (flag) *flag = 1;
        mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    if (i < 0) {
        *index = MPI_UNDEFINED;
        *flag = 0;
        return MPI_SUCCESS;
    }
    *index = i;
    if (flag) *flag = 1;
    MPI_Comm comm = mpi_req_at(reqs[i])->comm;
    return mpi_err(comm, fn, mpi_req_take(&reqs[i], status));
}

int PMPI_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    CORE_CS_SCOPE();
    return mpi_waitany("MPI_Waitany", count, requests, index, NULL, status, 1);
}
MPI_ALIAS(Waitany)

int PMPI_Testany(int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status)
{
    CORE_CS_SCOPE();
    if (flag == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Testany", MPI_ERR_ARG);
    return mpi_waitany("MPI_Testany", count, requests, index, flag, status, 0);
}
MPI_ALIAS(Testany)

static int mpi_waitsome(const char *fn, int incount, MPI_Request reqs[], int *outcount,
                        int indices[], MPI_Status statuses[], int block)
{
    int rc = mpi_check_reqs(incount, reqs);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    if (outcount == NULL || (incount > 0 && indices == NULL))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_any a = {reqs, incount};
    if (block) {
        rc = core_block(mpi_any_done, &a);
        if (rc) return mpi_err(MPI_COMM_WORLD, fn, mpi_from_tern(rc));
    } else {
        core_progress();
    }
    int live = 0, n = 0, any_err = 0;
    MPI_Comm ecomm = MPI_COMM_WORLD;
    for (int i = 0; i < incount; i++) {
        if (!mpi_req_counts(reqs[i])) continue;
        live = 1;
        if (!mpi_req_done(mpi_req_at(reqs[i]))) continue;
        MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[n];
        MPI_Comm comm = mpi_req_at(reqs[i])->comm;
        int err = mpi_req_take(&reqs[i], st);
        if (err && !any_err) ecomm = comm;
        mpi_status_in_set(statuses, n, err, &any_err);
        indices[n++] = i;
    }
    *outcount = live ? n : MPI_UNDEFINED;
    return any_err ? mpi_err(ecomm, fn, MPI_ERR_IN_STATUS) : MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    CORE_CS_SCOPE();
    return mpi_waitsome("MPI_Waitsome", incount, requests, outcount, indices, statuses, 1);
}
MPI_ALIAS(Waitsome)

int PMPI_Testsome(int incount, MPI_Request requests[], int *outcount, int indices[],
                  MPI_Status statuses[])
{
    CORE_CS_SCOPE();
    return mpi_waitsome("MPI_Testsome", incount, requests, outcount, indices, statuses, 0);
}
MPI_ALIAS(Testsome)

int PMPI_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Testall";
    int rc = mpi_check_reqs(count, requests);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    if (flag == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    core_progress();
    for (int i = 0; i < count; i++)
        if (requests[i] != MPI_REQUEST_NULL && !mpi_req_done(mpi_req_at(requests[i]))) {
            rc = core_alive();
            if (rc) return mpi_err(MPI_COMM_WORLD, fn, mpi_from_tern(rc));
            *flag = 0;
            return MPI_SUCCESS;
        }
    *flag = 1;
    int any_err = 0;
    MPI_Comm ecomm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        if (requests[i] == MPI_REQUEST_NULL) {
            mpi_null_into(statuses, i, &any_err);
            continue;
        }
        mpi_take_into(requests, i, statuses, &any_err, &ecomm);
    }
    return any_err ? mpi_err(ecomm, fn, MPI_ERR_IN_STATUS) : MPI_SUCCESS;
}
MPI_ALIAS(Testall)

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Request_get_status";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (flag == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (request == MPI_REQUEST_NULL) {
        *flag = 1;
        mpi_status_empty(status);
        return MPI_SUCCESS;
    }
    struct mpi_req *mr = mpi_req_live(request);
    if (mr == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_REQUEST);
    if (!mpi_req_done(mr)) core_progress();
    *flag = mpi_req_done(mr);
    if (!*flag) return MPI_SUCCESS;
    core_req_t *r = mr->r;
    if (mr->kind == MPI_RK_GREQ) return mpi_err(mr->comm, fn, mpi_greq_query(mr, status));
    if (mr->proc_null)
        mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, 0);
    else if (r == NULL || r->kind != CORE_REQ_RECV) {
        mpi_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, 0);
        /* A cancelled send says so here too, before Wait or Free (mpi4py relies on it). */
        if (status != MPI_STATUS_IGNORE) mpi_status_set_cancelled(status, mr->cancelled);
    } else if (status != MPI_STATUS_IGNORE) {
        size_t got = r->bytes < r->len ? r->bytes : r->len;
        mpi_status_set(status, core_comm_rank_of(r->comm, r->src), r->msg_tag, (MPI_Count)got);
        mpi_status_set_cancelled(status, mr->cancelled);
    }
    return MPI_SUCCESS;
}
MPI_ALIAS(Request_get_status)

int PMPI_Request_free(MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Request_free";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (request == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_live(*request);
    if (mr == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_REQUEST);
    if (mpi_req_done(mr)) {
        mr->persistent = 0;
        mpi_req_complete(mr, MPI_STATUS_IGNORE);
    } else {
        /* Still running: it completes in the background and is released then. */
        struct mpi_orphan *o = malloc(sizeof *o);
        if (o == NULL) return mpi_err(mr->comm, fn, MPI_ERR_NO_MEM);
        o->mr = mr;
        o->next = mpi_orphans;
        mpi_orphans = o;
    }
    *request = MPI_REQUEST_NULL;
    mpi_orphans_reap();
    return MPI_SUCCESS;
}
MPI_ALIAS(Request_free)

int PMPI_Cancel(MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cancel";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (request == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_live(*request);
    if (mr == NULL || (mr->persistent && !mr->active))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_REQUEST);
    if (mr->kind == MPI_RK_GREQ) return mpi_err(mr->comm, fn, mpi_greq_cancel(mr));
    core_req_t *r = mr->r;
    /* A receive nobody has matched yet is withdrawn here; a send the receiver has not
     * matched is withdrawn from its unexpected queue (mpi_cancel.c). A receive already
     * matched, or a matched send, completes normally (MPI allows a cancel to have no
     * effect). */
    if (mr->kind == MPI_RK_SEND && !mr->proc_null && !mr->cancelled &&
        (r ? r->kind == CORE_REQ_SEND : mr->mode == MPI_SM_BUFFERED && mr->bsend_peer >= 0)) {
        struct mpi_comm *c = mpi_comm_get(mr->comm);
        if (c == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_COMM);
        int done = 0, rc = r ? mpi_cancel_send(r->id, r->peer, r->ctx, r, &done)
                             : mpi_cancel_send(mr->bsend_id, mr->bsend_peer, c->tc->ctx,
                                               mpi_bsend_find(mr->bsend_id), &done);
        if (rc) return mpi_err(mr->comm, fn, rc);
        mr->cancelled = (uint8_t)done;
        return MPI_SUCCESS;
    }
    if (r && r->kind == CORE_REQ_RECV && r->state == CORE_RS_POSTED) {
        core_match_unpost(core_match_get(r->ctx), r);
        r->bytes = 0;
        core_req_complete(r, TERN_OK);
        mr->cancelled = 1;
    }
    return MPI_SUCCESS;
}
MPI_ALIAS(Cancel)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    CORE_CS_SCOPE();
    if (status == NULL || flag == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Test_cancelled", MPI_ERR_ARG);
    *flag = mpi_status_cancelled(status);
    return MPI_SUCCESS;
}
MPI_ALIAS(Test_cancelled)

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Get_count";
    struct mpi_type *t = mpi_type_ok(datatype);
    if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE);
    if (status == NULL || count == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (t->size == 0)
        *count = 0;
    else
        *count =
            mpi_status_bytes(status) % t->size ? MPI_UNDEFINED : mpi_status_bytes(status) / t->size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Get_count_c)

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    CORE_CS_SCOPE();
    MPI_Count n;
    int rc = PMPI_Get_count_c(status, datatype, &n);
    if (rc == MPI_SUCCESS) *count = n > INT32_MAX ? MPI_UNDEFINED : (int)n;
    return rc;
}
MPI_ALIAS(Get_count)

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Get_elements";
    struct mpi_type *t = mpi_type_ok(datatype);
    if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE);
    if (status == NULL || count == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    MPI_Count b = mpi_status_bytes(status), n = MPI_UNDEFINED;
    if (mpi_type_elements(datatype, b, &n) == 0) { /* the type map walked (mpi_type_decode.c) */
    } else if (t->basic_size > 0 && b % t->basic_size == 0)
        n = b / t->basic_size;
    else if (t->size > 0 && b % t->size == 0 && t->predefined)
        n = b / t->size * (t->nblk > 1 ? 2 : 1);
    else if (t->size == 0)
        n = 0;
    *count = n > INT32_MAX ? MPI_UNDEFINED : (int)n;
    return MPI_SUCCESS;
}
MPI_ALIAS(Get_elements)

void mpi_p2p_fini(void)
{
    mpi_orphans_reap();
    for (struct mpi_orphan *o = mpi_orphans, *n; o; o = n) {
        n = o->next;
        free(o);
    }
    mpi_orphans = NULL;
    for (int i = 0; i < mpi_nchunks; i++)
        free(mpi_chunks[i]);
    free(mpi_chunks);
    mpi_chunks = NULL;
    mpi_nchunks = 0;
    free(mpi_reqs);
    mpi_reqs = NULL;
    mpi_nreqs = 0;
    mpi_req_pool = NULL;
}

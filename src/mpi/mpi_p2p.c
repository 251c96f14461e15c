/*
 * mpi_p2p.c - MPI point-to-point: sends in every mode, receives, probes, completion
 * (wait/test and their any/all/some forms), cancel, persistent requests, buffered sends.
 *
 * Fast path: a contiguous send or receive checks its arguments and calls core_isend /
 * core_irecv on the user's buffer; the only object is the core request (a blocking call
 * makes no MPI request at all, a non-blocking one takes a request object from a pool).
 * Non-contiguous datatypes move between the user's blocks with no packed copy: the
 * core takes the datatype's flattened blocks (core_isend_lay, core_irecv_lay) and
 * scatters what arrives, or lets the transport read or pull straight into them. Only an
 * eager send of many small blocks is packed first (gathering it costs more, docs/MPI.md).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"
#include "util/tunables.h"

struct mpi_req **mpi_reqs;
int mpi_nreqs;
static struct mpi_req *mpi_req_pool;
static void **mpi_chunks; /* the blocks of request objects, freed at finalize */
static unsigned long long mpi_stat_tmp, mpi_stat_tmp_bytes; /* tern_mpi_stat() */

long long tern_mpi_stat(const char *name)
{
    if (name == NULL) return -1;
    if (strcmp(name, "p2p_temporaries") == 0) return (long long)mpi_stat_tmp;
    if (strcmp(name, "p2p_temporary_bytes") == 0) return (long long)mpi_stat_tmp_bytes;
    return -1;
}
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
    /* Back to all zero, and the user's copy of the handle goes stale (mpi_handle_next). */
    MPI_Request h = mpi_handle_next(mr->handle, mpi_handle_slot(mr->handle));
    memset(mr, 0, sizeof *mr);
    mr->handle = h;
    mr->next_free = mpi_req_pool;
    mpi_req_pool = mr;
}

static inline int mpi_req_done(const struct mpi_req *mr)
{
    return mr->r == NULL || mr->r->state == CORE_RS_DONE;
}

/* Finish one operation (the request is done): unpack, status, free the core request.
 * The request object itself stays (persistent) or goes (the caller's choice). */
static int mpi_req_finish_op(struct mpi_req *mr, MPI_Status *st)
{
    core_req_t *r = mr->r;
    int err = MPI_SUCCESS;
    if (mr->proc_null) {
        mpi_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    } else if (r == NULL) {
        mpi_status_empty(st);
    } else if (__builtin_expect(mr->kind == MPI_RK_GREQ, 0)) {
        err = mpi_greq_finish(mr, st);
    } else {
        err = mpi_from_tern(r->err);
        if (r->kind == CORE_REQ_RECV) {
            size_t got = r->bytes < r->len ? r->bytes : r->len;
            if (mr->unpack && got)
                mpi_unpack((char *)mr->tmp + mr->uoff, got, mr->ubuf, mr->ucount, mr->utype);
            if (st) {
                mpi_status_set(st,
                               mr->cancelled ? MPI_ANY_SOURCE : core_comm_rank_of(r->comm, r->src),
                               mr->cancelled ? MPI_ANY_TAG : r->msg_tag, err, (MPI_Count)got);
                st->tern_cancelled = mr->cancelled;
            }
        } else {
            if (r->kind == CORE_REQ_COLL && mr->unpack && err == MPI_SUCCESS)
                mpi_unpack((char *)mr->tmp + mr->uoff, (size_t)(mr->ucount * mr->utype->size),
                           mr->ubuf, mr->ucount, mr->utype);
            mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, err, 0);
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
            mpi_status_set(st, core_comm_rank_of(r->comm, r->src), r->msg_tag, err,
                           (MPI_Count)(r->bytes < r->len ? r->bytes : r->len));
        else
            mpi_status_set(st, MPI_ANY_SOURCE, MPI_ANY_TAG, err, 0);
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

/* ---- buffered sends ---------------------------------------------------------------- */

struct mpi_bsend {
    struct mpi_bsend *next; /* by offset */
    core_req_t *r;
    size_t off, len;
};
static char *mpi_bbuf;
static size_t mpi_bsize;
static struct mpi_bsend *mpi_bsends;
static void *mpi_bbuf_user; /* as attached, for MPI_Buffer_detach */
static int mpi_bbuf_usize;

static void mpi_bsend_reap(void)
{
    for (struct mpi_bsend **p = &mpi_bsends, *b; (b = *p) != NULL;) {
        if (b->r->state == CORE_RS_DONE) {
            core_req_free(b->r);
            *p = b->next;
            free(b);
        } else {
            p = &b->next;
        }
    }
}

/* Copy the message into the attached buffer and start a standard send from there. */
static int mpi_bsend_start(const void *buf, MPI_Count count, const struct mpi_type *t, int dest,
                           int tag, uint16_t ctx)
{
    size_t n = (size_t)(count * t->size);
    size_t need = (n + MPI_BSEND_OVERHEAD + 15) & ~(size_t)15;
    mpi_bsend_reap();
    size_t off = 0;
    struct mpi_bsend **p = &mpi_bsends;
    for (; *p; p = &(*p)->next) {
        if ((*p)->off >= off + need) break;
        off = (*p)->off + (*p)->len;
    }
    if (mpi_bbuf == NULL || off + need > mpi_bsize) return MPI_ERR_BUFFER;
    struct mpi_bsend *b = malloc(sizeof *b);
    if (b == NULL) return MPI_ERR_NO_MEM;
    if (t->contig)
        memcpy(mpi_bbuf + off, (const void *)((uintptr_t)buf + (uintptr_t)t->contig_off), n);
    else
        mpi_pack(buf, count, t, mpi_bbuf + off);
    int rc = core_isend(mpi_bbuf + off, n, dest, tag, ctx, 0, &b->r);
    if (rc) {
        free(b);
        return mpi_from_tern(rc);
    }
    b->off = off;
    b->len = need;
    b->next = *p;
    *p = b;
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach(void *buffer, int size)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Buffer_attach";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (size < 0 || (buffer == NULL && size > 0)) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (mpi_bbuf) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_BUFFER);
    /* Keep the bsend areas 16-byte aligned inside the user's buffer. */
    uintptr_t a = (uintptr_t)buffer, al = (a + 15) & ~(uintptr_t)15;
    mpi_bbuf = buffer;
    mpi_bsize = (size_t)size;
    if (al - a <= (size_t)size) {
        mpi_bbuf = (char *)al;
        mpi_bsize = (size_t)size - (al - a);
    }
    mpi_bbuf_user = buffer;
    mpi_bbuf_usize = size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Buffer_attach)

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Buffer_detach";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (buffer_addr == NULL || size == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    /* Detaching waits until every buffered message is on its way. */
    for (struct mpi_bsend *b = mpi_bsends; b; b = b->next) {
        int rc = core_wait(b->r);
        if (rc) return mpi_err(MPI_COMM_WORLD, fn, mpi_from_tern(rc));
    }
    mpi_bsend_reap();
    *(void **)buffer_addr = mpi_bbuf_user;
    *size = mpi_bbuf_usize;
    mpi_bbuf = NULL;
    mpi_bsize = 0;
    mpi_bbuf_user = NULL;
    mpi_bbuf_usize = 0;
    return MPI_SUCCESS;
}
MPI_ALIAS(Buffer_detach)

/* ---- argument checks -------------------------------------------------------------- */

static inline int mpi_check_common(MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                                   struct mpi_comm **c, struct mpi_type **t)
{
    if (__builtin_expect(mpi_state(), 0)) return MPI_ERR_OTHER;
    if ((*c = mpi_comm_get(comm)) == NULL) return MPI_ERR_COMM;
    if (count < 0) return MPI_ERR_COUNT;
    if ((*t = mpi_type_ok(dt)) == NULL) return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

static inline int mpi_check_send(const void *buf, MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                                 int dest, int tag, struct mpi_comm **c, struct mpi_type **t)
{
    int rc = mpi_check_common(comm, count, dt, c, t);
    if (rc) return rc;
    if (dest != MPI_PROC_NULL && (dest < 0 || dest >= (*c)->tc->size)) return MPI_ERR_RANK;
    if (tag < 0 || tag > TERN_TAG_UB) return MPI_ERR_TAG;
    /* MPI_BOTTOM (NULL) is a valid base for derived types with absolute addresses. */
    if (buf == NULL && count > 0 && (*t)->predefined && (*t)->size > 0) return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}

static inline int mpi_check_recv(const void *buf, MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                                 int source, int tag, struct mpi_comm **c, struct mpi_type **t)
{
    int rc = mpi_check_common(comm, count, dt, c, t);
    if (rc) return rc;
    if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE &&
        (source < 0 || source >= (*c)->tc->size))
        return MPI_ERR_RANK;
    if (tag < MPI_ANY_TAG) return MPI_ERR_TAG;
    if (buf == NULL && count > 0 && (*t)->predefined && (*t)->size > 0) return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}

static inline int mpi_src_world(const struct tern_comm *tc, int source)
{
    return source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE : core_comm_world(tc, source);
}

/* ---- posting ----------------------------------------------------------------------- */

/* A non-contiguous send: by rendezvous from the user's blocks (core layout), eagerly
 * gathered from them when few, else packed into *tmp first. Kept out of line: the
 * contiguous fast path below then needs no room for the iovec array. */
static __attribute__((noinline)) int mpi_send_post_noncontig(const void *buf, MPI_Count count,
                                                             const struct mpi_type *t, int dest,
                                                             int tag, const struct tern_comm *tc,
                                                             int mode, core_req_t **r, void **tmp)
{
    size_t n = (size_t)(count * t->size);
    /* Rendezvous: the receiver pulls from the blocks, or they are streamed from. */
    int rc = core_isend_lay(buf, &t->lay, n, core_comm_world(tc, dest), tag, tc->ctx,
                            mode == MPI_SM_SYNC, r);
    if (rc != TERN_ERR_UNSUPPORTED) return rc ? mpi_from_tern(rc) : MPI_SUCCESS;
    /* Eager and few blocks: the transport gathers straight from the user's pieces. */
    if ((MPI_Count)t->nblk * count <= CORE_SENDV_MAX_IOV &&
        (size_t)t->size >= (size_t)t->nblk * util_tun.mpi_sendv_min_block) {
        struct iovec v[CORE_SENDV_MAX_IOV];
        int k = 0;
        MPI_Aint ext = mpi_type_extent(t);
        for (MPI_Count i = 0; i < count; i++)
            for (int b = 0; b < t->nblk; b++) {
                char *q = (char *)((uintptr_t)buf + (uintptr_t)(i * ext + t->blk[b].off));
                if (k && (char *)v[k - 1].iov_base + v[k - 1].iov_len == q)
                    v[k - 1].iov_len += (size_t)t->blk[b].len; /* adjacent instances */
                else
                    v[k++] = (struct iovec){q, (size_t)t->blk[b].len};
            }
        rc = core_isendv(v, k, n, core_comm_world(tc, dest), tag, tc->ctx, mode == MPI_SM_SYNC, r);
        if (rc != TERN_ERR_UNSUPPORTED) return rc ? mpi_from_tern(rc) : MPI_SUCCESS;
    }
    /* Eager and many small blocks: packed first (cheaper than the transport gathering
     * dozens of small pieces into a cell). */
    if ((*tmp = malloc(n ? n : 1)) == NULL) return MPI_ERR_NO_MEM;
    mpi_pack(buf, count, t, *tmp);
    mpi_stat_tmp++;
    mpi_stat_tmp_bytes += n;
    rc = core_isend(*tmp, n, core_comm_world(tc, dest), tag, tc->ctx, mode == MPI_SM_SYNC, r);
    if (__builtin_expect(rc != 0, 0)) {
        free(*tmp);
        *tmp = NULL;
        return mpi_from_tern(rc);
    }
    return MPI_SUCCESS;
}

/* Start a send (not buffered, not to MPI_PROC_NULL). *tmp: a packed copy to free later. */
static inline __attribute__((always_inline)) int mpi_send_post(const void *buf, MPI_Count count,
                                                               const struct mpi_type *t, int dest,
                                                               int tag, const struct tern_comm *tc,
                                                               int mode, core_req_t **r, void **tmp)
{
    *tmp = NULL;
    if (__builtin_expect(!t->contig && count > 0, 0))
        return mpi_send_post_noncontig(buf, count, t, dest, tag, tc, mode, r, tmp);
    const void *p = (const void *)((uintptr_t)buf + (uintptr_t)t->contig_off); /* MPI_BOTTOM-safe */
    int rc = core_isend(p, (size_t)(count * t->size), core_comm_world(tc, dest), tag, tc->ctx,
                        mode == MPI_SM_SYNC, r);
    return __builtin_expect(rc == 0, 1) ? MPI_SUCCESS : mpi_from_tern(rc);
}

/* A receive into a non-contiguous type: straight into its blocks (core layout). */
static __attribute__((noinline)) int mpi_recv_post_noncontig(void *buf, MPI_Count count,
                                                             struct mpi_type *t, int source,
                                                             int tag, struct tern_comm *tc,
                                                             struct mpi_req *mr)
{
    size_t n = (size_t)(count * t->size);
    /* Straight into the blocks; the request keeps the type (its blocks) alive. */
    if (mr->utype == NULL) {
        mr->utype = t;
        mpi_type_ref(t);
    }
    int rc = core_irecv_lay(buf, &t->lay, n, mpi_src_world(tc, source), tag, tc->ctx, tc, &mr->r);
    return __builtin_expect(rc == 0, 1) ? MPI_SUCCESS : mpi_from_tern(rc);
}

/* Start a receive into mr (not from MPI_PROC_NULL): directly or through a temporary. */
static inline __attribute__((always_inline)) int mpi_recv_post(void *buf, MPI_Count count,
                                                               struct mpi_type *t, int source,
                                                               int tag, struct tern_comm *tc,
                                                               struct mpi_req *mr)
{
    if (__builtin_expect(!t->contig && count > 0, 0))
        return mpi_recv_post_noncontig(buf, count, t, source, tag, tc, mr);
    void *p = (void *)((uintptr_t)buf + (uintptr_t)t->contig_off);
    int rc = core_irecv(p, (size_t)(count * t->size), mpi_src_world(tc, source), tag, tc->ctx, tc,
                        &mr->r);
    return __builtin_expect(rc == 0, 1) ? MPI_SUCCESS : mpi_from_tern(rc);
}

/* ---- blocking ------------------------------------------------------------------------ */

static int mpi_send(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
                    int tag, MPI_Comm comm, int mode)
{
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_send(buf, comm, count, dt, dest, tag, &c, &t);
    if (__builtin_expect(rc != 0, 0)) return mpi_err(comm, fn, rc);
    if (dest == MPI_PROC_NULL) return MPI_SUCCESS;
    if (mode == MPI_SM_BUFFERED)
        return mpi_err(
            comm, fn,
            mpi_bsend_start(buf, count, t, core_comm_world(c->tc, dest), tag, c->tc->ctx));
    core_req_t *r;
    void *tmp;
    rc = mpi_send_post(buf, count, t, dest, tag, c->tc, mode, &r, &tmp);
    if (__builtin_expect(rc != 0, 0)) return mpi_err(comm, fn, rc);
    if (r->state != CORE_RS_DONE) {
        rc = core_wait(r);
        if (rc) {
            free(tmp);
            return mpi_err(comm, fn, mpi_from_tern(rc));
        }
    }
    rc = r->err;
    core_req_free(r);
    if (__builtin_expect(tmp != NULL, 0)) free(tmp);
    return __builtin_expect(rc == 0, 1) ? MPI_SUCCESS : mpi_err(comm, fn, mpi_from_tern(rc));
}

static int mpi_recv(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int source,
                    int tag, MPI_Comm comm, MPI_Status *st)
{
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(buf, comm, count, dt, source, tag, &c, &t);
    if (__builtin_expect(rc != 0, 0)) return mpi_err(comm, fn, rc);
    if (source == MPI_PROC_NULL) {
        mpi_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        return MPI_SUCCESS;
    }
    if (__builtin_expect(t->contig, 1)) {
        /* Fast path: straight into the user's buffer, no MPI request at all. */
        core_req_t *r;
        void *p = (void *)((uintptr_t)buf + (uintptr_t)t->contig_off);
        rc = core_irecv(p, (size_t)(count * t->size), mpi_src_world(c->tc, source), tag, c->tc->ctx,
                        c->tc, &r);
        if (__builtin_expect(rc != 0, 0)) return mpi_err(comm, fn, mpi_from_tern(rc));
        if (r->state != CORE_RS_DONE) {
            rc = core_wait(r);
            if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
        }
        rc = r->err;
        if (st != MPI_STATUS_IGNORE) {
            st->MPI_SOURCE = core_comm_rank_of(c->tc, r->src);
            st->MPI_TAG = r->msg_tag;
            st->MPI_ERROR = rc ? mpi_from_tern(rc) : MPI_SUCCESS;
            st->tern_cancelled = 0;
            st->tern_bytes = (MPI_Count)(r->bytes < r->len ? r->bytes : r->len);
        }
        core_req_free(r);
        return __builtin_expect(rc == 0, 1) ? MPI_SUCCESS : mpi_err(comm, fn, mpi_from_tern(rc));
    }
    struct mpi_req mr;
    memset(&mr, 0, sizeof mr);
    rc = mpi_recv_post(buf, count, t, source, tag, c->tc, &mr);
    if (__builtin_expect(rc != 0, 0)) {
        if (mr.utype) mpi_type_unref(mr.utype);
        return mpi_err(comm, fn, rc);
    }
    if (mr.r->state != CORE_RS_DONE) {
        rc = core_wait(mr.r);
        if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    }
    return mpi_err(comm, fn, mpi_req_finish_op(&mr, st));
}

int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_send("MPI_Send", buf, count, datatype, dest, tag, comm, MPI_SM_STANDARD);
}
MPI_ALIAS(Send)

int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_send("MPI_Ssend", buf, count, datatype, dest, tag, comm, MPI_SM_SYNC);
}
MPI_ALIAS(Ssend)

int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_send("MPI_Rsend", buf, count, datatype, dest, tag, comm, MPI_SM_READY);
}
MPI_ALIAS(Rsend)

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_send("MPI_Bsend", buf, count, datatype, dest, tag, comm, MPI_SM_BUFFERED);
}
MPI_ALIAS(Bsend)

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    CORE_CS_SCOPE();
    return mpi_recv("MPI_Recv", buf, count, datatype, source, tag, comm, status);
}
MPI_ALIAS(Recv)

int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_send("MPI_Send_c", buf, count, datatype, dest, tag, comm, MPI_SM_STANDARD);
}
MPI_ALIAS(Send_c)

int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_send("MPI_Ssend_c", buf, count, datatype, dest, tag, comm, MPI_SM_SYNC);
}
MPI_ALIAS(Ssend_c)

int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_send("MPI_Rsend_c", buf, count, datatype, dest, tag, comm, MPI_SM_READY);
}
MPI_ALIAS(Rsend_c)

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_send("MPI_Bsend_c", buf, count, datatype, dest, tag, comm, MPI_SM_BUFFERED);
}
MPI_ALIAS(Bsend_c)

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Status *status)
{
    CORE_CS_SCOPE();
    return mpi_recv("MPI_Recv_c", buf, count, datatype, source, tag, comm, status);
}
MPI_ALIAS(Recv_c)

/* ---- non-blocking ------------------------------------------------------------------- */

/* Start a send on mr (also a persistent request's start). */
static inline __attribute__((always_inline)) int mpi_isend_on(struct mpi_req *mr, const void *buf,
                                                              MPI_Count count, struct mpi_type *t,
                                                              int dest, int tag, struct mpi_comm *c,
                                                              int mode)
{
    mr->active = 1;
    if (dest == MPI_PROC_NULL) {
        mr->proc_null = 1;
        return MPI_SUCCESS;
    }
    if (mode == MPI_SM_BUFFERED) /* the request is complete once the data is copied */
        return mpi_bsend_start(buf, count, t, core_comm_world(c->tc, dest), tag, c->tc->ctx);
    int rc = mpi_send_post(buf, count, t, dest, tag, c->tc, mode, &mr->r, &mr->tmp);
    if (__builtin_expect(rc == 0 && mr->r->lay != NULL && mr->utype == NULL, 0)) {
        mr->utype = t; /* the core walks its blocks until the send completes */
        mpi_type_ref(t);
    }
    return rc;
}

static int mpi_isend(const char *fn, const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
                     int tag, MPI_Comm comm, int mode, MPI_Request *req)
{
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_send(buf, comm, count, dt, dest, tag, &c, &t);
    if (__builtin_expect(rc != 0, 0)) return mpi_err(comm, fn, rc);
    if (req == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_new(MPI_RK_SEND, comm);
    if (mr == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    rc = mpi_isend_on(mr, buf, count, t, dest, tag, c, mode);
    if (__builtin_expect(rc != 0, 0)) {
        mpi_req_release(mr);
        return mpi_err(comm, fn, rc);
    }
    *req = mr->handle;
    return MPI_SUCCESS;
}

static inline __attribute__((always_inline)) int mpi_irecv_on(struct mpi_req *mr, void *buf,
                                                              MPI_Count count, struct mpi_type *t,
                                                              int source, int tag,
                                                              struct mpi_comm *c)
{
    mr->active = 1;
    if (source == MPI_PROC_NULL) {
        mr->proc_null = 1;
        return MPI_SUCCESS;
    }
    return mpi_recv_post(buf, count, t, source, tag, c->tc, mr);
}

static int mpi_irecv(const char *fn, void *buf, MPI_Count count, MPI_Datatype dt, int source,
                     int tag, MPI_Comm comm, MPI_Request *req)
{
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(buf, comm, count, dt, source, tag, &c, &t);
    if (__builtin_expect(rc != 0, 0)) return mpi_err(comm, fn, rc);
    if (req == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_new(MPI_RK_RECV, comm);
    if (mr == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    rc = mpi_irecv_on(mr, buf, count, t, source, tag, c);
    if (__builtin_expect(rc != 0, 0)) {
        mpi_req_release(mr);
        return mpi_err(comm, fn, rc);
    }
    *req = mr->handle;
    return MPI_SUCCESS;
}

#define MPI_ISEND_FN(Name, mode, CT)                                                               \
    int PMPI_##Name(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag,           \
                    MPI_Comm comm, MPI_Request *request)                                           \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return mpi_isend("MPI_" #Name, buf, count, datatype, dest, tag, comm, mode, request);      \
    }                                                                                              \
    MPI_ALIAS(Name)
MPI_ISEND_FN(Isend, MPI_SM_STANDARD, int)
MPI_ISEND_FN(Issend, MPI_SM_SYNC, int)
MPI_ISEND_FN(Irsend, MPI_SM_READY, int)
MPI_ISEND_FN(Ibsend, MPI_SM_BUFFERED, int)
MPI_ISEND_FN(Isend_c, MPI_SM_STANDARD, MPI_Count)
MPI_ISEND_FN(Issend_c, MPI_SM_SYNC, MPI_Count)
MPI_ISEND_FN(Irsend_c, MPI_SM_READY, MPI_Count)
MPI_ISEND_FN(Ibsend_c, MPI_SM_BUFFERED, MPI_Count)

int PMPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    CORE_CS_SCOPE();
    return mpi_irecv("MPI_Irecv", buf, count, datatype, source, tag, comm, request);
}
MPI_ALIAS(Irecv)

int PMPI_Irecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                 MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return mpi_irecv("MPI_Irecv_c", buf, count, datatype, source, tag, comm, request);
}
MPI_ALIAS(Irecv_c)

/* ---- persistent requests --------------------------------------------------------------- */

static int mpi_pinit(const char *fn, int kind, const void *buf, MPI_Count count, MPI_Datatype dt,
                     int peer, int tag, MPI_Comm comm, int mode, MPI_Request *req)
{
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = kind == MPI_RK_SEND ? mpi_check_send(buf, comm, count, dt, peer, tag, &c, &t)
                                 : mpi_check_recv(buf, comm, count, dt, peer, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (req == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_new(kind, comm);
    if (mr == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    mr->persistent = 1;
    mr->active = 0;
    mr->pbuf = buf;
    mr->pcount = count;
    mr->ptype = t;
    mpi_type_ref(t);
    mr->peer = peer;
    mr->tag = tag;
    mr->mode = (uint8_t)mode;
    *req = mr->handle;
    return MPI_SUCCESS;
}

#define MPI_SINIT_FN(Name, mode, CT)                                                               \
    int PMPI_##Name(const void *buf, CT count, MPI_Datatype datatype, int dest, int tag,           \
                    MPI_Comm comm, MPI_Request *request)                                           \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return mpi_pinit("MPI_" #Name, MPI_RK_SEND, buf, count, datatype, dest, tag, comm, mode,   \
                         request);                                                                 \
    }                                                                                              \
    MPI_ALIAS(Name)
MPI_SINIT_FN(Send_init, MPI_SM_STANDARD, int)
MPI_SINIT_FN(Ssend_init, MPI_SM_SYNC, int)
MPI_SINIT_FN(Rsend_init, MPI_SM_READY, int)
MPI_SINIT_FN(Bsend_init, MPI_SM_BUFFERED, int)
MPI_SINIT_FN(Send_init_c, MPI_SM_STANDARD, MPI_Count)

int PMPI_Recv_init(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
                   MPI_Request *request)
{
    CORE_CS_SCOPE();
    return mpi_pinit("MPI_Recv_init", MPI_RK_RECV, buf, count, datatype, source, tag, comm, 0,
                     request);
}
MPI_ALIAS(Recv_init)

int PMPI_Recv_init_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                     MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return mpi_pinit("MPI_Recv_init_c", MPI_RK_RECV, buf, count, datatype, source, tag, comm, 0,
                     request);
}
MPI_ALIAS(Recv_init_c)

static int mpi_start(MPI_Request h)
{
    struct mpi_req *mr = mpi_req_get(h);
    if (mr == NULL || !mr->kind || !mr->persistent || mr->active) return MPI_ERR_REQUEST;
    struct mpi_comm *c = mpi_comm_get(mr->comm);
    if (c == NULL) return MPI_ERR_COMM;
    mr->proc_null = 0;
    if (mr->kind == MPI_RK_SEND)
        return mpi_isend_on(mr, mr->pbuf, mr->pcount, mr->ptype, mr->peer, mr->tag, c, mr->mode);
    return mpi_irecv_on(mr, (void *)mr->pbuf, mr->pcount, mr->ptype, mr->peer, mr->tag, c);
}

int PMPI_Start(MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, "MPI_Start", MPI_ERR_OTHER);
    if (request == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Start", MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_get(*request);
    int rc = mpi_start(*request);
    if (rc && mr && mr->kind) mr->active = 0;
    return mpi_err(mr ? mr->comm : MPI_COMM_WORLD, "MPI_Start", rc);
}
MPI_ALIAS(Start)

int PMPI_Startall(int count, MPI_Request requests[])
{
    CORE_CS_SCOPE();
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, "MPI_Startall", MPI_ERR_OTHER);
    if (count < 0 || (count > 0 && requests == NULL))
        return mpi_err(MPI_COMM_WORLD, "MPI_Startall", MPI_ERR_ARG);
    for (int i = 0; i < count; i++) {
        int rc = PMPI_Start(&requests[i]);
        if (rc) return rc;
    }
    return MPI_SUCCESS;
}
MPI_ALIAS(Startall)

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

/* Complete requests[i] (done) into statuses[i]; remember the first error. */
static void mpi_take_into(MPI_Request reqs[], int i, MPI_Status statuses[], int *any_err,
                          MPI_Comm *err_comm)
{
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
    struct mpi_req *mr = mpi_req_at(reqs[i]);
    MPI_Comm comm = mr->comm;
    int err = mpi_req_take(&reqs[i], st);
    if (st != MPI_STATUS_IGNORE) st->MPI_ERROR = err;
    if (err && !*any_err) {
        *any_err = 1;
        *err_comm = comm;
    }
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
            if (statuses != MPI_STATUSES_IGNORE) mpi_status_empty(&statuses[i]);
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
        MPI_Status tmp, *st = statuses == MPI_STATUSES_IGNORE ? &tmp : &statuses[n];
        MPI_Comm comm = mpi_req_at(reqs[i])->comm;
        int err = mpi_req_take(&reqs[i], st);
        st->MPI_ERROR = err;
        if (err && !any_err) any_err = 1, ecomm = comm;
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
            if (statuses != MPI_STATUSES_IGNORE) mpi_status_empty(&statuses[i]);
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
        mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
    else if (r == NULL || r->kind != CORE_REQ_RECV)
        mpi_status_set(status, MPI_ANY_SOURCE, MPI_ANY_TAG, r ? mpi_from_tern(r->err) : 0, 0);
    else if (status) {
        size_t got = r->bytes < r->len ? r->bytes : r->len;
        mpi_status_set(status, core_comm_rank_of(r->comm, r->src), r->msg_tag,
                       mpi_from_tern(r->err), (MPI_Count)got);
        status->tern_cancelled = mr->cancelled;
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
    /* Only a receive nobody has matched yet can be withdrawn; a send, or a receive already
     * matched, completes normally (MPI allows a cancel to have no effect). */
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
    *flag = status->tern_cancelled;
    return MPI_SUCCESS;
}
MPI_ALIAS(Test_cancelled)

/* ---- probe, sendrecv, counts ------------------------------------------------------------ */

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Iprobe";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(NULL, comm, 0, MPI_BYTE, source, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (flag == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        return MPI_SUCCESS;
    }
    core_progress();
    int src = 0, mtag = 0;
    size_t len = 0;
    rc = core_iprobe(mpi_src_world(c->tc, source), tag, c->tc->ctx, flag, &src, &mtag, &len);
    if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    if (*flag)
        mpi_status_set(status, core_comm_rank_of(c->tc, src), mtag, MPI_SUCCESS, (MPI_Count)len);
    return MPI_SUCCESS;
}
MPI_ALIAS(Iprobe)

struct mpi_probe {
    int src, tag;
    uint16_t ctx;
};

static int mpi_probe_found(const void *arg)
{
    const struct mpi_probe *p = arg;
    struct core_match *m = core.match[p->ctx];
    return m && core_match_find_unexp(m, p->src, p->tag, 0) != NULL;
}

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Probe";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(NULL, comm, 0, MPI_BYTE, source, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (source != MPI_PROC_NULL) {
        struct mpi_probe p = {mpi_src_world(c->tc, source), tag, c->tc->ctx};
        rc = core_block(mpi_probe_found, &p);
        if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    }
    int flag;
    return PMPI_Iprobe(source, tag, comm, &flag, status);
}
MPI_ALIAS(Probe)

static int mpi_sendrecv(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                        int dest, int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                        int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    struct mpi_comm *c;
    struct mpi_type *st, *rt;
    int rc = mpi_check_send(sbuf, comm, scount, stype, dest, stag, &c, &st);
    if (rc == 0) rc = mpi_check_recv(rbuf, comm, rcount, rtype, source, rtag, &c, &rt);
    if (rc) return mpi_err(comm, fn, rc);
    struct mpi_req rr;
    memset(&rr, 0, sizeof rr);
    rc = mpi_irecv_on(&rr, rbuf, rcount, rt, source, rtag, c);
    if (rc) return mpi_err(comm, fn, rc);
    core_req_t *sr = NULL;
    void *stmp = NULL;
    if (dest != MPI_PROC_NULL)
        rc = mpi_send_post(sbuf, scount, st, dest, stag, c->tc, 0, &sr, &stmp);
    if (rc) {
        if (rr.r && rr.r->state == CORE_RS_POSTED) { /* nothing was sent: withdraw */
            core_match_unpost(core_match_get(c->tc->ctx), rr.r);
            core_req_free(rr.r);
            rr.r = NULL;
        }
        free(rr.tmp);
        if (rr.utype) mpi_type_unref(rr.utype);
        return mpi_err(comm, fn, rc);
    }
    if (sr) rc = core_wait(sr);
    if (rc == 0 && rr.r) rc = core_wait(rr.r);
    if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    int serr = 0;
    if (sr) {
        serr = mpi_from_tern(sr->err);
        core_req_free(sr);
    }
    free(stmp);
    int rerr = mpi_req_finish_op(&rr, status);
    return mpi_err(comm, fn, rerr ? rerr : serr);
}

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    CORE_CS_SCOPE();
    return mpi_sendrecv("MPI_Sendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                        recvcount, recvtype, source, recvtag, comm, status);
}
MPI_ALIAS(Sendrecv)

int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    CORE_CS_SCOPE();
    return mpi_sendrecv("MPI_Sendrecv_c", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                        recvcount, recvtype, source, recvtag, comm, status);
}
MPI_ALIAS(Sendrecv_c)

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Sendrecv_replace";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_send(buf, comm, count, datatype, dest, sendtag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    /* The outgoing data is packed aside so the receive can land in buf. */
    size_t n = (size_t)((MPI_Count)count * t->size);
    void *copy = malloc(n ? n : 1);
    if (copy == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    mpi_pack(buf, count, t, copy);
    rc = mpi_sendrecv(fn, copy, (MPI_Count)n, MPI_BYTE, dest, sendtag, buf, count, datatype, source,
                      recvtag, comm, status);
    free(copy);
    return rc;
}
MPI_ALIAS(Sendrecv_replace)

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
        *count = status->tern_bytes % t->size ? MPI_UNDEFINED : status->tern_bytes / t->size;
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
    MPI_Count b = status->tern_bytes, n = MPI_UNDEFINED;
    if (mpi_type_elements(datatype, b, &n) == 0) { /* the type map walked (mpi_misc.c) */
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

/* ---- matched probe: MPI_Mprobe, MPI_Improbe, MPI_Mrecv, MPI_Imrecv ----------------------
 * A matching probe takes the message out of the core's unexpected queue (core_improbe),
 * so no other receive or probe, in this thread or another, can match it; the message
 * handle then holds it until MPI_Mrecv/MPI_Imrecv receive exactly that message. Handles
 * are slots of a table (0 and 1 are MPI_MESSAGE_NULL and MPI_MESSAGE_NO_PROC); all of it
 * runs under the library's lock like every other call. */

struct mpi_msg {
    struct core_unexp *u; /* NULL: free slot */
    MPI_Comm comm;
    uint16_t ctx;
    struct tern_comm *tc;
};
static struct mpi_msg *mpi_msgs;
static int mpi_nmsgs;

/* At finalize: messages matched and never received, and the table. */
static void mpi_msg_fini(void)
{
    for (int i = 2; i < mpi_nmsgs; i++)
        free(mpi_msgs[i].u);
    free(mpi_msgs);
    mpi_msgs = NULL;
    mpi_nmsgs = 0;
}

static int mpi_msg_new(struct core_unexp *u, const struct mpi_comm *c, MPI_Message *out)
{
    if (mpi_nmsgs == 0 && core_atfini(mpi_msg_fini)) return MPI_ERR_NO_MEM;
    int slot = 2;
    while (slot < mpi_nmsgs && mpi_msgs[slot].u)
        slot++;
    if (slot >= mpi_nmsgs) {
        int cap = mpi_nmsgs ? 2 * mpi_nmsgs : 16;
        struct mpi_msg *t = realloc(mpi_msgs, (size_t)cap * sizeof *t);
        if (t == NULL) return MPI_ERR_NO_MEM;
        memset(t + mpi_nmsgs, 0, (size_t)(cap - mpi_nmsgs) * sizeof *t);
        mpi_msgs = t;
        mpi_nmsgs = cap;
    }
    mpi_msgs[slot] = (struct mpi_msg){u, c->handle, c->tc->ctx, c->tc};
    *out = slot;
    return MPI_SUCCESS;
}

/* A member of tc has failed. */
static int mpi_comm_member_failed(const struct tern_comm *tc)
{
    if (core.nfailed == 0) return 0;
    for (int r = 0; r < tc->size; r++)
        if (core.peers[core_comm_world(tc, r)].failed) return 1;
    return 0;
}

/* What MPI_Mprobe waits for: a matching message, or the failure that means none will
 * come (its source, or any member for MPI_ANY_SOURCE). */
struct mpi_mprobe_wait {
    struct mpi_probe p;
    const struct tern_comm *tc;
};

static int mpi_mprobe_ready(const void *arg)
{
    const struct mpi_mprobe_wait *w = arg;
    if (mpi_probe_found(&w->p)) return 1;
    return w->p.src >= 0 ? core.peers[w->p.src].failed : mpi_comm_member_failed(w->tc);
}

/* Improbe's work; *flag says whether a message was taken. */
static int mpi_improbe(int source, int tag, struct mpi_comm *c, int *flag, MPI_Message *message,
                       MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        *flag = 1;
        *message = MPI_MESSAGE_NO_PROC;
        mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        return MPI_SUCCESS;
    }
    struct core_unexp *u;
    int rc = core_improbe(mpi_src_world(c->tc, source), tag, c->tc->ctx, &u);
    if (rc) return mpi_from_tern(rc);
    *flag = u != NULL;
    if (u == NULL) /* nothing more will come from a dead source */
        return source >= 0 && core.peers[core_comm_world(c->tc, source)].failed
                   ? MPI_ERR_PROC_FAILED
                   : MPI_SUCCESS;
    if ((rc = mpi_msg_new(u, c, message))) {
        core_match_append_unexp(core_match_get(c->tc->ctx), u); /* not taken after all */
        *flag = 0;
        return rc;
    }
    mpi_status_set(status, core_comm_rank_of(c->tc, u->src), u->tag, MPI_SUCCESS,
                   (MPI_Count)u->len);
    return MPI_SUCCESS;
}

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Improbe";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(NULL, comm, 0, MPI_BYTE, source, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (flag == NULL || message == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    core_progress();
    return mpi_err(comm, fn, mpi_improbe(source, tag, c, flag, message, status));
}
MPI_ALIAS(Improbe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Mprobe";
    struct mpi_comm *c;
    struct mpi_type *t;
    int rc = mpi_check_recv(NULL, comm, 0, MPI_BYTE, source, tag, &c, &t);
    if (rc) return mpi_err(comm, fn, rc);
    if (message == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    for (;;) {
        int flag = 0;
        if ((rc = mpi_improbe(source, tag, c, &flag, message, status)))
            return mpi_err(comm, fn, rc);
        if (flag) return MPI_SUCCESS;
        /* A wildcard probe waiting when a member died fails too (the message it waits
         * for may have been that one's), like a wildcard receive. */
        if (source == MPI_ANY_SOURCE && mpi_comm_member_failed(c->tc))
            return mpi_err(comm, fn, MPI_ERR_PROC_FAILED);
        /* Another thread may take the message first: then wait again. */
        struct mpi_mprobe_wait p = {{mpi_src_world(c->tc, source), tag, c->tc->ctx}, c->tc};
        if ((rc = core_block(mpi_mprobe_ready, &p))) return mpi_err(comm, fn, mpi_from_tern(rc));
    }
}
MPI_ALIAS(Mprobe)

/* Start the receive of a matched message into mr (like mpi_recv_post for a message). */
static int mpi_mrecv_post(void *buf, MPI_Count count, struct mpi_type *t, struct mpi_msg *m,
                          struct mpi_req *mr)
{
    size_t n = (size_t)(count * t->size);
    void *p = (void *)((uintptr_t)buf + (uintptr_t)t->contig_off);
    if (!t->contig && count > 0) {
        if ((mr->tmp = malloc(n ? n : 1)) == NULL) return MPI_ERR_NO_MEM;
        p = mr->tmp;
        mr->unpack = 1;
        mr->ubuf = buf;
        mr->ucount = count;
        mr->uoff = 0;
        mr->utype = t;
        mpi_type_ref(t);
    }
    int rc = core_imrecv(m->u, p, n, m->ctx, m->tc, &mr->r);
    if (rc) {
        free(mr->tmp);
        mr->tmp = NULL;
        return mpi_from_tern(rc);
    }
    m->u = NULL; /* the receive owns it now; the slot is free */
    mr->active = 1;
    return MPI_SUCCESS;
}

/* Common checks of Mrecv/Imrecv: *m NULL for MPI_MESSAGE_NO_PROC. */
static int mpi_mrecv_check(const void *buf, MPI_Count count, MPI_Datatype dt,
                           const MPI_Message *message, struct mpi_type **t, struct mpi_msg **m)
{
    if (mpi_state()) return MPI_ERR_OTHER;
    if (message == NULL) return MPI_ERR_ARG;
    if (count < 0) return MPI_ERR_COUNT;
    if ((*t = mpi_type_ok(dt)) == NULL) return MPI_ERR_TYPE;
    *m = NULL;
    if (*message == MPI_MESSAGE_NO_PROC) return MPI_SUCCESS;
    if (*message < 2 || *message >= mpi_nmsgs || mpi_msgs[*message].u == NULL)
        return MPI_ERR_REQUEST;
    if (buf == NULL && count > 0 && (*t)->predefined && (*t)->size > 0) return MPI_ERR_BUFFER;
    *m = &mpi_msgs[*message];
    return MPI_SUCCESS;
}

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Mrecv";
    struct mpi_type *t;
    struct mpi_msg *m;
    int rc = mpi_mrecv_check(buf, count, datatype, message, &t, &m);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    if (m == NULL) {
        *message = MPI_MESSAGE_NULL;
        mpi_status_set(status, MPI_PROC_NULL, MPI_ANY_TAG, MPI_SUCCESS, 0);
        return MPI_SUCCESS;
    }
    MPI_Comm comm = m->comm;
    struct mpi_req mr;
    memset(&mr, 0, sizeof mr);
    mr.comm = comm;
    if ((rc = mpi_mrecv_post(buf, count, t, m, &mr))) return mpi_err(comm, fn, rc);
    *message = MPI_MESSAGE_NULL;
    if (mr.r->state != CORE_RS_DONE && (rc = core_wait(mr.r)))
        return mpi_err(comm, fn, mpi_from_tern(rc));
    return mpi_err(comm, fn, mpi_req_finish_op(&mr, status));
}
MPI_ALIAS(Mrecv)

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Imrecv";
    struct mpi_type *t;
    struct mpi_msg *m;
    int rc = mpi_mrecv_check(buf, count, datatype, message, &t, &m);
    if (rc == 0 && request == NULL) rc = MPI_ERR_ARG;
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    MPI_Comm comm = m ? m->comm : MPI_COMM_WORLD;
    struct mpi_req *mr = mpi_req_new(MPI_RK_RECV, comm);
    if (mr == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    if (m == NULL) { /* MPI_MESSAGE_NO_PROC: a receive from MPI_PROC_NULL */
        mr->active = 1;
        mr->proc_null = 1;
    } else if ((rc = mpi_mrecv_post(buf, count, t, m, mr))) {
        mpi_req_release(mr);
        return mpi_err(comm, fn, rc);
    }
    *message = MPI_MESSAGE_NULL;
    *request = mr->handle;
    return MPI_SUCCESS;
}
MPI_ALIAS(Imrecv)

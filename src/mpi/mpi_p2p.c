/*
 * mpi_p2p.c - MPI point-to-point sends and receives: every send mode (standard,
 * synchronous, ready, buffered) blocking and non-blocking, receives, persistent requests
 * (Send_init family, Recv_init, Start, Startall) and Sendrecv, Sendrecv_replace.
 * Requests and their completion are in mpi_req.c, buffered sends in mpi_bsend.c, probes
 * in mpi_probe.c.
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

#include "mpi/mpi_p2p_impl.h"
#include "util/mem.h"
#include "util/tunables.h"

static unsigned long long mpi_stat_tmp, mpi_stat_tmp_bytes; /* tern_mpi_stat() */

long long tern_mpi_stat(const char *name)
{
    if (name == NULL) return -1;
    if (strcmp(name, "p2p_temporaries") == 0) return (long long)mpi_stat_tmp;
    if (strcmp(name, "p2p_temporary_bytes") == 0) return (long long)mpi_stat_tmp_bytes;
    return -1;
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

/* A blocking standard-mode send of a contiguous buffer (not to MPI_PROC_NULL) that needs
 * no request: 0 when it went whole, TERN_ERR_AGAIN when the caller must post it
 * (core_send_now), else the core's error. */
static inline int mpi_send_now(const void *buf, MPI_Count count, const struct mpi_type *t, int dest,
                               int tag, const struct tern_comm *tc)
{
    if (__builtin_expect(!t->contig, 0)) return TERN_ERR_AGAIN;
    return core_send_now((const void *)((uintptr_t)buf + (uintptr_t)t->contig_off),
                         (size_t)(count * t->size), core_comm_world(tc, dest), tag, tc->ctx);
}

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
    if (mode != MPI_SM_SYNC) {
        rc = mpi_send_now(buf, count, t, dest, tag, c->tc);
        if (__builtin_expect(rc == 0, 1)) return MPI_SUCCESS;
        if (rc != TERN_ERR_AGAIN) return mpi_err(comm, fn, mpi_from_tern(rc));
    }
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
        mpi_status_set(st, MPI_PROC_NULL, MPI_ANY_TAG, 0);
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
            mpi_status_set_cancelled(st, 0);
            mpi_status_set_bytes(st, (MPI_Count)(r->bytes < r->len ? r->bytes : r->len));
        }
        core_req_free(r);
        return __builtin_expect(rc == 0, 1) ? MPI_SUCCESS : mpi_err(comm, fn, mpi_from_tern(rc));
    }
    struct mpi_req mr;
    util_zero(&mr, sizeof mr);
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
    if (mode == MPI_SM_BUFFERED) { /* the request is complete once the data is copied */
        int rc = mpi_bsend_start(buf, count, t, core_comm_world(c->tc, dest), tag, c->tc->ctx);
        mr->mode = MPI_SM_BUFFERED;
        mr->bsend_id = mpi_bsend_last_id;
        mr->bsend_peer = core_comm_world(c->tc, dest);
        return rc;
    }
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
    if (mr->pcoll) return mpi_pcoll_start(mr);
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
    util_zero(&rr, sizeof rr);
    rc = mpi_irecv_on(&rr, rbuf, rcount, rt, source, rtag, c);
    if (rc) return mpi_err(comm, fn, rc);
    core_req_t *sr = NULL;
    void *stmp = NULL;
    if (dest != MPI_PROC_NULL) {
        rc = mpi_send_now(sbuf, scount, st, dest, stag, c->tc);
        if (rc == TERN_ERR_AGAIN)
            rc = mpi_send_post(sbuf, scount, st, dest, stag, c->tc, 0, &sr, &stmp);
        else if (rc)
            rc = mpi_from_tern(rc);
    }
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

/* ---- MPI_Isendrecv, MPI_Isendrecv_replace (MPI 4.0) -------------------------------------
 * One request over a receive (r, which gives the status) and a send (r2): it is done when
 * both are. The replace form sends a packed copy of the buffer, then receives into it. */
static int mpi_isendrecv(const char *fn, const void *sbuf, MPI_Count scount, MPI_Datatype stype,
                         int dest, int stag, void *rbuf, MPI_Count rcount, MPI_Datatype rtype,
                         int source, int rtag, MPI_Comm comm, int replace, MPI_Request *req)
{
    struct mpi_comm *c;
    struct mpi_type *st, *rt;
    int rc = mpi_check_send(sbuf, comm, scount, stype, dest, stag, &c, &st);
    if (rc == 0) rc = mpi_check_recv(rbuf, comm, rcount, rtype, source, rtag, &c, &rt);
    if (rc) return mpi_err(comm, fn, rc);
    if (req == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_new(MPI_RK_SENDRECV, comm);
    if (mr == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    if (replace && dest != MPI_PROC_NULL) { /* the data leaves before the receive lands */
        size_t n = (size_t)(scount * st->size);
        if ((mr->tmp2 = malloc(n ? n : 1)) == NULL) {
            mpi_req_release(mr);
            return mpi_err(comm, fn, MPI_ERR_NO_MEM);
        }
        mpi_pack(sbuf, scount, st, mr->tmp2);
        sbuf = mr->tmp2;
        scount = (MPI_Count)n;
        st = mpi_type_get(MPI_BYTE);
    }
    rc = mpi_irecv_on(mr, rbuf, rcount, rt, source, rtag, c);
    if (rc == 0 && dest != MPI_PROC_NULL) {
        void *stmp = NULL;
        rc = mpi_send_post(sbuf, scount, st, dest, stag, c->tc, 0, &mr->r2, &stmp);
        if (rc == 0 && stmp) mr->tmp2 = stmp; /* a packed copy (never with replace: bytes) */
        if (rc == 0 && mr->r2->lay != NULL) { /* the core walks the type's blocks */
            mr->ptype = st;
            mpi_type_ref(st);
        }
    }
    if (rc) {
        if (mr->r && mr->r->state == CORE_RS_POSTED) {
            core_match_unpost(core_match_get(c->tc->ctx), mr->r);
            core_req_free(mr->r);
            mr->r = NULL;
        }
        mpi_req_release(mr);
        return mpi_err(comm, fn, rc);
    }
    *req = mr->handle;
    return MPI_SUCCESS;
}

int PMPI_Isendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                   void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                   MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return mpi_isendrecv("MPI_Isendrecv", sendbuf, sendcount, sendtype, dest, sendtag, recvbuf,
                         recvcount, recvtype, source, recvtag, comm, 0, request);
}
MPI_ALIAS(Isendrecv)

int PMPI_Isendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                           int source, int recvtag, MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return mpi_isendrecv("MPI_Isendrecv_replace", buf, count, datatype, dest, sendtag, buf, count,
                         datatype, source, recvtag, comm, 1, request);
}
MPI_ALIAS(Isendrecv_replace)

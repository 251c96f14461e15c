/*
 * mpi_coll.c - MPI collectives, mapped straight onto the collective builders of src/coll:
 * one schedule per call, run now (blocking) or handed to the progress engine (MPI_I*).
 * Data-movement collectives count bytes: a contiguous datatype is used in place, any
 * other is packed into (and unpacked from) a temporary. Reductions run on the user's
 * memory with the element size of the datatype's extent; the operations are in mpi_op.c.
 */
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_comm_impl.h"

/* ---- plumbing ------------------------------------------------------------------------- */

/* One collective call: its checks' results, the temporary and what to unpack at the end. */
struct mpi_cx {
    const char *fn;
    MPI_Comm comm;
    struct mpi_comm *c;
    MPI_Request *req;
    struct mpi_req *mr; /* non-blocking: made before the schedule starts */
    char *tmp;
    size_t tsize;
    void *ubuf; /* unpack tmp + uoff into ubuf (ucount of utype) when done, if utype */
    MPI_Count ucount;
    struct mpi_type *utype;
    size_t uoff;
    struct coll_sched stack; /* blocking: the schedule lives here */
};

static int mpi_cx_begin(struct mpi_cx *x, const char *fn, MPI_Comm comm, MPI_Request *req)
{
    x->fn = fn;
    x->comm = comm;
    x->req = req;
    x->mr = NULL;
    x->tmp = NULL;
    x->tsize = 0;
    x->ubuf = NULL;
    x->utype = NULL;
    if (mpi_state()) return MPI_ERR_OTHER;
    if ((x->c = mpi_comm_get(comm)) == NULL) return MPI_ERR_COMM;
    return MPI_SUCCESS;
}

/* Reserve n bytes of the temporary (offsets only; allocated by mpi_cx_alloc). */
static size_t mpi_cx_reserve(struct mpi_cx *x, size_t n)
{
    size_t off = x->tsize;
    x->tsize += (n + 15) & ~(size_t)15;
    return off;
}

static int mpi_cx_alloc(struct mpi_cx *x)
{
    if (x->tsize && (x->tmp = malloc(x->tsize)) == NULL) return MPI_ERR_NO_MEM;
    if (x->req) {
        if ((x->mr = mpi_req_new(MPI_RK_COLL, x->comm)) == NULL) {
            free(x->tmp);
            return MPI_ERR_NO_MEM;
        }
    }
    return MPI_SUCCESS;
}

/* The send side: sbuf as is (contiguous or in place) or packed into the temporary. */
struct mpi_side {
    void *p;
    size_t off; /* in tmp; (size_t)-1 when not packed */
    size_t bytes;
};

static void mpi_cx_side(struct mpi_cx *x, const void *buf, MPI_Count count,
                        const struct mpi_type *t, struct mpi_side *sd)
{
    sd->bytes = (size_t)(count * t->size);
    sd->off = (size_t)-1;
    if (buf == MPI_IN_PLACE) {
        sd->p = MPI_IN_PLACE;
    } else if (t->contig || count == 0) {
        sd->p = (void *)((uintptr_t)buf + (uintptr_t)t->contig_off);
    } else {
        sd->p = NULL;
        sd->off = mpi_cx_reserve(x, sd->bytes);
    }
}

/* After mpi_cx_alloc: point packed sides into tmp; pack an input side. */
static void *mpi_cx_in(struct mpi_cx *x, const void *buf, MPI_Count count, const struct mpi_type *t,
                       struct mpi_side *sd)
{
    if (sd->off == (size_t)-1) return sd->p;
    mpi_pack(buf, count, t, x->tmp + sd->off);
    return x->tmp + sd->off;
}

/* An output side: packed ones are unpacked into buf at the end (one per call). */
static void *mpi_cx_out(struct mpi_cx *x, void *buf, MPI_Count count, struct mpi_type *t,
                        struct mpi_side *sd, int prefill)
{
    if (sd->off == (size_t)-1) return sd->p;
    if (prefill) mpi_pack(buf, count, t, x->tmp + sd->off);
    x->ubuf = buf;
    x->ucount = count;
    x->utype = t;
    x->uoff = sd->off;
    return x->tmp + sd->off;
}

static struct coll_sched *mpi_cx_sched(struct mpi_cx *x)
{
    struct coll_sched *s = &x->stack;
    if (x->req && (s = malloc(sizeof *s)) == NULL) return NULL;
    coll_sched_init_as(s, x->c->tc, x->req != NULL);
    return s;
}

/* Run (blocking) or start (non-blocking) the built schedule and finish the call. */
static int mpi_cx_end(struct mpi_cx *x, struct coll_sched *s, int rc)
{
    if (x->req) {
        struct mpi_req *mr = x->mr;
        rc = coll_sched_start(s, rc, &mr->r);
        if (rc) {
            free(x->tmp);
            mpi_req_release(mr);
            return mpi_err(x->comm, x->fn, mpi_from_tern(rc));
        }
        mr->tmp = x->tmp;
        if (x->utype) {
            mr->unpack = 1;
            mr->ubuf = x->ubuf;
            mr->ucount = x->ucount;
            mr->utype = x->utype;
            mr->uoff = x->uoff;
            mpi_type_ref(x->utype);
        }
        *x->req = mr->handle;
        return MPI_SUCCESS;
    }
    rc = coll_sched_run(s, rc);
    if (rc == 0 && x->utype)
        mpi_unpack(x->tmp + x->uoff, (size_t)(x->ucount * x->utype->size), x->ubuf, x->ucount,
                   x->utype);
    free(x->tmp);
    return rc ? mpi_err(x->comm, x->fn, mpi_from_tern(rc)) : MPI_SUCCESS;
}

/* Errors found before the schedule was made. */
static int mpi_cx_fail(struct mpi_cx *x, int rc)
{
    free(x->tmp);
    if (x->mr) mpi_req_release(x->mr);
    return mpi_err(x->comm, x->fn, rc);
}

static inline int mpi_chk_buf(const void *buf, MPI_Count count, const struct mpi_type *t)
{
    return buf == NULL && count > 0 && t->predefined && t->size > 0 ? MPI_ERR_BUFFER : 0;
}

/* count >= 0 and a committed type. */
static inline int mpi_chk_ct(MPI_Count count, MPI_Datatype dt, struct mpi_type **t)
{
    if (count < 0) return MPI_ERR_COUNT;
    return (*t = mpi_type_ok(dt)) == NULL ? MPI_ERR_TYPE : 0;
}

/* An intercommunicator collective ran to completion (mpi_inter.c): its error, or a
 * complete request for the non-blocking form. */
static int mpi_ic_end(struct mpi_cx *x, int rc)
{
    if (rc) return mpi_err(x->comm, x->fn, rc);
    if (x->req) {
        struct mpi_req *mr = mpi_req_new(MPI_RK_DONE, x->comm);
        if (mr == NULL) return mpi_err(x->comm, x->fn, MPI_ERR_NO_MEM);
        *x->req = mr->handle;
    }
    return MPI_SUCCESS;
}

#define CX_BEGIN(fn, comm, req)                                                                    \
    struct mpi_cx cx_, *x = &cx_;                                                                  \
    int rc = mpi_cx_begin(x, fn, comm, req);                                                       \
    if (rc) return mpi_err(comm, fn, rc);                                                          \
    int p = x->c->tc->size, me = x->c->tc->rank;                                                   \
    (void)p, (void)me

#define CX_SCHED(s)                                                                                \
    if ((rc = mpi_cx_alloc(x))) return mpi_cx_fail(x, rc);                                         \
    struct coll_sched *s = mpi_cx_sched(x);                                                        \
    if (s == NULL) return mpi_cx_fail(x, MPI_ERR_NO_MEM)

/* ---- barrier, bcast --------------------------------------------------------------------- */

static int mpi_barrier(const char *fn, MPI_Comm comm, MPI_Request *req)
{
    CX_BEGIN(fn, comm, req);
    if (x->c->inter) return mpi_ic_end(x, mpi_ic_barrier(x->c));
    CX_SCHED(s);
    return mpi_cx_end(x, s, coll_barrier(s));
}

int PMPI_Barrier(MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_barrier("MPI_Barrier", comm, NULL);
}
MPI_ALIAS(Barrier)

int PMPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ibarrier", MPI_ERR_ARG);
    return mpi_barrier("MPI_Ibarrier", comm, request);
}
MPI_ALIAS(Ibarrier)

static int mpi_bcast(const char *fn, void *buf, int count, MPI_Datatype dt, int root, MPI_Comm comm,
                     MPI_Request *req)
{
    CX_BEGIN(fn, comm, req);
    struct mpi_type *t;
    if ((rc = mpi_chk_ct(count, dt, &t)) || (rc = mpi_chk_buf(buf, count, t)))
        return mpi_err(comm, fn, rc);
    if (x->c->inter) return mpi_ic_end(x, mpi_ic_bcast(x->c, buf, count, dt, root));
    if (root < 0 || root >= p) return mpi_err(comm, fn, MPI_ERR_ROOT);
    struct mpi_side sd;
    mpi_cx_side(x, buf, count, t, &sd);
    CX_SCHED(s);
    void *b = me == root ? mpi_cx_in(x, buf, count, t, &sd) : mpi_cx_out(x, buf, count, t, &sd, 0);
    return mpi_cx_end(x, s, coll_bcast(s, b, sd.bytes, root));
}

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_bcast("MPI_Bcast", buffer, count, datatype, root, comm, NULL);
}
MPI_ALIAS(Bcast)

int PMPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ibcast", MPI_ERR_ARG);
    return mpi_bcast("MPI_Ibcast", buffer, count, datatype, root, comm, request);
}
MPI_ALIAS(Ibcast)

/* ---- reductions --------------------------------------------------------------------------- */

enum { MPI_C_REDUCE, MPI_C_ALLREDUCE, MPI_C_SCAN, MPI_C_EXSCAN, MPI_C_RSB };

static int mpi_reduce_any(int which, const char *fn, const void *sbuf, void *rbuf, int count,
                          MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm, MPI_Request *req)
{
    CX_BEGIN(fn, comm, req);
    if (count < 0) return mpi_err(comm, fn, MPI_ERR_COUNT);
    struct coll_op o;
    if ((rc = mpi_op_resolve(op, dt, &o))) return mpi_err(comm, fn, rc);
    struct mpi_type *t = mpi_type_get(dt);
    if (x->c->inter) {
        if (which == MPI_C_REDUCE)
            return mpi_ic_end(x, mpi_ic_reduce(x->c, sbuf, rbuf, count, dt, op, root));
        if (which == MPI_C_ALLREDUCE)
            return mpi_ic_end(x, mpi_ic_allreduce(x->c, sbuf, rbuf, count, dt, op));
        if (which == MPI_C_RSB)
            return mpi_ic_end(x, mpi_ic_reduce_scatter(x->c, sbuf, rbuf, NULL, count, dt, op));
        return mpi_err(comm, fn, MPI_ERR_COMM); /* scans: intra-communicators only */
    }
    MPI_Count total = which == MPI_C_RSB ? (MPI_Count)count * p : count;
    if (which == MPI_C_REDUCE) {
        if (root < 0 || root >= p) return mpi_err(comm, fn, MPI_ERR_ROOT);
        if (sbuf == MPI_IN_PLACE && me != root) return mpi_err(comm, fn, MPI_ERR_BUFFER);
        if (me == root && (rbuf == MPI_IN_PLACE || mpi_chk_buf(rbuf, total, t)))
            return mpi_err(comm, fn, MPI_ERR_BUFFER);
    } else if (rbuf == MPI_IN_PLACE || mpi_chk_buf(rbuf, which == MPI_C_RSB ? count : total, t)) {
        return mpi_err(comm, fn, MPI_ERR_BUFFER);
    }
    if (sbuf != MPI_IN_PLACE && mpi_chk_buf(sbuf, total, t))
        return mpi_err(comm, fn, MPI_ERR_BUFFER);
    CX_SCHED(s);
    s->op = o;
    size_t n = (size_t)count;
    switch (which) {
    case MPI_C_REDUCE:
        rc = coll_reduce(s, sbuf, rbuf, n, root);
        break;
    case MPI_C_ALLREDUCE:
        rc = coll_allreduce(s, sbuf, rbuf, n);
        break;
    case MPI_C_SCAN:
        rc = coll_scan(s, sbuf, rbuf, n);
        break;
    case MPI_C_EXSCAN:
        rc = coll_exscan(s, sbuf, rbuf, n);
        break;
    default:
        rc = coll_reduce_scatter_block(s, sbuf, rbuf, n);
        break;
    }
    return mpi_cx_end(x, s, rc);
}

int PMPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_reduce_any(MPI_C_REDUCE, "MPI_Reduce", sendbuf, recvbuf, count, datatype, op, root,
                          comm, NULL);
}
MPI_ALIAS(Reduce)

int PMPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ireduce", MPI_ERR_ARG);
    return mpi_reduce_any(MPI_C_REDUCE, "MPI_Ireduce", sendbuf, recvbuf, count, datatype, op, root,
                          comm, request);
}
MPI_ALIAS(Ireduce)

#define MPI_RED_FN(Name, IName, which)                                                             \
    int PMPI_##Name(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,          \
                    MPI_Op op, MPI_Comm comm)                                                      \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return mpi_reduce_any(which, "MPI_" #Name, sendbuf, recvbuf, count, datatype, op, 0, comm, \
                              NULL);                                                               \
    }                                                                                              \
    MPI_ALIAS(Name)                                                                                \
    int PMPI_##IName(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,         \
                     MPI_Op op, MPI_Comm comm, MPI_Request *request)                               \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        if (request == NULL) return mpi_err(comm, "MPI_" #IName, MPI_ERR_ARG);                     \
        return mpi_reduce_any(which, "MPI_" #IName, sendbuf, recvbuf, count, datatype, op, 0,      \
                              comm, request);                                                      \
    }                                                                                              \
    MPI_ALIAS(IName)
MPI_RED_FN(Allreduce, Iallreduce, MPI_C_ALLREDUCE)
MPI_RED_FN(Scan, Iscan, MPI_C_SCAN)
MPI_RED_FN(Exscan, Iexscan, MPI_C_EXSCAN)
MPI_RED_FN(Reduce_scatter_block, Ireduce_scatter_block, MPI_C_RSB)

static int mpi_reduce_scatter(const char *fn, const void *sbuf, void *rbuf, const int counts[],
                              MPI_Datatype dt, MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
    CX_BEGIN(fn, comm, req);
    struct coll_op o;
    if ((rc = mpi_op_resolve(op, dt, &o))) return mpi_err(comm, fn, rc);
    if (counts == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    if (x->c->inter)
        return mpi_ic_end(x, mpi_ic_reduce_scatter(x->c, sbuf, rbuf, counts, 0, dt, op));
    size_t *sc = malloc((size_t)p * sizeof *sc);
    if (sc == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    for (int i = 0; i < p; i++) {
        if (counts[i] < 0) {
            free(sc);
            return mpi_err(comm, fn, MPI_ERR_COUNT);
        }
        sc[i] = (size_t)counts[i];
    }
    if (rbuf == MPI_IN_PLACE || mpi_chk_buf(rbuf, counts[me], mpi_type_get(dt))) {
        free(sc);
        return mpi_err(comm, fn, MPI_ERR_BUFFER);
    }
    if ((rc = mpi_cx_alloc(x))) {
        free(sc);
        return mpi_cx_fail(x, rc);
    }
    struct coll_sched *s = mpi_cx_sched(x);
    if (s == NULL) {
        free(sc);
        return mpi_cx_fail(x, MPI_ERR_NO_MEM);
    }
    s->op = o;
    rc = coll_reduce_scatter(s, sbuf, rbuf, sc);
    free(sc);
    return mpi_cx_end(x, s, rc);
}

int PMPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_reduce_scatter("MPI_Reduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op,
                              comm, NULL);
}
MPI_ALIAS(Reduce_scatter)

int PMPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ireduce_scatter", MPI_ERR_ARG);
    return mpi_reduce_scatter("MPI_Ireduce_scatter", sendbuf, recvbuf, recvcounts, datatype, op,
                              comm, request);
}
MPI_ALIAS(Ireduce_scatter)

/* ---- gather, scatter, allgather, alltoall ------------------------------------------------- */

enum { MPI_C_GATHER, MPI_C_SCATTER, MPI_C_ALLGATHER, MPI_C_ALLTOALL };

static int mpi_move(int which, const char *fn, const void *sbuf, int scount, MPI_Datatype stype,
                    void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                    MPI_Request *req)
{
    CX_BEGIN(fn, comm, req);
    if (x->c->inter)
        return mpi_ic_end(x,
                          mpi_ic_move(which, x->c, sbuf, scount, stype, rbuf, rcount, rtype, root));
    int rooted = which == MPI_C_GATHER || which == MPI_C_SCATTER;
    if (rooted && (root < 0 || root >= p)) return mpi_err(comm, fn, MPI_ERR_ROOT);
    int at_root = rooted && me == root;
    /* Which sides take part here, where MPI_IN_PLACE may stand, how many elements. */
    int s_used = which == MPI_C_SCATTER ? at_root : 1;
    int r_used = which == MPI_C_GATHER ? at_root : 1;
    int s_inplace_ok =
        which == MPI_C_ALLGATHER || which == MPI_C_ALLTOALL || (which == MPI_C_GATHER && at_root);
    if (s_used && sbuf == MPI_IN_PLACE && !s_inplace_ok) return mpi_err(comm, fn, MPI_ERR_BUFFER);
    if (r_used && rbuf == MPI_IN_PLACE && !(which == MPI_C_SCATTER && at_root))
        return mpi_err(comm, fn, MPI_ERR_BUFFER);
    MPI_Count sn =
        which == MPI_C_SCATTER || which == MPI_C_ALLTOALL ? (MPI_Count)scount * p : scount;
    MPI_Count rn = which == MPI_C_SCATTER ? rcount : (MPI_Count)rcount * p;
    int s_data = s_used && sbuf != MPI_IN_PLACE, r_data = r_used && rbuf != MPI_IN_PLACE;
    struct mpi_type *st = NULL, *rt = NULL;
    if (s_data && ((rc = mpi_chk_ct(scount, stype, &st)) || (rc = mpi_chk_buf(sbuf, sn, st))))
        return mpi_err(comm, fn, rc);
    if (r_data && ((rc = mpi_chk_ct(rcount, rtype, &rt)) || (rc = mpi_chk_buf(rbuf, rn, rt))))
        return mpi_err(comm, fn, rc);
    struct mpi_side ss = {NULL, (size_t)-1, 0}, rs = {NULL, (size_t)-1, 0};
    if (s_data) mpi_cx_side(x, sbuf, sn, st, &ss);
    if (r_data) mpi_cx_side(x, rbuf, rn, rt, &rs);
    CX_SCHED(s);
    const void *sp = s_data ? mpi_cx_in(x, sbuf, sn, st, &ss) : s_used ? MPI_IN_PLACE : NULL;
    /* In place, the caller's own block is already in rbuf: the temporary starts as rbuf. */
    void *rp = r_data   ? mpi_cx_out(x, rbuf, rn, rt, &rs, sbuf == MPI_IN_PLACE)
               : r_used ? MPI_IN_PLACE
                        : NULL;
    size_t b; /* bytes per process block */
    switch (which) {
    case MPI_C_GATHER:
        b = at_root ? rs.bytes / (size_t)p : ss.bytes;
        break;
    case MPI_C_SCATTER:
        b = at_root ? ss.bytes / (size_t)p : rs.bytes;
        break;
    default:
        b = rs.bytes / (size_t)p;
        break;
    }
    switch (which) {
    case MPI_C_GATHER:
        rc = coll_gather(s, sp, rp, b, root);
        break;
    case MPI_C_SCATTER:
        rc = coll_scatter(s, sp, rp, b, root);
        break;
    case MPI_C_ALLGATHER:
        rc = coll_allgather(s, sp, rp, b);
        break;
    default:
        rc = coll_alltoall(s, sp, rp, b);
        break;
    }
    return mpi_cx_end(x, s, rc);
}

#define MPI_MOVE_FN(Name, which)                                                                   \
    int PMPI_##Name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,      \
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)                 \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return mpi_move(which, "MPI_" #Name, sendbuf, sendcount, sendtype, recvbuf, recvcount,     \
                        recvtype, root, comm, NULL);                                               \
    }                                                                                              \
    MPI_ALIAS(Name)
MPI_MOVE_FN(Gather, MPI_C_GATHER)
MPI_MOVE_FN(Scatter, MPI_C_SCATTER)

int PMPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                 MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Igather", MPI_ERR_ARG);
    return mpi_move(MPI_C_GATHER, "MPI_Igather", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, root, comm, request);
}
MPI_ALIAS(Igather)

int PMPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                  MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Iscatter", MPI_ERR_ARG);
    return mpi_move(MPI_C_SCATTER, "MPI_Iscatter", sendbuf, sendcount, sendtype, recvbuf, recvcount,
                    recvtype, root, comm, request);
}
MPI_ALIAS(Iscatter)

int PMPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_move(MPI_C_ALLGATHER, "MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf,
                    recvcount, recvtype, 0, comm, NULL);
}
MPI_ALIAS(Allgather)

int PMPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Iallgather", MPI_ERR_ARG);
    return mpi_move(MPI_C_ALLGATHER, "MPI_Iallgather", sendbuf, sendcount, sendtype, recvbuf,
                    recvcount, recvtype, 0, comm, request);
}
MPI_ALIAS(Iallgather)

int PMPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_move(MPI_C_ALLTOALL, "MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf,
                    recvcount, recvtype, 0, comm, NULL);
}
MPI_ALIAS(Alltoall)

int PMPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ialltoall", MPI_ERR_ARG);
    return mpi_move(MPI_C_ALLTOALL, "MPI_Ialltoall", sendbuf, sendcount, sendtype, recvbuf,
                    recvcount, recvtype, 0, comm, request);
}
MPI_ALIAS(Ialltoall)

/* ---- the v variants ------------------------------------------------------------------------
 * The side with per-process counts must use a contiguous datatype (the counts and
 * displacements scale by its extent); the other side may be any datatype. */

enum { MPI_C_GATHERV, MPI_C_SCATTERV, MPI_C_ALLGATHERV, MPI_C_ALLTOALLV };

/* int arrays -> size_t arrays (nonnegative); MPI_ERR_COUNT otherwise. */
static int mpi_sizes(const int *v, int p, size_t *out, int err)
{
    for (int i = 0; i < p; i++) {
        if (v[i] < 0) return err;
        out[i] = (size_t)v[i];
    }
    return 0;
}

/*
 * One datatype for a whole side of a v collective: rank i's block is counts[i] elements
 * of types[i] at byte displacement bdispls[i] of the buffer. Packing one instance lays
 * the blocks end to end; bytes[i] and off[i] (may be NULL) receive each block's packed
 * size and offset. Lets non-contiguous sides travel through one packed temporary.
 */
static int mpi_vside_type(int p, const int *counts, const MPI_Aint *bdispls,
                          const MPI_Datatype *types, MPI_Datatype *out, size_t *bytes, size_t *off)
{
    size_t at = 0;
    for (int i = 0; i < p; i++) {
        struct mpi_type *t = mpi_type_ok(types[i]);
        if (t == NULL) return MPI_ERR_TYPE;
        if (counts[i] < 0) return MPI_ERR_COUNT;
        size_t b = (size_t)counts[i] * (size_t)t->size;
        if (bytes) bytes[i] = b;
        if (off) off[i] = at;
        at += b;
    }
    int rc = PMPI_Type_create_struct(p, counts, bdispls, types, out);
    if (rc == 0) rc = PMPI_Type_commit(out);
    return rc;
}

static int mpi_movev(int which, const char *fn, const void *sbuf, int scount, const int *scounts,
                     const int *sdispls, MPI_Datatype stype, void *rbuf, int rcount,
                     const int *rcounts, const int *rdispls, MPI_Datatype rtype, int root,
                     MPI_Comm comm, MPI_Request *req)
{
    CX_BEGIN(fn, comm, req);
    if (x->c->inter)
        return mpi_ic_end(x, mpi_ic_movev(which, x->c, sbuf, scount, scounts, sdispls, stype, rbuf,
                                          rcount, rcounts, rdispls, rtype, root));
    if (which == MPI_C_ALLTOALLV && sbuf == MPI_IN_PLACE) {
        /* MPI: the send arguments are ignored (they may be NULL); the data sent is that of
         * the receive side. */
        scounts = rcounts;
        sdispls = rdispls;
        stype = rtype;
    }
    int rooted = which == MPI_C_GATHERV || which == MPI_C_SCATTERV;
    if (rooted && (root < 0 || root >= p)) return mpi_err(comm, fn, MPI_ERR_ROOT);
    int at_root = rooted && me == root;
    struct mpi_type *st = NULL, *rt = NULL;
    /* Sides in use: vector sides need their arrays and a contiguous type. */
    int vs = (which == MPI_C_SCATTERV && at_root) || which == MPI_C_ALLTOALLV;
    int vr = (which == MPI_C_GATHERV && at_root) || which == MPI_C_ALLGATHERV ||
             which == MPI_C_ALLTOALLV;
    int plain_s = (which == MPI_C_GATHERV || which == MPI_C_ALLGATHERV) && sbuf != MPI_IN_PLACE;
    int plain_r = which == MPI_C_SCATTERV && rbuf != MPI_IN_PLACE;
    if (sbuf == MPI_IN_PLACE && !(which == MPI_C_ALLGATHERV || which == MPI_C_ALLTOALLV ||
                                  (which == MPI_C_GATHERV && at_root)))
        return mpi_err(comm, fn, MPI_ERR_BUFFER);
    if (rbuf == MPI_IN_PLACE && !(which == MPI_C_SCATTERV && at_root))
        return mpi_err(comm, fn, MPI_ERR_BUFFER);
    if ((vs || plain_s || (which == MPI_C_SCATTERV && at_root)) && sbuf != MPI_IN_PLACE &&
        (rc = mpi_chk_ct(plain_s ? scount : 0, stype, &st)))
        return mpi_err(comm, fn, rc);
    if ((vr || plain_r) && (rc = mpi_chk_ct(plain_r ? rcount : 0, rtype, &rt)))
        return mpi_err(comm, fn, rc);
    if ((plain_s && st && (rc = mpi_chk_buf(sbuf, scount, st))) ||
        (plain_r && rt && (rc = mpi_chk_buf(rbuf, rcount, rt))))
        return mpi_err(comm, fn, rc);
    if ((vs && (!scounts || !sdispls)) || (vr && (!rcounts || !rdispls)))
        return mpi_err(comm, fn, MPI_ERR_ARG);
    size_t *arr = malloc(4 * (size_t)p * sizeof(size_t));
    if (arr == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    size_t *sc = arr, *sd = arr + p, *rc_ = arr + 2 * p, *rd = arr + 3 * p;
    if ((vs && ((rc = mpi_sizes(scounts, p, sc, MPI_ERR_COUNT)) ||
                (rc = mpi_sizes(sdispls, p, sd, MPI_ERR_ARG)))) ||
        (vr && ((rc = mpi_sizes(rcounts, p, rc_, MPI_ERR_COUNT)) ||
                (rc = mpi_sizes(rdispls, p, rd, MPI_ERR_ARG))))) {
        free(arr);
        return mpi_err(comm, fn, rc);
    }
    /* A NULL buffer is fine only when its side moves nothing. */
    size_t stotal = 0, rtotal = 0;
    for (int i = 0; vs && i < p; i++)
        stotal |= sc[i];
    for (int i = 0; vr && i < p; i++)
        rtotal |= rc_[i];
    if ((vs && sbuf == NULL && stotal && st && st->size) ||
        (vr && rbuf == NULL && rtotal && rt && rt->size)) {
        free(arr);
        return mpi_err(comm, fn, MPI_ERR_BUFFER);
    }
    /* A non-contiguous vector side becomes one datatype covering every block, packed to
     * (or unpacked from) the temporary with per-rank byte counts and packed offsets. */
    MPI_Datatype svt = MPI_DATATYPE_NULL, rvt = MPI_DATATYPE_NULL;
    int sconv = vs && st && !st->contig && sbuf != MPI_IN_PLACE, rconv = vr && rt && !rt->contig;
    if (sconv || rconv) {
        MPI_Aint *bd = calloc((size_t)p, sizeof *bd);
        MPI_Datatype *ty = calloc((size_t)p, sizeof *ty);
        rc = bd && ty ? 0 : MPI_ERR_NO_MEM;
        if (rc == 0 && sconv) {
            for (int i = 0; i < p; i++)
                bd[i] = (MPI_Aint)sdispls[i] * mpi_type_extent(st), ty[i] = stype;
            rc = mpi_vside_type(p, scounts, bd, ty, &svt, sc, sd);
        }
        if (rc == 0 && rconv) {
            for (int i = 0; i < p; i++)
                bd[i] = (MPI_Aint)rdispls[i] * mpi_type_extent(rt), ty[i] = rtype;
            rc = mpi_vside_type(p, rcounts, bd, ty, &rvt, rc_, rd);
        }
        free(bd);
        free(ty);
        if (rc) {
            if (svt != MPI_DATATYPE_NULL) PMPI_Type_free(&svt);
            free(arr);
            return mpi_err(comm, fn, rc);
        }
    }
    struct mpi_side ss = {MPI_IN_PLACE, (size_t)-1, 0}, rs = {MPI_IN_PLACE, (size_t)-1, 0};
    if (plain_s) mpi_cx_side(x, sbuf, scount, st, &ss);
    if (plain_r) mpi_cx_side(x, rbuf, rcount, rt, &rs);
    if (sconv) mpi_cx_side(x, sbuf, 1, mpi_type_get(svt), &ss);
    if (rconv) mpi_cx_side(x, rbuf, 1, mpi_type_get(rvt), &rs);
    if ((rc = mpi_cx_alloc(x))) {
        free(arr);
        if (svt != MPI_DATATYPE_NULL) PMPI_Type_free(&svt);
        if (rvt != MPI_DATATYPE_NULL) PMPI_Type_free(&rvt);
        return mpi_cx_fail(x, rc);
    }
    struct coll_sched *s = mpi_cx_sched(x);
    if (s == NULL) {
        free(arr);
        if (svt != MPI_DATATYPE_NULL) PMPI_Type_free(&svt);
        if (rvt != MPI_DATATYPE_NULL) PMPI_Type_free(&rvt);
        return mpi_cx_fail(x, MPI_ERR_NO_MEM);
    }
    const void *sp = plain_s ? mpi_cx_in(x, sbuf, scount, st, &ss)
                     : sconv ? mpi_cx_in(x, sbuf, 1, mpi_type_get(svt), &ss)
                     : sbuf == MPI_IN_PLACE || !st
                         ? sbuf
                         : (const void *)((uintptr_t)sbuf + (uintptr_t)st->contig_off);
    /* In place, the caller's own block is in rbuf already: the temporary starts as rbuf. */
    void *rp = plain_r ? mpi_cx_out(x, rbuf, rcount, rt, &rs, 0)
               : rconv ? mpi_cx_out(x, rbuf, 1, mpi_type_get(rvt), &rs, sbuf == MPI_IN_PLACE)
               : rbuf == MPI_IN_PLACE || !rt
                   ? rbuf
                   : (void *)((uintptr_t)rbuf + (uintptr_t)rt->contig_off);
    size_t su = st ? (size_t)mpi_type_extent(st) : 1, ru = rt ? (size_t)mpi_type_extent(rt) : 1;
    if (sconv) su = 1;
    if (rconv) ru = 1;
    /* The packed temporaries' own references keep the types; the handles can go. */
    if (svt != MPI_DATATYPE_NULL) PMPI_Type_free(&svt);
    switch (which) {
    case MPI_C_GATHERV:
        rc = coll_gatherv(s, sp, ss.bytes, rp, rc_, rd, ru, root);
        break;
    case MPI_C_SCATTERV:
        rc = coll_scatterv(s, sp, sc, sd, su, rp, rs.bytes, root);
        break;
    case MPI_C_ALLGATHERV: {
        size_t sb = sbuf == MPI_IN_PLACE ? rc_[me] * ru : ss.bytes;
        rc = coll_allgatherv(s, sp, sb, rp, rc_, rd, ru);
        break;
    }
    default:
        if (sbuf != MPI_IN_PLACE && su != ru) {
            /* One unit for both sides: express the send side in bytes. */
            for (int i = 0; i < p; i++)
                sc[i] *= su, sd[i] *= su, rc_[i] *= ru, rd[i] *= ru;
            su = ru = 1;
        }
        rc = coll_alltoallv(s, sp, sbuf == MPI_IN_PLACE ? NULL : sc,
                            sbuf == MPI_IN_PLACE ? NULL : sd, rp, rc_, rd, ru);
        break;
    }
    free(arr);
    rc = mpi_cx_end(x, s, rc);
    if (rvt != MPI_DATATYPE_NULL) PMPI_Type_free(&rvt); /* a pending request holds its own */
    return rc;
}

int PMPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                 MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_movev(MPI_C_GATHERV, "MPI_Gatherv", sendbuf, sendcount, NULL, NULL, sendtype,
                     recvbuf, 0, recvcounts, displs, recvtype, root, comm, NULL);
}
MPI_ALIAS(Gatherv)

int PMPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Igatherv", MPI_ERR_ARG);
    return mpi_movev(MPI_C_GATHERV, "MPI_Igatherv", sendbuf, sendcount, NULL, NULL, sendtype,
                     recvbuf, 0, recvcounts, displs, recvtype, root, comm, request);
}
MPI_ALIAS(Igatherv)

int PMPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                  MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                  int root, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_movev(MPI_C_SCATTERV, "MPI_Scatterv", sendbuf, 0, sendcounts, displs, sendtype,
                     recvbuf, recvcount, NULL, NULL, recvtype, root, comm, NULL);
}
MPI_ALIAS(Scatterv)

int PMPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                   MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                   int root, MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Iscatterv", MPI_ERR_ARG);
    return mpi_movev(MPI_C_SCATTERV, "MPI_Iscatterv", sendbuf, 0, sendcounts, displs, sendtype,
                     recvbuf, recvcount, NULL, NULL, recvtype, root, comm, request);
}
MPI_ALIAS(Iscatterv)

int PMPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_movev(MPI_C_ALLGATHERV, "MPI_Allgatherv", sendbuf, sendcount, NULL, NULL, sendtype,
                     recvbuf, 0, recvcounts, displs, recvtype, 0, comm, NULL);
}
MPI_ALIAS(Allgatherv)

int PMPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Iallgatherv", MPI_ERR_ARG);
    return mpi_movev(MPI_C_ALLGATHERV, "MPI_Iallgatherv", sendbuf, sendcount, NULL, NULL, sendtype,
                     recvbuf, 0, recvcounts, displs, recvtype, 0, comm, request);
}
MPI_ALIAS(Iallgatherv)

int PMPI_Alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                   const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_movev(MPI_C_ALLTOALLV, "MPI_Alltoallv", sendbuf, 0, sendcounts, sdispls, sendtype,
                     recvbuf, 0, recvcounts, rdispls, recvtype, 0, comm, NULL);
}
MPI_ALIAS(Alltoallv)

int PMPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ialltoallv", MPI_ERR_ARG);
    return mpi_movev(MPI_C_ALLTOALLV, "MPI_Ialltoallv", sendbuf, 0, sendcounts, sdispls, sendtype,
                     recvbuf, 0, recvcounts, rdispls, recvtype, 0, comm, request);
}
MPI_ALIAS(Ialltoallv)

/* ---- alltoallw ---------------------------------------------------------------------------
 * Per-peer datatypes and byte displacements: each side becomes one struct datatype over
 * all its blocks, packed into a temporary that the byte-unit alltoallv moves. */

static int mpi_alltoallw(const char *fn, const void *sbuf, const int scounts[], const int sdispls[],
                         const MPI_Datatype stypes[], void *rbuf, const int rcounts[],
                         const int rdispls[], const MPI_Datatype rtypes[], MPI_Comm comm,
                         MPI_Request *req)
{
    CX_BEGIN(fn, comm, req);
    if (x->c->inter)
        return mpi_ic_end(x, mpi_ic_alltoallw(x->c, sbuf, scounts, sdispls, stypes, rbuf, rcounts,
                                              rdispls, rtypes));
    int inplace = sbuf == MPI_IN_PLACE;
    if (rbuf == MPI_IN_PLACE) return mpi_err(comm, fn, MPI_ERR_BUFFER);
    if (!rcounts || !rdispls || !rtypes || (!inplace && (!scounts || !sdispls || !stypes)))
        return mpi_err(comm, fn, MPI_ERR_ARG);
    size_t *arr = malloc(4 * (size_t)p * sizeof(size_t));
    MPI_Aint *bd = calloc((size_t)p, sizeof *bd);
    MPI_Datatype svt = MPI_DATATYPE_NULL, rvt = MPI_DATATYPE_NULL;
    rc = arr && bd ? 0 : MPI_ERR_NO_MEM;
    size_t *sc = arr, *sd = arr + p, *rcn = arr + 2 * p, *rd = arr + 3 * p;
    if (rc == 0 && !inplace) {
        for (int i = 0; i < p; i++)
            bd[i] = sdispls[i];
        rc = mpi_vside_type(p, scounts, bd, stypes, &svt, sc, sd);
    }
    if (rc == 0) {
        for (int i = 0; i < p; i++)
            bd[i] = rdispls[i];
        rc = mpi_vside_type(p, rcounts, bd, rtypes, &rvt, rcn, rd);
    }
    free(bd);
    /* MPI_BOTTOM (NULL) is a valid base for datatypes with absolute addresses: only a
     * predefined type at displacement 0 from it cannot be real data. */
    for (int i = 0; rc == 0 && !inplace && i < p; i++) {
        struct mpi_type *t = scounts[i] ? mpi_type_ok(stypes[i]) : NULL;
        if (!sbuf && t && t->predefined && t->size > 0 && sdispls[i] == 0) rc = MPI_ERR_BUFFER;
    }
    if (rc) {
        free(arr);
        if (svt != MPI_DATATYPE_NULL) PMPI_Type_free(&svt);
        if (rvt != MPI_DATATYPE_NULL) PMPI_Type_free(&rvt);
        return mpi_err(comm, fn, rc);
    }
    struct mpi_side ss = {MPI_IN_PLACE, (size_t)-1, 0}, rs;
    if (!inplace) mpi_cx_side(x, sbuf, 1, mpi_type_get(svt), &ss);
    mpi_cx_side(x, rbuf, 1, mpi_type_get(rvt), &rs);
    struct coll_sched *s = NULL;
    if ((rc = mpi_cx_alloc(x)) == 0 && (s = mpi_cx_sched(x)) == NULL) rc = MPI_ERR_NO_MEM;
    if (rc) {
        free(arr);
        if (svt != MPI_DATATYPE_NULL) PMPI_Type_free(&svt);
        PMPI_Type_free(&rvt);
        return mpi_cx_fail(x, rc);
    }
    const void *sp = inplace ? MPI_IN_PLACE : mpi_cx_in(x, sbuf, 1, mpi_type_get(svt), &ss);
    void *rp = mpi_cx_out(x, rbuf, 1, mpi_type_get(rvt), &rs, inplace);
    if (svt != MPI_DATATYPE_NULL) PMPI_Type_free(&svt);
    rc = coll_alltoallv(s, sp, inplace ? NULL : sc, inplace ? NULL : sd, rp, rcn, rd, 1);
    free(arr);
    rc = mpi_cx_end(x, s, rc);
    PMPI_Type_free(&rvt);
    return rc;
}

int PMPI_Alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                   const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                   const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return mpi_alltoallw("MPI_Alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                         recvcounts, rdispls, recvtypes, comm, NULL);
}
MPI_ALIAS(Alltoallw)

int PMPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                    const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                    const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                    MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ialltoallw", MPI_ERR_ARG);
    return mpi_alltoallw("MPI_Ialltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                         recvcounts, rdispls, recvtypes, comm, request);
}
MPI_ALIAS(Ialltoallw)

/*
 * coll_api.c - the native API's collectives (tern.h, "Collectives"): argument checks at
 * the door, then one builder call on a schedule that either runs now (blocking) or is
 * handed to the progress engine (the tern_i* forms). Nothing below checks user input.
 */
#include <stdint.h>
#include <stdlib.h>

#include "coll/coll.h"

/* ---- checks ------------------------------------------------------------------- */

static inline int coll_api_state(void)
{
    if (__builtin_expect(core.initialized, 1)) return 0;
    return core.finalized ? TERN_ERR_FINALIZED : TERN_ERR_NOT_INIT;
}

static int coll_api_comm(tern_comm_t comm)
{
    int rc = coll_api_state();
    if (rc) return rc;
    return comm && comm->magic == CORE_COMM_MAGIC ? 0 : TERN_ERR_COMM;
}

static inline int coll_api_root(tern_comm_t comm, int root)
{
    return root >= 0 && root < comm->size ? 0 : TERN_ERR_RANK;
}

/* A buffer of n bytes/elements: NULL only when empty; TERN_IN_PLACE only where allowed. */
static inline int coll_api_buf(const void *b, size_t n, int in_place_ok)
{
    if (b == TERN_IN_PLACE) return in_place_ok ? 0 : TERN_ERR_BUFFER;
    return b == NULL && n > 0 ? TERN_ERR_BUFFER : 0;
}

/* Resolve dt/op into s-independent form and check count * size does not overflow. */
static int coll_api_op(tern_datatype_t dt, tern_op_t op, size_t count, size_t times,
                       struct coll_op *out)
{
    int rc = coll_op_resolve(op, dt, out);
    if (rc) return rc;
    if (times && count > SIZE_MAX / out->esize / times) return TERN_ERR_INVAL;
    return 0;
}

static inline size_t coll_sum(const size_t *v, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t += v[i];
    return t;
}

/* ---- schedule plumbing ----------------------------------------------------------- */

/* A schedule on the stack for a blocking call, on the heap for a non-blocking one. */
#define COLL_API_BEGIN(comm, req)                                                                  \
    struct coll_sched sched_stack_, *s = &sched_stack_;                                            \
    if (req) {                                                                                     \
        s = malloc(sizeof *s);                                                                     \
        if (s == NULL) return TERN_ERR_NOMEM;                                                      \
    }                                                                                              \
    coll_sched_init_as(s, comm, req != NULL);                                                      \
    s->name = __func__

static int coll_api_end(struct coll_sched *s, int rc, tern_request_t *req)
{
    if (req) {
        core_req_t *r;
        rc = coll_sched_start(s, rc, &r);
        if (rc == 0) *req = core_req_handle(r); /* a public handle carries its generation */
        return rc;
    }
    return coll_sched_run(s, rc);
}

/* ---- operations and datatypes ------------------------------------------------------ */

size_t tern_datatype_size(tern_datatype_t dt)
{
    CORE_CS_SCOPE();
    return coll_dt_size(dt);
}

int tern_op_create(tern_user_fn fn, int commute, tern_op_t *op)
{
    CORE_CS_SCOPE();
    int rc = coll_api_state();
    if (rc) return rc;
    if (fn == NULL || op == NULL) return TERN_ERR_INVAL;
    return coll_op_create(fn, commute, op);
}

int tern_op_free(tern_op_t *op)
{
    CORE_CS_SCOPE();
    int rc = coll_api_state();
    if (rc) return rc;
    if (op == NULL) return TERN_ERR_INVAL;
    rc = coll_op_free(*op);
    if (rc == 0) *op = TERN_OP_NULL;
    return rc;
}

/* ---- barrier, bcast ------------------------------------------------------------------ */

static int api_barrier(tern_comm_t comm, tern_request_t *req)
{
    enum coll_alg alg;
    int rc = coll_select(COLL_BARRIER, 0, comm->size, &alg);
    if (rc) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_barrier(s), req);
}

int tern_barrier(tern_comm_t comm)
{
    CORE_CS_SCOPE();
    int rc = coll_api_comm(comm);
    return rc ? rc : api_barrier(comm, NULL);
}

int tern_ibarrier(tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if (req == NULL) return TERN_ERR_INVAL;
    return api_barrier(comm, req);
}

static int api_bcast(void *buf, size_t bytes, int root, tern_comm_t comm, tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if ((rc = coll_api_root(comm, root)) || (rc = coll_api_buf(buf, bytes, 0))) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_bcast(s, buf, bytes, root), req);
}

int tern_bcast(void *buf, size_t bytes, int root, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_bcast(buf, bytes, root, comm, NULL);
}

int tern_ibcast(void *buf, size_t bytes, int root, tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_bcast(buf, bytes, root, comm, req) : TERN_ERR_INVAL;
}

/* ---- reduce, allreduce ------------------------------------------------------------------ */

static int api_reduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                      int root, tern_comm_t comm, tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    struct coll_op o;
    if ((rc = coll_api_root(comm, root)) || (rc = coll_api_op(dt, op, count, 1, &o))) return rc;
    int at_root = comm->rank == root;
    if ((rc = coll_api_buf(sbuf, count, at_root))) return rc;
    if (at_root && (rc = coll_api_buf(rbuf, count, 0))) return rc;
    COLL_API_BEGIN(comm, req);
    s->op = o;
    return coll_api_end(s, coll_reduce(s, sbuf, rbuf, count, root), req);
}

int tern_reduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                int root, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_reduce(sbuf, rbuf, count, dt, op, root, comm, NULL);
}

int tern_ireduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                 int root, tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_reduce(sbuf, rbuf, count, dt, op, root, comm, req) : TERN_ERR_INVAL;
}

/* allreduce, scan and exscan share their checks. */
enum { API_ALLREDUCE, API_SCAN, API_EXSCAN };

static int api_allreduce(int which, const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt,
                         tern_op_t op, tern_comm_t comm, tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    struct coll_op o;
    if ((rc = coll_api_op(dt, op, count, 1, &o))) return rc;
    if ((rc = coll_api_buf(sbuf, count, 1)) || (rc = coll_api_buf(rbuf, count, 0))) return rc;
    COLL_API_BEGIN(comm, req);
    s->op = o;
    if (which == API_ALLREDUCE)
        rc = coll_allreduce(s, sbuf, rbuf, count);
    else if (which == API_SCAN)
        rc = coll_scan(s, sbuf, rbuf, count);
    else
        rc = coll_exscan(s, sbuf, rbuf, count);
    return coll_api_end(s, rc, req);
}

int tern_allreduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                   tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_allreduce(API_ALLREDUCE, sbuf, rbuf, count, dt, op, comm, NULL);
}

int tern_iallreduce(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                    tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_allreduce(API_ALLREDUCE, sbuf, rbuf, count, dt, op, comm, req)
               : TERN_ERR_INVAL;
}

int tern_scan(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
              tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_allreduce(API_SCAN, sbuf, rbuf, count, dt, op, comm, NULL);
}

int tern_iscan(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
               tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_allreduce(API_SCAN, sbuf, rbuf, count, dt, op, comm, req) : TERN_ERR_INVAL;
}

int tern_exscan(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_allreduce(API_EXSCAN, sbuf, rbuf, count, dt, op, comm, NULL);
}

int tern_iexscan(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt, tern_op_t op,
                 tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_allreduce(API_EXSCAN, sbuf, rbuf, count, dt, op, comm, req) : TERN_ERR_INVAL;
}

/* ---- reduce_scatter ------------------------------------------------------------------ */

static int api_reduce_scatter(const void *sbuf, void *rbuf, const size_t counts[], size_t count,
                              tern_datatype_t dt, tern_op_t op, tern_comm_t comm,
                              tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    int p = comm->size;
    size_t mine = counts ? counts[comm->rank] : count;
    size_t total = counts ? coll_sum(counts, p) : count;
    struct coll_op o;
    if ((rc = coll_api_op(dt, op, total, counts ? 1 : (size_t)p, &o))) return rc;
    if (!counts) total *= (size_t)p;
    if ((rc = coll_api_buf(sbuf, total, 1)) || (rc = coll_api_buf(rbuf, mine, 0))) return rc;
    if (sbuf == TERN_IN_PLACE && rbuf == NULL && total > 0) return TERN_ERR_BUFFER;
    COLL_API_BEGIN(comm, req);
    s->op = o;
    rc = counts ? coll_reduce_scatter(s, sbuf, rbuf, counts)
                : coll_reduce_scatter_block(s, sbuf, rbuf, count);
    return coll_api_end(s, rc, req);
}

int tern_reduce_scatter(const void *sbuf, void *rbuf, const size_t counts[], tern_datatype_t dt,
                        tern_op_t op, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    if (counts == NULL) return coll_api_comm(comm) ? coll_api_comm(comm) : TERN_ERR_INVAL;
    return api_reduce_scatter(sbuf, rbuf, counts, 0, dt, op, comm, NULL);
}

int tern_ireduce_scatter(const void *sbuf, void *rbuf, const size_t counts[], tern_datatype_t dt,
                         tern_op_t op, tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    if (counts == NULL || req == NULL)
        return coll_api_comm(comm) ? coll_api_comm(comm) : TERN_ERR_INVAL;
    return api_reduce_scatter(sbuf, rbuf, counts, 0, dt, op, comm, req);
}

int tern_reduce_scatter_block(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt,
                              tern_op_t op, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_reduce_scatter(sbuf, rbuf, NULL, count, dt, op, comm, NULL);
}

int tern_ireduce_scatter_block(const void *sbuf, void *rbuf, size_t count, tern_datatype_t dt,
                               tern_op_t op, tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_reduce_scatter(sbuf, rbuf, NULL, count, dt, op, comm, req) : TERN_ERR_INVAL;
}

/* ---- gather, scatter ------------------------------------------------------------------ */

static int api_gather(const void *sbuf, size_t bytes, void *rbuf, int root, tern_comm_t comm,
                      tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if ((rc = coll_api_root(comm, root))) return rc;
    if (bytes > SIZE_MAX / (size_t)comm->size) return TERN_ERR_INVAL;
    int at_root = comm->rank == root;
    if ((rc = coll_api_buf(sbuf, bytes, at_root))) return rc;
    if (at_root && (rc = coll_api_buf(rbuf, bytes, 0))) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_gather(s, sbuf, rbuf, bytes, root), req);
}

int tern_gather(const void *sbuf, size_t bytes, void *rbuf, int root, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_gather(sbuf, bytes, rbuf, root, comm, NULL);
}

int tern_igather(const void *sbuf, size_t bytes, void *rbuf, int root, tern_comm_t comm,
                 tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_gather(sbuf, bytes, rbuf, root, comm, req) : TERN_ERR_INVAL;
}

static int api_gatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                       const size_t displs[], int root, tern_comm_t comm, tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if ((rc = coll_api_root(comm, root))) return rc;
    int at_root = comm->rank == root;
    if ((rc = coll_api_buf(sbuf, sbytes, at_root))) return rc;
    if (at_root) {
        if (counts == NULL || displs == NULL) return TERN_ERR_INVAL;
        if ((rc = coll_api_buf(rbuf, coll_sum(counts, comm->size), 0))) return rc;
    }
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_gatherv(s, sbuf, sbytes, rbuf, counts, displs, 1, root), req);
}

int tern_gatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                 const size_t displs[], int root, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_gatherv(sbuf, sbytes, rbuf, counts, displs, root, comm, NULL);
}

int tern_igatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                  const size_t displs[], int root, tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_gatherv(sbuf, sbytes, rbuf, counts, displs, root, comm, req) : TERN_ERR_INVAL;
}

static int api_scatter(const void *sbuf, void *rbuf, size_t bytes, int root, tern_comm_t comm,
                       tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if ((rc = coll_api_root(comm, root))) return rc;
    if (bytes > SIZE_MAX / (size_t)comm->size) return TERN_ERR_INVAL;
    int at_root = comm->rank == root;
    if (at_root && (rc = coll_api_buf(sbuf, bytes, 0))) return rc;
    if ((rc = coll_api_buf(rbuf, bytes, at_root))) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_scatter(s, sbuf, rbuf, bytes, root), req);
}

int tern_scatter(const void *sbuf, void *rbuf, size_t bytes, int root, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_scatter(sbuf, rbuf, bytes, root, comm, NULL);
}

int tern_iscatter(const void *sbuf, void *rbuf, size_t bytes, int root, tern_comm_t comm,
                  tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_scatter(sbuf, rbuf, bytes, root, comm, req) : TERN_ERR_INVAL;
}

static int api_scatterv(const void *sbuf, const size_t counts[], const size_t displs[], void *rbuf,
                        size_t rbytes, int root, tern_comm_t comm, tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if ((rc = coll_api_root(comm, root))) return rc;
    int at_root = comm->rank == root;
    if (at_root) {
        if (counts == NULL || displs == NULL) return TERN_ERR_INVAL;
        if ((rc = coll_api_buf(sbuf, coll_sum(counts, comm->size), 0))) return rc;
    }
    if ((rc = coll_api_buf(rbuf, rbytes, at_root))) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_scatterv(s, sbuf, counts, displs, 1, rbuf, rbytes, root), req);
}

int tern_scatterv(const void *sbuf, const size_t counts[], const size_t displs[], void *rbuf,
                  size_t rbytes, int root, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_scatterv(sbuf, counts, displs, rbuf, rbytes, root, comm, NULL);
}

int tern_iscatterv(const void *sbuf, const size_t counts[], const size_t displs[], void *rbuf,
                   size_t rbytes, int root, tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_scatterv(sbuf, counts, displs, rbuf, rbytes, root, comm, req) : TERN_ERR_INVAL;
}

/* ---- allgather, alltoall ---------------------------------------------------------------- */

static int api_allgather(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm,
                         tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if (bytes > SIZE_MAX / (size_t)comm->size) return TERN_ERR_INVAL;
    if ((rc = coll_api_buf(sbuf, bytes, 1)) || (rc = coll_api_buf(rbuf, bytes, 0))) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_allgather(s, sbuf, rbuf, bytes), req);
}

int tern_allgather(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_allgather(sbuf, rbuf, bytes, comm, NULL);
}

int tern_iallgather(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm,
                    tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_allgather(sbuf, rbuf, bytes, comm, req) : TERN_ERR_INVAL;
}

static int api_allgatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                          const size_t displs[], tern_comm_t comm, tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if (counts == NULL || displs == NULL) return TERN_ERR_INVAL;
    if ((rc = coll_api_buf(sbuf, sbytes, 1))) return rc;
    if ((rc = coll_api_buf(rbuf, coll_sum(counts, comm->size), 0))) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_allgatherv(s, sbuf, sbytes, rbuf, counts, displs, 1), req);
}

int tern_allgatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                    const size_t displs[], tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_allgatherv(sbuf, sbytes, rbuf, counts, displs, comm, NULL);
}

int tern_iallgatherv(const void *sbuf, size_t sbytes, void *rbuf, const size_t counts[],
                     const size_t displs[], tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_allgatherv(sbuf, sbytes, rbuf, counts, displs, comm, req) : TERN_ERR_INVAL;
}

static int api_alltoall(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm,
                        tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if (bytes > SIZE_MAX / (size_t)comm->size) return TERN_ERR_INVAL;
    if ((rc = coll_api_buf(sbuf, bytes, 1)) || (rc = coll_api_buf(rbuf, bytes, 0))) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_alltoall(s, sbuf, rbuf, bytes), req);
}

int tern_alltoall(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_alltoall(sbuf, rbuf, bytes, comm, NULL);
}

int tern_ialltoall(const void *sbuf, void *rbuf, size_t bytes, tern_comm_t comm,
                   tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_alltoall(sbuf, rbuf, bytes, comm, req) : TERN_ERR_INVAL;
}

static int api_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[],
                         void *rbuf, const size_t rcounts[], const size_t rdispls[],
                         tern_comm_t comm, tern_request_t *req)
{
    int rc = coll_api_comm(comm);
    if (rc) return rc;
    if (rcounts == NULL || rdispls == NULL) return TERN_ERR_INVAL;
    if (sbuf != TERN_IN_PLACE) {
        if (scounts == NULL || sdispls == NULL) return TERN_ERR_INVAL;
        if ((rc = coll_api_buf(sbuf, coll_sum(scounts, comm->size), 0))) return rc;
    }
    if ((rc = coll_api_buf(rbuf, coll_sum(rcounts, comm->size), 0))) return rc;
    COLL_API_BEGIN(comm, req);
    return coll_api_end(s, coll_alltoallv(s, sbuf, scounts, sdispls, rbuf, rcounts, rdispls, 1),
                        req);
}

int tern_alltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[], void *rbuf,
                   const size_t rcounts[], const size_t rdispls[], tern_comm_t comm)
{
    CORE_CS_SCOPE();
    return api_alltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, comm, NULL);
}

int tern_ialltoallv(const void *sbuf, const size_t scounts[], const size_t sdispls[], void *rbuf,
                    const size_t rcounts[], const size_t rdispls[], tern_comm_t comm,
                    tern_request_t *req)
{
    CORE_CS_SCOPE();
    return req ? api_alltoallv(sbuf, scounts, sdispls, rbuf, rcounts, rdispls, comm, req)
               : TERN_ERR_INVAL;
}

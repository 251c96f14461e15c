/*
 * api.c - the native API (tern.h): argument checks at the door, then a call into the
 * core. Nothing below this file validates user input again.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "conv/conv.h"
#include "core/core.h"

/* ---- checks ----------------------------------------------------------------- */

static inline int api_state(void)
{
    if (__builtin_expect(core.initialized, 1)) return 0;
    return core.finalized ? TERN_ERR_FINALIZED : TERN_ERR_NOT_INIT;
}

static inline int api_comm(tern_comm_t comm)
{
    return comm && comm->magic == CORE_COMM_MAGIC ? 0 : TERN_ERR_COMM;
}

/* Common checks of a send: state, communicator, destination, tag, buffer. */
static inline int api_check_send(const void *buf, size_t len, int dest, int tag, tern_comm_t comm)
{
    int rc = api_state();
    if (rc) return rc;
    if (api_comm(comm)) return TERN_ERR_COMM;
    if (dest < 0 || dest >= comm->size) return TERN_ERR_RANK;
    if (tag < 0) return TERN_ERR_TAG;
    /* TERN_IN_PLACE is the address 1: only collectives know what it means. */
    if ((buf == NULL && len > 0) || buf == TERN_IN_PLACE) return TERN_ERR_BUFFER;
    /* No object is larger than PTRDIFF_MAX bytes: such a length is a negative number
     * (a bad subtraction) passed on, and buf + len would overflow. */
    if (len > PTRDIFF_MAX) return TERN_ERR_INVAL;
    return 0;
}

static inline int api_check_recv(const void *buf, size_t cap, int source, int tag, tern_comm_t comm)
{
    int rc = api_state();
    if (rc) return rc;
    if (api_comm(comm)) return TERN_ERR_COMM;
    if (source != TERN_ANY_SOURCE && (source < 0 || source >= comm->size)) return TERN_ERR_RANK;
    if (tag < TERN_ANY_TAG) return TERN_ERR_TAG;
    if ((buf == NULL && cap > 0) || buf == TERN_IN_PLACE) return TERN_ERR_BUFFER;
    if (cap > PTRDIFF_MAX) return TERN_ERR_INVAL; /* as for a send */
    return 0;
}

static inline int api_src_world(tern_comm_t comm, int source)
{
    return source == TERN_ANY_SOURCE ? TERN_ANY_SOURCE : core_comm_world(comm, source);
}

/* Fill a status from a completed request. */
static void api_status(const core_req_t *r, tern_status_t *st)
{
    if (st == NULL) return;
    st->error = r->err;
    if (r->kind == CORE_REQ_RECV) {
        st->source = r->comm ? core_comm_rank_of(r->comm, r->src) : r->src;
        st->tag = r->msg_tag;
        st->bytes = r->bytes;
    } else {
        st->source = TERN_ANY_SOURCE;
        st->tag = TERN_ANY_TAG;
        st->bytes = r->len;
    }
}

static void api_status_empty(tern_status_t *st)
{
    if (st == NULL) return;
    st->source = TERN_ANY_SOURCE;
    st->tag = TERN_ANY_TAG;
    st->error = TERN_OK;
    st->bytes = 0;
}

/* Take the result of a done request, free it and clear the handle (a public handle or
 * the plain address an internal caller holds: core_req_of takes both). */
static int api_finish(tern_request_t *req, tern_status_t *st)
{
    core_req_t *r = core_req_of(*req);
    int err = r->err;
    api_status(r, st);
    core_req_free(r);
    *req = TERN_REQUEST_NULL;
    return err;
}

/* A live request, and this handle's generation of it (not a stale copy). */
static inline int api_req_valid(tern_request_t h)
{
    core_req_t *r = core_req_of(h);
    return r->id < core.nreqs && core.reqs[r->id] == r && r->state != CORE_RS_FREE &&
           core_req_handle_gen_ok(h);
}

/* ---- environment -------------------------------------------------------------- */

/* Every process serves the conversations homed at it, used by it or not: whichever layer
 * starts the core sets them up (MPI_Init too). */
static int api_setup(int fresh)
{
    return fresh ? conv_init() : 0;
}

int tern_init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc, (void)argv;
    CORE_CS_SCOPE();
    /* Inside an MPI program this joins the core MPI_Init started (core_start). */
    int level;
    int rc = core_start(CORE_USER_API, required, &level, api_setup);
    if (rc < 0) return rc;
    if (provided) *provided = level;
    return 0;
}

int tern_init(int *argc, char ***argv)
{
    return tern_init_thread(argc, argv, TERN_THREAD_SINGLE, NULL);
}

int tern_finalize(void)
{
    CORE_CS_SCOPE();
    int rc = api_state();
    if (rc) return rc;
    /* The core stays up while MPI still uses it; MPI_Finalize then finalizes it. */
    if (!(core.users & CORE_USER_API))
        return core.users_done & CORE_USER_API ? TERN_ERR_FINALIZED : TERN_ERR_NOT_INIT;
    return core_stop(CORE_USER_API);
}

int tern_initialized(void)
{
    CORE_CS_SCOPE();
    return (core.users & CORE_USER_API) != 0;
}

int tern_rank(void)
{
    CORE_CS_SCOPE();
    int rc = api_state();
    return rc ? rc : core.rank;
}

int tern_size(void)
{
    CORE_CS_SCOPE();
    int rc = api_state();
    return rc ? rc : core.size;
}

double tern_wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double tern_wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return 1e-9;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tern_abort(int code)
{
    if (core.initialized) boot_abort(&core.boot, code, "tern_abort called");
    _exit(code);
}

int tern_tolerate_failures(void)
{
    CORE_CS_SCOPE();
    int rc = api_state();
    return rc ? rc : boot_tolerate(&core.boot);
}

/* ---- point-to-point ------------------------------------------------------------- */

static int api_isend(const void *buf, size_t len, int dest, int tag, tern_comm_t comm, int sync,
                     tern_request_t *req)
{
    int rc = api_check_send(buf, len, dest, tag, comm);
    if (rc) return rc;
    if (req == NULL) return TERN_ERR_INVAL;
    return core_isend(buf, len, core_comm_world(comm, dest), tag, comm->ctx, sync, req);
}

/* A new request handed to the user: its handle carries the generation. */
static int api_hand_out(int rc, tern_request_t *req)
{
    if (rc == 0) *req = core_req_handle(*req);
    return rc;
}

int tern_isend(const void *buf, size_t len, int dest, int tag, tern_comm_t comm,
               tern_request_t *req)
{
    CORE_CS_SCOPE();
    return api_hand_out(api_isend(buf, len, dest, tag, comm, 0, req), req);
}

int tern_issend(const void *buf, size_t len, int dest, int tag, tern_comm_t comm,
                tern_request_t *req)
{
    CORE_CS_SCOPE();
    return api_hand_out(api_isend(buf, len, dest, tag, comm, 1, req), req);
}

int tern_send(const void *buf, size_t len, int dest, int tag, tern_comm_t comm)
{
    CORE_CS_SCOPE();
    tern_request_t r;
    int rc = api_isend(buf, len, dest, tag, comm, 1, &r);
    if (rc) return rc;
    rc = core_wait(r);
    if (rc) return rc; /* the request stays owned by the core; the job is failing */
    return api_finish(&r, NULL);
}

static int api_irecv(void *buf, size_t cap, int source, int tag, tern_comm_t comm,
                     tern_request_t *req)
{
    int rc = api_check_recv(buf, cap, source, tag, comm);
    if (rc) return rc;
    if (req == NULL) return TERN_ERR_INVAL;
    return core_irecv(buf, cap, api_src_world(comm, source), tag, comm->ctx, comm, req);
}

int tern_irecv(void *buf, size_t cap, int source, int tag, tern_comm_t comm, tern_request_t *req)
{
    CORE_CS_SCOPE();
    return api_hand_out(api_irecv(buf, cap, source, tag, comm, req), req);
}

int tern_recv(void *buf, size_t cap, int source, int tag, tern_comm_t comm, tern_status_t *status)
{
    CORE_CS_SCOPE();
    tern_request_t r;
    int rc = api_irecv(buf, cap, source, tag, comm, &r);
    if (rc) return rc;
    rc = core_wait(r);
    if (rc) return rc;
    return api_finish(&r, status);
}

int tern_wait(tern_request_t *req, tern_status_t *status)
{
    CORE_CS_SCOPE();
    int rc = api_state();
    if (rc) return rc;
    if (req == NULL) return TERN_ERR_INVAL;
    if (*req == TERN_REQUEST_NULL) {
        api_status_empty(status);
        return 0;
    }
    if (!api_req_valid(*req)) return TERN_ERR_REQUEST;
    rc = core_wait(core_req_of(*req));
    if (rc) return rc;
    return api_finish(req, status);
}

int tern_test(tern_request_t *req, int *flag, tern_status_t *status)
{
    CORE_CS_SCOPE();
    int rc = api_state();
    if (rc) return rc;
    if (req == NULL || flag == NULL) return TERN_ERR_INVAL;
    if (*req == TERN_REQUEST_NULL) {
        *flag = 1;
        api_status_empty(status);
        return 0;
    }
    if (!api_req_valid(*req)) return TERN_ERR_REQUEST;
    if (core_req_of(*req)->state != CORE_RS_DONE) core_progress();
    if (core_req_of(*req)->state != CORE_RS_DONE) {
        rc = core_alive();
        if (rc) return rc;
        *flag = 0;
        return 0;
    }
    *flag = 1;
    return api_finish(req, status);
}

static int api_check_reqs(size_t n, tern_request_t reqs[])
{
    int rc = api_state();
    if (rc) return rc;
    if (n > 0 && reqs == NULL) return TERN_ERR_INVAL;
    for (size_t i = 0; i < n; i++)
        if (reqs[i] && !api_req_valid(reqs[i])) return TERN_ERR_REQUEST;
    return 0;
}

int tern_waitall(size_t n, tern_request_t reqs[], tern_status_t statuses[])
{
    CORE_CS_SCOPE();
    int rc = api_check_reqs(n, reqs);
    if (rc) return rc;
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        tern_status_t *st = statuses ? &statuses[i] : NULL;
        if (reqs[i] == TERN_REQUEST_NULL) {
            api_status_empty(st);
            continue;
        }
        rc = core_wait(core_req_of(reqs[i]));
        if (rc) return rc;
        int err = api_finish(&reqs[i], st);
        if (err && !first) first = err;
    }
    return first;
}

int tern_waitany(size_t n, tern_request_t reqs[], size_t *index, tern_status_t *status)
{
    CORE_CS_SCOPE();
    int rc = api_check_reqs(n, reqs);
    if (rc) return rc;
    if (index == NULL) return TERN_ERR_INVAL;
    size_t live = 0;
    for (size_t i = 0; i < n; i++)
        live += reqs[i] != TERN_REQUEST_NULL;
    if (live == 0) {
        *index = SIZE_MAX;
        api_status_empty(status);
        return 0;
    }
    size_t k = SIZE_MAX;
    core_req_t *few[16], **rs = n <= 16 ? few : malloc(n * sizeof *rs);
    if (rs == NULL) return TERN_ERR_NOMEM;
    for (size_t i = 0; i < n; i++)
        rs[i] = reqs[i] ? core_req_of(reqs[i]) : NULL;
    rc = core_wait_any(rs, n, &k);
    if (rs != few) free(rs);
    if (rc) return rc;
    *index = k;
    return api_finish(&reqs[k], status);
}

int tern_testall(size_t n, tern_request_t reqs[], int *flag, tern_status_t statuses[])
{
    CORE_CS_SCOPE();
    int rc = api_check_reqs(n, reqs);
    if (rc) return rc;
    if (flag == NULL) return TERN_ERR_INVAL;
    core_progress();
    for (size_t i = 0; i < n; i++)
        if (reqs[i] && core_req_of(reqs[i])->state != CORE_RS_DONE) {
            rc = core_alive();
            if (rc) return rc;
            *flag = 0;
            return 0;
        }
    *flag = 1;
    int first = 0;
    for (size_t i = 0; i < n; i++) {
        tern_status_t *st = statuses ? &statuses[i] : NULL;
        if (reqs[i] == TERN_REQUEST_NULL) {
            api_status_empty(st);
            continue;
        }
        int err = api_finish(&reqs[i], st);
        if (err && !first) first = err;
    }
    return first;
}

int tern_iprobe(int source, int tag, tern_comm_t comm, int *flag, tern_status_t *status)
{
    CORE_CS_SCOPE();
    int rc = api_check_recv(NULL, 0, source, tag, comm);
    if (rc) return rc;
    if (flag == NULL) return TERN_ERR_INVAL;
    core_progress();
    int src = 0, mtag = 0;
    size_t len = 0;
    rc = core_iprobe(api_src_world(comm, source), tag, comm->ctx, flag, &src, &mtag, &len);
    if (rc) return rc;
    if (*flag && status) {
        status->source = core_comm_rank_of(comm, src);
        status->tag = mtag;
        status->bytes = len;
        status->error = TERN_OK;
    }
    return 0;
}

struct api_probe {
    int src;
    int tag;
    uint16_t ctx;
};

static int api_probe_found(const void *arg)
{
    const struct api_probe *p = arg;
    struct core_match *m = core.match[p->ctx];
    return m && core_match_find_unexp(m, p->src, p->tag, 0) != NULL;
}

int tern_probe(int source, int tag, tern_comm_t comm, tern_status_t *status)
{
    CORE_CS_SCOPE();
    int rc = api_check_recv(NULL, 0, source, tag, comm);
    if (rc) return rc;
    struct api_probe p = {api_src_world(comm, source), tag, comm->ctx};
    rc = core_block(api_probe_found, &p);
    if (rc) return rc;
    int flag;
    return tern_iprobe(source, tag, comm, &flag, status);
}

int tern_sendrecv(const void *sbuf, size_t slen, int dest, int stag, void *rbuf, size_t rcap,
                  int source, int rtag, tern_comm_t comm, tern_status_t *status)
{
    CORE_CS_SCOPE();
    int rc = api_check_send(sbuf, slen, dest, stag, comm);
    if (rc) return rc;
    rc = api_check_recv(rbuf, rcap, source, rtag, comm);
    if (rc) return rc;
    tern_request_t rr, sr;
    rc = core_irecv(rbuf, rcap, api_src_world(comm, source), rtag, comm->ctx, comm, &rr);
    if (rc) return rc;
    rc = core_isend(sbuf, slen, core_comm_world(comm, dest), stag, comm->ctx, 0, &sr);
    if (rc) {
        /* Nothing was sent: withdraw the receive so no message is consumed. */
        if (rr->state == CORE_RS_POSTED) {
            core_match_unpost(core_match_get(comm->ctx), rr);
            core_req_free(rr);
        }
        return rc;
    }
    rc = core_wait(sr);
    if (rc == 0) rc = core_wait(rr);
    if (rc) return rc;
    int serr = api_finish(&sr, NULL);
    int rerr = api_finish(&rr, status);
    return rerr ? rerr : serr;
}

/* ---- communicators -------------------------------------------------------------- */

/* The checks every communicator query shares: state, a live communicator, an output. */
static int api_check_comm_out(tern_comm_t comm, const void *out)
{
    int rc = api_state();
    if (rc) return rc;
    if (api_comm(comm)) return TERN_ERR_COMM;
    return out == NULL ? TERN_ERR_INVAL : 0;
}

int tern_comm_rank(tern_comm_t comm, int *rank)
{
    CORE_CS_SCOPE();
    int rc = api_check_comm_out(comm, rank);
    if (rc == 0) *rank = comm->rank;
    return rc;
}

int tern_comm_size(tern_comm_t comm, int *size)
{
    CORE_CS_SCOPE();
    int rc = api_check_comm_out(comm, size);
    if (rc == 0) *size = comm->size;
    return rc;
}

int tern_comm_world_rank(tern_comm_t comm, int rank, int *world_rank)
{
    CORE_CS_SCOPE();
    int rc = api_check_comm_out(comm, world_rank);
    if (rc) return rc;
    if (rank < 0 || rank >= comm->size) return TERN_ERR_RANK;
    *world_rank = core_comm_world(comm, rank);
    return 0;
}

int tern_comm_dup(tern_comm_t comm, tern_comm_t *newcomm)
{
    CORE_CS_SCOPE();
    int rc = api_check_comm_out(comm, newcomm);
    return rc ? rc : core_comm_dup(comm, newcomm);
}

int tern_comm_split(tern_comm_t comm, int color, int key, tern_comm_t *newcomm)
{
    CORE_CS_SCOPE();
    int rc = api_check_comm_out(comm, newcomm);
    if (rc) return rc;
    if (color < 0 && color != TERN_UNDEFINED) return TERN_ERR_INVAL;
    return core_comm_split(comm, color, key, newcomm);
}

int tern_comm_free(tern_comm_t *comm)
{
    CORE_CS_SCOPE();
    int rc = api_state();
    if (rc) return rc;
    if (comm == NULL) return TERN_ERR_INVAL;
    if (api_comm(*comm)) return TERN_ERR_COMM;
    if (*comm == TERN_COMM_WORLD || *comm == TERN_COMM_SELF) return TERN_ERR_COMM;
    rc = core_comm_free(*comm);
    if (rc == 0) *comm = TERN_COMM_NULL;
    return rc;
}

/* tern_barrier and the other collectives are in src/coll/coll_api.c. */

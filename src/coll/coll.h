/*
 * coll.h - collective operations built from core point-to-point.
 *
 * Every collective is written once, as a builder that appends steps to a schedule:
 * sends, receives, "wait for the round", local reductions and copies. The same schedule
 * runs to completion for a blocking call (coll_sched_run) or is driven by the progress
 * engine for a non-blocking one (coll_sched_start); builders compose, so an algorithm
 * made of two phases (scatter + allgather) is two builder calls on one schedule.
 *
 * Nothing here depends on the native API layer: a later MPI layer calls the builders
 * with its own argument checks. Calls assume valid arguments (checked at the door).
 * Ranks in steps are ranks of the schedule's communicator; messages travel on the
 * collective context (comm->ctx + 1) with one tag per collective call, so a
 * non-blocking collective and later ones on the same communicator never cross.
 */
#ifndef TERN_COLL_H
#define TERN_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "core/core.h"

/* ---- datatypes and reduction operations ---------------------------------- */

/* A reduction function in MPI order: inout[i] = in[i] op inout[i]. */
typedef void (*coll_op_fn)(const void *in, void *inout, size_t count, tern_datatype_t dt);

struct coll_op {
    coll_op_fn fn;
    int commute; /* 0: combine strictly in rank order */
    tern_datatype_t dt;
    size_t esize; /* bytes per element of dt */
};

/* Bytes per element, or 0 for an unknown datatype. */
size_t coll_dt_size(tern_datatype_t dt);
/* Resolve (op, dt): TERN_ERR_INVAL if op is unknown or not defined on dt. */
int coll_op_resolve(tern_op_t op, tern_datatype_t dt, struct coll_op *out);
int coll_op_create(coll_op_fn fn, int commute, tern_op_t *out);
int coll_op_free(tern_op_t op);

/* ---- algorithm selection --------------------------------------------------- */

enum coll_kind {
    COLL_BARRIER,
    COLL_BCAST,
    COLL_REDUCE,
    COLL_ALLREDUCE,
    COLL_GATHER,
    COLL_SCATTER,
    COLL_ALLGATHER,
    COLL_ALLTOALL,
    COLL_REDUCE_SCATTER,
    COLL_SCAN,
    COLL_NKINDS
};

enum coll_alg {
    COLL_ALG_AUTO = 0,
    COLL_ALG_DISSEMINATION,
    COLL_ALG_BINOMIAL,
    COLL_ALG_SCATTER_RING,
    COLL_ALG_SCATTER_RD,
    COLL_ALG_LINEAR,
    COLL_ALG_RD, /* recursive doubling */
    COLL_ALG_RABENSEIFNER,
    COLL_ALG_RING,
    COLL_ALG_BRUCK,
    COLL_ALG_PAIRWISE,
    COLL_ALG_RH,   /* recursive halving */
    COLL_ALG_HIER, /* within nodes, then among node leaders (coll_hier.c) */
    COLL_NALGS
};

/*
 * The algorithm for a collective of `bytes` (the size that drives the choice, see the
 * table in coll_select.c) on p processes: the one forced by TERN_COLL_<KIND>, else the
 * table's. TERN_ERR_TUNABLE if the variable names no algorithm of that collective.
 */
int coll_select(enum coll_kind kind, size_t bytes, int p, enum coll_alg *alg);
/* The algorithm's name as TERN_COLL_<KIND> and the tuning file spell it ("?" if none). */
const char *coll_alg_name(enum coll_alg alg);
/* TERN_ERR_TUNABLE when the tuning file (TERN_TUNING) could not be used, else 0: then
 * every collective fails, whichever path it would take. */
int coll_config_error(void);
/* Did TERN_COLL_<KIND> force an algorithm? (then the shared-memory path stays out;
 * forcing "hierarchical" does not count: its node-local parts use the region) */
int coll_forced(enum coll_kind kind);
/* coll_select for a communicator that spans nodes with several members on a node
 * (multinode 1): the table's rules for such communicators come first. coll_select is
 * this with multinode 0, and never answers COLL_ALG_HIER. */
int coll_select_topo(enum coll_kind kind, size_t bytes, int p, int multinode, enum coll_alg *alg);

/* ---- schedules ------------------------------------------------------------- */

enum coll_step_kind {
    COLL_S_SEND = 1,
    COLL_S_RECV,
    COLL_S_WAIT,
    COLL_S_REDUCE,
    COLL_S_COPY,
    COLL_S_SHM /* a whole collective through the communicator's shared region */
};

struct coll_step {
    uint8_t kind;
    int peer;        /* SEND/RECV: rank in the communicator */
    void *buf;       /* SEND: data; RECV: destination; REDUCE: inout; COPY: destination */
    const void *src; /* REDUCE: in; COPY: source */
    size_t n;        /* bytes (SEND/RECV/COPY/SHM) or elements (REDUCE) */
    uint8_t sub;     /* SHM: which collective */
    uint8_t phase;   /* SHM: how far it got */
    size_t count;    /* SHM: elements to reduce */
    uint64_t seq;    /* SHM: the call's number on the communicator */
};

#define COLL_INLINE_STEPS 48
#define COLL_INLINE_REQS  16
#define COLL_MAX_TMP      8

struct coll_sched {
    const char *name; /* the API call, for the hang report */
    struct tern_comm *comm;
    /* A part of a hierarchical collective (coll_hier.c) runs on a node or leaders'
     * communicator: the whole one, whose failures end this schedule too. NULL else. */
    struct tern_comm *parent;
    int tag;
    uint16_t ctx;
    struct coll_op op;
    struct coll_step *steps;
    int nsteps, cap;
    int cur;          /* next step to run */
    core_req_t **out; /* requests of the round under way */
    int nout, outcap;
    int err;
    int heap; /* the schedule itself was malloc'ed (non-blocking) */
    int bulk; /* an all-to-all by messages: waited for as CORE_WAIT_BULK (core/wait.h) */
    void *tmp[COLL_MAX_TMP];      /* scratch buffers, back to the cache with the schedule */
    size_t tmpsize[COLL_MAX_TMP]; /* their capacities */
    int ntmp;
    core_req_t *req;         /* non-blocking: the request the caller waits on */
    struct coll_sched *next; /* active non-blocking schedules */
    struct coll_step inline_steps[COLL_INLINE_STEPS];
    core_req_t *inline_out[COLL_INLINE_REQS];
};

/* Prepare a schedule for one blocking collective call on comm (takes the next tag). */
void coll_sched_init(struct coll_sched *s, struct tern_comm *comm);
/* The same for a blocking (nonblocking 0) or non-blocking call: s->heap is set to
 * nonblocking (the caller malloc'ed s), and the tag is the next of that kind's numbers. */
void coll_sched_init_as(struct coll_sched *s, struct tern_comm *comm, int nonblocking);
/* Scratch memory owned by the schedule; NULL (and s->err set) when out of memory. */
void *coll_sched_tmp(struct coll_sched *s, size_t bytes);
/* Append steps. Sends and receives of 0 bytes are skipped (both sides skip alike);
 * coll_token sends/receives an empty message that is never skipped. */
void coll_send(struct coll_sched *s, const void *buf, size_t n, int peer);
void coll_recv(struct coll_sched *s, void *buf, size_t n, int peer);
void coll_token_send(struct coll_sched *s, int peer);
void coll_token_recv(struct coll_sched *s, int peer);
void coll_wait(struct coll_sched *s);
void coll_reduce_local(struct coll_sched *s, const void *in, void *inout, size_t count);
void coll_copy(struct coll_sched *s, void *dst, const void *src, size_t n);
/* recv (if src >= 0), send (if dst >= 0), then wait for both. */
void coll_sendrecv(struct coll_sched *s, const void *sbuf, size_t sn, int dst, void *rbuf,
                   size_t rn, int src);

/* Append a blank step of `kind` (NULL and s->err set when out of memory). */
struct coll_step *coll_sched_step(struct coll_sched *s, int kind);

/* Run a built schedule to completion and release it. `rc` is the builder's result. */
int coll_sched_run(struct coll_sched *s, int rc);
/* Start a heap schedule in the background; *req completes through tern_wait/tern_test. */
int coll_sched_start(struct coll_sched *s, int rc, core_req_t **req);

/* ---- the collectives (builders) ---------------------------------------------
 * Buffers may be TERN_IN_PLACE where the API allows it. Byte counts for data movement,
 * element counts (of s->op.dt, set by the caller with coll_op_resolve) for reductions.
 * Per-rank arrays (v variants) are multiplied by `unit` to get bytes.
 */
int coll_barrier(struct coll_sched *s);
int coll_bcast(struct coll_sched *s, void *buf, size_t bytes, int root);
int coll_reduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count, int root);
int coll_allreduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count);
int coll_gather(struct coll_sched *s, const void *sbuf, void *rbuf, size_t bytes, int root);
int coll_gatherv(struct coll_sched *s, const void *sbuf, size_t sbytes, void *rbuf,
                 const size_t *counts, const size_t *displs, size_t unit, int root);
int coll_scatter(struct coll_sched *s, const void *sbuf, void *rbuf, size_t bytes, int root);
int coll_scatterv(struct coll_sched *s, const void *sbuf, const size_t *counts,
                  const size_t *displs, size_t unit, void *rbuf, size_t rbytes, int root);
int coll_allgather(struct coll_sched *s, const void *sbuf, void *rbuf, size_t bytes);
int coll_allgatherv(struct coll_sched *s, const void *sbuf, size_t sbytes, void *rbuf,
                    const size_t *counts, const size_t *displs, size_t unit);
int coll_alltoall(struct coll_sched *s, const void *sbuf, void *rbuf, size_t bytes);
int coll_alltoallv(struct coll_sched *s, const void *sbuf, const size_t *scounts,
                   const size_t *sdispls, void *rbuf, const size_t *rcounts, const size_t *rdispls,
                   size_t unit);
int coll_reduce_scatter(struct coll_sched *s, const void *sbuf, void *rbuf, const size_t *counts);
int coll_reduce_scatter_block(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count);
int coll_scan(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count);
int coll_exscan(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count);

/* ---- the shared-memory fast path (coll_shm.c) ---------------------------------
 * coll_shm_usable: may this blocking collective of `bytes` go through the
 * communicator's shared region? At the first call on a communicator all members set the
 * region up together (point-to-point traffic; *rc reports its errors). coll_shm_add
 * appends the one step that does the whole collective; coll_shm_step runs it (1 when
 * finished, 0 while it waits for other members). */
enum {
    COLL_SHM_BARRIER = 1,
    COLL_SHM_BCAST,
    COLL_SHM_REDUCE,
    COLL_SHM_ALLREDUCE,
    COLL_SHM_GATHER,
    COLL_SHM_SCATTER,
    COLL_SHM_ALLGATHER,
    COLL_SHM_ALLTOALL
};
int coll_shm_usable(struct coll_sched *s, enum coll_kind kind, size_t bytes, int *rc);
void coll_shm_add(struct coll_sched *s, int op, const void *src, void *buf, size_t count,
                  size_t bytes, int root);
int coll_shm_step(struct coll_sched *s, struct coll_step *st);

/* ---- hierarchical collectives (coll_hier.c) --------------------------------------
 * coll_hier_usable: does this blocking collective go through the node and leader
 * sub-communicators (the communicator spans nodes, TERN_COLL_HIER and the table say so,
 * reductions commute)? At the first such call all members make the sub-communicators
 * (*rc reports errors of that traffic). The coll_hier_* calls then run the whole
 * collective at once, blocking, and return its status; s gets no steps. */
int coll_hier_usable(struct coll_sched *s, enum coll_kind kind, size_t bytes, int *rc);
int coll_hier_barrier(struct coll_sched *s);
int coll_hier_bcast(struct coll_sched *s, void *buf, size_t bytes, int root);
int coll_hier_reduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count, int root);
int coll_hier_allreduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count);

/* Small helpers shared by the builders. */
static inline int coll_pof2_floor(int p)
{
    int k = 1;
    while (k * 2 <= p)
        k *= 2;
    return k;
}

static inline int coll_lowbit(int v)
{
    return v & -v;
}

#endif

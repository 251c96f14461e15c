/*
 * coll_sched.c - the schedule engine every collective runs on.
 *
 * A schedule is a list of steps executed in order. Sends and receives are posted as
 * they are reached; a WAIT step holds the schedule until every request posted since the
 * previous WAIT has completed; local reductions and copies run when reached. Builders
 * put receives before sends within a round so data lands in place rather than in the
 * unexpected queue.
 *
 * A blocking collective advances its schedule from the done() test of core_block, so
 * it reacts as soon as a frame arrives. A non-blocking one sits on a list that a
 * progress hook advances on every core_progress(); its core request (kind
 * CORE_REQ_COLL) completes when the last step ran.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

/* Collective tags have bit 30 set so they never meet the few fixed internal tags the
 * communicator code uses on the same context. Blocking and non-blocking collectives are
 * numbered apart (bit 29 marks the latter), so each kind matches in its own order: MPI asks
 * for one order of all collectives on a communicator, but programs that start a
 * non-blocking one on some ranks before a blocking one and after it on others (mpi4py's
 * ULFM test does with MPI_Iallreduce and MPI_Barrier) work with MPICH and Open MPI, whose
 * blocking collectives use tags of their own, and so they do here (mpi.mixed_order). */
#define COLL_TAG_BASE 0x40000000
#define COLL_TAG_NB   0x20000000
#define COLL_TAG_MASK 0x1fffffff

static struct coll_sched *coll_active;   /* non-blocking schedules under way */
static struct coll_sched *coll_blocking; /* blocking ones (one per thread in one) */
static int coll_hook_added;
static int coll_failhook_added;

void coll_sched_init(struct coll_sched *s, struct tern_comm *comm)
{
    coll_sched_init_as(s, comm, 0);
}

void coll_sched_init_as(struct coll_sched *s, struct tern_comm *comm, int nonblocking)
{
    s->name = "collective";
    s->comm = comm;
    s->parent = NULL;
    s->ctx = (uint16_t)(comm->ctx + 1);
    s->tag = nonblocking ? COLL_TAG_BASE | COLL_TAG_NB | (int)(comm->coll_nbseq++ & COLL_TAG_MASK)
                         : COLL_TAG_BASE | (int)(comm->coll_seq++ & COLL_TAG_MASK);
    memset(&s->op, 0, sizeof s->op);
    s->steps = s->inline_steps;
    s->nsteps = 0;
    s->cap = COLL_INLINE_STEPS;
    s->cur = 0;
    s->out = s->inline_out;
    s->nout = 0;
    s->outcap = COLL_INLINE_REQS;
    s->ntmp = 0;
    s->req = NULL;
    s->next = NULL;
    s->heap = nonblocking; /* a non-blocking call's schedule is malloc'ed */
    s->bulk = 0;
    s->err = coll_config_error(); /* a bad tuning file fails every collective alike */
}

/*
 * Scratch cache. Large collectives need message-sized scratch space on every call; a
 * fresh malloc of a megabyte is a fresh mmap whose every page faults on first touch,
 * which costs more than the collective itself (scan of 1 MiB: 1.3 ms instead of 0.3).
 * Freed scratch buffers are kept here, a few and up to COLL_CACHE_BYTES in all, and
 * handed out again best-fit.
 */
#define COLL_CACHE_SLOTS 8
#define COLL_CACHE_BYTES ((size_t)64 << 20)
static struct {
    void *p;
    size_t size;
} coll_cache[COLL_CACHE_SLOTS];
static size_t coll_cache_bytes;

static void *coll_cache_get(size_t bytes, size_t *got)
{
    int best = -1;
    for (int i = 0; i < COLL_CACHE_SLOTS; i++)
        if (coll_cache[i].p && coll_cache[i].size >= bytes &&
            (best < 0 || coll_cache[i].size < coll_cache[best].size))
            best = i;
    if (best >= 0) {
        void *p = coll_cache[best].p;
        *got = coll_cache[best].size;
        coll_cache_bytes -= *got;
        coll_cache[best].p = NULL;
        return p;
    }
    *got = bytes;
    return malloc(bytes);
}

static void coll_cache_release(void);

static void coll_cache_put(void *p, size_t size)
{
    int slot = -1;
    if (core_atfini(coll_cache_release) != 0) slot = COLL_CACHE_SLOTS; /* cannot keep it */
    for (int i = 0; i < COLL_CACHE_SLOTS && slot < 0; i++)
        if (coll_cache[i].p == NULL) slot = i;
    if (slot < 0 || slot == COLL_CACHE_SLOTS || coll_cache_bytes + size > COLL_CACHE_BYTES) {
        free(p);
        return;
    }
    coll_cache[slot].p = p;
    coll_cache[slot].size = size;
    coll_cache_bytes += size;
}

static void coll_cache_release(void)
{
    for (int i = 0; i < COLL_CACHE_SLOTS; i++) {
        free(coll_cache[i].p);
        coll_cache[i].p = NULL;
    }
    coll_cache_bytes = 0;
}

void *coll_sched_tmp(struct coll_sched *s, size_t bytes)
{
    if (s->ntmp == COLL_MAX_TMP) {
        s->err = TERN_ERR_INTERNAL;
        return NULL;
    }
    size_t got;
    void *p = coll_cache_get(bytes ? bytes : 1, &got);
    if (p == NULL) {
        s->err = TERN_ERR_NOMEM;
        return NULL;
    }
    s->tmp[s->ntmp] = p;
    s->tmpsize[s->ntmp++] = got;
    return p;
}

static struct coll_step *coll_step_add(struct coll_sched *s, int kind)
{
    if (s->err) return NULL;
    if (s->nsteps == s->cap) {
        int cap = s->cap * 2;
        struct coll_step *n;
        if (s->steps == s->inline_steps) {
            n = malloc((size_t)cap * sizeof *n);
            if (n) memcpy(n, s->steps, (size_t)s->nsteps * sizeof *n);
        } else {
            n = realloc(s->steps, (size_t)cap * sizeof *n);
        }
        if (n == NULL) {
            s->err = TERN_ERR_NOMEM;
            return NULL;
        }
        s->steps = n;
        s->cap = cap;
    }
    struct coll_step *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = (uint8_t)kind;
    return st;
}

struct coll_step *coll_sched_step(struct coll_sched *s, int kind)
{
    return coll_step_add(s, kind);
}

static void coll_xfer(struct coll_sched *s, int kind, const void *buf, size_t n, int peer)
{
    struct coll_step *st = coll_step_add(s, kind);
    if (st == NULL) return;
    st->buf = (void *)buf;
    st->n = n;
    st->peer = peer;
}

void coll_send(struct coll_sched *s, const void *buf, size_t n, int peer)
{
    if (n) coll_xfer(s, COLL_S_SEND, buf, n, peer);
}

void coll_recv(struct coll_sched *s, void *buf, size_t n, int peer)
{
    if (n) coll_xfer(s, COLL_S_RECV, buf, n, peer);
}

void coll_token_send(struct coll_sched *s, int peer)
{
    coll_xfer(s, COLL_S_SEND, NULL, 0, peer);
}

void coll_token_recv(struct coll_sched *s, int peer)
{
    coll_xfer(s, COLL_S_RECV, NULL, 0, peer);
}

void coll_wait(struct coll_sched *s)
{
    /* Two WAITs in a row, or one at the start, are no-ops: drop them. */
    if (s->nsteps == 0 || s->steps[s->nsteps - 1].kind == COLL_S_WAIT) return;
    coll_step_add(s, COLL_S_WAIT);
}

void coll_reduce_local(struct coll_sched *s, const void *in, void *inout, size_t count)
{
    if (count == 0) return;
    struct coll_step *st = coll_step_add(s, COLL_S_REDUCE);
    if (st == NULL) return;
    st->src = in;
    st->buf = inout;
    st->n = count;
}

void coll_copy(struct coll_sched *s, void *dst, const void *src, size_t n)
{
    if (n == 0 || dst == src) return;
    struct coll_step *st = coll_step_add(s, COLL_S_COPY);
    if (st == NULL) return;
    st->src = src;
    st->buf = dst;
    st->n = n;
}

void coll_sendrecv(struct coll_sched *s, const void *sbuf, size_t sn, int dst, void *rbuf,
                   size_t rn, int src)
{
    if (src >= 0) coll_recv(s, rbuf, rn, src);
    if (dst >= 0) coll_send(s, sbuf, sn, dst);
    coll_wait(s);
}

/* A process died: every schedule on a communicator that includes it fails, on every
 * survivor (each hears the news), so no survivor waits for a partner that gave up. */
static void coll_peer_failed(int rank)
{
    struct coll_sched *lists[2] = {coll_active, coll_blocking};
    for (int l = 0; l < 2; l++)
        for (struct coll_sched *s = lists[l]; s; s = s->next)
            if (!s->err && (core_comm_rank_of(s->comm, rank) >= 0 ||
                            (s->parent && core_comm_rank_of(s->parent, rank) >= 0)))
                s->err = TERN_ERR_PEER_FAILED;
}

/* Make room for the requests of the largest round, before running. */
static int coll_sched_prepare(struct coll_sched *s)
{
    if (!coll_failhook_added) {
        int rc = core_failure_hook_add(coll_peer_failed);
        if (rc) return rc;
        coll_failhook_added = 1;
    }
    /* A collective needs everyone: with a member known dead it cannot complete. */
    if (core_comm_has_failed(s->comm) || (s->parent && core_comm_has_failed(s->parent)))
        return TERN_ERR_PEER_FAILED;
    int most = 0, n = 0;
    for (int i = 0; i < s->nsteps; i++) {
        int k = s->steps[i].kind;
        if (k == COLL_S_SEND || k == COLL_S_RECV) {
            if (++n > most) most = n;
        } else if (k == COLL_S_WAIT) {
            n = 0;
        }
    }
    if (most > s->outcap) {
        s->out = malloc((size_t)most * sizeof *s->out);
        if (s->out == NULL) {
            s->out = s->inline_out;
            return TERN_ERR_NOMEM;
        }
        s->outcap = most;
    }
    return 0;
}

/* Collect the round's requests if all are done. 1: round over (or nothing posted). */
static int coll_round_done(struct coll_sched *s)
{
    for (int i = 0; i < s->nout; i++)
        if (s->out[i]->state != CORE_RS_DONE) return 0;
    for (int i = 0; i < s->nout; i++) {
        if (s->out[i]->err && !s->err) s->err = s->out[i]->err;
        core_req_free(s->out[i]);
    }
    s->nout = 0;
    return 1;
}

/*
 * Run as many steps as possible. Returns 1 when the schedule has finished (s->err says
 * how), 0 while it waits for messages. *moved is set when any step ran.
 */
static int coll_sched_advance(struct coll_sched *s, int *moved)
{
    /* Failed (a member or a member of the parent died, coll_peer_failed): requests to
     * live partners may never complete, as those partners gave up too; end now. */
    if (s->err) goto failed;
    if (!coll_round_done(s)) return 0;
    while (s->cur < s->nsteps && !s->err) {
        struct coll_step *st = &s->steps[s->cur];
        int rc = 0;
        core_req_t *r = NULL;
        switch (st->kind) {
        case COLL_S_SEND:
            rc = core_isend(st->buf, st->n, core_comm_world(s->comm, st->peer), s->tag, s->ctx, 0,
                            &r);
            break;
        case COLL_S_RECV:
            rc = core_irecv(st->buf, st->n, core_comm_world(s->comm, st->peer), s->tag, s->ctx,
                            s->comm, &r);
            break;
        case COLL_S_WAIT:
            if (!coll_round_done(s)) return 0;
            break;
        case COLL_S_REDUCE:
            s->op.fn(st->src, st->buf, st->n, s->op.dt);
            break;
        case COLL_S_COPY:
            memmove(st->buf, st->src, st->n);
            break;
        case COLL_S_SHM:
            if (!coll_shm_step(s, st)) return 0; /* stays the current step */
            break;
        default:
            rc = TERN_ERR_INTERNAL;
            break;
        }
        s->cur++;
        *moved = 1;
        if (rc) {
            s->err = rc;
            break;
        }
        if (r) s->out[s->nout++] = r;
    }
    if (s->err) {
    failed:
        /* Failed midway: requests still out are abandoned and end on their own. */
        for (int i = 0; i < s->nout; i++)
            core_req_abandon(s->out[i]);
        s->nout = 0;
        return 1;
    }
    return coll_round_done(s);
}

/* Release a schedule that will not run. */
static void coll_sched_release(struct coll_sched *s)
{
    for (int i = 0; i < s->ntmp; i++)
        coll_cache_put(s->tmp[i], s->tmpsize[i]);
    s->ntmp = 0;
    if (s->steps != s->inline_steps) free(s->steps);
    if (s->out != s->inline_out) free(s->out);
    s->steps = s->inline_steps;
    s->out = s->inline_out;
    if (s->heap) free(s);
}

static int coll_blocking_done(const void *arg)
{
    int moved = 0;
    return coll_sched_advance((struct coll_sched *)arg, &moved);
}

int coll_sched_run(struct coll_sched *s, int rc)
{
    if (rc == 0) rc = s->err;
    if (rc == 0) rc = coll_sched_prepare(s);
    if (rc == 0) {
        s->next = coll_blocking;
        coll_blocking = s;
        const char *saved_what = core.doing.what;
        const struct tern_comm *saved_comm = core.doing.comm;
        core.doing.what = s->name;
        core.doing.comm = s->comm;
        /* Consumed by the wait's start (under the critical section with threads). */
        core.wait_bulk = s->bulk;
        rc = core_block(coll_blocking_done, s);
        core.doing.what = saved_what;
        core.doing.comm = saved_comm;
        /* Unlink s: other threads may have pushed theirs meanwhile (not a stack). */
        struct coll_sched **pp = &coll_blocking;
        while (*pp != s)
            pp = &(*pp)->next;
        *pp = s->next;
        if (rc == 0) rc = s->err;
        if (rc && s->nout) { /* core_block gave up (launcher gone) */
            for (int i = 0; i < s->nout; i++)
                core_req_abandon(s->out[i]);
            s->nout = 0;
        }
    }
    coll_sched_release(s);
    return rc;
}

/* The progress hook: advance every non-blocking schedule, complete finished ones. */
static int coll_progress(void)
{
    int moved = 0;
    struct coll_sched **pp = &coll_active;
    while (*pp) {
        struct coll_sched *s = *pp;
        if (coll_sched_advance(s, &moved)) {
            *pp = s->next;
            core_req_t *r = s->req;
            int err = s->err;
            r->user = NULL;
            coll_sched_release(s);
            core_req_complete(r, err);
            moved = 1;
        } else {
            pp = &s->next;
        }
    }
    return moved;
}

int coll_sched_start(struct coll_sched *s, int rc, core_req_t **req)
{
    if (rc == 0) rc = s->err;
    if (rc == 0) rc = coll_sched_prepare(s);
    if (rc == 0 && !coll_hook_added) {
        rc = core_progress_hook_add(coll_progress);
        if (rc == 0) coll_hook_added = 1;
    }
    core_req_t *r = NULL;
    if (rc == 0) {
        r = core_req_alloc(CORE_REQ_COLL);
        if (r == NULL) rc = TERN_ERR_NOMEM;
    }
    if (rc) {
        coll_sched_release(s);
        return rc;
    }
    r->state = CORE_RS_POSTED;
    r->comm = s->comm;
    r->user = s;
    s->req = r;
    /* Start at once: the first round goes out now, not at the next progress call. */
    int moved = 0;
    if (coll_sched_advance(s, &moved)) {
        int err = s->err;
        r->user = NULL;
        coll_sched_release(s);
        core_req_complete(r, err);
    } else {
        s->next = coll_active;
        coll_active = s;
    }
    *req = r;
    return 0;
}

/*
 * tern_collsim - predict a collective's time at any process count by running tern's own
 * schedule builders for every rank and simulating the resulting messages under a
 * LogGP-style cost model.
 *
 * The builders (src/coll/coll_{bcast,reduce,gather}.c) and the algorithm table
 * (coll_select.c) are compiled into this program unchanged; only the schedule engine is
 * replaced: coll_send/coll_recv/coll_wait/... append steps to an array instead of posting
 * requests, and data buffers are reserved address space that is never touched. So the
 * prediction follows exactly the algorithm, rounds, peers and message sizes the library
 * would run for that (operation, bytes, p), including any TERN_COLL_<OP> forcing and
 * tuning file. The shared-memory region path is left out: the simulation is of the
 * point-to-point schedules (what runs between nodes, or everywhere over tcp/ofi).
 *
 * Cost model (all times in seconds), for one message of n bytes from s to d:
 *   the sender's CPU is busy o (from when it reaches the send step);
 *   its link injects one message at a time: the next may start g + n*G after this one;
 *   the head arrives L after injection starts; the receiver drains arrivals one at a
 *   time, n*G each, then spends o to complete it. One isolated message therefore costs
 *   o + L + n*G + o: Hockney's a + n/B with a = L + 2o and B = 1/G.
 *   A local reduction costs gamma per byte; a local copy c per byte.
 * Rounds end at a WAIT when every send of the round has left (eager: o + n*G after its
 * start) and every receive completed, as in coll_sched.c.
 *
 * Usage:
 *   tern_collsim --op allreduce --p 2,1024,65536 --bytes 8,64k [--alg ring]
 *                --L 1e-6 --o 2e-7 --g 3e-7 --G 1e-10 --gamma 2e-10 --c 1e-10
 *   --tuning FILE chooses algorithms through a tuning file as TERN_TUNING does
 *   tern_collsim --measure-local      prints gamma and c measured on this machine
 * One JSON object per (op, p, bytes) on stdout.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "coll/coll.h"
#include "util/tunables.h"

/* ---- the replaced schedule engine (the builders' side of coll_sched.c) --------- */

struct util_tunables util_tun; /* all NULL: every collective "auto" unless --alg */
struct core_state core;        /* not oversubscribed: the simulated ranks have their cores */

/* Scratch memory: builders write small tables into it (reduce_scatter_block's counts)
 * and hand the rest to steps that never run here, so it is reserved, not committed:
 * only the pages a builder writes cost memory. Released after each rank's build. */
#define SIM_MAX_TMP 64
static struct {
    void *p;
    size_t n;
} sim_tmp[SIM_MAX_TMP];
static int sim_ntmp;

void *coll_sched_tmp(struct coll_sched *s, size_t bytes)
{
    size_t n = (bytes + 4095) & ~(size_t)4095;
    if (n == 0) n = 4096;
    void *p = sim_ntmp < SIM_MAX_TMP ? mmap(NULL, n, PROT_READ | PROT_WRITE,
                                            MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
                                     : MAP_FAILED;
    if (p == MAP_FAILED) {
        s->err = TERN_ERR_NOMEM;
        return NULL;
    }
    sim_tmp[sim_ntmp].p = p;
    sim_tmp[sim_ntmp++].n = n;
    return p;
}

void coll_sched_init(struct coll_sched *s, struct tern_comm *comm)
{
    memset(s, 0, sizeof *s);
    s->name = "collective";
    s->comm = comm;
}

static void sim_tmp_release(void)
{
    while (sim_ntmp > 0) {
        sim_ntmp--;
        munmap(sim_tmp[sim_ntmp].p, sim_tmp[sim_ntmp].n);
    }
}

struct coll_step *coll_sched_step(struct coll_sched *s, int kind)
{
    if (s->nsteps == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        struct coll_step *n = realloc(s->steps, (size_t)cap * sizeof *n);
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

static void sim_xfer(struct coll_sched *s, int kind, size_t n, int peer, int token)
{
    if (n == 0 && !token) return; /* as coll_sched.c: empty data transfers are skipped */
    struct coll_step *st = coll_sched_step(s, kind);
    if (st) st->peer = peer, st->n = n;
}

void coll_send(struct coll_sched *s, const void *buf, size_t n, int peer)
{
    (void)buf;
    sim_xfer(s, COLL_S_SEND, n, peer, 0);
}
void coll_recv(struct coll_sched *s, void *buf, size_t n, int peer)
{
    (void)buf;
    sim_xfer(s, COLL_S_RECV, n, peer, 0);
}
void coll_token_send(struct coll_sched *s, int peer)
{
    sim_xfer(s, COLL_S_SEND, 0, peer, 1);
}
void coll_token_recv(struct coll_sched *s, int peer)
{
    sim_xfer(s, COLL_S_RECV, 0, peer, 1);
}
void coll_wait(struct coll_sched *s)
{
    coll_sched_step(s, COLL_S_WAIT);
}
void coll_reduce_local(struct coll_sched *s, const void *in, void *inout, size_t count)
{
    (void)in, (void)inout;
    struct coll_step *st = coll_sched_step(s, COLL_S_REDUCE);
    if (st) st->n = count;
}
void coll_copy(struct coll_sched *s, void *dst, const void *src, size_t n)
{
    if (dst == src || n == 0) return;
    struct coll_step *st = coll_sched_step(s, COLL_S_COPY);
    if (st) st->n = n;
}
void coll_sendrecv(struct coll_sched *s, const void *sbuf, size_t sn, int dst, void *rbuf,
                   size_t rn, int src)
{
    if (src >= 0) coll_recv(s, rbuf, rn, src);
    if (dst >= 0) coll_send(s, sbuf, sn, dst);
    coll_wait(s);
}
int coll_shm_usable(struct coll_sched *s, enum coll_kind kind, size_t bytes, int *rc)
{
    (void)s, (void)kind, (void)bytes;
    *rc = 0;
    return 0;
}
void coll_shm_add(struct coll_sched *s, int op, const void *src, void *buf, size_t count,
                  size_t bytes, int root)
{
    (void)op, (void)src, (void)buf, (void)count, (void)bytes, (void)root;
    s->err = TERN_ERR_INTERNAL; /* never reached: coll_shm_usable says no */
}

/* The hierarchical (node + leaders) path needs a communicator that spans nodes: the
 * simulation is of one flat communicator, so it never applies. */
int coll_hier_usable(struct coll_sched *s, enum coll_kind kind, size_t bytes, int *rc)
{
    (void)s, (void)kind, (void)bytes;
    *rc = 0;
    return 0;
}
int coll_hier_barrier(struct coll_sched *s)
{
    (void)s;
    return TERN_ERR_INTERNAL;
}
int coll_hier_bcast(struct coll_sched *s, void *buf, size_t bytes, int root)
{
    (void)s, (void)buf, (void)bytes, (void)root;
    return TERN_ERR_INTERNAL;
}
int coll_hier_reduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count, int root)
{
    (void)s, (void)sbuf, (void)rbuf, (void)count, (void)root;
    return TERN_ERR_INTERNAL;
}
int coll_hier_allreduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count)
{
    (void)s, (void)sbuf, (void)rbuf, (void)count;
    return TERN_ERR_INTERNAL;
}

/* ---- building every rank's schedule ---------------------------------------------- */

enum sim_op {
    OP_BARRIER,
    OP_BCAST,
    OP_REDUCE,
    OP_ALLREDUCE,
    OP_GATHER,
    OP_SCATTER,
    OP_ALLGATHER,
    OP_ALLTOALL,
    OP_REDUCE_SCATTER,
    OP_SCAN,
    OP_N
};
static const char *const sim_op_names[OP_N] = {"barrier",   "bcast",    "reduce",
                                               "allreduce", "gather",   "scatter",
                                               "allgather", "alltoall", "reduce_scatter_block",
                                               "scan"};
/* The tunable that forces each one's algorithm (util_tun fields, as coll_select.c). */
static const char **sim_op_var(enum sim_op op)
{
    switch (op) {
    case OP_BARRIER:
        return &util_tun.coll_barrier;
    case OP_BCAST:
        return &util_tun.coll_bcast;
    case OP_REDUCE:
        return &util_tun.coll_reduce;
    case OP_ALLREDUCE:
        return &util_tun.coll_allreduce;
    case OP_GATHER:
        return &util_tun.coll_gather;
    case OP_SCATTER:
        return &util_tun.coll_scatter;
    case OP_ALLGATHER:
        return &util_tun.coll_allgather;
    case OP_ALLTOALL:
        return &util_tun.coll_alltoall;
    case OP_REDUCE_SCATTER:
        return &util_tun.coll_reduce_scatter;
    case OP_SCAN:
        return &util_tun.coll_scan;
    default:
        return NULL;
    }
}

#define SIM_MAX_STEPS 20000000 /* about 1.3 GB of steps */
#define SIM_ESIZE     8        /* reductions simulate doubles */

/* Build rank r's schedule of `op` on `bytes` per process (as each API counts them). */
static int sim_build(struct coll_sched *s, struct tern_comm *c, enum sim_op op, size_t bytes)
{
    int p = c->size;
    coll_sched_init(s, c);
    s->op.esize = SIM_ESIZE;
    s->op.commute = 1;
    size_t count = bytes / SIM_ESIZE ? bytes / SIM_ESIZE : 1;
    char *a = coll_sched_tmp(s, bytes * (size_t)p), *b = coll_sched_tmp(s, bytes * (size_t)p);
    switch (op) {
    case OP_BARRIER:
        return coll_barrier(s);
    case OP_BCAST:
        return coll_bcast(s, a, bytes, 0);
    case OP_REDUCE:
        return coll_reduce(s, a, b, count, 0);
    case OP_ALLREDUCE:
        return coll_allreduce(s, a, b, count);
    case OP_GATHER:
        return coll_gather(s, a, b, bytes, 0);
    case OP_SCATTER:
        return coll_scatter(s, a, b, bytes, 0);
    case OP_ALLGATHER:
        return coll_allgather(s, a, b, bytes);
    case OP_ALLTOALL:
        return coll_alltoall(s, a, b, bytes);
    case OP_REDUCE_SCATTER:
        return coll_reduce_scatter_block(s, a, b, count);
    case OP_SCAN:
        return coll_scan(s, a, b, count);
    default:
        return TERN_ERR_INVAL;
    }
}

/* ---- the simulation -------------------------------------------------------------- */

struct sim_params {
    double L, o, g, G, gamma, c;
};

struct sim_msg {
    double ready; /* head arrived at the receiver */
    size_t n;
    int next; /* next message of the same (src, dst) pair, -1 */
};

/* FIFO of messages per (src, dst), found through an open-addressing table. */
struct sim_pair {
    uint64_t key; /* (src << 32 | dst) + 1; 0 = empty */
    int head, tail;
    int cursor;     /* during one WAIT check: the next unclaimed message */
    unsigned stamp; /* which check the cursor belongs to */
};

struct sim_rank {
    struct coll_sched s;
    int cur;          /* next step */
    int round_start;  /* first step of the round under way */
    double t;         /* CPU clock */
    double link;      /* when the link may inject the next message */
    double send_done; /* last local completion of a send in this round */
    int blocked_on;   /* src whose message is missing, or -1 */
    int done;
};

struct sim {
    int p;
    struct sim_params m;
    struct sim_rank *r;
    struct sim_msg *msgs;
    size_t nmsgs, capmsgs;
    struct sim_pair *pairs;
    size_t npairs_cap;
    int *ready; /* queue of ranks to run */
    size_t qhead, qtail, qcap;
    unsigned stamp;
    double total_bytes;
    size_t total_msgs;
};

static struct sim_pair *sim_pair(struct sim *S, int src, int dst, int create)
{
    uint64_t key = (((uint64_t)(uint32_t)src << 32) | (uint32_t)dst) + 1;
    size_t mask = S->npairs_cap - 1, h = (size_t)(key * 0x9e3779b97f4a7c15ull >> 17) & mask;
    for (;; h = (h + 1) & mask) {
        if (S->pairs[h].key == key) return &S->pairs[h];
        if (S->pairs[h].key == 0) {
            if (!create) return NULL;
            S->pairs[h].key = key;
            S->pairs[h].head = S->pairs[h].tail = -1;
            return &S->pairs[h];
        }
    }
}

static void sim_enqueue(struct sim *S, int rank)
{
    S->ready[S->qtail++ % S->qcap] = rank;
}

static int sim_post(struct sim *S, int src, int dst, size_t n, double ready)
{
    if (S->nmsgs == S->capmsgs) {
        size_t cap = S->capmsgs ? 2 * S->capmsgs : 1024;
        struct sim_msg *m = realloc(S->msgs, cap * sizeof *m);
        if (m == NULL) return TERN_ERR_NOMEM;
        S->msgs = m;
        S->capmsgs = cap;
    }
    int i = (int)S->nmsgs++;
    S->msgs[i] = (struct sim_msg){ready, n, -1};
    struct sim_pair *pr = sim_pair(S, src, dst, 1);
    if (pr->tail >= 0)
        S->msgs[pr->tail].next = i;
    else
        pr->head = i;
    pr->tail = i;
    S->total_bytes += (double)n;
    S->total_msgs++;
    if (S->r[dst].blocked_on == src) {
        S->r[dst].blocked_on = -1;
        sim_enqueue(S, dst);
    }
    return 0;
}

static int sim_cmp_ready(const void *a, const void *b)
{
    double x = ((const struct sim_msg *)a)->ready, y = ((const struct sim_msg *)b)->ready;
    return x < y ? -1 : x > y;
}

/* Run rank i until it finishes or waits for a message not sent yet. */
static int sim_run_rank(struct sim *S, int i)
{
    struct sim_rank *R = &S->r[i];
    const struct sim_params *m = &S->m;
    struct coll_step *st = R->s.steps;
    while (R->cur < R->s.nsteps) {
        struct coll_step *x = &st[R->cur];
        switch (x->kind) {
        case COLL_S_SEND: {
            double start = R->t > R->link ? R->t : R->link;
            R->t = start + m->o;
            double gap = m->g > (double)x->n * m->G ? m->g : (double)x->n * m->G;
            R->link = start + gap;
            double local = start + m->o + (double)x->n * m->G;
            if (local > R->send_done) R->send_done = local;
            int rc = sim_post(S, i, x->peer, x->n, start + m->o + m->L);
            if (rc) return rc;
            R->cur++;
            break;
        }
        case COLL_S_RECV:
            R->cur++;
            break; /* matched at the round's WAIT */
        case COLL_S_REDUCE:
            R->t += (double)x->n * SIM_ESIZE * m->gamma, R->cur++;
            break;
        case COLL_S_COPY:
            R->t += (double)x->n * m->c, R->cur++;
            break;
        case COLL_S_WAIT: {
            /* Every receive of the round must have its message. */
            struct sim_msg got[64], *all = got;
            int nrecv = 0;
            for (int k = R->round_start; k < R->cur; k++)
                if (st[k].kind == COLL_S_RECV) nrecv++;
            if (nrecv > 64 && (all = malloc((size_t)nrecv * sizeof *all)) == NULL)
                return TERN_ERR_NOMEM;
            /* Check first, consume after: a blocked rank retries the whole round. Each
             * pair's cursor walks its FIFO as this round's receives claim messages. */
            unsigned stamp = ++S->stamp;
            int missing = -1;
            for (int k = R->round_start; k < R->cur && missing < 0; k++) {
                if (st[k].kind != COLL_S_RECV) continue;
                struct sim_pair *pr = sim_pair(S, st[k].peer, i, 1);
                if (pr->stamp != stamp) pr->stamp = stamp, pr->cursor = pr->head;
                if (pr->cursor < 0)
                    missing = st[k].peer;
                else
                    pr->cursor = S->msgs[pr->cursor].next;
            }
            if (missing >= 0) {
                if (all != got) free(all);
                R->blocked_on = missing;
                return 0;
            }
            int nr = 0;
            for (int k = R->round_start; k < R->cur; k++) {
                if (st[k].kind != COLL_S_RECV) continue;
                struct sim_pair *pr = sim_pair(S, st[k].peer, i, 0);
                all[nr++] = S->msgs[pr->head];
                pr->head = S->msgs[pr->head].next;
                if (pr->head < 0) pr->tail = -1;
            }
            qsort(all, (size_t)nr, sizeof *all, sim_cmp_ready);
            double drain = 0; /* the receiver takes arrivals one at a time */
            for (int k = 0; k < nr; k++) {
                double s0 = all[k].ready > drain ? all[k].ready : drain;
                drain = s0 + (double)all[k].n * m->G + m->o;
            }
            if (all != got) free(all);
            double end = R->t;
            if (drain > end) end = drain;
            if (R->send_done > end) end = R->send_done;
            R->t = end;
            R->send_done = 0;
            R->cur++;
            R->round_start = R->cur;
            break;
        }
        default:
            return TERN_ERR_INTERNAL;
        }
    }
    R->done = 1;
    return 0;
}

struct sim_result {
    double tmax, tavg;
    size_t msgs, steps;
    double bytes;
    const char *alg;
};

static const char *sim_alg_name(enum sim_op op, size_t bytes, int p)
{
    static const enum coll_kind kinds[OP_N] = {
        COLL_BARRIER, COLL_BCAST,     COLL_REDUCE,   COLL_ALLREDUCE,      COLL_GATHER,
        COLL_SCATTER, COLL_ALLGATHER, COLL_ALLTOALL, COLL_REDUCE_SCATTER, COLL_SCAN};
    /* The size that drives the choice, as coll_select.c documents it. */
    size_t key = bytes;
    if (op == OP_GATHER || op == OP_SCATTER || op == OP_ALLGATHER || op == OP_REDUCE_SCATTER)
        key = bytes * (size_t)p;
    enum coll_alg alg;
    if (coll_select(kinds[op], key, p, &alg)) return "?";
    return coll_alg_name(alg);
}

static int sim_one(enum sim_op op, int p, size_t bytes, const struct sim_params *m,
                   struct sim_result *out)
{
    struct sim S;
    memset(&S, 0, sizeof S);
    S.p = p;
    S.m = *m;
    S.r = calloc((size_t)p, sizeof *S.r);
    struct tern_comm *comms = calloc((size_t)p, sizeof *comms);
    S.qcap = (size_t)p * 4 + 16;
    S.ready = malloc(S.qcap * sizeof *S.ready);
    if (!S.r || !comms || !S.ready) return TERN_ERR_NOMEM;
    size_t steps = 0;
    int rc = 0;
    for (int i = 0; i < p && !rc; i++) {
        comms[i].rank = i;
        comms[i].size = p;
        rc = sim_build(&S.r[i].s, &comms[i], op, bytes);
        sim_tmp_release();
        if (!rc) rc = S.r[i].s.err;
        S.r[i].blocked_on = -1;
        steps += (size_t)S.r[i].s.nsteps;
        if (steps > SIM_MAX_STEPS) {
            fprintf(stderr,
                    "tern_collsim: more than %d million steps (p = %d): this "
                    "algorithm's messages grow as p^2; simulate fewer ranks\n",
                    SIM_MAX_STEPS / 1000000, p);
            rc = TERN_ERR_NOSPACE;
        }
    }
    S.npairs_cap = 1024;
    while (S.npairs_cap < steps * 2 + 16)
        S.npairs_cap <<= 1;
    S.pairs = calloc(S.npairs_cap, sizeof *S.pairs);
    if (!S.pairs) rc = TERN_ERR_NOMEM;
    for (int i = 0; i < p && !rc; i++)
        sim_enqueue(&S, i);
    while (!rc && S.qhead != S.qtail) {
        int i = S.ready[S.qhead++ % S.qcap];
        if (!S.r[i].done && S.r[i].blocked_on < 0) rc = sim_run_rank(&S, i);
    }
    double tmax = 0, tsum = 0;
    for (int i = 0; i < p && !rc; i++) {
        if (!S.r[i].done) {
            fprintf(stderr, "tern_collsim: rank %d never finished (waits for %d)\n", i,
                    S.r[i].blocked_on);
            rc = TERN_ERR_INTERNAL;
        }
        if (S.r[i].t > tmax) tmax = S.r[i].t;
        tsum += S.r[i].t;
    }
    out->tmax = tmax;
    out->tavg = p ? tsum / p : 0;
    out->msgs = S.total_msgs;
    out->bytes = S.total_bytes;
    out->steps = steps;
    out->alg = sim_alg_name(op, bytes, p);
    for (int i = 0; i < p; i++)
        free(S.r[i].s.steps);
    if (rc == TERN_ERR_NOSPACE) rc = 0, out->tmax = -1; /* reported, not fatal */
    free(S.r);
    free(comms);
    free(S.ready);
    free(S.msgs);
    free(S.pairs);
    return rc;
}

/* ---- measuring gamma and c here ------------------------------------------------ */

static double sim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void sim_measure_local(void)
{
    size_t n = (size_t)1 << 20, cnt = n / sizeof(double);
    double *a = malloc(n), *b = malloc(n);
    if (!a || !b) return;
    for (size_t i = 0; i < cnt; i++)
        a[i] = (double)i, b[i] = 1.0;
    double best_r = 1e9, best_c = 1e9;
    for (int rep = 0; rep < 20; rep++) {
        double t0 = sim_now();
        for (size_t i = 0; i < cnt; i++)
            b[i] += a[i];
        double t1 = sim_now();
        memcpy(a, b, n);
        double t2 = sim_now();
        if (t1 - t0 < best_r) best_r = t1 - t0;
        if (t2 - t1 < best_c) best_c = t2 - t1;
    }
    volatile double sink = a[cnt / 2] + b[cnt / 3];
    (void)sink;
    printf("{\"gamma\": %.6g, \"c\": %.6g}\n", best_r / (double)n, best_c / (double)n);
    free(a);
    free(b);
}

/* ---- command line ------------------------------------------------------------------ */

static size_t sim_size(const char *s)
{
    char *end;
    double v = strtod(s, &end);
    if (*end == 'k' || *end == 'K') v *= 1024;
    if (*end == 'm' || *end == 'M') v *= 1024 * 1024;
    return (size_t)v;
}

static void sim_usage(void)
{
    fprintf(stderr,
            "usage: tern_collsim --op NAME[,NAME] --p N[,N...] --bytes S[,S...] "
            "[--alg NAME] [--tuning FILE] --L s --o s --g s --G s/B [--gamma s/B] [--c s/B]\n"
            "       tern_collsim --measure-local\nops:");
    for (int i = 0; i < OP_N; i++)
        fprintf(stderr, " %s", sim_op_names[i]);
    fprintf(stderr, "\n");
}

int main(int argc, char **argv)
{
    struct sim_params m = {1e-6, 2e-7, 2e-7, 1e-10, 2e-10, 1e-10};
    const char *ops = NULL, *ps = NULL, *sizes = "8", *alg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--measure-local") == 0) {
            sim_measure_local();
            return 0;
        }
        if (v == NULL) {
            sim_usage();
            return 2;
        }
        i++;
        if (strcmp(a, "--op") == 0)
            ops = v;
        else if (strcmp(a, "--p") == 0)
            ps = v;
        else if (strcmp(a, "--bytes") == 0)
            sizes = v;
        else if (strcmp(a, "--alg") == 0)
            alg = v;
        else if (strcmp(a, "--tuning") == 0)
            util_tun.tuning = v;
        else if (strcmp(a, "--L") == 0)
            m.L = atof(v);
        else if (strcmp(a, "--o") == 0)
            m.o = atof(v);
        else if (strcmp(a, "--g") == 0)
            m.g = atof(v);
        else if (strcmp(a, "--G") == 0)
            m.G = atof(v);
        else if (strcmp(a, "--gamma") == 0)
            m.gamma = atof(v);
        else if (strcmp(a, "--c") == 0)
            m.c = atof(v);
        else {
            sim_usage();
            return 2;
        }
    }
    if (!ops || !ps) {
        sim_usage();
        return 2;
    }
    char *opl = strdup(ops);
    for (char *so = NULL, *o = strtok_r(opl, ",", &so); o; o = strtok_r(NULL, ",", &so)) {
        int op = -1;
        for (int k = 0; k < OP_N; k++)
            if (strcmp(o, sim_op_names[k]) == 0) op = k;
        if (op < 0) {
            fprintf(stderr, "tern_collsim: unknown operation '%s'\n", o);
            sim_usage();
            return 2;
        }
        if (alg) *sim_op_var((enum sim_op)op) = alg;
        char *pl = strdup(ps);
        for (char *sp = NULL, *pt = strtok_r(pl, ",", &sp); pt; pt = strtok_r(NULL, ",", &sp)) {
            int p = atoi(pt);
            if (p < 1) {
                fprintf(stderr, "tern_collsim: bad process count '%s'\n", pt);
                return 2;
            }
            char *sl = strdup(sizes);
            for (char *ss = NULL, *st = strtok_r(sl, ",", &ss); st; st = strtok_r(NULL, ",", &ss)) {
                size_t n = sim_size(st);
                struct sim_result r;
                int rc = sim_one((enum sim_op)op, p, n, &m, &r);
                if (rc) {
                    fprintf(stderr, "tern_collsim: %s p=%d bytes=%zu: error %d\n", o, p, n, rc);
                    return 1;
                }
                if (r.tmax < 0) continue;
                printf("{\"op\": \"%s\", \"p\": %d, \"bytes\": %zu, \"alg\": \"%s\", "
                       "\"time\": %.6g, \"time_avg\": %.6g, \"messages\": %zu, "
                       "\"bytes_moved\": %.6g, \"steps\": %zu}\n",
                       o, p, n, r.alg, r.tmax, r.tavg, r.msgs, r.bytes, r.steps);
                fflush(stdout);
            }
            free(sl);
        }
        free(pl);
        if (alg) *sim_op_var((enum sim_op)op) = NULL;
    }
    free(opl);
    return 0;
}

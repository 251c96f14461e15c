/*
 * coll_hier.c - hierarchical barrier, bcast, reduce and allreduce for communicators that
 * span nodes: inside each node through shared memory (the node's sub-communicator, whose
 * small collectives take the shared region of coll_shm.c), between nodes among one
 * leader per node (the first member on each node), as MPICH's SMP-aware collectives and
 * Open MPI's coll/han do.
 *
 * Why: a flat schedule sends a message over the network in every round where partners
 * sit on different nodes; with c ranks per node, a flat recursive doubling crosses the
 * network in log(nodes) rounds with c messages each, all through the same NIC. Here only
 * the leaders talk between nodes, once per round, and the rest costs a few shared-memory
 * flags:
 *
 *   barrier    node barrier, leaders' barrier, node barrier
 *   bcast      root's node: bcast from the root; leaders: bcast from the root's leader;
 *              other nodes: bcast from their leader
 *   reduce     node reduce to the leader; leaders' reduce to the root's leader; that
 *              leader hands the result to the root if it is not the root
 *   allreduce  node reduce to the leader; leaders' allreduce; node bcast
 *
 * Reductions combine node by node, so a non-commutative operation takes the flat path
 * (its rank order would be lost when nodes interleave). The choice goes through the
 * selection table (coll_select.c, rules for communicators spanning nodes) and
 * TERN_COLL_HIER; only blocking calls use it, as the sub-collectives run one after the
 * other. The two sub-communicators are made at the first such call, by every member
 * (core_comm_split, collective), and freed with the communicator.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "util/log.h"
#include "util/tunables.h"

struct coll_hier {
    struct tern_comm *local;   /* the members on my node, in communicator order */
    struct tern_comm *leaders; /* the first member of every node; NULL: I am not one */
    int *lead;                 /* comm rank -> the rank in `leaders` of its node's leader */
    void (*next_free)(struct tern_comm *c); /* the hook that was there before ours */
};

static void coll_hier_release(struct tern_comm *c)
{
    struct coll_hier *h = c->coll_hier;
    void (*next)(struct tern_comm *) = h ? h->next_free : NULL;
    if (h) {
        if (h->leaders) core_comm_free(h->leaders);
        core_comm_free(h->local);
        free(h->lead);
        free(h);
    }
    c->coll_hier = NULL;
    c->coll_hier_state = 0;
    c->on_free = NULL;
    if (next) next(c);
}

/* Does c span nodes with more than one member on some node? Every member computes the
 * same answer from the launcher's layout. Fills lead[] when it does. */
static int coll_hier_spans(const struct tern_comm *c, int *lead)
{
    int *seen = malloc((size_t)core.size * sizeof(int));
    if (seen == NULL) return 0;
    for (int i = 0; i < core.size; i++)
        seen[i] = -1;
    int nodes = 0;
    for (int i = 0; i < c->size; i++) {
        int w = core_comm_world(c, i);
        int node = core.boot.node_of ? core.boot.node_of[w] : 0;
        if (node < 0 || node >= core.size) node = 0;
        if (seen[node] < 0) seen[node] = nodes++;
        lead[i] = seen[node];
    }
    free(seen);
    return nodes > 1 && nodes < c->size;
}

/* Make the sub-communicators (collective over c). 0, or the error of the traffic. */
static int coll_hier_build(struct tern_comm *c)
{
    struct coll_hier *h = calloc(1, sizeof *h);
    int *lead = malloc((size_t)c->size * sizeof(int));
    if (h == NULL || lead == NULL) {
        free(h);
        free(lead);
        return TERN_ERR_NOMEM;
    }
    (void)coll_hier_spans(c, lead);
    h->lead = lead;
    int me = c->rank;
    /* I lead my node if no lower rank is on it. */
    int leader = 1;
    for (int i = 0; i < me && leader; i++)
        if (lead[i] == lead[me]) leader = 0;
    int rc = core_comm_split(c, lead[me], me, &h->local);
    if (rc == 0) rc = core_comm_split(c, leader ? 0 : TERN_UNDEFINED, me, &h->leaders);
    if (rc) {
        if (h->local) core_comm_free(h->local);
        free(lead);
        free(h);
        return rc;
    }
    h->next_free = c->on_free;
    c->coll_hier = h;
    c->on_free = coll_hier_release;
    UTIL_DEBUG(1, "coll: hierarchical collectives on a communicator of %d: %d on my node, %s",
               c->size, h->local->size, h->leaders ? "leader" : "not a leader");
    return 0;
}

int coll_hier_usable(struct coll_sched *s, enum coll_kind kind, size_t bytes, int *rc)
{
    struct tern_comm *c = s->comm;
    *rc = 0;
    if (s->heap || c->coll_hier_state < 0 || !util_tun.coll_hier) return 0;
    /* With a member dead the flat path fails at once; building the parts would wait. */
    if (core_comm_has_failed(c)) return 0;
    if ((kind == COLL_REDUCE || kind == COLL_ALLREDUCE) && !s->op.commute) return 0;
    if (c->coll_hier_state == 0) {
        int *lead = malloc((size_t)c->size * sizeof(int));
        int spans = lead && coll_hier_spans(c, lead);
        free(lead);
        c->coll_hier_state = spans ? 1 : -1;
        if (!spans) return 0;
    }
    enum coll_alg alg;
    if (coll_select_topo(kind, bytes, c->size, 1, &alg) || alg != COLL_ALG_HIER) return 0;
    if (c->coll_hier == NULL) {
        *rc = coll_hier_build(c);
        if (*rc) {
            c->coll_hier_state = -1;
            return 0;
        }
    }
    return 1;
}

/* A blocking sub-collective of s on communicator c. */
static void coll_hier_sub(struct coll_sched *sub, const struct coll_sched *s, struct tern_comm *c)
{
    coll_sched_init(sub, c);
    sub->name = s->name;
    sub->op = s->op;
    sub->parent = s->comm; /* a death anywhere in s->comm ends this part too */
}

int coll_hier_barrier(struct coll_sched *s)
{
    struct coll_hier *h = s->comm->coll_hier;
    struct coll_sched sub;
    coll_hier_sub(&sub, s, h->local);
    int rc = coll_sched_run(&sub, coll_barrier(&sub));
    if (rc == 0 && h->leaders) {
        coll_hier_sub(&sub, s, h->leaders);
        rc = coll_sched_run(&sub, coll_barrier(&sub));
    }
    if (rc == 0) {
        coll_hier_sub(&sub, s, h->local);
        rc = coll_sched_run(&sub, coll_barrier(&sub));
    }
    return rc;
}

int coll_hier_bcast(struct coll_sched *s, void *buf, size_t bytes, int root)
{
    struct coll_hier *h = s->comm->coll_hier;
    struct tern_comm *c = s->comm;
    int same = h->lead[c->rank] == h->lead[root];
    struct coll_sched sub;
    int rc = 0;
    if (same) {
        coll_hier_sub(&sub, s, h->local);
        rc =
            coll_sched_run(&sub, coll_bcast(&sub, buf, bytes,
                                            core_comm_rank_of(h->local, core_comm_world(c, root))));
    }
    if (rc == 0 && h->leaders) {
        coll_hier_sub(&sub, s, h->leaders);
        rc = coll_sched_run(&sub, coll_bcast(&sub, buf, bytes, h->lead[root]));
    }
    if (rc == 0 && !same) {
        coll_hier_sub(&sub, s, h->local);
        rc = coll_sched_run(&sub, coll_bcast(&sub, buf, bytes, 0));
    }
    return rc;
}

int coll_hier_reduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count, int root)
{
    struct coll_hier *h = s->comm->coll_hier;
    struct tern_comm *c = s->comm;
    size_t n = count * s->op.esize;
    int me = c->rank, leader = h->local->rank == 0, same = h->lead[me] == h->lead[root];
    const void *in = sbuf == TERN_IN_PLACE ? rbuf : sbuf;
    void *acc = NULL; /* the node's partial result, at its leader */
    if (leader) {
        acc = me == root ? rbuf : coll_sched_tmp(s, n);
        if (acc == NULL) return s->err;
    }
    struct coll_sched sub;
    coll_hier_sub(&sub, s, h->local);
    int rc = coll_sched_run(
        &sub, coll_reduce(&sub, leader && in == acc ? TERN_IN_PLACE : in, acc, count, 0));
    if (rc == 0 && h->leaders) {
        int lroot = h->lead[root];
        coll_hier_sub(&sub, s, h->leaders);
        rc = coll_sched_run(&sub, h->leaders->rank == lroot
                                      ? coll_reduce(&sub, TERN_IN_PLACE, acc, count, lroot)
                                      : coll_reduce(&sub, acc, NULL, count, lroot));
    }
    int rlocal = core_comm_rank_of(h->local, core_comm_world(c, root));
    if (rc == 0 && same && rlocal != 0) {
        /* The root is not its node's leader: the leader hands it the result. Every member
         * on the node starts this schedule, so their schedule tags stay in step. */
        coll_hier_sub(&sub, s, h->local);
        if (leader)
            coll_send(&sub, acc, n, rlocal);
        else if (me == root)
            coll_recv(&sub, rbuf, n, 0);
        coll_wait(&sub);
        rc = coll_sched_run(&sub, sub.err);
    }
    return rc;
}

int coll_hier_allreduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count)
{
    struct coll_hier *h = s->comm->coll_hier;
    size_t n = count * s->op.esize;
    int leader = h->local->rank == 0;
    const void *in = sbuf == TERN_IN_PLACE ? rbuf : sbuf;
    struct coll_sched sub;
    coll_hier_sub(&sub, s, h->local);
    int rc = coll_sched_run(
        &sub, coll_reduce(&sub, leader && in == rbuf ? TERN_IN_PLACE : in, rbuf, count, 0));
    if (rc == 0 && h->leaders) {
        coll_hier_sub(&sub, s, h->leaders);
        rc = coll_sched_run(&sub, coll_allreduce(&sub, TERN_IN_PLACE, rbuf, count));
    }
    if (rc == 0) {
        coll_hier_sub(&sub, s, h->local);
        rc = coll_sched_run(&sub, coll_bcast(&sub, rbuf, n, 0));
    }
    return rc;
}

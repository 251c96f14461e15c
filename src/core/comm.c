/*
 * comm.c - communicators: the built-in world and self, dup, split and free, and the
 * few internal collectives they need (context-id agreement, allgather). They stay here,
 * below src/coll, so the core never calls up into a layer built on it.
 *
 * Context ids: every communicator owns a pair (ctx for point-to-point, ctx + 1 for
 * collectives). A new communicator's pair is the lowest one free on every member of
 * the parent, found by an AND-reduction of the members' free masks; all groups made by
 * one split share it, which is safe because they are disjoint.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

struct tern_comm tern__comm_world;
struct tern_comm tern__comm_self;

/* Internal tags on the collective context. */
enum { CORE_TAG_REDUCE = 1, CORE_TAG_BCAST, CORE_TAG_ALLGATHER };

#define CORE_MASK_WORDS (CORE_CTX_MAX / 2 / 64)

/* Every communicator made here, live or freed. A freed one stays (poisoned) until
 * finalize so a stale handle is reported as TERN_ERR_COMM instead of touching freed
 * memory; finalize releases them all, including those the program never freed. */
static struct tern_comm *core_comm_all;

static void core_ctx_mark(uint16_t ctx, int used)
{
    uint16_t pair = ctx / 2;
    if (used)
        core.ctx_used[pair / 64] |= 1ull << (pair % 64);
    else
        core.ctx_used[pair / 64] &= ~(1ull << (pair % 64));
}

int core_comm_init_builtin(void)
{
    memset(&tern__comm_world, 0, sizeof tern__comm_world);
    tern__comm_world.magic = CORE_COMM_MAGIC;
    tern__comm_world.ctx = 0;
    tern__comm_world.rank = core.rank;
    tern__comm_world.size = core.size;
    core_ctx_mark(0, 1);

    memset(&tern__comm_self, 0, sizeof tern__comm_self);
    tern__comm_self.magic = CORE_COMM_MAGIC;
    tern__comm_self.ctx = 2;
    tern__comm_self.rank = 0;
    tern__comm_self.size = 1;
    core_ctx_mark(2, 1);
    core_ctx_mark(CORE_CTX_PORTS, 1); /* taken by no agreement (mpi_port.c makes it) */
    /* Self maps rank 0 to me; world ranks map back only for me. */
    tern__comm_self.world_of = malloc(sizeof(int));
    tern__comm_self.comm_of = malloc((size_t)core.size * sizeof(int));
    if (!tern__comm_self.world_of || !tern__comm_self.comm_of) return TERN_ERR_NOMEM;
    tern__comm_self.world_of[0] = core.rank;
    for (int r = 0; r < core.size; r++)
        tern__comm_self.comm_of[r] = r == core.rank ? 0 : -1;
    return 0;
}

/* The requests of one built-in collective step, and the communicator it runs on. */
struct core_coll_step {
    core_req_t *sr, *rr;
    const struct tern_comm *comm;
};

/* Done when both requests are, or when a member of the communicator died: the others
 * give up this step then, so a request to a live member may never complete. */
static int core_coll_step_done(const void *arg)
{
    const struct core_coll_step *st = arg;
    if ((!st->sr || st->sr->state == CORE_RS_DONE) && (!st->rr || st->rr->state == CORE_RS_DONE))
        return 1;
    return core_comm_has_failed(st->comm);
}

/* One request of a finished step: its error, and it is freed (abandoned if not done). */
static int core_coll_step_end(core_req_t *r)
{
    if (r == NULL) return 0;
    if (r->state != CORE_RS_DONE) {
        core_req_abandon(r);
        return TERN_ERR_PEER_FAILED;
    }
    int rc = r->err;
    core_req_free(r);
    return rc;
}

/* One step of the built-in collectives: send to dest and/or receive from src on comm.
 * A member's death ends it with TERN_ERR_PEER_FAILED, on every survivor. */
static int core_sendrecv_coll(struct tern_comm *comm, const void *sbuf, size_t slen, int dest,
                              void *rbuf, size_t rlen, int src, int tag)
{
    struct core_coll_step st = {NULL, NULL, comm};
    int rc = 0;
    uint16_t ctx = (uint16_t)(comm->ctx + 1);
    tag += comm->agree_tag;
    /* A member known dead: the others may have given up this step already. */
    if (core_comm_has_failed(comm)) return TERN_ERR_PEER_FAILED;
    if (src >= 0) rc = core_irecv(rbuf, rlen, core_comm_world(comm, src), tag, ctx, comm, &st.rr);
    if (rc == 0 && dest >= 0)
        rc = core_isend(sbuf, slen, core_comm_world(comm, dest), tag, ctx, 0, &st.sr);
    int rc2 = 0;
    if (rc == 0) {
        /* The hang report names the receive (else the send), as core_wait would. */
        const char *saved_what = core.doing.what;
        const core_req_t *saved_req = core.doing.req;
        if (saved_what == NULL) core.doing.what = st.rr ? "recv" : "send";
        core.doing.req = st.rr ? st.rr : st.sr;
        rc2 = core_block(core_coll_step_done, &st);
        core.doing.what = saved_what;
        core.doing.req = saved_req;
    }
    int rc3 = core_coll_step_end(st.sr);
    int rc4 = core_coll_step_end(st.rr);
    if (rc) return rc;
    if (rc2) return rc2;
    return rc3 ? rc3 : rc4;
}

/* In-place AND-allreduce of n words over comm: binomial reduce to 0, then bcast. */
static int core_allreduce_band(struct tern_comm *comm, uint64_t *words, size_t n)
{
    int p = comm->size, r = comm->rank, rc;
    uint64_t *tmp = malloc(n * sizeof *tmp);
    if (tmp == NULL) return TERN_ERR_NOMEM;
    int mask = 1;
    for (; mask < p; mask <<= 1) {
        if (r & mask) {
            rc = core_sendrecv_coll(comm, words, n * 8, r - mask, NULL, 0, -1, CORE_TAG_REDUCE);
            if (rc) goto out;
            break;
        }
        if (r + mask < p) {
            rc = core_sendrecv_coll(comm, NULL, 0, -1, tmp, n * 8, r + mask, CORE_TAG_REDUCE);
            if (rc) goto out;
            for (size_t i = 0; i < n; i++)
                words[i] &= tmp[i];
        }
    }
    mask = 1;
    while (mask < p && !(r & mask))
        mask <<= 1;
    if (r != 0) {
        rc = core_sendrecv_coll(comm, NULL, 0, -1, words, n * 8, r - mask, CORE_TAG_BCAST);
        if (rc) goto out;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (r + mask < p) {
            rc = core_sendrecv_coll(comm, words, n * 8, r + mask, NULL, 0, -1, CORE_TAG_BCAST);
            if (rc) goto out;
        }
    }
    rc = 0;
out:
    free(tmp);
    return rc;
}

/*
 * Agree on a free context pair among the members of comm.
 *
 * Several agreements may be under way on one process at once: threads agreeing on
 * different parents, and background ones (MPI_Comm_idup, below). None may hold the
 * process's free mask while it waits for the others - two such holders on two processes,
 * each waiting for the other's members, never finish - so every agreement is rounds of
 * two AND-reductions over its members:
 *   offer  every member's free mask as it is now; the AND gives the candidates (picked
 *          from a place that depends on the parent, so agreements on different parents
 *          seldom want the same pair);
 *   vote   each member reserves the candidates (marks them taken) if they are still free
 *          here, and votes yes; the AND of the votes decides: all yes, they are the
 *          answer; else those that reserved release them, and the next round starts.
 * Two agreements can never both keep a pair: on a process both belong to, the second to
 * vote finds it taken. One agreement alone always succeeds in its first round.
 */
void core_ctx_take(const uint16_t *ctx, int n, int used)
{
    for (int i = 0; i < n; i++)
        core_ctx_mark(ctx[i], used);
}

int core_ctx_pick(uint64_t *mask, uint16_t parent, int n, uint16_t *ctx)
{
    const int pairs = CORE_MASK_WORDS * 64;
    int start = (int)((parent / 2u) * 37u % (unsigned)pairs), k = 0;
    for (int j = 0; j < pairs && k < n; j++) {
        int p = (start + j) % pairs;
        if (mask[p / 64] & (1ull << (p % 64))) ctx[k++] = (uint16_t)(p * 2);
    }
    return k == n;
}

int core_ctx_reserve(const uint16_t *ctx, int n)
{
    for (int i = 0; i < n; i++)
        if (core.ctx_used[ctx[i] / 2 / 64] & (1ull << (ctx[i] / 2 % 64))) return 0;
    core_ctx_take(ctx, n, 1);
    return 1;
}

static int core_ctx_agree(struct tern_comm *comm, uint16_t *ctx)
{
    uint64_t mask[CORE_MASK_WORDS];
    for (;;) {
        for (int i = 0; i < CORE_MASK_WORDS; i++)
            mask[i] = ~core.ctx_used[i];
        int rc = core_allreduce_band(comm, mask, CORE_MASK_WORDS);
        if (rc) return rc;
        if (!core_ctx_pick(mask, comm->ctx, 1, ctx)) return TERN_ERR_NOMEM; /* all taken */
        int mine = core_ctx_reserve(ctx, 1);
        uint64_t yes = (uint64_t)mine;
        rc = core_allreduce_band(comm, &yes, 1);
        if (rc == 0 && yes) return 0;
        if (mine) core_ctx_mark(*ctx, 0);
        if (rc) return rc;
    }
}

/*
 * The same agreement without blocking (MPI_Comm_idup), advanced by a progress hook: the
 * same two reductions per round, each gathered to member 0 of the group, which (for an
 * intercommunicator) swaps the group's result with the other group's leader and answers
 * its group. The messages go on comm's collective context with tags of their own (below
 * the collectives' tag space, above the internal ones).
 */
#define CORE_NB_TAG 0x20000000
static struct tern_comm *core_comm_new(uint16_t ctx, int rank, int size, const int *world_of);
enum { NB_OFFER, NB_VOTE };
struct core_ctx_nb {
    struct tern_comm *comm; /* carries the messages (ctx + 1), numbers the agreement */
    uint32_t seq;           /* the agreement's number on comm, its tags' high part */
    uint32_t round;         /* tries so far */
    int stage;              /* NB_OFFER or NB_VOTE: which reduction is running */
    int reserved;           /* this process marked ctx[] taken in this round's vote */
    int state;              /* 0 running, 1 answered (ctx or err) */
    int err;
    int nctx;         /* context pairs wanted, 1..3 */
    uint16_t ctx[3];  /* the candidates, then the answer */
    int lrank, lsize; /* my group: its size, my place; member 0 gathers and answers */
    int *lworld;      /* my group's world ranks */
    int rleader;      /* the other group's leader (world rank), or -1: one group */
    uint64_t mask[CORE_MASK_WORDS + 1];  /* this reduction's words (a vote uses one) */
    uint64_t rmask[CORE_MASK_WORDS + 1]; /* the other leader's result */
    uint64_t *in;                        /* member 0: every member's words */
    core_req_t **req;                    /* this step's requests */
    int nreq;
    int phase;        /* member 0: 0 gathering, 2 swapping with the other leader, 1 answering */
    core_req_t *done; /* completed with the answer */
    struct core_ctx_nb *next;
};
static struct core_ctx_nb *core_ctx_nbs;

static size_t core_nb_words(const struct core_ctx_nb *nb)
{
    return nb->stage == NB_OFFER ? CORE_MASK_WORDS : 1;
}

static int core_nb_tag(const struct core_ctx_nb *nb)
{
    return CORE_NB_TAG | (int)((nb->seq & 0xffff) << 12) | (int)((nb->round & 0x7ff) << 1) |
           nb->stage;
}

/* The agreement is over (ctx or err): release a reservation that is not the answer. */
static void core_nb_done(struct core_ctx_nb *nb, int err)
{
    if (err && nb->reserved) core_ctx_take(nb->ctx, nb->nctx, 0);
    nb->reserved = 0;
    nb->err = err;
    nb->state = 1;
    if (nb->done) core_req_complete(nb->done, err);
}

/* Start this stage's reduction of nb->mask (core_nb_words words) over the members. */
static int core_nb_reduce(struct core_ctx_nb *nb)
{
    struct tern_comm *c = nb->comm;
    uint16_t cctx = (uint16_t)(c->ctx + 1);
    int tag = core_nb_tag(nb), rc = 0;
    size_t n = core_nb_words(nb) * sizeof(uint64_t);
    nb->nreq = 0;
    nb->phase = 0;
    if (nb->lrank == 0) {
        memcpy(nb->in, nb->mask, n);
        for (int i = 1; i < nb->lsize && rc == 0; i++)
            rc = core_irecv((char *)nb->in + (size_t)i * n, n, nb->lworld[i], tag, cctx, c,
                            &nb->req[nb->nreq++]);
    } else {
        rc = core_isend(nb->mask, n, nb->lworld[0], tag, cctx, 0, &nb->req[nb->nreq++]);
        if (rc == 0)
            rc = core_irecv(nb->mask, n, nb->lworld[0], tag, cctx, c, &nb->req[nb->nreq++]);
    }
    if (rc) nb->nreq--;
    return rc;
}

/* A new round: offer the free mask as it is now. */
static int core_nb_offer(struct core_ctx_nb *nb)
{
    nb->stage = NB_OFFER;
    for (int i = 0; i < CORE_MASK_WORDS; i++)
        nb->mask[i] = ~core.ctx_used[i];
    return core_nb_reduce(nb);
}

/* All of this step's requests done: free them; the first error. */
static int core_nb_reap(struct core_ctx_nb *nb, int *done)
{
    *done = 0;
    for (int i = 0; i < nb->nreq; i++)
        if (nb->req[i]->state != CORE_RS_DONE) return 0;
    int err = 0;
    for (int i = 0; i < nb->nreq; i++) {
        if (!err) err = nb->req[i]->err;
        core_req_free(nb->req[i]);
    }
    nb->nreq = 0;
    *done = 1;
    return err;
}

/* A reduction is over, nb->mask holds its result: the next stage, round or answer. */
static void core_nb_reduced(struct core_ctx_nb *nb)
{
    int rc = 0;
    if (nb->stage == NB_OFFER) {
        if (!core_ctx_pick(nb->mask, nb->comm->ctx, nb->nctx, nb->ctx)) {
            core_nb_done(nb, TERN_ERR_NOMEM); /* every context id is taken */
            return;
        }
        int yes = core_ctx_reserve(nb->ctx, nb->nctx);
        nb->reserved = yes;
        nb->stage = NB_VOTE;
        nb->mask[0] = (uint64_t)yes;
        rc = core_nb_reduce(nb);
    } else if (nb->mask[0]) { /* everyone reserved them: the answer */
        nb->reserved = 0;
        core_nb_done(nb, 0);
        return;
    } else { /* someone could not: release, and again */
        if (nb->reserved) core_ctx_take(nb->ctx, nb->nctx, 0);
        nb->reserved = 0;
        nb->round++;
        rc = core_nb_offer(nb);
    }
    if (rc) core_nb_done(nb, rc);
}

static int core_nb_step(struct core_ctx_nb *nb)
{
    int done, err = core_nb_reap(nb, &done);
    if (!done) return 0;
    if (err) {
        core_nb_done(nb, err);
        return 1;
    }
    struct tern_comm *c = nb->comm;
    size_t w = core_nb_words(nb), n = w * sizeof(uint64_t);
    uint16_t cctx = (uint16_t)(c->ctx + 1);
    int rc = 0;
    if (nb->lrank == 0 && nb->phase == 0) { /* all members' words in: AND them */
        for (int i = 1; i < nb->lsize; i++)
            for (size_t k = 0; k < w; k++)
                nb->mask[k] &= nb->in[(size_t)i * w + k];
        nb->phase = 2;
        if (nb->rleader >= 0) { /* swap the group's result with the other leader's */
            rc = core_isend(nb->mask, n, nb->rleader, core_nb_tag(nb), cctx, 0,
                            &nb->req[nb->nreq++]);
            if (rc == 0)
                rc = core_irecv(nb->rmask, n, nb->rleader, core_nb_tag(nb), cctx, c,
                                &nb->req[nb->nreq++]);
            if (rc) {
                nb->nreq--;
                core_nb_done(nb, rc);
            }
            return 1;
        }
    }
    if (nb->lrank == 0 && nb->phase == 2) { /* both groups' results in: answer my group */
        if (nb->rleader >= 0)
            for (size_t k = 0; k < w; k++)
                nb->mask[k] &= nb->rmask[k];
        nb->phase = 1;
        for (int i = 1; i < nb->lsize && rc == 0; i++)
            rc = core_isend(nb->mask, n, nb->lworld[i], core_nb_tag(nb), cctx, 0,
                            &nb->req[nb->nreq++]);
        if (rc) {
            nb->nreq--;
            core_nb_done(nb, rc);
        }
        if (nb->nreq) return 1;
    }
    core_nb_reduced(nb);
    return 1;
}

static int core_nb_hook(void)
{
    int moved = 0;
    for (struct core_ctx_nb *nb = core_ctx_nbs; nb; nb = nb->next)
        if (nb->state == 0) moved |= core_nb_step(nb);
    return moved;
}

int core_ctx_agree_start(struct tern_comm *comm, const int *lworld, int lsize, int lrank,
                         int rleader, int nctx, core_req_t *done, struct core_ctx_nb **out)
{
    if (nctx < 1 || nctx > 3 || lsize < 1 || lrank < 0 || lrank >= lsize) return TERN_ERR_INVAL;
    struct core_ctx_nb *nb = calloc(1, sizeof *nb);
    if (nb == NULL) return TERN_ERR_NOMEM;
    nb->in = lrank == 0 ? malloc((size_t)lsize * sizeof nb->mask) : NULL;
    nb->req = malloc((size_t)(lsize + 2) * sizeof *nb->req);
    nb->lworld = malloc((size_t)lsize * sizeof(int));
    int rc = core_progress_hook_add(core_nb_hook);
    if ((lrank == 0 && nb->in == NULL) || nb->req == NULL || nb->lworld == NULL || rc) {
        free(nb->in);
        free(nb->req);
        free(nb->lworld);
        free(nb);
        return rc ? rc : TERN_ERR_NOMEM;
    }
    memcpy(nb->lworld, lworld, (size_t)lsize * sizeof(int));
    nb->lsize = lsize;
    nb->lrank = lrank;
    nb->rleader = rleader;
    nb->nctx = nctx;
    nb->comm = comm;
    nb->done = done;
    nb->seq = comm->coll_seq++;
    nb->next = core_ctx_nbs;
    core_ctx_nbs = nb;
    *out = nb;
    rc = core_nb_offer(nb);
    if (rc) core_nb_done(nb, rc);
    return 0;
}

int core_ctx_agree_test(struct core_ctx_nb *nb, uint16_t *ctx)
{
    if (nb->state == 0) return 0;
    if (nb->err) return nb->err;
    memcpy(ctx, nb->ctx, (size_t)nb->nctx * sizeof *ctx);
    return 1;
}

int core_comm_idup_start(struct tern_comm *comm, core_req_t *done, struct core_ctx_nb **out)
{
    int *world_of = malloc((size_t)comm->size * sizeof(int));
    if (world_of == NULL) return TERN_ERR_NOMEM;
    for (int i = 0; i < comm->size; i++)
        world_of[i] = core_comm_world(comm, i);
    int rc = core_ctx_agree_start(comm, world_of, comm->size, comm->rank, -1, 1, done, out);
    free(world_of);
    return rc;
}

int core_comm_idup_test(struct core_ctx_nb *nb, struct tern_comm **out)
{
    if (nb->state == 0) return 0;
    *out = NULL;
    int rc = nb->err;
    if (rc == 0) {
        *out = core_comm_new(nb->ctx[0], nb->lrank, nb->lsize, nb->lworld);
        if (*out == NULL) {
            core_ctx_mark(nb->ctx[0], 0);
            rc = TERN_ERR_NOMEM;
        }
    }
    return rc ? rc : 1;
}

void core_comm_idup_free(struct core_ctx_nb *nb)
{
    if (nb->state == 0) return; /* still agreeing: left to finalize */
    struct core_ctx_nb **q = &core_ctx_nbs;
    while (*q && *q != nb)
        q = &(*q)->next;
    if (*q) *q = nb->next;
    free(nb->in);
    free(nb->req);
    free(nb->lworld);
    free(nb);
}

/* Ring allgather of `blk` bytes per rank. */
static int core_allgather(struct tern_comm *comm, const void *mine, void *all, size_t blk)
{
    int p = comm->size, r = comm->rank;
    memcpy((char *)all + (size_t)r * blk, mine, blk);
    for (int step = 0; step < p - 1; step++) {
        int sblk = (r - step + p) % p, rblk = (r - step - 1 + p) % p;
        int rc = core_sendrecv_coll(comm, (char *)all + (size_t)sblk * blk, blk, (r + 1) % p,
                                    (char *)all + (size_t)rblk * blk, blk, (r - 1 + p) % p,
                                    CORE_TAG_ALLGATHER);
        if (rc) return rc;
    }
    return 0;
}

static struct tern_comm *core_comm_new(uint16_t ctx, int rank, int size, const int *world_of)
{
    struct tern_comm *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->world_of = malloc((size_t)size * sizeof(int));
    c->comm_of = malloc((size_t)core.size * sizeof(int));
    if (!c->world_of || !c->comm_of) {
        free(c->world_of);
        free(c->comm_of);
        free(c);
        return NULL;
    }
    for (int w = 0; w < core.size; w++)
        c->comm_of[w] = -1;
    for (int i = 0; i < size; i++) {
        c->world_of[i] = world_of[i];
        c->comm_of[world_of[i]] = i;
    }
    c->magic = CORE_COMM_MAGIC;
    c->ctx = ctx;
    c->rank = rank;
    c->size = size;
    c->next_alloc = core_comm_all;
    core_comm_all = c;
    core_ctx_mark(ctx, 1);
    return c;
}

void core_ctx_free_mask(uint64_t *words)
{
    for (int i = 0; i < CORE_CTX_PAIR_WORDS; i++)
        words[i] = ~core.ctx_used[i];
}

int core_comm_make(uint16_t ctx, int rank, int size, const int *world_of, struct tern_comm **out)
{
    struct tern_comm *c = core_comm_new(ctx, rank, size, world_of);
    if (c == NULL) return TERN_ERR_NOMEM;
    *out = c;
    return 0;
}

int core_comm_dup(struct tern_comm *comm, struct tern_comm **out)
{
    uint16_t ctx;
    int rc = core_ctx_agree(comm, &ctx);
    if (rc) return rc;
    int *world_of = malloc((size_t)comm->size * sizeof(int));
    struct tern_comm *c = NULL;
    if (world_of) {
        for (int i = 0; i < comm->size; i++)
            world_of[i] = core_comm_world(comm, i);
        c = core_comm_new(ctx, comm->rank, comm->size, world_of);
        free(world_of);
    }
    if (c == NULL) {
        core_ctx_mark(ctx, 0);
        return TERN_ERR_NOMEM;
    }
    *out = c;
    return 0;
}

struct core_split_entry {
    int color, key, rank;
};

static int core_split_cmp(const void *a, const void *b)
{
    const struct core_split_entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

int core_comm_split(struct tern_comm *comm, int color, int key, struct tern_comm **out)
{
    int p = comm->size;
    struct core_split_entry mine = {color, key, comm->rank};
    struct core_split_entry *all = malloc((size_t)p * sizeof *all);
    int *world_of = malloc((size_t)p * sizeof(int));
    if (all == NULL || world_of == NULL) {
        free(all);
        free(world_of);
        return TERN_ERR_NOMEM;
    }
    int rc = core_allgather(comm, &mine, all, sizeof mine);
    uint16_t ctx = 0;
    if (rc == 0) rc = core_ctx_agree(comm, &ctx);
    if (rc == 0 && color == TERN_UNDEFINED) {
        core_ctx_mark(ctx, 0); /* the pair is the new groups', not mine */
        *out = NULL;
    } else if (rc == 0) {
        int n = 0;
        for (int i = 0; i < p; i++)
            if (all[i].color == color) all[n++] = all[i];
        qsort(all, (size_t)n, sizeof *all, core_split_cmp);
        int myrank = -1;
        for (int i = 0; i < n; i++) {
            world_of[i] = core_comm_world(comm, all[i].rank);
            if (all[i].rank == comm->rank) myrank = i;
        }
        struct tern_comm *c = core_comm_new(ctx, myrank, n, world_of);
        if (c == NULL) {
            core_ctx_mark(ctx, 0);
            rc = TERN_ERR_NOMEM;
        } else
            *out = c;
    }
    free(all);
    free(world_of);
    return rc;
}

int core_comm_free(struct tern_comm *comm)
{
    if (comm->on_free) comm->on_free(comm);
    comm->on_free = NULL;
    core_ctx_mark(comm->ctx, 0);
    comm->magic = 0;
    free(comm->world_of);
    free(comm->comm_of);
    comm->world_of = comm->comm_of = NULL;
    return 0;
}

void core_comm_fini(void)
{
    /* Every layer's hook first, while every communicator is still there: a hook may free
     * communicators it made (coll_hier.c frees its sub-communicators). */
    struct tern_comm *builtin[2] = {&tern__comm_world, &tern__comm_self};
    for (int i = 0; i < 2; i++) {
        void (*hook)(struct tern_comm *) = builtin[i]->on_free;
        builtin[i]->on_free = NULL;
        if (hook) hook(builtin[i]);
    }
    for (struct tern_comm *c = core_comm_all; c; c = c->next_alloc) {
        void (*hook)(struct tern_comm *) = c->on_free;
        c->on_free = NULL;
        if (hook) hook(c);
    }
    while (core_comm_all) {
        struct tern_comm *c = core_comm_all;
        core_comm_all = c->next_alloc;
        free(c->world_of);
        free(c->comm_of);
        free(c);
    }
    free(tern__comm_self.world_of);
    free(tern__comm_self.comm_of);
    tern__comm_self.world_of = tern__comm_self.comm_of = NULL;
    tern__comm_world.magic = 0;
    tern__comm_self.magic = 0;
}

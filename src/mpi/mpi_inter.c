/*
 * mpi_inter.c - MPI intercommunicators: MPI_Intercomm_create and MPI_Intercomm_merge,
 * dup/split/create of an intercommunicator, and the collectives on one (MPI-3 meaning:
 * the data goes from one group to the other).
 *
 * An intercommunicator is three core communicators over world ranks:
 *   tc        ranks address the remote group; tc->rank is mine in the local group. The
 *             program's point-to-point messages use it as any communicator's, so sends,
 *             receives, probes and their statuses need nothing special.
 *   ic_local  the local group as a hidden intra-communicator (MPI_Comm_size, the local
 *             half of every collective, context-id agreements).
 *   ic_coll   a twin of tc on its own context: the messages the collectives exchange
 *             across the groups, apart from the program's.
 * The two groups have no common parent communicator, so their context ids are agreed
 * in three steps: an AND of the free masks in each group, the two leaders exchange
 * theirs (over peer_comm, or ic_coll once the intercommunicator exists), and each leader
 * broadcasts the result in its group. All three pairs come from one agreement.
 *
 * The collectives are made of the local group's intra-communicator collectives and
 * point-to-point messages on ic_coll: reductions reduce in each group, the leaders
 * exchange the results and broadcast them; data movements send each block straight to
 * its process. They run to completion; the non-blocking forms (MPI_I*) do the same and
 * return a complete request (docs/MPI.md). MPI_Comm_idup alone runs in the background.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_comm_impl.h"

enum { IC_TAG = 1 }; /* on ic_coll, whose context only the collectives use */

/* ---- context ids and construction ------------------------------------------------------ */

/* AND n words over both groups: within mine (`local`, leader `lroot`), then the leaders
 * swap over `bridge` (the other is its rank `rleader`, `tag`), then each tells its group. */
static int ic_and(MPI_Comm local, int lroot, MPI_Comm bridge, int rleader, int tag, uint64_t *m,
                  int n)
{
    uint64_t o[CORE_CTX_PAIR_WORDS];
    int rc = PMPI_Allreduce(MPI_IN_PLACE, m, n, MPI_UINT64_T, MPI_BAND, local);
    if (rc) return rc;
    int me;
    PMPI_Comm_rank(local, &me);
    if (me == lroot) {
        rc = PMPI_Sendrecv(m, n, MPI_UINT64_T, rleader, tag, o, n, MPI_UINT64_T, rleader, tag,
                           bridge, MPI_STATUS_IGNORE);
        for (int i = 0; rc == 0 && i < n; i++)
            m[i] &= o[i];
    }
    return rc ? rc : PMPI_Bcast(m, n, MPI_UINT64_T, lroot, local);
}

/*
 * Agree on n free context pairs (n <= 3) among the members of both groups, in rounds as
 * the core's agreements (src/core/comm.c): offer the free masks, pick candidates (from a
 * place set by `parent`, a context id both groups share, or 0), reserve and vote.
 */
static int ic_agree(MPI_Comm local, int lroot, MPI_Comm bridge, int rleader, int tag,
                    uint16_t parent, int n, uint16_t *ctx)
{
    for (;;) {
        uint64_t m[CORE_CTX_PAIR_WORDS];
        core_ctx_free_mask(m);
        int rc = ic_and(local, lroot, bridge, rleader, tag, m, CORE_CTX_PAIR_WORDS);
        if (rc) return rc;
        if (!core_ctx_pick(m, parent, n, ctx)) return MPI_ERR_INTERN; /* none free */
        int mine = core_ctx_reserve(ctx, n);
        uint64_t yes = (uint64_t)mine;
        rc = ic_and(local, lroot, bridge, rleader, tag, &yes, 1);
        if (rc == 0 && yes) return MPI_SUCCESS;
        if (mine) core_ctx_take(ctx, n, 0);
        if (rc) return rc;
    }
}

/* A hidden communicator: errors come back to the caller, who reports them. */
static int ic_hidden(struct tern_comm *tc, MPI_Comm *out)
{
    int rc = mpi_comm_wrap(tc, NULL, out);
    if (rc == 0) mpi_comm_get(*out)->errh = MPI_ERRORS_RETURN;
    return rc;
}

/* The intercommunicator of local group L (nl world ranks, mine at lrank) and remote
 * group R on context pairs ctx[0..2]; error handler from parent. */
static int ic_make(const int *L, int nl, int lrank, const int *R, int nr, const uint16_t *ctx,
                   const struct mpi_comm *parent, MPI_Comm *out)
{
    struct tern_comm *tu = NULL, *tl = NULL, *tcol = NULL;
    MPI_Comm hl = MPI_COMM_NULL, hc = MPI_COMM_NULL;
    int rc = mpi_from_tern(core_comm_make(ctx[1], lrank, nl, L, &tl));
    if (rc == 0) rc = ic_hidden(tl, &hl);
    if (rc == 0) rc = mpi_from_tern(core_comm_make(ctx[2], lrank, nr, R, &tcol));
    if (rc == 0) rc = ic_hidden(tcol, &hc);
    if (rc == 0) rc = mpi_from_tern(core_comm_make(ctx[0], lrank, nr, R, &tu));
    if (rc == 0) rc = mpi_comm_wrap(tu, parent, out);
    if (rc) {
        if (hl != MPI_COMM_NULL) PMPI_Comm_free(&hl);
        if (hc != MPI_COMM_NULL) PMPI_Comm_free(&hc);
        return rc;
    }
    struct mpi_comm *c = mpi_comm_get(*out);
    c->inter = 1;
    c->ic_local = hl;
    c->ic_coll = hc;
    c->ltc = tl;
    return MPI_SUCCESS;
}

/* The world ranks of a communicator's (local) group, malloc'ed. */
static int *ic_members(const struct tern_comm *tc)
{
    int *w = malloc((size_t)(tc->size ? tc->size : 1) * sizeof(int));
    if (w)
        for (int i = 0; i < tc->size; i++)
            w[i] = tc == TERN_COMM_SELF ? core.rank : core_comm_world(tc, i);
    return w;
}

void mpi_ic_free(struct mpi_comm *c)
{
    if (c->ic_local != MPI_COMM_NULL) PMPI_Comm_free(&c->ic_local);
    if (c->ic_coll != MPI_COMM_NULL) PMPI_Comm_free(&c->ic_coll);
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm *newintercomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Intercomm_create";
    COMM_CHECK(fn, local_comm, newintercomm);
    if (c->inter) return mpi_err(local_comm, fn, MPI_ERR_COMM);
    int nl = c->tc->size, me = c->tc->rank;
    if (local_leader < 0 || local_leader >= nl) return mpi_err(local_comm, fn, MPI_ERR_RANK);
    if (tag < 0 || tag > TERN_TAG_UB) return mpi_err(local_comm, fn, MPI_ERR_TAG);
    int leader = me == local_leader;
    if (leader) {
        struct mpi_comm *pc = mpi_comm_get(peer_comm);
        if (pc == NULL) return mpi_err(local_comm, fn, MPI_ERR_COMM);
        if (remote_leader < 0 || remote_leader >= pc->tc->size)
            return mpi_err(local_comm, fn, MPI_ERR_RANK);
    }
    int *L = ic_members(c->tc), *R = NULL, nr = 0, rc = MPI_SUCCESS;
    if (L == NULL) return mpi_err(local_comm, fn, MPI_ERR_NO_MEM);
    /* the leaders swap their groups, then tell their own */
    if (leader)
        rc = PMPI_Sendrecv(&nl, 1, MPI_INT, remote_leader, tag, &nr, 1, MPI_INT, remote_leader, tag,
                           peer_comm, MPI_STATUS_IGNORE);
    if (rc == 0) rc = PMPI_Bcast(&nr, 1, MPI_INT, local_leader, local_comm);
    if (rc == 0 && (R = malloc((size_t)(nr > 0 ? nr : 1) * sizeof(int))) == NULL)
        rc = MPI_ERR_NO_MEM;
    if (rc == 0 && leader)
        rc = PMPI_Sendrecv(L, nl, MPI_INT, remote_leader, tag, R, nr, MPI_INT, remote_leader, tag,
                           peer_comm, MPI_STATUS_IGNORE);
    if (rc == 0) rc = PMPI_Bcast(R, nr, MPI_INT, local_leader, local_comm);
    for (int i = 0; rc == 0 && i < nr; i++)
        for (int j = 0; j < nl; j++)
            if (R[i] == L[j]) rc = MPI_ERR_COMM; /* the groups must be disjoint */
    uint16_t ctx[3];
    if (rc == 0) rc = ic_agree(local_comm, local_leader, peer_comm, remote_leader, tag, 0, 3, ctx);
    if (rc == 0) rc = ic_make(L, nl, me, R, nr, ctx, c, newintercomm);
    free(L);
    free(R);
    return mpi_err(local_comm, fn, rc);
}
MPI_ALIAS(Intercomm_create)

/* Swap an int with the other group: leaders exchange, each broadcasts in its group. */
static int ic_swap_ints(struct mpi_comm *c, const int *mine, int n, int *theirs, int m)
{
    int rc = MPI_SUCCESS;
    if (c->tc->rank == 0)
        rc = PMPI_Sendrecv(mine, n, MPI_INT, 0, IC_TAG, theirs, m, MPI_INT, 0, IC_TAG, c->ic_coll,
                           MPI_STATUS_IGNORE);
    if (rc == 0) rc = PMPI_Bcast(theirs, m, MPI_INT, 0, c->ic_local);
    return rc;
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Intercomm_merge";
    COMM_CHECK(fn, intercomm, newintracomm);
    if (!c->inter) return mpi_err(intercomm, fn, MPI_ERR_COMM);
    int nl = c->ltc->size, nr = c->tc->size, me = c->tc->rank;
    int mine[2] = {high ? 1 : 0, core_comm_world(c->ltc, 0)}, theirs[2];
    int rc = ic_swap_ints(c, mine, 2, theirs, 2);
    /* The low group first; with equal flags, the group whose leader has the lower world
     * rank (both sides decide the same). */
    int first = mine[0] != theirs[0] ? !mine[0] : mine[1] < theirs[1];
    uint16_t ctx;
    if (rc == 0) rc = ic_agree(c->ic_local, 0, c->ic_coll, 0, IC_TAG, c->tc->ctx, 1, &ctx);
    int *all = malloc((size_t)(nl + nr) * sizeof(int));
    if (rc == 0 && all == NULL) rc = MPI_ERR_NO_MEM;
    struct tern_comm *tc = NULL;
    if (rc == 0) {
        int *l = first ? all : all + nr, *r = first ? all + nl : all;
        for (int i = 0; i < nl; i++)
            l[i] = core_comm_world(c->ltc, i);
        for (int i = 0; i < nr; i++)
            r[i] = core_comm_world(c->tc, i);
        rc = mpi_from_tern(core_comm_make(ctx, first ? me : nr + me, nl + nr, all, &tc));
    }
    free(all);
    if (rc == 0) rc = mpi_comm_wrap(tc, c, newintracomm);
    return mpi_err(intercomm, fn, rc);
}
MPI_ALIAS(Intercomm_merge)

int mpi_ic_dup(struct mpi_comm *c, MPI_Comm *out)
{
    uint16_t ctx[3];
    int rc = ic_agree(c->ic_local, 0, c->ic_coll, 0, IC_TAG, c->tc->ctx, 3, ctx);
    int *L = ic_members(c->ltc), *R = ic_members(c->tc);
    if (rc == 0 && (!L || !R)) rc = MPI_ERR_NO_MEM;
    if (rc == 0) rc = ic_make(L, c->ltc->size, c->tc->rank, R, c->tc->size, ctx, c, out);
    free(L);
    free(R);
    return rc;
}

/* MPI_Comm_idup of an intercommunicator: the same three-pair agreement as mpi_ic_dup,
 * run by the progress engine (core_ctx_agree_start: my group's leader gathers, swaps
 * with the other leader over the intercommunicator's own collective context, answers). */
int mpi_ic_idup_start(struct mpi_comm *c, core_req_t *done, struct core_ctx_nb **out)
{
    int *L = ic_members(c->ltc);
    if (L == NULL) return MPI_ERR_NO_MEM;
    int rc = core_ctx_agree_start(c->tc, L, c->ltc->size, c->tc->rank, core_comm_world(c->tc, 0), 3,
                                  done, out);
    free(L);
    return mpi_from_tern(rc);
}

/* The agreement is over with ctx[0..2]: the new intercommunicator on them. */
int mpi_ic_idup_finish(struct mpi_comm *c, const uint16_t *ctx, MPI_Comm *out)
{
    int *L = ic_members(c->ltc), *R = ic_members(c->tc);
    int rc = L && R ? ic_make(L, c->ltc->size, c->tc->rank, R, c->tc->size, ctx, c, out)
                    : MPI_ERR_NO_MEM;
    free(L);
    free(R);
    return rc;
}

struct ic_entry {
    int color, key, rank;
};

static int ic_entry_cmp(const void *a, const void *b)
{
    const struct ic_entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The members of colour `color` among n (colour, key) pairs in new rank order, as world
 * ranks of tc; returns how many. */
static int ic_pick(const int *ck, int n, int color, const struct tern_comm *tc, int *world,
                   int *myrank, int me)
{
    struct ic_entry *e = malloc((size_t)(n ? n : 1) * sizeof *e);
    if (e == NULL) return -1;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (ck[2 * i] == color) e[k++] = (struct ic_entry){ck[2 * i], ck[2 * i + 1], i};
    qsort(e, (size_t)k, sizeof *e, ic_entry_cmp);
    for (int i = 0; i < k; i++) {
        world[i] = core_comm_world(tc, e[i].rank);
        if (e[i].rank == me && myrank) *myrank = i;
    }
    free(e);
    return k;
}

/* MPI_Comm_split of an intercommunicator (and MPI_Comm_create, colour 0 for members):
 * the processes of each colour in the two groups make one intercommunicator; a colour
 * with no process on the other side gives MPI_COMM_NULL. */
int mpi_ic_split(struct mpi_comm *c, int color, int key, MPI_Comm *out)
{
    int nl = c->ltc->size, nr = c->tc->size, me = c->tc->rank;
    int mine[2] = {color, key};
    int *lck = malloc((size_t)nl * 2 * sizeof(int)), *rck = malloc((size_t)nr * 2 * sizeof(int));
    int *L = malloc((size_t)nl * sizeof(int)), *R = malloc((size_t)nr * sizeof(int));
    int rc = lck && rck && L && R ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (rc == 0) rc = PMPI_Allgather(mine, 2, MPI_INT, lck, 2, MPI_INT, c->ic_local);
    if (rc == 0) rc = ic_swap_ints(c, lck, 2 * nl, rck, 2 * nr);
    uint16_t ctx[3];
    if (rc == 0) rc = ic_agree(c->ic_local, 0, c->ic_coll, 0, IC_TAG, c->tc->ctx, 3, ctx);
    int agreed = rc == 0;
    *out = MPI_COMM_NULL;
    if (rc == 0 && color != MPI_UNDEFINED) {
        int lrank = 0;
        int kl = ic_pick(lck, nl, color, c->ltc, L, &lrank, me);
        int kr = ic_pick(rck, nr, color, c->tc, R, NULL, -1);
        if (kl < 0 || kr < 0)
            rc = MPI_ERR_NO_MEM;
        else if (kr > 0)
            rc = ic_make(L, kl, lrank, R, kr, ctx, c, out);
    }
    if (agreed && *out == MPI_COMM_NULL) core_ctx_take(ctx, 3, 0); /* not mine to keep */
    free(lck);
    free(rck);
    free(L);
    free(R);
    return rc;
}

int mpi_ic_create(struct mpi_comm *c, const struct mpi_group *g, MPI_Comm *out)
{
    for (int i = 0; i < g->size; i++)
        if (core_comm_rank_of(c->ltc, g->world[i]) < 0) return MPI_ERR_GROUP;
    int me = mpi_group_rank_of(g, core.rank);
    return mpi_ic_split(c, me == MPI_UNDEFINED ? MPI_UNDEFINED : 0, me, out);
}

int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_remote_size", comm, size);
    if (!c->inter) return mpi_err(comm, "MPI_Comm_remote_size", MPI_ERR_COMM);
    *size = c->tc->size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_remote_size)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_remote_group", comm, group);
    if (!c->inter) return mpi_err(comm, "MPI_Comm_remote_group", MPI_ERR_COMM);
    int *R = ic_members(c->tc);
    int rc = R ? mpi_group_make(R, c->tc->size, group) : MPI_ERR_NO_MEM;
    free(R);
    return mpi_err(comm, "MPI_Comm_remote_group", rc);
}
MPI_ALIAS(Comm_remote_group)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_test_inter", comm, flag);
    *flag = c->inter;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_test_inter)

/* ---- collectives ------------------------------------------------------------------------ */

/* A temporary for count instances of dt, and where instance 0 starts in it. */
static void *ic_tmp(MPI_Datatype dt, MPI_Count count, void **base)
{
    MPI_Aint lb, ext, tlb, text;
    PMPI_Type_get_extent(dt, &lb, &ext);
    PMPI_Type_get_true_extent(dt, &tlb, &text);
    size_t n = count > 0 ? (size_t)((count - 1) * ext + text) : 0;
    char *p = malloc(n ? n : 1);
    *base = p;
    return p ? p - tlb : NULL;
}

static MPI_Aint ic_extent(MPI_Datatype dt)
{
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(dt, &lb, &ext);
    return ext;
}

/* root as the intercommunicator collectives take it: 1 I am the root, 0 I am in the
 * root's group but not it, -1 the root is rank `root` of the remote group; -2 invalid. */
static int ic_root(const struct mpi_comm *c, int root)
{
    if (root == MPI_ROOT) return 1;
    if (root == MPI_PROC_NULL) return 0;
    return root >= 0 && root < c->tc->size ? -1 : -2;
}

static int ic_waitall(int n, MPI_Request *r)
{
    return n ? PMPI_Waitall(n, r, MPI_STATUSES_IGNORE) : MPI_SUCCESS;
}

int mpi_ic_barrier(struct mpi_comm *c)
{
    int rc = PMPI_Barrier(c->ic_local);
    if (rc == 0 && c->tc->rank == 0)
        rc = PMPI_Sendrecv(NULL, 0, MPI_BYTE, 0, IC_TAG, NULL, 0, MPI_BYTE, 0, IC_TAG, c->ic_coll,
                           MPI_STATUS_IGNORE);
    if (rc == 0) rc = PMPI_Barrier(c->ic_local);
    return rc;
}

int mpi_ic_bcast(struct mpi_comm *c, void *buf, int count, MPI_Datatype dt, int root)
{
    int k = ic_root(c, root);
    if (k == -2) return MPI_ERR_ROOT;
    if (k == 1) return PMPI_Send(buf, count, dt, 0, IC_TAG, c->ic_coll);
    if (k == 0) return MPI_SUCCESS;
    int rc = MPI_SUCCESS;
    if (c->tc->rank == 0)
        rc = PMPI_Recv(buf, count, dt, root, IC_TAG, c->ic_coll, MPI_STATUS_IGNORE);
    if (rc == 0) rc = PMPI_Bcast(buf, count, dt, 0, c->ic_local);
    return rc;
}

/* Reduce my group's data to its leader (into a temporary there). */
static int ic_reduce_local(struct mpi_comm *c, const void *sbuf, MPI_Count count, MPI_Datatype dt,
                           MPI_Op op, void **tmp, void **base)
{
    *tmp = *base = NULL;
    if (c->tc->rank == 0 && (*tmp = ic_tmp(dt, count, base)) == NULL) return MPI_ERR_NO_MEM;
    return PMPI_Reduce(sbuf, *tmp, (int)count, dt, op, 0, c->ic_local);
}

int mpi_ic_reduce(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                  MPI_Op op, int root)
{
    int k = ic_root(c, root);
    if (k == -2) return MPI_ERR_ROOT;
    if (k == 1) return PMPI_Recv(rbuf, count, dt, 0, IC_TAG, c->ic_coll, MPI_STATUS_IGNORE);
    if (k == 0) return MPI_SUCCESS;
    void *tmp, *base;
    int rc = ic_reduce_local(c, sbuf, count, dt, op, &tmp, &base);
    if (rc == 0 && c->tc->rank == 0) rc = PMPI_Send(tmp, count, dt, root, IC_TAG, c->ic_coll);
    free(base);
    return rc;
}

/* Each group reduces its data; the leaders swap the results. The leader's result (the
 * other group's reduction) is in `out` (count instances) on return. */
static int ic_reduce_swap(struct mpi_comm *c, const void *sbuf, void *out, MPI_Count count,
                          MPI_Datatype dt, MPI_Op op)
{
    void *tmp, *base;
    int rc = ic_reduce_local(c, sbuf, count, dt, op, &tmp, &base);
    if (rc == 0 && c->tc->rank == 0)
        rc = PMPI_Sendrecv(tmp, (int)count, dt, 0, IC_TAG, out, (int)count, dt, 0, IC_TAG,
                           c->ic_coll, MPI_STATUS_IGNORE);
    free(base);
    return rc;
}

int mpi_ic_allreduce(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                     MPI_Op op)
{
    if (sbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
    int rc = ic_reduce_swap(c, sbuf, rbuf, count, dt, op);
    if (rc == 0) rc = PMPI_Bcast(rbuf, count, dt, 0, c->ic_local);
    return rc;
}

/* counts: the local group's share of the other group's reduction (NULL: rcount each). */
int mpi_ic_reduce_scatter(struct mpi_comm *c, const void *sbuf, void *rbuf, const int *counts,
                          int rcount, MPI_Datatype dt, MPI_Op op)
{
    if (sbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
    int nl = c->ltc->size;
    int *cnt = malloc((size_t)nl * 2 * sizeof(int));
    if (cnt == NULL) return MPI_ERR_NO_MEM;
    int *displs = cnt + nl;
    MPI_Count total = 0;
    for (int i = 0; i < nl; i++) {
        cnt[i] = counts ? counts[i] : rcount;
        displs[i] = (int)total;
        total += cnt[i];
    }
    void *res = NULL, *base = NULL;
    int rc = MPI_SUCCESS;
    if (c->tc->rank == 0 && (res = ic_tmp(dt, total, &base)) == NULL) rc = MPI_ERR_NO_MEM;
    if (rc == 0) rc = ic_reduce_swap(c, sbuf, res, total, dt, op);
    if (rc == 0)
        rc = PMPI_Scatterv(res, cnt, displs, dt, rbuf, cnt[c->tc->rank], dt, 0, c->ic_local);
    free(base);
    free(cnt);
    return rc;
}

/*
 * Data movement, every block straight to its process. Per remote rank j: what I send
 * (scounts[j] of stypes[j] at sbuf + sdispls[j] bytes) and what I receive; a NULL array
 * means the single count/type/displacement given. `sto`/`rfrom`: -1 every remote rank,
 * else that rank only, or -2 none.
 */
struct ic_side {
    const char *buf;
    const int *counts;
    const MPI_Aint *bdispls; /* bytes */
    const int *displs;       /* in extents of type */
    const MPI_Datatype *types;
    int count;
    MPI_Datatype type;
    int step; /* plain side: consecutive blocks `count` extents apart (1) or all at buf (0) */
};

static void ic_block(const struct ic_side *s, int j, const char **p, int *n, MPI_Datatype *t)
{
    *t = s->types ? s->types[j] : s->type;
    *n = s->counts ? s->counts[j] : s->count;
    if (s->bdispls)
        *p = s->buf + s->bdispls[j];
    else if (s->displs)
        *p = s->buf + (MPI_Aint)s->displs[j] * ic_extent(*t);
    else
        *p = s->buf + (MPI_Aint)s->step * j * s->count * ic_extent(*t);
}

static int ic_exchange(struct mpi_comm *c, const struct ic_side *snd, int sto,
                       const struct ic_side *rcv, int rfrom)
{
    int nr = c->tc->size;
    MPI_Request *req = malloc((size_t)(2 * nr + 1) * sizeof *req);
    if (req == NULL) return MPI_ERR_NO_MEM;
    int k = 0, rc = MPI_SUCCESS;
    for (int j = 0; rc == 0 && rfrom != -2 && j < nr; j++) {
        if (rfrom >= 0 && j != rfrom) continue;
        const char *p;
        int n;
        MPI_Datatype t;
        ic_block(rcv, j, &p, &n, &t);
        rc = PMPI_Irecv((void *)p, n, t, j, IC_TAG, c->ic_coll, &req[k++]);
        if (rc) k--;
    }
    for (int j = 0; rc == 0 && sto != -2 && j < nr; j++) {
        if (sto >= 0 && j != sto) continue;
        const char *p;
        int n;
        MPI_Datatype t;
        ic_block(snd, j, &p, &n, &t);
        rc = PMPI_Isend(p, n, t, j, IC_TAG, c->ic_coll, &req[k++]);
        if (rc) k--;
    }
    int rc2 = ic_waitall(k, req);
    free(req);
    return rc ? rc : rc2;
}

/* which: 0 gather, 1 scatter, 2 allgather, 3 alltoall (mpi_coll.c's order). */
int mpi_ic_move(int which, struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype,
                void *rbuf, int rcount, MPI_Datatype rtype, int root)
{
    int k = which <= 1 ? ic_root(c, root) : -1;
    if (k == -2) return MPI_ERR_ROOT;
    if (k == 0) return MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
    struct ic_side s = {
        .buf = sbuf, .count = scount, .type = stype, .step = which == 1 || which == 3};
    struct ic_side r = {.buf = rbuf, .count = rcount, .type = rtype, .step = which != 1};
    switch (which) {
    case 0: /* gather: the root receives a block from each; the others send to the root */
        return k == 1 ? ic_exchange(c, &s, -2, &r, -1) : ic_exchange(c, &s, root, &r, -2);
    case 1:
        return k == 1 ? ic_exchange(c, &s, -1, &r, -2) : ic_exchange(c, &s, -2, &r, root);
    default:
        return ic_exchange(c, &s, -1, &r, -1);
    }
}

/* which: 0 gatherv, 1 scatterv, 2 allgatherv, 3 alltoallv. */
int mpi_ic_movev(int which, struct mpi_comm *c, const void *sbuf, int scount, const int *scounts,
                 const int *sdispls, MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts,
                 const int *rdispls, MPI_Datatype rtype, int root)
{
    int k = which <= 1 ? ic_root(c, root) : -1;
    if (k == -2) return MPI_ERR_ROOT;
    if (k == 0) return MPI_SUCCESS;
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
    struct ic_side s = {
        .buf = sbuf, .counts = scounts, .displs = sdispls, .count = scount, .type = stype};
    struct ic_side r = {
        .buf = rbuf, .counts = rcounts, .displs = rdispls, .count = rcount, .type = rtype};
    switch (which) {
    case 0:
        return k == 1 ? ic_exchange(c, &s, -2, &r, -1) : ic_exchange(c, &s, root, &r, -2);
    case 1:
        return k == 1 ? ic_exchange(c, &s, -1, &r, -2) : ic_exchange(c, &s, -2, &r, root);
    default:
        return ic_exchange(c, &s, -1, &r, -1);
    }
}

int mpi_ic_alltoallw(struct mpi_comm *c, const void *sbuf, const int *scounts, const int *sdispls,
                     const MPI_Datatype *stypes, void *rbuf, const int *rcounts, const int *rdispls,
                     const MPI_Datatype *rtypes)
{
    if (sbuf == MPI_IN_PLACE || rbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
    int nr = c->tc->size;
    MPI_Aint *bd = malloc((size_t)(2 * nr + 1) * sizeof *bd);
    if (bd == NULL) return MPI_ERR_NO_MEM;
    for (int j = 0; j < nr; j++) {
        bd[j] = sdispls[j];
        bd[nr + j] = rdispls[j];
    }
    struct ic_side s = {.buf = sbuf, .counts = scounts, .bdispls = bd, .types = stypes};
    struct ic_side r = {.buf = rbuf, .counts = rcounts, .bdispls = bd + nr, .types = rtypes};
    int rc = ic_exchange(c, &s, -1, &r, -1);
    free(bd);
    return rc;
}

/*
 * coll_reduce.c - the reductions: reduce, allreduce, reduce_scatter(_block), scan, exscan.
 *
 *   reduce          binomial tree (log p whole-vector messages), or Rabenseifner:
 *                   reduce-scatter by recursive halving then a binomial gather of the
 *                   pieces to the root (about 2n bytes per process instead of n log p).
 *   allreduce       recursive doubling (small), Rabenseifner (reduce-scatter + allgather
 *                   by recursive doubling), ring (reduce-scatter + allgather round a
 *                   ring: 2(p-1) steps of n/p, for very large vectors).
 *   reduce_scatter  recursive halving or pairwise exchange.
 *   scan, exscan    recursive doubling, log p rounds.
 *
 * Non-powers of two fold the first 2 * (p - pof2) ranks in pairs (the even one hands its
 * vector to the odd one and gets the result back at the end), as in MPICH.
 *
 * Order of combination. A reduction step always computes lower-ranks op higher-ranks:
 * with the MPI-order function inout = in op inout, data from lower ranks is `in`. Every
 * algorithm below combines contiguous rank ranges, so non-commutative user ops get the
 * rank-ordered result; where that costs a copy it is paid only for them. The
 * exceptions need commutativity and fall back: ring allreduce -> Rabenseifner,
 * reduce_scatter -> reduce (rank-ordered) + scatterv; a rooted binomial reduce is
 * rotated only for commutative ops (otherwise it reduces to rank 0 and forwards).
 */
#include "coll/coll.h"

#define AT(buf, i) ((char *)(buf) + (size_t)(i)*es)

/* Start (in elements) of block i when count elements are cut into nb near-equal blocks. */
static inline size_t blk(size_t i, size_t count, int nb)
{
    size_t q = count / (size_t)nb, m = count % (size_t)nb;
    return i * q + (i < m ? i : m);
}

/* Real rank of new rank nr after folding `rem` pairs. */
static inline int unfold_rank(int nr, int rem)
{
    return nr < rem ? 2 * nr + 1 : nr + rem;
}

/* Fold the first 2*rem ranks pairwise into acc of the odd one. Returns the new rank, or
 * -1 for the even ranks that sit out. */
static int fold_in(struct coll_sched *s, char *acc, char *tb, size_t count, int rem)
{
    int r = s->comm->rank;
    size_t n = count * s->op.esize;
    if (r >= 2 * rem) return r - rem;
    if (r % 2 == 0) {
        coll_send(s, acc, n, r + 1);
        coll_wait(s);
        return -1;
    }
    coll_recv(s, tb, n, r - 1);
    coll_wait(s);
    coll_reduce_local(s, tb, acc, count); /* the even partner is the lower rank */
    return r / 2;
}

/* ---- recursive halving with distance doubling (order-preserving) ------------- */

struct rs_state {
    int pof2, rem, nr, steps;
    int lo[32], hi[32]; /* block range held before step k */
    int clo, chi;       /* block range held now */
};

/*
 * Reduce-scatter among the pof2 group: at step k (distance 2^k) the pair keeps one half
 * of its common block range each. After it, the group of 2^(k+1) aligned new ranks
 * is combined in rank order, which is what keeps non-commutative ops right.
 */
static void rs_halving(struct coll_sched *s, struct rs_state *st, char *acc, char *tb, size_t count)
{
    size_t es = s->op.esize;
    int nr = st->nr, pof2 = st->pof2;
    st->clo = 0;
    st->chi = pof2;
    st->steps = 0;
    for (int m = 1; m < pof2; m <<= 1) {
        int k = st->steps++;
        int peer = unfold_rank(nr ^ m, st->rem);
        int lo = st->clo, hi = st->chi, mid = (lo + hi) / 2;
        st->lo[k] = lo;
        st->hi[k] = hi;
        int upper = (nr & m) != 0; /* the partner is the lower rank */
        int klo = upper ? mid : lo, khi = upper ? hi : mid;
        int glo = upper ? lo : mid, ghi = upper ? mid : hi;
        size_t ko = blk((size_t)klo, count, pof2), kn = blk((size_t)khi, count, pof2) - ko;
        size_t go = blk((size_t)glo, count, pof2), gn = blk((size_t)ghi, count, pof2) - go;
        coll_sendrecv(s, AT(acc, go), gn * es, peer, AT(tb, ko), kn * es, peer);
        if (upper || s->op.commute) {
            coll_reduce_local(s, AT(tb, ko), AT(acc, ko), kn);
        } else {
            coll_reduce_local(s, AT(acc, ko), AT(tb, ko), kn);
            coll_copy(s, AT(acc, ko), AT(tb, ko), kn * es);
        }
        st->clo = klo;
        st->chi = khi;
    }
}

/* Undo the halving: every step gives the partner my range and takes its range. */
static void ag_doubling(struct coll_sched *s, struct rs_state *st, char *acc, size_t count)
{
    size_t es = s->op.esize;
    for (int k = st->steps - 1; k >= 0; k--) {
        int peer = unfold_rank(st->nr ^ (1 << k), st->rem);
        int lo = st->lo[k], hi = st->hi[k];
        int olo = st->clo == lo ? st->chi : lo, ohi = st->clo == lo ? hi : st->clo;
        size_t mo = blk((size_t)st->clo, count, st->pof2);
        size_t mn = blk((size_t)st->chi, count, st->pof2) - mo;
        size_t oo = blk((size_t)olo, count, st->pof2), on = blk((size_t)ohi, count, st->pof2) - oo;
        coll_sendrecv(s, AT(acc, mo), mn * es, peer, AT(acc, oo), on * es, peer);
        st->clo = lo;
        st->chi = hi;
    }
}

/* Binomial gather of the halved pieces to new rank nrr (the steps of ag_doubling, with
 * data flowing only towards nrr). */
static void gather_halves(struct coll_sched *s, struct rs_state *st, char *acc, size_t count,
                          int nrr)
{
    size_t es = s->op.esize;
    int rel = st->nr ^ nrr;
    for (int k = st->steps - 1; k >= 0; k--) {
        int peer = unfold_rank(st->nr ^ (1 << k), st->rem);
        size_t mo = blk((size_t)st->clo, count, st->pof2);
        size_t mn = blk((size_t)st->chi, count, st->pof2) - mo;
        if (rel & (1 << k)) {
            coll_send(s, AT(acc, mo), mn * es, peer);
            coll_wait(s);
            return;
        }
        int lo = st->lo[k], hi = st->hi[k];
        int olo = st->clo == lo ? st->chi : lo, ohi = st->clo == lo ? hi : st->clo;
        size_t oo = blk((size_t)olo, count, st->pof2), on = blk((size_t)ohi, count, st->pof2) - oo;
        coll_recv(s, AT(acc, oo), on * es, peer);
        coll_wait(s);
        st->clo = lo;
        st->chi = hi;
    }
}

/* ---- reduce ---------------------------------------------------------------- */

static void reduce_binomial(struct coll_sched *s, const char *in, char *rbuf, size_t count,
                            int root)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t es = s->op.esize, n = count * es;
    int troot = s->op.commute ? root : 0; /* the tree's root */
    int vr = (r - troot + p) % p;
    int limit = vr ? coll_lowbit(vr) : p;
    int nrecv = 0;
    for (int m = 1; m < limit && vr + m < p; m <<= 1)
        nrecv++;
    int final_here = r == root && troot == root;
    const char *cur = in;
    char *A = NULL, *B = NULL;
    if (nrecv > 0) {
        if (final_here) {
            A = rbuf; /* the last receive lands here, so the result needs no copy */
            if (in == rbuf) {
                char *c = coll_sched_tmp(s, n);
                if (c == NULL) return;
                coll_copy(s, c, in, n);
                cur = c;
            }
        } else {
            A = coll_sched_tmp(s, n);
        }
        B = nrecv > 1 || !final_here ? coll_sched_tmp(s, n) : NULL;
        if (s->err) return;
    }
    int k = 0;
    for (int m = 1; m < limit && vr + m < p; m <<= 1, k++) {
        char *dst = (nrecv - 1 - k) % 2 == 0 ? A : B;
        coll_recv(s, dst, n, (vr + m + troot) % p);
        coll_wait(s);
        coll_reduce_local(s, cur, dst, count); /* mine covers lower ranks */
        cur = dst;
    }
    if (vr) {
        coll_send(s, cur, n, (vr - coll_lowbit(vr) + troot) % p);
        coll_wait(s);
    } else if (final_here) {
        coll_copy(s, rbuf, cur, n);
    }
    if (troot != root) {
        if (r == troot) coll_send(s, cur, n, root);
        if (r == root) coll_recv(s, rbuf, n, troot);
        coll_wait(s);
    }
}

static void reduce_rabenseifner(struct coll_sched *s, const char *in, char *rbuf, size_t count,
                                int root)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t es = s->op.esize, n = count * es;
    struct rs_state st;
    st.pof2 = coll_pof2_floor(p);
    st.rem = p - st.pof2;
    char *acc = r == root ? rbuf : coll_sched_tmp(s, n);
    char *tb = coll_sched_tmp(s, n);
    if (s->err) return;
    coll_copy(s, acc, in, n);
    st.nr = fold_in(s, acc, tb, count, st.rem);
    int nrr = root < 2 * st.rem ? root / 2 : root - st.rem;
    int holder = unfold_rank(nrr, st.rem);
    if (st.nr >= 0) {
        rs_halving(s, &st, acc, tb, count);
        gather_halves(s, &st, acc, count, nrr);
    }
    if (holder != root) {
        if (r == holder) coll_send(s, acc, n, root);
        if (r == root) coll_recv(s, rbuf, n, holder);
        coll_wait(s);
    }
}

int coll_reduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t n = count * s->op.esize;
    if (count == 0) return 0;
    const char *in = sbuf == TERN_IN_PLACE ? rbuf : sbuf;
    if (p == 1) {
        coll_copy(s, rbuf, in, n);
        return s->err;
    }
    int rc;
    if (coll_hier_usable(s, COLL_REDUCE, n, &rc))
        return coll_hier_reduce(s, sbuf, rbuf, count, root);
    if (rc) return rc;
    if (coll_shm_usable(s, COLL_REDUCE, n, &rc)) {
        coll_shm_add(s, COLL_SHM_REDUCE, in, r == root ? rbuf : NULL, count, n, root);
        return s->err;
    }
    if (rc) return rc;
    enum coll_alg alg;
    rc = coll_select(COLL_REDUCE, n, p, &alg);
    if (rc) return rc;
    if (alg == COLL_ALG_RABENSEIFNER)
        reduce_rabenseifner(s, in, r == root ? rbuf : NULL, count, root);
    else
        reduce_binomial(s, in, r == root ? rbuf : NULL, count, root);
    return s->err;
}

/* ---- allreduce ------------------------------------------------------------- */

static void allreduce_rd(struct coll_sched *s, char *rbuf, size_t count)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t n = count * s->op.esize;
    int pof2 = coll_pof2_floor(p), rem = p - pof2;
    char *acc = rbuf, *tb = coll_sched_tmp(s, n);
    if (tb == NULL) return;
    int nr = fold_in(s, acc, tb, count, rem);
    if (nr >= 0) {
        for (int m = 1; m < pof2; m <<= 1) {
            int peer = unfold_rank(nr ^ m, rem);
            coll_sendrecv(s, acc, n, peer, tb, n, peer);
            if (peer < r || s->op.commute) {
                coll_reduce_local(s, tb, acc, count);
            } else {
                coll_reduce_local(s, acc, tb, count);
                char *t = acc;
                acc = tb;
                tb = t;
            }
        }
        coll_copy(s, rbuf, acc, n);
    }
    if (r < 2 * rem) {
        if (r % 2)
            coll_send(s, rbuf, n, r - 1);
        else
            coll_recv(s, rbuf, n, r + 1);
        coll_wait(s);
    }
}

static void allreduce_rabenseifner(struct coll_sched *s, char *rbuf, size_t count)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t n = count * s->op.esize;
    struct rs_state st;
    st.pof2 = coll_pof2_floor(p);
    st.rem = p - st.pof2;
    char *tb = coll_sched_tmp(s, n);
    if (tb == NULL) return;
    st.nr = fold_in(s, rbuf, tb, count, st.rem);
    if (st.nr >= 0) {
        rs_halving(s, &st, rbuf, tb, count);
        ag_doubling(s, &st, rbuf, count);
    }
    if (r < 2 * st.rem) {
        if (r % 2)
            coll_send(s, rbuf, n, r - 1);
        else
            coll_recv(s, rbuf, n, r + 1);
        coll_wait(s);
    }
}

static void allreduce_ring(struct coll_sched *s, char *rbuf, size_t count)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t es = s->op.esize;
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    char *tb = coll_sched_tmp(s, (count / (size_t)p + 1) * es);
    if (tb == NULL) return;
    for (int k = 0; k < p - 1; k++) {
        size_t sb = (size_t)((r - k + p) % p), rb = (size_t)((r - k - 1 + p) % p);
        size_t so = blk(sb, count, p), sn = blk(sb + 1, count, p) - so;
        size_t ro = blk(rb, count, p), rn = blk(rb + 1, count, p) - ro;
        coll_sendrecv(s, AT(rbuf, so), sn * es, right, tb, rn * es, left);
        coll_reduce_local(s, tb, AT(rbuf, ro), rn);
    }
    for (int k = 0; k < p - 1; k++) {
        size_t sb = (size_t)((r + 1 - k + p) % p), rb = (size_t)((r - k + p) % p);
        size_t so = blk(sb, count, p), sn = blk(sb + 1, count, p) - so;
        size_t ro = blk(rb, count, p), rn = blk(rb + 1, count, p) - ro;
        coll_sendrecv(s, AT(rbuf, so), sn * es, right, AT(rbuf, ro), rn * es, left);
    }
}

int coll_allreduce(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count)
{
    int p = s->comm->size;
    size_t n = count * s->op.esize;
    if (count == 0) return 0;
    int rc;
    if (p > 1 && coll_hier_usable(s, COLL_ALLREDUCE, n, &rc))
        return coll_hier_allreduce(s, sbuf, rbuf, count);
    if (p > 1 && rc) return rc;
    if (p > 1 && coll_shm_usable(s, COLL_ALLREDUCE, n, &rc)) {
        coll_shm_add(s, COLL_SHM_ALLREDUCE, sbuf == TERN_IN_PLACE ? rbuf : sbuf, rbuf, count, n, 0);
        return s->err;
    }
    if (p > 1 && rc) return rc;
    if (sbuf != TERN_IN_PLACE) coll_copy(s, rbuf, sbuf, n);
    if (p == 1) return s->err;
    enum coll_alg alg;
    rc = coll_select(COLL_ALLREDUCE, n, p, &alg);
    if (rc) return rc;
    if (alg == COLL_ALG_RING && !s->op.commute) alg = COLL_ALG_RABENSEIFNER;
    if (alg == COLL_ALG_RING)
        allreduce_ring(s, rbuf, count);
    else if (alg == COLL_ALG_RABENSEIFNER)
        allreduce_rabenseifner(s, rbuf, count);
    else
        allreduce_rd(s, rbuf, count);
    return s->err;
}

/* ---- reduce_scatter -------------------------------------------------------- */

static void rsc_halving(struct coll_sched *s, const char *in, char *rbuf, const size_t *counts,
                        const size_t *displs, size_t total)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t es = s->op.esize;
    int pof2 = coll_pof2_floor(p), rem = p - pof2;
    char *acc = coll_sched_tmp(s, total * es), *tb = coll_sched_tmp(s, total * es);
    if (s->err) return;
    coll_copy(s, acc, in, total * es);
    int nr = fold_in(s, acc, tb, total, rem);
    if (nr >= 0) {
        /* New rank i owns the blocks of its one or two real ranks, contiguously. */
#define NDISP(i) ((i) >= pof2 ? total : displs[(i) < rem ? 2 * (i) : (i) + rem])
        int send_idx = 0, recv_idx = 0, last_idx = pof2;
        for (int mask = pof2 >> 1; mask > 0; mask >>= 1) {
            int nd = nr ^ mask, peer = unfold_rank(nd, rem);
            int slo, shi, rlo, rhi;
            if (nr < nd) {
                send_idx = recv_idx + mask;
                slo = send_idx, shi = last_idx, rlo = recv_idx, rhi = send_idx;
            } else {
                recv_idx = send_idx + mask;
                slo = send_idx, shi = recv_idx, rlo = recv_idx, rhi = last_idx;
            }
            size_t so = NDISP(slo), sn = NDISP(shi) - so, ro = NDISP(rlo), rn = NDISP(rhi) - ro;
            coll_sendrecv(s, AT(acc, so), sn * es, peer, AT(tb, ro), rn * es, peer);
            coll_reduce_local(s, AT(tb, ro), AT(acc, ro), rn);
            send_idx = recv_idx;
            last_idx = recv_idx + mask;
        }
#undef NDISP
        coll_copy(s, rbuf, AT(acc, displs[r]), counts[r] * es);
        if (r < 2 * rem) {
            coll_send(s, AT(acc, displs[r - 1]), counts[r - 1] * es, r - 1);
            coll_wait(s);
        }
    } else {
        coll_recv(s, rbuf, counts[r] * es, r + 1);
        coll_wait(s);
    }
}

static void rsc_pairwise(struct coll_sched *s, const char *in, char *rbuf, const size_t *counts,
                         const size_t *displs, size_t total)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t es = s->op.esize;
    const char *src = in;
    if (in == rbuf) {
        char *t = coll_sched_tmp(s, total * es);
        if (t == NULL) return;
        coll_copy(s, t, in, total * es);
        src = t;
    }
    char *tb = coll_sched_tmp(s, counts[r] * es);
    if (tb == NULL) return;
    coll_copy(s, rbuf, src + displs[r] * es, counts[r] * es);
    for (int i = 1; i < p; i++) {
        int dst = (r + i) % p, from = (r - i + p) % p;
        coll_sendrecv(s, src + displs[dst] * es, counts[dst] * es, dst, tb, counts[r] * es, from);
        coll_reduce_local(s, tb, rbuf, counts[r]);
    }
}

int coll_reduce_scatter(struct coll_sched *s, const void *sbuf, void *rbuf, const size_t *counts)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t es = s->op.esize;
    const char *in = sbuf == TERN_IN_PLACE ? rbuf : sbuf;
    size_t *displs = coll_sched_tmp(s, (size_t)(p + 1) * sizeof *displs);
    if (displs == NULL) return s->err;
    displs[0] = 0;
    for (int i = 0; i < p; i++)
        displs[i + 1] = displs[i] + counts[i];
    size_t total = displs[p];
    if (total == 0) return 0;
    if (p == 1) {
        coll_copy(s, rbuf, in, total * es);
        return s->err;
    }
    enum coll_alg alg;
    int rc = coll_select(COLL_REDUCE_SCATTER, total * es, p, &alg);
    if (rc) return rc;
    if (!s->op.commute) {
        /* Rank order first: reduce the whole vector to rank 0, then hand out the pieces. */
        char *full = r == 0 ? coll_sched_tmp(s, total * es) : NULL;
        if (s->err) return s->err;
        rc = coll_reduce(s, in, full, total, 0);
        if (rc) return rc;
        coll_wait(s);
        return coll_scatterv(s, full, counts, displs, es, rbuf, counts[r] * es, 0);
    }
    if (alg == COLL_ALG_PAIRWISE)
        rsc_pairwise(s, in, rbuf, counts, displs, total);
    else
        rsc_halving(s, in, rbuf, counts, displs, total);
    return s->err;
}

int coll_reduce_scatter_block(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count)
{
    int p = s->comm->size;
    size_t *counts = coll_sched_tmp(s, (size_t)p * sizeof *counts);
    if (counts == NULL) return s->err;
    for (int i = 0; i < p; i++)
        counts[i] = count;
    return coll_reduce_scatter(s, sbuf, rbuf, counts);
}

/* ---- scan and exscan --------------------------------------------------------- */

/* Recursive doubling: `partial` holds the reduction of the aligned group of ranks seen
 * so far and travels; rbuf takes only what came from lower ranks. */
static void scan_rd(struct coll_sched *s, const char *in, char *rbuf, size_t count, int excl)
{
    int p = s->comm->size, r = s->comm->rank;
    size_t n = count * s->op.esize;
    char *partial = coll_sched_tmp(s, n), *tb = coll_sched_tmp(s, n);
    if (s->err) return;
    coll_copy(s, partial, in, n);
    if (!excl) coll_copy(s, rbuf, in, n);
    int have = !excl; /* rbuf holds something */
    for (int m = 1; m < p; m <<= 1) {
        int dst = r ^ m;
        if (dst >= p) continue;
        coll_sendrecv(s, partial, n, dst, tb, n, dst);
        if (dst < r) {
            if (have)
                coll_reduce_local(s, tb, rbuf, count);
            else
                coll_copy(s, rbuf, tb, n);
            have = 1;
            coll_reduce_local(s, tb, partial, count);
        } else if (s->op.commute) {
            coll_reduce_local(s, tb, partial, count);
        } else {
            coll_reduce_local(s, partial, tb, count);
            char *t = partial;
            partial = tb;
            tb = t;
        }
    }
}

int coll_scan(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count)
{
    if (count == 0) return 0;
    enum coll_alg alg;
    int rc = coll_select(COLL_SCAN, count * s->op.esize, s->comm->size, &alg);
    if (rc) return rc;
    scan_rd(s, sbuf == TERN_IN_PLACE ? rbuf : sbuf, rbuf, count, 0);
    return s->err;
}

int coll_exscan(struct coll_sched *s, const void *sbuf, void *rbuf, size_t count)
{
    if (count == 0 || s->comm->size == 1) return 0;
    enum coll_alg alg;
    int rc = coll_select(COLL_SCAN, count * s->op.esize, s->comm->size, &alg);
    if (rc) return rc;
    scan_rd(s, sbuf == TERN_IN_PLACE ? rbuf : sbuf, rbuf, count, 1);
    return s->err;
}

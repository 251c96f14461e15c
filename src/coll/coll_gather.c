/*
 * coll_gather.c - the data-movement collectives: gather, scatter, allgather, alltoall
 * and their "v" forms.
 *
 *   gather/scatter   binomial tree (log p messages; inner nodes forward whole subtrees
 *                    in virtual-rank order) or linear (root talks to everyone; no extra
 *                    copies, best for large blocks). v forms: linear.
 *   allgather        recursive doubling (powers of two; Bruck otherwise), Bruck
 *                    (ceil(log2 p) rounds for any p, one final rotation), ring (p - 1
 *                    rounds of one block: bandwidth-optimal). v form: ring.
 *   alltoall         Bruck (log p rounds of packed half-buffers: small blocks) or
 *                    pairwise exchange (p - 1 rounds, one block each). v form: pairwise.
 */
#include "coll/coll.h"

static inline int imin(int a, int b)
{
    return a < b ? a : b;
}

/* Blocks held below virtual rank vr in a binomial tree over p ranks (including vr). */
static inline int subtree(int vr, int p)
{
    return vr == 0 ? p : imin(coll_lowbit(vr), p - vr);
}

/* ---- gather ---------------------------------------------------------------- */

static void gather_binomial(struct coll_sched *s, const char *own, char *rbuf, size_t b, int root)
{
    int p = s->comm->size, r = s->comm->rank, vr = (r - root + p) % p;
    int sz = subtree(vr, p);
    int parent = vr ? (vr - coll_lowbit(vr) + root) % p : -1;
    if (vr && sz == 1) {
        coll_send(s, own, b, parent);
        coll_wait(s);
        return;
    }
    char *t = (vr == 0 && root == 0) ? rbuf : coll_sched_tmp(s, (size_t)sz * b);
    if (t == NULL) return;
    coll_copy(s, t, own, b);
    int limit = vr ? coll_lowbit(vr) : p;
    for (int mask = 1; mask < limit && vr + mask < p; mask <<= 1)
        coll_recv(s, t + (size_t)mask * b, (size_t)imin(mask, p - vr - mask) * b,
                  (vr + mask + root) % p);
    coll_wait(s);
    if (vr) {
        coll_send(s, t, (size_t)sz * b, parent);
        coll_wait(s);
    } else if (root) {
        /* t is in virtual-rank order: block v belongs to rank (v + root) % p. */
        coll_copy(s, rbuf + (size_t)root * b, t, (size_t)(p - root) * b);
        coll_copy(s, rbuf, t + (size_t)(p - root) * b, (size_t)root * b);
    }
}

static void gather_linear(struct coll_sched *s, const char *own, char *rbuf, size_t b, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    if (r != root) {
        coll_send(s, own, b, root);
    } else {
        for (int i = 0; i < p; i++)
            if (i != root) coll_recv(s, rbuf + (size_t)i * b, b, i);
        coll_copy(s, rbuf + (size_t)r * b, own, b);
    }
    coll_wait(s);
}

int coll_gather(struct coll_sched *s, const void *sbuf, void *rbuf, size_t bytes, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    if (bytes == 0) return 0;
    const char *own = sbuf == TERN_IN_PLACE ? (char *)rbuf + (size_t)r * bytes : sbuf;
    int rc;
    if (coll_shm_usable(s, COLL_GATHER, bytes * (size_t)p, &rc)) {
        coll_shm_add(s, COLL_SHM_GATHER, sbuf, rbuf, 0, bytes, root);
        return s->err;
    }
    if (rc) return rc;
    enum coll_alg alg;
    rc = coll_select(COLL_GATHER, bytes * (size_t)p, p, &alg);
    if (rc) return rc;
    if (alg == COLL_ALG_BINOMIAL)
        gather_binomial(s, own, rbuf, bytes, root);
    else
        gather_linear(s, own, rbuf, bytes, root);
    return s->err;
}

int coll_gatherv(struct coll_sched *s, const void *sbuf, size_t sbytes, void *rbuf,
                 const size_t *counts, const size_t *displs, size_t unit, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    char *rb = rbuf;
    if (r != root) {
        coll_send(s, sbuf, sbytes, root);
    } else {
        for (int i = 0; i < p; i++)
            if (i != root) coll_recv(s, rb + displs[i] * unit, counts[i] * unit, i);
        if (sbuf != TERN_IN_PLACE) coll_copy(s, rb + displs[r] * unit, sbuf, counts[r] * unit);
    }
    coll_wait(s);
    return s->err;
}

/* ---- scatter --------------------------------------------------------------- */

static void scatter_binomial(struct coll_sched *s, const char *sbuf, char *own, size_t b, int root)
{
    int p = s->comm->size, r = s->comm->rank, vr = (r - root + p) % p;
    int sz = subtree(vr, p);
    const char *t;
    if (vr == 0) {
        if (root == 0) {
            t = sbuf;
        } else {
            char *w = coll_sched_tmp(s, (size_t)p * b);
            if (w == NULL) return;
            coll_copy(s, w, sbuf + (size_t)root * b, (size_t)(p - root) * b);
            coll_copy(s, w + (size_t)(p - root) * b, sbuf, (size_t)root * b);
            t = w;
        }
    } else {
        int parent = (vr - coll_lowbit(vr) + root) % p;
        if (sz == 1) {
            coll_recv(s, own, b, parent);
            coll_wait(s);
            return;
        }
        char *w = coll_sched_tmp(s, (size_t)sz * b);
        if (w == NULL) return;
        coll_recv(s, w, (size_t)sz * b, parent);
        coll_wait(s);
        t = w;
    }
    int top = vr ? coll_lowbit(vr) : 1;
    if (vr == 0)
        while (top < p)
            top <<= 1;
    for (int mask = top >> 1; mask > 0; mask >>= 1) {
        int c = vr + mask;
        if (c < p)
            coll_send(s, t + (size_t)mask * b, (size_t)imin(mask, p - c) * b, (c + root) % p);
    }
    if (own) coll_copy(s, own, t, b);
    coll_wait(s);
}

static void scatter_linear(struct coll_sched *s, const char *sbuf, char *own, size_t b, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    if (r != root) {
        coll_recv(s, own, b, root);
    } else {
        for (int i = 0; i < p; i++)
            if (i != root) coll_send(s, sbuf + (size_t)i * b, b, i);
        if (own) coll_copy(s, own, sbuf + (size_t)r * b, b);
    }
    coll_wait(s);
}

int coll_scatter(struct coll_sched *s, const void *sbuf, void *rbuf, size_t bytes, int root)
{
    int p = s->comm->size;
    if (bytes == 0) return 0;
    char *own = rbuf == TERN_IN_PLACE ? NULL : rbuf;
    int rc;
    if (coll_shm_usable(s, COLL_SCATTER, bytes * (size_t)p, &rc)) {
        coll_shm_add(s, COLL_SHM_SCATTER, sbuf, rbuf, 0, bytes, root);
        return s->err;
    }
    if (rc) return rc;
    enum coll_alg alg;
    rc = coll_select(COLL_SCATTER, bytes * (size_t)p, p, &alg);
    if (rc) return rc;
    if (alg == COLL_ALG_BINOMIAL)
        scatter_binomial(s, sbuf, own, bytes, root);
    else
        scatter_linear(s, sbuf, own, bytes, root);
    return s->err;
}

int coll_scatterv(struct coll_sched *s, const void *sbuf, const size_t *counts,
                  const size_t *displs, size_t unit, void *rbuf, size_t rbytes, int root)
{
    int p = s->comm->size, r = s->comm->rank;
    const char *sb = sbuf;
    if (r != root) {
        coll_recv(s, rbuf, rbytes, root);
    } else {
        for (int i = 0; i < p; i++)
            if (i != root) coll_send(s, sb + displs[i] * unit, counts[i] * unit, i);
        if (rbuf != TERN_IN_PLACE) coll_copy(s, rbuf, sb + displs[r] * unit, counts[r] * unit);
    }
    coll_wait(s);
    return s->err;
}

/* ---- allgather ------------------------------------------------------------- */

static void allgather_ring(struct coll_sched *s, char *rbuf, const size_t *counts,
                           const size_t *displs, size_t unit, size_t b)
{
    int p = s->comm->size, r = s->comm->rank;
    int left = (r - 1 + p) % p, right = (r + 1) % p;
    for (int k = 0; k < p - 1; k++) {
        int sb = (r - k + p) % p, rb = (r - k - 1 + p) % p;
        if (counts)
            coll_sendrecv(s, rbuf + displs[sb] * unit, counts[sb] * unit, right,
                          rbuf + displs[rb] * unit, counts[rb] * unit, left);
        else
            coll_sendrecv(s, rbuf + (size_t)sb * b, b, right, rbuf + (size_t)rb * b, b, left);
    }
}

static void allgather_rd(struct coll_sched *s, char *rbuf, size_t b)
{
    int p = s->comm->size, r = s->comm->rank;
    for (int m = 1; m < p; m <<= 1) {
        int partner = r ^ m;
        size_t mine = (size_t)(r & ~(m - 1)), theirs = (size_t)(partner & ~(m - 1));
        coll_sendrecv(s, rbuf + mine * b, (size_t)m * b, partner, rbuf + theirs * b, (size_t)m * b,
                      partner);
    }
}

static void allgather_bruck(struct coll_sched *s, const char *own, char *rbuf, size_t b)
{
    int p = s->comm->size, r = s->comm->rank;
    char *t = coll_sched_tmp(s, (size_t)p * b);
    if (t == NULL) return;
    coll_copy(s, t, own, b);
    for (int d = 1; d < p; d <<= 1) {
        size_t cnt = (size_t)imin(d, p - d);
        coll_sendrecv(s, t, cnt * b, (r - d + p) % p, t + (size_t)d * b, cnt * b, (r + d) % p);
    }
    /* t[i] came from rank (r + i) % p. */
    coll_copy(s, rbuf + (size_t)r * b, t, (size_t)(p - r) * b);
    coll_copy(s, rbuf, t + (size_t)(p - r) * b, (size_t)r * b);
}

int coll_allgather(struct coll_sched *s, const void *sbuf, void *rbuf, size_t bytes)
{
    int p = s->comm->size, r = s->comm->rank;
    if (bytes == 0) return 0;
    char *rb = rbuf;
    const char *own = sbuf == TERN_IN_PLACE ? rb + (size_t)r * bytes : sbuf;
    int rc;
    if (coll_shm_usable(s, COLL_ALLGATHER, bytes * (size_t)p, &rc)) {
        coll_shm_add(s, COLL_SHM_ALLGATHER, own, rb, 0, bytes, 0);
        return s->err;
    }
    if (rc) return rc;
    enum coll_alg alg;
    rc = coll_select(COLL_ALLGATHER, bytes * (size_t)p, p, &alg);
    if (rc) return rc;
    if (alg == COLL_ALG_RD && (p & (p - 1))) alg = COLL_ALG_BRUCK;
    if (alg == COLL_ALG_BRUCK) {
        allgather_bruck(s, own, rb, bytes);
        return s->err;
    }
    coll_copy(s, rb + (size_t)r * bytes, own, bytes);
    if (alg == COLL_ALG_RD)
        allgather_rd(s, rb, bytes);
    else
        allgather_ring(s, rb, NULL, NULL, 1, bytes);
    return s->err;
}

int coll_allgatherv(struct coll_sched *s, const void *sbuf, size_t sbytes, void *rbuf,
                    const size_t *counts, const size_t *displs, size_t unit)
{
    int r = s->comm->rank;
    char *rb = rbuf;
    if (sbuf != TERN_IN_PLACE) coll_copy(s, rb + displs[r] * unit, sbuf, sbytes);
    allgather_ring(s, rb, counts, displs, unit, 0);
    return s->err;
}

/* ---- alltoall -------------------------------------------------------------- */

static void alltoall_pairwise(struct coll_sched *s, const char *src, char *rbuf, const size_t *sc,
                              const size_t *sd, const size_t *rc, const size_t *rd, size_t unit,
                              size_t b)
{
    int p = s->comm->size, r = s->comm->rank;
#define SOFF(i) (sc ? sd[i] * unit : (size_t)(i)*b)
#define SLEN(i) (sc ? sc[i] * unit : b)
#define ROFF(i) (rc ? rd[i] * unit : (size_t)(i)*b)
#define RLEN(i) (rc ? rc[i] * unit : b)
    coll_copy(s, rbuf + ROFF(r), src + SOFF(r), RLEN(r));
    for (int i = 1; i < p; i++) {
        int dst = (r + i) % p, from = (r - i + p) % p;
        coll_sendrecv(s, src + SOFF(dst), SLEN(dst), dst, rbuf + ROFF(from), RLEN(from), from);
    }
#undef SOFF
#undef SLEN
#undef ROFF
#undef RLEN
}

/* Linear in windows: receives from and sends to TERN_COLL_ALLTOALL_WINDOW peers at once,
 * then one wait. Pairwise exchange waits p - 1 times, and with more ranks than cores every wait is
 * a trip through the scheduler until that one partner runs; a window lets whichever
 * peers run make progress meanwhile. The window bounds the unexpected messages a rank
 * can be sent at once. */
static void alltoall_linear(struct coll_sched *s, const char *src, char *rbuf, size_t b)
{
    int p = s->comm->size, r = s->comm->rank, win = (int)util_tun.coll_alltoall_window;
    coll_copy(s, rbuf + (size_t)r * b, src + (size_t)r * b, b);
    for (int lo = 1; lo < p; lo += win) {
        int hi = p - lo > win ? lo + win : p;
        for (int i = lo; i < hi; i++) {
            int from = (r - i + p) % p;
            coll_recv(s, rbuf + (size_t)from * b, b, from);
        }
        for (int i = lo; i < hi; i++) {
            int dst = (r + i) % p;
            coll_send(s, src + (size_t)dst * b, b, dst);
        }
        coll_wait(s);
    }
}

static void alltoall_bruck(struct coll_sched *s, const char *src, char *rbuf, size_t b)
{
    int p = s->comm->size, r = s->comm->rank;
    char *t = coll_sched_tmp(s, (size_t)p * b);
    char *pk = coll_sched_tmp(s, (size_t)p * b);
    char *rk = coll_sched_tmp(s, (size_t)p * b);
    if (t == NULL || pk == NULL || rk == NULL) return;
    /* t[i] = the block for rank (r + i) % p. */
    coll_copy(s, t, src + (size_t)r * b, (size_t)(p - r) * b);
    coll_copy(s, t + (size_t)(p - r) * b, src, (size_t)r * b);
    for (int d = 1; d < p; d <<= 1) {
        size_t j = 0;
        for (int i = 1; i < p; i++)
            if (i & d) coll_copy(s, pk + (j++) * b, t + (size_t)i * b, b);
        coll_sendrecv(s, pk, j * b, (r + d) % p, rk, j * b, (r - d + p) % p);
        j = 0;
        for (int i = 1; i < p; i++)
            if (i & d) coll_copy(s, t + (size_t)i * b, rk + (j++) * b, b);
    }
    /* Now t[i] came from rank (r - i) % p. */
    for (int i = 0; i < p; i++)
        coll_copy(s, rbuf + (size_t)((r - i + p) % p) * b, t + (size_t)i * b, b);
}

int coll_alltoall(struct coll_sched *s, const void *sbuf, void *rbuf, size_t bytes)
{
    int p = s->comm->size;
    if (bytes == 0) return 0;
    int rc;
    if (coll_shm_usable(s, COLL_ALLTOALL, bytes * (size_t)p, &rc)) {
        coll_shm_add(s, COLL_SHM_ALLTOALL, sbuf == TERN_IN_PLACE ? rbuf : sbuf, rbuf, 0, bytes, 0);
        return s->err;
    }
    if (rc) return rc;
    enum coll_alg alg;
    rc = coll_select(COLL_ALLTOALL, bytes, p, &alg);
    if (rc) return rc;
    if (alg == COLL_ALG_BRUCK) {
        /* Bruck reads every input block (into scratch) before it writes any output. */
        alltoall_bruck(s, sbuf == TERN_IN_PLACE ? rbuf : sbuf, rbuf, bytes);
        return s->err;
    }
    const char *src = sbuf;
    if (sbuf == TERN_IN_PLACE) {
        char *t = coll_sched_tmp(s, (size_t)p * bytes);
        if (t == NULL) return s->err;
        coll_copy(s, t, rbuf, (size_t)p * bytes);
        src = t;
    }
    /* Only the windowed schedule waits on many partners at once, any of which running
     * moves it on: its waits yield when ranks outnumber cores (CORE_WAIT_BULK). Bruck's
     * and pairwise's wait on one partner each: yielding there hands the CPU to whoever
     * else runs (measured with 8 busy loops beside 32-64 ranks: Bruck 3x slower). */
    if (alg == COLL_ALG_LINEAR) {
        s->bulk = 1;
        alltoall_linear(s, src, rbuf, bytes);
    } else
        alltoall_pairwise(s, src, rbuf, NULL, NULL, NULL, NULL, 1, bytes);
    return s->err;
}

int coll_alltoallv(struct coll_sched *s, const void *sbuf, const size_t *scounts,
                   const size_t *sdispls, void *rbuf, const size_t *rcounts, const size_t *rdispls,
                   size_t unit)
{
    int p = s->comm->size;
    const char *src = sbuf;
    if (sbuf == TERN_IN_PLACE) {
        size_t extent = 0;
        for (int i = 0; i < p; i++)
            if ((rdispls[i] + rcounts[i]) * unit > extent)
                extent = (rdispls[i] + rcounts[i]) * unit;
        char *t = coll_sched_tmp(s, extent);
        if (t == NULL) return s->err;
        coll_copy(s, t, rbuf, extent);
        src = t;
        scounts = rcounts;
        sdispls = rdispls;
    }
    alltoall_pairwise(s, src, rbuf, scounts, sdispls, rcounts, rdispls, unit, 0);
    return s->err;
}

/*
 * coll_bcast.c - barrier and broadcast.
 *
 *   barrier   dissemination: ceil(log2 p) rounds, in round k every process signals
 *             rank + 2^k and waits for rank - 2^k. Works for any p.
 *   bcast     binomial tree (latency: log p messages of the whole buffer), or for large
 *             buffers van de Geijn's scatter + allgather: the root scatters p chunks down a
 *             binomial tree, then the chunks go round a ring (any p) or are exchanged by
 *             recursive doubling (powers of two; others use the ring), about 2n bytes
 *             moved per process instead of n log p.
 * Ranks are rotated so the root is virtual rank 0.
 */
#include "coll/coll.h"

int coll_barrier(struct coll_sched *s)
{
    int p = s->comm->size, r = s->comm->rank, rc;
    if (coll_hier_usable(s, COLL_BARRIER, 0, &rc)) return coll_hier_barrier(s);
    if (rc) return rc;
    if (coll_shm_usable(s, COLL_BARRIER, 0, &rc)) {
        coll_shm_add(s, COLL_SHM_BARRIER, NULL, NULL, 0, 0, 0);
        return s->err;
    }
    if (rc) return rc;
    for (int k = 1; k < p; k <<= 1) {
        coll_token_recv(s, (r - k + p) % p);
        coll_token_send(s, (r + k) % p);
        coll_wait(s);
    }
    return s->err;
}

static void bcast_binomial(struct coll_sched *s, void *buf, size_t n, int root)
{
    int p = s->comm->size, vr = (s->comm->rank - root + p) % p;
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            coll_recv(s, buf, n, (vr - mask + root) % p);
            coll_wait(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < p) coll_send(s, buf, n, (vr + mask + root) % p);
    coll_wait(s);
}

static inline size_t chunk_at(size_t v, size_t ss, size_t n)
{
    size_t o = v * ss;
    return o < n ? o : n;
}

/* Scatter chunk v (ss bytes, the last ones shorter or empty) to virtual rank v. */
static void bcast_scatter(struct coll_sched *s, char *buf, size_t n, int root, size_t ss)
{
    int p = s->comm->size, vr = (s->comm->rank - root + p) % p;
    int mask = 1;
    while (mask < p) {
        if (vr & mask) {
            size_t lo = chunk_at((size_t)vr, ss, n), hi = chunk_at((size_t)vr + mask, ss, n);
            coll_recv(s, buf + lo, hi - lo, (vr - mask + root) % p);
            coll_wait(s);
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int c = vr + mask;
        if (c >= p) continue;
        size_t lo = chunk_at((size_t)c, ss, n), hi = chunk_at((size_t)c + mask, ss, n);
        coll_send(s, buf + lo, hi - lo, (c + root) % p);
    }
    coll_wait(s);
}

static void bcast_allgather_ring(struct coll_sched *s, char *buf, size_t n, int root, size_t ss)
{
    int p = s->comm->size, vr = (s->comm->rank - root + p) % p;
    int left = (vr - 1 + p) % p, right = (vr + 1) % p;
    for (int k = 0; k < p - 1; k++) {
        size_t sb = (size_t)((vr - k + p) % p), rb = (size_t)((vr - k - 1 + p) % p);
        size_t slo = chunk_at(sb, ss, n), shi = chunk_at(sb + 1, ss, n);
        size_t rlo = chunk_at(rb, ss, n), rhi = chunk_at(rb + 1, ss, n);
        coll_sendrecv(s, buf + slo, shi - slo, (right + root) % p, buf + rlo, rhi - rlo,
                      (left + root) % p);
    }
}

static void bcast_allgather_rd(struct coll_sched *s, char *buf, size_t n, int root, size_t ss)
{
    int p = s->comm->size, vr = (s->comm->rank - root + p) % p;
    for (int m = 1; m < p; m <<= 1) {
        int partner = vr ^ m;
        size_t mb = (size_t)(vr & ~(m - 1)), pb = (size_t)(partner & ~(m - 1));
        size_t slo = chunk_at(mb, ss, n), shi = chunk_at(mb + m, ss, n);
        size_t rlo = chunk_at(pb, ss, n), rhi = chunk_at(pb + m, ss, n);
        coll_sendrecv(s, buf + slo, shi - slo, (partner + root) % p, buf + rlo, rhi - rlo,
                      (partner + root) % p);
    }
}

int coll_bcast(struct coll_sched *s, void *buf, size_t bytes, int root)
{
    int p = s->comm->size;
    if (p == 1 || bytes == 0) return 0;
    int rc;
    if (coll_hier_usable(s, COLL_BCAST, bytes, &rc)) return coll_hier_bcast(s, buf, bytes, root);
    if (rc) return rc;
    if (coll_shm_usable(s, COLL_BCAST, bytes, &rc)) {
        coll_shm_add(s, COLL_SHM_BCAST, NULL, buf, 0, bytes, root);
        return s->err;
    }
    if (rc) return rc;
    enum coll_alg alg;
    rc = coll_select(COLL_BCAST, bytes, p, &alg);
    if (rc) return rc;
    if (alg == COLL_ALG_SCATTER_RD && (p & (p - 1))) alg = COLL_ALG_SCATTER_RING;
    if (alg == COLL_ALG_BINOMIAL) {
        bcast_binomial(s, buf, bytes, root);
        return s->err;
    }
    size_t ss = (bytes + (size_t)p - 1) / (size_t)p;
    bcast_scatter(s, buf, bytes, root, ss);
    if (alg == COLL_ALG_SCATTER_RD)
        bcast_allgather_rd(s, buf, bytes, root, ss);
    else
        bcast_allgather_ring(s, buf, bytes, root, ss);
    return s->err;
}

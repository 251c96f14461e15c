/*
 * mpi_rma_target.c - the target side of MPI one-sided communication: the active-message
 * handlers that apply requests to this rank's window memory (puts, gets, accumulates,
 * compare-and-swap), grant and release passive-target locks, and count PSCW posts and
 * completes; and the handler of replies, which fills the origin's reply slots.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_win_impl.h"
#include "util/log.h"
#include "util/tunables.h"

/* ---- the target side: active messages ------------------------------------------------ */

/* Window memory at target offset off (an address for dynamic windows), or NULL when
 * [off, off+len) is not in the window. */
static char *rma_taddr(struct mpi_win *w, uint64_t off, uint64_t len)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* [off, off+len) may span regions attached next to each other (MPICH's
         * win_dynamic_rma_flush_get does): covered piece by piece. */
        if (off + len < off) return NULL;
        uint64_t at = off, end = off + len;
        do {
            int found = 0;
            for (int i = 0; i < w->nreg && !found; i++) {
                uint64_t b = (uint64_t)(uintptr_t)w->reg[i].base, e = b + w->reg[i].len;
                if (at >= b && at < e) {
                    at = e;
                    found = 1;
                } else if (at == b && len == 0) {
                    found = 1;
                }
            }
            if (!found) return NULL;
        } while (at < end);
        return (char *)(uintptr_t)off;
    }
    if (off + len < off || off + len > (uint64_t)w->wsize) return NULL;
    return (char *)w->base + off;
}

static void rma_reply(int dest, const struct rma_hdr *h, const void *data, size_t len)
{
    struct iovec v[2] = {{(void *)h, sizeof *h}, {(void *)data, len}};
    int rc = core_am_sendv(dest, RMA_AM_REP, v, 2);
    if (rc && rc != TERN_ERR_PEER_FAILED)
        UTIL_ERROR("RMA: cannot answer rank %d: %s", dest, tern_strerror(rc));
}

int rma_try_lock(struct rma_ctl *c, int excl)
{
    uint32_t v = atomic_load_explicit(&c->lock, memory_order_relaxed);
    if (excl) {
        if (v != 0) return 0;
        return atomic_compare_exchange_strong_explicit(&c->lock, &v, RMA_EXCL, memory_order_acquire,
                                                       memory_order_relaxed);
    }
    if (v & RMA_EXCL) return 0;
    return atomic_compare_exchange_strong_explicit(&c->lock, &v, v + 1, memory_order_acquire,
                                                   memory_order_relaxed);
}

void rma_unlock_word(struct rma_ctl *c)
{
    uint32_t v = atomic_load_explicit(&c->lock, memory_order_relaxed);
    if (v == RMA_EXCL)
        atomic_store_explicit(&c->lock, 0, memory_order_release);
    else
        atomic_fetch_sub_explicit(&c->lock, 1, memory_order_release);
}

/* Grant queued remote lock requests in arrival order while the lock allows. */
static int rma_grant_queued(struct mpi_win *w)
{
    int n = 0;
    while (w->lockq && rma_try_lock(w->myctl, w->lockq->excl)) {
        struct rma_lockq *q = w->lockq;
        w->lockq = q->next;
        if (w->lockq == NULL) {
            w->lockq_tail = NULL;
            rma_nqueued--;
        }
        struct rma_hdr h = {.ctx = w->tc->ctx, .kind = RK_LOCK_ACK};
        rma_reply(q->src, &h, NULL, 0);
        free(q);
        n++;
    }
    return n;
}

int rma_hook(void)
{
    if (rma_nqueued == 0) return 0;
    int n = 0;
    for (int i = 1; i < rma_nwins; i++)
        if (rma_wins[i] && rma_wins[i]->lockq) n += rma_grant_queued(rma_wins[i]);
    return n;
}

static void rma_am_one(int src, const void *payload, size_t len)
{
    struct rma_hdr h;
    if (len < sizeof h) goto bad;
    memcpy(&h, payload, sizeof h);
    struct mpi_win *w = rma_by_ctx[h.ctx];
    if (w == NULL || w->myctl == NULL) goto bad; /* no such window (or it failed) */
    int crank = core_comm_rank_of(w->tc, src);
    if (crank < 0) goto bad;
    const char *p = (const char *)payload + sizeof h;
    size_t rest = len - sizeof h;
    if (h.nseg > RMA_MAXSEG || rest < h.nseg * sizeof(struct rma_seg)) goto bad;
    struct rma_seg seg[RMA_MAXSEG];
    memcpy(seg, p, h.nseg * sizeof *seg);
    p += h.nseg * sizeof *seg;
    rest -= h.nseg * sizeof *seg;
    size_t total = 0;
    for (uint32_t i = 0; i < h.nseg; i++) {
        if (rma_taddr(w, seg[i].off, seg[i].len) == NULL) {
            UTIL_ERROR("RMA: rank %d accessed outside window %d (offset %llu, %llu bytes)", src,
                       w->handle, (unsigned long long)seg[i].off, (unsigned long long)seg[i].len);
            goto bad;
        }
        total += seg[i].len;
    }
    struct rma_acc a;
    if ((h.kind == RK_ACC || h.kind == RK_GACC || h.kind == RK_CAS) &&
        rma_acc_resolve(h.op, h.dt, &a) != MPI_SUCCESS)
        goto bad;
    a.owned = rma_owner_updates(w);
    struct rma_hdr r = {.ctx = h.ctx, .kind = RK_DATA, .token = h.token, .roff = h.roff};
    switch (h.kind) {
    case RK_PUT:
    case RK_ACC:
        if (rest != total) goto bad;
        if (h.kind == RK_ACC && a.split) { /* whole elements, atomically */
            struct rma_pair pair = {0};
            rma_acc_lock(w->myctl);
            for (uint32_t i = 0; i < h.nseg; p += seg[i].len, i++)
                rma_pair_feed(&pair, &a, rma_taddr(w, seg[i].off, seg[i].len), p, seg[i].len, NULL);
            rma_acc_unlock(w->myctl);
            return;
        }
        for (uint32_t i = 0; i < h.nseg; i++) {
            char *t = rma_taddr(w, seg[i].off, seg[i].len);
            if (h.kind == RK_PUT)
                memcpy(t, p, seg[i].len);
            else
                rma_apply(w->myctl, &a, t, p, seg[i].len, NULL);
            p += seg[i].len;
        }
        return;
    case RK_GET:
    case RK_GACC:
        if (total > sizeof rma_scratch || (h.kind == RK_GACC && rest != total) ||
            (h.kind == RK_GET && rest != 0))
            goto bad;
        struct rma_pair pair = {0};
        int split = h.kind == RK_GACC && a.split;
        if (split) rma_acc_lock(w->myctl); /* whole elements, atomically */
        for (uint32_t i = 0, o = 0; i < h.nseg; o += (uint32_t)seg[i].len, i++) {
            char *t = rma_taddr(w, seg[i].off, seg[i].len);
            if (split) {
                rma_pair_feed(&pair, &a, t, p + o, seg[i].len, rma_scratch + o);
                continue;
            }
            if (h.kind == RK_GET)
                memcpy(rma_scratch + o, t, seg[i].len);
            else
                rma_apply(w->myctl, &a, t, p + o, seg[i].len, rma_scratch + o);
        }
        if (split) rma_acc_unlock(w->myctl);
        rma_reply(src, &r, rma_scratch, total);
        return;
    case RK_CAS:
        if (h.nseg != 1 || total != a.esize || rest != 2 * total) goto bad;
        rma_cas(w->myctl, a.esize, rma_taddr(w, seg[0].off, seg[0].len), p, p + total, rma_scratch);
        rma_reply(src, &r, rma_scratch, total);
        return;
    case RK_LOCK: {
        if (w->lockq == NULL && rma_try_lock(w->myctl, h.lock)) {
            r.kind = RK_LOCK_ACK;
            rma_reply(src, &r, NULL, 0);
            return;
        }
        struct rma_lockq *q = malloc(sizeof *q);
        if (q == NULL) {
            UTIL_ERROR("RMA: out of memory queueing a lock request from rank %d", src);
            return;
        }
        *q = (struct rma_lockq){NULL, src, h.lock};
        if (w->lockq_tail)
            w->lockq_tail->next = q;
        else {
            w->lockq = q;
            rma_nqueued++;
        }
        w->lockq_tail = q;
        return;
    }
    case RK_UNLOCK:
        rma_unlock_word(w->myctl);
        r.kind = RK_ACK;
        rma_reply(src, &r, NULL, 0);
        rma_grant_queued(w);
        return;
    case RK_FLUSH:
        r.kind = RK_ACK;
        rma_reply(src, &r, NULL, 0);
        return;
    case RK_POST:
        w->p[crank].posts++;
        return;
    case RK_COMPLETE:
        w->p[crank].completes++;
        return;
    default:
        break;
    }
bad:
    UTIL_ERROR("RMA: dropping a malformed request (%zu bytes) from rank %d", len, src);
}

/* An RMA request frame holds one or more records (small ones are batched), in order. */
void rma_am_req(int src, const void *payload, size_t len)
{
    const char *p = payload;
    while (len >= sizeof(struct rma_hdr)) {
        struct rma_hdr h;
        memcpy(&h, p, sizeof h);
        size_t rl = sizeof h + (size_t)h.len;
        if (rl > len) break;
        rma_am_one(src, p, rl);
        p += rl;
        len -= rl;
    }
    if (len) UTIL_ERROR("RMA: dropping %zu bytes of a malformed request from rank %d", len, src);
}

void rma_am_rep(int src, const void *payload, size_t len)
{
    struct rma_hdr h;
    if (len < sizeof h) goto bad;
    memcpy(&h, payload, sizeof h);
    struct mpi_win *w = rma_by_ctx[h.ctx];
    if (w == NULL) goto bad;
    int crank = core_comm_rank_of(w->tc, src);
    if (crank < 0) goto bad;
    struct rma_peer *pe = &w->p[crank];
    switch (h.kind) {
    case RK_DATA: {
        if (h.token >= rma_nfetches || !rma_fetches[h.token].used) goto bad;
        struct rma_fetch *f = &rma_fetches[h.token];
        size_t n = len - sizeof h;
        if (n > f->left || f->peer != pe) goto bad;
        rma_unpack_at(f->buf, f->t, f->count, h.roff, (const char *)payload + sizeof h, n);
        f->left -= n;
        if (f->left == 0) {
            f->used = 0;
            mpi_type_unref((struct mpi_type *)f->t);
            pe->fetching--;
            if (f->req) core_req_complete(f->req, TERN_OK);
        }
        return;
    }
    case RK_LOCK_ACK:
        pe->granted = 1;
        return;
    case RK_ACK:
        pe->acks++;
        return;
    default:
        break;
    }
bad:
    UTIL_ERROR("RMA: dropping a malformed reply (%zu bytes) from rank %d", len, src);
}

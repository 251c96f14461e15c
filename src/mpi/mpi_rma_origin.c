/*
 * mpi_rma_origin.c - the origin side of MPI one-sided communication: walking typed
 * buffers, MPI_Put and MPI_Get (directly on mapped memory, by cross-memory attach, or by
 * active messages to the target, small ones batched), the reply slots of fetching
 * operations, and the request-based MPI_Rput, MPI_Rget, MPI_Raccumulate and
 * MPI_Rget_accumulate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_win_impl.h"
#include "util/log.h"
#include "util/tunables.h"

/* The request of the MPI_R* call under way (rma_am_op attaches it to its reply slot). */
static core_req_t *rma_cur_req;
static int rma_cur_used;

static void it_start(struct rma_it *it, const struct mpi_type *t, MPI_Count count)
{
    *it = (struct rma_it){.t = t, .n = count};
    if (t->contig) {
        it->clen = (MPI_Aint)count * (MPI_Aint)t->size;
        it->n = it->clen > 0 ? 1 : 0;
    }
}

/* Remaining bytes of the current piece, and where they are; 0 at the end. */
static size_t it_cur(struct rma_it *it, MPI_Aint *off)
{
    const struct mpi_type *t = it->t;
    while (it->i < it->n) {
        MPI_Aint poff, plen;
        if (t->contig) {
            poff = t->contig_off;
            plen = it->clen;
        } else {
            poff = (MPI_Aint)it->i * mpi_type_extent(t) + t->blk[it->b].off;
            plen = t->blk[it->b].len;
        }
        if (it->in < plen) {
            *off = poff + it->in;
            return (size_t)(plen - it->in);
        }
        it->in = 0;
        if (t->contig) {
            it->i = it->n;
        } else if (++it->b == t->nblk) {
            it->b = 0;
            it->i++;
        }
    }
    return 0;
}

/* Skip the first `n` bytes of the stream. */
static void it_skip(struct rma_it *it, size_t n)
{
    MPI_Aint off;
    while (n > 0) {
        size_t r = it_cur(it, &off);
        if (r == 0) return;
        size_t k = r < n ? r : n;
        it_adv(it, k);
        n -= k;
    }
}

/* Copy `len` bytes of a packed stream into the typed buffer, from stream offset `at`. */
void rma_unpack_at(char *buf, const struct mpi_type *t, MPI_Count count, size_t at, const char *src,
                   size_t len)
{
    struct rma_it it;
    it_start(&it, t, count);
    it_skip(&it, at);
    MPI_Aint off;
    while (len > 0) {
        size_t r = it_cur(&it, &off);
        if (r == 0) return;
        size_t k = r < len ? r : len;
        memcpy(buf + off, src, k);
        it_adv(&it, k);
        src += k;
        len -= k;
    }
}

/* Copy the next `len` bytes of the typed buffer's stream out (packing). */
static void rma_pack_next(const char *buf, struct rma_it *it, char *dst, size_t len)
{
    MPI_Aint off;
    while (len > 0) {
        size_t r = it_cur(it, &off);
        if (r == 0) return;
        size_t k = r < len ? r : len;
        memcpy(dst, buf + off, k);
        it_adv(it, k);
        dst += k;
        len -= k;
    }
}

/* ---- the origin side --------------------------------------------------------------------- */

static const char rma_zero[1 << 16]; /* origin data of MPI_NO_OP (ignored by the target) */

/* Bytes of data one AM (request or reply) to world rank `world` may carry, whole elements. */
static size_t rma_room(int world)
{
    size_t r = core_am_room(world) - sizeof(struct rma_hdr);
    if (r > sizeof rma_scratch) r = sizeof rma_scratch;
    if (r > sizeof rma_zero) r = sizeof rma_zero;
    return r;
}

#define RMA_BATCH_REC 2048 /* records up to this size wait in the batch */

/* Send what waits in r's batch. */
static int rma_batch_flush(struct mpi_win *w, int r)
{
    struct rma_peer *pe = &w->p[r];
    if (pe->blen == 0) return 0;
    struct iovec v = {pe->batch, pe->blen};
    pe->blen = 0;
    return core_am_sendv(pe->world, RMA_AM_REQ, &v, 1);
}

/*
 * Send one request record (v[0] is its header, whose len this sets). Small Puts and
 * Accumulates (batch) are gathered into one frame per target, sent when it fills or
 * before any other request to that target: a run of small puts costs one frame, not
 * one system call each. Order is kept. Returns a tern error code.
 */
int rma_send_req(struct mpi_win *w, int r, struct iovec *v, int n, int batch)
{
    struct rma_peer *pe = &w->p[r];
    size_t len = 0;
    for (int i = 0; i < n; i++)
        len += v[i].iov_len;
    ((struct rma_hdr *)v[0].iov_base)->len = (uint32_t)(len - sizeof(struct rma_hdr));
    size_t room = core_am_room(pe->world);
    int rc;
    if (batch && len <= RMA_BATCH_REC && room >= 4 * RMA_BATCH_REC) {
        if (pe->blen + len > room && (rc = rma_batch_flush(w, r))) return rc;
        if (pe->batch == NULL && (pe->batch = malloc(room)) == NULL) return TERN_ERR_NOMEM;
        core_iov_copy(pe->batch + pe->blen, v, n);
        pe->blen += len;
        return 0;
    }
    if ((rc = rma_batch_flush(w, r))) return rc;
    return core_am_sendv(pe->world, RMA_AM_REQ, v, n);
}

uint32_t rma_fetch_slot(void)
{
    for (uint32_t i = 0; i < rma_nfetches; i++)
        if (!rma_fetches[i].used) return i;
    uint32_t cap = rma_nfetches ? 2 * rma_nfetches : 16;
    struct rma_fetch *t = realloc(rma_fetches, cap * sizeof *t);
    if (t == NULL) return UINT32_MAX;
    memset(t + rma_nfetches, 0, (cap - rma_nfetches) * sizeof *t);
    rma_fetches = t;
    uint32_t i = rma_nfetches;
    rma_nfetches = cap;
    return i;
}

/*
 * One operation to target rank r by active messages. kind: RK_PUT, RK_ACC (origin data
 * to the target), RK_GET (target data into the result buffer), RK_GACC (both).
 * `toff` is the target offset (an address in dynamic windows) of the target type's origin.
 */
int rma_am_op(struct mpi_win *w, int r, int kind, const char *obuf, const struct mpi_type *ot,
              MPI_Count ocount, uint64_t toff, const struct mpi_type *tt, MPI_Count tcount,
              const struct rma_acc *a, char *rbuf, const struct mpi_type *rt, MPI_Count rcount)
{
    struct rma_peer *pe = &w->p[r];
    size_t room = rma_room(pe->world);
    size_t es = a ? a->esize : 1;
    int data = kind != RK_GET, fetch = kind == RK_GET || kind == RK_GACC;
    int noop = a && a->op == MPI_NO_OP;
    size_t total = (size_t)tcount * (size_t)tt->size;
    if (total == 0) return MPI_SUCCESS;
    uint32_t token = 0;
    if (fetch) {
        token = rma_fetch_slot();
        if (token == UINT32_MAX) return MPI_ERR_NO_MEM;
        mpi_type_ref((struct mpi_type *)rt);
        rma_fetches[token] = (struct rma_fetch){1, pe, rbuf, rt, rcount, total, rma_cur_req};
        rma_cur_used |= rma_cur_req != NULL;
        pe->fetching++;
    }
    char *pack = NULL;
    if (data && !noop && !ot->contig && (pack = malloc(room)) == NULL) return MPI_ERR_NO_MEM;
    struct rma_it ti, oi;
    it_start(&ti, tt, tcount);
    if (data && !noop) it_start(&oi, ot, ocount);
    size_t stream = 0;
    int rc = 0;
    for (;;) {
        struct rma_seg seg[RMA_MAXSEG];
        uint32_t ns = 0;
        size_t dlen = 0;
        while (ns < RMA_MAXSEG) {
            MPI_Aint to;
            size_t rem = it_cur(&ti, &to);
            if (rem == 0) break;
            size_t used = dlen + (data ? (ns + 1) * sizeof *seg : 0);
            /* A split pair type's record holds whole elements (the target applies each
             * at once): it ends on an element's end while room for one more is left,
             * and a segment never runs past the element it is in. */
            if (a && a->split && dlen % es == 0 &&
                (ns + 2 > RMA_MAXSEG || used + 2 * sizeof *seg + es > room))
                break;
            if (used >= room) break;
            size_t avail = (room - used) / es * es;
            if (avail == 0) break;
            size_t n = rem < avail ? rem : avail;
            if (a && a->split && n > es - dlen % es) n = es - dlen % es;
            seg[ns++] = (struct rma_seg){toff + (uint64_t)to, n};
            it_adv(&ti, n);
            dlen += n;
        }
        if (ns == 0) break;
        struct rma_hdr h = {.ctx = w->tc->ctx,
                            .kind = (uint8_t)kind,
                            .op = a ? a->op : 0,
                            .dt = a ? a->dt : 0,
                            .nseg = ns,
                            .token = token,
                            .roff = stream};
        struct iovec v[3] = {{&h, sizeof h}, {seg, ns * sizeof *seg}, {NULL, 0}};
        if (data) {
            if (noop)
                v[2].iov_base = (void *)rma_zero;
            else if (ot->contig)
                v[2].iov_base = (char *)obuf + ot->contig_off + stream;
            else {
                rma_pack_next(obuf, &oi, pack, dlen);
                v[2].iov_base = pack;
            }
            v[2].iov_len = dlen;
        }
        rc = rma_send_req(w, r, v, 3, kind == RK_PUT || kind == RK_ACC);
        if (rc) break;
        stream += dlen;
        pe->am_ops++;
        /* Let a full transport drain before queueing more copies of the data. */
        if (core.npending) core_progress();
    }
    free(pack);
    if (rc && fetch) { /* nothing more will come for the unsent part: fail the slot */
        if (rma_fetches[token].req) core_req_complete(rma_fetches[token].req, rc);
        rma_fetches[token].used = 0;
        mpi_type_unref((struct mpi_type *)rt);
        pe->fetching--;
    }
    return rc ? mpi_from_tern(rc) : MPI_SUCCESS;
}

/* The same operation on memory mapped here: tbase + offsets of the target type. */
void rma_direct_op(struct rma_ctl *ctl, int kind, char *obuf, const struct mpi_type *ot,
                   MPI_Count ocount, char *tbase, const struct mpi_type *tt, MPI_Count tcount,
                   const struct rma_acc *a, char *res)
{
    struct rma_it oi, ti;
    it_start(&oi, ot, ocount);
    it_start(&ti, tt, tcount);
    size_t s = 0;
    struct rma_pair pair = {0};
    int split = a && a->split && (kind == RK_ACC || kind == RK_GACC);
    if (split) rma_acc_lock(ctl); /* whole elements, atomically (rma_pair_feed) */
    for (;;) {
        MPI_Aint oo, to;
        size_t ro = it_cur(&oi, &oo), rt = it_cur(&ti, &to);
        if (ro == 0 || rt == 0) break;
        size_t n = ro < rt ? ro : rt;
        if (split) {
            rma_pair_feed(&pair, a, tbase + to, obuf + oo, n, res ? res + s : NULL);
            it_adv(&oi, n);
            it_adv(&ti, n);
            s += n;
            continue;
        }
        switch (kind) {
        case RK_PUT:
            memcpy(tbase + to, obuf + oo, n);
            break;
        case RK_GET:
            memcpy(obuf + oo, tbase + to, n);
            break;
        case RK_ACC:
            rma_apply(ctl, a, tbase + to, obuf + oo, n, NULL);
            break;
        default:
            rma_apply(ctl, a, tbase + to, obuf + oo, n, res + s);
            break;
        }
        it_adv(&oi, n);
        it_adv(&ti, n);
        s += n;
    }
    if (split) rma_acc_unlock(ctl);
}

/* Put or Get by cross-memory attach. TERN_ERR_UNSUPPORTED when the kernel forbids it. */
static int rma_cma_op(struct rma_peer *pe, int write, char *obuf, const struct mpi_type *ot,
                      MPI_Count ocount, uint64_t tbase, const struct mpi_type *tt, MPI_Count tcount)
{
    struct rma_it oi, ti;
    it_start(&oi, ot, ocount);
    it_start(&ti, tt, tcount);
    for (;;) {
        struct iovec l[64], rm[64];
        int k = 0;
        size_t sum = 0;
        while (k < 64) {
            MPI_Aint oo, to;
            size_t ro = it_cur(&oi, &oo), rt = it_cur(&ti, &to);
            if (ro == 0 || rt == 0) break;
            size_t n = ro < rt ? ro : rt;
            l[k] = (struct iovec){obuf + oo, n};
            rm[k] = (struct iovec){(void *)(uintptr_t)(tbase + (uint64_t)to), n};
            k++;
            sum += n;
            it_adv(&oi, n);
            it_adv(&ti, n);
        }
        if (k == 0) return 0;
        for (int i = 0; i < k;) { /* short transfers: go on where the kernel stopped */
            ssize_t got = write ? process_vm_writev(pe->pid, l + i, (unsigned long)(k - i), rm + i,
                                                    (unsigned long)(k - i), 0)
                                : process_vm_readv(pe->pid, l + i, (unsigned long)(k - i), rm + i,
                                                   (unsigned long)(k - i), 0);
            if (got < 0) {
                if (errno == EPERM || errno == ENOSYS) return TERN_ERR_UNSUPPORTED;
                if (errno == ESRCH) return TERN_ERR_PEER_FAILED;
                return TERN_ERR_INVAL;
            }
            if (got == 0) return TERN_ERR_INVAL;
            size_t g = (size_t)got;
            while (i < k && g >= l[i].iov_len) {
                g -= l[i].iov_len;
                i++;
            }
            if (i < k && g) {
                l[i].iov_base = (char *)l[i].iov_base + g;
                l[i].iov_len -= g;
                rm[i].iov_base = (char *)rm[i].iov_base + g;
                rm[i].iov_len -= g;
            }
        }
        (void)sum;
    }
}

/* Common checks of an RMA operation. *skip: target is MPI_PROC_NULL. */
int rma_chk_target(struct mpi_win *w, int r, MPI_Aint disp, const struct mpi_type *tt,
                   MPI_Count tcount, uint64_t *toff)
{
    if (r < 0 || r >= w->size) return MPI_ERR_RANK;
    if (disp < 0) return MPI_ERR_DISP;
    struct rma_peer *pe = &w->p[r];
    *toff = (uint64_t)disp * (uint64_t)pe->disp_unit;
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC || tcount == 0 || tt->size == 0) return MPI_SUCCESS;
    MPI_Aint lo = (MPI_Aint)*toff + tt->true_lb;
    MPI_Aint hi = (MPI_Aint)*toff + (MPI_Aint)(tcount - 1) * mpi_type_extent(tt) + tt->true_ub;
    if (lo < 0 || hi > pe->size) return MPI_ERR_RMA_RANGE;
    return MPI_SUCCESS;
}

/* Memory of target r mapped here at offset toff, or NULL. */
char *rma_direct_base(struct mpi_win *w, int r, uint64_t toff)
{
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) return r == w->rank ? (char *)(uintptr_t)toff : NULL;
    return w->p[r].direct ? w->p[r].direct + toff : NULL;
}

int rma_chk_types(MPI_Count oc, MPI_Datatype odt, MPI_Count tc, MPI_Datatype tdt,
                  struct mpi_type **ot, struct mpi_type **tt)
{
    if (oc < 0 || tc < 0) return MPI_ERR_COUNT;
    if ((*ot = mpi_type_ok(odt)) == NULL || (*tt = mpi_type_ok(tdt)) == NULL) return MPI_ERR_TYPE;
    if ((MPI_Count)(*ot)->size * oc != (MPI_Count)(*tt)->size * tc) return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

static int rma_putget(const char *fn, int kind, void *obuf, int oc, MPI_Datatype odt, int r,
                      MPI_Aint disp, int tc, MPI_Datatype tdt, MPI_Win win)
{
    WIN_CHECK(fn, win);
    struct mpi_type *ot, *tt;
    uint64_t toff;
    int rc = rma_chk_types(oc, odt, tc, tdt, &ot, &tt);
    if (rc) return mpi_err(w->comm, fn, rc);
    if (r == MPI_PROC_NULL) return MPI_SUCCESS;
    if ((rc = rma_chk_target(w, r, disp, tt, tc, &toff))) return mpi_err(w->comm, fn, rc);
    if (tt->size == 0 || tc == 0) return MPI_SUCCESS;
    struct rma_peer *pe = &w->p[r];
    char *d = rma_direct_base(w, r, toff);
    if (d) {
        rma_direct_op(pe->ctl, kind, obuf, ot, oc, d, tt, tc, NULL, NULL);
        return MPI_SUCCESS;
    }
    if (pe->cma) {
        uint64_t tb = w->flavor == MPI_WIN_FLAVOR_DYNAMIC ? toff : pe->base + toff;
        int trc = rma_cma_op(pe, kind == RK_PUT, obuf, ot, oc, tb, tt, tc);
        if (trc == 0) return MPI_SUCCESS;
        if (trc != TERN_ERR_UNSUPPORTED)
            return mpi_err(w->comm, fn,
                           trc == TERN_ERR_INVAL ? MPI_ERR_RMA_RANGE : mpi_from_tern(trc));
        pe->cma = 0; /* the kernel forbids it: active messages from now on */
    }
    rc = kind == RK_PUT ? rma_am_op(w, r, RK_PUT, obuf, ot, oc, toff, tt, tc, NULL, NULL, NULL, 0)
                        : rma_am_op(w, r, RK_GET, NULL, NULL, 0, toff, tt, tc, NULL, obuf, ot, oc);
    return rc ? mpi_err(w->comm, fn, rc) : MPI_SUCCESS;
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    CORE_CS_SCOPE();
    return rma_putget("MPI_Put", RK_PUT, (void *)origin_addr, origin_count, origin_datatype,
                      target_rank, target_disp, target_count, target_datatype, win);
}
MPI_ALIAS(Put)

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    CORE_CS_SCOPE();
    return rma_putget("MPI_Get", RK_GET, origin_addr, origin_count, origin_datatype, target_rank,
                      target_disp, target_count, target_datatype, win);
}
MPI_ALIAS(Get)

/* ---- request-based operations: MPI_Rput, MPI_Rget, MPI_Raccumulate, MPI_Rget_accumulate
 * Only within a passive-target epoch (a lock on the target or MPI_Win_lock_all), else
 * MPI_ERR_RMA_SYNC. The request completes at local completion: for Rput and Raccumulate
 * when the origin buffer may be reused, which is when the call returns (the data is
 * stored, written by CMA, or copied into active messages); for Rget and Rget_accumulate
 * when the result has arrived: at once on shared memory and CMA, else when the reply
 * slot the operation used is filled (rma_am_rep) or fails. The request is a core request
 * nobody else knows (state POSTED, no matching context) that those events complete. */

/* A target that died leaves its reply slots unfilled: fail their requests. */
static void rma_req_peer_failed(int world)
{
    for (uint32_t i = 0; i < rma_nfetches; i++) {
        struct rma_fetch *f = &rma_fetches[i];
        if (f->used && f->req && f->peer->world == world) {
            core_req_complete(f->req, TERN_ERR_PEER_FAILED);
            f->req = NULL;
        }
    }
}

static int rma_req_begin(struct mpi_win *w, int target, MPI_Request *request, struct mpi_req **out)
{
    if (request == NULL) return MPI_ERR_ARG;
    if (target >= 0 && target < w->size && !w->lock_all && !w->p[target].locked)
        return MPI_ERR_RMA_SYNC;
    /* MPI_PROC_NULL: a no-op in any epoch, including one MPI_Win_lock(..., MPI_PROC_NULL,
     * ...) opened, which names no target to record */
    if (core_failure_hook_add(rma_req_peer_failed)) return MPI_ERR_INTERN;
    struct mpi_req *mr = mpi_req_new(MPI_RK_COLL, w->comm);
    if (mr == NULL) return MPI_ERR_NO_MEM;
    core_req_t *r = core_req_alloc(CORE_REQ_COLL);
    if (r == NULL) {
        mpi_req_release(mr);
        return MPI_ERR_NO_MEM;
    }
    r->state = CORE_RS_POSTED;
    r->ctx = CORE_CTX_NONE;
    mr->r = r;
    rma_cur_req = r;
    rma_cur_used = 0;
    *out = mr;
    return MPI_SUCCESS;
}

/* After the operation (rc: its result, already reported through the error handler). */
static int rma_req_end(struct mpi_req *mr, int rc, MPI_Request *request)
{
    rma_cur_req = NULL;
    if (rc) { /* a failed operation left no reply slot holding the request */
        core_req_free(mr->r);
        mr->r = NULL;
        mpi_req_release(mr);
        return rc;
    }
    if (!rma_cur_used) core_req_complete(mr->r, TERN_OK); /* done when the call returns */
    *request = mr->handle;
    return MPI_SUCCESS;
}

#define RMA_REQ_BEGIN(fn, win, target, request)                                                    \
    WIN_CHECK(fn, win);                                                                            \
    struct mpi_req *mr;                                                                            \
    int rrc = rma_req_begin(w, target, request, &mr);                                              \
    if (rrc) return mpi_err(w->comm, fn, rrc)

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Rput";
    RMA_REQ_BEGIN(fn, win, target_rank, request);
    rrc = rma_putget(fn, RK_PUT, (void *)origin_addr, origin_count, origin_datatype, target_rank,
                     target_disp, target_count, target_datatype, win);
    return rma_req_end(mr, rrc, request);
}
MPI_ALIAS(Rput)

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Rget";
    RMA_REQ_BEGIN(fn, win, target_rank, request);
    rrc = rma_putget(fn, RK_GET, origin_addr, origin_count, origin_datatype, target_rank,
                     target_disp, target_count, target_datatype, win);
    return rma_req_end(mr, rrc, request);
}
MPI_ALIAS(Rget)

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Raccumulate";
    RMA_REQ_BEGIN(fn, win, target_rank, request);
    rrc = rma_accumulate(fn, origin_addr, origin_count, origin_datatype, NULL, 0, MPI_DATATYPE_NULL,
                         target_rank, target_disp, target_count, target_datatype, op, win, 0);
    return rma_req_end(mr, rrc, request);
}
MPI_ALIAS(Raccumulate)

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Rget_accumulate";
    RMA_REQ_BEGIN(fn, win, target_rank, request);
    rrc = rma_accumulate(fn, origin_addr, origin_count, origin_datatype, result_addr, result_count,
                         result_datatype, target_rank, target_disp, target_count, target_datatype,
                         op, win, 1);
    return rma_req_end(mr, rrc, request);
}
MPI_ALIAS(Rget_accumulate)

/*
 * layout.c - non-contiguous buffers (struct core_layout): positions in their byte
 * stream, the pieces of a range, scatter and gather, and the vectored single-copy pull
 * of a rendezvous message between two layouts.
 *
 * Why here and not in the MPI layer: the data of a non-contiguous message should go
 * from the sender's blocks to the receiver's with no packed copy in between, and only
 * the core knows when bytes arrive (eager frame, streamed DATA, transport placing,
 * getv). The MPI layer hands its flattened datatype over and is done.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core_tl.h"
#include "util/mem.h"

/* Move c forward by up to `left` bytes, block by block; stops early at the start of an
 * instance when `to_inst`. Returns the bytes still to go. */
static size_t core_cur_step(const struct core_layout *L, struct core_cur *c, size_t left,
                            int to_inst)
{
    while (left > 0 && !(to_inst && c->b == 0 && c->in == 0)) {
        size_t room = (size_t)L->blk[c->b].len - c->in;
        if (left < room) {
            c->in += left;
            c->pos += left;
            return 0;
        }
        left -= room;
        c->pos += room;
        c->in = 0;
        if (++c->b == L->nblk) {
            c->b = 0;
            c->inst++;
        }
    }
    return left;
}

void core_cur_seek(const struct core_layout *L, struct core_cur *c, size_t pos)
{
    if (pos < c->pos) *c = (struct core_cur){0}; /* back: from the start */
    if (L->size == 0 || pos == c->pos) return;
    size_t left = core_cur_step(L, c, pos - c->pos, 1); /* finish this instance */
    size_t k = left / L->size;                          /* whole instances at once */
    c->inst += k;
    c->pos += k * L->size;
    core_cur_step(L, c, left - k * L->size, 0);
}

int core_cur_iov(const struct core_layout *L, char *buf, struct core_cur *c, size_t max,
                 struct iovec *iov, int nmax, size_t *bytes)
{
    int n = 0;
    size_t got = 0;
    while (got < max && L->size) {
        const struct core_blk *bk = &L->blk[c->b];
        size_t room = (size_t)bk->len - c->in;
        if (room > max - got) room = max - got;
        if (room) {
            /* in integers: buf may be MPI_BOTTOM (NULL) with absolute block offsets */
            char *p = (char *)((uintptr_t)buf + (uintptr_t)((intptr_t)c->inst * L->extent +
                                                            bk->off + (intptr_t)c->in));
            if (n && (char *)iov[n - 1].iov_base + iov[n - 1].iov_len == p) {
                iov[n - 1].iov_len += room;
            } else {
                if (n == nmax) break;
                iov[n++] = (struct iovec){p, room};
            }
        }
        got += room;
        c->pos += room;
        c->in += room;
        if (c->in == (size_t)bk->len) {
            c->in = 0;
            if (++c->b == L->nblk) {
                c->b = 0;
                c->inst++;
            }
        }
    }
    *bytes = got;
    return n;
}

void core_lay_scatter(const struct core_layout *L, char *buf, struct core_cur *c, size_t pos,
                      const void *src, size_t n)
{
    const char *s = src;
    core_cur_seek(L, c, pos);
    while (n > 0) {
        struct iovec v[64];
        size_t got;
        int k = core_cur_iov(L, buf, c, n, v, 64, &got);
        for (int i = 0; i < k; i++) {
            util_copy(v[i].iov_base, s, v[i].iov_len);
            s += v[i].iov_len;
        }
        n -= got;
        if (got == 0) break;
    }
}

void core_lay_gather(const struct core_layout *L, const char *buf, struct core_cur *c, size_t pos,
                     void *dst, size_t n)
{
    char *d = dst;
    core_cur_seek(L, c, pos);
    while (n > 0) {
        struct iovec v[64];
        size_t got;
        int k = core_cur_iov(L, (char *)buf, c, n, v, 64, &got);
        for (int i = 0; i < k; i++) {
            util_copy(d, v[i].iov_base, v[i].iov_len);
            d += v[i].iov_len;
        }
        n -= got;
        if (got == 0) break;
    }
}

void core_iov_copy(void *dst, const struct iovec *iov, int iovcnt)
{
    tl_iov_copy(dst, iov, iovcnt); /* the transports' own helper: one copy loop for both */
}

static void *core_scratch_buf;
static size_t core_scratch_cap;

void *core_scratch(size_t n)
{
    if (n > core_scratch_cap) {
        void *p = realloc(core_scratch_buf, n);
        if (p == NULL) return NULL;
        core_scratch_buf = p;
        core_scratch_cap = n;
    }
    return core_scratch_buf;
}

void core_scratch_free(void)
{
    free(core_scratch_buf);
    core_scratch_buf = NULL;
    core_scratch_cap = 0;
}

/* ---- the vectored pull ---------------------------------------------------------------- */

/* The sender's side of a pull: its layout, whose block list lives in its memory and is
 * read in windows of CORE_RWIN blocks with the transport's get(). */
#define CORE_RWIN 512

struct core_remote {
    int src;
    uint64_t base;        /* the sender's buffer */
    uint64_t blkaddr;     /* its block list */
    struct core_layout L; /* blk points at win; indexes are relative to w0 */
    struct core_blk win[CORE_RWIN];
    int w0, wn; /* window: blocks [w0, w0 + wn) of the sender's list */
    int nblk;   /* the sender's real block count */
};

/* Pieces of the sender's stream from cursor c (block indexes absolute), at most `max`
 * bytes and nmax pieces, reading windows of its block list as needed. */
static int core_remote_iov(struct core_remote *R, struct core_cur *c, size_t max, struct iovec *iov,
                           int nmax, size_t *bytes, int *err)
{
    int n = 0;
    size_t got = 0;
    while (got < max) {
        if (c->b < R->w0 || c->b >= R->w0 + R->wn) {
            int k = R->nblk - c->b < CORE_RWIN ? R->nblk - c->b : CORE_RWIN;
            int rc = core.peers[R->src].tl->get(R->src, R->win,
                                                R->blkaddr + (uint64_t)c->b * sizeof *R->win,
                                                (size_t)k * sizeof *R->win);
            if (rc) {
                *err = rc;
                break;
            }
            R->w0 = c->b;
            R->wn = k;
        }
        const struct core_blk *bk = &R->win[c->b - R->w0];
        size_t room = (size_t)bk->len - c->in;
        if (room > max - got) room = max - got;
        if (room) {
            uintptr_t p = (uintptr_t)R->base +
                          (uintptr_t)((intptr_t)c->inst * R->L.extent + bk->off + (intptr_t)c->in);
            if (n && (uintptr_t)iov[n - 1].iov_base + iov[n - 1].iov_len == p) {
                iov[n - 1].iov_len += room;
            } else {
                if (n == nmax) break;
                iov[n++] = (struct iovec){(void *)p, room};
            }
        }
        got += room;
        c->pos += room;
        c->in += room;
        if (c->in == (size_t)bk->len) {
            c->in = 0;
            if (++c->b == R->nblk) {
                c->b = 0;
                c->inst++;
            }
        }
    }
    *bytes = got;
    return n;
}

/* My side as a layout: r's own, or its plain buffer as one block. */
int core_lay_get(int src, core_req_t *r, const struct core_rlay *rl, uint64_t addr, size_t n)
{
    const struct tl_ops *tl = core.peers[src].tl;
    struct core_blk one = {0, (intptr_t)n};
    struct core_layout plain = {&one, 1, (intptr_t)n, n};
    const struct core_layout *mine = r->lay ? r->lay : &plain;
    struct core_remote *R = NULL;
    if (rl && rl->nblk > 0 && rl->size > 0) {
        R = core_scratch(sizeof *R); /* 8 KB of window: not on the stack */
        if (R == NULL) return TERN_ERR_NOMEM;
        R->src = src;
        R->base = addr;
        R->blkaddr = rl->blk;
        R->L = (struct core_layout){R->win, (int)rl->nblk, (intptr_t)rl->extent, rl->size};
        R->w0 = R->wn = 0;
        R->nblk = (int)rl->nblk;
    }
    static struct iovec lv[TL_GETV_MAX_IOV], rv[TL_GETV_MAX_IOV];
    struct core_cur lc = {0}, rc = {0};
    size_t done = 0;
    while (done < n) {
        struct core_cur lsave = lc;
        size_t lb, rb;
        int nl = core_cur_iov(mine, (char *)r->buf, &lc, n - done, lv, TL_GETV_MAX_IOV, &lb);
        int nr, err = 0;
        if (R) {
            nr = core_remote_iov(R, &rc, lb, rv, TL_GETV_MAX_IOV, &rb, &err);
            if (err) return err;
        } else {
            rv[0] = (struct iovec){(void *)(uintptr_t)(addr + done), lb};
            nr = 1;
            rb = lb;
        }
        if (rb < lb) { /* the sender's side ran out of pieces first: trim mine to match */
            lc = lsave;
            nl = core_cur_iov(mine, (char *)r->buf, &lc, rb, lv, TL_GETV_MAX_IOV, &lb);
        }
        if (lb == 0) return TERN_ERR_INTERNAL;
        int e = tl->getv(src, lv, nl, rv, nr, lb);
        if (e) return e;
        done += lb;
    }
    return 0;
}

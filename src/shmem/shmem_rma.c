/*
 * shmem_rma.c - one-sided put, get, atomics and signals, and their completion (fence,
 * quiet).
 *
 * Two paths, chosen per operation by where the target object is:
 *  - direct: the target's heap is mapped here (a PE of this node on shm, or myself): a
 *    put is a memcpy, an atomic a CPU atomic on the mapped word. Nothing is outstanding
 *    afterwards, so quiet has nothing to wait for.
 *  - messages: a request active message (OSH_AM_REQ) to the target, whose progress
 *    engine applies it and answers (OSH_AM_REP): an ack for puts and non-fetching
 *    atomics (quiet counts them), the data for gets, the old value for fetching atomics.
 *    Frames to one PE arrive in order and are applied in order, which is what fence asks.
 *    Large transfers go in fragments of what one frame holds (core_am_room).
 * Gets and fetching atomics wait in a slot (indexed by the id their request carries).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shmem/shmem_impl.h"
#include "util/log.h"
#include "util/mem.h"

enum osh_op { OSH_OP_PUT = 1, OSH_OP_GET, OSH_OP_AMO };
enum osh_rep_op { OSH_REP_ACK = 1, OSH_REP_DATA, OSH_REP_VAL };

/* Apply an atomic of size 4 or 8 bytes to local memory; returns the old value. */
static uint64_t osh_amo_apply(int op, void *p, size_t size, uint64_t v1, uint64_t v2);
/* Wait until no request to pe is outstanding. */
static void osh_quiet_pe(int pe);

/* A request. PUT: payload follows (nelems elements of esize, packed); GET: the reply
 * carries `first` back so it lands at dest + first elements. */
struct osh_msg {
    uint8_t op;
    uint8_t kind;
    uint8_t amo;  /* enum osh_amo_op */
    uint8_t size; /* AMO: 4 or 8 */
    uint32_t id;  /* reply slot, or OSH_NO_SLOT */
    uint64_t off;
    uint64_t nelems;
    uint64_t esize;
    int64_t stride; /* bytes between elements at the target */
    uint64_t first; /* GET: index of the first element within the slot */
    uint64_t v1, v2;
};

struct osh_rep {
    uint8_t op;
    uint8_t pad[3];
    uint32_t id;
    uint64_t first; /* DATA: first element index; ACK: how many requests */
    uint64_t val;
};

/* ---- accounting ---------------------------------------------------------------------- */

static inline void osh_count(int pe, uint64_t n)
{
    osh.nout += n;
    osh.pe_out[pe] += n;
    if (osh.base[pe]) osh.nout_direct += n;
}

static inline void osh_uncount(int pe, uint64_t n)
{
    if (n > osh.pe_out[pe]) n = osh.pe_out[pe]; /* after a failure reset */
    osh.nout -= n;
    osh.pe_out[pe] -= n;
    if (osh.base[pe]) osh.nout_direct -= n;
}

static int osh_pe_below(const void *arg)
{
    int pe = (int)(intptr_t)arg;
    return osh.pe_out[pe] < OSH_WINDOW / 2;
}

static int osh_pe_idle(const void *arg)
{
    int pe = (int)(intptr_t)arg;
    return osh.pe_out[pe] == 0;
}

static int osh_all_idle(const void *arg)
{
    (void)arg;
    return osh.nout == 0;
}

/* Send one request to pe, counted (an ack or reply will come). */
static void osh_send(int pe, const struct iovec *iov, int n)
{
    if (osh.pe_out[pe] >= OSH_WINDOW) {
        int rc = core_block(osh_pe_below, (const void *)(intptr_t)pe);
        if (rc) osh_error(rc);
    }
    int rc = core_am_sendv(pe, OSH_AM_REQ, iov, n);
    if (rc) {
        osh_error(rc);
        return;
    }
    osh_count(pe, 1);
}

/* Payload bytes of one request frame to pe. */
static size_t osh_room(int pe)
{
    return core_am_room(pe) - sizeof(struct osh_msg);
}

/* ---- reply slots --------------------------------------------------------------------- */

static uint32_t osh_slot_new(int pe, char *dest, size_t esize, ptrdiff_t dstride, size_t bytes,
                             int nbi)
{
    if (osh.slot_free == OSH_NO_SLOT) {
        uint32_t n = osh.nslots ? osh.nslots * 2 : 64;
        struct osh_slot *s = realloc(osh.slots, n * sizeof *s);
        if (s == NULL) osh_fatal("shmem", TERN_ERR_NOMEM, "out of memory for reply slots");
        for (uint32_t i = osh.nslots; i < n; i++) {
            s[i].used = 0;
            s[i].next_free = i + 1 < n ? i + 1 : osh.slot_free;
        }
        osh.slot_free = osh.nslots;
        osh.slots = s;
        osh.nslots = n;
    }
    uint32_t id = osh.slot_free;
    struct osh_slot *s = &osh.slots[id];
    osh.slot_free = s->next_free;
    *s = (struct osh_slot){.dest = dest,
                           .esize = esize,
                           .dstride = dstride,
                           .remaining = bytes,
                           .pe = pe,
                           .used = 1,
                           .nbi = nbi,
                           .next_free = OSH_NO_SLOT};
    return id;
}

static void osh_slot_free(uint32_t id)
{
    osh.slots[id].used = 0;
    osh.slots[id].next_free = osh.slot_free;
    osh.slot_free = id;
}

static int osh_slot_done(const void *arg)
{
    return osh.slots[(uint32_t)(uintptr_t)arg].done;
}

/* Wait for slot id, free it, return its error. */
static int osh_slot_wait(uint32_t id)
{
    int rc = core_block(osh_slot_done, (const void *)(uintptr_t)id);
    if (rc == 0) rc = osh.slots[id].err;
    if (!osh.slots[id].done) {
        /* The wait itself failed (launcher gone): the reply may still come; let the
         * handler free the slot then. */
        osh.slots[id].nbi = 1;
        osh.slots[id].dest = NULL;
    } else {
        osh_slot_free(id);
    }
    if (rc) osh_error(rc);
    return rc;
}

/* ---- the target side ------------------------------------------------------------------ */

/* The address of [off, off + extent) of this PE's object of `kind`, or NULL if the range
 * is not inside it (a request that would write outside the heap or the data segment). */
static char *osh_target(int kind, uint64_t off, uint64_t extent)
{
    if (kind == OSH_HEAP) {
        if (off > osh.heap_size || extent > osh.heap_size - off) return NULL;
        return osh.heap + off;
    }
    uintptr_t a = osh.load_base + off;
    for (int i = 0; i < osh.ndata; i++)
        if (a >= osh.data_lo[i] && a <= osh.data_hi[i] && extent <= osh.data_hi[i] - a)
            return (char *)a;
    return NULL;
}

static void osh_reply(int dest, struct osh_rep *r, const void *data, size_t len)
{
    struct iovec iov[2] = {{r, sizeof *r}, {(void *)(uintptr_t)data, len}};
    int rc = core_am_sendv(dest, OSH_AM_REP, iov, len ? 2 : 1);
    if (rc && rc != TERN_ERR_PEER_FAILED)
        UTIL_ERROR("shmem: cannot answer PE %d: %s", dest, tern_strerror(rc));
}

/* Bytes spanned by n elements of esize, stride apart. */
static uint64_t osh_extent(uint64_t n, uint64_t esize, int64_t stride)
{
    return n == 0 ? 0 : (n - 1) * (uint64_t)stride + esize;
}

static void osh_am_req(int src, const void *payload, size_t len)
{
    struct osh_msg m;
    if (len < sizeof m || !osh.up) {
        UTIL_ERROR("shmem: dropping a request of %zu bytes from PE %d", len, src);
        return;
    }
    memcpy(&m, payload, sizeof m);
    const char *data = (const char *)payload + sizeof m;
    size_t dlen = len - sizeof m;
    struct osh_rep r = {.op = OSH_REP_ACK, .id = m.id, .first = 1};
    switch (m.op) {
    case OSH_OP_PUT: {
        char *p = m.esize && m.stride > 0 && dlen == m.nelems * m.esize
                      ? osh_target(m.kind, m.off, osh_extent(m.nelems, m.esize, m.stride))
                      : NULL;
        if (p == NULL) {
            UTIL_ERROR("shmem: PE %d put outside this PE's symmetric memory; dropped", src);
        } else if ((uint64_t)m.stride == m.esize) {
            util_copy(p, data, dlen);
        } else {
            for (uint64_t i = 0; i < m.nelems; i++)
                memcpy(p + i * (uint64_t)m.stride, data + i * m.esize, m.esize);
        }
        osh_reply(src, &r, NULL, 0);
        return;
    }
    case OSH_OP_GET: {
        const char *p = m.esize && m.stride > 0
                            ? osh_target(m.kind, m.off, osh_extent(m.nelems, m.esize, m.stride))
                            : NULL;
        r.op = OSH_REP_DATA;
        if (p == NULL) {
            UTIL_ERROR("shmem: PE %d got from outside this PE's symmetric memory", src);
            /* Answer with zeros so the getter does not wait forever. */
        }
        size_t per = (core_am_room(src) - sizeof r) / m.esize;
        if (per == 0) per = 1;
        char buf[4096];
        for (uint64_t i = 0; i < m.nelems;) {
            uint64_t k = m.nelems - i < per ? m.nelems - i : per;
            r.first = m.first + i;
            if (p && (uint64_t)m.stride == m.esize) {
                osh_reply(src, &r, p + i * m.esize, k * m.esize);
            } else {
                /* Pack strided elements (or zeros) a buffer at a time. */
                uint64_t kk = k;
                if (kk * m.esize > sizeof buf) kk = sizeof buf / m.esize ? sizeof buf / m.esize : 1;
                char *tmp = kk * m.esize > sizeof buf ? malloc(kk * m.esize) : buf;
                if (tmp == NULL) {
                    UTIL_ERROR("shmem: out of memory answering a get");
                    return;
                }
                for (uint64_t j = 0; j < kk; j++) {
                    if (p)
                        memcpy(tmp + j * m.esize, p + (i + j) * (uint64_t)m.stride, m.esize);
                    else
                        memset(tmp + j * m.esize, 0, m.esize);
                }
                osh_reply(src, &r, tmp, kk * m.esize);
                if (tmp != buf) free(tmp);
                k = kk;
            }
            i += k;
        }
        return;
    }
    case OSH_OP_AMO: {
        char *p = (m.size == 4 || m.size == 8) ? osh_target(m.kind, m.off, m.size) : NULL;
        uint64_t old = 0;
        if (p == NULL || ((uintptr_t)p & (m.size - 1))) {
            UTIL_ERROR("shmem: PE %d atomic outside this PE's symmetric memory; dropped", src);
        } else {
            old = osh_amo_apply(m.amo, p, m.size, m.v1, m.v2);
        }
        if (m.id != OSH_NO_SLOT) {
            r.op = OSH_REP_VAL;
            r.val = old;
        }
        osh_reply(src, &r, NULL, 0);
        return;
    }
    default:
        UTIL_ERROR("shmem: unknown request %u from PE %d", (unsigned)m.op, src);
    }
}

/* ---- the issuing side ---------------------------------------------------------------- */

static void osh_slot_finish(uint32_t id, struct osh_slot *s)
{
    s->done = 1;
    osh_uncount(s->pe, 1);
    if (s->nbi) osh_slot_free(id);
}

static void osh_am_rep(int src, const void *payload, size_t len)
{
    struct osh_rep r;
    if (len < sizeof r) return;
    memcpy(&r, payload, sizeof r);
    const char *data = (const char *)payload + sizeof r;
    size_t dlen = len - sizeof r;
    if (r.op == OSH_REP_ACK) {
        osh_uncount(src, r.first);
        return;
    }
    if (r.id >= osh.nslots || !osh.slots[r.id].used || osh.slots[r.id].pe != src) {
        UTIL_ERROR("shmem: unexpected reply from PE %d", src); /* e.g. after a failed wait */
        return;
    }
    struct osh_slot *s = &osh.slots[r.id];
    if (r.op == OSH_REP_VAL) {
        s->val = r.val;
        osh_slot_finish(r.id, s);
        return;
    }
    if (s->dest) {
        if ((size_t)s->dstride == s->esize) {
            util_copy(s->dest + r.first * s->esize, data, dlen);
        } else {
            size_t n = dlen / s->esize;
            for (size_t i = 0; i < n; i++)
                memcpy(s->dest + (r.first + i) * s->dstride, data + i * s->esize, s->esize);
        }
    }
    s->remaining -= dlen < s->remaining ? dlen : s->remaining;
    if (s->remaining == 0) osh_slot_finish(r.id, s);
}

/* A PE died: what waits on it ends now. */
static void osh_peer_failed(int rank)
{
    if (!osh.up) return;
    for (uint32_t i = 0; i < osh.nslots; i++) {
        struct osh_slot *s = &osh.slots[i];
        if (!s->used || s->done || s->pe != rank) continue;
        s->err = TERN_ERR_PEER_FAILED;
        s->done = 1;
        if (s->nbi) osh_slot_free(i);
    }
    osh_uncount(rank, osh.pe_out[rank]);
    osh_error(TERN_ERR_PEER_FAILED);
}

int osh_rma_init(void)
{
    osh.pe_out = calloc((size_t)osh.npes, sizeof *osh.pe_out);
    if (osh.pe_out == NULL) return TERN_ERR_NOMEM;
    osh.slot_free = OSH_NO_SLOT;
    int rc = core_am_register(OSH_AM_REQ, osh_am_req);
    if (rc == 0) rc = core_am_register(OSH_AM_REP, osh_am_rep);
    if (rc == 0) rc = core_failure_hook_add(osh_peer_failed);
    return rc;
}

void osh_rma_release(void)
{
    free(osh.pe_out);
    osh.pe_out = NULL;
    free(osh.slots);
    osh.slots = NULL;
    osh.nslots = 0;
    osh.slot_free = OSH_NO_SLOT;
    osh.nout = osh.nout_direct = 0;
}

/* ---- put and get ------------------------------------------------------------------------ */

static void osh_copy_strided(char *d, const char *s, size_t n, size_t esize, ptrdiff_t dstride,
                             ptrdiff_t sstride)
{
    if ((size_t)dstride == esize && (size_t)sstride == esize) {
        /* A put to my own memory may overlap its source; anything else is util_copy's. */
        uintptr_t dd = (uintptr_t)d, ss = (uintptr_t)s, bytes = n * esize;
        if (dd + bytes <= ss || ss + bytes <= dd)
            util_copy(d, s, bytes);
        else
            memmove(d, s, bytes);
        return;
    }
    switch (esize) {
    case 4:
        for (size_t i = 0; i < n; i++)
            memcpy(d + i * dstride, s + i * sstride, 4);
        break;
    case 8:
        for (size_t i = 0; i < n; i++)
            memcpy(d + i * dstride, s + i * sstride, 8);
        break;
    default:
        for (size_t i = 0; i < n; i++)
            memcpy(d + i * dstride, s + i * sstride, esize);
    }
}

static void osh_check_strides(const char *fn, ptrdiff_t a, ptrdiff_t b)
{
    if (a <= 0 || b <= 0)
        osh_fatal(fn, TERN_ERR_INVAL, "strides must be positive (got %td and %td)", a, b);
}

void osh_put(const char *fn, void *dest, const void *src, size_t nelems, size_t esize,
             ptrdiff_t dstride, ptrdiff_t sstride, int pe)
{
    osh_check_pe(fn, pe);
    osh_check_strides(fn, dstride, sstride);
    if (nelems == 0) return; /* nothing moves: any pointers will do */
    struct osh_loc l;
    uint64_t ext = osh_extent(nelems, esize, dstride);
    osh_loc_must(fn, dest, ext, &l);
    if (src == NULL) osh_fatal(fn, TERN_ERR_BUFFER, "NULL source");
    char *d = osh_direct(dest, &l, pe);
    if (d) {
        osh_copy_strided(d, src, nelems, esize, dstride, sstride);
        osh_poke();
        return;
    }
    size_t per = osh_room(pe) / esize;
    if (per == 0) osh_fatal(fn, TERN_ERR_INVAL, "element of %zu bytes too large", esize);
    const char *s = src;
    int contiguous = (size_t)sstride == esize;
    char *pack = NULL;
    for (size_t i = 0; i < nelems;) {
        size_t k = nelems - i < per ? nelems - i : per;
        struct osh_msg m = {.op = OSH_OP_PUT,
                            .kind = (uint8_t)l.kind,
                            .id = OSH_NO_SLOT,
                            .off = l.off + i * (uint64_t)dstride,
                            .nelems = k,
                            .esize = esize,
                            .stride = dstride};
        const void *chunk = s + i * esize;
        if (!contiguous) {
            if (pack == NULL && (pack = malloc(per * esize)) == NULL)
                osh_fatal(fn, TERN_ERR_NOMEM, "out of memory");
            for (size_t j = 0; j < k; j++)
                memcpy(pack + j * esize, s + (i + j) * sstride, esize);
            chunk = pack;
        }
        struct iovec iov[2] = {{&m, sizeof m}, {(void *)(uintptr_t)chunk, k * esize}};
        osh_send(pe, iov, 2);
        i += k;
    }
    free(pack);
}

void osh_get(const char *fn, void *dest, const void *src, size_t nelems, size_t esize,
             ptrdiff_t dstride, ptrdiff_t sstride, int pe, int nbi)
{
    osh_check_pe(fn, pe);
    osh_check_strides(fn, dstride, sstride);
    if (nelems == 0) return;
    struct osh_loc l;
    uint64_t ext = osh_extent(nelems, esize, sstride);
    osh_loc_must(fn, src, ext, &l);
    if (dest == NULL) osh_fatal(fn, TERN_ERR_BUFFER, "NULL destination");
    const char *s = osh_direct(src, &l, pe);
    if (s) {
        osh_copy_strided(dest, s, nelems, esize, dstride, sstride);
        osh_poke();
        return;
    }
    uint32_t id = osh_slot_new(pe, dest, esize, dstride, nelems * esize, nbi);
    size_t per = osh_room(pe) / esize;
    if (per == 0) per = 1;
    for (size_t i = 0; i < nelems;) {
        size_t k = nelems - i < per ? nelems - i : per;
        struct osh_msg m = {.op = OSH_OP_GET,
                            .kind = (uint8_t)l.kind,
                            .id = id,
                            .off = l.off + i * (uint64_t)sstride,
                            .nelems = k,
                            .esize = esize,
                            .stride = sstride,
                            .first = i};
        struct iovec iov = {&m, sizeof m};
        int rc = core_am_sendv(pe, OSH_AM_REQ, &iov, 1);
        if (rc) {
            /* Nothing comes for the rest: the slot completes with what was asked so far
             * (at once if nothing was). */
            struct osh_slot *sl = &osh.slots[id];
            osh_error(rc);
            sl->err = rc;
            sl->remaining -= (nelems - i) * esize;
            if (i == 0) {
                sl->done = 1;
                if (nbi) osh_slot_free(id);
            }
            break;
        }
        if (i == 0) osh_count(pe, 1); /* the slot is one outstanding operation */
        i += k;
    }
    if (!nbi) osh_slot_wait(id);
}

/* ---- atomics ------------------------------------------------------------------------------- */

/* One atomic of every kind on a T at q (the same body for 32 and 64 bits). */
#define OSH_AMO_ON(T, q, op, v1, v2)                                                               \
    do {                                                                                           \
        T a_ = (T)(v1), b_ = (T)(v2);                                                              \
        switch (op) {                                                                              \
        case OSH_AMO_FETCH:                                                                        \
            return __atomic_load_n((T *)(q), __ATOMIC_SEQ_CST);                                    \
        case OSH_AMO_SET:                                                                          \
            __atomic_store_n((T *)(q), a_, __ATOMIC_SEQ_CST);                                      \
            return 0;                                                                              \
        case OSH_AMO_SWAP:                                                                         \
            return __atomic_exchange_n((T *)(q), a_, __ATOMIC_SEQ_CST);                            \
        case OSH_AMO_CSWAP:                                                                        \
            __atomic_compare_exchange_n((T *)(q), &a_, b_, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST); \
            return a_;                                                                             \
        case OSH_AMO_ADD:                                                                          \
            return __atomic_fetch_add((T *)(q), a_, __ATOMIC_SEQ_CST);                             \
        case OSH_AMO_AND:                                                                          \
            return __atomic_fetch_and((T *)(q), a_, __ATOMIC_SEQ_CST);                             \
        case OSH_AMO_OR:                                                                           \
            return __atomic_fetch_or((T *)(q), a_, __ATOMIC_SEQ_CST);                              \
        case OSH_AMO_XOR:                                                                          \
            return __atomic_fetch_xor((T *)(q), a_, __ATOMIC_SEQ_CST);                             \
        }                                                                                          \
    } while (0)

static uint64_t osh_amo_apply(int op, void *p, size_t size, uint64_t v1, uint64_t v2)
{
    if (size == 4)
        OSH_AMO_ON(uint32_t, p, op, v1, v2);
    else
        OSH_AMO_ON(uint64_t, p, op, v1, v2);
    return 0;
}

uint64_t osh_amo(const char *fn, int op, void *dest, size_t size, uint64_t v1, uint64_t v2, int pe,
                 int fetch)
{
    osh_check_pe(fn, pe);
    struct osh_loc l;
    osh_loc_must(fn, dest, size, &l);
    if ((uintptr_t)dest & (size - 1))
        osh_fatal(fn, TERN_ERR_INVAL, "%p is not aligned to %zu bytes", dest, size);
    char *p = osh_direct(dest, &l, pe);
    if (p) {
        osh_poke();
        return osh_amo_apply(op, p, size, v1, v2);
    }
    struct osh_msg m = {.op = OSH_OP_AMO,
                        .kind = (uint8_t)l.kind,
                        .amo = (uint8_t)op,
                        .size = (uint8_t)size,
                        .id = OSH_NO_SLOT,
                        .off = l.off,
                        .v1 = v1,
                        .v2 = v2};
    struct iovec iov = {&m, sizeof m};
    if (!fetch) {
        osh_send(pe, &iov, 1);
        return 0;
    }
    uint32_t id = osh_slot_new(pe, NULL, size, (ptrdiff_t)size, 0, 0);
    m.id = id;
    int rc = core_am_sendv(pe, OSH_AM_REQ, &iov, 1);
    if (rc) {
        osh_error(rc);
        osh_slot_free(id);
        return 0;
    }
    osh_count(pe, 1);
    if (osh_slot_wait(id)) return 0;
    return osh.slots[id].val; /* the slot is free, its fields intact until reused */
}

/* ---- signals --------------------------------------------------------------------------- */

void osh_put_signal(const char *fn, void *dest, const void *src, size_t nbytes, uint64_t *sig,
                    uint64_t signal, int sig_op, int pe)
{
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD) {
        osh_check(fn);
        osh_fatal(fn, TERN_ERR_INVAL, "sig_op %d is neither SHMEM_SIGNAL_SET nor _ADD", sig_op);
    }
    osh_check_pe(fn, pe);
    struct osh_loc dl, sl;
    osh_loc_must(fn, dest, nbytes, &dl);
    osh_loc_must(fn, sig, sizeof *sig, &sl);
    osh_put(fn, dest, src, nbytes, 1, 1, 1, pe);
    int op = sig_op == SHMEM_SIGNAL_SET ? OSH_AMO_SET : OSH_AMO_ADD;
    if (osh_direct(sig, &sl, pe) && nbytes && !osh_direct(dest, &dl, pe)) {
        /* The data went by message but the signal would be a store now: it must not
         * overtake the data. */
        osh_quiet_pe(pe);
    }
    /* A direct signal is a seq_cst atomic: it is ordered after the memcpy above. Both as
     * messages: the frames arrive in order. */
    osh_amo(fn, op, sig, sizeof *sig, signal, 0, pe, 0);
}

/* ---- completion ------------------------------------------------------------------------ */

void osh_quiet(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (osh.nout == 0) return;
    int rc = core_block(osh_all_idle, NULL);
    if (rc) osh_error(rc);
}

static void osh_quiet_pe(int pe)
{
    if (osh.pe_out[pe] == 0) return;
    int rc = core_block(osh_pe_idle, (const void *)(intptr_t)pe);
    if (rc) osh_error(rc);
}

void shmem_quiet(void)
{
    osh_check("shmem_quiet");
    osh_quiet();
}

void shmem_fence(void)
{
    osh_check("shmem_fence");
    /* Messages to one PE are applied in order and direct stores are ordered by the fence;
     * only a message still in flight to a PE we also store to directly could be overtaken. */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (osh.nout_direct) osh_quiet();
}

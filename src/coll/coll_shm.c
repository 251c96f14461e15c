/*
 * coll_shm.c - the shared-memory fast path for small blocking collectives (barrier,
 * bcast, reduce, allreduce, gather, scatter, allgather, alltoall) among ranks of one
 * node: each is one step that publishes this rank's data and copies (or combines) what
 * it needs from the others' published data.
 *
 * Why: on one node a small collective built from point-to-point messages costs
 * log p message latencies, each a fastbox write, a poll and a match. Through one
 * region that every member maps, it costs one store of the data and one flag per rank,
 * and one read of the others' flags: an allreduce of 8 bytes among 4 ranks becomes
 * "write my 8 bytes, raise my flag, wait for three flags, add four numbers".
 *
 * The region of a communicator (made at its first eligible blocking collective, by its
 * rank 0 through util/shmseg.h, attached by the others, unlinked at once so nothing is
 * ever left in /dev/shm):
 *
 *   header | per rank: done flag, big-data flag, ring of TERN_COLL_SHM_LINES lines | per
 *   rank: two big buffers of TERN_COLL_SHM_MAX bytes
 *
 * Every rank numbers the shm-path collectives of the communicator 1, 2, 3 ... (they are
 * blocking, so every member sees the same sequence). Call k uses line k % LINES
 * (TERN_COLL_SHM_LINES) of each rank: one cache line holding the call number and up to 48 bytes of
 * data, so a small contribution and its "it is there" travel as one line. Larger data goes to big
 * buffer k & 1 with the big-data flag raised to k. A rank raises done = k once it has
 * read all it needs for call k. Before reusing a line (call k + LINES) or a big buffer
 * (call k + 2), a rank checks that every member's done has passed the call that last
 * used it - a check answered from a cached minimum almost always, so the ring lets a
 * bcast root run up to LINES calls ahead of slow readers without touching their lines.
 * Flags only grow. Reductions read the contributions in rank order on every rank, so
 * non-commutative operations and floating point give the same rank-ordered result
 * everywhere.
 *
 * Waiting goes through the schedule engine (core_block: spin, yield, sleep on the shm
 * doorbell, failure checks). A rank that raises a flag rings the doorbells of the
 * members that may wait on it and sleep (core_wake), so an oversubscribed job does not
 * wait out a sleep; a done flag rings only while some member waits for room.
 *
 * Past TERN_COLL_SHM_FLAT_MAX members, barrier, bcast, reduce and allreduce use a
 * k-nomial tree of the same flags instead of every rank scanning all p (see "the tree"
 * below): p^2 flag reads and doorbells per call become about p log p.
 *
 * Only blocking calls use the region: a non-blocking collective may complete after a
 * later blocking one, which would break the "done only grows in call order" rule. They,
 * and communicators that span nodes or talk over TCP, use the point-to-point schedules.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "coll/coll.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/shmseg.h"
#include "util/tunables.h"

#define COLL_SHM_MAGIC 0x7465726e73686d31ull /* "ternshm1" */

#define COLL_SHM_INLINE 48 /* data bytes that fit in a line beside its call number */

/*
 * How far a rank may run ahead through small lines (TERN_COLL_SHM_LINES, a power of two)
 * matters most when ranks outnumber cores. A bcast root that may publish only 16 calls
 * ahead of its slowest reader waits for it after every 16, and the readers sharing a core
 * take turns after every few calls: measured (2026-11-26, 4 ranks on 2 cores, loaded
 * machine, back-to-back 8-byte MPI_Bcast) 2.0 us and 2-6 context switches per call with
 * 16 lines, 0.27 us and 0.02 with 256 (Open MPI 4.1 in the same run: 0.49 us). A line
 * costs 64 bytes per rank, touched as the ring goes round.
 */
static inline uint64_t coll_shm_lines(void)
{
    return (uint64_t)util_tun.coll_shm_lines; /* a power of two, 4-65536 (tunables.def) */
}

struct coll_shm_line {
    _Alignas(64) _Atomic uint64_t seq;       /* the call whose data the line holds */
    _Alignas(16) char data[COLL_SHM_INLINE]; /* aligned for any element (long double) */
};

/* A rank's part of the region: these two lines, then its ring of `lines` lines. */
struct coll_shm_rank {
    _Alignas(64) _Atomic uint64_t done; /* I have finished reading for call `done` */
    _Alignas(64) _Atomic uint64_t big;  /* my data for call `big` is in my big buffer */
    struct coll_shm_line line[];
};

struct coll_shm_hdr {
    uint64_t magic;
    uint32_t nprocs;
    uint32_t slot;
    uint32_t radix; /* 0: flat; else the tree's radix (every member must agree) */
    uint32_t lines; /* small lines per rank (every member must agree) */
    /* Members waiting for room (a line or big buffer others still read): a rank that
     * raises its done flag rings every member only while this is not 0, so the common
     * case costs one load instead of p doorbells. */
    _Alignas(64) _Atomic uint32_t room_waiters;
};

#define COLL_SHM_HDR_SIZE 128

struct coll_shm {
    struct shmseg seg; /* the mapping (and, at rank 0 until all attached, the name) */
    char *base;
    size_t size;
    char *ranks;   /* p parts of `stride` bytes (coll_shm_rank_at) */
    size_t stride; /* bytes of one rank's part */
    uint64_t lines;
    char *data; /* p * 2 big buffers of `slot` bytes */
    size_t slot;
    int p, me;
    int radix;         /* 0: flat barrier/bcast/reduce/allreduce; else k-nomial tree */
    uint64_t seq;      /* shm-path calls issued on this communicator */
    uint64_t min_done; /* every member's done was at least this when last looked at */
};

static inline char *coll_shm_big(const struct coll_shm *m, int rank, uint64_t k)
{
    return m->data + ((size_t)rank * 2 + (k & 1)) * m->slot;
}

static inline struct coll_shm_rank *coll_shm_rank_at(const struct coll_shm *m, int rank)
{
    return (struct coll_shm_rank *)(m->ranks + (size_t)rank * m->stride);
}

static inline struct coll_shm_line *coll_shm_line(const struct coll_shm *m, int rank, uint64_t k)
{
    return &coll_shm_rank_at(m, rank)->line[k & (m->lines - 1)];
}

/* Bytes of one rank's flags and lines. */
static inline size_t coll_shm_stride(uint64_t lines)
{
    return sizeof(struct coll_shm_rank) + (size_t)lines * sizeof(struct coll_shm_line);
}

static void coll_shm_unmap(struct tern_comm *c)
{
    struct coll_shm *m = c->coll_shm;
    if (m) {
        shmseg_close(&m->seg);
        free(m);
    }
    c->coll_shm = NULL;
    c->coll_shm_state = 0;
}

static size_t coll_shm_region_size(int p, size_t slot)
{
    size_t flags = COLL_SHM_HDR_SIZE + (size_t)p * coll_shm_stride(coll_shm_lines());
    return (flags + (size_t)p * 2 * slot + 4095) & ~(size_t)4095;
}

/* Can the region work on c at all? The same answer on every member: it depends only on
 * the job's layout and transport choice, which every member sees alike. */
static int coll_shm_eligible(const struct tern_comm *c)
{
    if (c->size < 2 || util_tun.coll_shm_max == 0) return 0;
    for (int i = 0; i < c->size; i++) {
        int w = core_comm_world(c, i);
        if (!core_peer_on_node(w)) return 0;
        /* A peer reached by a transport that cannot ring its doorbell (tcp forced on
         * one node) would sleep through our flags. */
        if (w != core.rank && !(core_peer_caps(w) & CORE_CAP_WAKE)) return 0;
    }
    return 1;
}

/* The tree's radix for a communicator of p (0: flat). */
static int coll_shm_radix_for(int p)
{
    if (p <= util_tun.coll_shm_flat_max) return 0;
    return (int)util_tun.coll_shm_radix; /* 2-64 (tunables.def) */
}

/* Map (create = rank 0) the region named by the job, member 0's world rank and the
 * nonce rank 0 drew; 0 or an error. */
static int coll_shm_map(struct tern_comm *c, uint64_t nonce, struct coll_shm **out)
{
    size_t slot = (util_tun.coll_shm_max + 63) & ~(size_t)63;
    size_t size = coll_shm_region_size(c->size, slot);
    int create = c->rank == 0;
    struct coll_shm *m = calloc(1, sizeof *m);
    if (m == NULL) return TERN_ERR_NOMEM;
    int rc = create ? shmseg_create(&m->seg, core.boot.kvsname, "coll", core_comm_world(c, 0),
                                    nonce, size, "collectives region")
                    : shmseg_attach(&m->seg, core.boot.kvsname, "coll", core_comm_world(c, 0),
                                    nonce, size, "collectives region");
    if (rc) {
        free(m);
        return rc;
    }
    void *base = m->seg.base;
    m->base = base;
    m->size = size;
    m->lines = coll_shm_lines();
    m->stride = coll_shm_stride(m->lines);
    m->ranks = m->base + COLL_SHM_HDR_SIZE;
    m->data = m->ranks + (size_t)c->size * m->stride;
    m->slot = slot;
    m->p = c->size;
    m->me = c->rank;
    m->radix = coll_shm_radix_for(c->size);
    struct coll_shm_hdr *h = base;
    if (create) { /* the pages are zero: flags start at 0 */
        h->nprocs = (uint32_t)c->size;
        h->slot = (uint32_t)slot;
        h->radix = (uint32_t)m->radix;
        h->lines = (uint32_t)m->lines;
        h->magic = COLL_SHM_MAGIC;
    } else if (h->magic != COLL_SHM_MAGIC || h->nprocs != (uint32_t)c->size ||
               h->slot != (uint32_t)slot || h->radix != (uint32_t)m->radix ||
               h->lines != (uint32_t)m->lines) {
        /* Members disagree on the slot size, the tree or the lines (TERN_COLL_SHM_MAX,
         * TERN_COLL_SHM_FLAT_MAX, TERN_COLL_SHM_RADIX or TERN_COLL_SHM_LINES differ). */
        shmseg_close(&m->seg);
        free(m);
        return TERN_ERR_TUNABLE;
    }
    *out = m;
    return 0;
}

/*
 * Attach c's region, collectively (every member calls this at the same blocking
 * collective): rank 0 creates it and spreads the random part of its name (0: none
 * made); the others map it; an AND over everyone's success decides, so the members
 * agree on using it; then rank 0 unlinks the name. Returns 0 (the region may still be
 * unavailable: coll_shm_state says), or an error of the point-to-point traffic itself.
 */
static int coll_shm_attach(struct tern_comm *c, const char *what)
{
    struct coll_shm *m = NULL;
    int32_t ok = 1;
    int rc;
    uint64_t nonce = 0;
    if (c->rank == 0) {
        nonce = shmseg_nonce();
        ok = coll_shm_map(c, nonce, &m) == 0;
        if (!ok) nonce = 0;
    }
    c->coll_shm_state = -2; /* setting up: the traffic below goes by messages */
    struct coll_sched s;
    coll_sched_init(&s, c);
    s.name = what; /* the hang report names the caller's collective */
    /* A maximum over members who all give 0 but rank 0 (an allreduce, as below: the
     * region must not depend on the bcast algorithm a TERN_COLL_BCAST names). */
    uint64_t nonce_in = nonce;
    rc = coll_op_resolve(TERN_MAX, TERN_UINT64, &s.op);
    if (rc == 0) rc = coll_sched_run(&s, coll_allreduce(&s, &nonce_in, &nonce, 1));
    if (rc) goto fail;
    if (c->rank != 0) ok = nonce != 0 && coll_shm_map(c, nonce, &m) == 0;
    int32_t in = ok;
    coll_sched_init(&s, c);
    s.name = what;
    rc = coll_op_resolve(TERN_LAND, TERN_INT32, &s.op);
    if (rc == 0) rc = coll_sched_run(&s, coll_allreduce(&s, &in, &ok, 1));
    if (m) shmseg_unlink(&m->seg);
    if (rc) goto fail;
    if (!ok) {
        UTIL_DEBUG(1, "coll: no shared region for a communicator of %d; using messages", c->size);
        if (m) {
            shmseg_close(&m->seg);
            free(m);
        }
        c->coll_shm_state = -1;
        return 0;
    }
    c->coll_shm = m;
    c->coll_shm_state = 1;
    c->on_free = coll_shm_unmap;
    return 0;
fail:
    if (m) {
        shmseg_close(&m->seg);
        free(m);
    }
    c->coll_shm_state = -1;
    return rc;
}

int coll_shm_usable(struct coll_sched *s, enum coll_kind kind, size_t bytes, int *rc)
{
    struct tern_comm *c = s->comm;
    *rc = 0;
    if (s->heap || bytes > util_tun.coll_shm_max || c->coll_shm_state < 0) return 0;
    if (coll_forced(kind)) return 0; /* a forced algorithm runs as asked */
    if (c->coll_shm_state == 0) {
        if (!coll_shm_eligible(c)) {
            c->coll_shm_state = -1;
            return 0;
        }
        *rc = coll_shm_attach(c, s->name);
        if (*rc) return 0;
    }
    return c->coll_shm_state == 1;
}

void coll_shm_add(struct coll_sched *s, int op, const void *src, void *buf, size_t count,
                  size_t bytes, int root)
{
    struct coll_shm *m = s->comm->coll_shm;
    struct coll_step *st = coll_sched_step(s, COLL_S_SHM);
    if (st == NULL) return;
    st->sub = (uint8_t)op;
    st->phase = 0;
    st->peer = root;
    st->src = src;
    st->buf = buf;
    st->n = bytes;
    st->count = count;
    st->seq = ++m->seq;
}

/* Wake the members that sleep: a flag of ours changed that any of them may wait on. */
static void coll_shm_ring(const struct tern_comm *c)
{
    for (int i = 0; i < c->size; i++)
        if (i != c->rank) core_wake(core_comm_world(c, i));
}

/* Wake one member (a parent or a child in the tree). */
static inline void coll_shm_ring1(const struct tern_comm *c, int r)
{
    if (r != c->rank) core_wake(core_comm_world(c, r));
}

static inline struct coll_shm_hdr *coll_shm_hdr(const struct coll_shm *m)
{
    return (struct coll_shm_hdr *)m->base;
}

/* Every member's done >= upto (0: nothing to wait for). Looks at the flags only when
 * the cached minimum is not enough. */
static int coll_shm_done_upto(struct coll_shm *m, uint64_t upto)
{
    if (m->min_done >= upto) return 1;
    uint64_t lo = UINT64_MAX;
    for (int i = 0; i < m->p; i++) {
        uint64_t d = atomic_load_explicit(&coll_shm_rank_at(m, i)->done, memory_order_acquire);
        if (d < lo) lo = d;
    }
    m->min_done = lo;
    return lo >= upto;
}

/* May we write our data of `bytes` for call k? Its line (last used by call k - LINES)
 * and, for big data, its big buffer (call k - 2) must be read by everyone. */
static int coll_shm_room(struct coll_shm *m, uint64_t k, size_t bytes)
{
    uint64_t need = k > m->lines ? k - m->lines : 0;
    if (bytes > COLL_SHM_INLINE && k > 2 && k - 2 > need) need = k - 2;
    return coll_shm_done_upto(m, need);
}

/* A step's phase, without the "counted among the room waiters" bit. */
#define COLL_SHM_WAITING   0x80
#define COLL_SHM_PHASE(st) ((st)->phase & ~COLL_SHM_WAITING)

/* coll_shm_room, and while there is none, be counted in room_waiters so that members
 * raising their done flags ring us (the count goes up before the second look, pairing
 * with the fence in coll_shm_finish, so no raise is missed). */
static int coll_shm_room_wait(struct coll_shm *m, struct coll_step *st, uint64_t k, size_t bytes)
{
    struct coll_shm_hdr *h = coll_shm_hdr(m);
    int ok = coll_shm_room(m, k, bytes);
    if (!ok && !(st->phase & COLL_SHM_WAITING)) {
        atomic_fetch_add_explicit(&h->room_waiters, 1, memory_order_seq_cst);
        atomic_thread_fence(memory_order_seq_cst);
        st->phase |= COLL_SHM_WAITING;
        ok = coll_shm_room(m, k, bytes);
    }
    if (ok && (st->phase & COLL_SHM_WAITING)) {
        atomic_fetch_sub_explicit(&h->room_waiters, 1, memory_order_relaxed);
        st->phase &= (uint8_t)~COLL_SHM_WAITING;
    }
    return ok;
}

/*
 * Flags: a rank's line seq (data up to 48 bytes, and barriers) or its big flag (larger
 * data) holds 2k + 1 once its data of call k is complete; in the tree, 2k says "the
 * partial result of my subtree for call k is here" and 2k + 1 "the result of call k
 * has come down to me". Flags only grow, whatever mix of flat and tree calls runs.
 */
static inline _Atomic uint64_t *coll_shm_flag(const struct coll_shm *m, int r, uint64_t k,
                                              size_t bytes)
{
    return bytes > COLL_SHM_INLINE ? &coll_shm_rank_at(m, r)->big : &coll_shm_line(m, r, k)->seq;
}

static inline int coll_shm_has(const struct coll_shm *m, int r, uint64_t k, size_t bytes,
                               uint64_t want)
{
    return atomic_load_explicit(coll_shm_flag(m, r, k, bytes), memory_order_acquire) >= want;
}

static inline void coll_shm_raise(struct coll_shm *m, uint64_t k, size_t bytes, uint64_t val)
{
    atomic_store_explicit(coll_shm_flag(m, m->me, k, bytes), val, memory_order_release);
}

/* Has rank r's data (of `bytes`) for call k arrived? */
static inline int coll_shm_ready(const struct coll_shm *m, int r, uint64_t k, size_t bytes)
{
    return coll_shm_has(m, r, k, bytes, 2 * k + 1);
}

/* Has every member but `skip` (-1: none) published call k? */
static int coll_shm_all_ready(const struct coll_shm *m, uint64_t k, size_t bytes, int skip)
{
    for (int i = 0; i < m->p; i++)
        if (i != skip && !coll_shm_ready(m, i, k, bytes)) return 0;
    return 1;
}

static inline char *coll_shm_data(const struct coll_shm *m, int r, uint64_t k, size_t bytes)
{
    return bytes > COLL_SHM_INLINE ? coll_shm_big(m, r, k) : coll_shm_line(m, r, k)->data;
}

/* Publish our data for call k (from src, bytes) to every member. */
static void coll_shm_publish(struct coll_sched *s, struct coll_shm *m, const void *src,
                             size_t bytes, uint64_t k)
{
    if (bytes) util_copy(coll_shm_data(m, m->me, k, bytes), src, bytes);
    coll_shm_raise(m, k, bytes, 2 * k + 1);
    coll_shm_ring(s->comm);
}

/* We have read all we need of call k. Nobody waits for that but a member short of room,
 * rare enough that the others are rung only then. */
static void coll_shm_finish(struct coll_sched *s, struct coll_shm *m, uint64_t k)
{
    atomic_store_explicit(&coll_shm_rank_at(m, m->me)->done, k, memory_order_release);
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&coll_shm_hdr(m)->room_waiters, memory_order_relaxed))
        coll_shm_ring(s->comm);
}

/* Call k of an allreduce or barrier has ended here: every member started it, so every
 * member's done has reached k - 1 (it is raised before a call returns). */
static inline void coll_shm_all_started(struct coll_shm *m, uint64_t k)
{
    if (m->min_done < k - 1) m->min_done = k - 1;
}

/* Combine every member's data of call k in rank order into out (count elements). */
static void coll_shm_combine(struct coll_sched *s, struct coll_shm *m, void *out, uint64_t k,
                             size_t count, size_t bytes)
{
    util_copy(out, coll_shm_data(m, m->p - 1, k, bytes), bytes);
    for (int i = m->p - 2; i >= 0; i--)
        s->op.fn(coll_shm_data(m, i, k, bytes), out, count, s->op.dt);
}

/* ---- the tree (communicators of more than TERN_COLL_SHM_FLAT_MAX) ------------------
 *
 * A flat scan has every rank read every rank's flag: p^2 cache-line transfers and p
 * doorbells per flag raised. The tree is k-nomial on virtual ranks v = (rank - root)
 * mod p: the span of v is K^i for the lowest non-zero base-K digit i of v (the root's:
 * the first power of K >= p); its children are v + j K^l for K^l < span and
 * j = 1 .. K-1 (those < p), in increasing order, and its parent is v with that digit
 * cleared. The subtree of a child c is the contiguous range [c, c + span(c)), so a
 * node that combines its own data with its children's partials in child order combines
 * a contiguous, ordered range of ranks: non-commutative operations stay right. Each
 * rank reads at most (K-1) log_K p flags and rings only its parent or its children. */
#define COLL_SHM_MAX_KIDS 512

static long coll_shm_span(int v, int p, int K)
{
    long s = 1;
    if (v == 0) {
        while (s < p)
            s *= K;
        return s;
    }
    while ((v / s) % K == 0)
        s *= K;
    return s;
}

static int coll_shm_parent(int v, int K)
{
    long s = coll_shm_span(v, 0, K);
    return v - (int)(((v / s) % K) * s);
}

/* v's children (virtual ranks, increasing) into kids; their count. */
static int coll_shm_kids(int v, int p, int K, int *kids)
{
    long span = coll_shm_span(v, p, K);
    int n = 0;
    for (long l = 1; l < span; l *= K)
        for (int j = 1; j < K; j++) {
            long c = v + j * l;
            if (c >= p || n == COLL_SHM_MAX_KIDS) break;
            kids[n++] = (int)c;
        }
    return n;
}

/* We (v, in the tree rooted at rank 0) have raised our partial of call k: ring the
 * parent only if all its children's partials are now there. A parent rung by each child
 * in turn wakes, finds some still missing and sleeps again: with ranks outnumbering cores
 * that was a context switch and a futex call per child. The fence orders our raise before
 * our look at the siblings' flags, so of children raising at once the last (in the
 * fences' total order) sees all the others and rings. */
static void coll_shm_ring_parent(struct coll_sched *s, struct coll_shm *m, int v, uint64_t k,
                                 size_t n)
{
    int parent = coll_shm_parent(v, m->radix);
    int sib[COLL_SHM_MAX_KIDS];
    int ns = coll_shm_kids(parent, m->p, m->radix, sib);
    atomic_thread_fence(memory_order_seq_cst);
    for (int i = 0; i < ns; i++)
        if (sib[i] != v && !coll_shm_has(m, sib[i], k, n, 2 * k)) return;
    coll_shm_ring1(s->comm, parent);
}

/* Barrier, reduce and allreduce up the tree rooted at rank 0 (the contiguous ranges need
 * real rank order) and, for barrier and allreduce, down again. Rank 0's data slot holds
 * the result; a reduce to another root has that root copy it from there. */
static int coll_shm_tree_reduce(struct coll_sched *s, struct coll_shm *m, struct coll_step *st)
{
    uint64_t k = st->seq;
    size_t n = st->n;
    int me = m->me, K = m->radix, root = st->peer;
    int down = st->sub != COLL_SHM_REDUCE;
    int kids[COLL_SHM_MAX_KIDS];
    int nk = coll_shm_kids(me, m->p, K, kids);
    if (COLL_SHM_PHASE(st) == 0) {
        if (n && !coll_shm_room_wait(m, st, k, n)) return 0;
        for (int i = 0; i < nk; i++)
            if (!coll_shm_has(m, kids[i], k, n, 2 * k)) return 0;
        if (n) {
            char *acc = coll_shm_data(m, me, k, n);
            if (nk == 0) {
                util_copy(acc, st->src, n);
            } else {
                util_copy(acc, coll_shm_data(m, kids[nk - 1], k, n), n);
                for (int i = nk - 2; i >= 0; i--)
                    s->op.fn(coll_shm_data(m, kids[i], k, n), acc, st->count, s->op.dt);
                s->op.fn(st->src, acc, st->count, s->op.dt);
            }
        }
        st->phase = (uint8_t)((st->phase & COLL_SHM_WAITING) | 1);
        if (me == 0) {
            coll_shm_raise(m, k, n, 2 * k + 1);
            if (down)
                for (int i = 0; i < nk; i++)
                    coll_shm_ring1(s->comm, kids[i]);
            else
                coll_shm_ring1(s->comm, root);
        } else {
            coll_shm_raise(m, k, n, 2 * k);
            coll_shm_ring_parent(s, m, me, k, n);
        }
        if (!down && me != root) {
            coll_shm_finish(s, m, k); /* a reduce reads nothing here */
            return 1;
        }
    }
    if (down) {
        if (me != 0) {
            if (!coll_shm_has(m, coll_shm_parent(me, K), k, n, 2 * k + 1)) return 0;
            coll_shm_raise(m, k, n, 2 * k + 1);
            for (int i = 0; i < nk; i++)
                coll_shm_ring1(s->comm, kids[i]);
        }
        if (n) util_copy(st->buf, coll_shm_data(m, 0, k, n), n);
        coll_shm_all_started(m, k);
    } else { /* reduce: only the root reads */
        if (me != 0 && !coll_shm_has(m, 0, k, n, 2 * k)) return 0;
        util_copy(st->buf, coll_shm_data(m, 0, k, n), n);
    }
    coll_shm_finish(s, m, k);
    return 1;
}

/* Bcast down the tree rooted at the root: the data stays in the root's slot, only the
 * "it is there" travels from parent to children. */
static int coll_shm_tree_bcast(struct coll_sched *s, struct coll_shm *m, struct coll_step *st)
{
    uint64_t k = st->seq;
    size_t n = st->n;
    int me = m->me, p = m->p, K = m->radix, root = st->peer;
    int v = (me - root + p) % p;
    int kids[COLL_SHM_MAX_KIDS];
    if (v == 0) {
        if (!coll_shm_room_wait(m, st, k, n)) return 0;
        util_copy(coll_shm_data(m, me, k, n), st->buf, n);
    } else {
        int parent = (coll_shm_parent(v, K) + root) % p;
        if (!coll_shm_has(m, parent, k, n, 2 * k + 1)) return 0;
    }
    coll_shm_raise(m, k, n, 2 * k + 1);
    int nk = coll_shm_kids(v, p, K, kids);
    for (int i = 0; i < nk; i++)
        coll_shm_ring1(s->comm, (kids[i] + root) % p);
    if (v != 0) util_copy(st->buf, coll_shm_data(m, root, k, n), n);
    coll_shm_finish(s, m, k);
    return 1;
}

int coll_shm_step(struct coll_sched *s, struct coll_step *st)
{
    struct coll_shm *m = s->comm->coll_shm;
    uint64_t k = st->seq;
    size_t n = st->n;
    int me = m->me, root = st->peer;
    if (m->radix) {
        switch (st->sub) {
        case COLL_SHM_BARRIER:
        case COLL_SHM_REDUCE:
        case COLL_SHM_ALLREDUCE:
            return coll_shm_tree_reduce(s, m, st);
        case COLL_SHM_BCAST:
            return coll_shm_tree_bcast(s, m, st);
        default:
            break; /* the others move O(p) data per rank anyway: flat */
        }
    }
    switch (st->sub) {
    case COLL_SHM_BARRIER:
        if (COLL_SHM_PHASE(st) == 0) {
            if (!coll_shm_room_wait(m, st, k, 0)) return 0;
            coll_shm_publish(s, m, NULL, 0, k);
            st->phase = 1;
        }
        if (!coll_shm_all_ready(m, k, 0, -1)) return 0;
        coll_shm_all_started(m, k);
        coll_shm_finish(s, m, k);
        return 1;
    case COLL_SHM_BCAST:
        if (me == root) {
            if (!coll_shm_room_wait(m, st, k, n)) return 0;
            coll_shm_publish(s, m, st->buf, n, k);
            coll_shm_finish(s, m, k);
            return 1;
        }
        if (!coll_shm_ready(m, root, k, n)) return 0;
        util_copy(st->buf, coll_shm_data(m, root, k, n), n);
        coll_shm_finish(s, m, k);
        return 1;
    case COLL_SHM_REDUCE:
    case COLL_SHM_ALLREDUCE:
        if (COLL_SHM_PHASE(st) == 0) {
            if (!coll_shm_room_wait(m, st, k, n)) return 0;
            coll_shm_publish(s, m, st->src, n, k);
            st->phase = 1;
            if (st->sub == COLL_SHM_REDUCE && me != root) {
                coll_shm_finish(s, m, k); /* reads nothing */
                return 1;
            }
        }
        if (!coll_shm_all_ready(m, k, n, -1)) return 0;
        coll_shm_combine(s, m, st->buf, k, st->count, n);
        if (st->sub == COLL_SHM_ALLREDUCE) coll_shm_all_started(m, k);
        coll_shm_finish(s, m, k);
        return 1;
    case COLL_SHM_GATHER: /* n bytes from each, to root */
        if (me != root) {
            if (!coll_shm_room_wait(m, st, k, n)) return 0;
            coll_shm_publish(s, m, st->src, n, k);
            coll_shm_finish(s, m, k);
            return 1;
        }
        if (!coll_shm_all_ready(m, k, n, me)) return 0;
        for (int i = 0; i < m->p; i++)
            if (i != me) util_copy((char *)st->buf + (size_t)i * n, coll_shm_data(m, i, k, n), n);
        if (st->src != TERN_IN_PLACE) util_copy((char *)st->buf + (size_t)me * n, st->src, n);
        coll_shm_finish(s, m, k);
        return 1;
    case COLL_SHM_SCATTER: { /* root publishes all p blocks; each takes its own */
        size_t all = (size_t)m->p * n;
        if (me == root) {
            if (!coll_shm_room_wait(m, st, k, all)) return 0;
            coll_shm_publish(s, m, st->src, all, k);
            if (st->buf != TERN_IN_PLACE)
                util_copy(st->buf, (const char *)st->src + (size_t)me * n, n);
            coll_shm_finish(s, m, k);
            return 1;
        }
        if (!coll_shm_ready(m, root, k, all)) return 0;
        util_copy(st->buf, (const char *)coll_shm_data(m, root, k, all) + (size_t)me * n, n);
        coll_shm_finish(s, m, k);
        return 1;
    }
    case COLL_SHM_ALLGATHER: /* src: my block (it may lie inside buf) */
        if (COLL_SHM_PHASE(st) == 0) {
            if (!coll_shm_room_wait(m, st, k, n)) return 0;
            coll_shm_publish(s, m, st->src, n, k);
            st->phase = 1;
        }
        if (!coll_shm_all_ready(m, k, n, me)) return 0;
        for (int i = 0; i < m->p; i++)
            if (i != me) util_copy((char *)st->buf + (size_t)i * n, coll_shm_data(m, i, k, n), n);
        memmove((char *)st->buf + (size_t)me * n, st->src, n);
        coll_shm_all_started(m, k);
        coll_shm_finish(s, m, k);
        return 1;
    case COLL_SHM_ALLTOALL: { /* src: p blocks (may be buf: published before buf changes) */
        size_t all = (size_t)m->p * n;
        if (COLL_SHM_PHASE(st) == 0) {
            if (!coll_shm_room_wait(m, st, k, all)) return 0;
            coll_shm_publish(s, m, st->src, all, k);
            st->phase = 1;
        }
        if (!coll_shm_all_ready(m, k, all, -1)) return 0;
        for (int i = 0; i < m->p; i++)
            util_copy((char *)st->buf + (size_t)i * n,
                      (const char *)coll_shm_data(m, i, k, all) + (size_t)me * n, n);
        coll_shm_all_started(m, k);
        coll_shm_finish(s, m, k);
        return 1;
    }
    default:
        s->err = TERN_ERR_INTERNAL;
        return 1;
    }
}

/*
 * test_shm_ring.c - the shm channel (fastbox slots) and the per-process pool of cells:
 * ordering, wrap-around, full rings, the inline/slots/cell boundaries, an empty pool,
 * cells given back and reused, cells of a dead receiver taken back, memory touched only
 * where it is used, and runs over real shared mappings with checksummed frames: one
 * producer and one consumer, and one producer whose pool two consumers return to at once.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/shm/shm_ring.h"
#include "unit.h"

#define NLINES    8
#define NSMALL    7
#define NBIG      2
#define CELL      256
#define FRAME_MAX (SHM_FRAME_CELLS * CELL)
/* The largest frame in consecutive slots: 4 slots (half of NLINES). */
#define LINES_MAX (SHM_LINE_INLINE + 3 * SHM_SLOT)
/* Frames of 2, 3 and 4 slots. */
#define F2    (SHM_LINE_INLINE + SHM_SLOT / 2)
#define F3    (F2 + SHM_SLOT)
#define F4    (F3 + SHM_SLOT)
#define NCHAN 2
/* The smallest ring (a power of two) whose half holds the longest frame in slots. */
#define RING_FOR_LONGEST 1024
_Static_assert(RING_FOR_LONGEST / 2 >= SHM_FRAME_LINES && RING_FOR_LONGEST / 4 < SHM_FRAME_LINES,
               "RING_FOR_LONGEST");

/* One producer's pool and channels to NCHAN consumers, in one block of memory. */
struct rig {
    _Atomic uint32_t ret_head;
    _Atomic uint32_t next[NSMALL + NBIG];
    _Alignas(64) unsigned char chan[NCHAN][SHM_RING_HEAD_BYTES + NLINES * sizeof(struct shm_line)];
    _Alignas(64) unsigned char cells[NSMALL * CELL + NBIG * FRAME_MAX];
};

static struct shm_pool_view rig_view(struct rig *r)
{
    struct shm_pool_view v;
    shm_pool_view_init(&v, r->cells, r->next, &r->ret_head, NSMALL, NBIG, CELL);
    return v;
}

/* Producer side of channel i (pool p), consumer side of channel i (pool view v). */
static void rig_prod(struct rig *r, int i, struct shm_pool *p, struct shm_chan *c)
{
    shm_chan_init(c, r->chan[i], NLINES);
    c->pool = p;
    c->dest = i;
}

static void rig_cons(struct rig *r, int i, const struct shm_pool_view *v, struct shm_chan *c)
{
    shm_chan_init(c, r->chan[i], NLINES);
    c->src = v;
}

static struct rig *rig_new(int shared)
{
    struct rig *r =
        shared ? mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
               : aligned_alloc(64, (sizeof(struct rig) + 63) / 64 * 64);
    CHECK(r != NULL && r != MAP_FAILED);
    memset(r, 0, sizeof *r);
    atomic_store(&r->ret_head, SHM_CELL_NONE);
    return r;
}

/* Frame i has length len_of(i) and bytes (i * 7 + k) & 0xff. */
static size_t len_of(uint32_t i)
{
    enum { IN = SHM_LINE_INLINE };
    static const size_t lens[] = {0,   1,   8,         IN - 1,        IN,  IN + 1,    100, 255,
                                  256, 3,   257,       700,           512, FRAME_MAX, 513, 120,
                                  184, 185, LINES_MAX, LINES_MAX + 1, 64,  CELL + 1};
    return lens[i % (sizeof lens / sizeof lens[0])];
}

static void fill(unsigned char *b, uint32_t i, size_t n)
{
    for (size_t k = 0; k < n; k++)
        b[k] = (unsigned char)(i * 7 + k);
}

static int frame_ok(const void *data, size_t len, uint32_t i)
{
    unsigned char want[FRAME_MAX];
    if (len != len_of(i)) return 0;
    fill(want, i, len);
    return memcmp(data, want, len) == 0;
}

static int push_n(struct shm_chan *c, unsigned char *buf, size_t n)
{
    struct iovec iov = {buf, n};
    return shm_chan_push(c, &iov, 1, n);
}

static void test_single_process(void)
{
    struct rig *r = rig_new(0);
    struct shm_pool_view v = rig_view(r);
    struct shm_pool pool;
    CHECK_EQ(shm_pool_init(&pool, &v, NULL), 0);
    struct shm_chan prod, cons;
    rig_prod(r, 0, &pool, &prod);
    rig_cons(r, 0, &v, &cons);
    const void *d;
    size_t len;
    CHECK(!shm_chan_peek(&cons, &d, &len));

    /* Fill the slot ring with inline frames: NLINES fit, the next is AGAIN. */
    _Alignas(64) unsigned char buf[FRAME_MAX + 1];
    fill(buf, 2, 8);
    for (uint32_t i = 0; i < NLINES; i++)
        CHECK_EQ(push_n(&prod, buf, 8), 0);
    CHECK_EQ(push_n(&prod, buf, 8), TERN_ERR_AGAIN);
    for (uint32_t i = 0; i < NLINES; i++) {
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK_EQ(len, 8);
        shm_chan_release(&cons);
    }
    CHECK(!shm_chan_peek(&cons, &d, &len));

    /* Small cells: NSMALL frames of one cell (fresh cells 0, 1, ...) and an inline frame
     * fill the ring. */
    for (uint32_t i = 0; i < NSMALL; i++) {
        fill(buf, 10 + i, 250);
        CHECK_EQ(push_n(&prod, buf, 250), 0);
        if (i == 1) CHECK_EQ(push_n(&prod, buf, 8), 0); /* an inline frame between them */
    }
    CHECK_EQ(push_n(&prod, buf, 8), TERN_ERR_AGAIN);
    CHECK_EQ(shm_pool_out(&pool), NSMALL);
    for (uint32_t i = 0; i < NSMALL; i++) {
        CHECK(shm_chan_peek(&cons, &d, &len));
        fill(buf, 10 + i, 250);
        CHECK(len == 250 && memcmp(d, buf, 250) == 0 && d == r->cells + i * CELL);
        shm_chan_release(&cons);
        if (i == 1) {
            CHECK(shm_chan_peek(&cons, &d, &len));
            CHECK_EQ(len, 8);
            shm_chan_release(&cons);
        }
    }
    CHECK(!shm_chan_peek(&cons, &d, &len));
    CHECK_EQ(shm_pool_out(&pool), NSMALL); /* given back, not yet taken back */
    /* The next frame takes back all that was returned and reuses one of those cells. */
    fill(buf, 30, 250);
    CHECK_EQ(push_n(&prod, buf, 250), 0);
    CHECK_EQ(shm_pool_out(&pool), 1);
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK(len == 250 && cons.cur_cell < NSMALL && memcmp(d, buf, 250) == 0);
    shm_chan_release(&cons);
    CHECK_EQ(pool.fresh_small, NSMALL);

    /* Pool exhaustion: NSMALL cell frames, then AGAIN with a slot still free. */
    for (uint32_t i = 0; i < NSMALL; i++)
        CHECK_EQ(push_n(&prod, buf, 250), 0);
    CHECK_EQ(push_n(&prod, buf, 250), TERN_ERR_AGAIN);
    CHECK_EQ(push_n(&prod, buf, 8), 0); /* the last slot, for an inline frame */
    CHECK_EQ(shm_pool_max_frame(NBIG, CELL), FRAME_MAX);
    CHECK_EQ(shm_pool_max_frame(0, CELL), CELL);
    for (uint32_t i = 0; i < NSMALL + 1; i++) {
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK_EQ(len, i < NSMALL ? 250 : 8);
        shm_chan_release(&cons);
    }
    /* Big cells: FRAME_MAX fits, one byte more is INVAL. */
    fill(buf, 31, FRAME_MAX);
    CHECK_EQ(push_n(&prod, buf, FRAME_MAX + 1), TERN_ERR_INVAL);
    for (uint32_t i = 0; i < NBIG; i++)
        CHECK_EQ(push_n(&prod, buf, FRAME_MAX), 0);
    CHECK_EQ(push_n(&prod, buf, CELL + 1), TERN_ERR_AGAIN); /* big cells out */
    CHECK_EQ(push_n(&prod, buf, CELL), 0);                  /* small ones came back */
    for (uint32_t i = 0; i < NBIG; i++) {
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK(len == FRAME_MAX && memcmp(d, buf, FRAME_MAX) == 0 &&
              d == r->cells + NSMALL * CELL + i * FRAME_MAX);
        shm_chan_release(&cons);
    }
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK(len == CELL && memcmp(d, buf, CELL) == 0);
    shm_chan_release(&cons);

    /* Frames of SHM_LINE_INLINE + 1 to LINES_MAX bytes run over consecutive slots: 2 + 4
     * slots here. */
    CHECK_EQ(prod.lines_max, LINES_MAX);
    while (prod.line_pos % NLINES != 0) { /* start at slot 0 */
        CHECK_EQ(push_n(&prod, buf, 1), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        shm_chan_release(&cons);
    }
    uint64_t l0 = prod.line_pos;
    uint32_t out0 = shm_pool_out(&pool);
    fill(buf, 50, F2);
    CHECK_EQ(push_n(&prod, buf, F2), 0);
    CHECK_EQ(prod.line_pos, l0 + 2);
    fill(buf, 51, LINES_MAX);
    CHECK_EQ(push_n(&prod, buf, LINES_MAX), 0);
    CHECK_EQ(prod.line_pos, l0 + 6);
    CHECK_EQ(shm_pool_out(&pool), out0); /* no cell used */
    /* Slot 6 of 8: another 4-slot frame would wrap, so it takes a cell and one slot. */
    fill(buf, 52, 200);
    CHECK_EQ(push_n(&prod, buf, 200), 0);
    CHECK_EQ(prod.line_pos, l0 + 7);
    CHECK_EQ(shm_pool_out(&pool), out0 + 1);
    /* Slot 7, the last: a 2-slot frame would wrap, so it takes a cell too; then the ring
     * is full. */
    fill(buf, 53, F2);
    CHECK_EQ(push_n(&prod, buf, F2), 0);
    CHECK_EQ(prod.line_pos, l0 + 8);
    CHECK_EQ(push_n(&prod, buf, 1), TERN_ERR_AGAIN);
    CHECK(shm_chan_peek(&cons, &d, &len));
    fill(buf, 50, F2);
    CHECK(len == F2 && memcmp(d, buf, F2) == 0 && d == cons.lines[0].data);
    shm_chan_release(&cons);
    CHECK_EQ(cons.line_pos, l0 + 2);
    /* The consumer wrote nothing into the continuation slot (the producer guards the slot
     * after each frame instead): its sequence word still holds the frame's data. */
    {
        uint32_t w;
        fill(buf, 50, F2);
        memcpy(&w, buf + SHM_LINE_INLINE, sizeof w);
        CHECK_EQ(atomic_load(&cons.lines[1].seq), w);
    }
    CHECK(shm_chan_peek(&cons, &d, &len));
    fill(buf, 51, LINES_MAX);
    CHECK(len == LINES_MAX && memcmp(d, buf, LINES_MAX) == 0);
    shm_chan_release(&cons);
    CHECK(shm_chan_peek(&cons, &d, &len));
    fill(buf, 52, 200);
    CHECK(len == 200 && memcmp(d, buf, 200) == 0 && cons.cur_cell != SHM_CELL_NONE);
    shm_chan_release(&cons);
    CHECK(shm_chan_peek(&cons, &d, &len));
    fill(buf, 53, F2);
    CHECK(len == F2 && memcmp(d, buf, F2) == 0 && cons.cur_cell != SHM_CELL_NONE);
    shm_chan_release(&cons);
    CHECK(!shm_chan_peek(&cons, &d, &len));

    /* Stale data whose bytes look like a future sequence word is never taken for a frame:
     * a 3-slot frame from slot 0 whose bytes at slots 1 and 2's sequence words are the
     * values those slots hold when full one lap later; after it, one-slot frames only, so
     * slots 1 and 2 are next looked at as frame heads while still holding those bytes. */
    while (prod.line_pos % NLINES != 0) {
        CHECK_EQ(push_n(&prod, buf, 1), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        shm_chan_release(&cons);
    }
    uint64_t s0 = prod.line_pos;
    uint32_t next1 = (uint32_t)(s0 + 1 + NLINES + 1), next2 = (uint32_t)(s0 + 2 + NLINES + 1);
    memset(buf, 0, 200);
    memcpy(buf + SHM_LINE_INLINE, &next1, 4);
    memcpy(buf + SHM_LINE_INLINE + SHM_SLOT, &next2, 4);
    CHECK_EQ(push_n(&prod, buf, F3), 0);
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK_EQ(len, F3);
    shm_chan_release(&cons);
    for (uint64_t p = s0 + 3; p < s0 + NLINES + 1; p++) { /* slots 3..7, then 0 again */
        CHECK_EQ(push_n(&prod, buf, 1), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        shm_chan_release(&cons);
    }
    CHECK_EQ(cons.line_pos, s0 + NLINES + 1); /* at slot 1, nothing sent there this lap */
    CHECK(!shm_chan_peek(&cons, &d, &len));

    /* A corrupt slot naming a cell outside the pool reads as an empty frame. */
    uint32_t bogus = NSMALL + NBIG + 5;
    struct shm_line *ln = &cons.lines[cons.line_pos % NLINES];
    memcpy(ln->data, &bogus, sizeof bogus);
    ln->len = 300;
    atomic_store(&ln->seq, (uint32_t)(cons.line_pos + 1));
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK_EQ(len, 0);
    shm_chan_release(&cons);
    prod.line_pos++;

    /* Gather from several iovecs, across many wrap-arounds, in order. */
    for (uint32_t i = 0; i < 1000; i++) {
        size_t n = len_of(i);
        fill(buf, i, n);
        size_t half = n / 2;
        struct iovec iov[2] = {{buf, half}, {buf + half, n - half}};
        CHECK_EQ(shm_chan_push(&prod, iov, 2, n), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK(frame_ok(d, len, i));
        shm_chan_release(&cons);
    }
    shm_pool_fini(&pool);
    free(r);
}

/* Touches: count them and fail on demand. */
static size_t touched_bytes;
static int touch_fail;
static int count_touch(void *addr, size_t len)
{
    (void)addr;
    if (touch_fail) return -1;
    touched_bytes += len;
    return 0;
}

/* Two receivers share one pool: a dead one's cells are taken back; memory is touched
 * only as it is used, and a touch that fails is TERN_ERR_NOSPACE with nothing lost. */
static void test_pool_two_receivers(void)
{
    struct rig *r = rig_new(0);
    struct shm_pool_view v = rig_view(r);
    struct shm_pool pool;
    CHECK_EQ(shm_pool_init(&pool, &v, count_touch), 0);
    struct shm_chan p0, p1, c0, c1;
    rig_prod(r, 0, &pool, &p0);
    rig_prod(r, 1, &pool, &p1);
    p0.touch = p1.touch = count_touch;
    p0.lines_ready = p1.lines_ready = 0;
    rig_cons(r, 0, &v, &c0);
    rig_cons(r, 1, &v, &c1);
    _Alignas(64) unsigned char buf[FRAME_MAX];
    fill(buf, 1, sizeof buf);
    touched_bytes = 0;
    /* A first inline frame touches the channel's first page, nothing of the pool; a ring
     * smaller than a page (packed beside its neighbours) asks for its own bytes only. */
    CHECK_EQ(push_n(&p0, buf, 8), 0);
    CHECK_EQ(touched_bytes, shm_chan_bytes(NLINES));
    /* A cell frame touches the page(s) that frame needs, once. */
    CHECK_EQ(push_n(&p0, buf, 250), 0);
    CHECK_EQ(touched_bytes, shm_chan_bytes(NLINES) + SHM_PAGE);
    /* Receiver 1 (which will die) gets three cells, receiver 0 one more. */
    for (int i = 0; i < 3; i++)
        CHECK_EQ(push_n(&p1, buf, 249 + (size_t)i), 0);
    CHECK_EQ(push_n(&p0, buf, 252), 0);
    CHECK_EQ(shm_pool_out(&pool), 5);
    /* Receiver 1 consumes one before it dies: that one comes back by the return stack. */
    const void *d;
    size_t len;
    CHECK(shm_chan_peek(&c1, &d, &len));
    shm_chan_release(&c1);
    CHECK_EQ(shm_pool_reclaim(&pool, 1), 2);
    CHECK_EQ(shm_pool_out(&pool), 2); /* the two with receiver 0 */
    CHECK_EQ(shm_pool_reclaim(&pool, 1), 0);
    /* Receiver 0 still reads its frames whole, and its cells come back. */
    size_t want[] = {8, 250, 252};
    for (int i = 0; i < 3; i++) {
        CHECK(shm_chan_peek(&c0, &d, &len));
        CHECK(len == want[i] && memcmp(d, buf, len) == 0);
        shm_chan_release(&c0);
    }
    shm_pool_drain(&pool);
    CHECK_EQ(shm_pool_out(&pool), 0);
    /* The pool now has every cell it ever used and no others: exhaust it and check that
     * exactly NSMALL small cells are handed out, no cell twice. */
    uint32_t seen = 0;
    for (int i = 0; i < NSMALL; i++)
        CHECK_EQ(push_n(&p0, buf, 250), 0);
    CHECK_EQ(push_n(&p0, buf, 250), TERN_ERR_AGAIN);
    CHECK_EQ(pool.fresh_small, NSMALL);
    for (int i = 0; i < NSMALL; i++) {
        CHECK(shm_chan_peek(&c0, &d, &len));
        CHECK(c0.cur_cell < NSMALL && !(seen & (1u << c0.cur_cell)));
        seen |= 1u << c0.cur_cell;
        CHECK(len == 250 && memcmp(d, buf, len) == 0);
        shm_chan_release(&c0);
    }
    CHECK_EQ(seen, (1u << NSMALL) - 1);
    /* A big frame whose memory cannot be had: NOSPACE, and the cell stays usable. */
    touch_fail = 1;
    CHECK_EQ(push_n(&p0, buf, FRAME_MAX), TERN_ERR_NOSPACE);
    touch_fail = 0;
    CHECK_EQ(push_n(&p0, buf, FRAME_MAX), 0);
    shm_pool_fini(&pool);
    free(r);
}

/* A child produces `count` frames to each of `nc` consumers over one shared pool of a few
 * cells; the consumers (the parent and, for nc == 2, a second child) check every byte and
 * give the cells back concurrently. */
static void run_processes(int nc, uint32_t count)
{
    struct rig *r = rig_new(1);
    pid_t prod = fork();
    if (prod == 0) {
        struct shm_pool_view v = rig_view(r);
        struct shm_pool pool;
        if (shm_pool_init(&pool, &v, NULL)) _exit(2);
        struct shm_chan c[NCHAN];
        for (int i = 0; i < nc; i++)
            rig_prod(r, i, &pool, &c[i]);
        _Alignas(64) unsigned char buf[FRAME_MAX];
        for (uint32_t i = 0; i < count; i++)
            for (int k = 0; k < nc; k++) {
                size_t n = len_of(i + (uint32_t)k);
                fill(buf, i + (uint32_t)k, n);
                struct iovec iov = {buf, n};
                for (unsigned spin = 0; shm_chan_push(&c[k], &iov, 1, n) == TERN_ERR_AGAIN;)
                    if (++spin % 256 == 0) sched_yield(); /* processes may share a core */
            }
        _exit(0);
    }
    pid_t other = -1;
    int me = 0;
    if (nc == 2) {
        other = fork();
        if (other == 0) me = 1;
    }
    struct shm_pool_view v = rig_view(r);
    struct shm_chan cons;
    rig_cons(r, me, &v, &cons);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < count; i++) {
        const void *d;
        size_t len;
        for (unsigned spin = 0; !shm_chan_peek(&cons, &d, &len);)
            if (++spin % 256 == 0) sched_yield();
        if (!frame_ok(d, len, i + (uint32_t)me) && bad++ < 5)
            fprintf(stderr, "consumer %d: frame %u corrupt\n", me, i);
        shm_chan_release(&cons);
    }
    if (me == 1) _exit(bad ? 1 : 0);
    CHECK_EQ(bad, 0);
    int status;
    CHECK(waitpid(prod, &status, 0) == prod && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    if (other > 0)
        CHECK(waitpid(other, &status, 0) == other && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    munmap(r, sizeof *r);
}

/* A channel of n slots (producer and consumer in this process) and a pool of ns cells of
 * c bytes, for the tests of frames over many slots. */
struct lrig {
    void *mem;
    unsigned char *cells;
    _Atomic uint32_t next[8], head;
    struct shm_pool_view v;
    struct shm_pool pool;
    struct shm_chan prod, cons;
};

static void lrig_init(struct lrig *g, uint64_t n, uint32_t ns, size_t c)
{
    CHECK(ns <= 8);
    g->mem = aligned_alloc(64, shm_chan_bytes(n));
    g->cells = aligned_alloc(64, ns * c);
    CHECK(g->mem && g->cells);
    memset(g->mem, 0, shm_chan_bytes(n));
    atomic_store(&g->head, SHM_CELL_NONE);
    shm_pool_view_init(&g->v, g->cells, g->next, &g->head, ns, 0, c);
    CHECK_EQ(shm_pool_init(&g->pool, &g->v, NULL), 0);
    shm_chan_init(&g->prod, g->mem, n);
    shm_chan_init(&g->cons, g->mem, n);
    g->prod.pool = &g->pool;
    g->cons.src = &g->v;
}

static void lrig_fini(struct lrig *g)
{
    shm_pool_fini(&g->pool);
    free(g->cells);
    free(g->mem);
}

/* A ring of 2 * SHM_FRAME_LINES slots takes frames of up to SHM_FRAME_LINES slots: a 256-byte
 * message with its header stays in slots (so does a 1000-byte one, in 17), the largest slot frame
 * takes exactly SHM_FRAME_LINES of them, one byte more goes to a cell, and the consumer
 * leaves the released continuation slots untouched. */
static void test_long_line_frames(void)
{
    enum { N = RING_FOR_LONGEST, NS = 4, C = SHM_SLOT * SHM_FRAME_LINES };
    CHECK_EQ(shm_chan_bytes(N), SHM_RING_HEAD_BYTES + N * sizeof(struct shm_line));
    struct lrig g;
    lrig_init(&g, N, NS, C);
    size_t lmax = SHM_LINE_INLINE + (SHM_FRAME_LINES - 1) * SHM_SLOT;
    CHECK_EQ(g.prod.lines_max, lmax);
    CHECK_EQ(shm_chan_lines_max(4), SHM_LINE_INLINE + SHM_SLOT);
    CHECK_EQ(shm_chan_lines_max(2), SHM_LINE_INLINE);
    static _Alignas(64) unsigned char buf[64 * SHM_FRAME_LINES];
    const void *d;
    size_t len;
    /* From a 64-aligned source, frames of SHM_LINE_ALIGN_MIN bytes or more start where
     * their data lies on a line boundary (shm_line_offset): 56 bytes into the first slot's
     * data of a slot in a line's first half, 24 in its second; the largest has no room for
     * it; smaller ones (272 bytes, one byte under the rule) start at the first byte.
     * Slots: as shm_lines_for says from that offset (so SHM_LINE_ALIGN_MIN and 1000 bytes
     * may take a slot more than from the first byte); a frame in a cell takes one. */
    const size_t lens[] = {272,
                           lmax,
                           lmax + 1,
                           1000,
                           SHM_LINE_INLINE + 1,
                           SHM_LINE_ALIGN_MIN - 1,
                           1000,
                           SHM_LINE_ALIGN_MIN};
    const int aligned[] = {0, 0, 0, 1, 0, 0, 1, 1};
    const int incell[] = {0, 0, 1, 0, 0, 0, 0, 0};
    enum { NL = sizeof lens / sizeof lens[0] };
    uint64_t slots[NL];
    size_t offs[NL];
    for (int i = 0; i < NL; i++) {
        uint64_t l0 = g.prod.line_pos;
        size_t at = offsetof(struct shm_line, data) + (size_t)(l0 * SHM_SLOT % 64);
        offs[i] = aligned[i] ? (64 - at) % 64 : 0;
        slots[i] = incell[i] ? 1 : shm_lines_for(offs[i], lens[i]);
        fill(buf, 60 + (uint32_t)i, lens[i]);
        CHECK_EQ(push_n(&g.prod, buf, lens[i]), 0);
        CHECK_EQ(g.prod.line_pos - l0, slots[i]);
        CHECK(shm_chan_peek(&g.cons, &d, &len));
        CHECK(len == lens[i] && memcmp(d, buf, len) == 0);
        CHECK((d == g.cells) == (incell[i] == 1));
        if (!incell[i]) {
            CHECK((const unsigned char *)d == g.cons.lines[l0 % N].data + offs[i]);
            CHECK(offs[i] == 0 || ((uintptr_t)d & 63) == 0);
        }
        shm_chan_release(&g.cons);
        shm_chan_answered(&g.prod); /* the peer replies, as in a ping-pong */
        CHECK_EQ(g.cons.line_pos, g.prod.line_pos);
        for (uint64_t p = l0 + 1; p < l0 + slots[i]; p++) {
            /* A slot whose word lies in the padding before the frame holds no frame byte. */
            if (SHM_LINE_INLINE + (p - l0 - 1) * SHM_SLOT < offs[i]) continue;
            size_t off = SHM_LINE_INLINE + (p - l0 - 1) * SHM_SLOT - offs[i];
            uint32_t w, got = atomic_load(&g.cons.lines[p % N].seq);
            if (off + sizeof w > lens[i]) { /* the frame ends inside this word */
                CHECK_EQ(got & 0xffu, buf[off]);
                continue;
            }
            memcpy(&w, buf + off, sizeof w);
            CHECK_EQ(got, w);
        }
    }
    CHECK(!shm_chan_peek(&g.cons, &d, &len));
    /* A header and a payload from each of 64 offsets: the payload lands at its source's
     * offset modulo 64, byte for byte, in the slots shm_lines_for says; a frame that would
     * wrap around the ring's end starts at slot 0 (a skip slot before it), never in a
     * cell. */
    unsigned char hdr[16];
    fill(hdr, 7, sizeof hdr);
    int in_lines = 0;
    for (uint32_t k = 0; k < 64; k++) {
        fill(buf, 90 + k, 1000 + 64);
        struct iovec iov[2] = {{hdr, sizeof hdr}, {buf + k, 1000}};
        uint64_t l0 = g.prod.line_pos;
        CHECK_EQ(shm_chan_push(&g.prod, iov, 2, 1016), 0);
        CHECK(shm_chan_peek(&g.cons, &d, &len));
        const unsigned char *f = d;
        uint64_t at_slot = g.cons.line_pos; /* past the skip, if there was one */
        size_t at = (size_t)(f - g.cons.lines[at_slot % N].data);
        CHECK(len == 1016 && memcmp(f, hdr, 16) == 0 && memcmp(f + 16, buf + k, 1000) == 0);
        if (g.cons.cur_cell == SHM_CELL_NONE) {
            in_lines++;
            CHECK(at < 64 && (((uintptr_t)(f + 16) - (uintptr_t)(buf + k)) & 63) == 0);
            CHECK_EQ(g.prod.line_pos - at_slot, shm_lines_for(at, 1016));
            CHECK(at_slot == l0 || (at_slot % N == 0 && l0 % N + (g.prod.line_pos - at_slot) > N));
        }
        shm_chan_release(&g.cons);
        shm_chan_answered(&g.prod); /* the peer replies, as in a ping-pong */
        CHECK_EQ(g.cons.line_pos, g.prod.line_pos);
    }
    CHECK_EQ(in_lines, 64); /* 33-34 slots each: about 30 a lap, then a skip to slot 0 */
    /* A corrupt offset stays inside the slots: the frame is cut to what is left of them.
     * (One-slot frames first, up to the ring's start, so that the frame does not wrap.) */
    while (g.prod.line_pos % N) {
        struct iovec one = {buf, 8};
        CHECK_EQ(shm_chan_push(&g.prod, &one, 1, 8), 0);
        CHECK(shm_chan_peek(&g.cons, &d, &len));
        shm_chan_release(&g.cons);
    }
    struct iovec big = {buf, lmax};
    CHECK_EQ(shm_chan_push(&g.prod, &big, 1, lmax), 0);
    struct shm_line *line = &g.cons.lines[g.cons.line_pos % N];
    line->len |= 63u << SHM_LEN_LINES_OFF_SHIFT;
    CHECK(shm_chan_peek(&g.cons, &d, &len));
    CHECK(len == lmax - 63 && (const unsigned char *)d == line->data + 63);
    CHECK_EQ(g.cons.cur_lines, SHM_FRAME_LINES);
    shm_chan_release(&g.cons);
    CHECK(!shm_chan_peek(&g.cons, &d, &len));
    lrig_fini(&g);
}

/* A ring larger than a page grows page by page over its first lap (page-aligned, as
 * shm.c lays out rings of a page or more); a ring under a page asks for exactly its
 * bytes, never for a neighbour's page beyond its end. */
static void test_ring_growth(void)
{
    enum { BIG = 256, SMALL = 32 };
    /* Slots in the first page, after the channel's head. */
    const int first = (int)((SHM_PAGE - SHM_RING_HEAD_BYTES) / sizeof(struct shm_line));
    size_t big_bytes = shm_chan_bytes(BIG), small_bytes = shm_chan_bytes(SMALL);
    unsigned char *mem = aligned_alloc(SHM_PAGE, 4 * SHM_PAGE);
    CHECK(mem != NULL);
    if (mem == NULL) return;
    memset(mem, 0, 4 * SHM_PAGE);
    struct shm_pool pool;
    memset(&pool, 0, sizeof pool);
    struct shm_chan c;
    unsigned char buf[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    struct iovec iov = {buf, sizeof buf};

    shm_chan_init(&c, mem, BIG);
    c.pool = &pool;
    c.touch = count_touch;
    c.lines_ready = 0;
    touched_bytes = 0;
    CHECK_EQ(shm_chan_push(&c, &iov, 1, sizeof buf), 0);
    CHECK_EQ(touched_bytes, SHM_PAGE); /* head + `first` slots */
    for (int i = 1; i < first; i++)
        CHECK_EQ(shm_chan_push(&c, &iov, 1, sizeof buf), 0);
    CHECK_EQ(touched_bytes, SHM_PAGE);
    CHECK_EQ(shm_chan_push(&c, &iov, 1, sizeof buf), 0); /* the second page */
    CHECK_EQ(touched_bytes, 2 * SHM_PAGE);
    for (int i = first + 1; i < BIG; i++)
        CHECK_EQ(shm_chan_push(&c, &iov, 1, sizeof buf), 0);
    CHECK_EQ(touched_bytes, big_bytes); /* the last page ends with the ring */
    CHECK_EQ(c.lines_ready, UINT64_MAX);
    CHECK_EQ(shm_chan_push(&c, &iov, 1, sizeof buf), TERN_ERR_AGAIN); /* full, nothing read */

    memset(mem, 0, 4 * SHM_PAGE);
    shm_chan_init(&c, mem + small_bytes, SMALL); /* packed: mid-page, as ring 1 of 32 slots */
    c.pool = &pool;
    c.touch = count_touch;
    c.lines_ready = 0;
    touched_bytes = 0;
    CHECK_EQ(shm_chan_push(&c, &iov, 1, sizeof buf), 0);
    CHECK_EQ(touched_bytes, small_bytes);
    CHECK_EQ(c.lines_ready, UINT64_MAX);
    for (int i = 1; i < SMALL; i++)
        CHECK_EQ(shm_chan_push(&c, &iov, 1, sizeof buf), 0);
    CHECK_EQ(touched_bytes, small_bytes);
    CHECK_EQ(shm_chan_push(&c, &iov, 1, sizeof buf), TERN_ERR_AGAIN);
    /* A reader sees the 32 frames in order, byte for byte. */
    struct shm_chan r;
    shm_chan_init(&r, mem + small_bytes, SMALL);
    for (int i = 0; i < SMALL; i++) {
        const void *d = NULL;
        size_t len = 0;
        CHECK(shm_chan_peek(&r, &d, &len));
        CHECK_EQ(len, sizeof buf);
        CHECK(memcmp(d, buf, sizeof buf) == 0);
        shm_chan_release(&r);
    }
    free(mem);
}

/* The list of senders: entries fill from the front; a sender that dies after counting
 * itself but before taking an entry (simulated: the count alone moves) hides nobody
 * who joins later, and a full list is TERN_ERR_TRANSPORT. */
static void test_senders_list(void)
{
    enum { N = 6 };
    _Atomic uint32_t count = 0;
    _Atomic int32_t list[N];
    for (int i = 0; i < N; i++)
        atomic_init(&list[i], 0);
    CHECK_EQ(shm_senders_join(&count, list, N, 4), 0);
    CHECK_EQ(shm_senders_at(list, 0), 4);
    CHECK_EQ(shm_senders_at(list, 1), -1);
    atomic_fetch_add(&count, 1); /* sender 2 counted itself and was killed */
    CHECK_EQ(shm_senders_join(&count, list, N, 0), 0);
    CHECK_EQ(shm_senders_join(&count, list, N, 5), 0);
    /* What a receiver reads from the front while count says there is more: 4, 0, 5 and
     * then an entry nobody writes (count stays one ahead), never a hole before them. */
    uint32_t ns = atomic_load(&count), took = 0;
    int32_t seen[N];
    while (took < ns && shm_senders_at(list, took) != -1)
        seen[took] = shm_senders_at(list, took), took++;
    CHECK_EQ(ns, 4);
    CHECK_EQ(took, 3);
    CHECK_EQ(seen[0], 4);
    CHECK_EQ(seen[1], 0);
    CHECK_EQ(seen[2], 5);
    CHECK_EQ(shm_senders_join(&count, list, N, 1), 0);
    CHECK_EQ(shm_senders_at(list, 3), 1);
    CHECK_EQ(shm_senders_join(&count, list, N, 3), 0); /* count 6 now: the list is full */
    CHECK_EQ(shm_senders_join(&count, list, N, 3), TERN_ERR_TRANSPORT);
    CHECK_EQ(shm_senders_at(list, 5), -1);
}

/* Frames of random lengths (1 slot to the most a ring of 16 takes in slots) and random
 * batches, over thousands of laps, whose data puts at every continuation slot's sequence
 * word a value that slot has when full one, two or three laps later: the consumer never
 * writes a slot, so only the producer's guard of the slot after each frame stands between
 * those bytes and a phantom frame. Every frame arrives once, whole, in order, and nothing
 * more. */
static void test_stale_continuations(void)
{
    enum { N = 16, NS = 8, C = 2048 };
    struct lrig g;
    lrig_init(&g, N, NS, C);
    size_t lmax = shm_chan_lines_max(N);
    CHECK(lmax > 3 * SHM_SLOT);
    static unsigned char sent[N][1024];
    size_t sent_len[N];
    uint32_t rng = 12345, frames = 0, phantoms = 0;
    for (int round = 0; round < 20000; round++) {
        rng = rng * 1103515245u + 12345u;
        int batch = 1 + (int)((rng >> 16) % 4);
        int pushed = 0;
        for (int b = 0; b < batch; b++) {
            rng = rng * 1103515245u + 12345u;
            size_t n = 1 + (rng >> 8) % lmax;
            unsigned char *buf = sent[pushed];
            fill(buf, (uint32_t)frames + (uint32_t)b, n);
            /* Where slot p0 + 1 + i's sequence word would sit, write the value of that
             * position one to three laps on (varying). */
            uint64_t p0 = g.prod.line_pos;
            for (size_t off = SHM_LINE_INLINE, i = 0; off + 4 <= n; off += SHM_SLOT, i++) {
                uint32_t w = (uint32_t)(p0 + 1 + i + 1 + (uint64_t)N * (1 + (i + round) % 3));
                memcpy(buf + off, &w, 4);
            }
            if (push_n(&g.prod, buf, n) != 0) break; /* ring full: consume first */
            sent_len[pushed++] = n;
        }
        for (int b = 0; b < pushed; b++) {
            const void *d = NULL;
            size_t len = 0;
            CHECK(shm_chan_peek(&g.cons, &d, &len));
            CHECK(!g.cons.cur_ctrl && len == sent_len[b] && memcmp(d, sent[b], len) == 0);
            shm_chan_release(&g.cons);
        }
        frames += (uint32_t)pushed;
        const void *d = NULL;
        size_t len = 0;
        phantoms += (uint32_t)shm_chan_peek(&g.cons, &d, &len);
        CHECK_EQ(phantoms, 0);
        if (phantoms) break; /* one report is enough */
    }
    CHECK(frames > 20000);
    CHECK(g.prod.line_pos / N > 1000); /* thousands of laps */
    lrig_fini(&g);
}

/* The mid cell class: frames over the slots' limit and up to mid_size take a mid cell
 * (data right at every boundary), larger ones a small or a big cell; with every mid cell
 * out a mid-sized frame takes a small cell, with those out too the push is
 * TERN_ERR_AGAIN; returned mid cells are reused before a fresh one is touched; a mid
 * cell's touch covers its own bytes only (mid cells share pages); a dead receiver's mid
 * cells are reclaimed; a cell number past the mid cells reads as an empty frame. */
static const unsigned char *mid_region, *mid_touch_at;
static size_t mid_touch_len;
static int mid_touches;
static int mid_touch(void *addr, size_t len)
{
    if ((const unsigned char *)addr >= mid_region) { /* only the mid cells' touches */
        mid_touch_at = addr;
        mid_touch_len = len;
        mid_touches++;
    }
    return 0;
}

static int frame_ok_n(const void *data, size_t len, uint32_t i)
{
    static unsigned char want[4096];
    if (len > sizeof want) return 0;
    fill(want, i, len);
    return memcmp(data, want, len) == 0;
}

static void test_mid_cells(void)
{
    /* 32 slots carry frames up to 504 B; mid cells of 576 B; small cells of 1 KiB. */
    enum { N = 32, NS = 2, NB = 1, NM = 3, C = 1024, M = 576 };
    const size_t lmax = shm_chan_lines_max(N);
    CHECK_EQ(lmax, SHM_LINE_INLINE + 15 * SHM_SLOT);
    void *mem = aligned_alloc(64, shm_chan_bytes(N));
    size_t pool_bytes = shm_pool_bytes(NS, NB, C) + NM * M;
    unsigned char *cells = aligned_alloc(64, pool_bytes);
    _Atomic uint32_t next[NS + NB + NM], head = SHM_CELL_NONE;
    memset(mem, 0, shm_chan_bytes(N));
    memset(cells, 0, pool_bytes);
    struct shm_pool_view v;
    shm_pool_view_init(&v, cells, next, &head, NS, NB, C);
    CHECK_EQ(v.nmid, 0);
    shm_pool_view_mid(&v, NM, 0); /* no size: no mid cells */
    CHECK_EQ(v.nmid, 0);
    shm_pool_view_mid(&v, NM, M);
    CHECK_EQ(shm_pool_ncells(&v), NS + NB + NM);
    CHECK_EQ(shm_pool_mid0(&v), NS + NB);
    CHECK_EQ(shm_pool_cell_size(&v, 0), C);
    CHECK_EQ(shm_pool_cell_size(&v, NS), SHM_FRAME_CELLS * C);
    CHECK_EQ(shm_pool_cell_size(&v, NS + NB), M);
    CHECK(shm_pool_cell(&v, NS + NB) == cells + NS * C + NB * SHM_FRAME_CELLS * C);
    CHECK(shm_pool_cell(&v, NS + NB + 2) == shm_pool_cell(&v, NS + NB) + 2 * M);
    unsigned char *mid0 = shm_pool_cell(&v, NS + NB);
    mid_region = mid0;
    struct shm_pool pool;
    CHECK_EQ(shm_pool_init(&pool, &v, mid_touch), 0);
    struct shm_chan prod, cons;
    shm_chan_init(&prod, mem, N);
    shm_chan_init(&cons, mem, N);
    prod.pool = &pool;
    prod.dest = 3;
    cons.src = &v;
    static _Alignas(64) unsigned char buf[SHM_FRAME_CELLS * C];
    const void *d;
    size_t len;
    /* Boundaries: slots | mid | small | big. */
    const size_t lens[] = {lmax, lmax + 1, M - 1, M, M + 1, C, C + 1};
    const int cls[] = {0, 3, 3, 3, 1, 1, 2}; /* 0 slots, 1 small, 2 big, 3 mid */
    for (int i = 0; i < 7; i++) {
        fill(buf, 90 + (uint32_t)i, lens[i]);
        CHECK_EQ(push_n(&prod, buf, lens[i]), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK(len == lens[i] && memcmp(d, buf, len) == 0);
        const unsigned char *u = d;
        int got = u >= mid0 && u < mid0 + NM * M     ? 3
                  : u >= cells + NS * C && u < mid0  ? 2
                  : u >= cells && u < cells + NS * C ? 1
                                                     : 0;
        CHECK_EQ(got, cls[i]);
        CHECK_EQ(cons.cur_cell == SHM_CELL_NONE, cls[i] == 0);
        shm_chan_release(&cons);
    }
    /* Returned mid cells were reused: one mid cell serves all three mid frames, and its
     * one touch covered exactly its own bytes. */
    CHECK_EQ(pool.fresh_mid, 1);
    CHECK_EQ(mid_touches, 1);
    CHECK(mid_touch_at == mid0 && mid_touch_len == M);
    mid_touches = 0;
    /* Exhaustion: 3 mid frames take the 3 mid cells (2 fresh: 2 touches of M bytes each,
     * at their own cells), the 4th and 5th the two small cells, the 6th finds nothing. */
    for (int i = 0; i < 5; i++) {
        fill(buf, 200 + (uint32_t)i, M);
        CHECK_EQ(push_n(&prod, buf, M), 0);
    }
    CHECK_EQ(mid_touches, 2);
    CHECK(mid_touch_at == mid0 + 2 * M && mid_touch_len == M);
    CHECK_EQ(pool.fresh_mid, NM);
    CHECK_EQ(shm_pool_out(&pool), NM + NS);
    fill(buf, 205, M);
    uint64_t pos = prod.line_pos;
    CHECK_EQ(push_n(&prod, buf, M), TERN_ERR_AGAIN);
    CHECK_EQ(prod.line_pos, pos); /* nothing written */
    /* The receiver takes the first frame (a mid cell): the next mid frame reuses it. */
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK(len == M && frame_ok_n(d, len, 200));
    CHECK(cons.cur_cell >= NS + NB);
    shm_chan_release(&cons);
    CHECK_EQ(push_n(&prod, buf, M), 0);
    CHECK_EQ(mid_touches, 2); /* no fresh cell, no touch */
    /* A dead receiver's cells come back, mid ones included. */
    CHECK_EQ(shm_pool_reclaim(&pool, 3), NM + NS);
    CHECK_EQ(shm_pool_out(&pool), 0);
    /* Every frame still queued reads back intact (the reclaim only reset the owner's
     * records: this consumer is not dead, it just reads what is there). */
    for (int i = 1; i < 6; i++) {
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK(len == M && frame_ok_n(d, len, 200 + (uint32_t)i));
        shm_chan_release(&cons);
    }
    CHECK(!shm_chan_peek(&cons, &d, &len));
    /* Those cells came back a second time: the owner, which took them back already,
     * skips them, so no cell is free twice. */
    shm_pool_drain(&pool);
    CHECK_EQ(pool.nfree_mid, NM);
    CHECK_EQ(pool.free_small.n, NS);
    CHECK_EQ(shm_pool_out(&pool), 0);
    /* A cell number past the mid cells: an empty frame. */
    CHECK_EQ(push_n(&prod, buf, M), 0);
    uint32_t bad = NS + NB + NM;
    memcpy(cons.lines[cons.line_pos % N].data, &bad, sizeof bad);
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK_EQ(len, 0);
    shm_chan_release(&cons);
    /* A frame that fits a mid cell only without its offset takes a small cell with it (an
     * aligned copy beats a mid cell); one that fits with its offset stays in a mid cell. */
    const size_t fits[] = {M - 16, M - 8}; /* from 16 bytes past a line: offset 16 */
    const int want_mid[] = {1, 0};
    for (int i = 0; i < 2; i++) {
        fill(buf, 220 + (uint32_t)i, fits[i] + 16);
        struct iovec one = {buf + 16, fits[i]};
        CHECK_EQ(shm_chan_push(&prod, &one, 1, fits[i]), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK(len == fits[i] && memcmp(d, buf + 16, len) == 0);
        CHECK_EQ(((uintptr_t)d - (uintptr_t)(buf + 16)) & 63, 0);
        CHECK_EQ(cons.cur_cell >= NS + NB, want_mid[i]);
        CHECK(want_mid[i] || cons.cur_cell < NS);
        shm_chan_release(&cons);
    }
    shm_pool_fini(&pool);
    free(cells);
    free(mem);
}

/* A frame in a cell starts where its payload (the longest piece) lands at its source's
 * offset modulo 64, header and all intact; never where that would need a larger kind of
 * cell, nor past the end of the largest. */
static void test_cell_offsets(void)
{
    struct rig *r = rig_new(0);
    struct shm_pool_view v = rig_view(r);
    struct shm_pool pool;
    CHECK_EQ(shm_pool_init(&pool, &v, NULL), 0);
    struct shm_chan prod, cons;
    rig_prod(r, 0, &pool, &prod);
    rig_cons(r, 0, &v, &cons);
    static _Alignas(64) unsigned char src[FRAME_MAX + 64];
    unsigned char hdr[16];
    const void *d;
    size_t len;
    fill(hdr, 1, sizeof hdr);
    for (uint32_t k = 0; k < 64; k++) {
        fill(src, 40 + k, sizeof src);
        /* Header and payload from two places: a big cell (1016 bytes > CELL). */
        struct iovec iov[2] = {{hdr, sizeof hdr}, {src + k, 1000}};
        CHECK_EQ(shm_chan_push(&prod, iov, 2, 1016), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        const unsigned char *f = d;
        CHECK(len == 1016 && memcmp(f, hdr, 16) == 0 && memcmp(f + 16, src + k, 1000) == 0);
        CHECK(cons.cur_cell >= NSMALL && cons.cur_cell < NSMALL + NBIG);
        CHECK_EQ(((uintptr_t)(f + 16) - (uintptr_t)(src + k)) & 63, 0);
        CHECK((size_t)(f - shm_pool_cell(&v, cons.cur_cell)) < 64);
        shm_chan_release(&cons);
        /* One piece that fills a small cell but for 3 bytes: an offset over 3 would need a
         * big cell, so the frame starts at its small cell's first byte. */
        struct iovec one = {src + k, CELL - 3};
        CHECK_EQ(shm_chan_push(&prod, &one, 1, CELL - 3), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK(len == CELL - 3 && memcmp(d, src + k, CELL - 3) == 0 && cons.cur_cell < NSMALL);
        uintptr_t at = (uintptr_t)d - (uintptr_t)shm_pool_cell(&v, cons.cur_cell);
        CHECK(at == 0 || (at <= 3 && (((uintptr_t)d - (uintptr_t)(src + k)) & 63) == 0));
        shm_chan_release(&cons);
        /* The largest frame has no room for an offset. */
        one = (struct iovec){src + k, FRAME_MAX};
        CHECK_EQ(shm_chan_push(&prod, &one, 1, FRAME_MAX), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK(len == FRAME_MAX && memcmp(d, src + k, FRAME_MAX) == 0 &&
              d == shm_pool_cell(&v, cons.cur_cell));
        shm_chan_release(&cons);
    }
    CHECK(!shm_chan_peek(&cons, &d, &len));
    /* A corrupt offset stays inside the cell: the frame is cut to what is left of it. */
    struct iovec one = {src, FRAME_MAX};
    CHECK_EQ(shm_chan_push(&prod, &one, 1, FRAME_MAX), 0);
    struct shm_line *line = &cons.lines[cons.line_pos & (NLINES - 1)];
    uint32_t bad = 0xffffffffu;
    memcpy(line->data + 4, &bad, sizeof bad);
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK(len == FRAME_MAX - 63 &&
          (const unsigned char *)d == shm_pool_cell(&v, cons.cur_cell) + 63);
    shm_chan_release(&cons);
    shm_pool_fini(&pool);
    free(r);
}

/*
 * A frame that would run past the ring's end: the producer publishes a skip slot and
 * writes the frame from slot 0; the consumer goes there and gives the skipped slots back.
 * Slots a skip passes over keep an older lap's bytes, which must never read as a frame:
 * here a 3-slot frame leaves, at slots 6 and 7, the very values those slots hold when full
 * two laps later; the next lap skips them, and the lap after sends one-slot frames only,
 * so the consumer looks at them as frame heads while they still hold those bytes.
 * Without room for the skipped slots and the frame, the frame takes a cell (see
 * test_single_process).
 */
static void test_skip_to_slot0(void)
{
    struct lrig g;
    lrig_init(&g, NLINES, NSMALL, CELL);
    unsigned char buf[LINES_MAX];
    const void *d;
    size_t len;
    memset(buf, 0, sizeof buf);
    /* One-slot frames, each consumed, to position `to`. */
#define ONES_TO(to)                                                                                \
    while (g.prod.line_pos < (to)) {                                                               \
        CHECK_EQ(push_n(&g.prod, buf, 1), 0);                                                      \
        CHECK(shm_chan_peek(&g.cons, &d, &len));                                                   \
        CHECK_EQ(len, 1);                                                                          \
        shm_chan_release(&g.cons);                                                                 \
    }
    ONES_TO(NLINES);
    uint64_t s0 = g.prod.line_pos;
    ONES_TO(s0 + 5);
    uint32_t w6 = (uint32_t)(s0 + 6 + 2 * NLINES + 1), w7 = (uint32_t)(s0 + 7 + 2 * NLINES + 1);
    memcpy(buf + SHM_LINE_INLINE, &w6, 4);
    memcpy(buf + SHM_LINE_INLINE + SHM_SLOT, &w7, 4);
    CHECK_EQ(push_n(&g.prod, buf, F3), 0); /* slots 5-7 */
    CHECK_EQ(g.prod.line_pos, s0 + NLINES);
    CHECK(shm_chan_peek(&g.cons, &d, &len));
    CHECK(len == F3 && memcmp(d, buf, F3) == 0);
    shm_chan_release(&g.cons);

    /* Next lap, at slot 5: a 4-slot frame skips slots 5-7 and takes 0-3, no cell. */
    ONES_TO(s0 + NLINES + 5);
    uint32_t out0 = shm_pool_out(&g.pool);
    fill(buf, 77, F4);
    CHECK_EQ(push_n(&g.prod, buf, F4), 0);
    CHECK_EQ(g.prod.line_pos, s0 + 2 * NLINES + 4);
    CHECK_EQ(shm_pool_out(&g.pool), out0);
    CHECK_EQ(g.cons.lines[5].len, SHM_LEN_SKIP);
    CHECK(shm_chan_peek(&g.cons, &d, &len));
    CHECK_EQ(g.cons.line_pos, s0 + 2 * NLINES); /* past the skip: slot 0 */
    CHECK(len == F4 && memcmp(d, buf, F4) == 0 && d == g.cons.lines[0].data);
    CHECK(g.cons.cur_cell == SHM_CELL_NONE && g.cons.cur_lines == 4);
    shm_chan_release(&g.cons);
    CHECK_EQ(atomic_load(g.cons.line_head), s0 + 2 * NLINES + 4);
    CHECK(!shm_chan_peek(&g.cons, &d, &len));
    /* Slots 6 and 7 still hold the first lap's bytes. */
    CHECK_EQ(atomic_load(&g.cons.lines[6].seq), w6);
    CHECK_EQ(atomic_load(&g.cons.lines[7].seq), w7);

    /* Then one-slot frames: slots 4 and 5, and the consumer looks at slot 6 - nothing. */
    ONES_TO(s0 + 2 * NLINES + 6);
    CHECK(!shm_chan_peek(&g.cons, &d, &len));
    ONES_TO(s0 + 2 * NLINES + 7);
    CHECK(!shm_chan_peek(&g.cons, &d, &len));
    ONES_TO(s0 + 3 * NLINES + 1);
    CHECK(!shm_chan_peek(&g.cons, &d, &len));
#undef ONES_TO
    lrig_fini(&g);
}

/*
 * SHM_BURST_LINES frames of SHM_BURST_MIN_LINES slots or more in a row take the slots; the
 * next ones take cells (one slot each) until the producer hears an answer; then the slots
 * again. Smaller frames over several slots neither count nor take cells.
 */
static void test_burst(void)
{
    enum { N = RING_FOR_LONGEST, NS = 4, C = SHM_SLOT * SHM_FRAME_LINES };
    struct lrig g;
    lrig_init(&g, N, NS, C);
    CHECK(SHM_BURST_LINES + 1 <= NS);
    static _Alignas(64) unsigned char buf[1024];
    const size_t big = SHM_LINE_INLINE + (SHM_BURST_MIN_LINES - 1) * SHM_SLOT; /* 18 or 19 slots */
    const void *d = NULL;
    size_t len = 0;
    for (int round = 0; round < 2; round++) {
        for (uint32_t i = 0; i < SHM_BURST_LINES + 3; i++) {
            /* big frames, with a small one over 2 slots after the first */
            size_t n = i == 1 ? F2 : big;
            int in_slots = n == F2 || i < SHM_BURST_LINES + 1;
            uint64_t l0 = g.prod.line_pos;
            fill(buf, i, n);
            CHECK_EQ(push_n(&g.prod, buf, n), 0);
            struct iovec iov = {buf, n};
            uint32_t off =
                n >= SHM_LINE_ALIGN_MIN ? shm_line_offset(shm_cell_offset(&iov, 1), l0) : 0;
            CHECK_EQ(g.prod.line_pos - l0, in_slots ? shm_lines_for(off, n) : 1u);
            CHECK(shm_chan_peek(&g.cons, &d, &len));
            CHECK(len == n && memcmp(d, buf, len) == 0);
            CHECK((g.cons.cur_cell == SHM_CELL_NONE) == in_slots);
            shm_chan_release(&g.cons);
        }
        CHECK_EQ(g.prod.burst, SHM_BURST_LINES);
        shm_chan_answered(&g.prod);
        CHECK_EQ(g.prod.burst, 0);
    }
    lrig_fini(&g);
}

/*
 * Early wrap (shm_chan_wrap_early): with wrap W, a frame of SHM_BURST_MIN_LINES slots or
 * more sent after an answer, that would end past slot W, starts again at slot 0 behind a
 * skip slot; without an answer it goes on, and so it does when the consumer still holds
 * the first slots (no room). A frame over half of W reuses slot 0 every time. wrap 0:
 * never. Every frame's bytes are checked, and none takes a cell.
 */
static void test_wrap_early(void)
{
    enum { N = RING_FOR_LONGEST, NS = 4, C = SHM_SLOT * SHM_FRAME_LINES, W = 256 };
    struct lrig g;
    lrig_init(&g, N, NS, C);
    g.prod.wrap = W;
    static _Alignas(64) unsigned char buf[SHM_SLOT * SHM_FRAME_LINES];
    const void *d = NULL;
    size_t len = 0;
    uint32_t seq = 0;
    /* Push n bytes, consume them (checked), and the answer; returns the frame's slot. */
#define PINGPONG(n, answered)                                                                      \
    ({                                                                                             \
        fill(buf, ++seq, (n));                                                                     \
        CHECK_EQ(push_n(&g.prod, buf, (n)), 0);                                                    \
        CHECK(shm_chan_peek(&g.cons, &d, &len));                                                   \
        CHECK(len == (n) && memcmp(d, buf, len) == 0);                                             \
        CHECK_EQ(g.cons.cur_cell, SHM_CELL_NONE);                                                  \
        uint64_t at_ = g.cons.line_pos & (N - 1);                                                  \
        shm_chan_release(&g.cons);                                                                 \
        if (answered) shm_chan_answered(&g.prod);                                                  \
        at_;                                                                                       \
    })
    /* 2 KiB frames (65-66 slots): 0, then on while they end within W, then 0 again. */
    const size_t n2k = 2048 + 16;
    uint64_t at = 0, lap0 = g.prod.line_pos;
    for (int i = 0; i < 12; i++) {
        uint64_t was = g.prod.line_pos & (N - 1);
        at = PINGPONG(n2k, 1);
        if (i == 0)
            CHECK_EQ(at, 0);
        else if (was + shm_lines_for(0, n2k) + 1 > W) {
            CHECK_EQ(at, 0);
            CHECK_EQ(g.cons.lines[was].len, SHM_LEN_SKIP);
        } else
            CHECK_EQ(at, was);
        CHECK(at + shm_lines_for(63, n2k) <= W);
    }
    CHECK(g.prod.line_pos - lap0 >= 2 * N); /* it wrapped, several laps */
    /* No answer: the next frames go on past W (two in a row take the slots). */
    at = PINGPONG(n2k, 1);
    uint64_t a1 = PINGPONG(n2k, 0);
    uint64_t a2 = PINGPONG(n2k, 0);
    CHECK(a1 > at && a2 > a1);
    shm_chan_answered(&g.prod);
    /* A 2 KiB frame at slot 0 (consumed) and one after it the consumer still holds: a
     * 6000-byte frame would end past W, but its slots from 0 on include the held ones, so
     * there is no room for an early wrap and it goes on where the producer stands. */
    at = PINGPONG(n2k, 1);
    CHECK_EQ(at, 0);
    fill(buf, ++seq, n2k);
    CHECK_EQ(push_n(&g.prod, buf, n2k), 0); /* held */
    uint64_t held = g.prod.line_pos;
    shm_chan_answered(&g.prod);
    size_t n6k = 6000;
    fill(buf, ++seq, n6k);
    CHECK_EQ(push_n(&g.prod, buf, n6k), 0);
    struct iovec iov6 = {buf, n6k};
    uint32_t k6 = shm_lines_for(shm_line_offset(shm_cell_offset(&iov6, 1), held), n6k);
    CHECK_EQ(g.prod.line_pos - held, k6);
    for (int i = 0; i < 2; i++) {
        CHECK(shm_chan_peek(&g.cons, &d, &len));
        CHECK_EQ(len, i == 0 ? n2k : n6k);
        CHECK_EQ(g.cons.cur_cell, SHM_CELL_NONE);
        shm_chan_release(&g.cons);
    }
    shm_chan_answered(&g.prod);
    /* Frames larger than half of W: every one at slot 0. */
    for (int i = 0; i < 6; i++) {
        at = PINGPONG(n6k, 1);
        CHECK_EQ(at, 0);
    }
    /* wrap 0: never; the frames go round the whole ring. */
    g.prod.wrap = 0;
    uint64_t top = 0;
    for (int i = 0; i < 8; i++) {
        at = PINGPONG(n2k, 1);
        if (at > top) top = at;
    }
    CHECK(top > W);
#undef PINGPONG
    lrig_fini(&g);
}

/* Free cells come back in the order the receivers gave them back: a one-way stream takes
 * a cell never used while there is one, else the one given back longest ago; other
 * traffic takes the one given back last, and a fresh one only when none is free. The
 * queues wrap around their ends. Through a channel, the third frame in a row that no
 * answer separates is the first to take a cell the stream's way. */
static void test_pool_order(void)
{
    struct rig *r = rig_new(0);
    struct shm_pool_view v = rig_view(r);
    struct shm_pool pool;
    CHECK_EQ(shm_pool_init(&pool, &v, NULL), 0);
    pool.spread_ok = 1;
    uint32_t got, a, b;
    /* Other traffic reuses what came back; a stream takes fresh cells first. */
    CHECK_EQ(shm_pool_get(&pool, 100, 0, 0, &a), 0);
    CHECK_EQ(shm_pool_get(&pool, 100, 0, 0, &b), 0);
    CHECK(a == 0 && b == 1);
    shm_pool_view_put(&v, a);
    shm_pool_view_put(&v, b);
    CHECK_EQ(shm_pool_drain(&pool), 2);
    CHECK_EQ(shm_pool_get(&pool, 100, 0, 0, &got), 0);
    CHECK_EQ(got, b);
    for (uint32_t i = 2; i < NSMALL; i++) {
        CHECK_EQ(shm_pool_get(&pool, 100, 0, 1, &got), 0);
        CHECK_EQ(got, i);
    }
    CHECK_EQ(shm_pool_get(&pool, 100, 0, 1, &got), 0); /* no fresh one left: the queue's */
    CHECK_EQ(got, a);
    CHECK_EQ(shm_pool_get(&pool, 100, 0, 1, &got), TERN_ERR_AGAIN);
    CHECK_EQ(shm_pool_out(&pool), NSMALL);
    uint32_t id[5] = {0, 1, 2, 3, 4};
    for (int lap = 0; lap < 3; lap++) { /* 3 laps of 5 through a queue of 7: it wraps */
        /* given back as 3, 0, 4 (one drain), then 1 and 2 (another) */
        shm_pool_view_put(&v, id[3]);
        shm_pool_view_put(&v, id[0]);
        shm_pool_view_put(&v, id[4]);
        CHECK_EQ(shm_pool_drain(&pool), 3);
        shm_pool_view_put(&v, id[1]);
        shm_pool_view_put(&v, id[2]);
        CHECK_EQ(shm_pool_drain(&pool), 2);
        CHECK_EQ(shm_pool_out(&pool), NSMALL - 5);
        /* oldest: 3; newest: 2; oldest: 0; newest: 1; oldest: 4 */
        const uint32_t want[] = {id[3], id[2], id[0], id[1], id[4]};
        for (int i = 0; i < 5; i++) {
            CHECK_EQ(shm_pool_get(&pool, 100, 0, i % 2 == 0, &got), 0);
            CHECK_EQ(got, want[i]);
        }
        memcpy(id, want, sizeof id);
    }
    for (uint32_t i = 0; i < NSMALL; i++)
        shm_pool_view_put(&v, i);
    CHECK_EQ(shm_pool_drain(&pool), NSMALL);
    CHECK_EQ(shm_pool_out(&pool), 0);
    /* Big cells: the same queue rule. */
    uint32_t b0, b1, bb;
    CHECK_EQ(shm_pool_get(&pool, CELL + 1, 0, 0, &b0), 0);
    CHECK_EQ(shm_pool_get(&pool, CELL + 1, 0, 0, &b1), 0);
    CHECK(b0 >= NSMALL && b1 >= NSMALL && b0 != b1);
    shm_pool_view_put(&v, b1);
    shm_pool_view_put(&v, b0);
    shm_pool_drain(&pool);
    CHECK_EQ(shm_pool_get(&pool, CELL + 1, 0, 1, &bb), 0);
    CHECK_EQ(bb, b1);
    CHECK_EQ(shm_pool_get(&pool, CELL + 1, 0, 0, &bb), 0);
    CHECK_EQ(bb, b0);
    shm_pool_view_put(&v, b0);
    shm_pool_view_put(&v, b1);
    shm_pool_drain(&pool);
    /* Through a channel: frames in big cells (over SHM_BURST_MIN_LINES slots), each cell
     * given back at once. Both big cells are in the queue: the first two frames of a burst
     * take the newest, the third the oldest; an answer starts over. */
    struct shm_chan prod, cons;
    rig_prod(r, 0, &pool, &prod);
    rig_cons(r, 0, &v, &cons);
    static _Alignas(64) unsigned char buf[FRAME_MAX];
    const size_t n = FRAME_MAX - 64;
    CHECK(shm_lines_for(0, n) >= SHM_BURST_MIN_LINES && n > LINES_MAX && n > CELL);
    CHECK_EQ(pool.free_big.n, NBIG);
    for (int round = 0; round < 2; round++) {
        const void *d = NULL;
        size_t len = 0;
        for (int i = 0; i < SHM_BURST_LINES + 2; i++) {
            uint32_t oldest = pool.free_big.ids[pool.free_big.head];
            uint32_t newest = pool.free_big.ids[(pool.free_big.head + pool.free_big.n - 1) % NBIG];
            CHECK(oldest != newest);
            fill(buf, (uint32_t)i, n);
            CHECK_EQ(push_n(&prod, buf, n), 0);
            CHECK(shm_chan_peek(&cons, &d, &len));
            CHECK(len == n && memcmp(d, buf, n) == 0);
            CHECK_EQ(cons.cur_cell, i < SHM_BURST_LINES ? newest : oldest);
            shm_chan_release(&cons);
            CHECK_EQ(shm_pool_drain(&pool), 1);
        }
        CHECK_EQ(prod.burst, SHM_BURST_LINES);
        shm_chan_answered(&prod);
    }
    /* Without spread_ok (many processes on the node) a stream reuses like the rest: the
     * small queue holds 0..6 in that order, and the newest comes out. */
    pool.spread_ok = 0;
    CHECK_EQ(shm_pool_get(&pool, 100, 0, 1, &got), 0);
    CHECK_EQ(got, NSMALL - 1);
    shm_pool_fini(&pool);
    free(r);
}

int main(void)
{
    test_single_process();
    test_senders_list();
    test_ring_growth();
    test_pool_two_receivers();
    test_long_line_frames();
    test_stale_continuations();
    test_skip_to_slot0();
    test_wrap_early();
    test_burst();
    test_pool_order();
    test_mid_cells();
    test_cell_offsets();
    run_processes(1, 100000);
    run_processes(2, 10000);
    return unit_done("test_shm_ring");
}

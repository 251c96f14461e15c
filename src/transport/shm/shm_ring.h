/*
 * shm_ring.h - the pieces of the shm transport that are pure memory operations (no
 * system calls), shared by shm.c and the unit tests:
 *   - a channel: the single-producer/single-consumer ring of slots (SHM_SLOT bytes, two
 *     to a cache line) one sender has in one receiver's inbox (the fastbox ring), and
 *   - a pool: the cells one process sends its larger frames in, whatever the receiver.
 *
 * Layout of a channel in shared memory (in the receiver's segment):
 *   [line_head : 64 B][spare : 64 B][transport : 128 B][slots : nlines x 32 B]
 * The producer keeps its position privately and reads line_head only when it believes
 * the ring is full; the consumer publishes line_head as it releases frames.
 *
 * A pool (in its owner's segment, so that memory grows with the number of processes, not
 * with the number of pairs) has `nsmall` cells of cell_size bytes and `nbig` cells of
 * big_size bytes, and a `next` word per cell. Only the owner takes cells, from queues it
 * keeps privately; a receiver done with a frame gives its cell back by pushing it on the
 * owner's return stack (`ret_head` and `next`, a lock-free LIFO that many push and only
 * the owner empties, all at once with one exchange, so there is no ABA problem). The
 * owner empties it into its queues, in the order the cells came back, when they run dry.
 * A frame of a one-way stream (shm_chan_push_ctrl: the third in a row without an answer)
 * spreads over the whole pool: a cell never used while there is one, else the one given
 * back longest ago, so that the receiver's cache has let go of its lines by the time the
 * sender writes them again (an 8 KiB stream 0.96 -> 0.54 us per message, 2026-11-28;
 * the sender's copy had waited on the other core for every line it wrote). It does so
 * only with at most SHM_SPREAD_RANKS processes on the node (spread_ok), as it takes every
 * page of the pool (1.6 MiB with the defaults) where many processes each stream to a
 * peer. Other frames take the cell given back last, and a fresh one only when none is
 * free, so a ping-pong keeps using the same few cells (and pages); cells never used are
 * never touched.
 *
 * A pool may also have `nmid` mid cells of mid_size bytes (less than a page, packed, after
 * the big ones): a frame that fits one takes it before a small cell. Where the rings are
 * short (many ranks on a node) a 2 KiB message does not fit the slots, and in a small
 * cell it took the cell's whole first page; mid cells of 2 KiB and a header take about
 * half of that. When every mid cell is out, such a frame takes a small cell.
 *
 * A frame that does not fit the slots goes to a cell; its slot carries the cell's number and
 * where in the cell the frame starts (shm_cell_offset).
 * Slots stay the one ordered queue of a pair, so small and large frames never overtake.
 *
 * Memory is touched only where it is used: the channel and the pool call a `touch`
 * function (shm.c: madvise(MADV_POPULATE_WRITE), which fails cleanly where a first
 * write would raise SIGBUS on a full /dev/shm) before writing a page for the first time.
 */
#ifndef TERN_SHM_RING_H
#define TERN_SHM_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "tern.h"
#include "util/mem.h"

/*
 * A slot is half a cache line: its sequence word, its length word and SHM_LINE_INLINE
 * bytes of frame, so a core frame with up to 8 bytes of payload (16 of header) takes one
 * and two of them share a line. With a slot per line (SHM_VERSION 10 and before) a stream
 * of such messages moved a whole line per message, and where a line crosses between the
 * cores slowly (200 ns: the VM's slow phase, or a loaded machine) that was the price of
 * each one; Open MPI's fast box, packing small messages back to back, was 1.4x faster
 * there. Longer frames run on over the next slots as before (a 40-byte frame takes two
 * slots, one line, as it took one 64-byte slot), from SHM_LINE_ALIGN_MIN bytes their
 * payload on the source's line boundaries (shm_line_offset knows which half of a line a
 * frame starts in). Measured
 * 2026-11-28 (bench/phase_ab.py, MPI, 2 ranks, two quiet runs of 16 launches, medians of
 * the slow-phase launches, us per message, 64-byte -> 32-byte slots): stream 0 B 0.236 /
 * 0.243 -> 0.168 / 0.166, 8 B 0.238 / 0.249 -> 0.173 / 0.175, bidirectional 0 B 0.172 /
 * 0.187 -> 0.140 / 0.141 (Open MPI 5: stream 0.162, 8 B 0.200); fast phase level, 0 B to
 * 16 KiB (within 4% but bidirectional 8 KiB, 7% slower). Loaded (two busy processes, 20
 * launches, medians of all): stream 0 B 0.196 -> 0.131, 8 B 0.402 -> 0.227, bidirectional
 * 0 B 0.171 -> 0.134; ping-pong level (docs/PERFORMANCE.md, "Slots of half a line").
 */
#define SHM_SLOT        32
#define SHM_LINE_INLINE (SHM_SLOT - 2 * sizeof(uint32_t)) /* after seq and len: 24 */
/* Bytes before the slots: line_head, a spare line, and two lines the transport keeps for
 * itself (the cooperative-copy descriptor in shm.c). */
#define SHM_RING_HEAD_BYTES 256
/* A big cell is this many small cells long: the largest frame (with big cells). */
#define SHM_FRAME_CELLS 8
/* Pages are touched in units of this many bytes. */
#define SHM_PAGE 4096u
/* A slot whose len has this bit carries a transport control frame, not a core frame. */
#define SHM_LEN_CTRL 0x80000000u
/* ... and with this bit, a frame that continues over the next slots (see below). */
#define SHM_LEN_LINES 0x40000000u
#define SHM_LEN_MASK  0x3fffffffu
/* A slot of this len (no frame: LINES and zero bytes) tells the consumer to go on at
 * slot 0; the producer wrote the rest of the ring nothing (see SHM_FRAME_LINES). */
#define SHM_LEN_SKIP SHM_LEN_LINES
/* A frame over several slots starts this many bytes (0-63) into the first slot's data,
 * kept in bits 24-29 of len (such a frame is shorter than 2^24 bytes): see
 * shm_line_offset. */
#define SHM_LEN_LINES_OFF_SHIFT 24
#define SHM_LEN_LINES_LEN       0x00ffffffu
/*
 * Frames over several slots from this size on start at shm_line_offset; smaller ones at
 * the first byte, written by shm_chan_push_ctrl's inline path. An offset costs up to two
 * slots more (a 257-byte payload: 10-11 slots instead of 9), and below about 480 bytes
 * that cost more than aligned copies gained. Measured 2026-11-29 (MPI, 2 ranks, quiet,
 * fast-phase medians of 8-10 launches, us, offset from 256 -> from 496 bytes of frame):
 * payload 257 B stream 0.141 -> 0.083, ping-pong 0.230 -> 0.162, bidirectional 0.089 ->
 * 0.068; 320 B 0.121 -> 0.104 / 0.195 -> 0.188 / 0.084 -> 0.076; 400 B stream 0.141 ->
 * 0.125, ping-pong 0.217 -> 0.190; 456-472 B stream 0.148 -> 0.125; but sizes of whole
 * half-lines (352, 416 B), which the offset costs no slot, 5-10% slower; 480 B and up
 * level or better with the offset (ping-pong 480 B 0.184 against 0.194 without).
 */
#define SHM_LINE_ALIGN_MIN 496
/* Up to this many processes on a node, a stream's frames spread over the sender's pool. */
#define SHM_SPREAD_RANKS 8
/* "No cell" in a return stack or a consumer's state. */
#define SHM_CELL_NONE UINT32_MAX
/*
 * Frames that do not fit one slot but fit SHM_FRAME_LINES slots (and at most half the
 * ring) take consecutive slots: the data runs on from the first slot's data into the
 * next lines (which carry no sequence word of their own; the first slot's release store
 * publishes them all), so the receiver reads a few adjacent lines instead of a slot plus
 * a cell. A frame that would wrap around the end of the slot ring starts at slot 0
 * instead: the producer first publishes a skip slot (SHM_LEN_SKIP) where it stands, and
 * the consumer that reads it goes on at slot 0 (only when the ring has no room for the
 * skipped slots and the frame together does the frame take a cell). Before that rule,
 * frames over many slots mostly went to cells: after a wrap the next frame stood again
 * near the end (a frame in a cell takes one slot), so with 128 slots 26 of 29
 * consecutive 2 KiB frames (34 slots) and 9 of 16 1 KiB frames took a cell.
 * The consumer writes nothing into the slots it releases: stale data in a
 * continuation slot could look like a frame in a later lap only at the slot right after
 * a frame (the one the consumer reads next), and the producer checks that slot's
 * sequence word before it publishes a frame (within a lap of a frame over several slots).
 *
 * Up to 260 slots of 32 bytes (8,312 bytes; at most half the ring: with the default 1024
 * slots, up to 3 ranks on a node): every message up to 8 KiB (with its 16-byte header and
 * up to 63 bytes of alignment offset) stays out of the cells; with 512 slots (4-5 ranks)
 * up to 8,184 bytes, with 256 (6-9 ranks) up to 4,088. (In slots of 64 bytes, before
 * SHM_VERSION 11, those were 130, 128 and 64 slots.) 64 -> 130 slots, measured 2026-11-27
 * (MPI, 2 ranks, 512-slot rings, median of fast-phase launches, one-way us): ping-pong
 * 4096 B 0.942 -> 0.812, 6000 B 1.192 -> 1.066, 8189 B 1.347 -> 1.248; streams and
 * bidirectional within noise (those take cells after SHM_BURST_LINES frames anyway).
 * History: 20 slots while
 * the consumer still wrote each continuation slot's sequence word on release (which made
 * the producer's next write of it a transfer of the whole line back, from about 1.3 KiB
 * dearer than a cell's return); since the consumer writes no slot, a frame in slots
 * costs the lines of its data only. Measured 2026-11-27 (bench/shm_midload.sh, MPI
 * ping-pong one-way, chrt, same run, 20 -> 64 slots): 1280 B 0.97 -> 0.72 us, 2 KiB
 * 1.09 -> 0.99, 3 KiB 1.25 -> 1.16, 4093 B 1.47 -> 1.31; streams within 3 %. Before
 * that: a 256-byte message in a cell cost a slot, five cell lines and a cell's return
 * (256 B ping-pong 0.229 -> 0.167 us in slots, measured 2026-11-25).
 */
#define SHM_FRAME_LINES 260
/*
 * A sender takes the slots for at most SHM_BURST_LINES frames of SHM_BURST_MIN_LINES
 * slots or more in a row; the next such frames take cells until the receiver answers
 * (the transport calls shm_chan_answered when it reads a frame from that peer). In a
 * stream the receiver reads the slots right behind the sender's writes, and frames of
 * 640 B and more were slower in slots than in cells there; a ping-pong, where every
 * frame is answered, keeps the slots. Smaller frames keep them in streams too: in cells
 * 64-256 B streams were 5-15 % slower. Measured 2026-11-27 (MPI, 2 ranks, median of
 * fast-phase launches, us per message, stream / bidirectional; no limit -> these):
 * 640 B 0.247 -> 0.214 / 0.216 -> 0.203, 1 KiB 0.293 -> 0.214 / 0.260 -> 0.210,
 * 2 KiB 0.422 -> 0.325 / 0.386 -> 0.288; a limit of 1, 2 or 4 frames within 5 %.
 */
#define SHM_BURST_LINES     2
#define SHM_BURST_MIN_LINES 18
/* shm_chan_push_ctrl's inline path (frames below SHM_LINE_ALIGN_MIN) leaves bursts alone. */
_Static_assert(1 + (SHM_LINE_ALIGN_MIN - 1 - SHM_LINE_INLINE + SHM_SLOT - 1) / SHM_SLOT <
                   SHM_BURST_MIN_LINES,
               "frames below SHM_LINE_ALIGN_MIN take fewer slots than a burst counts");

/* Slots a frame of `total` bytes that starts `off` bytes into a slot's data takes. */
static inline uint32_t shm_lines_for(size_t off, size_t total)
{
    size_t end = off + total;
    return end <= SHM_LINE_INLINE
               ? 1
               : 1 + (uint32_t)((end - SHM_LINE_INLINE + SHM_SLOT - 1) / SHM_SLOT);
}

/* Make [addr, addr + len) writable memory that exists (0), or fail (nonzero). */
typedef int (*shm_touch_fn)(void *addr, size_t len);

/* A slot: the sequence word and the frame share half a cache line. */
struct shm_line {
    _Alignas(SHM_SLOT) _Atomic uint32_t seq; /* == position + 1 (mod 2^32) when full */
    uint32_t len; /* frame length (| SHM_LEN_*); > SHM_LINE_INLINE and no LINES: in a cell */
    unsigned char data[SHM_LINE_INLINE];
};
_Static_assert(sizeof(struct shm_line) == SHM_SLOT, "a slot is SHM_SLOT bytes");

/* A pool as any process sees it: the owner's memory, mapped here. */
struct shm_pool_view {
    unsigned char *cells;       /* nsmall small cells, then nbig big ones, then nmid mid */
    _Atomic uint32_t *next;     /* per cell: the next one down the return stack */
    _Atomic uint32_t *ret_head; /* top of the return stack, SHM_CELL_NONE when empty */
    uint32_t nsmall, nbig, nmid;
    uint64_t cell_size, big_size, mid_size;
};

/* A queue of free cells in the order they came back: ids[(head + i) % cap] for i < n,
 * the oldest first (cap: the cells of that kind). */
struct shm_cellq {
    uint32_t *ids;
    uint32_t cap, head, n;
};

/* The owner's private state of its pool. */
struct shm_pool {
    struct shm_pool_view v;
    struct shm_cellq free_small, free_big;      /* free cells, private */
    uint32_t *free_mid, nfree_mid;              /* ... and free mid cells, a stack */
    uint32_t fresh_small, fresh_big, fresh_mid; /* cells from here on were never used */
    int32_t *dest;                              /* per cell: the receiver it went to, or -1 */
    uint32_t *back;                             /* shm_pool_drain's list of cells back */
    uint32_t *ready;                            /* per cell: bytes from its start already touched */
    shm_touch_fn touch;                         /* NULL: memory is all there */
    int spread_ok; /* streams may spread over the pool (few processes on the node) */
};

/* One endpoint's private view of a channel (producer or consumer). */
struct shm_chan {
    _Atomic uint64_t *line_head; /* consumer's published slot position */
    struct shm_line *lines;
    uint64_t nlines;
    size_t lines_max;        /* the largest frame that goes into slots (shm_chan_lines_max) */
    uint64_t line_pos;       /* producer: next slot to fill; consumer: next slot to read */
    uint64_t line_head_seen; /* producer's cached copy of line_head */
    uint64_t lines_ready;    /* producer: slots below this were touched (UINT64_MAX: all) */
    shm_touch_fn touch;      /* producer: see shm_pool */
    struct shm_pool *pool;   /* producer: where its large frames go */
    int32_t dest;            /* producer: the receiver's number, for the pool's records */
    const struct shm_pool_view *src; /* consumer: the producer's pool */
    uint32_t cur_cell;               /* consumer: cell of the peeked frame, or NONE */
    size_t cur_len;                  /* consumer: length of the peeked frame */
    uint32_t cur_lines;              /* consumer: slots the peeked frame takes */
    int cur_ctrl;                    /* consumer: the peeked frame is a control frame */
    uint64_t cont_end; /* producer: one past the last continuation slot written (0: none) */
    uint32_t burst;    /* producer: frames of SHM_BURST_MIN_LINES slots or more since the
                        * last shm_chan_answered */
    int copy_nt;       /* producer: the frame being pushed has its payload written around
                        * the caches (util_copy_nt; shm_send_nt) */
    uint64_t wrap;     /* producer: slots an answered frame reuses (shm_chan_wrap_early) */
};

/* Bytes of a channel of nlines slots. */
static inline size_t shm_chan_bytes(uint64_t nlines)
{
    return SHM_RING_HEAD_BYTES + (size_t)nlines * sizeof(struct shm_line);
}

/* The largest frame a pool takes: a big cell, or a small one when it has no big cells. */
static inline uint64_t shm_pool_max_frame(uint64_t nbig, uint64_t cell_size)
{
    return nbig ? SHM_FRAME_CELLS * cell_size : cell_size;
}

/* Bytes of a pool's cells (without mid cells: add nmid x mid_size). */
static inline size_t shm_pool_bytes(uint64_t nsmall, uint64_t nbig, uint64_t cell_size)
{
    return (size_t)(nsmall * cell_size + nbig * SHM_FRAME_CELLS * cell_size);
}

/* The largest frame a channel of nlines slots carries in consecutive slots. */
static inline size_t shm_chan_lines_max(uint64_t nlines)
{
    uint64_t k = nlines / 2 < SHM_FRAME_LINES ? nlines / 2 : SHM_FRAME_LINES;
    return k < 2 ? SHM_LINE_INLINE : SHM_LINE_INLINE + (size_t)(k - 1) * SHM_SLOT;
}

/* Describe the pool whose cells start at `cells` (next, ret_head: its words). */
static inline void shm_pool_view_init(struct shm_pool_view *v, void *cells, _Atomic uint32_t *next,
                                      _Atomic uint32_t *ret_head, uint32_t nsmall, uint32_t nbig,
                                      uint64_t cell_size)
{
    v->cells = cells;
    v->next = next;
    v->ret_head = ret_head;
    v->nsmall = nsmall;
    v->nbig = nbig;
    v->cell_size = cell_size;
    v->big_size = SHM_FRAME_CELLS * cell_size;
    v->nmid = 0;
    v->mid_size = 0;
}

/* Give the pool v describes nmid mid cells of mid_size bytes (a multiple of 64, less
 * than cell_size), after its big cells; before shm_pool_init. */
static inline void shm_pool_view_mid(struct shm_pool_view *v, uint32_t nmid, uint64_t mid_size)
{
    v->nmid = mid_size ? nmid : 0;
    v->mid_size = v->nmid ? mid_size : 0;
}

static inline uint32_t shm_pool_ncells(const struct shm_pool_view *v)
{
    return v->nsmall + v->nbig + v->nmid;
}

/* The first mid cell's number. */
static inline uint32_t shm_pool_mid0(const struct shm_pool_view *v)
{
    return v->nsmall + v->nbig;
}

static inline unsigned char *shm_pool_cell(const struct shm_pool_view *v, uint32_t id)
{
    if (id < v->nsmall) return v->cells + (size_t)id * v->cell_size;
    unsigned char *big = v->cells + (size_t)v->nsmall * v->cell_size;
    if (id < v->nsmall + v->nbig) return big + (size_t)(id - v->nsmall) * v->big_size;
    return big + (size_t)v->nbig * v->big_size + (size_t)(id - v->nsmall - v->nbig) * v->mid_size;
}

/* Bytes a frame in cell id may have. */
static inline uint64_t shm_pool_cell_size(const struct shm_pool_view *v, uint32_t id)
{
    if (id < v->nsmall) return v->cell_size;
    return id < v->nsmall + v->nbig ? v->big_size : v->mid_size;
}

/* Give cell id back to the pool's owner (any process, any time). The exchange is
 * sequentially consistent (on x86 the same locked instruction as a release one), so
 * that a later look at whether the owner sleeps is ordered after it without a fence. */
static inline void shm_pool_view_put(const struct shm_pool_view *v, uint32_t id)
{
    uint32_t old = atomic_load_explicit(v->ret_head, memory_order_relaxed);
    do
        atomic_store_explicit(&v->next[id], old, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(v->ret_head, &old, id, memory_order_seq_cst,
                                                  memory_order_relaxed));
}

/*
 * Owner: set up the private state of the pool `v` describes (whose return stack must be
 * empty: *ret_head == SHM_CELL_NONE). Returns 0 or TERN_ERR_NOMEM.
 */
static inline int shm_pool_init(struct shm_pool *p, const struct shm_pool_view *v,
                                shm_touch_fn touch)
{
    uint32_t n = shm_pool_ncells(v);
    memset(p, 0, sizeof *p);
    p->v = *v;
    p->touch = touch;
    uint32_t *ids = malloc((size_t)(n ? n : 1) * 2 * sizeof(uint32_t)); /* and back */
    p->dest = malloc((size_t)(n ? n : 1) * sizeof(int32_t));
    p->ready = calloc(n ? n : 1, sizeof(uint32_t));
    if (!ids || !p->dest || !p->ready) {
        free(ids);
        free(p->dest);
        free(p->ready);
        memset(p, 0, sizeof *p);
        return TERN_ERR_NOMEM;
    }
    p->free_small = (struct shm_cellq){.ids = ids, .cap = v->nsmall};
    p->free_big = (struct shm_cellq){.ids = ids + v->nsmall, .cap = v->nbig};
    p->free_mid = ids + v->nsmall + v->nbig;
    p->back = ids + (n ? n : 1);
    for (uint32_t i = 0; i < n; i++)
        p->dest[i] = -1;
    return 0;
}

static inline void shm_pool_fini(struct shm_pool *p)
{
    free(p->free_small.ids);
    free(p->dest);
    free(p->ready);
    memset(p, 0, sizeof *p);
}

static inline void shm_cellq_push(struct shm_cellq *q, uint32_t id)
{
    q->ids[(q->head + q->n++) % q->cap] = id;
}

/* The oldest cell out of the queue, or the newest; q->n > 0. */
static inline uint32_t shm_cellq_pop(struct shm_cellq *q, int oldest)
{
    q->n--;
    if (!oldest) return q->ids[(q->head + q->n) % q->cap];
    uint32_t id = q->ids[q->head];
    q->head = (q->head + 1) % q->cap;
    return id;
}

static inline void shm_pool_free_push(struct shm_pool *p, uint32_t id)
{
    p->dest[id] = -1;
    if (id < p->v.nsmall)
        shm_cellq_push(&p->free_small, id);
    else if (id < shm_pool_mid0(&p->v))
        shm_cellq_push(&p->free_big, id);
    else
        p->free_mid[p->nfree_mid++] = id;
}

/* Owner: take back every cell the receivers returned, in the order they came back (the
 * stack has the last one on top: collected, then queued from the bottom up). Returns how
 * many. */
static inline uint32_t shm_pool_drain(struct shm_pool *p)
{
    uint32_t id = atomic_exchange_explicit(p->v.ret_head, SHM_CELL_NONE, memory_order_acquire);
    uint32_t n = 0, k = 0, total = shm_pool_ncells(&p->v);
    while (id != SHM_CELL_NONE && id < total && n < total) {
        uint32_t nx = atomic_load_explicit(&p->v.next[id], memory_order_relaxed);
        if (p->dest[id] >= 0) { /* else not ours to take (or listed twice): skip */
            p->dest[id] = -1;
            p->back[k++] = id;
        }
        id = nx;
        n++;
    }
    while (k > 0)
        shm_pool_free_push(p, p->back[--k]);
    return n;
}

/* Owner: a mid cell for a frame of len <= mid_size bytes, in *c; 0 or TERN_ERR_AGAIN
 * (every one is out). Only the bytes of the cell are touched: mid cells share pages. */
static inline int shm_pool_get_mid(struct shm_pool *p, size_t len, uint32_t *c)
{
    if (p->nfree_mid == 0 &&
        atomic_load_explicit(p->v.ret_head, memory_order_relaxed) != SHM_CELL_NONE)
        shm_pool_drain(p);
    if (p->nfree_mid)
        *c = p->free_mid[--p->nfree_mid];
    else if (p->fresh_mid < p->v.nmid)
        *c = shm_pool_mid0(&p->v) + p->fresh_mid++;
    else
        return TERN_ERR_AGAIN;
    if (len > p->ready[*c]) {
        if (p->touch && p->touch(shm_pool_cell(&p->v, *c), p->v.mid_size)) {
            shm_pool_free_push(p, *c);
            return TERN_ERR_NOSPACE;
        }
        p->ready[*c] = (uint32_t)p->v.mid_size;
    }
    return 0;
}

/*
 * Owner: take a cell for a frame of len bytes to receiver `dest`; its number in *id.
 * A frame that fits a mid cell takes one if any is free, else a small cell. `spread` (a
 * one-way stream): a cell never used while there is one, else the one given back longest
 * ago; else the one given back last, and a fresh one only when none is free. Returns 0,
 * TERN_ERR_AGAIN (every cell of that size is out: the receivers give them back as they
 * poll), TERN_ERR_INVAL (larger than any cell) or TERN_ERR_NOSPACE (its memory could not
 * be had).
 */
static inline int shm_pool_get(struct shm_pool *p, size_t len, int32_t dest, int spread,
                               uint32_t *id)
{
    if (len <= p->v.mid_size) {
        int rc = shm_pool_get_mid(p, len, id);
        if (rc == 0) p->dest[*id] = dest;
        if (rc != TERN_ERR_AGAIN) return rc;
    }
    int big = len > p->v.cell_size;
    if (big && (p->v.nbig == 0 || len > p->v.big_size)) return TERN_ERR_INVAL;
    struct shm_cellq *q = big ? &p->free_big : &p->free_small;
    uint32_t *fresh = big ? &p->fresh_big : &p->fresh_small; /* cells [fresh, cap) unused */
    if (q->n == 0 && atomic_load_explicit(p->v.ret_head, memory_order_relaxed) != SHM_CELL_NONE)
        shm_pool_drain(p);
    spread = spread && p->spread_ok;
    uint32_t c;
    if (q->n && !(spread && *fresh < q->cap))
        c = shm_cellq_pop(q, spread);
    else if (*fresh < q->cap)
        c = (big ? p->v.nsmall : 0) + (*fresh)++;
    else
        return TERN_ERR_AGAIN;
    if (len > p->ready[c]) {
        size_t want = (len + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE;
        if (p->touch && p->touch(shm_pool_cell(&p->v, c) + p->ready[c], want - p->ready[c])) {
            shm_pool_free_push(p, c);
            return TERN_ERR_NOSPACE;
        }
        p->ready[c] = (uint32_t)want;
    }
    p->dest[c] = dest;
    *id = c;
    return 0;
}

/*
 * Owner: receiver `dest` is gone (it exited): every cell it still held is free again.
 * Call only once it can no longer give any back. Returns how many were reclaimed.
 */
static inline uint32_t shm_pool_reclaim(struct shm_pool *p, int32_t dest)
{
    uint32_t n = 0;
    shm_pool_drain(p);
    for (uint32_t c = 0; c < p->fresh_small; c++)
        if (p->dest[c] == dest) shm_pool_free_push(p, c), n++;
    for (uint32_t c = p->v.nsmall; c < p->v.nsmall + p->fresh_big; c++)
        if (p->dest[c] == dest) shm_pool_free_push(p, c), n++;
    for (uint32_t c = shm_pool_mid0(&p->v); c < shm_pool_mid0(&p->v) + p->fresh_mid; c++)
        if (p->dest[c] == dest) shm_pool_free_push(p, c), n++;
    return n;
}

/* Cells of the pool out with receivers (not free with the owner). */
static inline uint32_t shm_pool_out(const struct shm_pool *p)
{
    return p->fresh_small + p->fresh_big + p->fresh_mid - p->free_small.n - p->free_big.n -
           p->nfree_mid;
}

/*
 * Point `c` at the channel whose memory starts at `base` (zeroed memory is empty). A
 * producer then sets pool, dest and touch; a consumer sets src.
 */
static inline void shm_chan_init(struct shm_chan *c, void *base, uint64_t nlines)
{
    unsigned char *b = base;
    memset(c, 0, sizeof *c);
    c->line_head = (_Atomic uint64_t *)b;
    c->lines = (struct shm_line *)(b + SHM_RING_HEAD_BYTES);
    c->nlines = nlines;
    c->lines_max = shm_chan_lines_max(nlines);
    c->lines_ready = UINT64_MAX;
    c->cur_cell = SHM_CELL_NONE;
}

/* Producer: touch the channel's memory up to slot `end` (its first lap), head included. */
static inline int shm_chan_grow(struct shm_chan *c, uint64_t end)
{
    uint64_t from = c->lines_ready, stop = end < c->nlines ? end : c->nlines;
    size_t a = from == 0 ? 0 : SHM_RING_HEAD_BYTES + (size_t)from * sizeof(struct shm_line);
    size_t b = SHM_RING_HEAD_BYTES + (size_t)stop * sizeof(struct shm_line);
    a = a / SHM_PAGE * SHM_PAGE;
    b = (b + SHM_PAGE - 1) / SHM_PAGE * SHM_PAGE;
    /* A ring smaller than a page shares its pages with its neighbours (channels are
     * packed when there are many senders): touch only the pages it overlaps. */
    if (b > shm_chan_bytes(c->nlines)) b = shm_chan_bytes(c->nlines);
    if (b > a && c->touch((unsigned char *)c->line_head + a, b - a)) return TERN_ERR_NOSPACE;
    size_t whole = (b - SHM_RING_HEAD_BYTES) / sizeof(struct shm_line);
    c->lines_ready = whole >= c->nlines ? UINT64_MAX : whole;
    return 0;
}

/* Pieces this long or longer of a frame pushed with copy_nt are written around the caches. */
#define SHM_NT_MIN 1024

static inline void shm_iov_gather(unsigned char *dst, const struct iovec *iov, int iovcnt, int nt)
{
    for (int i = 0; i < iovcnt; i++) {
        if (nt && iov[i].iov_len >= SHM_NT_MIN)
            util_copy_nt(dst, iov[i].iov_base, iov[i].iov_len);
        else if (iov[i].iov_len)
            util_copy(dst, iov[i].iov_base, iov[i].iov_len);
        dst += iov[i].iov_len;
    }
}

/*
 * Where a frame starts in its cell (0-63): so that the payload (the longest piece of iov)
 * lands at the same offset modulo 64 as its source. Cells start 64-aligned, so the copy's
 * destination minus source is then a multiple of 64, never the 1-31 bytes modulo 4 KiB at
 * which `rep movsb` is 8-30x slower on AMD Zen (util_copy's vector fallback, about half
 * memcpy's speed, is then not needed), and both sides of the copy are equally aligned. A
 * receiver copying into a buffer aligned like the sender's (both page-aligned, say) gets
 * the same distances. The frame loses at most 63 bytes of its cell.
 */
static inline uint32_t shm_cell_offset(const struct iovec *iov, int iovcnt)
{
    size_t at = 0, pre = 0, best = 0;
    uintptr_t src = 0;
    for (int i = 0; i < iovcnt; pre += iov[i].iov_len, i++)
        if (iov[i].iov_len > best) {
            best = iov[i].iov_len;
            at = pre;
            src = (uintptr_t)iov[i].iov_base;
        }
    return (uint32_t)((src - at) & 63);
}

/*
 * Where a frame over several slots that begins at `slot` starts in that slot's data
 * (0-63), given its source's offset modulo 64 (`src_off`, shm_cell_offset), for the same
 * reason as shm_cell_offset: its payload then lies at the source's offset modulo 64, so
 * both copies (the sender's in, the receiver's out to a buffer aligned like the sender's)
 * move whole cache lines with aligned vectors instead of splitting every line in two.
 * Without it a page-aligned payload sat 24 bytes into a line (8 bytes of slot word and
 * 16 of core header). A slot in a line's second half starts 32 bytes further on. The
 * frame may take one slot more.
 */
static inline uint32_t shm_line_offset(uint32_t src_off, uint64_t slot)
{
    uint32_t at = (uint32_t)offsetof(struct shm_line, data) + (uint32_t)(slot * SHM_SLOT & 63);
    return (src_off - at) & 63;
}

/* Slots a frame of `total` bytes (at most lines_max) takes when it begins at `slot`, and
 * its offset there in *loff: aligned (align: src_off is its source's offset) where the
 * slots have room for the offset, else 0. */
static inline uint32_t shm_frame_slots(const struct shm_chan *c, size_t total, int align,
                                       uint32_t src_off, uint64_t slot, uint32_t *loff)
{
    *loff = align ? shm_line_offset(src_off, slot) : 0;
    if (total + *loff > c->lines_max) *loff = 0;
    return shm_lines_for(*loff, total);
}

/*
 * Producer: does a frame of k slots (at least SHM_BURST_MIN_LINES) that would begin at
 * `slot` (not 0) start again at slot 0 instead, behind a skip slot? Where the receiver
 * answered since the last such frame (a ping-pong: c->burst is 0) and the frame would end
 * past c->wrap slots (TERN_SHM_WRAP_LINES). A ping-pong then cycles through the first
 * c->wrap slots (a frame larger than half of them reuses the same slots every time) and
 * those stay in both cores' caches; through the whole ring they did not, beside the
 * buffers, in a 32 KiB L1. Streams keep the whole ring. Measured 2026-11-29 (MPI, 2 ranks,
 * median of 20 fast-phase launches, one-way us, whole ring -> this): 1 KiB 0.339 -> 0.301,
 * 2 KiB 0.508 -> 0.436, 3000 B 0.673 -> 0.569, 6000 B 1.239 -> 1.020, 8 KiB 1.618 ->
 * 1.426; streams and bidirectional within noise.
 */
static inline int shm_chan_wrap_early(const struct shm_chan *c, uint64_t slot, uint32_t k)
{
    return c->wrap && c->burst == 0 && k >= SHM_BURST_MIN_LINES && slot != 0 && slot + k > c->wrap;
}

/* Producer: are the slots before position `end` free (the consumer released all it read
 * a lap before)? Loads the consumer's head only when the cached copy says no. */
static inline int shm_chan_room(struct shm_chan *c, uint64_t end)
{
    if (end - c->line_head_seen <= c->nlines) return 1;
    c->line_head_seen = atomic_load_explicit(c->line_head, memory_order_acquire);
    return end - c->line_head_seen <= c->nlines;
}

/*
 * Producer, before it publishes a frame that ends at position `after`: the slot there is
 * where the consumer looks next. If a lap ago it was a continuation slot or one a skip
 * passed over (every other slot of a lap is written, so older data is gone), its sequence
 * word holds frame data, or a word of an older lap; should those bytes read as the very
 * value that slot has when full, overwrite them (with a consumed slot's value) before
 * the frame is published. Only this producer writes the slots, and such a slot was
 * consumed (a continuation of a frame not yet consumed would leave no room for this
 * one), so no reader is misled. Traffic of one-slot frames skips the check a lap after
 * the last longer frame or skip.
 */
static inline void shm_chan_clear_after(struct shm_chan *c, uint64_t after)
{
    if (__builtin_expect(c->cont_end != 0 && after - c->nlines < c->cont_end, 0)) {
        _Atomic uint32_t *sq = &c->lines[after & (c->nlines - 1)].seq;
        if (atomic_load_explicit(sq, memory_order_relaxed) == (uint32_t)(after + 1))
            atomic_store_explicit(sq, (uint32_t)(after + 1 - c->nlines), memory_order_relaxed);
    }
}

/* shm_chan_push_ctrl's general case: frames over many slots or in cells, and small frames
 * that wrap the ring or find it full. Kept out of line so the small frames' path saves
 * few registers. */
static __attribute__((noinline, unused)) int
shm_chan_push_slow(struct shm_chan *c, const struct iovec *iov, int iovcnt, size_t total, int ctrl)
{
    if (!shm_chan_room(c, c->line_pos + 1)) return TERN_ERR_AGAIN;
    uint64_t slot = c->line_pos & (c->nlines - 1);
    uint32_t flags = ctrl ? SHM_LEN_CTRL : 0, k = 1, loff = 0, skip = 0;
    if (total > SHM_LINE_INLINE && total <= c->lines_max) {
        int align = total >= SHM_LINE_ALIGN_MIN;
        uint32_t src_off = align ? shm_cell_offset(iov, iovcnt) : 0;
        k = shm_frame_slots(c, total, align, src_off, slot, &loff);
        if (slot + k > c->nlines) { /* start at slot 0, whose offset may differ */
            skip = (uint32_t)(c->nlines - slot);
            k = shm_frame_slots(c, total, align, src_off, 0, &loff);
        } else if (shm_chan_wrap_early(c, slot, k)) {
            uint32_t loff0, k0 = shm_frame_slots(c, total, align, src_off, 0, &loff0);
            if (shm_chan_room(c, c->line_pos + (c->nlines - slot) + k0)) { /* else stay */
                skip = (uint32_t)(c->nlines - slot);
                k = k0;
                loff = loff0;
            }
        }
        if (k <= c->nlines / 2 && (k < SHM_BURST_MIN_LINES || c->burst < SHM_BURST_LINES) &&
            shm_chan_room(c, c->line_pos + skip + k))
            flags |= SHM_LEN_LINES;
        if (!(flags & SHM_LEN_LINES)) { /* no room in the slots: take a cell */
            k = 1;
            loff = 0;
            skip = 0;
        }
    }
    if (__builtin_expect(c->line_pos + skip + k > c->lines_ready, 0)) {
        int rc = shm_chan_grow(c, c->line_pos + skip + k);
        if (rc) return rc;
    }
    if (skip) {
        /* The slots from here to the end keep what earlier laps left in them; the frame
         * written next (over several slots) sets cont_end past them, so the next lap checks
         * them as it does continuation slots. */
        shm_chan_clear_after(c, c->line_pos + skip);
        c->lines[slot].len = SHM_LEN_SKIP;
        atomic_store_explicit(&c->lines[slot].seq, (uint32_t)(c->line_pos + 1),
                              memory_order_release);
        c->line_pos += skip;
        slot = 0;
    }
    struct shm_line *line = &c->lines[slot];
    uint64_t after = c->line_pos + k;
    shm_chan_clear_after(c, after);
    if (total <= SHM_LINE_INLINE || (flags & SHM_LEN_LINES)) {
        if (k > 1) {
            c->cont_end = after;
            if (k >= SHM_BURST_MIN_LINES) c->burst++;
        }
        shm_iov_gather(line->data + loff, iov, iovcnt, c->copy_nt);
    } else {
        const struct shm_pool_view *v = &c->pool->v;
        uint32_t id, off = shm_cell_offset(iov, iovcnt);
        /* The offset must not push the frame into a larger kind of cell; except out of a
         * mid cell: a small cell with the offset beats a mid cell without it (frames of
         * 2049-2096 B payloads: a copy 16 bytes off the line took 35-50% longer). */
        uint64_t room = total + off <= v->mid_size ? v->mid_size
                        : total <= v->cell_size    ? v->cell_size
                                                   : v->big_size;
        if (total + off > room) off = 0;
        /* The third frame in a row without an answer (a one-way stream) spreads over the
         * pool, others reuse the cell given back last (see the pool above). */
        int rc = shm_pool_get(c->pool, total + off, c->dest, c->burst >= SHM_BURST_LINES, &id);
        if (rc) return rc;
        if (c->burst < SHM_BURST_LINES && shm_lines_for(0, total) >= SHM_BURST_MIN_LINES)
            c->burst++;
        shm_iov_gather(shm_pool_cell(v, id) + off, iov, iovcnt, c->copy_nt);
        memcpy(line->data, &id, sizeof id);
        memcpy(line->data + sizeof id, &off, sizeof off);
    }
    line->len = (uint32_t)total | flags | loff << SHM_LEN_LINES_OFF_SHIFT;
    atomic_store_explicit(&line->seq, (uint32_t)(c->line_pos + 1), memory_order_release);
    c->line_pos += k;
    return 0;
}

/*
 * Producer: append one frame of `total` bytes gathered from iov; `ctrl` marks a
 * transport control frame. Returns 0, TERN_ERR_AGAIN when the slot ring is full or the
 * pool has no cell for it (nothing written), TERN_ERR_INVAL when the frame exceeds every
 * cell, or TERN_ERR_NOSPACE when the memory to write it to could not be had.
 */
static inline int shm_chan_push_ctrl(struct shm_chan *c, const struct iovec *iov, int iovcnt,
                                     size_t total, int ctrl)
{
    if (__builtin_expect(total < SHM_LINE_ALIGN_MIN && total <= c->lines_max, 1)) {
        /* A small frame (no alignment offset, fewer slots than a burst counts: 16 at most)
         * that fits before the ring's end: written here with inline copies (else
         * shm_chan_push_slow). */
        uint32_t k = shm_lines_for(0, total);
        uint64_t slot = c->line_pos & (c->nlines - 1), after = c->line_pos + k;
        if (__builtin_expect(
                slot + k <= c->nlines && after <= c->lines_ready && shm_chan_room(c, after), 1)) {
            struct shm_line *line = &c->lines[slot];
            shm_chan_clear_after(c, after);
            unsigned char *dst = line->data;
            for (int i = 0; i < iovcnt; i++) {
                util_copy_short(dst, iov[i].iov_base, iov[i].iov_len);
                dst += iov[i].iov_len;
            }
            uint32_t flags = ctrl ? SHM_LEN_CTRL : 0;
            if (k > 1) {
                c->cont_end = after;
                flags |= SHM_LEN_LINES;
            }
            line->len = (uint32_t)total | flags;
            atomic_store_explicit(&line->seq, (uint32_t)(c->line_pos + 1), memory_order_release);
            c->line_pos = after;
            return 0;
        }
    }
    return shm_chan_push_slow(c, iov, iovcnt, total, ctrl);
}

/* Producer: the peer answered (sent a frame back): frames over several slots may take
 * the slots again (SHM_BURST_LINES). */
static inline void shm_chan_answered(struct shm_chan *c)
{
    c->burst = 0;
}

/* Producer: append one core frame (see shm_chan_push_ctrl). */
static inline int shm_chan_push(struct shm_chan *c, const struct iovec *iov, int iovcnt,
                                size_t total)
{
    return shm_chan_push_ctrl(c, iov, iovcnt, total, 0);
}

/*
 * Consumer: is a frame there? If so, point data and len at it (valid until
 * shm_chan_release) and return 1; else 0. What a producer could not have written (a
 * length larger than its cell, a cell number outside its pool) is clamped so a corrupt
 * slot cannot make us read outside the channel or the pool.
 */
static inline int shm_chan_peek(struct shm_chan *c, const void **data, size_t *len)
{
    struct shm_line *line = &c->lines[c->line_pos & (c->nlines - 1)];
    if (atomic_load_explicit(&line->seq, memory_order_acquire) != (uint32_t)(c->line_pos + 1))
        return 0;
    uint32_t raw = line->len;
    if (__builtin_expect(raw == SHM_LEN_SKIP, 0) && (c->line_pos & (c->nlines - 1)) != 0) {
        /* The frame is at slot 0: give the rest of the ring back and look there. (A skip at
         * slot 0 is not what a producer writes: it reads as an empty frame.) */
        c->line_pos += c->nlines - (c->line_pos & (c->nlines - 1));
        atomic_store_explicit(c->line_head, c->line_pos, memory_order_release);
        line = &c->lines[0];
        if (atomic_load_explicit(&line->seq, memory_order_acquire) != (uint32_t)(c->line_pos + 1))
            return 0;
        raw = line->len;
    }
    size_t n = raw & SHM_LEN_MASK;
    c->cur_ctrl = (raw & SHM_LEN_CTRL) != 0;
    c->cur_lines = 1;
    c->cur_cell = SHM_CELL_NONE;
    if (n <= SHM_LINE_INLINE) {
        *data = line->data;
    } else if (raw & SHM_LEN_LINES) {
        size_t off = (raw >> SHM_LEN_LINES_OFF_SHIFT) & 63;
        n = raw & SHM_LEN_LINES_LEN;
        if (off > c->lines_max) off = 0; /* not what a producer writes */
        if (n > c->lines_max - off) n = c->lines_max - off;
        uint32_t k = shm_lines_for(off, n);
        uint64_t slot = c->line_pos & (c->nlines - 1);
        if (slot + k > c->nlines) { /* not what a producer writes: stay inside the ring */
            k = (uint32_t)(c->nlines - slot);
            size_t cap = SHM_LINE_INLINE + (size_t)(k - 1) * SHM_SLOT;
            n = cap > off ? cap - off : 0;
        }
        c->cur_lines = k;
        *data = line->data + off;
    } else {
        const struct shm_pool_view *v = c->src;
        uint32_t id, off;
        memcpy(&id, line->data, sizeof id);
        memcpy(&off, line->data + sizeof id, sizeof off);
        if (id >= shm_pool_ncells(v)) { /* not a cell of that pool: an empty frame */
            n = 0;
            *data = line->data;
        } else {
            uint64_t max = shm_pool_cell_size(v, id);
            off &= 63; /* what a producer writes (shm_cell_offset) */
            if (n > max - off) n = max - off;
            *data = shm_pool_cell(v, id) + off;
            c->cur_cell = id;
        }
    }
    c->cur_len = n;
    *len = n;
    return 1;
}

/* Consumer: the peeked frame is consumed; give its slots (and its cell) back. */
static inline void shm_chan_release(struct shm_chan *c)
{
    if (c->cur_lines > 1) {
        /* The continuation slots are left as they are: the producer keeps stale bytes from
         * reading as a frame (shm_chan_push_ctrl), so the consumer writes no slot, and the
         * producer's next lap takes the lines back without fetching them. */
        c->line_pos += c->cur_lines;
    } else {
        if (c->cur_cell != SHM_CELL_NONE) {
            shm_pool_view_put(c->src, c->cur_cell);
            c->cur_cell = SHM_CELL_NONE;
        }
        c->line_pos++;
    }
    atomic_store_explicit(c->line_head, c->line_pos, memory_order_release);
}

/*
 * A sender puts itself on a receiver's list of senders (n entries of id + 1, 0 = free,
 * filled from the front) before its first frame; `count` counts the senders that began
 * to. The receiver reads entries from the front while they are nonzero whenever count
 * moved past what it took. The sender counts itself first, then takes the first free
 * entry with a compare-and-swap: so there is never a free entry before a taken one, even
 * if a sender is killed half-way (taking an entry it would then never write would stop
 * the receiver there and hide every later sender, alive or not); a sender killed after
 * counting itself only leaves count one ahead for good, which costs the receiver one
 * load per poll. Returns 0, or TERN_ERR_TRANSPORT when the list is full (more senders
 * than it was made for: not what a peer of this job does).
 */
static inline int shm_senders_join(_Atomic uint32_t *count, _Atomic int32_t *list, uint32_t n,
                                   int32_t id)
{
    if (atomic_fetch_add_explicit(count, 1, memory_order_relaxed) >= n) return TERN_ERR_TRANSPORT;
    for (uint32_t i = 0; i < n; i++) {
        int32_t free_v = 0;
        if (atomic_load_explicit(&list[i], memory_order_relaxed) == 0 &&
            atomic_compare_exchange_strong_explicit(&list[i], &free_v, id + 1, memory_order_release,
                                                    memory_order_relaxed))
            return 0;
    }
    return TERN_ERR_TRANSPORT;
}

/* Receiver: the sender (its id) at entry `at` of the list, or -1 when nobody has
 * written it yet. */
static inline int32_t shm_senders_at(_Atomic int32_t *list, uint32_t at)
{
    return atomic_load_explicit(&list[at], memory_order_acquire) - 1;
}

#endif

/*
 * shm_ring.h - one single-producer/single-consumer channel of the shm transport:
 * a ring of cache-line slots (the fastbox ring) plus a ring of cells for larger frames.
 * Pure memory operations with no system calls, shared by shm.c and the unit tests.
 *
 * Layout of a channel in shared memory (receiver-owned):
 *   [line_head : 64 B][cell_head : 64 B][transport : 128 B][slots : nlines x 64 B]
 *   [cells : ncells x cell_size]
 * The producer keeps its positions privately and reads the heads only when it believes
 * a ring is full; the consumer publishes the heads as it releases frames.
 *
 * A frame larger than a cell takes up to SHM_FRAME_CELLS consecutive cells. Frames never
 * wrap around the end of the cell ring: one that would is placed at the ring's start and
 * the cells it skipped are released with it. The slot of a cell frame says where the
 * frame starts (its cell position), so the consumer follows whatever the producer did.
 */
#ifndef TERN_SHM_RING_H
#define TERN_SHM_RING_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>

#include "tern.h"

#define SHM_LINE_INLINE 56
/* Bytes before the slots: line_head, cell_head, and two lines the transport keeps for
 * itself (the cooperative-copy descriptor in shm.c). */
#define SHM_RING_HEAD_BYTES 256
/* A frame spans at most this many cells (and at most half the ring, so that one always
 * fits into an empty ring even after skipping to its start). */
#define SHM_FRAME_CELLS 8
/* A slot whose len has this bit carries a transport control frame, not a core frame. */
#define SHM_LEN_CTRL 0x80000000u
/* ... and with this bit, a frame that continues over the next slots (see below). */
#define SHM_LEN_LINES 0x40000000u
#define SHM_LEN_MASK  0x3fffffffu
/*
 * Frames that do not fit one slot but fit SHM_FRAME_LINES slots (and at most half the
 * ring) take consecutive slots: the data runs on from the first slot's data into the
 * next lines (which carry no sequence word of their own; the first slot's release store
 * publishes them all), so the receiver reads a few adjacent lines instead of a slot plus
 * a cell. A frame that would wrap around the end of the slot ring goes to a cell
 * instead. When it releases such a frame, the consumer writes each continuation slot's
 * sequence word with the value a consumed slot of that position has, so stale data can
 * never look like a frame in a later lap.
 *
 * Thirty-two slots (2040 bytes) keep every message up to 2 KiB - 24 bytes out of the
 * cells: a 256-byte message in a cell cost a slot, five cell lines and a write of
 * cell_head, and the cells sit far from the slots (measured 2026-11-25: 256 B ping-pong
 * 0.229 -> 0.167 us, 1 KiB stream 0.140 -> 0.104 us per message). Larger frames go to
 * cells, whose frames pay one slot and no per-line release.
 */
#define SHM_FRAME_LINES 32

/* A slot: the sequence word and the frame share one cache line. */
struct shm_line {
    _Alignas(64) _Atomic uint32_t seq; /* == position + 1 (mod 2^32) when full */
    uint32_t len; /* frame length (| SHM_LEN_CTRL); > SHM_LINE_INLINE: frame is in a cell */
    unsigned char data[SHM_LINE_INLINE];
};

/* One endpoint's private view of a channel (producer or consumer). */
struct shm_chan {
    _Atomic uint64_t *line_head; /* consumer's published slot position */
    _Atomic uint64_t *cell_head; /* consumer's published cell position */
    struct shm_line *lines;
    unsigned char *cells;
    uint64_t nlines, ncells, cell_size;
    size_t lines_max; /* the largest frame that goes into slots (shm_chan_lines_max) */
    uint64_t line_pos; /* producer: next slot to fill; consumer: next slot to read */
    uint64_t cell_pos; /* producer: next cell to fill; consumer: next cell to read */
    uint64_t line_head_seen, cell_head_seen; /* producer's cached copies of the heads */
    uint64_t cur_cell_end;                   /* consumer: cell position after the peeked frame */
    size_t cur_len;                          /* consumer: length of the peeked frame */
    uint32_t cur_lines;                      /* consumer: slots the peeked frame takes */
    int cur_ctrl;                            /* consumer: the peeked frame is a control frame */
};

/* The largest frame a channel takes: SHM_FRAME_CELLS cells, at most half the ring. */
static inline uint64_t shm_chan_max_frame(uint64_t ncells, uint64_t cell_size)
{
    uint64_t k = ncells / 2 < SHM_FRAME_CELLS ? ncells / 2 : SHM_FRAME_CELLS;
    return (k ? k : 1) * cell_size;
}

/* The largest frame a channel of nlines slots carries in consecutive slots. */
static inline size_t shm_chan_lines_max(uint64_t nlines)
{
    uint64_t k = nlines / 2 < SHM_FRAME_LINES ? nlines / 2 : SHM_FRAME_LINES;
    return k < 2 ? SHM_LINE_INLINE : SHM_LINE_INLINE + (size_t)(k - 1) * 64;
}

/* Point `c` at the channel whose memory starts at `base` (zeroed memory is empty). */
static inline void shm_chan_init(struct shm_chan *c, void *base, uint64_t nlines, uint64_t ncells,
                                 uint64_t cell_size)
{
    unsigned char *b = base;
    memset(c, 0, sizeof *c);
    c->line_head = (_Atomic uint64_t *)b;
    c->cell_head = (_Atomic uint64_t *)(b + 64);
    c->lines = (struct shm_line *)(b + SHM_RING_HEAD_BYTES);
    c->cells = b + SHM_RING_HEAD_BYTES + nlines * sizeof(struct shm_line);
    c->nlines = nlines;
    c->ncells = ncells;
    c->cell_size = cell_size;
    c->lines_max = shm_chan_lines_max(nlines);
}

static inline void shm_iov_gather(unsigned char *dst, const struct iovec *iov, int iovcnt)
{
    for (int i = 0; i < iovcnt; i++) {
        if (iov[i].iov_len) memcpy(dst, iov[i].iov_base, iov[i].iov_len);
        dst += iov[i].iov_len;
    }
}

/*
 * Producer: append one frame of `total` bytes gathered from iov; `ctrl` marks a
 * transport control frame. Returns 0, TERN_ERR_AGAIN when the slot or cell ring is full
 * (nothing written), or TERN_ERR_INVAL when the frame exceeds a cell.
 */
static inline int shm_chan_push_ctrl(struct shm_chan *c, const struct iovec *iov, int iovcnt,
                                     size_t total, int ctrl)
{
    if (c->line_pos - c->line_head_seen >= c->nlines) {
        c->line_head_seen = atomic_load_explicit(c->line_head, memory_order_acquire);
        if (c->line_pos - c->line_head_seen >= c->nlines) return TERN_ERR_AGAIN;
    }
    uint64_t slot = c->line_pos & (c->nlines - 1);
    struct shm_line *line = &c->lines[slot];
    uint32_t flags = ctrl ? SHM_LEN_CTRL : 0, k = 1;
    if (total > SHM_LINE_INLINE && total <= c->lines_max) {
        k = 1 + (uint32_t)((total - SHM_LINE_INLINE + 63) / 64);
        if (slot + k <= c->nlines && k <= c->nlines / 2) {
            if (c->line_pos + k - c->line_head_seen > c->nlines) {
                c->line_head_seen = atomic_load_explicit(c->line_head, memory_order_acquire);
                if (c->line_pos + k - c->line_head_seen > c->nlines) return TERN_ERR_AGAIN;
            }
            flags |= SHM_LEN_LINES;
        } else {
            k = 1; /* would wrap: take a cell */
        }
    }
    if (total <= SHM_LINE_INLINE || (flags & SHM_LEN_LINES)) {
        shm_iov_gather(line->data, iov, iovcnt);
    } else {
        if (total > shm_chan_max_frame(c->ncells, c->cell_size)) return TERN_ERR_INVAL;
        uint64_t kc = (total + c->cell_size - 1) / c->cell_size;
        uint64_t start = c->cell_pos, idx = start % c->ncells;
        if (idx + kc > c->ncells) start += c->ncells - idx; /* no wrap: skip to the start */
        if (start + kc - c->cell_head_seen > c->ncells) {
            c->cell_head_seen = atomic_load_explicit(c->cell_head, memory_order_acquire);
            if (start + kc - c->cell_head_seen > c->ncells) return TERN_ERR_AGAIN;
        }
        shm_iov_gather(c->cells + (start % c->ncells) * c->cell_size, iov, iovcnt);
        memcpy(line->data, &start, sizeof start);
        c->cell_pos = start + kc;
    }
    line->len = (uint32_t)total | flags;
    atomic_store_explicit(&line->seq, (uint32_t)(c->line_pos + 1), memory_order_release);
    c->line_pos += k;
    return 0;
}

/* Producer: append one core frame (see shm_chan_push_ctrl). */
static inline int shm_chan_push(struct shm_chan *c, const struct iovec *iov, int iovcnt,
                                size_t total)
{
    return shm_chan_push_ctrl(c, iov, iovcnt, total, 0);
}

/*
 * Consumer: is a frame there? If so, point data and len at it (valid until
 * shm_chan_release) and return 1; else 0. A length the producer could not have
 * written (larger than a cell) is clamped so a corrupt slot cannot make us read
 * outside the channel.
 */
static inline int shm_chan_peek(struct shm_chan *c, const void **data, size_t *len)
{
    struct shm_line *line = &c->lines[c->line_pos & (c->nlines - 1)];
    if (atomic_load_explicit(&line->seq, memory_order_acquire) != (uint32_t)(c->line_pos + 1))
        return 0;
    uint32_t raw = line->len;
    size_t n = raw & SHM_LEN_MASK;
    c->cur_ctrl = (raw & SHM_LEN_CTRL) != 0;
    c->cur_lines = 1;
    if (n <= SHM_LINE_INLINE) {
        *data = line->data;
    } else if (raw & SHM_LEN_LINES) {
        if (n > c->lines_max) n = c->lines_max;
        uint32_t k = 1 + (uint32_t)((n - SHM_LINE_INLINE + 63) / 64);
        uint64_t slot = c->line_pos & (c->nlines - 1);
        if (slot + k > c->nlines) { /* not what a producer writes: stay inside the ring */
            k = (uint32_t)(c->nlines - slot);
            n = SHM_LINE_INLINE + (k - 1) * 64;
        }
        c->cur_lines = k;
        *data = line->data;
        c->cur_len = n;
        *len = n;
        return 1;
    } else {
        uint64_t start, max = shm_chan_max_frame(c->ncells, c->cell_size);
        memcpy(&start, line->data, sizeof start);
        if (n > max) n = max;
        uint64_t idx = start % c->ncells, k = (n + c->cell_size - 1) / c->cell_size;
        if (idx + k > c->ncells) { /* not what a producer writes: stay inside the ring */
            k = c->ncells - idx;
            n = k * c->cell_size;
        }
        *data = c->cells + idx * c->cell_size;
        c->cur_cell_end = start + k;
    }
    c->cur_len = raw & SHM_LEN_MASK;
    *len = n;
    return 1;
}

/* Consumer: the peeked frame is consumed; give its slot (and cell) back. */
static inline void shm_chan_release(struct shm_chan *c)
{
    if (c->cur_lines > 1) {
        for (uint32_t i = 1; i < c->cur_lines; i++) {
            uint64_t pos = c->line_pos + i;
            atomic_store_explicit(&c->lines[pos & (c->nlines - 1)].seq, (uint32_t)(pos + 1),
                                  memory_order_relaxed);
        }
        c->line_pos += c->cur_lines;
    } else {
        if (c->cur_len > SHM_LINE_INLINE) {
            c->cell_pos = c->cur_cell_end;
            atomic_store_explicit(c->cell_head, c->cell_pos, memory_order_release);
        }
        c->line_pos++;
    }
    atomic_store_explicit(c->line_head, c->line_pos, memory_order_release);
}

#endif

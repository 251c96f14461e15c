/*
 * test_shm_ring.c - the shm channel (fastbox slots + cells): ordering, wrap-around,
 * full rings, inline/cell boundary, frames spanning several cells (placed at the ring's
 * start rather than wrapping), and a two-process run over a real shared mapping with
 * checksummed frames.
 */
#define _GNU_SOURCE
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "transport/shm/shm_ring.h"
#include "unit.h"

#define NLINES    8
#define NCELLS    7 /* frames of up to 3 cells (half the ring) */
#define CELL      256
#define FRAME_MAX (3 * CELL)
/* The largest frame in consecutive slots: 4 slots (half of NLINES). */
#define LINES_MAX (SHM_LINE_INLINE + 3 * 64)

static size_t chan_bytes(void)
{
    return SHM_RING_HEAD_BYTES + NLINES * sizeof(struct shm_line) + NCELLS * CELL;
}

/* Frame i has length len_of(i) and bytes (i * 7 + k) & 0xff. */
static size_t len_of(uint32_t i)
{
    static const size_t lens[] = {
        0,   1,   8,   55,        56,  57,  100, 255, 256,           3,
        257, 700, 512, FRAME_MAX, 513, 120, 184, 185, LINES_MAX, LINES_MAX + 1,
        64};
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

static void test_single_process(void)
{
    void *mem = aligned_alloc(64, chan_bytes());
    memset(mem, 0, chan_bytes());
    struct shm_chan prod, cons;
    shm_chan_init(&prod, mem, NLINES, NCELLS, CELL);
    shm_chan_init(&cons, mem, NLINES, NCELLS, CELL);
    const void *d;
    size_t len;
    CHECK(!shm_chan_peek(&cons, &d, &len));

    /* Fill the slot ring with inline frames: NLINES fit, the next is AGAIN. */
    unsigned char buf[FRAME_MAX + 1];
    for (uint32_t i = 0; i < NLINES; i++) {
        fill(buf, 2, 8);
        struct iovec iov = {buf, 8};
        CHECK_EQ(shm_chan_push(&prod, &iov, 1, 8), 0);
    }
    struct iovec one = {buf, 8};
    CHECK_EQ(shm_chan_push(&prod, &one, 1, 8), TERN_ERR_AGAIN);
    for (uint32_t i = 0; i < NLINES; i++) {
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK_EQ(len, 8);
        shm_chan_release(&cons);
    }
    CHECK(!shm_chan_peek(&cons, &d, &len));

    /* Cell ring: NCELLS large frames fit, the next is AGAIN even with free slots. */
    for (int i = 0; i < NCELLS; i++) {
        struct iovec iov = {buf, 250};
        CHECK_EQ(shm_chan_push(&prod, &iov, 1, 250), 0);
    }
    struct iovec big = {buf, 250};
    CHECK_EQ(shm_chan_push(&prod, &big, 1, 250), TERN_ERR_AGAIN);
    CHECK_EQ(shm_chan_max_frame(NCELLS, CELL), FRAME_MAX);
    struct iovec toobig = {buf, FRAME_MAX + 1};
    CHECK_EQ(shm_chan_push(&prod, &toobig, 1, FRAME_MAX + 1), TERN_ERR_INVAL);
    /* An inline frame still fits and keeps its place after the cell frames. */
    struct iovec small = {buf, 4};
    CHECK_EQ(shm_chan_push(&prod, &small, 1, 4), 0);
    for (int i = 0; i < NCELLS; i++) {
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK_EQ(len, 250);
        shm_chan_release(&cons);
    }
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK_EQ(len, 4);
    shm_chan_release(&cons);

    /* Three-cell frames: cells 0-2 and 3-5 (ring positions after the frames above);
     * the next would wrap, so it goes to the ring's start once cells 0-2 are free. */
    uint64_t base = prod.cell_pos;
    CHECK_EQ(base % NCELLS, 0); /* 7 one-cell frames went round once */
    for (int i = 0; i < 2; i++) {
        fill(buf, (uint32_t)i + 40, FRAME_MAX);
        struct iovec iov = {buf, FRAME_MAX};
        CHECK_EQ(shm_chan_push(&prod, &iov, 1, FRAME_MAX), 0);
    }
    struct iovec third = {buf, FRAME_MAX};
    CHECK_EQ(shm_chan_push(&prod, &third, 1, FRAME_MAX), TERN_ERR_AGAIN); /* 6 + skip 1 + 3 */
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK_EQ(len, FRAME_MAX);
    CHECK(d == cons.cells);
    fill(buf, 40, FRAME_MAX);
    CHECK(memcmp(d, buf, FRAME_MAX) == 0);
    shm_chan_release(&cons);
    fill(buf, 42, FRAME_MAX);
    CHECK_EQ(shm_chan_push(&prod, &third, 1, FRAME_MAX), 0);
    CHECK_EQ(prod.cell_pos, base + NCELLS + 3); /* skipped cell 6 */
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK(d == cons.cells + 3 * CELL);
    fill(buf, 41, FRAME_MAX);
    CHECK(memcmp(d, buf, FRAME_MAX) == 0);
    shm_chan_release(&cons);
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK(d == cons.cells); /* at the start again, not at cell 6 */
    fill(buf, 42, FRAME_MAX);
    CHECK(memcmp(d, buf, FRAME_MAX) == 0);
    shm_chan_release(&cons);
    CHECK_EQ(cons.cell_pos, prod.cell_pos);
    CHECK(!shm_chan_peek(&cons, &d, &len));

    /* Frames of 57..LINES_MAX bytes run over consecutive slots: 2 + 4 slots here. */
    CHECK_EQ(prod.lines_max, LINES_MAX);
    CHECK_EQ(cons.line_pos, prod.line_pos);
    while (prod.line_pos % NLINES != 0) { /* start at slot 0 */
        struct iovec iov = {buf, 1};
        CHECK_EQ(shm_chan_push(&prod, &iov, 1, 1), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        shm_chan_release(&cons);
    }
    uint64_t l0 = prod.line_pos, c0 = prod.cell_pos;
    fill(buf, 50, 100);
    struct iovec l100 = {buf, 100};
    CHECK_EQ(shm_chan_push(&prod, &l100, 1, 100), 0);
    CHECK_EQ(prod.line_pos, l0 + 2);
    fill(buf, 51, LINES_MAX);
    struct iovec lmax = {buf, LINES_MAX};
    CHECK_EQ(shm_chan_push(&prod, &lmax, 1, LINES_MAX), 0);
    CHECK_EQ(prod.line_pos, l0 + 6);
    CHECK_EQ(prod.cell_pos, c0); /* no cell used */
    /* Slot 6 of 8: another 4-slot frame would wrap, so it takes a cell and one slot. */
    fill(buf, 52, 200);
    struct iovec l200 = {buf, 200};
    CHECK_EQ(shm_chan_push(&prod, &l200, 1, 200), 0);
    CHECK_EQ(prod.line_pos, l0 + 7);
    CHECK_EQ(prod.cell_pos, c0 + 1);
    /* Slot 7, the last: a 2-slot frame would wrap, so it takes a cell too; then the ring
     * is full. */
    fill(buf, 53, 100);
    CHECK_EQ(shm_chan_push(&prod, &l100, 1, 100), 0);
    CHECK_EQ(prod.line_pos, l0 + 8);
    CHECK_EQ(prod.cell_pos, c0 + 2);
    struct iovec b1 = {buf, 1};
    CHECK_EQ(shm_chan_push(&prod, &b1, 1, 1), TERN_ERR_AGAIN);
    CHECK(shm_chan_peek(&cons, &d, &len));
    fill(buf, 50, 100);
    CHECK(len == 100 && memcmp(d, buf, 100) == 0 && d == cons.lines[0].data);
    shm_chan_release(&cons);
    CHECK_EQ(cons.line_pos, l0 + 2);
    /* The continuation slot now reads as consumed (its position + 1), not as data. */
    CHECK_EQ(atomic_load(&cons.lines[1].seq), (uint32_t)(l0 + 2));
    CHECK(shm_chan_peek(&cons, &d, &len));
    fill(buf, 51, LINES_MAX);
    CHECK(len == LINES_MAX && memcmp(d, buf, LINES_MAX) == 0);
    shm_chan_release(&cons);
    CHECK(shm_chan_peek(&cons, &d, &len));
    fill(buf, 52, 200);
    CHECK(len == 200 && memcmp(d, buf, 200) == 0 && d == cons.cells + (c0 % NCELLS) * CELL);
    shm_chan_release(&cons);
    CHECK(shm_chan_peek(&cons, &d, &len));
    fill(buf, 53, 100);
    CHECK(len == 100 && memcmp(d, buf, 100) == 0 && d == cons.cells + ((c0 + 1) % NCELLS) * CELL);
    shm_chan_release(&cons);
    CHECK(!shm_chan_peek(&cons, &d, &len));
    /* Stale data whose bytes look like a future sequence word is never taken for a frame:
     * a 3-slot frame from slot 0 whose bytes at slots 1 and 2's sequence words are the
     * values those slots hold when full one lap later; after it, one-slot frames only, so
     * slots 1 and 2 are next looked at as frame heads while still holding those bytes. */
    while (prod.line_pos % NLINES != 0) {
        struct iovec iov = {buf, 1};
        CHECK_EQ(shm_chan_push(&prod, &iov, 1, 1), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        shm_chan_release(&cons);
    }
    uint64_t s0 = prod.line_pos;
    uint32_t next1 = (uint32_t)(s0 + 1 + NLINES + 1), next2 = (uint32_t)(s0 + 2 + NLINES + 1);
    memset(buf, 0, 200);
    memcpy(buf + SHM_LINE_INLINE, &next1, 4);
    memcpy(buf + SHM_LINE_INLINE + 64, &next2, 4);
    struct iovec l150 = {buf, 150};
    CHECK_EQ(shm_chan_push(&prod, &l150, 1, 150), 0);
    CHECK(shm_chan_peek(&cons, &d, &len));
    CHECK_EQ(len, 150);
    shm_chan_release(&cons);
    for (uint64_t p = s0 + 3; p < s0 + NLINES + 1; p++) { /* slots 3..7, then 0 again */
        struct iovec iov = {buf, 1};
        CHECK_EQ(shm_chan_push(&prod, &iov, 1, 1), 0);
        CHECK(shm_chan_peek(&cons, &d, &len));
        shm_chan_release(&cons);
    }
    CHECK_EQ(cons.line_pos, s0 + NLINES + 1); /* at slot 1, nothing sent there this lap */
    CHECK(!shm_chan_peek(&cons, &d, &len));

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
    free(mem);
}

/* A child produces 200000 frames, the parent consumes and checks every byte. */
static void test_two_processes(void)
{
    size_t bytes = chan_bytes();
    void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    CHECK(mem != MAP_FAILED);
    const uint32_t count = 200000;
    pid_t pid = fork();
    if (pid == 0) {
        struct shm_chan prod;
        shm_chan_init(&prod, mem, NLINES, NCELLS, CELL);
        unsigned char buf[FRAME_MAX];
        for (uint32_t i = 0; i < count; i++) {
            size_t n = len_of(i);
            fill(buf, i, n);
            struct iovec iov = {buf, n};
            while (shm_chan_push(&prod, &iov, 1, n) == TERN_ERR_AGAIN) {
            }
        }
        _exit(0);
    }
    struct shm_chan cons;
    shm_chan_init(&cons, mem, NLINES, NCELLS, CELL);
    uint32_t bad = 0;
    for (uint32_t i = 0; i < count; i++) {
        const void *d;
        size_t len;
        while (!shm_chan_peek(&cons, &d, &len)) {
        }
        if (!frame_ok(d, len, i) && bad++ < 5) fprintf(stderr, "frame %u corrupt\n", i);
        shm_chan_release(&cons);
    }
    CHECK_EQ(bad, 0);
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    munmap(mem, bytes);
}

/* A ring of 64 slots takes frames of up to SHM_FRAME_LINES slots: a 256-byte message
 * with its header stays in slots (so does a 1000-byte one, in 16), the largest slot frame takes exactly
 * SHM_FRAME_LINES of them, one byte more goes to a cell, and the released
 * continuation slots read as consumed. */
static void test_long_line_frames(void)
{
    enum { N = 64, NC = 4, C = 4096 };
    size_t bytes = SHM_RING_HEAD_BYTES + N * sizeof(struct shm_line) + NC * C;
    void *mem = aligned_alloc(64, bytes);
    memset(mem, 0, bytes);
    struct shm_chan prod, cons;
    shm_chan_init(&prod, mem, N, NC, C);
    shm_chan_init(&cons, mem, N, NC, C);
    size_t lmax = SHM_LINE_INLINE + (SHM_FRAME_LINES - 1) * 64;
    CHECK_EQ(prod.lines_max, lmax);
    CHECK_EQ(shm_chan_lines_max(4), SHM_LINE_INLINE + 64);
    CHECK_EQ(shm_chan_lines_max(2), SHM_LINE_INLINE);
    static unsigned char buf[2048];
    const void *d;
    size_t len;
    const size_t lens[] = {272, lmax, lmax + 1, 1000, 57};
    const uint64_t slots[] = {5, SHM_FRAME_LINES, 1, 16, 2};
    const uint64_t cells[] = {0, 0, 1, 0, 0};
    for (int i = 0; i < 5; i++) {
        uint64_t l0 = prod.line_pos, c0 = prod.cell_pos;
        fill(buf, 60 + (uint32_t)i, lens[i]);
        struct iovec iov = {buf, lens[i]};
        CHECK_EQ(shm_chan_push(&prod, &iov, 1, lens[i]), 0);
        CHECK_EQ(prod.line_pos - l0, slots[i]);
        CHECK_EQ(prod.cell_pos - c0, cells[i]);
        CHECK(shm_chan_peek(&cons, &d, &len));
        CHECK(len == lens[i] && memcmp(d, buf, len) == 0);
        CHECK((d == cons.cells) == (cells[i] == 1));
        shm_chan_release(&cons);
        CHECK_EQ(cons.line_pos, prod.line_pos);
        for (uint64_t p = l0 + 1; p < l0 + slots[i]; p++)
            CHECK_EQ(atomic_load(&cons.lines[p % N].seq), (uint32_t)(p + 1));
    }
    CHECK(!shm_chan_peek(&cons, &d, &len));
    free(mem);
}

int main(void)
{
    test_single_process();
    test_long_line_frames();
    test_two_processes();
    return unit_done("test_shm_ring");
}

/*
 * test_layout.c - walking non-contiguous buffers (core/layout.c): for layouts with
 * blocks out of order, zero-length blocks, negative offsets and several instances,
 * seeking to every position (forward in every step size, and back), the pieces of any
 * range, and scatter/gather of any range agree with a byte-by-byte reference walk;
 * bytes outside the blocks are never touched.
 */
#include <stdint.h>
#include <string.h>

#include "core/core.h"
#include "unit.h"

/* The reference: address offset of stream byte `pos`. */
static intptr_t ref_addr(const struct core_layout *L, size_t pos)
{
    size_t inst = pos / L->size, in = pos % L->size;
    for (int b = 0;; b++) {
        if (in < (size_t)L->blk[b].len)
            return (intptr_t)inst * L->extent + L->blk[b].off + (intptr_t)in;
        in -= (size_t)L->blk[b].len;
    }
}

/* Where cursor c points (it may rest at the end of a block or on an empty one). */
static intptr_t cur_addr(const struct core_layout *L, struct core_cur c)
{
    while (c.in == (size_t)L->blk[c.b].len) {
        c.in = 0;
        if (++c.b == L->nblk) {
            c.b = 0;
            c.inst++;
        }
    }
    return (intptr_t)c.inst * L->extent + L->blk[c.b].off + (intptr_t)c.in;
}

static void check_layout(const struct core_layout *L, size_t count)
{
    size_t total = count * L->size;
    /* Seek to every position from every earlier one in a few step sizes, and back. */
    for (size_t step = 1; step <= total; step = step * 3 + 1) {
        struct core_cur c = {0};
        for (size_t pos = 0; pos < total; pos += step) {
            core_cur_seek(L, &c, pos);
            CHECK_EQ(c.pos, pos);
            CHECK_EQ(cur_addr(L, c), ref_addr(L, pos));
        }
        core_cur_seek(L, &c, step / 2); /* back */
        CHECK_EQ(c.pos, step / 2);
        if (step / 2 < total) CHECK_EQ(cur_addr(L, c), ref_addr(L, step / 2));
    }
    /* Scatter and gather ranges; the memory spans offsets [-256, 256 + count * extent). */
    size_t span = 512 + count * (size_t)L->extent;
    unsigned char *mem = malloc(span), *base = mem + 256;
    unsigned char *src = malloc(total + 1), *back = malloc(total + 1);
    for (size_t i = 0; i < total; i++)
        src[i] = (unsigned char)(i * 7 + 1);
    for (size_t from = 0; from < total; from += 1 + total / 7)
        for (size_t n = 0; from + n <= total; n += 1 + total / 5) {
            memset(mem, 0xee, span);
            struct core_cur c = {0};
            core_lay_scatter(L, (char *)base, &c, from, src + from, n);
            CHECK_EQ(c.pos, from + n);
            for (size_t pos = from; pos < from + n; pos++) {
                CHECK_EQ(base[ref_addr(L, pos)], src[pos]);
                base[ref_addr(L, pos)] = 0xee;
            }
            for (size_t i = 0; i < span; i++)
                if (mem[i] != 0xee) {
                    CHECK(!"a byte outside the range was written");
                    break;
                }
            /* gather back what a scatter of everything put there */
            c = (struct core_cur){0};
            core_lay_scatter(L, (char *)base, &c, 0, src, total);
            memset(back, 0, total);
            c = (struct core_cur){0};
            core_cur_seek(L, &c, total / 3); /* gather starts from a moved cursor */
            core_lay_gather(L, (char *)base, &c, from, back, n);
            CHECK(memcmp(back, src + from, n) == 0);
            /* the pieces of the range: in order, right addresses, adjacent ones merged */
            struct iovec v[8];
            size_t got = 0, pos = from;
            c = (struct core_cur){0};
            core_cur_seek(L, &c, from);
            while (got < n) {
                size_t b;
                int k = core_cur_iov(L, (char *)base, &c, n - got, v, 8, &b);
                CHECK(k > 0 && b > 0);
                if (k <= 0 || b == 0) break;
                for (int i = 0; i < k; i++) {
                    CHECK((unsigned char *)v[i].iov_base == base + ref_addr(L, pos));
                    if (i) CHECK((char *)v[i - 1].iov_base + v[i - 1].iov_len != v[i].iov_base);
                    pos += v[i].iov_len;
                }
                got += b;
            }
            CHECK_EQ(got, n);
        }
    free(mem);
    free(src);
    free(back);
}

int main(void)
{
    /* blocks out of address order, a zero-length one, a negative offset */
    struct core_blk b1[] = {{40, 3}, {-200, 5}, {8, 0}, {0, 8}, {17, 1}};
    struct core_layout L1 = {b1, 5, 64, 17};
    check_layout(&L1, 6);
    /* one block per instance, instances adjacent (pieces merge across instances) */
    struct core_blk b2[] = {{0, 12}};
    struct core_layout L2 = {b2, 1, 12, 12};
    check_layout(&L2, 9);
    /* a vector: many blocks in one instance */
    struct core_blk b3[40];
    for (int i = 0; i < 40; i++)
        b3[i] = (struct core_blk){i * 10, 6};
    struct core_layout L3 = {b3, 40, 400, 240};
    check_layout(&L3, 2);
    return unit_done("test_layout");
}

/*
 * test_mem.c - util_copy (src/util/mem.h) copies exactly the bytes asked, at every
 * distance between destination and source modulo 4 KiB that selects its vector loop
 * (1-31) and around it, for lengths on both sides of the switch (1024 B) and of every
 * step of the loop (64, 16, 1 byte tails), with the AVX2 loop from 2 KiB and without it;
 * the AVX2 loop alone at every destination alignment; nothing before or after the
 * destination changes; util_copy_short at every length up to 300 and alignment. util_zero
 * clears exactly its bytes.
 */
#include <stdint.h>
#include <string.h>

#include "unit.h"
#include "util/mem.h"

enum { CAP = 3 * 4096 + 8192, GUARD = 64 };

static _Alignas(4096) unsigned char src_mem[CAP];
static _Alignas(4096) unsigned char dst_mem[CAP + 8192];

static void check_copy(size_t src_off, size_t dist, size_t n)
{
    unsigned char *s = src_mem + src_off;
    /* dst - src == dist (mod 4096), with room for the guards on both sides. */
    size_t d_off = (src_off + dist) % 4096 + 4096;
    unsigned char *d = dst_mem + d_off;
    memset(dst_mem, 0xA5, sizeof dst_mem);
    util_copy(d, s, n);
    CHECK(memcmp(d, s, n) == 0);
    for (size_t i = 1; i <= GUARD; i++) {
        CHECK(d[-(ptrdiff_t)i] == 0xA5);
        CHECK(d[n + i - 1] == 0xA5);
    }
    CHECK_EQ((((uintptr_t)d - (uintptr_t)s) & 4095), dist % 4096);
}

/* fn copies n bytes from sa bytes into src_mem to 64 + da bytes into dst_mem: exactly
 * those, and the bytes on either side stay as they were. */
static void check_at(void (*fn)(void *, const void *, size_t), size_t da, size_t sa, size_t n)
{
    memset(dst_mem, 0, 64 + da + n + 1);
    fn(dst_mem + 64 + da, src_mem + sa, n);
    CHECK(memcmp(dst_mem + 64 + da, src_mem + sa, n) == 0);
    CHECK(dst_mem[63 + da] == 0 && dst_mem[64 + da + n] == 0);
}

int main(void)
{
    for (size_t i = 0; i < sizeof src_mem; i++)
        src_mem[i] = (unsigned char)(i * 131 + (i >> 8) * 7 + 1);
    const size_t lens[] = {0,    1,    15,   16,   63,   64,   65,   1023,     1024,
                           1025, 1087, 2111, 2112, 4096, 4097, 8191, 8192 + 79};
    const size_t srcs[] = {0, 1, 8, 17, 4095};
    for (size_t a = 0; a < sizeof srcs / sizeof srcs[0]; a++)
        for (size_t dist = 0; dist <= 66; dist++)
            for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
                check_copy(srcs[a], dist, lens[l]);
    for (size_t dist = 4030; dist < 4096; dist++)
        check_copy(64, dist, 3000);
    /* Again with the AVX2 loop off: memcpy below util_copy_wide_max's switch. */
    size_t wide_max = util_copy_wide_max;
    util_copy_wide_max = 0;
    for (size_t dist = 0; dist <= 66; dist += 11)
        for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
            check_copy(17, dist, lens[l]);
    util_copy_wide_max = wide_max;
    /* The AVX2 loop alone (where the CPU has it): every destination alignment in a
     * 32-byte vector against several source ones, lengths around each of its steps (the
     * 64-byte tail, the 128-byte loop, the 32-byte loop). */
    if (util_copy_wide_ok)
        for (size_t n = 64; n < 700; n += (n < 300 ? 1 : 37))
            for (size_t da = 0; da < 33; da++)
                for (size_t sa = 0; sa < 40; sa += 13)
                    check_at(util_copy_wide, da, sa, n);
    /* The vector loop alone, at odd lengths and alignments. */
    for (size_t n = 0; n < 300; n++) {
        memset(dst_mem, 0, 512);
        util_copy_vec(dst_mem + 3, src_mem + 5, n);
        CHECK(memcmp(dst_mem + 3, src_mem + 5, n) == 0);
        CHECK(dst_mem[2] == 0 && dst_mem[3 + n] == 0);
    }
    /* The inline copy of short pieces (util_copy_short): every length up to 300 (the
     * word moves below 16 bytes, the overlapping last vector above), every source and
     * destination alignment within 16 bytes; nothing on either side changes. */
    for (size_t n = 0; n <= 300; n++)
        for (size_t da = 0; da < 16; da++)
            for (size_t sa = 0; sa < 16; sa += 5)
                check_at(util_copy_short, da, sa, n);
    /* Around the caches (util_copy_nt, streaming stores where the CPU has AVX2): the
     * ordinary head up to the first line boundary, the whole lines, the ordinary tail;
     * every destination offset within a line, lengths from none to several lines. */
    for (size_t n = 0; n < 600; n += (n < 200 ? 1 : 31))
        for (size_t da = 0; da < 65; da++)
            check_at(util_copy_nt, da, 7, n);
    unsigned char z[200];
    memset(z, 0xFF, sizeof z);
    util_zero(z + 1, 160);
    CHECK(z[0] == 0xFF && z[161] == 0xFF);
    for (int i = 1; i <= 160; i++)
        CHECK(z[i] == 0);
    return unit_done("test_mem");
}

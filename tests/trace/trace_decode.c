/*
 * trace_decode.c - the C reader of trace records (trace_decode in src/trace/trace_format.h)
 * gives exactly the same events for a point-to-point call written as one record of format
 * 4 (TRACE_REC_P2P_SEND / _RECV) as for the same call in the records of format 3 (an ENTER
 * with its send and LEAVE merged; an ENTER, then a DONE with the LEAVE merged), and rejects
 * malformed records. No processes: units are built here as the writer lays them out.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "trace/trace_format.h"

static int fails;

#define CHECK(c, ...)                                                                              \
    do {                                                                                           \
        if (!(c)) {                                                                                \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                            \
            printf(__VA_ARGS__);                                                                   \
            printf("\n");                                                                          \
            fails++;                                                                               \
        }                                                                                          \
    } while (0)

static struct trace_unit head(int32_t dt, unsigned kind, unsigned units, uint16_t fn, int32_t a,
                              int32_t b)
{
    struct trace_unit u = {dt, (uint8_t)kind, (uint8_t)units, fn, a, b};
    return u;
}

static struct trace_unit raw(const void *p)
{
    struct trace_unit u;
    memcpy(&u, p, sizeof u);
    return u;
}

static struct trace_unit qq(uint64_t x, uint64_t y)
{
    uint64_t w[2] = {x, y};
    return raw(w);
}

static struct trace_unit p2p_tail(int32_t mdt, int32_t ldt, uint32_t req, uint16_t ctx,
                                  uint16_t csize)
{
    unsigned char b[16];
    memcpy(b, &mdt, 4);
    memcpy(b + 4, &ldt, 4);
    memcpy(b + 8, &req, 4);
    memcpy(b + 12, &ctx, 2);
    memcpy(b + 14, &csize, 2);
    return raw(b);
}

static long decode(const struct trace_unit *u, uint32_t n, struct trace_rec *out)
{
    static const uint8_t api[8] = {0, TRACE_API_MPI, TRACE_API_MPI, 0, 0, 0, 0, 0};
    memset(out, 0x5a, 16 * sizeof *out); /* the decoder must set every field */
    return trace_decode(u, n, 16, 1000, api, 8, out);
}

static void same(const char *what, const struct trace_unit *v3, uint32_t n3,
                 const struct trace_unit *v4, uint32_t n4, long want)
{
    struct trace_rec a[16], b[16];
    long ka = decode(v3, n3, a), kb = decode(v4, n4, b);
    CHECK(ka == want && kb == want, "%s: %ld and %ld events, want %ld", what, ka, kb, want);
    if (ka != want || kb != want) return;
    for (long i = 0; i < want; i++) {
        CHECK(memcmp(&a[i], &b[i], sizeof a[i]) == 0,
              "%s: event %ld differs: kind %u/%u t %llu/%llu peer %d/%d tag %d/%d comm %d/%d "
              "csize %d/%d op %d/%d bytes %llu/%llu x %llu/%llu api %u/%u fn %u/%u",
              what, i, a[i].kind, b[i].kind, (unsigned long long)a[i].t, (unsigned long long)b[i].t,
              a[i].peer, b[i].peer, a[i].tag, b[i].tag, a[i].comm, b[i].comm, a[i].csize,
              b[i].csize, a[i].op, b[i].op, (unsigned long long)a[i].bytes,
              (unsigned long long)b[i].bytes, (unsigned long long)a[i].x,
              (unsigned long long)b[i].x, a[i].api, b[i].api, a[i].fn, b[i].fn);
    }
}

int main(void)
{
    const uint16_t fsend = 1, frecv = 2, ctx = 4, csize = 3;
    const uint64_t site = 0x401234, bytes = 8;
    const uint32_t req = 77;
    /* MPI_Send to world rank 2, tag 9: entered 10 ticks after t0, its send at the entry,
     * left 40 ticks later; then a LEAVE-only record 5 ticks on, to check the delta chain. */
    unsigned char msg[16];
    memcpy(msg, &bytes, 8);
    memcpy(msg + 8, &req, 4);
    memcpy(msg + 12, &ctx, 2);
    msg[14] = TRACE_MSG_SEND;
    msg[15] = 0;
    int32_t args[4] = {ctx, csize, TRACE_NONE, TRACE_NONE};
    struct trace_unit s3[] = {
        head(10, TRACE_ENTER | TRACE_UF_ARGS | TRACE_UF_MSG | TRACE_UF_LEAVE, 5, fsend, 2, 9),
        qq(bytes, site),
        raw(args),
        raw(msg),
        head(40, TRACE_LEAVE, 0, fsend, 0, 0),
        head(5, TRACE_LEAVE, 1, frecv, 0, 0),
    };
    struct trace_unit s4[] = {
        head(10, TRACE_REC_P2P_SEND, 3, fsend, 2, 9),
        qq(bytes, site),
        p2p_tail(0, 40, req, ctx, csize),
        head(5, TRACE_LEAVE, 1, frecv, 0, 0),
    };
    same("send", s3, 6, s4, 4, 4);
    /* MPI_Recv from world rank 1, tag 9: entered at 10, completed 300 ticks later, left at
     * the completion's stamp. */
    struct trace_unit r3[] = {
        head(10, TRACE_ENTER | TRACE_UF_ARGS, 3, frecv, 1, 9),
        qq(bytes, site),
        raw(args),
        head(300, TRACE_MSG_DONE | TRACE_UF_LEAVE, 3, ctx, 1, 9),
        qq(bytes, req),
        head(0, TRACE_LEAVE, 0, frecv, 0, 0),
        head(5, TRACE_LEAVE, 1, fsend, 0, 0),
    };
    struct trace_unit r4[] = {
        head(10, TRACE_REC_P2P_RECV, 3, frecv, 1, 9),
        qq(bytes, site),
        p2p_tail(300, 0, req, ctx, csize),
        head(5, TRACE_LEAVE, 1, fsend, 0, 0),
    };
    same("recv", r3, 7, r4, 4, 4);
    struct trace_rec out[16];
    /* Malformed: a point-to-point record of the wrong size, with flags, cut short, or more
     * events than the chunk says. */
    struct trace_unit bad[4];
    memcpy(bad, r4, sizeof bad);
    bad[0].units = 2;
    CHECK(decode(bad, 4, out) == -1, "a p2p record of 2 units was accepted");
    memcpy(bad, r4, sizeof bad);
    bad[0].kind |= TRACE_UF_LEAVE;
    CHECK(decode(bad, 4, out) == -1, "a p2p record with a flag was accepted");
    CHECK(decode(r4, 2, out) == -1, "a p2p record cut short was accepted");
    CHECK(trace_decode(r4, 4, 3, 1000, NULL, 0, out) == -1, "more events than room");
    CHECK(trace_decode(r4, 3, 3, 1000, NULL, 0, out) == 3, "one p2p record is 3 events");
    if (fails) return 1;
    printf("trace_decode: ok\n");
    return 0;
}

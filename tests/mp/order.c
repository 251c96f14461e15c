/*
 * order.c - non-overtaking: 10^5 messages to rank 0 arrive in the order they were sent.
 *
 * Every rank but 0 sends its share of MP_ORDER_COUNT (default 100000) messages to rank 0
 * with tern_isend in batches. Each payload starts with (sequence number, sender) and the
 * rest is patterned by both. Sizes are mostly small, with some medium ones and a few
 * that cross the eager/rendezvous threshold (16 KiB by default) in both directions;
 * tags cycle through 0..4. Rank 0 receives in phases that use every way of asking:
 * blocking ANY_SOURCE/ANY_TAG, batches of pre-posted ANY_SOURCE irecvs completed with
 * tern_waitall, a specific source with ANY_TAG, and a specific source and tag. Whatever
 * the mix, per source the sequence numbers must come in order, with no loss and no
 * duplicate, and the receives of a batch must match in the order they were posted.
 */
#include "mp_check.h"

#define NTAGS      5
#define SEND_BATCH 64
#define RECV_BATCH 32
#define PHASE_LEN  1000
#define BIG_MAX    200000

static size_t size_of(uint32_t seq)
{
    static const size_t big[] = {16383, 16384, 16385, 20480, 65539, BIG_MAX, 32768, 32769};
    if (seq % 997 == 500) return big[(seq / 997) % (sizeof big / sizeof big[0])];
    if (seq % 101 == 50) return 1000 + (seq * 37) % 3000;
    return 8 + (seq * 7) % 57;
}

static int tag_of(uint32_t seq)
{
    return (int)(seq % NTAGS);
}

static uint64_t seed_of(int src, uint32_t seq)
{
    return mp_seed((uint64_t)src, seq, 0x0dde, 0);
}

static void make_msg(uint8_t *buf, int src, uint32_t seq)
{
    size_t size = size_of(seq);
    uint32_t hdr[2] = {seq, (uint32_t)src};
    memcpy(buf, hdr, 8);
    mp_fill(buf + 8, size - 8, seed_of(src, seq));
}

static void sender(int me, uint32_t count)
{
    uint8_t *pool = mp_malloc((size_t)SEND_BATCH * BIG_MAX);
    tern_request_t reqs[SEND_BATCH];
    tern_status_t sts[SEND_BATCH];
    uint32_t seq = 0;
    while (seq < count) {
        size_t n = 0;
        for (; n < SEND_BATCH && seq < count; n++, seq++) {
            uint8_t *b = pool + n * BIG_MAX;
            MP_WHERE("sending seq %u", seq);
            make_msg(b, me, seq);
            reqs[n] = TERN_REQUEST_NULL;
            CHECK_OK(tern_isend(b, size_of(seq), 0, tag_of(seq), TERN_COMM_WORLD, &reqs[n]));
        }
        MP_WHERE("waitall for sends before seq %u", seq);
        CHECK_OK(tern_waitall(n, reqs, sts));
        for (size_t i = 0; i < n; i++) {
            CHECK(reqs[i] == TERN_REQUEST_NULL);
            CHECK_EQ_INT(sts[i].error, TERN_OK);
        }
    }
    free(pool);
}

struct rx {
    int np;
    uint32_t *next;  /* next sequence number expected from each source */
    uint32_t *count; /* messages each source sends */
    uint64_t total, done;
};

/* Check one received message against what its source must send next. */
static void accept_msg(struct rx *rx, const uint8_t *buf, const tern_status_t *st, int want_src,
                       int want_tag)
{
    CHECKF(st->source >= 1 && st->source < rx->np, "status.source %d", st->source);
    CHECKF(want_src == TERN_ANY_SOURCE || st->source == want_src, "asked for source %d, got %d",
           want_src, st->source);
    CHECKF(want_tag == TERN_ANY_TAG || st->tag == want_tag, "asked for tag %d, got %d", want_tag,
           st->tag);
    int src = st->source;
    uint32_t expect = rx->next[src];
    CHECKF(expect < rx->count[src], "extra message from rank %d: it sends only %u", src,
           rx->count[src]);
    CHECKF(st->bytes >= 8, "message of %zu bytes from rank %d (expected seq %u, %zu bytes)",
           st->bytes, src, expect, size_of(expect));
    uint32_t hdr[2];
    memcpy(hdr, buf, 8);
    CHECKF(hdr[1] == (uint32_t)src, "payload names sender %u but status.source is %d", hdr[1], src);
    CHECKF(hdr[0] == expect, "out of order from rank %d: got seq %u, expected seq %u (%s)", src,
           hdr[0], expect,
           hdr[0] < expect ? "duplicate or reordered" : "messages lost or overtaken");
    CHECKF(st->tag == tag_of(expect), "seq %u from rank %d has tag %d, sent with %d", expect, src,
           st->tag, tag_of(expect));
    CHECKF(st->bytes == size_of(expect), "seq %u from rank %d has %zu bytes, sent %zu", expect, src,
           st->bytes, size_of(expect));
    CHECK_PATTERN(buf + 8, st->bytes - 8, seed_of(src, expect), "seq %u from rank %d (bytes 8..)",
                  expect, src);
    rx->next[src]++;
    rx->done++;
}

/* A source that still owes messages, round robin from `hint`. */
static int pending_source(struct rx *rx, int hint)
{
    for (int i = 0; i < rx->np - 1; i++) {
        int s = 1 + (hint + i) % (rx->np - 1);
        if (rx->next[s] < rx->count[s]) return s;
    }
    MP_FAIL("no source has messages left");
}

static void receiver(struct rx *rx)
{
    uint8_t *pool = mp_malloc((size_t)RECV_BATCH * BIG_MAX);
    tern_request_t reqs[RECV_BATCH];
    tern_status_t sts[RECV_BATCH];
    int phase = 0, rr = 0;
    while (rx->done < rx->total) {
        uint64_t left = rx->total - rx->done;
        uint64_t n = left < PHASE_LEN ? left : PHASE_LEN;
        int kind = phase++ % 4;
        MP_WHERE("receive phase %d (kind %d) after %llu messages", phase - 1, kind,
                 (unsigned long long)rx->done);
        if (kind == 1) {
            /* Batches of pre-posted wildcard receives: they match in posting order. */
            for (uint64_t got = 0; got < n;) {
                size_t b = n - got < RECV_BATCH ? (size_t)(n - got) : RECV_BATCH;
                for (size_t i = 0; i < b; i++) {
                    reqs[i] = TERN_REQUEST_NULL;
                    sts[i] = mp_status_poison();
                    CHECK_OK(tern_irecv(pool + i * BIG_MAX, BIG_MAX, TERN_ANY_SOURCE, TERN_ANY_TAG,
                                        TERN_COMM_WORLD, &reqs[i]));
                }
                CHECK_OK(tern_waitall(b, reqs, sts));
                for (size_t i = 0; i < b; i++) {
                    CHECK(reqs[i] == TERN_REQUEST_NULL);
                    CHECK_EQ_INT(sts[i].error, TERN_OK);
                    accept_msg(rx, pool + i * BIG_MAX, &sts[i], TERN_ANY_SOURCE, TERN_ANY_TAG);
                }
                got += b;
            }
            continue;
        }
        for (uint64_t i = 0; i < n; i++) {
            int src = TERN_ANY_SOURCE, tag = TERN_ANY_TAG;
            if (kind == 2 || kind == 3) src = pending_source(rx, rr++);
            if (kind == 3) tag = tag_of(rx->next[src]);
            tern_status_t st = mp_status_poison();
            CHECK_OK(tern_recv(pool, BIG_MAX, src, tag, TERN_COMM_WORLD, &st));
            accept_msg(rx, pool, &st, src, tag);
        }
    }
    for (int s = 1; s < rx->np; s++)
        CHECK_EQ_INT(rx->next[s], rx->count[s]);
    free(pool);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = mp_rank, np = tern_size();
    int total = mp_env_int("MP_ORDER_COUNT", 100000);
    if (np < 2) {
        printf("order: needs at least 2 ranks, nothing to do\n");
        CHECK_OK(tern_finalize());
        return 0;
    }
    /* Senders 1..np-1 share the total. */
    uint32_t *count = mp_malloc(sizeof(uint32_t) * (size_t)np);
    uint32_t *next = mp_malloc(sizeof(uint32_t) * (size_t)np);
    count[0] = next[0] = 0;
    for (int s = 1; s < np; s++) {
        count[s] = (uint32_t)(total / (np - 1) + (s <= total % (np - 1)));
        next[s] = 0;
    }
    double t0 = mp_now();
    if (me == 0) {
        struct rx rx = {np, next, count, (uint64_t)total, 0};
        receiver(&rx);
        /* Nothing more may be pending. */
        int flag = 1;
        tern_status_t st = mp_status_poison();
        CHECK_OK(tern_iprobe(TERN_ANY_SOURCE, TERN_ANY_TAG, TERN_COMM_WORLD, &flag, &st));
        CHECKF(!flag, "a message from %d (tag %d, %zu bytes) is left over", st.source, st.tag,
               st.bytes);
    } else {
        sender(me, count[me]);
    }
    MP_WHERE("final barrier");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (me == 0)
        printf("order: %d messages from %d senders in %.2f s\n", total, np - 1, mp_now() - t0);
    free(count);
    free(next);
    CHECK_OK(tern_finalize());
    return 0;
}

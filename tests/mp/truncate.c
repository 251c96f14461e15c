/*
 * truncate.c - a message larger than the receive buffer.
 *
 * For small, eager and rendezvous sizes, rank 1 sends and rank 0 receives into a
 * smaller buffer: the receive must return TERN_ERR_TRUNCATE with status.bytes = the
 * incoming size (and the right source and tag), the first cap bytes must be the
 * message's, and the bytes after cap must be untouched (guard). The ways of receiving
 * rotate between tern_recv, tern_irecv + tern_wait, tern_irecv + tern_test and
 * tern_waitall (where statuses[i].error names the failure), posted before the message
 * arrives or after. The sender's operation completes normally. After every truncation
 * a full-size message of the same size follows and must arrive intact.
 * With more ranks, the pairs are (0,1), (2,3), ...
 */
#include "mp_check.h"

#define TAG_T    9
#define TAG_FULL 10
#define TAG_GO   11

struct tcase {
    size_t size, cap;
};

static const struct tcase cases[] = {
    {1, 0},
    {10, 4},
    {64, 63},
    {100, 0},
    {1000, 999},
    {5000, 1000},
    {16384, 16383},
    {16000, 8000},
    {16385, 16384},
    {32769, 17},
    {100000, 50000},
    {100000, 99999},
    {(size_t)4 << 20, ((size_t)1 << 20) + 3},
    {(size_t)4 << 20, 0},
    {(size_t)9 << 20, ((size_t)9 << 20) - 1},
};
#define NCASES (sizeof cases / sizeof cases[0])

static uint64_t seed_of(size_t size, int c, int full)
{
    return mp_seed(size, (uint64_t)c, (uint64_t)full, 0x7c);
}

static void receiver(int peer, int c, int how, int posted_first)
{
    size_t size = cases[c].size, cap = cases[c].cap;
    uint8_t *b = mp_malloc(size + MP_GUARD_LEN);
    tern_status_t st = mp_status_poison();
    tern_request_t r = TERN_REQUEST_NULL;
    int rc;
    MP_WHERE("case %d: %zu bytes into %zu, receive method %d, %s", c, size, cap, how,
             posted_first ? "posted first" : "message first");
    memset(b, 0x11, size);
    mp_guard_set(b, cap);
    if (posted_first) {
        /* Any non-blocking way; the message is sent after the go. */
        CHECK_OK(tern_irecv(b, cap, peer, TAG_T, TERN_COMM_WORLD, &r));
        CHECK_OK(tern_send(NULL, 0, peer, TAG_GO, TERN_COMM_WORLD));
    } else {
        CHECK_OK(tern_send(NULL, 0, peer, TAG_GO, TERN_COMM_WORLD));
        /* Wait until the message (or its announcement) is there. */
        int flag = 0;
        tern_status_t ps = mp_status_poison();
        while (!flag)
            CHECK_OK(tern_iprobe(peer, TAG_T, TERN_COMM_WORLD, &flag, &ps));
        CHECK_STATUS(ps, peer, TAG_T, size);
        if (how != 0) CHECK_OK(tern_irecv(b, cap, peer, TAG_T, TERN_COMM_WORLD, &r));
    }
    switch (how) {
    case 0: /* blocking receive (or wait when posted first) */
        if (posted_first)
            rc = tern_wait(&r, &st);
        else
            rc = tern_recv(b, cap, peer, TAG_T, TERN_COMM_WORLD, &st);
        break;
    case 1:
        rc = tern_wait(&r, &st);
        break;
    case 2: {
        int flag = 0;
        do
            rc = tern_test(&r, &flag, &st);
        while (rc == TERN_OK && !flag);
        CHECKF(flag, "tern_test returned %s without completing", tern_err_name(rc));
        break;
    }
    default: {
        tern_request_t two[2] = {TERN_REQUEST_NULL, r};
        tern_status_t sts[2] = {mp_status_poison(), mp_status_poison()};
        rc = tern_waitall(2, two, sts);
        CHECK(two[0] == TERN_REQUEST_NULL && two[1] == TERN_REQUEST_NULL);
        CHECKF(sts[1].error == TERN_ERR_TRUNCATE, "waitall: statuses[1].error is %d (%s)",
               sts[1].error, tern_err_name(sts[1].error));
        CHECKF(sts[0].error == TERN_OK, "waitall: statuses[0].error of a NULL request is %d",
               sts[0].error);
        st = sts[1];
        r = TERN_REQUEST_NULL;
        break;
    }
    }
    CHECK_ERR(rc, TERN_ERR_TRUNCATE);
    CHECK(r == TERN_REQUEST_NULL);
    CHECK_STATUS(st, peer, TAG_T, size);
    CHECK_PATTERN(b, cap, seed_of(size, c, 0), "first %zu bytes of a truncated %zu-byte message",
                  cap, size);
    CHECK_GUARD(b, cap, "truncated receive of %zu bytes into %zu", size, cap);

    /* The next message, of full size, still works. */
    memset(b, 0x22, size);
    mp_guard_set(b, size);
    st = mp_status_poison();
    CHECK_OK(tern_recv(b, size, peer, TAG_FULL, TERN_COMM_WORLD, &st));
    CHECK_STATUS(st, peer, TAG_FULL, size);
    CHECK_PATTERN(b, size, seed_of(size, c, 1), "full-size message after a truncation");
    CHECK_GUARD(b, size, "full-size receive");
    free(b);
}

static void sender(int peer, int c, int how)
{
    size_t size = cases[c].size;
    uint8_t *b = mp_malloc(size);
    uint8_t *f = mp_malloc(size);
    MP_WHERE("case %d: sending %zu bytes (receiver cap %zu), method %d", c, size, cases[c].cap,
             how);
    mp_fill(b, size, seed_of(size, c, 0));
    mp_fill(f, size, seed_of(size, c, 1));
    CHECK_OK(tern_recv(NULL, 0, peer, TAG_GO, TERN_COMM_WORLD, NULL));
    if (how & 1) {
        /* Synchronous: returns once the receiver is done with the truncated message. */
        CHECK_OK(tern_send(b, size, peer, TAG_T, TERN_COMM_WORLD));
    } else {
        tern_request_t r;
        tern_status_t st = mp_status_poison();
        CHECK_OK(tern_isend(b, size, peer, TAG_T, TERN_COMM_WORLD, &r));
        CHECK_OK(tern_wait(&r, &st));
    }
    CHECK_OK(tern_send(f, size, peer, TAG_FULL, TERN_COMM_WORLD));
    free(b);
    free(f);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = mp_rank, np = tern_size();
    int peer = me ^ 1;
    if (peer >= np) {
        /* Odd rank out (or a 1-rank job): truncation on a message to myself. */
        for (int c = 0; c < (int)NCASES; c++) {
            size_t size = cases[c].size, cap = cases[c].cap;
            MP_WHERE("self case %d: %zu bytes into %zu", c, size, cap);
            uint8_t *s = mp_malloc(size), *b = mp_malloc(size + MP_GUARD_LEN);
            mp_fill(s, size, seed_of(size, c, 0));
            mp_guard_set(b, cap);
            tern_request_t r;
            tern_status_t st = mp_status_poison();
            CHECK_OK(tern_isend(s, size, me, TAG_T, TERN_COMM_WORLD, &r));
            CHECK_ERR(tern_recv(b, cap, me, TAG_T, TERN_COMM_WORLD, &st), TERN_ERR_TRUNCATE);
            CHECK_STATUS(st, me, TAG_T, size);
            CHECK_OK(tern_wait(&r, NULL));
            CHECK_PATTERN(b, cap, seed_of(size, c, 0), "truncated self message");
            CHECK_GUARD(b, cap, "truncated self receive");
            free(s);
            free(b);
        }
    } else {
        int v = 0;
        for (int c = 0; c < (int)NCASES; c++) {
            for (int pf = 0; pf < 2; pf++, v++) {
                int how = v % 4;
                if (me & 1)
                    sender(peer, c, how);
                else
                    receiver(peer, c, how, pf);
            }
        }
    }
    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_finalize());
    if (me == 0) printf("truncate: %d ranks ok\n", np);
    return 0;
}

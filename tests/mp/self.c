/*
 * self.c - messages from a rank to itself, 0 B to 64 MiB.
 *
 * Every rank (all at once, so the self path runs next to other ranks' traffic setups)
 * sends to itself on TERN_COMM_WORLD (destination = own rank) and on TERN_COMM_SELF
 * (destination 0), with the receive posted first and with the send first (the message
 * then waits as unexpected, seen by iprobe), through isend/irecv/wait, tern_sendrecv and
 * a synchronous tern_send against a posted receive. Every byte and the guard after the
 * receive area are checked.
 */
#include "mp_check.h"

#define MAX_SIZE ((size_t)64 << 20)

static const size_t sizes[] = {0,
                               1,
                               7,
                               8,
                               9,
                               55,
                               56,
                               63,
                               64,
                               65,
                               1000,
                               4096,
                               16383,
                               16384,
                               16385,
                               32767,
                               32768,
                               32769,
                               100000,
                               1048576,
                               1048579,
                               (size_t)5 << 20 | 1,
                               (size_t)16 << 20,
                               MAX_SIZE};
#define NSIZES (sizeof sizes / sizeof sizes[0])

static int me;

static uint64_t seed_of(size_t size, int method, int onself)
{
    return mp_seed(size, (uint64_t)method, (uint64_t)onself, (uint64_t)me + 0x5e1f);
}

static void one(uint8_t *s, uint8_t *d, size_t size, int method, int onself)
{
    tern_comm_t c = onself ? TERN_COMM_SELF : TERN_COMM_WORLD;
    int dest = onself ? 0 : me, tag = (int)(size % 1000);
    tern_request_t rs = TERN_REQUEST_NULL, rr = TERN_REQUEST_NULL;
    tern_status_t st = mp_status_poison();
    MP_WHERE("self message of %zu bytes, method %d, on %s", size, method,
             onself ? "TERN_COMM_SELF" : "TERN_COMM_WORLD");
    mp_fill(s, size, seed_of(size, method, onself));
    mp_guard_set(d, size);
    switch (method) {
    case 0: /* receive posted first */
        CHECK_OK(tern_irecv(d, size, dest, tag, c, &rr));
        CHECK_OK(tern_isend(s, size, dest, tag, c, &rs));
        CHECK_OK(tern_wait(&rr, &st));
        CHECK_OK(tern_wait(&rs, NULL));
        break;
    case 1: { /* send first: the message is unexpected when the receive comes */
        CHECK_OK(tern_isend(s, size, dest, tag, c, &rs));
        int flag = 0;
        tern_status_t ps = mp_status_poison();
        double t0 = mp_now();
        while (!flag) {
            CHECK_OK(tern_iprobe(TERN_ANY_SOURCE, TERN_ANY_TAG, c, &flag, &ps));
            CHECKF(flag || mp_now() - t0 < 5, "iprobe does not see a message I sent myself");
        }
        CHECK_STATUS(ps, dest, tag, size);
        CHECK_OK(tern_irecv(d, size, TERN_ANY_SOURCE, tag, c, &rr));
        tern_request_t both[2] = {rs, rr};
        tern_status_t sts[2];
        CHECK_OK(tern_waitall(2, both, sts));
        st = sts[1];
        break;
    }
    case 2:
        CHECK_OK(tern_sendrecv(s, size, dest, tag, d, size, dest, tag, c, &st));
        break;
    default: /* synchronous send against a posted receive */
        CHECK_OK(tern_irecv(d, size, dest, TERN_ANY_TAG, c, &rr));
        CHECK_OK(tern_send(s, size, dest, tag, c));
        CHECK_OK(tern_wait(&rr, &st));
        break;
    }
    CHECK_STATUS(st, dest, tag, size);
    CHECK_PATTERN(d, size, seed_of(size, method, onself), "self message");
    CHECK_GUARD(d, size, "self receive");
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    me = mp_rank;
    int np = tern_size();
    uint8_t *s = mp_malloc(MAX_SIZE), *d = mp_malloc(MAX_SIZE + MP_GUARD_LEN);
    for (size_t i = 0; i < NSIZES; i++) {
        /* All four ways for most sizes; the largest ones only two to stay quick. */
        int big = sizes[i] >= ((size_t)16 << 20);
        for (int method = 0; method < 4; method++) {
            if (big && (method == 2 || (method == 3 && sizes[i] != MAX_SIZE))) continue;
            one(s, d, sizes[i], method, (int)((i + (size_t)method) & 1));
        }
    }
    MP_WHERE("finalize");
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(s);
    free(d);
    CHECK_OK(tern_finalize());
    if (me == 0) printf("self: %d ranks ok\n", np);
    return 0;
}

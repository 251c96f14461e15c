/*
 * comm.c - communicators: dup, split, free, rank translation, private matching spaces,
 * barriers.
 *
 *  - TERN_COMM_WORLD and TERN_COMM_SELF report the right ranks and sizes.
 *  - dup: same ranks; a message sent on the dup is invisible to (ANY_SOURCE/ANY_TAG)
 *    probes and receives on the parent and vice versa, even with the same source and tag.
 *  - split by parity with keys reversed: the new ranks are in reverse order of world
 *    rank; tern_comm_world_rank translates every rank; ties in the key fall back to the
 *    rank in the parent; TERN_UNDEFINED gives TERN_COMM_NULL.
 *  - traffic on the split communicators and on the world at the same time (ring
 *    exchanges, small and rendezvous sizes), with the same tags everywhere.
 *  - tern_barrier on every communicator really waits for every member: the latest
 *    entry time (CLOCK_MONOTONIC, shared by the processes of a machine) must precede
 *    the earliest exit time, with one member arriving late on purpose.
 *  - tern_comm_free sets the handle to TERN_COMM_NULL and the old handle is refused
 *    with TERN_ERR_COMM; many dup/free cycles keep working.
 */
#include "mp_check.h"

#define W TERN_COMM_WORLD

static int me, np;

static int comm_rank(tern_comm_t c)
{
    int r = -99;
    CHECK_OK(tern_comm_rank(c, &r));
    return r;
}

static int comm_size(tern_comm_t c)
{
    int s = -99;
    CHECK_OK(tern_comm_size(c, &s));
    return s;
}

/*
 * Barrier check: every member notes its entry and exit times; the member with rank
 * `late` in c sleeps first. Rank 0 of c collects them (over c itself) and checks
 * max(entry) <= min(exit).
 */
static void barrier_check(tern_comm_t c, int late, const char *name)
{
    int r = comm_rank(c), n = comm_size(c);
    MP_WHERE("barrier on %s (rank %d of %d, late %d)", name, r, n, late);
    if (r == late) mp_sleep_ms(100);
    double t[2];
    t[0] = mp_now();
    CHECK_OK(tern_barrier(c));
    t[1] = mp_now();
    if (r != 0) {
        CHECK_OK(tern_send(t, sizeof t, 0, 77, c));
        return;
    }
    double max_in = t[0], min_out = t[1];
    int who_in = 0, who_out = 0;
    for (int i = 1; i < n; i++) {
        double u[2];
        tern_status_t st;
        CHECK_OK(tern_recv(u, sizeof u, i, 77, c, &st));
        CHECK_STATUS(st, i, 77, sizeof u);
        if (u[0] > max_in) max_in = u[0], who_in = i;
        if (u[1] < min_out) min_out = u[1], who_out = i;
    }
    CHECKF(max_in <= min_out, "barrier on %s: rank %d left %.2f ms before rank %d entered", name,
           who_out, (max_in - min_out) * 1e3, who_in);
}

/* Messages on a and b (same processes, same ranks) must never match each other's
 * receives. Ranks 0 and 1 of a exchange; in a 1-rank communicator, rank 0 with itself. */
static void isolation(tern_comm_t a, tern_comm_t b, const char *what)
{
    int r = comm_rank(a), n = comm_size(a);
    CHECK_EQ_INT(comm_rank(b), r);
    CHECK_EQ_INT(comm_size(b), n);
    MP_WHERE("isolation %s", what);
    int sender = 0, receiver = n > 1 ? 1 : 0;
    int va = 1000 + r, vb = 2000 + r, got = 0;
    tern_request_t ra = TERN_REQUEST_NULL, rb = TERN_REQUEST_NULL;
    if (r == sender) {
        /* First on b, then on a, same tag. */
        CHECK_OK(tern_isend(&vb, sizeof vb, receiver, 3, b, &rb));
        CHECK_OK(tern_isend(&va, sizeof va, receiver, 3, a, &ra));
    }
    if (r == receiver) {
        tern_status_t st = mp_status_poison();
        int flag = 0;
        /* Wait until the message on b is there; a probe on a must still not see it
         * unless a's own message is there too - then it must be a's. */
        while (!flag)
            CHECK_OK(tern_iprobe(sender, 3, b, &flag, &st));
        CHECK_STATUS(st, sender, 3, sizeof(int));
        CHECK_OK(tern_recv(&got, sizeof got, TERN_ANY_SOURCE, TERN_ANY_TAG, a, &st));
        CHECK_STATUS(st, sender, 3, sizeof(int));
        CHECKF(got == 1000 + sender,
               "receive on %s got %d: the message sent on the other "
               "communicator (%d expected)",
               what, got, 1000 + sender);
        flag = 1;
        CHECK_OK(tern_iprobe(TERN_ANY_SOURCE, TERN_ANY_TAG, a, &flag, &st));
        CHECKF(!flag, "iprobe on %s sees a message (source %d tag %d) sent on the other", what,
               st.source, st.tag);
        CHECK_OK(tern_recv(&got, sizeof got, sender, 3, b, &st));
        CHECKF(got == 2000 + sender, "receive on the other communicator got %d", got);
    }
    CHECK_OK(tern_wait(&ra, NULL));
    CHECK_OK(tern_wait(&rb, NULL));
    CHECK_OK(tern_barrier(a));
}

/* Ring exchange on c: send to the right, receive from the left, several sizes. */
static void ring(tern_comm_t c, const char *name, int id)
{
    int r = comm_rank(c), n = comm_size(c);
    int right = (r + 1) % n, left = (r + n - 1) % n;
    static const size_t sizes[] = {0, 4, 100, 20000, 300000};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        size_t size = sizes[i];
        MP_WHERE("ring on %s, %zu bytes", name, size);
        uint8_t *s = mp_malloc(size), *d = mp_malloc(size + MP_GUARD_LEN);
        int wr = -1, wl = -1;
        CHECK_OK(tern_comm_world_rank(c, r, &wr));
        CHECK_OK(tern_comm_world_rank(c, left, &wl));
        CHECK_EQ_INT(wr, me);
        mp_fill(s, size, mp_seed((uint64_t)id, (uint64_t)wr, size, 1));
        mp_guard_set(d, size);
        tern_status_t st = mp_status_poison();
        CHECK_OK(tern_sendrecv(s, size, right, 5, d, size, left, 5, c, &st));
        CHECK_STATUS(st, left, 5, size);
        CHECK_PATTERN(d, size, mp_seed((uint64_t)id, (uint64_t)wl, size, 1),
                      "ring on %s from rank %d (world %d)", name, left, wl);
        CHECK_GUARD(d, size, "ring receive");
        free(s);
        free(d);
    }
}

/*
 * Receives with the same source rank and tag posted at once on the world and on c (for
 * which that rank may be another process); then the sends. Each must get its own.
 */
static void mixed(tern_comm_t c, const char *name)
{
    int r = comm_rank(c), n = comm_size(c);
    int cl = (r + n - 1) % n, cr = (r + 1) % n;
    int wl = (me + np - 1) % np, wr = (me + 1) % np;
    MP_WHERE("mixed traffic on the world and %s", name);
    for (int round = 0; round < 20; round++) {
        size_t size = round % 5 == 4 ? 40000 : 64;
        uint8_t *s0 = mp_malloc(size), *s1 = mp_malloc(size), *d0 = mp_malloc(size),
                *d1 = mp_malloc(size);
        mp_fill(s0, size, mp_seed(0, (uint64_t)me, (uint64_t)round, 9));
        mp_fill(s1, size, mp_seed(1, (uint64_t)me, (uint64_t)round, 9));
        tern_request_t q[4];
        tern_status_t st[4];
        /* Same tag 9 and the same source rank number on both when it coincides. */
        CHECK_OK(tern_irecv(d1, size, cl, 9, c, &q[0]));
        CHECK_OK(tern_irecv(d0, size, wl, 9, W, &q[1]));
        CHECK_OK(tern_isend(s1, size, cr, 9, c, &q[2]));
        CHECK_OK(tern_isend(s0, size, wr, 9, W, &q[3]));
        CHECK_OK(tern_waitall(4, q, st));
        int wcl = -1;
        CHECK_OK(tern_comm_world_rank(c, cl, &wcl));
        CHECK_STATUS(st[0], cl, 9, size);
        CHECK_STATUS(st[1], wl, 9, size);
        CHECK_PATTERN(d1, size, mp_seed(1, (uint64_t)wcl, (uint64_t)round, 9),
                      "receive on %s from its rank %d (world %d), round %d", name, cl, wcl, round);
        CHECK_PATTERN(d0, size, mp_seed(0, (uint64_t)wl, (uint64_t)round, 9),
                      "receive on the world from %d, round %d", wl, round);
        free(s0);
        free(s1);
        free(d0);
        free(d1);
    }
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    me = mp_rank;
    np = tern_size();
    int x = -1;

    MP_WHERE("world and self");
    CHECK_EQ_INT(comm_rank(W), me);
    CHECK_EQ_INT(comm_size(W), np);
    CHECK_EQ_INT(comm_rank(TERN_COMM_SELF), 0);
    CHECK_EQ_INT(comm_size(TERN_COMM_SELF), 1);
    CHECK_OK(tern_comm_world_rank(TERN_COMM_SELF, 0, &x));
    CHECK_EQ_INT(x, me);
    for (int i = 0; i < np; i++) {
        CHECK_OK(tern_comm_world_rank(W, i, &x));
        CHECK_EQ_INT(x, i);
    }
    barrier_check(W, np - 1, "world");
    barrier_check(TERN_COMM_SELF, 0, "self");

    /* dup */
    MP_WHERE("dup");
    tern_comm_t dup = TERN_COMM_NULL;
    CHECK_OK(tern_comm_dup(W, &dup));
    CHECK(dup != TERN_COMM_NULL && dup != W);
    CHECK_EQ_INT(comm_rank(dup), me);
    CHECK_EQ_INT(comm_size(dup), np);
    for (int i = 0; i < np; i++) {
        CHECK_OK(tern_comm_world_rank(dup, i, &x));
        CHECK_EQ_INT(x, i);
    }
    isolation(W, dup, "world vs its dup");
    isolation(dup, W, "a dup vs the world");
    barrier_check(dup, 0, "dup");

    /* split by parity, keys reversed */
    MP_WHERE("split");
    int color = me % 2;
    tern_comm_t half = TERN_COMM_NULL;
    CHECK_OK(tern_comm_split(W, color, -me, &half));
    CHECK(half != TERN_COMM_NULL);
    int members = (np - color + 1) / 2; /* world ranks color, color+2, ... */
    CHECK_EQ_INT(comm_size(half), members);
    /* Reversed: the highest world rank of the colour is rank 0. */
    int pos = me / 2;
    CHECK_EQ_INT(comm_rank(half), members - 1 - pos);
    for (int i = 0; i < members; i++) {
        CHECK_OK(tern_comm_world_rank(half, i, &x));
        CHECKF(x == color + 2 * (members - 1 - i),
               "split (colour %d): rank %d translates to world %d, expected %d", color, i, x,
               color + 2 * (members - 1 - i));
    }
    x = 12345;
    CHECK_ERR(tern_comm_world_rank(half, members, &x), TERN_ERR_RANK);
    CHECK_EQ_INT(x, 12345);

    /* Concurrent traffic on both halves and on the world, same tags. */
    ring(half, color ? "odd half" : "even half", 10 + color);
    ring(W, "world", 1);
    ring(dup, "dup", 2);
    barrier_check(half, members - 1, color ? "odd half" : "even half");
    mixed(half, "half");

    /* Split of the split: every member its own colour -> size 1. */
    MP_WHERE("split of a split");
    tern_comm_t single = TERN_COMM_NULL;
    CHECK_OK(tern_comm_split(half, comm_rank(half), 0, &single));
    CHECK_EQ_INT(comm_size(single), 1);
    CHECK_EQ_INT(comm_rank(single), 0);
    CHECK_OK(tern_comm_world_rank(single, 0, &x));
    CHECK_EQ_INT(x, me);
    ring(single, "single", 3);

    /* Equal keys: order by rank in the parent. TERN_UNDEFINED for world rank 1. */
    MP_WHERE("split with equal keys and TERN_UNDEFINED");
    tern_comm_t some = (tern_comm_t)(uintptr_t)0x777;
    CHECK_OK(tern_comm_split(dup, me == 1 ? TERN_UNDEFINED : 7, 0, &some));
    if (me == 1) {
        CHECK(some == TERN_COMM_NULL);
    } else {
        CHECK(some != TERN_COMM_NULL);
        int n = np > 1 ? np - 1 : 1;
        CHECK_EQ_INT(comm_size(some), n);
        CHECK_EQ_INT(comm_rank(some), me == 0 ? 0 : me - 1);
        for (int i = 0; i < n; i++) {
            CHECK_OK(tern_comm_world_rank(some, i, &x));
            CHECK_EQ_INT(x, i == 0 ? 0 : i + 1);
        }
        ring(some, "split without rank 1", 4);
        tern_comm_t some2 = TERN_COMM_NULL;
        CHECK_OK(tern_comm_dup(some, &some2));
        isolation(some, some2, "a split vs its dup");
        isolation(some2, some, "a dup of a split vs the split");
        CHECK_OK(tern_comm_free(&some2));
        barrier_check(some, comm_size(some) - 1, "split without rank 1");
    }
    CHECK_OK(tern_barrier(W));

    /* Free: handle set to NULL, old handle refused. */
    MP_WHERE("free");
    tern_comm_t stale = half;
    CHECK_OK(tern_comm_free(&half));
    CHECK(half == TERN_COMM_NULL);
    x = 4242;
    CHECK_ERR(tern_comm_rank(stale, &x), TERN_ERR_COMM);
    CHECK_ERR(tern_send(&x, sizeof x, 0, 1, stale), TERN_ERR_COMM);
    CHECK_ERR(tern_barrier(stale), TERN_ERR_COMM);
    CHECK_EQ_INT(x, 4242);
    CHECK_OK(tern_comm_free(&single));
    CHECK(single == TERN_COMM_NULL);
    if (some != TERN_COMM_NULL) CHECK_OK(tern_comm_free(&some));

    /* Many dup/free cycles (context ids must be recycled or plentiful), each working. */
    for (int i = 0; i < 64; i++) {
        MP_WHERE("dup/free cycle %d", i);
        tern_comm_t c = TERN_COMM_NULL;
        CHECK_OK(tern_comm_dup(i % 2 ? dup : W, &c));
        if (i % 16 == 0) {
            ring(c, "cycled dup", 100 + i);
            isolation(c, dup, "cycled dup vs dup");
        }
        CHECK_OK(tern_comm_free(&c));
        CHECK(c == TERN_COMM_NULL);
    }
    /* The parent of freed communicators still works. */
    ring(dup, "dup after the cycles", 5);
    barrier_check(dup, np / 2, "dup at the end");
    CHECK_OK(tern_comm_free(&dup));
    ring(W, "world at the end", 6);

    MP_WHERE("finalize");
    CHECK_OK(tern_finalize());
    if (me == 0) printf("comm: %d ranks ok\n", np);
    return 0;
}

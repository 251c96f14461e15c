/*
 * conv_die.c - a conversation member process dies while the others send and receive on
 * conversations (tern.h, "Conversations", failure). Run with 4 ranks and
 * TERN_CONV_MAX_QUEUED_BYTES=8k; rank 3 is the victim, MP_FAIL_HOW=kill (SIGKILL,
 * default) or exit (exit code 3 without tern_finalize). The survivors call
 * tern_tolerate_failures. Three conversations, their names chosen so that:
 *
 *   "A"  is homed at a survivor; the victim sends 5 messages on it and dies, rank 2 is
 *        its FCFS receiver: it gets all 5 (checked), then its next receive, waiting when
 *        the sender died, fails with TERN_ERR_PEER_FAILED; the conversation goes on
 *        (rank 2 then sends on it and receives its own messages).
 *   "B"  is homed at the victim: rank 0 is blocked in tern_conv_send (the home sleeps and
 *        does not answer) and rank 1 in tern_conv_recv on it; both end with
 *        TERN_ERR_PEER_FAILED; afterwards every operation on B fails at once with
 *        TERN_ERR_PEER_FAILED, tern_conv_close releases the handle, and opening B again
 *        fails with TERN_ERR_PEER_FAILED.
 *   "C"  is homed at a survivor: rank 0 sends 40 x 1000 bytes; the victim is a broadcast
 *        receiver that never reads, so with the 8k bound rank 0 blocks, until the death
 *        removes the victim and its unread bytes; rank 1, also a broadcast receiver,
 *        reads all 40 in order (checked byte for byte).
 *
 * Each survivor's blocked wait must end within a bound (the victim dies ~0.3 s in;
 * generous for a loaded machine). Nothing may hang: ternrun's --timeout would fail it.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <unistd.h>

#include "conv_common.h"

#define VICTIM     3
#define NC         40
#define CLEN       1000
#define NA         5
#define DETECT_MAX 2.5

/* FNV-1a % size, as the library homes names (docs/ARCHITECTURE.md, "Conversations"). */
static int home_of(const char *name, int size)
{
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 16777619u;
    }
    return (int)(h % (uint32_t)size);
}

/* The first name "die.<tag>.<k>" homed at (want_victim ? the victim : a survivor). */
static void pick(char *name, size_t cap, const char *tag, int want_victim, int size)
{
    for (int k = 0;; k++) {
        snprintf(name, cap, "die.%s.%d", tag, k);
        if ((home_of(name, size) == VICTIM) == want_victim) return;
    }
}

static void victim_die(const char *how)
{
    if (strcmp(how, "exit") == 0) _exit(3);
    raise(SIGKILL);
}

static double waited_since(double t0, int me, const char *what)
{
    double w = tern_wtime() - t0;
    printf("rank %d: %s ended after %.3f s (victim died ~0.3 s in)\n", me, what, w);
    CHECKF(w < DETECT_MAX, "%s took %.3f s to end on rank %d", what, w, me);
    return w;
}

int main(int argc, char **argv)
{
    const char *how = getenv("MP_FAIL_HOW") ? getenv("MP_FAIL_HOW") : "kill";
    mp_init(&argc, &argv);
    int me = tern_rank(), size = tern_size();
    CHECKF(size == 4, "needs 4 ranks, got %d", size);
    CHECK_OK(tern_tolerate_failures());
    char A[32], B[32], C[32];
    pick(A, sizeof A, "A", 0, size);
    pick(B, sizeof B, "B", 1, size);
    pick(C, sizeof C, "C", 0, size);

    tern_conv_t as = TERN_CONV_NULL, ar = TERN_CONV_NULL, bs = TERN_CONV_NULL, br = TERN_CONV_NULL,
                cs = TERN_CONV_NULL, cr = TERN_CONV_NULL;
    MP_WHERE("open");
    if (me == VICTIM) {
        CHECK_OK(tern_conv_open_send(A, &as));
        CHECK_OK(tern_conv_open_recv(C, TERN_BROADCAST, &cr));
    }
    if (me == 0) {
        CHECK_OK(tern_conv_open_send(B, &bs));
        CHECK_OK(tern_conv_open_send(C, &cs));
    }
    if (me == 1) {
        CHECK_OK(tern_conv_open_recv(B, TERN_FCFS, &br));
        CHECK_OK(tern_conv_open_recv(C, TERN_BROADCAST, &cr));
    }
    if (me == 2) CHECK_OK(tern_conv_open_recv(A, TERN_FCFS, &ar));
    /* The survivors' own communicator, made while everyone is alive. */
    tern_comm_t alive;
    CHECK_OK(tern_comm_split(TERN_COMM_WORLD, me == VICTIM ? TERN_UNDEFINED : 0, me, &alive));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    if (me == VICTIM) {
        for (int i = 0; i < NA; i++)
            conv_t_send(as, VICTIM, i, CONV_T_DATA);
        /* B's home sleeps instead of serving, so rank 0's send to B waits; then it dies
         * without closing anything. */
        usleep(300 * 1000);
        victim_die(how);
    }

    double t0 = tern_wtime();
    if (me == 0) {
        /* C first: blocks on the victim's unread bytes until it dies. */
        MP_WHERE("C send");
        unsigned char buf[CLEN];
        for (int i = 0; i < NC; i++) {
            conv_t_fill(buf, 0, i, 2, CLEN);
            CHECK_OK(tern_conv_send(cs, buf, CLEN));
        }
        waited_since(t0, me, "sending 40 x 1000 B on C");
        /* B's home is dead: the send fails, at once now. */
        MP_WHERE("B send");
        char one = 1;
        CHECK_ERR(tern_conv_send(bs, &one, 1), TERN_ERR_PEER_FAILED);
        CHECK_ERR(tern_conv_trysend(bs, &one, 1), TERN_ERR_PEER_FAILED);
        CHECK_OK(tern_conv_close(&bs));
        CHECK(bs == TERN_CONV_NULL);
        CHECK_OK(tern_conv_close(&cs));
    }
    if (me == 1) {
        MP_WHERE("B recv");
        char buf[16];
        CHECK_ERR(tern_conv_recv(br, buf, sizeof buf, NULL), TERN_ERR_PEER_FAILED);
        waited_since(t0, me, "a receive on B (homed at the victim)");
        tern_request_t rq;
        CHECK_ERR(tern_conv_irecv(br, buf, sizeof buf, &rq), TERN_ERR_PEER_FAILED);
        int flag = 7;
        CHECK_ERR(tern_conv_check(br, &flag), TERN_ERR_PEER_FAILED);
        CHECK_OK(tern_conv_close(&br));
        MP_WHERE("C recv");
        for (int i = 0; i < NC; i++) {
            unsigned char in[CLEN + 8];
            size_t len = 0;
            CHECK_OK(tern_conv_recv(cr, in, sizeof in, &len));
            CHECK_EQ_SIZE(len, (size_t)CLEN);
            struct conv_msg_hdr h = conv_t_check(in, len);
            CHECKF(h.sender == 0 && h.seq == i, "C: got %d/%d, expected 0/%d", h.sender, h.seq, i);
        }
        CHECK_OK(tern_conv_close(&cr));
    }
    if (me == 2) {
        MP_WHERE("A recv");
        unsigned char *in = mp_malloc(CONV_T_CAP);
        for (int i = 0; i < NA; i++) {
            size_t len = 0;
            CHECK_OK(tern_conv_recv(ar, in, CONV_T_CAP, &len));
            struct conv_msg_hdr h = conv_t_check(in, len);
            CHECKF(h.sender == VICTIM && h.seq == i, "A: got %d/%d, expected %d/%d", h.sender,
                   h.seq, VICTIM, i);
        }
        CHECK_ERR(tern_conv_recv(ar, in, CONV_T_CAP, NULL), TERN_ERR_PEER_FAILED);
        waited_since(t0, me, "a receive on A (its sender died)");
        /* A goes on: a new sender, and receives wait normally again. */
        CHECK_OK(tern_conv_open_send(A, &as));
        for (int i = 0; i < 3; i++)
            conv_t_send(as, 2, i, CONV_T_DATA);
        for (int i = 0; i < 3; i++) {
            size_t len = 0;
            CHECK_OK(tern_conv_recv(ar, in, CONV_T_CAP, &len));
            struct conv_msg_hdr h = conv_t_check(in, len);
            CHECKF(h.sender == 2 && h.seq == i, "A after: got %d/%d", h.sender, h.seq);
        }
        CHECK_OK(tern_conv_close(&as));
        CHECK_OK(tern_conv_close(&ar));
        free(in);
    }

    /* Everyone: a conversation homed at the dead rank cannot be opened; one homed at a
     * survivor can, and carries checked data among survivors. */
    MP_WHERE("after");
    tern_conv_t x = TERN_CONV_NULL;
    CHECK_ERR(tern_conv_open_send(B, &x), TERN_ERR_PEER_FAILED);
    CHECK(x == TERN_CONV_NULL);
    char D[32];
    pick(D, sizeof D, "D", 0, size);
    tern_conv_t ds, dr;
    CHECK_OK(tern_conv_open_recv(D, TERN_FCFS, &dr));
    CHECK_OK(tern_conv_open_send(D, &ds));
    conv_t_send(ds, me, 0, CONV_T_DATA);
    unsigned char *in = mp_malloc(CONV_T_CAP);
    size_t len = 0;
    CHECK_OK(tern_conv_recv(dr, in, CONV_T_CAP, &len));
    (void)conv_t_check(in, len);
    free(in);
    CHECK_OK(tern_barrier(alive)); /* homes keep serving until everyone has its message */
    CHECK_OK(tern_conv_close(&ds));
    CHECK_OK(tern_conv_close(&dr));
    CHECK_OK(tern_barrier(alive));
    CHECK_OK(tern_comm_free(&alive));
    int rc = tern_finalize();
    CHECKF(rc == TERN_OK || rc == TERN_ERR_PEER_FAILED, "tern_finalize returned %s",
           tern_err_name(rc));
    printf("mp-done rank %d\n", me);
    return 0;
}

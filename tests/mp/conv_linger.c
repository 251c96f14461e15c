/*
 * conv_linger.c - lifetime of a conversation. Without linger, messages sent before any
 * receiver joined are discarded when the sender (the last member) closes; with linger
 * they wait for the first FCFS receiver, in order. A broadcast receiver sees only
 * messages sent after it joined; messages sent while it is the only receiver are not
 * kept for later FCFS receivers.
 */
#include "conv_common.h"

static void expect_empty(tern_conv_t r)
{
    int flag = 1;
    CHECK_OK(tern_conv_check(r, &flag));
    CHECK_EQ_INT(flag, 0);
}

static void expect_seq(tern_conv_t r, int sender, int seq)
{
    static unsigned char buf[CONV_T_CAP];
    size_t len = 0;
    int flag = 0;
    if (seq % 2) /* check says yes (once the message is there), then the receive */
        while (!flag)
            CHECK_OK(tern_conv_check(r, &flag));
    CHECK_OK(tern_conv_recv(r, buf, sizeof buf, &len));
    struct conv_msg_hdr h = conv_t_check(buf, len);
    CHECK_EQ_INT(h.sender, sender);
    CHECK_EQ_INT(h.seq, seq);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int rank = tern_rank(), size = tern_size();
    int snd = 0, rcv = size - 1;
    tern_conv_t s, r, b;

    /* 1. No linger: the last close discards. */
    MP_WHERE("discard");
    if (rank == snd) {
        CHECK_OK(tern_conv_open_send("life.discard", &s));
        for (int i = 0; i < 5; i++)
            conv_t_send(s, snd, i % 3, CONV_T_DATA);
        CHECK_OK(tern_conv_close(&s));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == rcv) {
        CHECK_OK(tern_conv_open_recv("life.discard", TERN_FCFS, &r));
        expect_empty(r);
        CHECK_OK(tern_conv_close(&r));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    /* 2. Linger: the messages wait for a receiver. */
    MP_WHERE("linger");
    if (rank == snd) {
        CHECK_OK(tern_conv_open_send("life.linger", &s));
        CHECK_OK(tern_conv_linger(s, 1));
        for (int i = 0; i < 5; i++)
            conv_t_send(s, snd, i, CONV_T_DATA);
        CHECK_OK(tern_conv_close(&s));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == rcv) {
        CHECK_OK(tern_conv_open_recv("life.linger", TERN_FCFS, &r));
        for (int i = 0; i < 5; i++)
            expect_seq(r, snd, i);
        expect_empty(r);
        CHECK_OK(tern_conv_close(&r)); /* now empty and memberless: it ends */
        CHECK_OK(tern_conv_open_recv("life.linger", TERN_FCFS, &r));
        expect_empty(r);
        CHECK_OK(tern_conv_close(&r));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    /* 3. Linger undone before the close: discarded again. */
    MP_WHERE("linger undone");
    if (rank == snd) {
        CHECK_OK(tern_conv_open_send("life.undo", &s));
        CHECK_OK(tern_conv_linger(s, 1));
        CHECK_OK(tern_conv_linger(s, 0));
        conv_t_send(s, snd, 0, CONV_T_DATA);
        CHECK_OK(tern_conv_close(&s));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == rcv) {
        CHECK_OK(tern_conv_open_recv("life.undo", TERN_FCFS, &r));
        expect_empty(r);
        CHECK_OK(tern_conv_close(&r));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    /* 4. Broadcast sees only later messages; early ones wait for FCFS; messages sent while
     * only a broadcast receiver is there do not. */
    MP_WHERE("broadcast join");
    if (rank == snd) {
        CHECK_OK(tern_conv_open_send("life.bc", &s));
        for (int i = 0; i < 3; i++)
            conv_t_send(s, snd, i, CONV_T_DATA);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == rcv) CHECK_OK(tern_conv_open_recv("life.bc", TERN_BROADCAST, &b));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == snd)
        for (int i = 3; i < 5; i++)
            conv_t_send(s, snd, i, CONV_T_DATA);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == rcv) {
        expect_seq(b, snd, 3);
        expect_seq(b, snd, 4);
        expect_empty(b);
    }
    int frank = size > 2 ? 1 : rcv == snd ? -1 : snd; /* an FCFS receiver somewhere */
    if (frank < 0) { /* one rank: it cannot be both; a second process is not there */
        CHECK_OK(tern_conv_close(&b));
        CHECK_OK(tern_conv_open_recv("life.bc", TERN_FCFS, &r));
        for (int i = 0; i < 3; i++)
            expect_seq(r, snd, i);
        expect_empty(r);
        CHECK_OK(tern_conv_close(&r));
    } else {
        if (rank == frank) {
            CHECK_OK(tern_conv_open_recv("life.bc", TERN_FCFS, &r));
            for (int i = 0; i < 3; i++)
                expect_seq(r, snd, i);
            expect_empty(r);
            CHECK_OK(tern_conv_close(&r));
        }
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));
        if (rank == rcv) CHECK_OK(tern_conv_close(&b));
    }
    if (rank == snd) CHECK_OK(tern_conv_close(&s));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == 0) printf("conv_linger: %d ranks ok\n", size);
    CHECK_OK(tern_finalize());
    return 0;
}

/*
 * conv_bcast.c - BROADCAST conversations with members joining and leaving during
 * traffic. Rank 0 sends a stream and receives it too (joined before the first message,
 * so it must see every message, in order). Every other rank joins at its own moment,
 * reads a while, leaves, joins again and reads to the end: each stint must be a gap-free,
 * in-order run of the stream (a broadcast member sees every message sent after it
 * joined), checked byte for byte. Rank 0 keeps sending until everyone has rejoined.
 */
#include "conv_common.h"

/* Read one message on r and check it is seq `want` (or, with want < 0, any data). */
static struct conv_msg_hdr bc_read(tern_conv_t r, unsigned char *buf, int want)
{
    size_t len = 0;
    CHECK_OK(tern_conv_recv(r, buf, CONV_T_CAP, &len));
    struct conv_msg_hdr h = conv_t_check(buf, len);
    CHECK_EQ_INT(h.sender, 0);
    if (want >= 0) CHECKF(h.seq == want, "got seq %d, expected %d (gap or reorder)", h.seq, want);
    return h;
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int rank = tern_rank(), size = tern_size();
    int M = mp_env_int("CONV_M", 200);
    unsigned char *buf = mp_malloc(CONV_T_CAP);
    tern_conv_t ctl, r, s;
    if (rank == 0) {
        CHECK_OK(tern_conv_open_recv("bc.ctl", TERN_FCFS, &ctl));
        CHECK_OK(tern_conv_open_recv("bc", TERN_BROADCAST, &r));
        CHECK_OK(tern_conv_open_send("bc", &s));
    } else {
        CHECK_OK(tern_conv_open_send("bc.ctl", &ctl));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    if (rank == 0) {
        int seq = 0, joined = 0;
        int32_t note;
        tern_request_t rq = TERN_REQUEST_NULL;
        if (size > 1) CHECK_OK(tern_conv_irecv(ctl, &note, sizeof note, &rq));
        while (seq < M || joined < size - 1) {
            MP_WHERE("sending seq %d, %d rejoined", seq, joined);
            conv_t_send(s, 0, seq, CONV_T_DATA);
            bc_read(r, buf, seq);
            seq++;
            int flag = 1;
            while (joined < size - 1 && flag) {
                CHECK_OK(tern_test(&rq, &flag, NULL));
                if (flag && ++joined < size - 1)
                    CHECK_OK(tern_conv_irecv(ctl, &note, sizeof note, &rq));
            }
        }
        conv_t_send(s, 0, seq, CONV_T_STOP);
        struct conv_msg_hdr h = bc_read(r, buf, seq);
        CHECK_EQ_INT(h.kind, CONV_T_STOP);
        printf("conv_bcast: %d ranks, %d messages, ok\n", size, seq + 1);
        CHECK_OK(tern_conv_close(&s));
        CHECK_OK(tern_conv_close(&r));
    } else {
        mp_sleep_ms(2 * rank);
        for (int stint = 0; stint < 2; stint++) {
            MP_WHERE("stint %d", stint);
            CHECK_OK(tern_conv_open_recv("bc", TERN_BROADCAST, &r));
            if (stint == 1) {
                int32_t note = rank;
                CHECK_OK(tern_conv_send(ctl, &note, sizeof note));
            }
            struct conv_msg_hdr h = bc_read(r, buf, -1);
            int n = 1, last = h.seq;
            while (h.kind != CONV_T_STOP && (stint == 1 || n < 10 + rank)) {
                h = bc_read(r, buf, last + 1);
                last = h.seq;
                n++;
            }
            CHECK_EQ_INT(h.kind == CONV_T_STOP, stint == 1);
            /* Leave with messages possibly still on their way: they are discarded. */
            CHECK_OK(tern_conv_close(&r));
            if (stint == 0) mp_sleep_ms(1);
        }
    }
    CHECK_OK(tern_conv_close(&ctl));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    free(buf);
    CHECK_OK(tern_finalize());
    return 0;
}

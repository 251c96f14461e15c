/*
 * conv_bound.c - the queue bound (run with TERN_CONV_MAX_QUEUED_BYTES=4k). With nobody
 * reading, tern_conv_trysend of 1000-byte messages (1064 bytes each against the bound)
 * is accepted 3 times, then TERN_ERR_AGAIN; once a receiver reads, room appears, and a
 * blocking tern_conv_send waits for it instead of failing. Both for the FCFS queue and
 * for a broadcast receiver that does not read. Nothing may be lost or reordered.
 */
#include "conv_common.h"

#define LEN 1000

static int fill_until_again(tern_conv_t s, int from)
{
    unsigned char buf[LEN];
    int n = from;
    for (;; n++) {
        CHECKF(n < from + 100, "trysend never returned TERN_ERR_AGAIN");
        conv_t_fill(buf, 0, n, 2, LEN);
        int rc = tern_conv_trysend(s, buf, LEN);
        if (rc == TERN_ERR_AGAIN) break;
        CHECK_OK(rc);
    }
    return n - from;
}

static void send_seq(tern_conv_t s, int seq)
{
    unsigned char buf[LEN];
    conv_t_fill(buf, 0, seq, 2, LEN);
    CHECK_OK(tern_conv_send(s, buf, LEN));
}

static void recv_seq(tern_conv_t r, int seq)
{
    unsigned char buf[LEN + 8];
    size_t len = 0;
    CHECK_OK(tern_conv_recv(r, buf, sizeof buf, &len));
    struct conv_msg_hdr h = conv_t_check(buf, len);
    CHECKF(h.seq == seq, "got seq %d, expected %d", h.seq, seq);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int rank = tern_rank(), size = tern_size();
    int snd = 0, rcv = size - 1;
    const char *bound = getenv("TERN_CONV_MAX_QUEUED_BYTES");
    int expect = bound && strcmp(bound, "4k") == 0 ? 3 : -1;
    tern_conv_t s = TERN_CONV_NULL, r = TERN_CONV_NULL;

    /* FCFS queue. */
    MP_WHERE("fcfs");
    if (rank == snd) CHECK_OK(tern_conv_open_send("bound.f", &s));
    if (rank == rcv) CHECK_OK(tern_conv_open_recv("bound.f", TERN_FCFS, &r));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    int n = 0;
    if (rank == snd) {
        n = fill_until_again(s, 0);
        if (expect > 0) CHECK_EQ_INT(n, expect);
    }
    CHECK_OK(tern_bcast(&n, sizeof n, snd, TERN_COMM_WORLD));
    if (size == 1) {
        /* One process: a posted receive takes one message and makes room. */
        tern_request_t rq;
        unsigned char buf[LEN];
        CHECK_OK(tern_conv_irecv(r, buf, sizeof buf, &rq));
        CHECK_OK(tern_wait(&rq, NULL));
        send_seq(s, n);
        for (int i = 1; i <= n; i++)
            recv_seq(r, i);
    } else {
        if (rank == snd) /* blocks while the queue is full, until the reader makes room */
            for (int i = n; i < n + 10; i++)
                send_seq(s, i);
        if (rank == rcv)
            for (int i = 0; i < n + 10; i++) {
                mp_sleep_ms(1);
                recv_seq(r, i);
            }
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (s) CHECK_OK(tern_conv_close(&s));
    if (r) CHECK_OK(tern_conv_close(&r));

    /* A broadcast receiver that does not read holds the bound too. */
    MP_WHERE("broadcast");
    if (rank == snd) CHECK_OK(tern_conv_open_send("bound.b", &s));
    if (rank == rcv) CHECK_OK(tern_conv_open_recv("bound.b", TERN_BROADCAST, &r));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == snd) {
        n = fill_until_again(s, 0);
        if (expect > 0) CHECK_EQ_INT(n, expect);
    }
    CHECK_OK(tern_bcast(&n, sizeof n, snd, TERN_COMM_WORLD));
    if (size == 1) {
        for (int i = 0; i < n; i++)
            recv_seq(r, i);
        send_seq(s, n);
        recv_seq(r, n);
    } else {
        if (rank == snd)
            for (int i = n; i < n + 10; i++)
                send_seq(s, i);
        if (rank == rcv)
            for (int i = 0; i < n + 10; i++) {
                mp_sleep_ms(1);
                recv_seq(r, i);
            }
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (s) CHECK_OK(tern_conv_close(&s));
    if (r) CHECK_OK(tern_conv_close(&r));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == 0) printf("conv_bound: %d ranks ok (%d messages fit)\n", size, n);
    CHECK_OK(tern_finalize());
    return 0;
}

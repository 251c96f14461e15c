/*
 * conv_fcfs.c - FCFS conversations with several senders and receivers: every rank sends
 * M messages and every rank receives. Each message must arrive exactly once (counted
 * over the whole job), byte for byte, and each receiver must see every sender's messages
 * in increasing order (the order-preserving sub-stream).
 *
 * Termination: once every rank has sent all and flushed (tern_conv_flush: its messages
 * have then reached the home, in order; a send alone may return while its message is on
 * its way) an ibarrier completes; rank 0 then sends one STOP per rank. STOPs are queued
 * behind every data message, so all data has been handed out before anyone stops.
 */
#include "conv_common.h"

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int rank = tern_rank(), size = tern_size();
    int M = mp_env_int("CONV_M", 300);
    tern_conv_t s, r;
    CHECK_OK(tern_conv_open_recv("fcfs.test", TERN_FCFS, &r));
    CHECK_OK(tern_conv_open_send("fcfs.test", &s));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    int *count = calloc((size_t)size * (size_t)M, sizeof(int));
    int *last = malloc((size_t)size * sizeof(int));
    CHECK(count && last);
    for (int i = 0; i < size; i++)
        last[i] = -1;
    unsigned char *buf = mp_malloc(CONV_T_CAP);

    tern_request_t rq = TERN_REQUEST_NULL, bar = TERN_REQUEST_NULL;
    int stopped = 0, bar_done = 0, sent = 0, got = 0, again = 0, stops = 0;
    while (!stopped || !bar_done || stops < (rank == 0 ? size : 0)) {
        /* Interleave sending with receiving; trysend, because a sender blocked on a full
         * queue would not post the receive that empties it. */
        if (sent < M) {
            MP_WHERE("sending seq %d", sent);
            if (conv_t_trysend(s, rank, sent, CONV_T_DATA) == TERN_ERR_AGAIN)
                again++;
            else if (++sent == M) {
                CHECK_OK(tern_conv_flush(s));
                CHECK_OK(tern_ibarrier(TERN_COMM_WORLD, &bar));
            }
        }
        if (bar_done && stops < (rank == 0 ? size : 0) &&
            conv_t_trysend(s, 0, M + stops, CONV_T_STOP) == TERN_OK)
            stops++;
        if (!stopped) {
            if (rq == TERN_REQUEST_NULL) CHECK_OK(tern_conv_irecv(r, buf, CONV_T_CAP, &rq));
            int flag = 0;
            tern_status_t st;
            CHECK_OK(tern_test(&rq, &flag, &st));
            if (flag) {
                struct conv_msg_hdr h = conv_t_check(buf, st.bytes);
                CHECK_EQ_INT(st.source, h.sender);
                CHECK_EQ_INT(st.tag, 0);
                if (h.kind == CONV_T_STOP) {
                    stopped = 1;
                } else {
                    CHECKF(h.sender >= 0 && h.sender < size && h.seq >= 0 && h.seq < M,
                           "bad header sender %d seq %d", h.sender, h.seq);
                    CHECKF(h.seq > last[h.sender], "from %d: seq %d after seq %d (order broken)",
                           h.sender, h.seq, last[h.sender]);
                    last[h.sender] = h.seq;
                    count[h.sender * M + h.seq]++;
                    got++;
                }
            }
        }
        if (sent == M && !bar_done) {
            int flag = 0;
            CHECK_OK(tern_test(&bar, &flag, NULL));
            if (flag) bar_done = 1;
        }
    }
    MP_WHERE("counting");
    int *total = calloc((size_t)size * (size_t)M, sizeof(int));
    CHECK(total);
    CHECK_OK(tern_allreduce(count, total, (size_t)size * (size_t)M, TERN_INT32, TERN_SUM,
                            TERN_COMM_WORLD));
    for (int i = 0; i < size * M; i++)
        CHECKF(total[i] == 1, "message from %d seq %d delivered %d times", i / M, i % M, total[i]);
    int flag = 1;
    CHECK_OK(tern_conv_check(r, &flag));
    CHECK_EQ_INT(flag, 0);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_conv_close(&s));
    CHECK(s == TERN_CONV_NULL);
    CHECK_OK(tern_conv_close(&r));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == 0)
        printf("conv_fcfs: %d ranks, %d messages each, ok (rank 0 got %d, %d trysend AGAIN)\n",
               size, M, got, again);
    free(total);
    free(count);
    free(last);
    free(buf);
    CHECK_OK(tern_finalize());
    return 0;
}

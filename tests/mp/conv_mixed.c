/*
 * conv_mixed.c - FCFS and BROADCAST receivers on one conversation. Rank 0 sends M
 * messages, then one STOP per FCFS receiver. Even ranks (rank 0 too) are broadcast
 * receivers: each must see all M messages and every STOP, in send order. Odd ranks are
 * FCFS receivers: together they must get each message exactly once, each in order.
 * With no FCFS receiver (one rank), messages go to the broadcast receivers only.
 */
#include "conv_common.h"

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int rank = tern_rank(), size = tern_size();
    int M = mp_env_int("CONV_M", 200);
    int nf = size / 2; /* odd ranks */
    unsigned char *buf = mp_malloc(CONV_T_CAP);
    tern_conv_t r, s = TERN_CONV_NULL;
    int fcfs = rank % 2;
    CHECK_OK(tern_conv_open_recv("mixed", fcfs ? TERN_FCFS : TERN_BROADCAST, &r));
    if (rank == 0) CHECK_OK(tern_conv_open_send("mixed", &s));
    /* The other mode on the same conversation from the same process is refused. */
    tern_conv_t other = TERN_CONV_NULL;
    CHECK_ERR(tern_conv_open_recv("mixed", fcfs ? TERN_BROADCAST : TERN_FCFS, &other),
              TERN_ERR_INVAL);
    CHECK(other == TERN_CONV_NULL);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));

    int *count = calloc((size_t)M, sizeof(int));
    CHECK(count);
    if (rank == 0) {
        for (int i = 0; i < M; i++) {
            MP_WHERE("sending seq %d", i);
            conv_t_send(s, 0, i, CONV_T_DATA);
        }
        for (int i = 0; i < nf; i++)
            conv_t_send(s, 0, M + i, CONV_T_STOP);
    }
    size_t len;
    if (!fcfs) {
        for (int i = 0; i < M + nf; i++) {
            MP_WHERE("broadcast receive %d", i);
            CHECK_OK(tern_conv_recv(r, buf, CONV_T_CAP, &len));
            struct conv_msg_hdr h = conv_t_check(buf, len);
            CHECK_EQ_INT(h.seq, i);
            CHECK_EQ_INT(h.kind, i < M ? CONV_T_DATA : CONV_T_STOP);
        }
    } else {
        int last = -1;
        for (;;) {
            MP_WHERE("FCFS receive after seq %d", last);
            CHECK_OK(tern_conv_recv(r, buf, CONV_T_CAP, &len));
            struct conv_msg_hdr h = conv_t_check(buf, len);
            if (h.kind == CONV_T_STOP) break;
            CHECKF(h.seq > last && h.seq < M, "seq %d after %d", h.seq, last);
            last = h.seq;
            count[h.seq]++;
        }
    }
    MP_WHERE("counting");
    int *total = calloc((size_t)M, sizeof(int));
    CHECK(total);
    CHECK_OK(tern_allreduce(count, total, (size_t)M, TERN_INT32, TERN_SUM, TERN_COMM_WORLD));
    for (int i = 0; i < M; i++)
        CHECKF(total[i] == (nf ? 1 : 0), "seq %d went to %d FCFS receivers", i, total[i]);
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (s) CHECK_OK(tern_conv_close(&s));
    CHECK_OK(tern_conv_close(&r));
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == 0) printf("conv_mixed: %d ranks, %d FCFS receivers, ok\n", size, nf);
    free(total);
    free(count);
    free(buf);
    CHECK_OK(tern_finalize());
    return 0;
}

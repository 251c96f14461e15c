/*
 * conv_join.c - a broadcast receiver sees only messages sent after it joined, even when
 * sends return before their messages reach the home (credit, TERN_CONV_CREDIT).
 *
 * Three ranks; the conversation's name is chosen so that its home is rank 2, which sleeps
 * (outside tern, so it serves nothing) while the sender S sends K messages - they return
 * at once, paid from credit, and wait in transit - and then tells R, over point-to-point,
 * that it has sent them. R then joins as a broadcast receiver; its OPEN and S's messages
 * reach the home from different processes, in no particular order. R tells S it has
 * joined, S sends one more message, and the first (and only) message R may get is that
 * one. Run once with S = 0, R = 1 and once the other way round, so that whichever peer
 * the home polls first, the join can arrive before the messages. Finally
 * tern_conv_flush: after it, an FCFS receiver's tern_conv_check sees every message.
 */
#include <unistd.h>

#include "conv_common.h"

#define K 20

/* Message seq of S, small (credit pays only for messages up to a quarter of it). */
static void send_small(tern_conv_t s, int sender, int seq)
{
    unsigned char buf[300];
    size_t len = sizeof(struct conv_msg_hdr) + (size_t)(seq * 7 % 200);
    conv_t_fill(buf, sender, seq, 2, len);
    CHECK_OK(tern_conv_send(s, buf, len));
}

static int home_of(const char *name, int size)
{
    uint32_t h = 2166136261u;
    for (const char *p = name; *p; p++) {
        h ^= (unsigned char)*p;
        h *= 16777619u;
    }
    return (int)(h % (uint32_t)size);
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int me = tern_rank(), size = tern_size();
    CHECKF(size == 3, "needs 3 ranks, got %d", size);
    unsigned char *buf = mp_malloc(CONV_T_CAP);

    for (int variant = 0; variant < 2; variant++) {
        int S = variant, R = 1 - variant, H = 2;
        char name[32];
        for (int k = 0;; k++) {
            snprintf(name, sizeof name, "join.%d.%d", variant, k);
            if (home_of(name, size) == H) break;
        }
        MP_WHERE("variant %d", variant);
        tern_conv_t s = TERN_CONV_NULL, r = TERN_CONV_NULL;
        if (me == S) {
            CHECK_OK(tern_conv_open_send(name, &s));
            send_small(s, S, 0); /* a first send: the answer lends credit */
        }
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));
        char tok = 0;
        if (me == H) usleep(300 * 1000);
        if (me == S) {
            double t0 = tern_wtime();
            for (int i = 1; i <= K; i++)
                send_small(s, S, i);
            double t = tern_wtime() - t0;
            /* The home sleeps: had the sends waited for it, this would take ~0.3 s. */
            printf("variant %d: %d sends returned in %.3f s while the home slept\n", variant, K, t);
            CHECKF(t < 0.2, "sends waited %.3f s for a sleeping home: no credit?", t);
            CHECK_OK(tern_send(&tok, 1, R, 1, TERN_COMM_WORLD));
            CHECK_OK(tern_recv(&tok, 1, R, 2, TERN_COMM_WORLD, NULL));
            send_small(s, S, K + 1);
        }
        if (me == R) {
            CHECK_OK(tern_recv(&tok, 1, S, 1, TERN_COMM_WORLD, NULL));
            CHECK_OK(tern_conv_open_recv(name, TERN_BROADCAST, &r));
            CHECK_OK(tern_send(&tok, 1, S, 2, TERN_COMM_WORLD));
            size_t len = 0;
            CHECK_OK(tern_conv_recv(r, buf, CONV_T_CAP, &len));
            struct conv_msg_hdr h = conv_t_check(buf, len);
            CHECKF(h.seq == K + 1, "the new broadcast receiver got seq %d, sent before it joined",
                   h.seq);
        }
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));
        if (me == R) {
            int flag = 1;
            CHECK_OK(tern_conv_check(r, &flag));
            CHECK_EQ_INT(flag, 0);
            CHECK_OK(tern_conv_close(&r));
        }
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));

        /* Flush: once it returns, the home holds every message; an FCFS receiver's
         * check sees them, and they come in order: 0 .. K, queued while nobody received,
         * then K+2 ..., not K+1, which only the broadcast receiver was there for. */
        MP_WHERE("variant %d flush", variant);
        if (me == H) usleep(100 * 1000);
        if (me == S) {
            for (int i = K + 2; i < K + 12; i++)
                conv_t_send(s, S, i, CONV_T_DATA); /* of every size */
            CHECK_OK(tern_conv_flush(s));
        }
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));
        if (me == R) {
            CHECK_OK(tern_conv_open_recv(name, TERN_FCFS, &r));
            int flag = 0;
            CHECK_OK(tern_conv_check(r, &flag));
            CHECK_EQ_INT(flag, 1);
            for (int i = 0; i < K + 12; i++) {
                if (i == K + 1) continue;
                size_t len = 0;
                CHECK_OK(tern_conv_recv(r, buf, CONV_T_CAP, &len));
                struct conv_msg_hdr h = conv_t_check(buf, len);
                CHECKF(h.seq == i, "FCFS got seq %d, expected %d", h.seq, i);
            }
            CHECK_OK(tern_conv_close(&r));
        }
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));
        if (me == S) {
            int rc = tern_conv_flush(TERN_CONV_NULL);
            CHECK_ERR(rc, TERN_ERR_INVAL);
            CHECK_OK(tern_conv_close(&s));
            CHECK_ERR(tern_conv_flush(s), TERN_ERR_INVAL);
        }
        CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    }
    free(buf);
    if (me == 0) printf("conv_join: ok\n");
    CHECK_OK(tern_finalize());
    return 0;
}

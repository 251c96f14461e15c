/*
 * conv_many.c - many conversations at once, spread over every home. Conversation i
 * (of N) is received (FCFS) by rank i % size; every rank opens a send handle on every
 * conversation and sends one message to each. Each receiver must get exactly one message
 * from every rank on each of its conversations, with the right contents.
 */
#include "conv_common.h"

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    int rank = tern_rank(), size = tern_size();
    int N = mp_env_int("CONV_N", 200);
    tern_conv_t *s = calloc((size_t)N, sizeof *s), *r = calloc((size_t)N, sizeof *r);
    CHECK(s && r);
    char name[64];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "many.%d", i);
        if (i % size == rank) CHECK_OK(tern_conv_open_recv(name, TERN_FCFS, &r[i]));
        CHECK_OK(tern_conv_open_send(name, &s[i]));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        uint64_t msg[3] = {(uint64_t)rank, (uint64_t)i, mp_seed((uint64_t)rank, (uint64_t)i, 5, 5)};
        CHECK_OK(tern_conv_send(s[i], msg, sizeof msg));
    }
    char *seen = calloc((size_t)size, 1);
    CHECK(seen);
    for (int i = rank; i < N; i += size) {
        memset(seen, 0, (size_t)size);
        for (int k = 0; k < size; k++) {
            MP_WHERE("conversation %d, message %d", i, k);
            uint64_t msg[3];
            size_t len;
            CHECK_OK(tern_conv_recv(r[i], msg, sizeof msg, &len));
            CHECK_EQ_SIZE(len, sizeof msg);
            CHECKF(msg[0] < (uint64_t)size && !seen[msg[0]], "sender %llu",
                   (unsigned long long)msg[0]);
            seen[msg[0]] = 1;
            CHECK_EQ_INT(msg[1], i);
            CHECK(msg[2] == mp_seed(msg[0], (uint64_t)i, 5, 5));
        }
        int flag = 1;
        CHECK_OK(tern_conv_check(r[i], &flag));
        CHECK_EQ_INT(flag, 0);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    for (int i = 0; i < N; i++) {
        CHECK_OK(tern_conv_close(&s[i]));
        if (r[i]) CHECK_OK(tern_conv_close(&r[i]));
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    if (rank == 0) printf("conv_many: %d conversations on %d ranks ok\n", N, size);
    free(seen);
    free(s);
    free(r);
    CHECK_OK(tern_finalize());
    return 0;
}

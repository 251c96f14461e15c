/*
 * conv_badinput.c - every conversation call's errors: before init, bad names and modes,
 * NULL outputs, wrong handle kinds, closed handles, truncation (full size reported),
 * close with a receive outstanding, and after finalize.
 */
#include "conv_common.h"

int main(int argc, char **argv)
{
    tern_conv_t c = TERN_CONV_NULL;
    int flag;
    size_t len;
    CHECK_ERR(tern_conv_open_send("x", &c), TERN_ERR_NOT_INIT);
    CHECK_ERR(tern_conv_open_recv("x", TERN_FCFS, &c), TERN_ERR_NOT_INIT);
    CHECK_ERR(tern_conv_send(c, "x", 1), TERN_ERR_NOT_INIT);
    CHECK_ERR(tern_conv_close(&c), TERN_ERR_NOT_INIT);
    mp_init(&argc, &argv);
    int rank = tern_rank();

    char name[TERN_CONV_NAME_MAX + 2];
    memset(name, 'n', sizeof name);
    name[TERN_CONV_NAME_MAX + 1] = 0;
    CHECK_ERR(tern_conv_open_send(NULL, &c), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_open_send("", &c), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_open_send(name, &c), TERN_ERR_INVAL); /* one byte too long */
    CHECK_ERR(tern_conv_open_send("x", NULL), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_open_recv("x", 0, &c), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_open_recv("x", TERN_FCFS | TERN_BROADCAST, &c), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_open_recv("x", 7, &c), TERN_ERR_INVAL);
    CHECK(c == TERN_CONV_NULL);
    CHECK_ERR(tern_conv_send(NULL, "x", 1), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_recv(NULL, name, 1, &len), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_check(NULL, &flag), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_close(NULL), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_close(&c), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_linger(NULL, 1), TERN_ERR_INVAL);

    /* A name of exactly the longest length works; names are private per rank here. */
    snprintf(name, sizeof name, "bad.%d.", rank);
    memset(name + strlen(name), 'z', TERN_CONV_NAME_MAX - strlen(name));
    name[TERN_CONV_NAME_MAX] = 0;
    tern_conv_t s, r;
    CHECK_OK(tern_conv_open_send(name, &s));
    CHECK_OK(tern_conv_open_recv(name, TERN_FCFS, &r));
    tern_conv_t other = TERN_CONV_NULL;
    CHECK_ERR(tern_conv_open_recv(name, TERN_BROADCAST, &other), TERN_ERR_INVAL);
    CHECK(other == TERN_CONV_NULL);

    /* Wrong kinds and bad arguments. */
    char buf[64];
    tern_request_t rq = TERN_REQUEST_NULL;
    CHECK_ERR(tern_conv_send(r, buf, 1), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_trysend(r, buf, 1), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_recv(s, buf, sizeof buf, &len), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_irecv(s, buf, sizeof buf, &rq), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_check(s, &flag), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_check(r, NULL), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_irecv(r, buf, sizeof buf, NULL), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_send(s, NULL, 1), TERN_ERR_BUFFER);
    CHECK_ERR(tern_conv_recv(r, NULL, 1, &len), TERN_ERR_BUFFER);
    CHECK_ERR(tern_conv_irecv(r, NULL, 1, &rq), TERN_ERR_BUFFER);

    /* Truncation: the first cap bytes, the full size, the message consumed. */
    unsigned char big[200];
    mp_fill(big, sizeof big, 42);
    CHECK_OK(tern_conv_send(s, big, sizeof big));
    CHECK_OK(tern_conv_send(s, NULL, 0));
    memset(buf, 0, sizeof buf);
    len = 0;
    CHECK_ERR(tern_conv_recv(r, buf, 50, &len), TERN_ERR_TRUNCATE);
    CHECK_EQ_SIZE(len, sizeof big);
    CHECK_PATTERN(buf, 50, 42, "truncated message");
    CHECK_EQ_INT(buf[50], 0);
    len = 99;
    CHECK_OK(tern_conv_recv(r, NULL, 0, &len)); /* the empty message */
    CHECK_EQ_SIZE(len, 0);

    /* Truncation through a request, and close while a receive is outstanding. */
    CHECK_ERR(tern_conv_irecv(r, buf, 10, &rq), TERN_OK);
    CHECK_ERR(tern_conv_close(&r), TERN_ERR_BUSY);
    CHECK_OK(tern_conv_send(s, big, 30));
    tern_status_t st = mp_status_poison();
    CHECK_ERR(tern_wait(&rq, &st), TERN_ERR_TRUNCATE);
    CHECK_EQ_SIZE(st.bytes, 30);
    CHECK_EQ_INT(st.source, rank);
    CHECK_EQ_INT(st.error, TERN_ERR_TRUNCATE);
    CHECK(rq == TERN_REQUEST_NULL);

    /* Closed handles. */
    tern_conv_t s_old = s;
    CHECK_OK(tern_conv_close(&s));
    CHECK(s == TERN_CONV_NULL);
    CHECK_ERR(tern_conv_send(s_old, buf, 1), TERN_ERR_INVAL);
    CHECK_ERR(tern_conv_close(&s_old), TERN_ERR_INVAL);
    CHECK_OK(tern_conv_close(&r));

    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
    CHECK_OK(tern_finalize());
    CHECK_ERR(tern_conv_open_send("x", &c), TERN_ERR_FINALIZED);
    CHECK_ERR(tern_conv_recv(r, buf, 1, &len), TERN_ERR_FINALIZED);
    if (rank == 0) printf("conv_badinput ok\n");
    return 0;
}

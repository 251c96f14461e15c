/*
 * test_am_ids.c - the core's one table of active-message ids: core_am_register refuses
 * an id another handler holds (TERN_ERR_EXISTS) and ids outside the table
 * (TERN_ERR_INVAL), accepts the same handler again (layers register at each init), and
 * a refused registration leaves the first handler in place: an AM frame still reaches it.
 * The ids of the layers are distinct (one enum), checked here so a clash fails a test
 * rather than garbling messages.
 */
#include <string.h>

#include "core/core.h"
#include "unit.h"

static int hits_a, hits_b, last_src;
static size_t last_len;

static void handler_a(int src, const void *payload, size_t len)
{
    (void)payload;
    hits_a++;
    last_src = src;
    last_len = len;
}

static void handler_b(int src, const void *payload, size_t len)
{
    (void)src, (void)payload, (void)len;
    hits_b++;
}

/* Deliver an AM frame with `len` payload bytes to handler id `id`, as a transport would. */
static void deliver(int id, int src, size_t len)
{
    unsigned char frame[sizeof(struct core_hdr) + 32];
    struct core_hdr h = {.type = CORE_FRAME_AM, .tag = id};
    memset(frame, 0x5a, sizeof frame);
    memcpy(frame, &h, sizeof h);
    core_frame_recv(src, frame, sizeof h + len);
}

static void test_refusal(void)
{
    /* Before any start: the peers a frame's arrival notes (core_frame_recv) are these. */
    static struct core_peer peers[4];
    core.peers = peers;
    CHECK_EQ(core_am_register(CORE_AM_TEST, handler_a), 0);
    /* Another handler on a taken id is refused by name ... */
    CHECK_EQ(core_am_register(CORE_AM_TEST, handler_b), TERN_ERR_EXISTS);
    /* ... and the first one keeps getting the id's messages. */
    deliver(CORE_AM_TEST, 3, 7);
    CHECK_EQ(hits_a, 1);
    CHECK_EQ(hits_b, 0);
    CHECK_EQ(last_src, 3);
    CHECK_EQ(last_len, 7);
    /* The same handler again is fine (SHMEM registers at every shmem_init). */
    CHECK_EQ(core_am_register(CORE_AM_TEST, handler_a), 0);
    /* Outside the table, or no function. */
    CHECK_EQ(core_am_register(-1, handler_a), TERN_ERR_INVAL);
    CHECK_EQ(core_am_register(CORE_AM_MAX, handler_a), TERN_ERR_INVAL);
    CHECK_EQ(core_am_register(CORE_AM_TEST - 1, NULL), TERN_ERR_INVAL);
    CHECK(strcmp(tern_err_name(TERN_ERR_EXISTS), "TERN_ERR_EXISTS") == 0);
    core.peers = NULL;
}

static void test_reinit(void)
{
    /* Starting the core (a singleton: no launcher) empties the table: after it any
     * handler may take the id the tests above gave handler_a, and the old one is gone.
     * A finalized core does not start again (MPI's rule), so one start is the cycle. */
    CHECK_EQ(core_start(CORE_USER_API, TERN_THREAD_SINGLE, NULL, NULL), 1);
    CHECK_EQ(core_am_register(CORE_AM_TEST, handler_b), 0);
    int a_before = hits_a;
    deliver(CORE_AM_TEST, 0, 0); /* (a singleton: rank 0 is the only peer) */
    CHECK_EQ(hits_b, 1);
    CHECK_EQ(hits_a, a_before);
    CHECK_EQ(core_am_register(CORE_AM_TEST, handler_a), TERN_ERR_EXISTS);
    CHECK_EQ(core_stop(CORE_USER_API), 0);
}

static void test_ids_distinct(void)
{
    const int ids[] = {CORE_AM_SHMEM_REQ,   CORE_AM_SHMEM_REP,      CORE_AM_RMA_REQ,
                       CORE_AM_RMA_REP,     CORE_AM_MPI_CANCEL_REQ, CORE_AM_MPI_CANCEL_REP,
                       CORE_AM_CONV,        CORE_AM_TEST,           CORE_AM_MPI_NAME_REQ,
                       CORE_AM_MPI_NAME_REP};
    int n = (int)(sizeof ids / sizeof ids[0]);
    for (int i = 0; i < n; i++) {
        CHECK(ids[i] >= 0 && ids[i] < CORE_AM_MAX);
        for (int j = i + 1; j < n; j++)
            CHECK(ids[i] != ids[j]);
    }
    CHECK((int)(sizeof core.am / sizeof core.am[0]) == CORE_AM_MAX);
}

int main(void)
{
    test_refusal();
    test_reinit();
    test_ids_distinct();
    return unit_done("test_am_ids");
}

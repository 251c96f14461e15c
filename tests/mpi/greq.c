/*
 * greq.c - generalized requests: MPI_Grequest_start/complete with query, free and cancel
 * callbacks called as MPI says (query fills the status that MPI_Wait returns, also for
 * MPI_Request_get_status; free once the completed request is freed; cancel with whether
 * it completed), MPI_Test before and after completion, MPI_Waitall mixing a generalized
 * request with a receive, and a request completed by another thread (after it received
 * a message from the left neighbour) while the main thread waits in MPI_Wait.
 */
#include <pthread.h>

#include "mpi_check.h"

struct state {
    int queries, frees, cancels, cancel_complete;
    int value; /* elements reported by query */
    int cancelled;
    MPI_Request self; /* for a cancel callback that completes the request */
};

static int query_fn(void *extra, MPI_Status *st)
{
    struct state *s = extra;
    s->queries++;
    MPI_Status_set_elements(st, MPI_INT, s->value);
    MPI_Status_set_cancelled(st, s->cancelled);
    st->MPI_SOURCE = MPI_UNDEFINED;
    st->MPI_TAG = MPI_UNDEFINED;
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    ((struct state *)extra)->frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    struct state *s = extra;
    s->cancels++;
    s->cancel_complete = complete;
    if (!complete) { /* withdraw the work: it completes, cancelled */
        s->cancelled = 1;
        MPI_Grequest_complete(s->self);
    }
    return MPI_SUCCESS;
}

struct job {
    MPI_Request req;
    int from, got;
};

static void *worker(void *arg)
{
    struct job *j = arg;
    MPI_Recv(&j->got, 1, MPI_INT, j->from, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Grequest_complete(j->req);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    int me = mt_rank, np;
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    /* Completed before the wait. */
    struct state s = {.value = 5};
    MPI_Request rq;
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &rq));
    int flag = 1;
    OK(MPI_Test(&rq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag && rq != MPI_REQUEST_NULL && s.queries == 0);
    OK(MPI_Grequest_complete(rq));
    MPI_Status st;
    OK(MPI_Request_get_status(rq, &flag, &st));
    CHECK(flag && s.queries == 1 && s.frees == 0);
    OK(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL && s.queries == 2 && s.frees == 1 && s.cancels == 0);
    int n = -1;
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(n == 5);
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag);

    /* Status ignored: query still runs. */
    struct state s2 = {.value = 1};
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s2, &rq));
    OK(MPI_Grequest_complete(rq));
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    CHECK(s2.queries == 1 && s2.frees == 1);

    /* Cancelled before completion: the callback completes it, the status says so. */
    struct state s3 = {.value = 0};
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s3, &rq));
    s3.self = rq;
    OK(MPI_Cancel(&rq));
    CHECK(s3.cancels == 1 && s3.cancel_complete == 0);
    OK(MPI_Wait(&rq, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag && s3.frees == 1);

    /* Cancel after completion: told it completed. */
    struct state s4 = {.value = 2};
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s4, &rq));
    OK(MPI_Grequest_complete(rq));
    OK(MPI_Cancel(&rq));
    CHECK(s4.cancels == 1 && s4.cancel_complete == 1);
    OK(MPI_Wait(&rq, &st));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(!flag && s4.frees == 1);

    /* Waitall with a receive: the generalized one is completed by Testany/Test polling
     * in between; statuses come back from both. */
    struct state s5 = {.value = 3};
    MPI_Request two[2];
    int token = -1, out = me;
    OK(MPI_Irecv(&token, 1, MPI_INT, (me + np - 1) % np, 5, MPI_COMM_WORLD, &two[0]));
    OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s5, &two[1]));
    OK(MPI_Send(&out, 1, MPI_INT, (me + 1) % np, 5, MPI_COMM_WORLD));
    OK(MPI_Grequest_complete(two[1]));
    MPI_Status sts[2];
    OK(MPI_Waitall(2, two, sts));
    CHECK(token == (me + np - 1) % np && sts[0].MPI_SOURCE == (me + np - 1) % np);
    OK(MPI_Get_count(&sts[1], MPI_INT, &n));
    CHECK(n == 3 && s5.queries == 1 && s5.frees == 1);

    /* Completed by another thread while this one waits. */
    if (provided == MPI_THREAD_MULTIPLE) {
        struct state s6 = {.value = 4};
        struct job j = {.from = (me + np - 1) % np, .got = -1};
        OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s6, &j.req));
        pthread_t th;
        CHECK(pthread_create(&th, NULL, worker, &j) == 0);
        int v = 1000 + me;
        OK(MPI_Send(&v, 1, MPI_INT, (me + 1) % np, 77, MPI_COMM_WORLD));
        MPI_Request w = j.req;
        OK(MPI_Wait(&w, &st));
        pthread_join(th, NULL);
        CHECK(j.got == 1000 + (me + np - 1) % np && s6.queries == 1 && s6.frees == 1);
        OK(MPI_Get_count(&st, MPI_INT, &n));
        CHECK(n == 4);
    }
    return mt_done("greq");
}

/*
 * mpi_greq.c - generalized requests (MPI 3.1, 12.2): MPI_Grequest_start makes a request
 * the program completes itself with MPI_Grequest_complete; the MPI completion calls
 * (Wait, Test and their any/some/all forms, Request_get_status) see it like any other.
 *
 * The request is an MPI request of kind MPI_RK_GREQ over a core request that nothing but
 * MPI_Grequest_complete completes (state POSTED in no matching queue), so every waiting
 * path of the library - including a thread asleep in MPI_Wait under
 * MPI_THREAD_MULTIPLE, woken by the completion - works unchanged. The callbacks are
 * called as the standard says: query_fn fills the status when a completion call returns
 * the request (with a real status even if the caller passed MPI_STATUS_IGNORE, and also
 * for MPI_Request_get_status), free_fn when the request is freed after completing, and
 * cancel_fn from MPI_Cancel with whether the request has completed.
 */
#include <stdlib.h>

#include "mpi/mpi_impl.h"

struct mpi_greq {
    MPI_Grequest_query_function *query;
    MPI_Grequest_free_function *free;
    MPI_Grequest_cancel_function *cancel;
    void *extra;
};

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Grequest_start";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (request == NULL || query_fn == NULL || free_fn == NULL || cancel_fn == NULL)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_greq *g = malloc(sizeof *g);
    struct mpi_req *mr = g ? mpi_req_new(MPI_RK_GREQ, MPI_COMM_WORLD) : NULL;
    core_req_t *r = mr ? core_req_alloc(CORE_REQ_COLL) : NULL;
    if (r == NULL) {
        if (mr) mpi_req_release(mr);
        free(g);
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    }
    *g = (struct mpi_greq){query_fn, free_fn, cancel_fn, extra_state};
    r->state = CORE_RS_POSTED;
    r->ctx = CORE_CTX_NONE;
    r->user = g;
    mr->r = r;
    *request = mr->handle;
    return MPI_SUCCESS;
}
MPI_ALIAS(Grequest_start)

int PMPI_Grequest_complete(MPI_Request request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Grequest_complete";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    struct mpi_req *mr = mpi_req_get(request);
    if (mr == NULL || mr->kind != MPI_RK_GREQ || mr->r == NULL || mr->r->state == CORE_RS_DONE)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_REQUEST);
    core_req_complete(mr->r, TERN_OK);
    if (core_mt) core_mt_wake(CORE_WAKE_DONE); /* a thread may sleep in MPI_Wait on it */
    return MPI_SUCCESS;
}
MPI_ALIAS(Grequest_complete)

/* query_fn into st (or a scratch status), as the completion calls and
 * MPI_Request_get_status need. */
int mpi_greq_query(struct mpi_req *mr, MPI_Status *st)
{
    struct mpi_greq *g = mr->r->user;
    MPI_Status scratch;
    if (st == MPI_STATUS_IGNORE) st = &scratch;
    mpi_status_empty(st);
    return g->query(g->extra, st);
}

int mpi_greq_finish(struct mpi_req *mr, MPI_Status *st)
{
    struct mpi_greq *g = mr->r->user;
    int err = mpi_greq_query(mr, st);
    int ferr = g->free(g->extra);
    free(g);
    core_req_free(mr->r);
    mr->r = NULL;
    return err ? err : ferr;
}

int mpi_greq_cancel(struct mpi_req *mr)
{
    struct mpi_greq *g = mr->r->user;
    return g->cancel(g->extra, mr->r->state == CORE_RS_DONE);
}

/* MPI_Status_set_cancelled and MPI_Status_set_elements(_x): what query_fn uses to fill
 * the status; MPI_Get_count/MPI_Get_elements and MPI_Test_cancelled read it back. */
int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    CORE_CS_SCOPE();
    if (status == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Status_set_cancelled", MPI_ERR_ARG);
    mpi_status_set_cancelled(status, flag != 0);
    return MPI_SUCCESS;
}
MPI_ALIAS(Status_set_cancelled)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Status_set_elements_x";
    struct mpi_type *t = mpi_type_ok(datatype);
    if (status == NULL || count < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE);
    /* The status holds bytes: count basic elements of the type's basic kind. */
    MPI_Count esize = t->basic_size ? t->basic_size : t->size;
    MPI_Count nb;
    if (mpi_type_elements_bytes(datatype, count, &nb) != 0) nb = count * esize;
    mpi_status_set_bytes(status, nb);
    return MPI_SUCCESS;
}
MPI_ALIAS(Status_set_elements_x)

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    CORE_CS_SCOPE();
    return PMPI_Status_set_elements_x(status, datatype, count);
}
MPI_ALIAS(Status_set_elements)

/*
 * errors.c - the MPI environment and error handling: with MPI_ERRORS_RETURN every bad
 * argument gives its error class (rank, tag, count, communicator, datatype, root, op,
 * truncation) and the job goes on; error strings and classes; init/finalize queries,
 * versions, clocks, processor name, thread level, memory allocation.
 * With an argument "fatal", the default handler must end the job on a bad rank instead.
 */
#include "mpi_check.h"

static int me, np;

int main(int argc, char **argv)
{
    int flag = -1, provided = -1;
    OK(MPI_Initialized(&flag));
    CHECK(flag == 0);
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    mt_rank = me;
    CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
    int q = -1;
    OK(MPI_Query_thread(&q));
    CHECK(q == provided);
    OK(MPI_Initialized(&flag));
    CHECK(flag == 1);
    OK(MPI_Finalized(&flag));
    CHECK(flag == 0);

    if (argc > 1 && strcmp(argv[1], "fatal") == 0) {
        /* Default handler: this ends the job with a message naming MPI_Send. */
        int x = 0;
        MPI_Send(&x, 1, MPI_INT, np + 3, 0, MPI_COMM_WORLD);
        fprintf(stderr, "MPI_Send with a bad rank returned under MPI_ERRORS_ARE_FATAL\n");
        return 0;
    }

    int v, sv;
    OK(MPI_Get_version(&v, &sv));
    CHECK(v >= 3);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], host[MPI_MAX_PROCESSOR_NAME];
    int len;
    OK(MPI_Get_library_version(lib, &len));
    CHECK(len > 0 && len >= (int)strlen(lib)); /* Open MPI counts the terminator */
    OK(MPI_Get_processor_name(host, &len));
    CHECK(len > 0 && len == (int)strlen(host));
    double t0 = MPI_Wtime(), t1 = MPI_Wtime();
    CHECK(t1 >= t0 && MPI_Wtick() > 0 && MPI_Wtick() < 1);
    double *mem = NULL;
    OK(MPI_Alloc_mem(1000 * sizeof(double), MPI_INFO_NULL, &mem));
    CHECK(mem != NULL);
    mem[999] = 1.0;
    OK(MPI_Free_mem(mem));

    MPI_Errhandler eh;
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_ARE_FATAL);
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &eh));
    CHECK(eh == MPI_ERRORS_RETURN);

    int x[16] = {0}, y[16];
    MPI_Request rq;
    FAILS(MPI_Send(x, 1, MPI_INT, np, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    FAILS(MPI_Send(x, 1, MPI_INT, -7, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    FAILS(MPI_Isend(x, 1, MPI_INT, np + 1, 0, MPI_COMM_WORLD, &rq), MPI_ERR_RANK);
    FAILS(MPI_Recv(y, 1, MPI_INT, np, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_RANK);
    FAILS(MPI_Send(x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    FAILS(MPI_Irecv(y, 1, MPI_INT, 0, -5, MPI_COMM_WORLD, &rq), MPI_ERR_TAG);
    FAILS(MPI_Send(x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    FAILS(MPI_Recv(y, -2, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    FAILS(MPI_Send(x, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    FAILS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    FAILS(MPI_Send(x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    FAILS(MPI_Bcast(x, 1, MPI_INT, np, MPI_COMM_WORLD), MPI_ERR_ROOT);
    FAILS(MPI_Reduce(x, y, 1, MPI_INT, MPI_SUM, -1, MPI_COMM_WORLD), MPI_ERR_ROOT);
    FAILS(MPI_Allreduce(x, y, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    FAILS(MPI_Comm_split(MPI_COMM_WORLD, -3, 0, (MPI_Comm[1]){0}), MPI_ERR_ARG);
    int dims[2] = {np + 1, 1}, periods[2] = {0, 0};
    MPI_Comm cart;
    int rc = MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart), cls;
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG || cls == MPI_ERR_DIMS || cls == MPI_ERR_TOPOLOGY);

    /* Truncation: 10 ints into room for 5, to myself (every process). */
    for (int i = 0; i < 10; i++)
        x[i] = i + me;
    OK(MPI_Isend(x, 10, MPI_INT, me, 9, MPI_COMM_WORLD, &rq));
    MPI_Status st;
    FAILS(MPI_Recv(y, 5, MPI_INT, me, 9, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    for (int i = 0; i < 5; i++)
        CHECK(y[i] == i + me);
    /* The same through a request. */
    OK(MPI_Isend(x, 10, MPI_INT, me, 8, MPI_COMM_WORLD, &rq));
    MPI_Request rr;
    OK(MPI_Irecv(y, 5, MPI_INT, me, 8, MPI_COMM_WORLD, &rr));
    FAILS(MPI_Wait(&rr, &st), MPI_ERR_TRUNCATE);
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    /* Between two processes, the receive posted first. */
    if (np > 1 && me < 2) {
        if (me == 0) {
            OK(MPI_Irecv(y, 5, MPI_INT, 1, 5, MPI_COMM_WORLD, &rr));
            OK(MPI_Barrier(MPI_COMM_WORLD));
            FAILS(MPI_Wait(&rr, &st), MPI_ERR_TRUNCATE);
        } else {
            OK(MPI_Barrier(MPI_COMM_WORLD));
            OK(MPI_Send(x, 10, MPI_INT, 0, 5, MPI_COMM_WORLD));
        }
    } else if (np > 1) {
        OK(MPI_Barrier(MPI_COMM_WORLD));
    }
    /* Waitall reports MPI_ERR_IN_STATUS with the error in the status. */
    MPI_Request two[2];
    MPI_Status sts[2];
    /* Between two processes, sent before the receives are posted. Only on tern: Open MPI
     * 4.1 (Debian 12) hangs in MPI_Waitall on a truncated receive, so it is not asked. */
#ifdef TERN_MPI
    if (np > 1) {
        if (me == 1) {
            OK(MPI_Send(x, 10, MPI_INT, 0, 7, MPI_COMM_WORLD));
            OK(MPI_Send(x, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        }
        OK(MPI_Barrier(MPI_COMM_WORLD));
        if (me == 0) {
            int z = -1;
            OK(MPI_Irecv(y, 5, MPI_INT, 1, 7, MPI_COMM_WORLD, &two[0]));
            OK(MPI_Irecv(&z, 1, MPI_INT, 1, 6, MPI_COMM_WORLD, &two[1]));
            FAILS(MPI_Waitall(2, two, sts), MPI_ERR_IN_STATUS);
            CHECK(sts[1].MPI_ERROR == MPI_SUCCESS && z == 1);
            MPI_Error_class(sts[0].MPI_ERROR, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE);
        }
    }
    /* Stale handles (tern only: elsewhere using one is undefined, often a use after free).
     * A request handle kept after completion, and a datatype handle kept after
     * MPI_Type_free, are refused even once a new object has taken the same table slot. */
    {
        MPI_Request keep, fresh;
        OK(MPI_Irecv(y, 1, MPI_INT, me, 4, MPI_COMM_WORLD, &rr));
        keep = rr;
        OK(MPI_Send(x, 1, MPI_INT, me, 4, MPI_COMM_WORLD));
        OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        CHECK(rr == MPI_REQUEST_NULL);
        OK(MPI_Irecv(y, 1, MPI_INT, me, 3, MPI_COMM_WORLD, &fresh)); /* reuses the slot */
        int tflag = 0;
        FAILS(MPI_Test(&keep, &tflag, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
        FAILS(MPI_Wait(&keep, MPI_STATUS_IGNORE), MPI_ERR_REQUEST);
        FAILS(MPI_Cancel(&keep), MPI_ERR_REQUEST);
        OK(MPI_Send(x, 1, MPI_INT, me, 3, MPI_COMM_WORLD));
        OK(MPI_Wait(&fresh, MPI_STATUS_IGNORE));
        MPI_Datatype vt, vkeep, vt2;
        OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vt));
        OK(MPI_Type_commit(&vt));
        vkeep = vt;
        OK(MPI_Type_free(&vt));
        OK(MPI_Type_vector(3, 1, 2, MPI_INT, &vt2)); /* reuses the slot */
        OK(MPI_Type_commit(&vt2));
        int sz = 0;
        FAILS(MPI_Type_size(vkeep, &sz), MPI_ERR_TYPE);
        FAILS(MPI_Send(x, 1, vkeep, me, 2, MPI_COMM_WORLD), MPI_ERR_TYPE);
        OK(MPI_Type_size(vt2, &sz));
        CHECK(sz == 3 * (int)sizeof(int));
        OK(MPI_Type_free(&vt2));
    }
#else
    (void)two, (void)sts;
#endif

    /* Every class has a string; classes map to themselves. */
    int classes[] = {MPI_SUCCESS,       MPI_ERR_BUFFER,  MPI_ERR_COUNT,
                     MPI_ERR_TYPE,      MPI_ERR_TAG,     MPI_ERR_COMM,
                     MPI_ERR_RANK,      MPI_ERR_REQUEST, MPI_ERR_ROOT,
                     MPI_ERR_GROUP,     MPI_ERR_OP,      MPI_ERR_TOPOLOGY,
                     MPI_ERR_DIMS,      MPI_ERR_ARG,     MPI_ERR_UNKNOWN,
                     MPI_ERR_TRUNCATE,  MPI_ERR_OTHER,   MPI_ERR_INTERN,
                     MPI_ERR_IN_STATUS, MPI_ERR_PENDING, MPI_ERR_UNSUPPORTED_OPERATION};
    for (unsigned i = 0; i < sizeof classes / sizeof *classes; i++) {
        char s[MPI_MAX_ERROR_STRING];
        OK(MPI_Error_string(classes[i], s, &len));
        CHECK(len > 0 && len < MPI_MAX_ERROR_STRING && len == (int)strlen(s));
        OK(MPI_Error_class(classes[i], &cls));
        CHECK(cls == classes[i]);
    }
    CHECK(MPI_ERR_LASTCODE >= MPI_ERR_UNSUPPORTED_OPERATION);

    /* Everything still works after all those errors. */
    int sum = 0;
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == np * (np - 1) / 2);
    MPI_Barrier(MPI_COMM_WORLD);
    if (me == 0) printf("errors: ok\n");
    OK(MPI_Finalize());
    OK(MPI_Finalized(&flag));
    CHECK(flag == 1);
    return 0;
}

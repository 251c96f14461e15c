/*
 * coll_errors.c - the collectives' door: every bad argument gets its named error and
 * nothing is sent (a real collective afterwards still works); several non-blocking
 * collectives in flight at once complete through tern_test/tern_waitall; a bad
 * TERN_COLL_<OP> value (tests.list sets TERN_COLL_BCAST=bogus on one line) makes that
 * collective return TERN_ERR_TUNABLE while the others keep working; a tuning file that
 * cannot be read (TERN_TUNING=/nonexistent/tern.tuning) makes every collective return
 * TERN_ERR_TUNABLE, the shared-region and non-blocking ones too, and point-to-point
 * traffic still works.
 */
#include "mp_check.h"

#define W TERN_COMM_WORLD

static void nop_fn(const void *in, void *inout, size_t n, tern_datatype_t dt)
{
    (void)in, (void)inout, (void)n, (void)dt;
}

int main(int argc, char **argv)
{
    char a[64] = {0}, b[64 * 16] = {0};
    size_t counts[16] = {0}, displs[16] = {0};
    tern_request_t r = (tern_request_t)(uintptr_t)0x1234;
    tern_op_t op = TERN_OP_NULL;

    MP_WHERE("before init");
    CHECK_ERR(tern_barrier(W), TERN_ERR_NOT_INIT);
    CHECK_ERR(tern_allreduce(a, b, 1, TERN_INT32, TERN_SUM, W), TERN_ERR_NOT_INIT);
    CHECK_ERR(tern_op_create(nop_fn, 1, &op), TERN_ERR_NOT_INIT);

    mp_init(&argc, &argv);
    int me = tern_rank(), np = tern_size();
    const char *bc = getenv("TERN_COLL_BCAST");
    int bogus = bc && strcmp(bc, "bogus") == 0;

    MP_WHERE("bad communicator");
    CHECK_ERR(tern_barrier(TERN_COMM_NULL), TERN_ERR_COMM);
    CHECK_ERR(tern_bcast(a, 4, 0, TERN_COMM_NULL), TERN_ERR_COMM);
    CHECK_ERR(tern_iallreduce(a, b, 1, TERN_INT32, TERN_SUM, TERN_COMM_NULL, &r), TERN_ERR_COMM);

    MP_WHERE("bad root");
    CHECK_ERR(tern_bcast(a, 4, np, W), TERN_ERR_RANK);
    CHECK_ERR(tern_bcast(a, 4, -1, W), TERN_ERR_RANK);
    CHECK_ERR(tern_reduce(a, b, 1, TERN_INT32, TERN_SUM, np, W), TERN_ERR_RANK);
    CHECK_ERR(tern_gather(a, 4, b, -5, W), TERN_ERR_RANK);
    CHECK_ERR(tern_scatterv(b, counts, displs, a, 4, np + 3, W), TERN_ERR_RANK);
    CHECK_ERR(tern_ibcast(a, 4, np, W, &r), TERN_ERR_RANK);

    MP_WHERE("NULL buffers with a size");
    CHECK_ERR(tern_bcast(NULL, 4, 0, W), TERN_ERR_BUFFER);
    CHECK_ERR(tern_allreduce(NULL, b, 1, TERN_INT32, TERN_SUM, W), TERN_ERR_BUFFER);
    CHECK_ERR(tern_allreduce(a, NULL, 1, TERN_INT32, TERN_SUM, W), TERN_ERR_BUFFER);
    CHECK_ERR(tern_allgather(a, NULL, 4, W), TERN_ERR_BUFFER);
    CHECK_ERR(tern_alltoall(NULL, b, 4, W), TERN_ERR_BUFFER);
    CHECK_ERR(tern_scan(a, NULL, 2, TERN_DOUBLE, TERN_MAX, W), TERN_ERR_BUFFER);

    MP_WHERE("TERN_IN_PLACE where it is not allowed");
    CHECK_ERR(tern_bcast(TERN_IN_PLACE, 4, 0, W), TERN_ERR_BUFFER);
    CHECK_ERR(tern_allreduce(a, TERN_IN_PLACE, 1, TERN_INT32, TERN_SUM, W), TERN_ERR_BUFFER);
    if (np > 1) {
        int notroot = (me + 1) % np;
        CHECK_ERR(tern_reduce(TERN_IN_PLACE, b, 1, TERN_INT32, TERN_SUM, notroot, W),
                  TERN_ERR_BUFFER);
        CHECK_ERR(tern_gather(TERN_IN_PLACE, 4, b, notroot, W), TERN_ERR_BUFFER);
        CHECK_ERR(tern_scatter(b, TERN_IN_PLACE, 4, notroot, W), TERN_ERR_BUFFER);
    }

    MP_WHERE("bad datatype or op");
    CHECK_ERR(tern_allreduce(a, b, 1, (tern_datatype_t)99, TERN_SUM, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, 1, (tern_datatype_t)-1, TERN_SUM, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, 1, TERN_INT32, (tern_op_t)77, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, 1, TERN_INT32, TERN_OP_NULL, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, 1, TERN_DOUBLE, TERN_BXOR, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, 1, TERN_FLOAT, TERN_LAND, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, 1, TERN_INT32, TERN_MINLOC, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, 1, TERN_DOUBLE_INT, TERN_SUM, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_reduce_scatter(a, b, NULL, TERN_INT32, TERN_SUM, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allgatherv(a, 4, b, NULL, displs, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_alltoallv(a, counts, NULL, b, counts, displs, W), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, SIZE_MAX / 2, TERN_INT32, TERN_SUM, W), TERN_ERR_INVAL);

    MP_WHERE("NULL request");
    CHECK_ERR(tern_ibarrier(W, NULL), TERN_ERR_INVAL);
    CHECK_ERR(tern_ibcast(a, 4, 0, W, NULL), TERN_ERR_INVAL);
    CHECK_ERR(tern_iallreduce(a, b, 1, TERN_INT32, TERN_SUM, W, NULL), TERN_ERR_INVAL);
    CHECK(r == (tern_request_t)(uintptr_t)0x1234);

    MP_WHERE("user ops");
    CHECK_ERR(tern_op_create(NULL, 1, &op), TERN_ERR_INVAL);
    CHECK_ERR(tern_op_create(nop_fn, 1, NULL), TERN_ERR_INVAL);
    CHECK_OK(tern_op_create(nop_fn, 1, &op));
    CHECK(op != TERN_OP_NULL && (int)op >= TERN_OP_BUILTIN_COUNT);
    tern_op_t sum = TERN_SUM, old = op;
    CHECK_ERR(tern_op_free(&sum), TERN_ERR_INVAL);
    CHECK_OK(tern_op_free(&op));
    CHECK(op == TERN_OP_NULL);
    CHECK_ERR(tern_op_free(&old), TERN_ERR_INVAL);
    CHECK_ERR(tern_allreduce(a, b, 1, TERN_INT32, old, W), TERN_ERR_INVAL);
    CHECK(tern_datatype_size(TERN_DOUBLE_INT) == sizeof(tern_double_int_t));
    CHECK(tern_datatype_size((tern_datatype_t)99) == 0);

    const char *tf = getenv("TERN_TUNING");
    if (tf && strcmp(tf, "/nonexistent/tern.tuning") == 0) {
        MP_WHERE("an unreadable tuning file");
        int32_t x = me + 1, y = 0;
        CHECK_ERR(tern_barrier(W), TERN_ERR_TUNABLE);
        CHECK_ERR(tern_bcast(&x, 4, 0, W), TERN_ERR_TUNABLE);
        CHECK_ERR(tern_allreduce(&x, &y, 1, TERN_INT32, TERN_SUM, W), TERN_ERR_TUNABLE);
        CHECK_ERR(tern_allgather(&x, b, 4, W), TERN_ERR_TUNABLE);
        CHECK_ERR(tern_ibarrier(W, &r), TERN_ERR_TUNABLE);
        CHECK_ERR(tern_iallreduce(&x, &y, 1, TERN_INT32, TERN_SUM, W, &r), TERN_ERR_TUNABLE);
        if (np > 1) { /* a ring of messages: point-to-point is untouched */
            int32_t got = -1;
            CHECK_OK(
                tern_sendrecv(&x, 4, (me + 1) % np, 7, &got, 4, (me + np - 1) % np, 7, W, NULL));
            CHECK_EQ_INT(got, (me + np - 1) % np + 1);
        }
        CHECK_OK(tern_finalize());
        return 0;
    }

    MP_WHERE("a bad algorithm name");
    int32_t x = me + 1, y = 0;
    if (bogus) {
        CHECK_ERR(tern_bcast(&x, 4, 0, W), TERN_ERR_TUNABLE);
        CHECK_ERR(tern_ibcast(&x, 4, 0, W, &r), TERN_ERR_TUNABLE);
    }

    MP_WHERE("nothing was sent by the refused calls: real collectives work");
    CHECK_OK(tern_allreduce(&x, &y, 1, TERN_INT32, TERN_SUM, W));
    CHECK_EQ_INT(y, np * (np + 1) / 2);

    MP_WHERE("several non-blocking collectives in flight");
    int32_t v[4] = {me, me, me, me}, s1[4], mx = -1;
    char bc_buf[100000];
    if (me == 0) memset(bc_buf, 0x42, sizeof bc_buf);
    tern_request_t rs[4];
    CHECK_OK(tern_ibarrier(W, &rs[0]));
    CHECK_OK(tern_iallreduce(v, s1, 4, TERN_INT32, TERN_SUM, W, &rs[1]));
    CHECK_OK(tern_iallreduce(&x, &mx, 1, TERN_INT32, TERN_MAX, W, &rs[2]));
    if (!bogus)
        CHECK_OK(tern_ibcast(bc_buf, sizeof bc_buf, 0, W, &rs[3]));
    else
        rs[3] = TERN_REQUEST_NULL;
    int flag = 0;
    double t0 = mp_now();
    while (!flag) {
        CHECK_OK(tern_testall(4, rs, &flag, NULL));
        CHECK(mp_now() - t0 < 30);
    }
    for (int i = 0; i < 4; i++)
        CHECK_EQ_INT(s1[i], np * (np - 1) / 2);
    CHECK_EQ_INT(mx, np);
    if (!bogus)
        for (size_t i = 0; i < sizeof bc_buf; i++)
            CHECK((unsigned char)bc_buf[i] == 0x42);

    CHECK_OK(tern_finalize());
    MP_WHERE("after finalize");
    CHECK_ERR(tern_barrier(W), TERN_ERR_FINALIZED);
    return 0;
}

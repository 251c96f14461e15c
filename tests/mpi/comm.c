/*
 * comm.c - MPI communicators and groups: dup, split, split_type, create, compare, free,
 * names, attributes, group construction and translation, Cartesian topologies and
 * Dims_create. Messages on derived communicators check that matching spaces are private.
 */
#include "mpi_check.h"

static int me, np;

static void basics(void)
{
    int r, s, res, len;
    char name[MPI_MAX_OBJECT_NAME];
    OK(MPI_Comm_size(MPI_COMM_SELF, &s));
    OK(MPI_Comm_rank(MPI_COMM_SELF, &r));
    CHECK(s == 1 && r == 0);
    OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
    CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14);
    OK(MPI_Comm_get_name(MPI_COMM_SELF, name, &len));
    CHECK(strcmp(name, "MPI_COMM_SELF") == 0);

    MPI_Comm d;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_compare(MPI_COMM_WORLD, d, &res));
    CHECK(res == MPI_CONGRUENT);
    OK(MPI_Comm_compare(d, d, &res));
    CHECK(res == MPI_IDENT);
    OK(MPI_Comm_set_name(d, "dup of world"));
    OK(MPI_Comm_get_name(d, name, &len));
    CHECK(strcmp(name, "dup of world") == 0);
    /* Private matching: a message on d is not received on world. */
    int right = (me + 1) % np, left = (me + np - 1) % np, a = me, b = -1, c = -1;
    MPI_Request q[2];
    OK(MPI_Irecv(&b, 1, MPI_INT, left, 7, MPI_COMM_WORLD, &q[0]));
    OK(MPI_Irecv(&c, 1, MPI_INT, left, 7, d, &q[1]));
    int a2 = a + 1000;
    OK(MPI_Send(&a2, 1, MPI_INT, right, 7, d));
    OK(MPI_Send(&a, 1, MPI_INT, right, 7, MPI_COMM_WORLD));
    OK(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    CHECK(b == left && c == left + 1000);
    OK(MPI_Comm_free(&d));
    CHECK(d == MPI_COMM_NULL);

    int *v;
    int flag;
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag));
    CHECK(flag && *v >= 32767);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag));
    CHECK(!flag || *v == 0 || *v == 1);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag));
    CHECK(flag);
    OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag));
    CHECK(flag);
}

static void splits(void)
{
    /* Odd and even ranks, reversed order by key. */
    MPI_Comm sub;
    OK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, -me, &sub));
    int r, s;
    OK(MPI_Comm_rank(sub, &r));
    OK(MPI_Comm_size(sub, &s));
    int expect_size = (np + 1 - me % 2) / 2;
    CHECK(s == expect_size);
    /* Highest world rank of my colour is rank 0. */
    int top = (np - 1) % 2 == me % 2 ? np - 1 : np - 2;
    CHECK(r == (top - me) / 2);
    int sum = 0;
    OK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, sub));
    int want = 0;
    for (int i = me % 2; i < np; i += 2)
        want += i;
    CHECK(sum == want);
    OK(MPI_Comm_free(&sub));
    /* MPI_UNDEFINED gives MPI_COMM_NULL. */
    OK(MPI_Comm_split(MPI_COMM_WORLD, me == 0 ? MPI_UNDEFINED : 1, 0, &sub));
    if (me == 0)
        CHECK(sub == MPI_COMM_NULL);
    else
        OK(MPI_Comm_free(&sub));
    /* Shared memory nodes: every process here is on one node. */
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &sub));
    OK(MPI_Comm_size(sub, &s));
    OK(MPI_Comm_rank(sub, &r));
    CHECK(s == np && r == me);
    int res;
    OK(MPI_Comm_compare(sub, MPI_COMM_WORLD, &res));
    CHECK(res == MPI_CONGRUENT);
    OK(MPI_Comm_free(&sub));
}

static void groups(void)
{
    MPI_Group world, g, h;
    OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    int s, r;
    OK(MPI_Group_size(world, &s));
    OK(MPI_Group_rank(world, &r));
    CHECK(s == np && r == me);
    /* Reversed world. */
    int *ranks = malloc((size_t)np * sizeof(int)), *out = malloc((size_t)np * sizeof(int));
    for (int i = 0; i < np; i++)
        ranks[i] = np - 1 - i;
    OK(MPI_Group_incl(world, np, ranks, &g));
    OK(MPI_Group_rank(g, &r));
    CHECK(r == np - 1 - me);
    int res;
    OK(MPI_Group_compare(world, g, &res));
    CHECK(res == (np == 1 ? MPI_IDENT : MPI_SIMILAR));
    for (int i = 0; i < np; i++)
        ranks[i] = i;
    OK(MPI_Group_translate_ranks(world, np, ranks, g, out));
    for (int i = 0; i < np; i++)
        CHECK(out[i] == np - 1 - i);
    /* Communicator of the reversed group: ranks reversed. */
    MPI_Comm rev;
    OK(MPI_Comm_create(MPI_COMM_WORLD, g, &rev));
    OK(MPI_Comm_rank(rev, &r));
    CHECK(r == np - 1 - me);
    int x = me, y = -1;
    /* Rank 0 of rev (world np-1) broadcasts. */
    OK(MPI_Bcast(me == np - 1 ? &x : &y, 1, MPI_INT, 0, rev));
    if (me != np - 1) CHECK(y == np - 1);
    OK(MPI_Comm_free(&rev));
    /* Exclude rank 0: a communicator without it. */
    int zero = 0;
    OK(MPI_Group_excl(world, 1, &zero, &h));
    OK(MPI_Group_size(h, &s));
    CHECK(s == np - 1);
    OK(MPI_Group_rank(h, &r));
    CHECK(r == (me == 0 ? MPI_UNDEFINED : me - 1));
    MPI_Comm noz;
    OK(MPI_Comm_create(MPI_COMM_WORLD, h, &noz));
    if (me == 0) {
        CHECK(noz == MPI_COMM_NULL);
    } else {
        OK(MPI_Comm_size(noz, &s));
        CHECK(s == np - 1);
        OK(MPI_Comm_free(&noz));
    }
    /* Ranges: every second rank from 0. */
    int range[1][3] = {{0, np - 1, 2}};
    MPI_Group ev;
    OK(MPI_Group_range_incl(world, 1, range, &ev));
    OK(MPI_Group_size(ev, &s));
    CHECK(s == (np + 1) / 2);
    OK(MPI_Group_translate_ranks(ev, s, ranks, world, out));
    for (int i = 0; i < s; i++)
        CHECK(out[i] == 2 * i);
    OK(MPI_Group_free(&ev));
    OK(MPI_Group_free(&h));
    OK(MPI_Group_free(&g));
    OK(MPI_Group_free(&world));
    CHECK(world == MPI_GROUP_NULL);
    free(ranks);
    free(out);
}

static int copies, deletes;
static int copy_fn(MPI_Comm o, int k, void *extra, void *in, void *out, int *flag)
{
    (void)o, (void)k, (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}
static int delete_fn(MPI_Comm c, int k, void *val, void *extra)
{
    (void)c, (void)k, (void)val, (void)extra;
    deletes++;
    return MPI_SUCCESS;
}

static void attributes(void)
{
    int key, flag, value = 42, *got;
    OK(MPI_Comm_create_keyval(copy_fn, delete_fn, &key, NULL));
    MPI_Comm d, d2;
    OK(MPI_Comm_dup(MPI_COMM_WORLD, &d));
    OK(MPI_Comm_get_attr(d, key, &got, &flag));
    CHECK(!flag);
    OK(MPI_Comm_set_attr(d, key, &value));
    OK(MPI_Comm_get_attr(d, key, &got, &flag));
    CHECK(flag && got == &value);
    OK(MPI_Comm_dup(d, &d2));
    CHECK(copies == 1);
    OK(MPI_Comm_get_attr(d2, key, &got, &flag));
    CHECK(flag && *got == 42);
    OK(MPI_Comm_free(&d2));
    CHECK(deletes == 1);
    OK(MPI_Comm_delete_attr(d, key));
    CHECK(deletes == 2);
    OK(MPI_Comm_free(&d));
    OK(MPI_Comm_free_keyval(&key));
}

static void cart(void)
{
    int dims[3] = {0, 0, 0};
    OK(MPI_Dims_create(12, 2, dims));
    CHECK(dims[0] == 4 && dims[1] == 3);
    dims[0] = dims[1] = dims[2] = 0;
    OK(MPI_Dims_create(16, 3, dims));
    CHECK(dims[0] == 4 && dims[1] == 2 && dims[2] == 2);
    dims[0] = 0, dims[1] = 3;
    OK(MPI_Dims_create(6, 2, dims));
    CHECK(dims[0] == 2 && dims[1] == 3);
    dims[0] = dims[1] = 0;
    OK(MPI_Dims_create(7, 2, dims));
    CHECK(dims[0] == 7 && dims[1] == 1);

    /* A 2-D torus over all processes in the first dim periodic, second not. */
    dims[0] = dims[1] = 0;
    OK(MPI_Dims_create(np, 2, dims));
    int periods[2] = {1, 0}, coords[2];
    MPI_Comm c;
    OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
    int r, topo;
    OK(MPI_Comm_rank(c, &r));
    OK(MPI_Topo_test(c, &topo));
    CHECK(topo == MPI_CART);
    OK(MPI_Cart_coords(c, r, 2, coords));
    CHECK(coords[0] == r / dims[1] && coords[1] == r % dims[1]);
    int back;
    OK(MPI_Cart_rank(c, coords, &back));
    CHECK(back == r);
    int src, dst;
    OK(MPI_Cart_shift(c, 0, 1, &src, &dst));
    CHECK(dst == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1]);
    CHECK(src == ((coords[0] - 1 + dims[0]) % dims[0]) * dims[1] + coords[1]);
    OK(MPI_Cart_shift(c, 1, 1, &src, &dst));
    CHECK(dst == (coords[1] + 1 < dims[1] ? r + 1 : MPI_PROC_NULL));
    CHECK(src == (coords[1] > 0 ? r - 1 : MPI_PROC_NULL));
    /* Shift exchange along dim 1: PROC_NULL at the edges is harmless. */
    int in = -5;
    OK(MPI_Sendrecv(&r, 1, MPI_INT, dst, 0, &in, 1, MPI_INT, src, 0, c, MPI_STATUS_IGNORE));
    CHECK(in == (src == MPI_PROC_NULL ? -5 : src));
    int nd, gd[2], gp[2], gc[2];
    OK(MPI_Cartdim_get(c, &nd));
    CHECK(nd == 2);
    OK(MPI_Cart_get(c, 2, gd, gp, gc));
    CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0 && gc[0] == coords[0]);
    /* Rows: keep dim 1. */
    int remain[2] = {0, 1};
    MPI_Comm row;
    OK(MPI_Cart_sub(c, remain, &row));
    int rs, rr;
    OK(MPI_Comm_size(row, &rs));
    OK(MPI_Comm_rank(row, &rr));
    CHECK(rs == dims[1] && rr == coords[1]);
    OK(MPI_Comm_free(&row));
    OK(MPI_Comm_free(&c));
    OK(MPI_Topo_test(MPI_COMM_WORLD, &topo));
    CHECK(topo == MPI_UNDEFINED);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    basics();
    splits();
    groups();
    attributes();
    cart();
    return mt_done("comm");
}

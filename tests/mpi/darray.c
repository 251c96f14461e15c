/*
 * darray.c - MPI_Type_create_darray: every process builds the type of its part of a
 * global array distributed over a process grid (BLOCK, CYCLIC(k), CYCLIC(1), NONE;
 * C and Fortran order; 2-D and 3-D), then packs a copy of the whole global array (each
 * element holds its linear index) through it. The packed elements must be exactly the
 * indices this process owns, by an independent ownership formula, in increasing order;
 * the counts over all processes add up to the array; extent = the whole array. The
 * local parts are also exchanged: rank 0 gathers them with the darray types as receive
 * layouts and rebuilds the array.
 */
#include "mpi_check.h"

static int me, np;

/* Coordinate of global index g in a dimension of size n over p processes (distrib, arg). */
static int owner(int distrib, int darg, int n, int p, int g)
{
    if (distrib == MPI_DISTRIBUTE_NONE) return 0;
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        int b = darg == MPI_DISTRIBUTE_DFLT_DARG ? (n + p - 1) / p : darg;
        return g / b;
    }
    int k = darg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : darg;
    return (g / k) % p;
}

static void check(int nd, const int *gs, const int *dist, const int *darg, const int *ps, int order)
{
    MPI_Datatype t;
    OK(MPI_Type_create_darray(np, me, nd, gs, dist, darg, ps, order, MPI_INT, &t));
    OK(MPI_Type_commit(&t));
    int total = 1;
    for (int i = 0; i < nd; i++)
        total *= gs[i];
    MPI_Aint lb, ext;
    OK(MPI_Type_get_extent(t, &lb, &ext));
    CHECK(lb == 0 && ext == (MPI_Aint)total * (MPI_Aint)sizeof(int));
    int *glob = malloc((size_t)total * sizeof(int));
    for (int i = 0; i < total; i++)
        glob[i] = i;
    int sz;
    OK(MPI_Type_size(t, &sz));
    int n = sz / (int)sizeof(int);
    int *packed = malloc((size_t)(n + 1) * sizeof(int)), pos = 0;
    OK(MPI_Pack(glob, 1, t, packed, (n + 1) * (int)sizeof(int), &pos, MPI_COMM_SELF));
    CHECK(pos == sz);
    /* My coordinates in the row-major process grid. */
    int coord[3], r = me;
    for (int i = nd - 1; i >= 0; i--) {
        coord[i] = r % ps[i];
        r /= ps[i];
    }
    int k = 0;
    for (int lin = 0; lin < total; lin++) {
        /* The multi-index of linear index lin in this order. */
        int idx[3], x = lin;
        if (order == MPI_ORDER_C)
            for (int i = nd - 1; i >= 0; i--) {
                idx[i] = x % gs[i];
                x /= gs[i];
            }
        else
            for (int i = 0; i < nd; i++) {
                idx[i] = x % gs[i];
                x /= gs[i];
            }
        int mine = 1;
        for (int i = 0; i < nd; i++)
            mine &= owner(dist[i], darg[i], gs[i], ps[i], idx[i]) == coord[i];
        if (!mine) continue;
        CHECKF(k < n && packed[k] == lin, "order %d element %d: %d, expected %d", order, k,
               k < n ? packed[k] : -1, lin);
        k++;
    }
    CHECK(k == n);
    int sum = 0;
    OK(MPI_Allreduce(&n, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == total);
    /* Rank 0 rebuilds the array from everyone's packed part through their darray types. */
    if (me == 0) {
        int *re = malloc((size_t)total * sizeof(int));
        for (int i = 0; i < total; i++)
            re[i] = -1;
        for (int src = 0; src < np; src++) {
            MPI_Datatype ts;
            OK(MPI_Type_create_darray(np, src, nd, gs, dist, darg, ps, order, MPI_INT, &ts));
            OK(MPI_Type_commit(&ts));
            if (src == 0)
                OK(MPI_Sendrecv(packed, n, MPI_INT, 0, 9, re, 1, ts, 0, 9, MPI_COMM_WORLD,
                                MPI_STATUS_IGNORE));
            else
                OK(MPI_Recv(re, 1, ts, src, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            MPI_Type_free(&ts);
        }
        for (int i = 0; i < total; i++)
            CHECKF(re[i] == i, "rebuilt [%d] = %d", i, re[i]);
        free(re);
    } else {
        OK(MPI_Send(packed, n, MPI_INT, 0, 9, MPI_COMM_WORLD));
    }
    MPI_Type_free(&t);
    free(glob);
    free(packed);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    me = mt_rank;
    int ps[3] = {0, 0, 0};
    OK(MPI_Dims_create(np, 2, ps));
    const int D = MPI_DISTRIBUTE_DFLT_DARG;
    for (int order = 0; order < 2; order++) {
        int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        int gs[2] = {7, 10};
        int d1[2] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_BLOCK}, a1[2] = {D, D};
        check(2, gs, d1, a1, ps, o);
        int d2[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_BLOCK}, a2[2] = {2, D};
        check(2, gs, d2, a2, ps, o);
        int d3[2] = {MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_CYCLIC}, a3[2] = {D, 3};
        check(2, gs, d3, a3, ps, o);
        /* 3-D with a NONE dimension in the middle. */
        int ps3[3] = {ps[0], 1, ps[1]}, gs3[3] = {5, 3, 4};
        int d4[3] = {MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_CYCLIC};
        int a4[3] = {D, D, D};
        check(3, gs3, d4, a4, ps3, o);
    }
    /* A BLOCK argument too small to cover the dimension is an error. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (np > 1) {
        int gs[1] = {10 * np}, d[1] = {MPI_DISTRIBUTE_BLOCK}, a[1] = {1}, p1[1] = {np};
        MPI_Datatype t;
        CHECK(MPI_Type_create_darray(np, me, 1, gs, d, a, p1, MPI_ORDER_C, MPI_INT, &t) !=
              MPI_SUCCESS);
    }
    return mt_done("darray");
}

/*
 * topo.c - graph and distributed-graph topologies and the neighbourhood collectives:
 * MPI_Graph_create and its queries, MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create
 * (all edges named by rank 0), MPI_Dist_graph_neighbors(_count) with weights,
 * MPI_Cart/Graph_map, MPI_Topo_test, topology kept by MPI_Comm_dup, and every
 * MPI_(I)neighbor_* call on Cartesian, graph and distributed-graph communicators, with a
 * non-contiguous (vector) receive type, data checked element by element.
 */
#include "mpi_check.h"

#define N 5 /* elements per block */

static int me, np;

static int pos(int r)
{
    return ((r % np) + np) % np;
}

/* Element e of the block `blk` rank `src` sends. */
static int v(int src, int blk, int e)
{
    return src * 10000 + blk * 100 + e + 1;
}

/* The neighbourhood calls on comm whose in-neighbour k is in[k] and which, on rank s,
 * sends its block k to out-neighbour k; sender_blk(s, k) is the index of the block that
 * in[k] = s sends to me. */
static void run_all(MPI_Comm comm, int nin, const int *in, int nout, const int *out,
                    int (*sender_blk)(int src, int k))
{
    (void)out;
    int *sbuf = malloc((size_t)(nout + 1) * N * sizeof(int));
    int *rbuf = malloc((size_t)(nin + 1) * 2 * N * sizeof(int));
    for (int j = 0; j < nout; j++)
        for (int e = 0; e < N; e++)
            sbuf[j * N + e] = v(me, j, e);
    for (int variant = 0; variant < 2; variant++) {
        MPI_Request rq;
        /* allgather: everyone gets my block 0. */
        for (int i = 0; i < nin * N; i++)
            rbuf[i] = -1;
        if (variant == 0)
            OK(MPI_Neighbor_allgather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, comm));
        else {
            OK(MPI_Ineighbor_allgather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, comm, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int k = 0; k < nin; k++)
            for (int e = 0; e < N; e++)
                CHECKF(rbuf[k * N + e] == (in[k] == MPI_PROC_NULL ? -1 : v(in[k], 0, e)),
                       "allgather k=%d e=%d: %d", k, e, rbuf[k * N + e]);
        /* alltoall: block k from in[k] is the one it sends me. */
        for (int i = 0; i < nin * N; i++)
            rbuf[i] = -1;
        if (variant == 0)
            OK(MPI_Neighbor_alltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, comm));
        else {
            OK(MPI_Ineighbor_alltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, comm, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int k = 0; k < nin; k++)
            for (int e = 0; e < N; e++)
                CHECKF(rbuf[k * N + e] ==
                           (in[k] == MPI_PROC_NULL ? -1 : v(in[k], sender_blk(in[k], k), e)),
                       "alltoall k=%d e=%d: %d", k, e, rbuf[k * N + e]);
        /* allgatherv / alltoallv: block k lands at 2N*k + 1, counts N - 1 and N. */
        int *rc = malloc((size_t)(nin + 1) * sizeof(int)),
            *rd = malloc((size_t)(nin + 1) * sizeof(int));
        int *sc = malloc((size_t)(nout + 1) * sizeof(int)),
            *sd = malloc((size_t)(nout + 1) * sizeof(int));
        for (int k = 0; k < nin; k++) {
            rc[k] = N;
            rd[k] = 2 * N * k + 1;
        }
        for (int j = 0; j < nout; j++) {
            sc[j] = N;
            sd[j] = j * N;
        }
        for (int i = 0; i < 2 * N * nin; i++)
            rbuf[i] = -1;
        if (variant == 0)
            OK(MPI_Neighbor_allgatherv(sbuf, N, MPI_INT, rbuf, rc, rd, MPI_INT, comm));
        else {
            OK(MPI_Ineighbor_allgatherv(sbuf, N, MPI_INT, rbuf, rc, rd, MPI_INT, comm, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int k = 0; k < nin; k++) {
            CHECK(rbuf[2 * N * k] == -1);
            for (int e = 0; e < N; e++)
                CHECK(rbuf[2 * N * k + 1 + e] == (in[k] == MPI_PROC_NULL ? -1 : v(in[k], 0, e)));
        }
        for (int i = 0; i < 2 * N * nin; i++)
            rbuf[i] = -1;
        if (variant == 0)
            OK(MPI_Neighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm));
        else {
            OK(MPI_Ineighbor_alltoallv(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int k = 0; k < nin; k++)
            for (int e = 0; e < N; e++)
                CHECK(rbuf[2 * N * k + 1 + e] ==
                      (in[k] == MPI_PROC_NULL ? -1 : v(in[k], sender_blk(in[k], k), e)));
        /* alltoallw: received through a vector (every other int), byte displacements. */
        MPI_Datatype vec;
        OK(MPI_Type_vector(N, 1, 2, MPI_INT, &vec));
        OK(MPI_Type_commit(&vec));
        MPI_Aint *swd = malloc((size_t)(nout + 1) * sizeof(MPI_Aint));
        MPI_Aint *rwd = malloc((size_t)(nin + 1) * sizeof(MPI_Aint));
        MPI_Datatype *st = malloc((size_t)(nout + 1) * sizeof(MPI_Datatype));
        MPI_Datatype *rt = malloc((size_t)(nin + 1) * sizeof(MPI_Datatype));
        for (int j = 0; j < nout; j++) {
            swd[j] = (MPI_Aint)(j * N * sizeof(int));
            st[j] = MPI_INT;
        }
        for (int k = 0; k < nin; k++) {
            rwd[k] = (MPI_Aint)(2 * N * k * sizeof(int));
            rt[k] = vec;
            rc[k] = 1;
        }
        for (int i = 0; i < 2 * N * nin; i++)
            rbuf[i] = -1;
        if (variant == 0)
            OK(MPI_Neighbor_alltoallw(sbuf, sc, swd, st, rbuf, rc, rwd, rt, comm));
        else {
            OK(MPI_Ineighbor_alltoallw(sbuf, sc, swd, st, rbuf, rc, rwd, rt, comm, &rq));
            OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        }
        for (int k = 0; k < nin; k++)
            for (int e = 0; e < N; e++) {
                CHECKF(rbuf[2 * N * k + 2 * e] ==
                           (in[k] == MPI_PROC_NULL ? -1 : v(in[k], sender_blk(in[k], k), e)),
                       "alltoallw k=%d e=%d: %d", k, e, rbuf[2 * N * k + 2 * e]);
                CHECK(rbuf[2 * N * k + 2 * e + 1] == -1);
            }
        MPI_Type_free(&vec);
        free(rc), free(rd), free(sc), free(sd), free(swd), free(rwd), free(st), free(rt);
    }
    free(sbuf);
    free(rbuf);
}

/* Cartesian 1-D, not periodic: in = out = [left, right]; left sends me its block 1. */
static int cart_blk(int src, int k)
{
    (void)src;
    return k == 0 ? 1 : 0;
}

/* Shift graphs: in[k] = me - (k + 1), out[k] = me + (k + 1): it sends me its block k. */
static int shift_blk(int src, int k)
{
    (void)src;
    return k;
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    me = mt_rank;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int st, x;

    /* Cartesian. */
    MPI_Comm cart;
    int dims[1] = {np}, periods[1] = {0};
    OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart));
    OK(MPI_Cart_map(MPI_COMM_WORLD, 1, dims, periods, &x));
    CHECK(x == me);
    int cin[2] = {me > 0 ? me - 1 : MPI_PROC_NULL, me < np - 1 ? me + 1 : MPI_PROC_NULL};
    run_all(cart, 2, cin, 2, cin, cart_blk);
    MPI_Comm_free(&cart);

    /* Graph: a ring without repeated edges (np 1: a self loop; np 2: one edge each way). */
    int *index = malloc((size_t)np * sizeof(int)), *edges = malloc(2 * (size_t)np * sizeof(int));
    int ne = 0;
    for (int i = 0; i < np; i++) {
        edges[ne++] = pos(i + 1);
        if (np > 2) edges[ne++] = pos(i - 1);
        index[i] = ne;
    }
    MPI_Comm graph, gdup;
    OK(MPI_Graph_create(MPI_COMM_WORLD, np, index, edges, 0, &graph));
    OK(MPI_Topo_test(graph, &st));
    CHECK(st == MPI_GRAPH);
    OK(MPI_Comm_dup(graph, &gdup));
    OK(MPI_Topo_test(gdup, &st));
    CHECK(st == MPI_GRAPH);
    int nn, nedges;
    OK(MPI_Graphdims_get(gdup, &nn, &nedges));
    CHECK(nn == np && nedges == ne);
    int *gi = malloc((size_t)np * sizeof(int)), *ge = malloc((size_t)ne * sizeof(int));
    OK(MPI_Graph_get(gdup, np, ne, gi, ge));
    CHECK(memcmp(gi, index, (size_t)np * sizeof(int)) == 0);
    CHECK(memcmp(ge, edges, (size_t)ne * sizeof(int)) == 0);
    int nb, nbr[2];
    OK(MPI_Graph_neighbors_count(gdup, pos(me + 1), &nb));
    CHECK(nb == (np > 2 ? 2 : 1));
    OK(MPI_Graph_neighbors(gdup, me, 2, nbr));
    CHECK(nbr[0] == pos(me + 1) && (np <= 2 || nbr[1] == pos(me - 1)));
    OK(MPI_Graph_map(MPI_COMM_WORLD, np, index, edges, &x));
    CHECK(x == me);
    /* My graph neighbours are [me+1, me-1]; me+1 sends me its block 1 (its me-1), me-1
     * its block 0. With np <= 2 there is one neighbour and block 0. */
    int gin[2] = {pos(me + 1), pos(me - 1)};
    run_all(gdup, np > 2 ? 2 : 1, gin, np > 2 ? 2 : 1, gin, np > 2 ? cart_blk : shift_blk);
    MPI_Comm_free(&gdup);
    MPI_Comm_free(&graph);

    /* Distributed graph, adjacent form, weighted: in = me-1, me-2; out = me+1, me+2. */
    int din[2] = {pos(me - 1), pos(me - 2)}, dout[2] = {pos(me + 1), pos(me + 2)};
    int win[2] = {7, 8}, wout[2] = {9, 10};
    MPI_Comm dg;
    OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, din, win, 2, dout, wout, MPI_INFO_NULL, 0,
                                      &dg));
    OK(MPI_Topo_test(dg, &st));
    CHECK(st == MPI_DIST_GRAPH);
    int indeg, outdeg, weighted;
    OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    CHECK(indeg == 2 && outdeg == 2 && weighted);
    int s2[2], sw2[2], d2[2], dw2[2];
    OK(MPI_Dist_graph_neighbors(dg, 2, s2, sw2, 2, d2, dw2));
    CHECK(s2[0] == din[0] && s2[1] == din[1] && sw2[0] == 7 && sw2[1] == 8);
    CHECK(d2[0] == dout[0] && d2[1] == dout[1] && dw2[0] == 9 && dw2[1] == 10);
    run_all(dg, 2, din, 2, dout, shift_blk);
    MPI_Comm_free(&dg);

    /* Distributed graph, general form: rank 0 names every edge i -> i+1 (weight i). */
    int *srcs = malloc((size_t)np * sizeof(int)), *degs = malloc((size_t)np * sizeof(int));
    int *dsts = malloc((size_t)np * sizeof(int)), *ws = malloc((size_t)np * sizeof(int));
    for (int i = 0; i < np; i++) {
        srcs[i] = i;
        degs[i] = 1;
        dsts[i] = pos(i + 1);
        ws[i] = 100 + i;
    }
    OK(MPI_Dist_graph_create(MPI_COMM_WORLD, me == 0 ? np : 0, srcs, degs, dsts, ws, MPI_INFO_NULL,
                             0, &dg));
    OK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted));
    CHECK(indeg == 1 && outdeg == 1 && weighted);
    OK(MPI_Dist_graph_neighbors(dg, 1, s2, sw2, 1, d2, dw2));
    CHECK(s2[0] == pos(me - 1) && sw2[0] == 100 + pos(me - 1));
    CHECK(d2[0] == pos(me + 1) && dw2[0] == 100 + me);
    int one_in[1] = {pos(me - 1)}, one_out[1] = {pos(me + 1)};
    run_all(dg, 1, one_in, 1, one_out, shift_blk);
    MPI_Comm_free(&dg);

    /* Errors: no topology, wrong kind of topology. */
    int buf[4] = {0};
    /* (tern says MPI_ERR_TOPOLOGY, as MPICH does; Open MPI 4.1 says MPI_ERR_INTERN) */
    CHECK(MPI_Neighbor_allgather(buf, 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS);
    FAILS(MPI_Graphdims_get(MPI_COMM_WORLD, &nn, &nedges), MPI_ERR_TOPOLOGY);
    free(index), free(edges), free(gi), free(ge), free(srcs), free(degs), free(dsts), free(ws);
    return mt_done("topo");
}

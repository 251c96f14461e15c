/*
 * mpi_topo.c - graph and distributed-graph topologies and the neighbourhood collectives
 * (MPI 3.1, 7.5-7.6). Cartesian topologies live in mpi_cart.c (dims/periods of struct
 * mpi_comm); graphs hang a struct mpi_topo on the communicator, copied by MPI_Comm_dup.
 *
 * A neighbourhood collective is one schedule of src/coll on the communicator's
 * collective context: a receive from every in-neighbour, a send to every out-neighbour,
 * one wait. The schedule takes the communicator's next collective tag, so it never
 * crosses another collective (blocking or not), and messages between the same pair of
 * processes match in order: with repeated edges, the k-th send along a pair meets the
 * k-th receive. Contiguous blocks move in place; non-contiguous ones are packed into one
 * temporary on the send side, and on the receive side land in one temporary unpacked at
 * completion through a struct datatype covering every block (absolute addresses).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

struct mpi_topo {
    int kind; /* MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_GRAPH: the whole graph as given to MPI_Graph_create */
    int nnodes, nedges;
    int *index, *edges;
    /* this process's neighbours; for MPI_GRAPH in == out == its adjacency list */
    int indeg, outdeg;
    int *in, *inw, *out, *outw;
    int weighted;
};

int mpi_topo_kind(const struct mpi_topo *t)
{
    return t->kind;
}

void mpi_topo_free(struct mpi_topo *t)
{
    if (t == NULL) return;
    free(t->index);
    free(t->edges);
    free(t->in);
    free(t->inw);
    free(t->out);
    free(t->outw);
    free(t);
}

static int *topo_dup_ints(const int *v, int n, int *ok)
{
    if (n == 0 || v == NULL) return NULL;
    int *p = malloc((size_t)n * sizeof *p);
    if (p == NULL) {
        *ok = 0;
        return NULL;
    }
    memcpy(p, v, (size_t)n * sizeof *p);
    return p;
}

int mpi_topo_copy(const struct mpi_topo *t, struct mpi_topo **out)
{
    struct mpi_topo *n = calloc(1, sizeof *n);
    if (n == NULL) return MPI_ERR_NO_MEM;
    *n = *t;
    int ok = 1;
    n->index = topo_dup_ints(t->index, t->nnodes, &ok);
    n->edges = topo_dup_ints(t->edges, t->nedges, &ok);
    n->in = topo_dup_ints(t->in, t->indeg, &ok);
    n->inw = topo_dup_ints(t->inw, t->indeg, &ok);
    n->out = topo_dup_ints(t->out, t->outdeg, &ok);
    n->outw = topo_dup_ints(t->outw, t->outdeg, &ok);
    if (!ok) {
        mpi_topo_free(n);
        return MPI_ERR_NO_MEM;
    }
    *out = n;
    return MPI_SUCCESS;
}

/* The graph topology of comm, or NULL with *rc set (MPI_ERR_COMM / MPI_ERR_TOPOLOGY). */
static struct mpi_topo *topo_of(MPI_Comm comm, int kind, struct mpi_comm **cp, int *rc)
{
    *rc = mpi_state();
    if (*rc) return NULL;
    struct mpi_comm *c = mpi_comm_get(comm);
    *rc = MPI_ERR_COMM;
    if (c == NULL) return NULL;
    if (cp) *cp = c;
    *rc = MPI_ERR_TOPOLOGY;
    if (c->topo == NULL || c->topo->kind != kind) return NULL;
    *rc = MPI_SUCCESS;
    return c->topo;
}

/* ---- graph topology (MPI_Graph_create and its queries) -------------------------------- */

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Graph_create";
    (void)reorder; /* ranks keep their order, as for MPI_Cart_create */
    if (mpi_state()) return mpi_err(comm_old, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm_old);
    if (c == NULL) return mpi_err(comm_old, fn, MPI_ERR_COMM);
    if (comm_graph == NULL || nnodes < 0 || nnodes > c->tc->size ||
        (nnodes > 0 && (index == NULL || edges == NULL)))
        return mpi_err(comm_old, fn, MPI_ERR_ARG);
    int nedges = nnodes ? index[nnodes - 1] : 0;
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0)) return mpi_err(comm_old, fn, MPI_ERR_ARG);
    for (int e = 0; e < nedges; e++)
        if (edges[e] < 0 || edges[e] >= nnodes) return mpi_err(comm_old, fn, MPI_ERR_ARG);
    int me = c->tc->rank;
    int rc = PMPI_Comm_split(comm_old, me < nnodes ? 0 : MPI_UNDEFINED, me, comm_graph);
    if (rc || *comm_graph == MPI_COMM_NULL) return rc;
    struct mpi_topo *t = calloc(1, sizeof *t);
    int ok = t != NULL;
    if (ok) {
        t->kind = MPI_GRAPH;
        t->nnodes = nnodes;
        t->nedges = nedges;
        t->index = topo_dup_ints(index, nnodes, &ok);
        t->edges = topo_dup_ints(edges, nedges, &ok);
        int first = me ? index[me - 1] : 0;
        t->indeg = t->outdeg = index[me] - first;
        t->in = topo_dup_ints(edges + first, t->indeg, &ok);
        t->out = topo_dup_ints(edges + first, t->outdeg, &ok);
    }
    if (!ok) {
        mpi_topo_free(t);
        PMPI_Comm_free(comm_graph);
        return mpi_err(comm_old, fn, MPI_ERR_NO_MEM);
    }
    mpi_comm_get(*comm_graph)->topo = t;
    return MPI_SUCCESS;
}
MPI_ALIAS(Graph_create)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Graphdims_get";
    int rc;
    struct mpi_topo *t = topo_of(comm, MPI_GRAPH, NULL, &rc);
    if (t == NULL) return mpi_err(comm, fn, rc);
    if (nnodes == NULL || nedges == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}
MPI_ALIAS(Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Graph_get";
    int rc;
    struct mpi_topo *t = topo_of(comm, MPI_GRAPH, NULL, &rc);
    if (t == NULL) return mpi_err(comm, fn, rc);
    if (maxindex < 0 || maxedges < 0 || (maxindex > 0 && index == NULL) ||
        (maxedges > 0 && edges == NULL))
        return mpi_err(comm, fn, MPI_ERR_ARG);
    for (int i = 0; i < maxindex && i < t->nnodes; i++)
        index[i] = t->index[i];
    for (int e = 0; e < maxedges && e < t->nedges; e++)
        edges[e] = t->edges[e];
    return MPI_SUCCESS;
}
MPI_ALIAS(Graph_get)

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Graph_neighbors_count";
    int rc;
    struct mpi_topo *t = topo_of(comm, MPI_GRAPH, NULL, &rc);
    if (t == NULL) return mpi_err(comm, fn, rc);
    if (rank < 0 || rank >= t->nnodes) return mpi_err(comm, fn, MPI_ERR_RANK);
    if (nneighbors == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}
MPI_ALIAS(Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Graph_neighbors";
    int rc;
    struct mpi_topo *t = topo_of(comm, MPI_GRAPH, NULL, &rc);
    if (t == NULL) return mpi_err(comm, fn, rc);
    if (rank < 0 || rank >= t->nnodes) return mpi_err(comm, fn, MPI_ERR_RANK);
    if (maxneighbors < 0 || (maxneighbors > 0 && neighbors == NULL))
        return mpi_err(comm, fn, MPI_ERR_ARG);
    int first = rank ? t->index[rank - 1] : 0;
    for (int k = 0; k < maxneighbors && first + k < t->index[rank]; k++)
        neighbors[k] = t->edges[first + k];
    return MPI_SUCCESS;
}
MPI_ALIAS(Graph_neighbors)

/* Mapping: tern keeps ranks in order (no reordering), so a process's rank in the
 * topology is its rank in comm when it takes part. */
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Graph_map";
    (void)index, (void)edges;
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (newrank == NULL || nnodes < 1 || nnodes > c->tc->size)
        return mpi_err(comm, fn, MPI_ERR_ARG);
    *newrank = c->tc->rank < nnodes ? c->tc->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
MPI_ALIAS(Graph_map)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_map";
    (void)periods;
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (newrank == NULL || ndims < 0 || (ndims > 0 && dims == NULL))
        return mpi_err(comm, fn, MPI_ERR_ARG);
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0) return mpi_err(comm, fn, MPI_ERR_DIMS);
        prod *= dims[i];
        if (prod > c->tc->size) return mpi_err(comm, fn, MPI_ERR_DIMS);
    }
    *newrank = c->tc->rank < prod ? c->tc->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_map)

/* ---- distributed graphs ------------------------------------------------------------- */

/* The topology of a new communicator made from comm_old (a duplicate, as tern does not
 * reorder): its neighbour lists. Takes ownership of the arrays. */
static int topo_dist_attach(MPI_Comm comm_old, const char *fn, int indeg, int *in, int *inw,
                            int outdeg, int *out, int *outw, int weighted, MPI_Comm *newcomm)
{
    struct mpi_topo *t = calloc(1, sizeof *t);
    if (t == NULL) {
        free(in), free(inw), free(out), free(outw);
        return mpi_err(comm_old, fn, MPI_ERR_NO_MEM);
    }
    *t = (struct mpi_topo){.kind = MPI_DIST_GRAPH,
                           .indeg = indeg,
                           .in = in,
                           .inw = inw,
                           .outdeg = outdeg,
                           .out = out,
                           .outw = outw,
                           .weighted = weighted};
    int rc = PMPI_Comm_dup(comm_old, newcomm);
    if (rc) {
        mpi_topo_free(t);
        return rc;
    }
    struct mpi_comm *nc = mpi_comm_get(*newcomm);
    mpi_topo_free(nc->topo); /* a dup of a graph communicator inherited its topology */
    nc->ndims = 0;           /* ... or its Cartesian one */
    free(nc->dims);
    free(nc->periods);
    nc->dims = nc->periods = NULL;
    nc->topo = t;
    return MPI_SUCCESS;
}

/* Weights: MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY (only with no edges) or an array. */
static int topo_weights_ok(const int *w, int n)
{
    if (w == MPI_UNWEIGHTED) return 1;
    if (w == MPI_WEIGHTS_EMPTY) return n == 0;
    return n == 0 || w != NULL;
}

static int topo_real_weights(const int *w)
{
    return w != MPI_UNWEIGHTED && w != MPI_WEIGHTS_EMPTY && w != NULL;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    (void)info, (void)reorder;
    if (mpi_state()) return mpi_err(comm_old, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm_old);
    if (c == NULL) return mpi_err(comm_old, fn, MPI_ERR_COMM);
    if (comm_dist_graph == NULL || indegree < 0 || outdegree < 0 ||
        (indegree > 0 && sources == NULL) || (outdegree > 0 && destinations == NULL) ||
        !topo_weights_ok(sourceweights, indegree) || !topo_weights_ok(destweights, outdegree))
        return mpi_err(comm_old, fn, MPI_ERR_ARG);
    for (int i = 0; i < indegree; i++)
        if (sources[i] < 0 || sources[i] >= c->tc->size) return mpi_err(comm_old, fn, MPI_ERR_RANK);
    for (int i = 0; i < outdegree; i++)
        if (destinations[i] < 0 || destinations[i] >= c->tc->size)
            return mpi_err(comm_old, fn, MPI_ERR_RANK);
    int weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    int ok = 1;
    int *in = topo_dup_ints(sources, indegree, &ok);
    int *out = topo_dup_ints(destinations, outdegree, &ok);
    int *inw =
        topo_real_weights(sourceweights) ? topo_dup_ints(sourceweights, indegree, &ok) : NULL;
    int *outw = topo_real_weights(destweights) ? topo_dup_ints(destweights, outdegree, &ok) : NULL;
    if (!ok) {
        free(in), free(inw), free(out), free(outw);
        return mpi_err(comm_old, fn, MPI_ERR_NO_MEM);
    }
    return topo_dist_attach(comm_old, fn, indegree, in, inw, outdegree, out, outw, weighted,
                            comm_dist_graph);
}
MPI_ALIAS(Dist_graph_create_adjacent)

/*
 * MPI_Dist_graph_create: any process may name any edge. Every edge (s -> d, w) is sent,
 * as a triple, to s (an out-edge) and to d (an in-edge) by one MPI_Alltoall of counts and
 * one MPI_Alltoallv of triples on comm_old. A process's neighbours come in the order the
 * triples arrive (by the rank that named them, then in the order it named them); the
 * standard leaves this order to the implementation.
 */
int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int weights[], MPI_Info info,
                           int reorder, MPI_Comm *comm_dist_graph)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Dist_graph_create";
    (void)info, (void)reorder;
    if (mpi_state()) return mpi_err(comm_old, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm_old);
    if (c == NULL) return mpi_err(comm_old, fn, MPI_ERR_COMM);
    int p = c->tc->size;
    if (comm_dist_graph == NULL || n < 0 || (n > 0 && (sources == NULL || degrees == NULL)))
        return mpi_err(comm_old, fn, MPI_ERR_ARG);
    long ne = 0;
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0) return mpi_err(comm_old, fn, MPI_ERR_ARG);
        if (sources[i] < 0 || sources[i] >= p) return mpi_err(comm_old, fn, MPI_ERR_RANK);
        ne += degrees[i];
    }
    if ((ne > 0 && destinations == NULL) || !topo_weights_ok(weights, (int)ne))
        return mpi_err(comm_old, fn, MPI_ERR_ARG);
    for (long e = 0; e < ne; e++)
        if (destinations[e] < 0 || destinations[e] >= p) return mpi_err(comm_old, fn, MPI_ERR_RANK);
    int weighted = weights != MPI_UNWEIGHTED;
    /* Triples (1 out / 0 in, peer, weight) per receiving rank. */
    int *scount = calloc((size_t)p, sizeof(int)), *rcount = calloc((size_t)p, sizeof(int));
    int *sdis = calloc((size_t)p, sizeof(int)), *rdis = calloc((size_t)p, sizeof(int));
    int *fill = calloc((size_t)p, sizeof(int));
    int *sbuf = malloc((size_t)(ne ? ne : 1) * 6 * sizeof(int));
    int *rbuf = NULL, *in = NULL, *inw = NULL, *out = NULL, *outw = NULL;
    int rc = MPI_ERR_NO_MEM;
    if (!scount || !rcount || !sdis || !rdis || !fill || !sbuf) goto done;
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            scount[sources[i]] += 3;
            scount[destinations[e]] += 3;
        }
    for (int r = 1; r < p; r++)
        sdis[r] = sdis[r - 1] + scount[r - 1];
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            int s = sources[i], d = destinations[e],
                w = topo_real_weights(weights) ? weights[e] : 1;
            int *q = sbuf + sdis[s] + fill[s];
            q[0] = 1, q[1] = d, q[2] = w;
            fill[s] += 3;
            q = sbuf + sdis[d] + fill[d];
            q[0] = 0, q[1] = s, q[2] = w;
            fill[d] += 3;
        }
    if ((rc = PMPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm_old))) goto done;
    int rtotal = 0;
    for (int r = 0; r < p; r++) {
        rdis[r] = rtotal;
        rtotal += rcount[r];
    }
    rc = MPI_ERR_NO_MEM;
    if ((rbuf = malloc((size_t)(rtotal ? rtotal : 1) * sizeof(int))) == NULL) goto done;
    if ((rc = PMPI_Alltoallv(sbuf, scount, sdis, MPI_INT, rbuf, rcount, rdis, MPI_INT, comm_old)))
        goto done;
    int indeg = 0, outdeg = 0;
    for (int k = 0; k < rtotal; k += 3)
        rbuf[k] ? outdeg++ : indeg++;
    rc = MPI_ERR_NO_MEM;
    in = malloc((size_t)(indeg + 1) * sizeof(int));
    inw = malloc((size_t)(indeg + 1) * sizeof(int));
    out = malloc((size_t)(outdeg + 1) * sizeof(int));
    outw = malloc((size_t)(outdeg + 1) * sizeof(int));
    if (!in || !inw || !out || !outw) goto done;
    indeg = outdeg = 0;
    for (int k = 0; k < rtotal; k += 3) {
        if (rbuf[k]) {
            out[outdeg] = rbuf[k + 1];
            outw[outdeg++] = rbuf[k + 2];
        } else {
            in[indeg] = rbuf[k + 1];
            inw[indeg++] = rbuf[k + 2];
        }
    }
    rc = topo_dist_attach(comm_old, fn, indeg, in, inw, outdeg, out, outw, weighted,
                          comm_dist_graph);
    in = inw = out = outw = NULL;
done:
    free(scount), free(rcount), free(sdis), free(rdis), free(fill), free(sbuf), free(rbuf);
    free(in), free(inw), free(out), free(outw);
    return rc == MPI_ERR_NO_MEM ? mpi_err(comm_old, fn, rc) : rc;
}
MPI_ALIAS(Dist_graph_create)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    int rc;
    struct mpi_topo *t = topo_of(comm, MPI_DIST_GRAPH, NULL, &rc);
    if (t == NULL) return mpi_err(comm, fn, rc);
    if (indegree == NULL || outdegree == NULL || weighted == NULL)
        return mpi_err(comm, fn, MPI_ERR_ARG);
    *indegree = t->indeg;
    *outdegree = t->outdeg;
    *weighted = t->weighted;
    return MPI_SUCCESS;
}
MPI_ALIAS(Dist_graph_neighbors_count)

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Dist_graph_neighbors";
    int rc;
    struct mpi_topo *t = topo_of(comm, MPI_DIST_GRAPH, NULL, &rc);
    if (t == NULL) return mpi_err(comm, fn, rc);
    if (maxindegree < 0 || maxoutdegree < 0 || (maxindegree > 0 && sources == NULL) ||
        (maxoutdegree > 0 && destinations == NULL))
        return mpi_err(comm, fn, MPI_ERR_ARG);
    for (int i = 0; i < maxindegree && i < t->indeg; i++) {
        sources[i] = t->in[i];
        if (topo_real_weights(sourceweights)) sourceweights[i] = t->inw ? t->inw[i] : 1;
    }
    for (int i = 0; i < maxoutdegree && i < t->outdeg; i++) {
        destinations[i] = t->out[i];
        if (topo_real_weights(destweights)) destweights[i] = t->outw ? t->outw[i] : 1;
    }
    return MPI_SUCCESS;
}
MPI_ALIAS(Dist_graph_neighbors)

/* ---- neighbourhood collectives ------------------------------------------------------- */

/* One block of a neighbourhood collective: count elements of t at p, to/from peer. */
struct nb_blk {
    char *p;
    int count;
    struct mpi_type *t;
};

/* The neighbours of comm's topology: in[indeg], out[outdeg] (MPI_PROC_NULL allowed for
 * Cartesian ones). Cartesian: for each dimension the -1 then the +1 neighbour, the same
 * list in and out (MPI 3.1, 7.6). *cart holds the Cartesian list (freed by the caller). */
static int nb_neighbours(MPI_Comm comm, struct mpi_comm *c, int *indeg, const int **in, int *outdeg,
                         const int **out, int **cart)
{
    *cart = NULL;
    if (c->topo) {
        *indeg = c->topo->indeg;
        *in = c->topo->in;
        *outdeg = c->topo->outdeg;
        *out = c->topo->out;
        return MPI_SUCCESS;
    }
    if (c->ndims == 0) return MPI_ERR_TOPOLOGY;
    int nd = c->ndims < 0 ? 0 : c->ndims;
    if ((*cart = malloc((size_t)(2 * nd + 1) * sizeof(int))) == NULL) return MPI_ERR_NO_MEM;
    for (int d = 0; d < nd; d++) {
        int rc = PMPI_Cart_shift(comm, d, 1, &(*cart)[2 * d], &(*cart)[2 * d + 1]);
        if (rc) return rc;
    }
    *indeg = *outdeg = 2 * nd;
    *in = *out = *cart;
    return MPI_SUCCESS;
}

/*
 * Run (req NULL) or start a neighbourhood exchange: rb[i] from in[i], sb[j] to out[j].
 * Blocks and types were checked by the caller.
 */
static int nb_exchange(const char *fn, MPI_Comm comm, struct mpi_comm *c, int nin, const int *in,
                       const struct nb_blk *rb, int nout, const int *out, const struct nb_blk *sb,
                       MPI_Request *req)
{
    size_t spack = 0, rpack = 0;
    int rnc = 0; /* receive blocks not contiguous */
    for (int j = 0; j < nout; j++)
        if (out[j] != MPI_PROC_NULL && !sb[j].t->contig)
            spack += (size_t)sb[j].count * (size_t)sb[j].t->size;
    for (int i = 0; i < nin; i++)
        if (in[i] != MPI_PROC_NULL) {
            rpack += (size_t)rb[i].count * (size_t)rb[i].t->size;
            rnc |= !rb[i].t->contig;
        }
    if (!rnc) rpack = 0;
    char *tmp = NULL;
    if (spack + rpack && (tmp = malloc(spack + rpack)) == NULL)
        return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    struct mpi_type *ut = NULL;
    if (rnc) { /* one struct type over every receive block, absolute addresses */
        int *cnt = malloc((size_t)nin * sizeof(int) + 1);
        MPI_Aint *dis = malloc((size_t)nin * sizeof(MPI_Aint) + 1);
        MPI_Datatype *ty = malloc((size_t)nin * sizeof(MPI_Datatype) + 1), nt;
        int k = 0, rc = MPI_ERR_NO_MEM;
        if (cnt && dis && ty) {
            for (int i = 0; i < nin; i++)
                if (in[i] != MPI_PROC_NULL) {
                    cnt[k] = rb[i].count;
                    dis[k] = (MPI_Aint)(uintptr_t)rb[i].p;
                    ty[k++] = rb[i].t->handle;
                }
            rc = PMPI_Type_create_struct(k, cnt, dis, ty, &nt);
            if (rc == 0 && (rc = PMPI_Type_commit(&nt)) == 0) {
                ut = mpi_type_get(nt);
                mpi_type_ref(ut);
                PMPI_Type_free(&nt);
            }
        }
        free(cnt), free(dis), free(ty);
        if (rc) {
            free(tmp);
            return mpi_err(comm, fn, rc);
        }
    }
    struct coll_sched stack, *s = &stack;
    struct mpi_req *mr = NULL;
    if (req && ((s = malloc(sizeof *s)) == NULL || (mr = mpi_req_new(MPI_RK_COLL, comm)) == NULL)) {
        free(s);
        free(tmp);
        if (ut) mpi_type_unref(ut);
        return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    }
    coll_sched_init_as(s, c->tc, req != NULL);
    s->name = fn;
    char *rp = rnc ? tmp + spack : NULL; /* tmp is NULL when nothing is packed */
    for (int i = 0; i < nin; i++) {
        if (in[i] == MPI_PROC_NULL) continue;
        size_t n = (size_t)rb[i].count * (size_t)rb[i].t->size;
        if (rnc) {
            coll_recv(s, rp, n, in[i]);
            rp += n;
        } else {
            coll_recv(s, rb[i].p + rb[i].t->contig_off, n, in[i]);
        }
    }
    char *sp = tmp;
    /* Cartesian: in each dimension the send to the positive side goes first. A process
     * that is both neighbours (a ring of 1 or 2) then receives, in its posting order
     * (negative source first), the block its negative neighbour sent in the positive
     * direction, as MPI 4.0 7.6 says, though both messages have one tag. */
    int cart_order = c->ndims > 0 && nout % 2 == 0;
    for (int jj = 0; jj < nout; jj++) {
        int j = cart_order ? jj ^ 1 : jj;
        if (out[j] == MPI_PROC_NULL) continue;
        size_t n = (size_t)sb[j].count * (size_t)sb[j].t->size;
        if (sb[j].t->contig) {
            coll_send(s, sb[j].p + sb[j].t->contig_off, n, out[j]);
        } else {
            mpi_pack(sb[j].p, sb[j].count, sb[j].t, sp);
            coll_send(s, sp, n, out[j]);
            sp += n;
        }
    }
    coll_wait(s);
    int rc;
    if (req) {
        rc = coll_sched_start(s, 0, &mr->r);
        if (rc) {
            free(tmp);
            if (ut) mpi_type_unref(ut);
            mpi_req_release(mr);
            return mpi_err(comm, fn, mpi_from_tern(rc));
        }
        mr->tmp = tmp;
        if (ut) {
            mr->unpack = 1;
            mr->ubuf = MPI_BOTTOM;
            mr->ucount = 1;
            mr->utype = ut;
            mr->uoff = spack;
        }
        *req = mr->handle;
        return MPI_SUCCESS;
    }
    rc = coll_sched_run(s, 0);
    if (rc == 0 && ut) mpi_unpack(tmp + spack, (size_t)ut->size, MPI_BOTTOM, 1, ut);
    if (ut) mpi_type_unref(ut);
    free(tmp);
    return rc ? mpi_err(comm, fn, mpi_from_tern(rc)) : MPI_SUCCESS;
}

/* What a neighbourhood call shares: the checks of comm and the neighbour lists. */
#define NB_BEGIN(fn, comm)                                                                         \
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);                                      \
    struct mpi_comm *c = mpi_comm_get(comm);                                                       \
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);                                         \
    int nin, nout, *cart;                                                                          \
    const int *in, *out;                                                                           \
    int rc = nb_neighbours(comm, c, &nin, &in, &nout, &out, &cart);                                \
    if (rc) {                                                                                      \
        free(cart);                                                                                \
        return mpi_err(comm, fn, rc);                                                              \
    }                                                                                              \
    struct nb_blk *rb = malloc((size_t)(nin + nout + 1) * sizeof *rb), *sb = rb + nin;             \
    if (rb == NULL) {                                                                              \
        free(cart);                                                                                \
        return mpi_err(comm, fn, MPI_ERR_NO_MEM);                                                  \
    }

#define NB_END(fn, comm, req)                                                                      \
    rc = rc ? mpi_err(comm, fn, rc) : nb_exchange(fn, comm, c, nin, in, rb, nout, out, sb, req);   \
    free(rb);                                                                                      \
    free(cart);                                                                                    \
    return rc

/* A block's checks: count, committed type, buffer. */
static int nb_blk_set(struct nb_blk *b, const void *buf, MPI_Aint off, int count, MPI_Datatype dt)
{
    if (buf == MPI_IN_PLACE) return MPI_ERR_BUFFER; /* not allowed in neighbourhood calls */
    if (count < 0) return MPI_ERR_COUNT;
    if ((b->t = mpi_type_ok(dt)) == NULL) return MPI_ERR_TYPE;
    /* MPI_BOTTOM (NULL) with absolute addresses (in the type or in off) is valid. */
    if (buf == NULL && off == 0 && count > 0 && b->t->predefined && b->t->size > 0)
        return MPI_ERR_BUFFER;
    b->p = (char *)(uintptr_t)buf + off;
    b->count = count;
    return MPI_SUCCESS;
}

static int nb_allgather(const char *fn, const void *sbuf, int scount, MPI_Datatype stype,
                        void *rbuf, const int *rcounts, int rcount, const int *displs,
                        MPI_Datatype rtype, MPI_Comm comm, MPI_Request *req)
{
    NB_BEGIN(fn, comm);
    struct mpi_type *rt = mpi_type_ok(rtype);
    if (rt == NULL) rc = MPI_ERR_TYPE;
    if (rc == 0 && rcounts && nin > 0 && displs == NULL) rc = MPI_ERR_ARG;
    for (int j = 0; j < nout && rc == 0; j++)
        rc = nb_blk_set(&sb[j], sbuf, 0, scount, stype);
    for (int i = 0; i < nin && rc == 0; i++) {
        MPI_Aint ext = mpi_type_extent(rt);
        rc = rcounts ? nb_blk_set(&rb[i], rbuf, (MPI_Aint)displs[i] * ext, rcounts[i], rtype)
                     : nb_blk_set(&rb[i], rbuf, (MPI_Aint)i * rcount * ext, rcount, rtype);
    }
    NB_END(fn, comm, req);
}

/* alltoall (counts NULL) and alltoallv (counts and element displacements). */
static int nb_alltoall(const char *fn, const void *sbuf, int scount, const int *scounts,
                       const int *sdispls, MPI_Datatype stype, void *rbuf, int rcount,
                       const int *rcounts, const int *rdispls, MPI_Datatype rtype, MPI_Comm comm,
                       MPI_Request *req)
{
    NB_BEGIN(fn, comm);
    struct mpi_type *st = mpi_type_ok(stype), *rt = mpi_type_ok(rtype);
    if (st == NULL || rt == NULL) rc = MPI_ERR_TYPE;
    if (rc == 0 && ((scounts && nout > 0 && !sdispls) || (rcounts && nin > 0 && !rdispls)))
        rc = MPI_ERR_ARG;
    for (int j = 0; j < nout && rc == 0; j++) {
        MPI_Aint ext = mpi_type_extent(st);
        MPI_Aint off = scounts ? (MPI_Aint)sdispls[j] * ext : (MPI_Aint)j * scount * ext;
        rc = nb_blk_set(&sb[j], sbuf, off, scounts ? scounts[j] : scount, stype);
    }
    for (int i = 0; i < nin && rc == 0; i++) {
        MPI_Aint ext = mpi_type_extent(rt);
        MPI_Aint off = rcounts ? (MPI_Aint)rdispls[i] * ext : (MPI_Aint)i * rcount * ext;
        rc = nb_blk_set(&rb[i], rbuf, off, rcounts ? rcounts[i] : rcount, rtype);
    }
    NB_END(fn, comm, req);
}

/* alltoallw: a type per block, byte displacements. */
static int nb_alltoallw(const char *fn, const void *sbuf, const int *scounts,
                        const MPI_Aint *sdispls, const MPI_Datatype *stypes, void *rbuf,
                        const int *rcounts, const MPI_Aint *rdispls, const MPI_Datatype *rtypes,
                        MPI_Comm comm, MPI_Request *req)
{
    NB_BEGIN(fn, comm);
    if ((nout > 0 && (!scounts || !sdispls || !stypes)) ||
        (nin > 0 && (!rcounts || !rdispls || !rtypes)))
        rc = MPI_ERR_ARG;
    for (int j = 0; j < nout && rc == 0; j++)
        rc = nb_blk_set(&sb[j], sbuf, sdispls[j], scounts[j], stypes[j]);
    for (int i = 0; i < nin && rc == 0; i++)
        rc = nb_blk_set(&rb[i], rbuf, rdispls[i], rcounts[i], rtypes[i]);
    NB_END(fn, comm, req);
}

int PMPI_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return nb_allgather("MPI_Neighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, NULL,
                        recvcount, NULL, recvtype, comm, NULL);
}
MPI_ALIAS(Neighbor_allgather)

int PMPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ineighbor_allgather", MPI_ERR_ARG);
    return nb_allgather("MPI_Ineighbor_allgather", sendbuf, sendcount, sendtype, recvbuf, NULL,
                        recvcount, NULL, recvtype, comm, request);
}
MPI_ALIAS(Ineighbor_allgather)

int PMPI_Neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Neighbor_allgatherv";
    if (recvcounts == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    return nb_allgather(fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, 0, displs, recvtype,
                        comm, NULL);
}
MPI_ALIAS(Neighbor_allgatherv)

int PMPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, const int recvcounts[], const int displs[],
                              MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Ineighbor_allgatherv";
    if (recvcounts == NULL || request == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    return nb_allgather(fn, sendbuf, sendcount, sendtype, recvbuf, recvcounts, 0, displs, recvtype,
                        comm, request);
}
MPI_ALIAS(Ineighbor_allgatherv)

int PMPI_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                           int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return nb_alltoall("MPI_Neighbor_alltoall", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                       recvcount, NULL, NULL, recvtype, comm, NULL);
}
MPI_ALIAS(Neighbor_alltoall)

int PMPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                            MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ineighbor_alltoall", MPI_ERR_ARG);
    return nb_alltoall("MPI_Ineighbor_alltoall", sendbuf, sendcount, NULL, NULL, sendtype, recvbuf,
                       recvcount, NULL, NULL, recvtype, comm, request);
}
MPI_ALIAS(Ineighbor_alltoall)

int PMPI_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Neighbor_alltoallv";
    if (sendcounts == NULL || recvcounts == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    return nb_alltoall(fn, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                       rdispls, recvtype, comm, NULL);
}
MPI_ALIAS(Neighbor_alltoallv)

int PMPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                             MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                             const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                             MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Ineighbor_alltoallv";
    if (sendcounts == NULL || recvcounts == NULL || request == NULL)
        return mpi_err(comm, fn, MPI_ERR_ARG);
    return nb_alltoall(fn, sendbuf, 0, sendcounts, sdispls, sendtype, recvbuf, 0, recvcounts,
                       rdispls, recvtype, comm, request);
}
MPI_ALIAS(Ineighbor_alltoallv)

int PMPI_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return nb_alltoallw("MPI_Neighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                        recvcounts, rdispls, recvtypes, comm, NULL);
}
MPI_ALIAS(Neighbor_alltoallw)

int PMPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                             const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                             const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                             MPI_Comm comm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    if (request == NULL) return mpi_err(comm, "MPI_Ineighbor_alltoallw", MPI_ERR_ARG);
    return nb_alltoallw("MPI_Ineighbor_alltoallw", sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                        recvcounts, rdispls, recvtypes, comm, request);
}
MPI_ALIAS(Ineighbor_alltoallw)

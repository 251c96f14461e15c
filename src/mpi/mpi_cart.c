/*
 * mpi_cart.c - MPI Cartesian topologies: MPI_Dims_create, MPI_Cart_create and the
 * queries and shifts on a Cartesian communicator (Cart_coords, Cart_rank, Cart_shift,
 * Cart_get, Cartdim_get, Cart_sub), and MPI_Topo_test. Graph topologies are in
 * mpi_topo.c.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_comm_impl.h"

/* ---- Cartesian topologies --------------------------------------------------------------- */

/* Factors cur[at..n-1] of r, non-increasing, each at most cur[at-1], from divs[] (the
 * divisors of the original product). Keeps in best the factorisation with the least
 * spread between largest and smallest dimension, and among those the one whose smallest
 * dimension is largest (then the next smallest, ...): the most balanced, as MPI asks,
 * and MPICH's choice (its test suite checks 75,000 cases). *spread is -1 before the
 * first. */
static void mpi_dims_search(int r, int n, int at, int *cur, const int *divs, int ndivs, int *best,
                            int *spread)
{
    if (at == n - 1) {
        if (at > 0 && r > cur[at - 1]) return;
        cur[at] = r;
        int sp = cur[0] - r;
        if (*spread >= 0 && sp > *spread) return;
        if (*spread >= 0 && sp == *spread) {
            int k = n - 1;
            while (k >= 0 && cur[k] == best[k])
                k--;
            if (k < 0 || cur[k] < best[k]) return;
        }
        *spread = sp;
        memcpy(best, cur, (size_t)n * sizeof(int));
        return;
    }
    int hi = at > 0 && cur[at - 1] < r ? cur[at - 1] : r;
    for (int i = 0; i < ndivs && divs[i] <= hi; i++) {
        int d = divs[i];
        if (r % d) continue;
        /* the remaining n - at factors are each <= d: d^(n-at) must reach r */
        long long reach = 1;
        for (int k = 0; k < n - at && reach < r; k++)
            reach *= d;
        if (reach < r) continue;
        /* the smallest dimension will be <= d: the spread is at least cur[0] - d */
        if (*spread >= 0 && at > 0 && cur[0] - d > *spread) continue;
        cur[at] = d;
        mpi_dims_search(r / d, n, at + 1, cur, divs, ndivs, best, spread);
    }
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Dims_create";
    if (nnodes < 1 || ndims < 0 || (ndims > 0 && dims == NULL))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    int rest = nnodes, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_DIMS);
        if (dims[i] > 0) {
            if (rest % dims[i]) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_DIMS);
            rest /= dims[i];
        } else {
            nfree++;
        }
    }
    if (nfree == 0) return rest == 1 ? MPI_SUCCESS : mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_DIMS);
    int *f = malloc((size_t)nfree * sizeof(int));
    if (f == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    for (int i = 0; i < nfree; i++)
        f[i] = 1;
    /* The most balanced factorisation (MPI: dimensions as close to each other as
     * possible), found by a search over divisors (mpi_dims_search). */
    int ndivs = 0;
    for (long long d = 1; d * d <= rest; d++)
        if (rest % d == 0) ndivs += d * d == rest ? 1 : 2;
    int *cur = malloc((size_t)nfree * sizeof(int)), *divs = malloc((size_t)ndivs * sizeof(int));
    if (cur == NULL || divs == NULL) {
        free(f);
        free(cur);
        free(divs);
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    }
    int lo = 0, hi = ndivs - 1; /* divisors in increasing order */
    for (long long d = 1; d * d <= rest; d++)
        if (rest % d == 0) {
            divs[lo++] = (int)d;
            if (d * d != rest) divs[hi--] = (int)(rest / d);
        }
    int spread = -1; /* r x 1 x ... x 1 always fits, so f is always set */
    mpi_dims_search(rest, nfree, 0, cur, divs, ndivs, f, &spread);
    free(cur);
    free(divs);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0) dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}
MPI_ALIAS(Dims_create)

static int mpi_set_cart(MPI_Comm h, int ndims, const int dims[], const int periods[])
{
    struct mpi_comm *c = mpi_comm_get(h);
    if (c == NULL) return MPI_SUCCESS; /* MPI_COMM_NULL: not a member */
    c->ndims = ndims ? ndims : -1;
    if (ndims == 0) return MPI_SUCCESS;
    c->dims = malloc((size_t)ndims * sizeof(int));
    c->periods = malloc((size_t)ndims * sizeof(int));
    if (!c->dims || !c->periods) return MPI_ERR_NO_MEM;
    for (int i = 0; i < ndims; i++) {
        c->dims[i] = dims[i];
        c->periods[i] = periods[i] != 0;
    }
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_create";
    (void)reorder;
    COMM_CHECK(fn, comm_old, comm_cart);
    if (ndims < 0 || (ndims > 0 && (dims == NULL || periods == NULL)))
        return mpi_err(comm_old, fn, MPI_ERR_ARG);
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0) return mpi_err(comm_old, fn, MPI_ERR_DIMS);
        prod *= dims[i];
        if (prod > c->tc->size) return mpi_err(comm_old, fn, MPI_ERR_DIMS);
    }
    int r = c->tc->rank;
    int rc = mpi_split(fn, comm_old, r < prod ? 0 : MPI_UNDEFINED, r, comm_cart);
    if (rc) return rc;
    return mpi_err(comm_old, fn, mpi_set_cart(*comm_cart, ndims, dims, periods));
}
MPI_ALIAS(Cart_create)

#define CART_CHECK(fn, comm)                                                                       \
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);                                      \
    struct mpi_comm *c = mpi_comm_get(comm);                                                       \
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);                                         \
    if (c->ndims == 0) return mpi_err(comm, fn, MPI_ERR_TOPOLOGY);                                 \
    int nd = c->ndims < 0 ? 0 : c->ndims

static void mpi_cart_coords(const struct mpi_comm *c, int nd, int rank, int *coords)
{
    for (int i = nd - 1; i >= 0; i--) {
        coords[i] = rank % c->dims[i];
        rank /= c->dims[i];
    }
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_coords";
    CART_CHECK(fn, comm);
    if (rank < 0 || rank >= c->tc->size) return mpi_err(comm, fn, MPI_ERR_RANK);
    if (maxdims < nd || (nd > 0 && coords == NULL)) return mpi_err(comm, fn, MPI_ERR_ARG);
    mpi_cart_coords(c, nd, rank, coords);
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_coords)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_rank";
    CART_CHECK(fn, comm);
    if (rank == NULL || (nd > 0 && coords == NULL)) return mpi_err(comm, fn, MPI_ERR_ARG);
    int r = 0;
    for (int i = 0; i < nd; i++) {
        int x = coords[i];
        if (c->periods[i]) {
            x %= c->dims[i];
            if (x < 0) x += c->dims[i];
        } else if (x < 0 || x >= c->dims[i]) {
            return mpi_err(comm, fn, MPI_ERR_RANK);
        }
        r = r * c->dims[i] + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_rank)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_shift";
    CART_CHECK(fn, comm);
    if (direction < 0 || direction >= nd) return mpi_err(comm, fn, MPI_ERR_DIMS);
    if (rank_source == NULL || rank_dest == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    int coords[64];
    if (nd > 64) return mpi_err(comm, fn, MPI_ERR_DIMS);
    mpi_cart_coords(c, nd, c->tc->rank, coords);
    int me = coords[direction];
    int out[2], d[2] = {-disp, disp};
    for (int k = 0; k < 2; k++) {
        int x = me + d[k], n = c->dims[direction];
        if (c->periods[direction]) {
            x %= n;
            if (x < 0) x += n;
        } else if (x < 0 || x >= n) {
            out[k] = MPI_PROC_NULL;
            continue;
        }
        coords[direction] = x;
        int r = 0;
        for (int i = 0; i < nd; i++)
            r = r * c->dims[i] + coords[i];
        out[k] = r;
        coords[direction] = me;
    }
    *rank_source = out[0];
    *rank_dest = out[1];
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_shift)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_get";
    CART_CHECK(fn, comm);
    if (maxdims < nd || (nd > 0 && (!dims || !periods || !coords)))
        return mpi_err(comm, fn, MPI_ERR_ARG);
    for (int i = 0; i < nd; i++) {
        dims[i] = c->dims[i];
        periods[i] = c->periods[i];
    }
    mpi_cart_coords(c, nd, c->tc->rank, coords);
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_get)

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cartdim_get";
    CART_CHECK(fn, comm);
    if (ndims == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    *ndims = nd;
    return MPI_SUCCESS;
}
MPI_ALIAS(Cartdim_get)

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_sub";
    CART_CHECK(fn, comm);
    if (newcomm == NULL || (nd > 0 && remain_dims == NULL)) return mpi_err(comm, fn, MPI_ERR_ARG);
    int coords[64], ndims = 0, dims[64], periods[64];
    if (nd > 64) return mpi_err(comm, fn, MPI_ERR_DIMS);
    mpi_cart_coords(c, nd, c->tc->rank, coords);
    /* Colour: position along the dropped dimensions; key: along the kept ones. */
    int color = 0, key = 0;
    for (int i = 0; i < nd; i++) {
        if (remain_dims[i]) {
            key = key * c->dims[i] + coords[i];
            dims[ndims] = c->dims[i];
            periods[ndims++] = c->periods[i];
        } else {
            color = color * c->dims[i] + coords[i];
        }
    }
    /* Nothing kept: one zero-dimensional communicator, of the process at rank 0 (its
     * grid has one point, as MPI_Cart_create with ndims 0 gives; MPICH does the same);
     * the others get MPI_COMM_NULL. */
    if (ndims == 0) color = c->tc->rank == 0 ? 0 : MPI_UNDEFINED;
    int rc = mpi_split(fn, comm, color, key, newcomm);
    if (rc || *newcomm == MPI_COMM_NULL) return rc;
    return mpi_err(comm, fn, mpi_set_cart(*newcomm, ndims, dims, periods));
}
MPI_ALIAS(Cart_sub)

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Topo_test", comm, status);
    *status = c->ndims ? MPI_CART : c->topo ? mpi_topo_kind(c->topo) : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
MPI_ALIAS(Topo_test)

/*
 * abi_special.c - the hand-written functions of libmpi_abi.so.1 (the rest are generated
 * into mpi_abi_gen.c by gen_mpi_abi.py): callbacks through trampolines (user reduction
 * operations, attribute copy/delete functions, error handlers, generalized requests),
 * arrays of handles and statuses, attribute values that are constants, the
 * MPI_UNWEIGHTED sentinels and MPI_Abi_*.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/abi/abi.h"

/* ---- arrays ------------------------------------------------------------------------ */

/* Arrays up to ABI_STACK elements convert on the stack, longer ones in malloc'd memory. */
#define ABI_STACK 32

struct abi_reqs {
    MPI_Request stack[ABI_STACK], *t;
    MPI_Status sstack[ABI_STACK], *st;
};

static int reqs_in(struct abi_reqs *r, int n, const abi_Request_t *a, int statuses)
{
    r->t = r->stack;
    r->st = r->sstack;
    if (n < 0) n = 0;
    if (n > ABI_STACK) {
        r->t = malloc((size_t)n * sizeof *r->t);
        r->st = statuses ? malloc((size_t)n * sizeof *r->st) : NULL;
        if (!r->t || (statuses && !r->st)) {
            free(r->t);
            free(r->st);
            return 0;
        }
    }
    for (int i = 0; i < n; i++)
        r->t[i] = abi_in_Request(a[i]);
    return 1;
}

static void reqs_out(struct abi_reqs *r, int n, abi_Request_t *a)
{
    for (int i = 0; i < n; i++)
        a[i] = abi_out_Request(r->t[i]);
    if (r->t != r->stack) free(r->t);
    if (r->st != r->sstack) free(r->st);
}

/* The statuses of a call that returns several: their error fields only with
 * MPI_ERR_IN_STATUS. */
static void statuses_out(abi_status_t *a, const MPI_Status *t, int n, int rc)
{
    for (int i = 0; i < n; i++)
        if (rc == MPI_ERR_IN_STATUS)
            abi_status_out_err(&a[i], &t[i]);
        else
            abi_status_out(&a[i], &t[i]);
}

ABI_EXPORT(int, Waitall, (int count, abi_Request_t requests[], abi_status_t *statuses))
{
    struct abi_reqs r;
    if (!reqs_in(&r, count, requests, statuses != NULL)) return abi_err_out(MPI_ERR_NO_MEM);
    int rc = PMPI_Waitall(count, r.t, statuses ? r.st : MPI_STATUSES_IGNORE);
    if (statuses) statuses_out(statuses, r.st, count, rc);
    reqs_out(&r, count, requests);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Testall, (int count, abi_Request_t requests[], int *flag, abi_status_t *statuses))
{
    struct abi_reqs r;
    if (!reqs_in(&r, count, requests, statuses != NULL)) return abi_err_out(MPI_ERR_NO_MEM);
    int rc = PMPI_Testall(count, r.t, flag, statuses ? r.st : MPI_STATUSES_IGNORE);
    if (statuses && flag && *flag) statuses_out(statuses, r.st, count, rc);
    reqs_out(&r, count, requests);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Waitany, (int count, abi_Request_t requests[], int *index, abi_status_t *status))
{
    struct abi_reqs r;
    MPI_Status ts;
    if (!reqs_in(&r, count, requests, 0)) return abi_err_out(MPI_ERR_NO_MEM);
    int rc = PMPI_Waitany(count, r.t, index, status ? &ts : MPI_STATUS_IGNORE);
    if (status) abi_status_out(status, &ts);
    reqs_out(&r, count, requests);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Testany,
           (int count, abi_Request_t requests[], int *index, int *flag, abi_status_t *status))
{
    struct abi_reqs r;
    MPI_Status ts;
    if (!reqs_in(&r, count, requests, 0)) return abi_err_out(MPI_ERR_NO_MEM);
    int rc = PMPI_Testany(count, r.t, index, flag, status ? &ts : MPI_STATUS_IGNORE);
    if (status && flag && *flag) abi_status_out(status, &ts);
    reqs_out(&r, count, requests);
    return abi_err_out(rc);
}

static int some(int test, int incount, abi_Request_t requests[], int *outcount, int indices[],
                abi_status_t *statuses)
{
    struct abi_reqs r;
    if (!reqs_in(&r, incount, requests, statuses != NULL)) return abi_err_out(MPI_ERR_NO_MEM);
    MPI_Status *st = statuses ? r.st : MPI_STATUSES_IGNORE;
    int rc = test ? PMPI_Testsome(incount, r.t, outcount, indices, st)
                  : PMPI_Waitsome(incount, r.t, outcount, indices, st);
    if (statuses && outcount && *outcount != MPI_UNDEFINED)
        statuses_out(statuses, r.st, *outcount, rc);
    reqs_out(&r, incount, requests);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Waitsome,
           (int incount, abi_Request_t requests[], int *outcount, int indices[],
            abi_status_t *statuses))
{
    return some(0, incount, requests, outcount, indices, statuses);
}

ABI_EXPORT(int, Testsome,
           (int incount, abi_Request_t requests[], int *outcount, int indices[],
            abi_status_t *statuses))
{
    return some(1, incount, requests, outcount, indices, statuses);
}

ABI_EXPORT(int, Startall, (int count, abi_Request_t requests[]))
{
    struct abi_reqs r;
    if (!reqs_in(&r, count, requests, 0)) return abi_err_out(MPI_ERR_NO_MEM);
    int rc = PMPI_Startall(count, r.t);
    reqs_out(&r, count, requests);
    return abi_err_out(rc);
}

/* Datatype arrays: *buf is the stack array or malloc'd (free with types_done). */
static MPI_Datatype *types_in(const abi_Datatype_t *a, int n, MPI_Datatype *stack)
{
    MPI_Datatype *t = stack;
    if (n > ABI_STACK && !(t = malloc((size_t)n * sizeof *t))) return NULL;
    for (int i = 0; i < n; i++)
        t[i] = abi_in_Datatype(a[i]);
    return t;
}

static void types_done(MPI_Datatype *t, MPI_Datatype *stack)
{
    if (t != stack) free(t);
}

ABI_EXPORT(int, Type_create_struct,
           (int count, const int blocklengths[], const MPI_Aint displacements[],
            const abi_Datatype_t types[], abi_Datatype_t *newtype))
{
    MPI_Datatype stack[ABI_STACK] = {0}, *t = types_in(types, count, stack), nt = MPI_DATATYPE_NULL;
    if (!t) return abi_err_out(MPI_ERR_NO_MEM);
    int rc = PMPI_Type_create_struct(count, blocklengths, displacements, t, &nt);
    types_done(t, stack);
    if (rc == MPI_SUCCESS) *newtype = abi_out_Datatype(nt);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Type_get_contents,
           (abi_Datatype_t datatype, int max_integers, int max_addresses, int max_datatypes,
            int array_of_integers[], MPI_Aint array_of_addresses[],
            abi_Datatype_t array_of_datatypes[]))
{
    MPI_Datatype stack[ABI_STACK], *t = stack;
    if (max_datatypes > ABI_STACK && !(t = malloc((size_t)max_datatypes * sizeof *t)))
        return abi_err_out(MPI_ERR_NO_MEM);
    int rc = PMPI_Type_get_contents(abi_in_Datatype(datatype), max_integers, max_addresses,
                                    max_datatypes, array_of_integers, array_of_addresses, t);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < max_datatypes; i++)
            array_of_datatypes[i] = abi_out_Datatype(t[i]);
    types_done(t, stack);
    return abi_err_out(rc);
}

/* How many datatypes an MPI_Alltoallw on comm reads: the (remote) group's size. */
static int comm_peers(MPI_Comm c)
{
    int inter = 0, n = 0;
    if (PMPI_Comm_test_inter(c, &inter) != MPI_SUCCESS) return -1;
    if ((inter ? PMPI_Comm_remote_size(c, &n) : PMPI_Comm_size(c, &n)) != MPI_SUCCESS) return -1;
    return n;
}

/* How an alltoallw wrapper calls tern: blocking, non-blocking or persistent (init). */
enum w_mode { W_BLOCKING, W_NONBLOCKING, W_INIT };

/* MPI_Alltoallw, MPI_Ialltoallw and MPI_Alltoallw_init (tern reads the datatype arrays
 * during the call only: the first two build their schedule's types there, the init
 * copies the arrays into its persistent request). */
static int alltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                     const abi_Datatype_t sendtypes[], void *recvbuf, const int recvcounts[],
                     const int rdispls[], const abi_Datatype_t recvtypes[], abi_Comm_t comm,
                     enum w_mode mode, abi_Info_t info, abi_Request_t *request)
{
    MPI_Comm c = abi_in_Comm(comm);
    void *sb = abi_buf_in(sendbuf);
    int n = comm_peers(c);
    MPI_Datatype s1[ABI_STACK] = {0}, s2[ABI_STACK] = {0}, *st = NULL, *rt = NULL;
    if (n >= 0) {
        st = sb == MPI_IN_PLACE ? NULL : types_in(sendtypes, n, s1);
        rt = types_in(recvtypes, n, s2);
    }
    int rc = MPI_ERR_NO_MEM;
    MPI_Request r = MPI_REQUEST_NULL;
    if (n < 0 || (rt && (st || sb == MPI_IN_PLACE))) switch (mode) {
        case W_BLOCKING:
            rc = PMPI_Alltoallw(sb, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt, c);
            break;
        case W_NONBLOCKING:
            rc = PMPI_Ialltoallw(sb, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt, c,
                                 request ? &r : NULL);
            break;
        case W_INIT:
            rc = PMPI_Alltoallw_init(sb, sendcounts, sdispls, st, recvbuf, recvcounts, rdispls, rt,
                                     c, abi_in_Info(info), request ? &r : NULL);
            break;
        }
    if (request) *request = abi_out_Request(r);
    if (st) types_done(st, s1);
    if (rt) types_done(rt, s2);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Alltoallw,
           (const void *sendbuf, const int sendcounts[], const int sdispls[],
            const abi_Datatype_t sendtypes[], void *recvbuf, const int recvcounts[],
            const int rdispls[], const abi_Datatype_t recvtypes[], abi_Comm_t comm))
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, W_BLOCKING, NULL, NULL);
}

ABI_EXPORT(int, Ialltoallw,
           (const void *sendbuf, const int sendcounts[], const int sdispls[],
            const abi_Datatype_t sendtypes[], void *recvbuf, const int recvcounts[],
            const int rdispls[], const abi_Datatype_t recvtypes[], abi_Comm_t comm,
            abi_Request_t *request))
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, W_NONBLOCKING, NULL, request);
}

ABI_EXPORT(int, Alltoallw_init,
           (const void *sendbuf, const int sendcounts[], const int sdispls[],
            const abi_Datatype_t sendtypes[], void *recvbuf, const int recvcounts[],
            const int rdispls[], const abi_Datatype_t recvtypes[], abi_Comm_t comm, abi_Info_t info,
            abi_Request_t *request))
{
    return alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                     recvtypes, comm, W_INIT, info, request);
}

/* MPI_Neighbor_alltoallw and MPI_Ineighbor_alltoallw read outdegree send types and
 * indegree receive types: the topology says how many. */
static int neighbor_counts(MPI_Comm c, int *in, int *out)
{
    int topo = MPI_UNDEFINED, rc = PMPI_Topo_test(c, &topo), weighted = 0, rank = 0;
    if (rc != MPI_SUCCESS) return rc;
    switch (topo) {
    case MPI_CART:
        rc = PMPI_Cartdim_get(c, in);
        *in *= 2;
        break;
    case MPI_GRAPH:
        rc = PMPI_Comm_rank(c, &rank);
        if (rc == MPI_SUCCESS) rc = PMPI_Graph_neighbors_count(c, rank, in);
        break;
    case MPI_DIST_GRAPH:
        return PMPI_Dist_graph_neighbors_count(c, in, out, &weighted);
    default:
        *in = *out = 0; /* tern reports the missing topology */
        return MPI_SUCCESS;
    }
    *out = *in;
    return rc;
}

static int neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                              const abi_Datatype_t sendtypes[], void *recvbuf,
                              const int recvcounts[], const MPI_Aint rdispls[],
                              const abi_Datatype_t recvtypes[], abi_Comm_t comm, enum w_mode mode,
                              abi_Info_t info, abi_Request_t *request)
{
    MPI_Comm c = abi_in_Comm(comm);
    int in = 0, out = 0;
    if (neighbor_counts(c, &in, &out) != MPI_SUCCESS) in = out = 0;
    MPI_Datatype s1[ABI_STACK] = {0}, s2[ABI_STACK] = {0};
    MPI_Datatype *st = types_in(sendtypes, out, s1), *rt = types_in(recvtypes, in, s2);
    int rc = MPI_ERR_NO_MEM;
    MPI_Request r = MPI_REQUEST_NULL;
    if (st && rt) switch (mode) {
        case W_BLOCKING:
            rc = PMPI_Neighbor_alltoallw(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                         rdispls, rt, c);
            break;
        case W_NONBLOCKING:
            rc = PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                          rdispls, rt, c, request ? &r : NULL);
            break;
        case W_INIT:
            rc = PMPI_Neighbor_alltoallw_init(sendbuf, sendcounts, sdispls, st, recvbuf, recvcounts,
                                              rdispls, rt, c, abi_in_Info(info),
                                              request ? &r : NULL);
            break;
        }
    if (request) *request = abi_out_Request(r);
    if (st) types_done(st, s1);
    if (rt) types_done(rt, s2);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Neighbor_alltoallw,
           (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
            const abi_Datatype_t sendtypes[], void *recvbuf, const int recvcounts[],
            const MPI_Aint rdispls[], const abi_Datatype_t recvtypes[], abi_Comm_t comm))
{
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, W_BLOCKING, NULL, NULL);
}

ABI_EXPORT(int, Ineighbor_alltoallw,
           (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
            const abi_Datatype_t sendtypes[], void *recvbuf, const int recvcounts[],
            const MPI_Aint rdispls[], const abi_Datatype_t recvtypes[], abi_Comm_t comm,
            abi_Request_t *request))
{
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, W_NONBLOCKING, NULL, request);
}

ABI_EXPORT(int, Neighbor_alltoallw_init,
           (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
            const abi_Datatype_t sendtypes[], void *recvbuf, const int recvcounts[],
            const MPI_Aint rdispls[], const abi_Datatype_t recvtypes[], abi_Comm_t comm,
            abi_Info_t info, abi_Request_t *request))
{
    return neighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                              recvtypes, comm, W_INIT, info, request);
}

/* MPI_Type_create_darray: the distribution constants differ (MPI_DISTRIBUTE_*). */
ABI_EXPORT(int, Type_create_darray,
           (int size, int rank, int ndims, const int array_of_gsizes[],
            const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
            int order, abi_Datatype_t oldtype, abi_Datatype_t *newtype))
{
    int d[ABI_STACK], a[ABI_STACK];
    if (ndims < 0 || ndims > ABI_STACK || !array_of_distribs || !array_of_dargs)
        return abi_err_out(PMPI_Type_create_darray(
            size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes,
            abi_order_in(order), abi_in_Datatype(oldtype), NULL));
    for (int i = 0; i < ndims; i++) {
        d[i] = abi_distrib_in(array_of_distribs[i]);
        a[i] = array_of_dargs[i] == ABI_DISTRIBUTE_DFLT_DARG ? MPI_DISTRIBUTE_DFLT_DARG
                                                             : array_of_dargs[i];
    }
    MPI_Datatype nt = MPI_DATATYPE_NULL;
    int rc = PMPI_Type_create_darray(size, rank, ndims, array_of_gsizes, d, a, array_of_psizes,
                                     abi_order_in(order), abi_in_Datatype(oldtype), &nt);
    if (newtype) *newtype = abi_out_Datatype(nt);
    return abi_err_out(rc);
}

/* ---- ranks and weights ---------------------------------------------------------------- */

ABI_EXPORT(int, Group_translate_ranks,
           (abi_Group_t group1, int n, const int ranks1[], abi_Group_t group2, int ranks2[]))
{
    int stack[ABI_STACK], *t = stack;
    if (n > ABI_STACK && !(t = malloc((size_t)n * sizeof *t))) return abi_err_out(MPI_ERR_NO_MEM);
    for (int i = 0; i < n && ranks1; i++)
        t[i] = abi_rank_in(ranks1[i]);
    int rc = PMPI_Group_translate_ranks(abi_in_Group(group1), n, ranks1 ? t : NULL,
                                        abi_in_Group(group2), ranks2);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < n; i++)
            ranks2[i] = abi_rank_out(ranks2[i]);
    if (t != stack) free(t);
    return abi_err_out(rc);
}

static const int *weights_in(const int *w)
{
    if (w == (const int *)(uintptr_t)ABI_UNWEIGHTED) return MPI_UNWEIGHTED;
    if (w == (const int *)(uintptr_t)ABI_WEIGHTS_EMPTY) return MPI_WEIGHTS_EMPTY;
    return w;
}

ABI_EXPORT(int, Dist_graph_create_adjacent,
           (abi_Comm_t comm_old, int indegree, const int sources[], const int sourceweights[],
            int outdegree, const int destinations[], const int destweights[], abi_Info_t info,
            int reorder, abi_Comm_t *comm_dist_graph))
{
    MPI_Comm nc = MPI_COMM_NULL;
    int rc = PMPI_Dist_graph_create_adjacent(
        abi_in_Comm(comm_old), indegree, sources, weights_in(sourceweights), outdegree,
        destinations, weights_in(destweights), abi_in_Info(info), reorder, &nc);
    if (comm_dist_graph) *comm_dist_graph = abi_out_Comm(nc);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Dist_graph_create,
           (abi_Comm_t comm_old, int n, const int sources[], const int degrees[],
            const int destinations[], const int weights[], abi_Info_t info, int reorder,
            abi_Comm_t *comm_dist_graph))
{
    MPI_Comm nc = MPI_COMM_NULL;
    int rc = PMPI_Dist_graph_create(abi_in_Comm(comm_old), n, sources, degrees, destinations,
                                    weights_in(weights), abi_in_Info(info), reorder, &nc);
    if (comm_dist_graph) *comm_dist_graph = abi_out_Comm(nc);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Dist_graph_neighbors,
           (abi_Comm_t comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
            int destinations[], int destweights[]))
{
    return abi_err_out(PMPI_Dist_graph_neighbors(abi_in_Comm(comm), maxindegree, sources,
                                                 (int *)weights_in(sourceweights), maxoutdegree,
                                                 destinations, (int *)weights_in(destweights)));
}

/* ---- attributes ------------------------------------------------------------------------ */

/* A predefined attribute whose value is itself a constant is handed out converted, from
 * storage of this library (the values are the same for every communicator/window). */
static _Thread_local int attr_val[8];
static _Thread_local MPI_Aint attr_aval[8];

static int get_attr_fix(int win, int keyval, void *attribute_val, int flag)
{
    int predefined = win ? keyval == MPI_WIN_CREATE_FLAVOR || keyval == MPI_WIN_MODEL
                         : keyval == MPI_HOST || keyval == MPI_IO || keyval == MPI_LASTUSEDCODE;
    if (!flag || !predefined) return 0;
    int v = **(int **)attribute_val, slot;
    if (!win && keyval == MPI_HOST)
        v = abi_rank_out(v), slot = 0;
    else if (!win && keyval == MPI_IO)
        v = abi_rank_out(v), slot = 1;
    else if (!win && keyval == MPI_LASTUSEDCODE)
        v = abi_err_out(v), slot = 2;
    else if (win && keyval == MPI_WIN_CREATE_FLAVOR) {
        slot = 3;
        v = v == MPI_WIN_FLAVOR_CREATE     ? ABI_WIN_FLAVOR_CREATE
            : v == MPI_WIN_FLAVOR_ALLOCATE ? ABI_WIN_FLAVOR_ALLOCATE
            : v == MPI_WIN_FLAVOR_DYNAMIC  ? ABI_WIN_FLAVOR_DYNAMIC
            : v == MPI_WIN_FLAVOR_SHARED   ? ABI_WIN_FLAVOR_SHARED
                                           : v;
    } else if (win && keyval == MPI_WIN_MODEL) {
        slot = 4;
        v = v == MPI_WIN_SEPARATE ? ABI_WIN_SEPARATE : v == MPI_WIN_UNIFIED ? ABI_WIN_UNIFIED : v;
    } else
        return 0;
    (void)attr_aval;
    attr_val[slot] = v;
    *(int **)attribute_val = &attr_val[slot];
    return 0;
}

ABI_EXPORT(int, Comm_get_attr, (abi_Comm_t comm, int comm_keyval, void *attribute_val, int *flag))
{
    int k = abi_keyval_in(comm_keyval);
    int rc = PMPI_Comm_get_attr(abi_in_Comm(comm), k, attribute_val, flag);
    if (rc == MPI_SUCCESS && flag) get_attr_fix(0, k, attribute_val, *flag);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Attr_get, (abi_Comm_t comm, int keyval, void *attribute_val, int *flag))
{
    return abi_MPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

ABI_EXPORT(int, Win_get_attr, (abi_Win_t win, int win_keyval, void *attribute_val, int *flag))
{
    int k = abi_keyval_in(win_keyval);
    int rc = PMPI_Win_get_attr(abi_in_Win(win), k, attribute_val, flag);
    if (rc == MPI_SUCCESS && flag) get_attr_fix(1, k, attribute_val, *flag);
    return abi_err_out(rc);
}

/* Copy and delete functions: tern calls a trampoline with this record as extra_state; it
 * calls the program's function with ABI handles and the program's extra_state. Records
 * live as long as the process (a keyval's callbacks may run after MPI_*_free_keyval). */
struct abi_kv {
    void *copy, *del, *extra;
};

typedef int abi_copy_fn(void *h, int keyval, void *extra, void *in, void *out, int *flag);
typedef int abi_del_fn(void *h, int keyval, void *val, void *extra);

static int kv_copy(int kind, int h, int keyval, void *x, void *in, void *out, int *flag)
{
    struct abi_kv *kv = x;
    void *ah = kind == 0   ? (void *)abi_out_Comm(h)
               : kind == 1 ? (void *)abi_out_Datatype(h)
                           : (void *)abi_out_Win(h);
    return abi_err_in(
        ((abi_copy_fn *)kv->copy)(ah, abi_keyval_out(keyval), kv->extra, in, out, flag));
}

static int kv_del(int kind, int h, int keyval, void *val, void *x)
{
    struct abi_kv *kv = x;
    void *ah = kind == 0   ? (void *)abi_out_Comm(h)
               : kind == 1 ? (void *)abi_out_Datatype(h)
                           : (void *)abi_out_Win(h);
    return abi_err_in(((abi_del_fn *)kv->del)(ah, abi_keyval_out(keyval), val, kv->extra));
}

static int comm_copy_t(MPI_Comm c, int k, void *x, void *in, void *out, int *flag)
{
    return kv_copy(0, c, k, x, in, out, flag);
}
static int type_copy_t(MPI_Datatype c, int k, void *x, void *in, void *out, int *flag)
{
    return kv_copy(1, c, k, x, in, out, flag);
}
static int win_copy_t(MPI_Win c, int k, void *x, void *in, void *out, int *flag)
{
    return kv_copy(2, c, k, x, in, out, flag);
}
static int comm_del_t(MPI_Comm c, int k, void *v, void *x)
{
    return kv_del(0, c, k, v, x);
}
static int type_del_t(MPI_Datatype c, int k, void *v, void *x)
{
    return kv_del(1, c, k, v, x);
}
static int win_del_t(MPI_Win c, int k, void *v, void *x)
{
    return kv_del(2, c, k, v, x);
}

/* The ABI's MPI_*_NULL_COPY_FN / MPI_*_DUP_FN / MPI_*_NULL_DELETE_FN are 0, 1 and 0, as
 * tern's are: those pass through; real functions go through the trampolines. */
#define KV_CREATE(Kind, kind, copy_t, del_t)                                                       \
    ABI_EXPORT(int, Kind##_create_keyval,                                                          \
               (void *copy_fn, void *delete_fn, int *keyval, void *extra_state))                   \
    {                                                                                              \
        struct abi_kv *kv = malloc(sizeof *kv);                                                    \
        if (!kv) return abi_err_out(MPI_ERR_NO_MEM);                                               \
        *kv = (struct abi_kv){copy_fn, delete_fn, extra_state};                                    \
        int k = MPI_KEYVAL_INVALID;                                                                \
        int rc = PMPI_##Kind##_create_keyval(                                                      \
            (uintptr_t)copy_fn <= 1 ? (MPI_##Kind##_copy_attr_function *)copy_fn : copy_t,         \
            delete_fn ? del_t : NULL, &k, kv);                                                     \
        if (rc != MPI_SUCCESS) free(kv);                                                           \
        *keyval = abi_keyval_out(k);                                                               \
        return abi_err_out(rc);                                                                    \
    }
KV_CREATE(Comm, 0, comm_copy_t, comm_del_t)
KV_CREATE(Type, 1, type_copy_t, type_del_t)
KV_CREATE(Win, 2, win_copy_t, win_del_t)

/* ---- trampolines without an extra_state: a fixed pool of slots --------------------------- */

#define ABI_SLOTS  64
#define REP8(M, b) M(b##0) M(b##1) M(b##2) M(b##3) M(b##4) M(b##5) M(b##6) M(b##7)
#define REP64(M)                                                                                   \
    REP8(M, 0) REP8(M, 1) REP8(M, 2) REP8(M, 3) REP8(M, 4) REP8(M, 5) REP8(M, 6) REP8(M, 7)

/* User reduction operations: tern calls slot i's trampoline with a tern datatype; the
 * program's function gets the ABI handle. */
typedef void abi_user_fn(void *in, void *inout, int *len, abi_Datatype_t *dt);
static abi_user_fn *op_fn[ABI_SLOTS];
static atomic_int op_used;

static void op_call(int i, void *in, void *inout, int *len, MPI_Datatype *dt)
{
    abi_Datatype_t a = abi_out_Datatype(*dt);
    op_fn[i](in, inout, len, &a);
}
#define OP_T(i)                                                                                    \
    static void op_t##i(void *in, void *inout, int *len, MPI_Datatype *dt)                         \
    {                                                                                              \
        op_call(abi_slot_##i, in, inout, len, dt);                                                 \
    }
/* REP64 names the slots 00..77 (two octal digits); the enum numbers them 0..63. */
enum {
#define SLOT(i) abi_slot_##i,
    REP64(SLOT)
#undef SLOT
};
REP64(OP_T)
static MPI_User_function *const op_tramp[ABI_SLOTS] = {
#define ENTRY(i) op_t##i,
    REP64(ENTRY)
#undef ENTRY
};

ABI_EXPORT(int, Op_create, (abi_user_fn * user_fn, int commute, abi_Op_t *op))
{
    int i = atomic_fetch_add(&op_used, 1);
    if (i >= ABI_SLOTS) return abi_err_out(MPI_ERR_NO_MEM);
    op_fn[i] = user_fn;
    MPI_Op t = MPI_OP_NULL;
    int rc = PMPI_Op_create(op_tramp[i], commute, &t);
    *op = abi_out_Op(t);
    return abi_err_out(rc);
}

/* Error handlers: tern calls slot i's trampoline with a pointer to the tern handle. */
typedef void abi_eh_fn(void *h, int *code, ...);
static abi_eh_fn *eh_fn[ABI_SLOTS];
static int eh_kind[ABI_SLOTS];
static atomic_int eh_used;

static void eh_call(int i, int *h, int *code)
{
    int c = abi_err_out(*code);
    if (eh_kind[i] == 0) {
        abi_Comm_t a = abi_out_Comm(*h);
        eh_fn[i](&a, &c);
    } else if (eh_kind[i] == 1) {
        abi_Win_t a = abi_out_Win(*h);
        eh_fn[i](&a, &c);
    } else {
        abi_File_t a = abi_out_File(*h);
        eh_fn[i](&a, &c);
    }
}
#define EH_T(i)                                                                                    \
    static void eh_t##i(int *h, int *code, ...)                                                    \
    {                                                                                              \
        eh_call(abi_slot_##i, h, code);                                                            \
    }
REP64(EH_T)
typedef void tern_eh_fn(int *h, int *code, ...);
static tern_eh_fn *const eh_tramp[ABI_SLOTS] = {
#define ENTRY(i) eh_t##i,
    REP64(ENTRY)
#undef ENTRY
};

static int eh_slot(abi_eh_fn *fn, int kind)
{
    int i = atomic_fetch_add(&eh_used, 1);
    if (i >= ABI_SLOTS) return -1;
    eh_fn[i] = fn;
    eh_kind[i] = kind;
    return i;
}

ABI_EXPORT(int, Comm_create_errhandler, (abi_eh_fn * fn, abi_Errhandler_t *errhandler))
{
    int i = eh_slot(fn, 0);
    if (i < 0) return abi_err_out(MPI_ERR_NO_MEM);
    MPI_Errhandler e = MPI_ERRHANDLER_NULL;
    int rc = PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)eh_tramp[i], &e);
    *errhandler = abi_out_Errhandler(e);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Win_create_errhandler, (abi_eh_fn * fn, abi_Errhandler_t *errhandler))
{
    int i = eh_slot(fn, 1);
    if (i < 0) return abi_err_out(MPI_ERR_NO_MEM);
    MPI_Errhandler e = MPI_ERRHANDLER_NULL;
    int rc = PMPI_Win_create_errhandler((MPI_Win_errhandler_function *)eh_tramp[i], &e);
    *errhandler = abi_out_Errhandler(e);
    return abi_err_out(rc);
}

ABI_EXPORT(int, File_create_errhandler, (abi_eh_fn * fn, abi_Errhandler_t *errhandler))
{
    int i = eh_slot(fn, 2);
    if (i < 0) return abi_err_out(MPI_ERR_NO_MEM);
    MPI_Errhandler e = MPI_ERRHANDLER_NULL;
    int rc = PMPI_File_create_errhandler((MPI_File_errhandler_function *)eh_tramp[i], &e);
    *errhandler = abi_out_Errhandler(e);
    return abi_err_out(rc);
}

/* ---- generalized requests ------------------------------------------------------------- */

typedef int abi_query_fn(void *extra, abi_status_t *status);
typedef int abi_free_fn(void *extra);
typedef int abi_cancel_fn(void *extra, int complete);

struct abi_greq {
    abi_query_fn *query;
    abi_free_fn *free;
    abi_cancel_fn *cancel;
    void *extra;
};

static int greq_query(void *x, MPI_Status *st)
{
    struct abi_greq *g = x;
    abi_status_t a;
    abi_status_out(&a, st);
    a.error = 0; /* MPI_SUCCESS, unless the query function sets it */
    int rc = g->query(g->extra, &a);
    abi_status_in(st, &a);
    return abi_err_in(rc);
}

static int greq_free(void *x)
{
    struct abi_greq *g = x;
    int rc = g->free(g->extra);
    free(g);
    return abi_err_in(rc);
}

static int greq_cancel(void *x, int complete)
{
    struct abi_greq *g = x;
    return abi_err_in(g->cancel(g->extra, complete));
}

ABI_EXPORT(int, Grequest_start,
           (abi_query_fn * query_fn, abi_free_fn *free_fn, abi_cancel_fn *cancel_fn,
            void *extra_state, abi_Request_t *request))
{
    struct abi_greq *g = malloc(sizeof *g);
    if (!g) return abi_err_out(MPI_ERR_NO_MEM);
    *g = (struct abi_greq){query_fn, free_fn, cancel_fn, extra_state};
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, g, &r);
    if (rc != MPI_SUCCESS) free(g);
    *request = abi_out_Request(r);
    return abi_err_out(rc);
}

/* tern has no parallel I/O: MPI_Register_datarep reports MPI_ERR_UNSUPPORTED_OPERATION
 * whatever the functions, so none is passed on. */
ABI_EXPORT(int, Register_datarep,
           (const char *datarep, void *read_conversion_fn, void *write_conversion_fn,
            void *dtype_file_extent_fn, void *extra_state))
{
    (void)read_conversion_fn;
    (void)write_conversion_fn;
    (void)dtype_file_extent_fn;
    return abi_err_out(PMPI_Register_datarep(datarep, NULL, NULL, NULL, extra_state));
}

/* Stubs of the functions tern lacks (mpi_abi_gen.c) end here. */
int abi_unsupported(const char *name)
{
    static atomic_int told;
    if (atomic_fetch_add(&told, 1) == 0)
        fprintf(stderr, "tern MPI (standard ABI): %s is not supported\n", name);
    return ABI_ERR_UNSUPPORTED_OPERATION;
}

/* ---- profiling, the ABI's own functions ----------------------------- */

ABI_EXPORT(int, Pcontrol, (const int level, ...))
{
    return abi_err_out(PMPI_Pcontrol(level));
}

ABI_EXPORT(int, Abi_get_version, (int *abi_major, int *abi_minor))
{
    if (!abi_major || !abi_minor) return abi_err_out(MPI_ERR_ARG);
    *abi_major = ABI_ABI_VERSION;
    *abi_minor = ABI_ABI_SUBVERSION;
    return 0;
}

/* The sizes of the ABI's integer types, as an info object the caller frees. */
ABI_EXPORT(int, Abi_get_info, (abi_Info_t * info))
{
    MPI_Info i = MPI_INFO_NULL;
    int rc = PMPI_Info_create(&i);
    if (rc == MPI_SUCCESS) rc = PMPI_Info_set(i, "mpi_aint_size", "8");
    if (rc == MPI_SUCCESS) rc = PMPI_Info_set(i, "mpi_count_size", "8");
    if (rc == MPI_SUCCESS) rc = PMPI_Info_set(i, "mpi_offset_size", "8");
    *info = abi_out_Info(i);
    return abi_err_out(rc);
}

/* tern has no Fortran bindings: the Fortran information is an empty info object, no
 * Fortran booleans are set, and setting them is not supported. */
ABI_EXPORT(int, Abi_get_fortran_info, (abi_Info_t * info))
{
    MPI_Info i = MPI_INFO_NULL;
    int rc = PMPI_Info_create(&i);
    *info = abi_out_Info(i);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Abi_set_fortran_info, (abi_Info_t info))
{
    (void)info;
    return abi_err_out(MPI_ERR_UNSUPPORTED_OPERATION);
}

ABI_EXPORT(int, Abi_get_fortran_booleans,
           (int logical_size, void *logical_true, void *logical_false, int *is_set))
{
    (void)logical_size;
    (void)logical_true;
    (void)logical_false;
    if (!is_set) return abi_err_out(MPI_ERR_ARG);
    *is_set = 0;
    return 0;
}

ABI_EXPORT(int, Abi_set_fortran_booleans,
           (int logical_size, void *logical_true, void *logical_false))
{
    (void)logical_size;
    (void)logical_true;
    (void)logical_false;
    return abi_err_out(MPI_ERR_UNSUPPORTED_OPERATION);
}

/* MPI-1's MPI_Keyval_create: MPI_Comm_create_keyval under its old name. */
ABI_EXPORT(int, Keyval_create, (void *copy_fn, void *delete_fn, int *keyval, void *extra_state))
{
    return abi_MPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

/* MPI_Comm_idup: tern stores the new communicator's int handle through newcomm when the
 * request completes, after this call has returned. It is given the low half of the
 * program's pointer-sized handle (x86-64 and AArch64 are little-endian), whose high half
 * is set now to the user-handle mark (abi.h, ABI_ENC): the completed int makes the whole
 * encoded handle. */
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "MPI_Comm_idup needs little-endian");
static int *idup_slot(abi_Comm_t *newcomm)
{
    *newcomm = (abi_Comm_t)ABI_ENC;
    return (int *)(void *)newcomm;
}

ABI_EXPORT(int, Comm_idup, (abi_Comm_t comm, abi_Comm_t *newcomm, abi_Request_t *request))
{
    if (!newcomm || !request) return abi_err_out(MPI_ERR_ARG);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = PMPI_Comm_idup(abi_in_Comm(comm), idup_slot(newcomm), &r);
    *request = abi_out_Request(r);
    return abi_err_out(rc);
}

ABI_EXPORT(int, Comm_idup_with_info,
           (abi_Comm_t comm, abi_Info_t info, abi_Comm_t *newcomm, abi_Request_t *request))
{
    if (!newcomm || !request) return abi_err_out(MPI_ERR_ARG);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = PMPI_Comm_idup_with_info(abi_in_Comm(comm), abi_in_Info(info), idup_slot(newcomm), &r);
    *request = abi_out_Request(r);
    return abi_err_out(rc);
}

/* MPI 4.1's status accessors: the ABI's status fields are public, so these need nothing
 * of tern. */
#define STATUS_FIELD(Name, field)                                                                  \
    ABI_EXPORT(int, Status_get_##Name, (const abi_status_t *status, int *value))                   \
    {                                                                                              \
        if (!status || !value) return abi_err_out(MPI_ERR_ARG);                                    \
        *value = status->field;                                                                    \
        return 0;                                                                                  \
    }                                                                                              \
    ABI_EXPORT(int, Status_set_##Name, (abi_status_t * status, int value))                         \
    {                                                                                              \
        if (!status) return abi_err_out(MPI_ERR_ARG);                                              \
        status->field = value;                                                                     \
        return 0;                                                                                  \
    }
STATUS_FIELD(source, source)
STATUS_FIELD(tag, tag)
STATUS_FIELD(error, error)

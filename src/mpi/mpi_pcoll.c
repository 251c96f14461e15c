/*
 * mpi_pcoll.c - MPI 4.0 persistent collectives (MPI_Barrier_init ... MPI_Neighbor_
 * alltoallw_init). The init call checks the communicator and keeps the arguments in an
 * inactive persistent request; each MPI_Start runs the matching non-blocking collective
 * (MPI_I*) and moves its core request, temporary and unpack duty into the persistent
 * request, which then completes through MPI_Wait/MPI_Test like any other and may be
 * started again. The init call takes the collective's place in the communicator's order
 * (its tags), so starts in different orders on different processes still match. The
 * info argument is checked and otherwise unused. The count, displacement and datatype
 * arrays are copied at init: a program (or a binding that converts MPI_Count arrays
 * for the call, as mpi4py does for the _c forms) may free its own copy after the init.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

enum pc_kind {
    PC_BARRIER,
    PC_BCAST,
    PC_REDUCE,
    PC_ALLREDUCE,
    PC_SCAN,
    PC_EXSCAN,
    PC_RSB,
    PC_RS,
    PC_GATHER,
    PC_SCATTER,
    PC_ALLGATHER,
    PC_ALLTOALL,
    PC_GATHERV,
    PC_SCATTERV,
    PC_ALLGATHERV,
    PC_ALLTOALLV,
    PC_ALLTOALLW,
    PC_NALLGATHER,
    PC_NALLTOALL,
    PC_NALLGATHERV,
    PC_NALLTOALLV,
    PC_NALLTOALLW,
};

/* The arguments of one persistent collective (the arrays point into `own`). */
struct mpi_pcoll {
    int kind;
    const void *sbuf;
    void *rbuf;
    int scount, rcount, root;
    const int *scounts, *sdispls, *rcounts, *rdispls;
    const MPI_Aint *sadispls, *radispls;
    MPI_Datatype stype, rtype;
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
    MPI_Comm comm;
    struct mpi_type *sref, *rref; /* held so the program may free its types */
    void *own;                    /* the copies of the arrays, one allocation */
    int has_seq;                  /* an intra-communicator: seq is the call's number */
    uint32_t seq;
};

void mpi_pcoll_free(struct mpi_pcoll *pc)
{
    if (pc->sref) mpi_type_unref(pc->sref);
    if (pc->rref) mpi_type_unref(pc->rref);
    free(pc->own);
    free(pc);
}

static int pc_call(const struct mpi_pcoll *p, MPI_Request *r)
{
    switch (p->kind) {
    case PC_BARRIER:
        return PMPI_Ibarrier(p->comm, r);
    case PC_BCAST:
        return PMPI_Ibcast(p->rbuf, p->rcount, p->rtype, p->root, p->comm, r);
    case PC_REDUCE:
        return PMPI_Ireduce(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->root, p->comm, r);
    case PC_ALLREDUCE:
        return PMPI_Iallreduce(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->comm, r);
    case PC_SCAN:
        return PMPI_Iscan(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->comm, r);
    case PC_EXSCAN:
        return PMPI_Iexscan(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->comm, r);
    case PC_RSB:
        return PMPI_Ireduce_scatter_block(p->sbuf, p->rbuf, p->rcount, p->rtype, p->op, p->comm, r);
    case PC_RS:
        return PMPI_Ireduce_scatter(p->sbuf, p->rbuf, p->rcounts, p->rtype, p->op, p->comm, r);
    case PC_GATHER:
        return PMPI_Igather(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype, p->root,
                            p->comm, r);
    case PC_SCATTER:
        return PMPI_Iscatter(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype, p->root,
                             p->comm, r);
    case PC_ALLGATHER:
        return PMPI_Iallgather(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype, p->comm,
                               r);
    case PC_ALLTOALL:
        return PMPI_Ialltoall(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype, p->comm,
                              r);
    case PC_GATHERV:
        return PMPI_Igatherv(p->sbuf, p->scount, p->stype, p->rbuf, p->rcounts, p->rdispls,
                             p->rtype, p->root, p->comm, r);
    case PC_SCATTERV:
        return PMPI_Iscatterv(p->sbuf, p->scounts, p->sdispls, p->stype, p->rbuf, p->rcount,
                              p->rtype, p->root, p->comm, r);
    case PC_ALLGATHERV:
        return PMPI_Iallgatherv(p->sbuf, p->scount, p->stype, p->rbuf, p->rcounts, p->rdispls,
                                p->rtype, p->comm, r);
    case PC_ALLTOALLV:
        return PMPI_Ialltoallv(p->sbuf, p->scounts, p->sdispls, p->stype, p->rbuf, p->rcounts,
                               p->rdispls, p->rtype, p->comm, r);
    case PC_ALLTOALLW:
        return PMPI_Ialltoallw(p->sbuf, p->scounts, p->sdispls, p->stypes, p->rbuf, p->rcounts,
                               p->rdispls, p->rtypes, p->comm, r);
    case PC_NALLGATHER:
        return PMPI_Ineighbor_allgather(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype,
                                        p->comm, r);
    case PC_NALLTOALL:
        return PMPI_Ineighbor_alltoall(p->sbuf, p->scount, p->stype, p->rbuf, p->rcount, p->rtype,
                                       p->comm, r);
    case PC_NALLGATHERV:
        return PMPI_Ineighbor_allgatherv(p->sbuf, p->scount, p->stype, p->rbuf, p->rcounts,
                                         p->rdispls, p->rtype, p->comm, r);
    case PC_NALLTOALLV:
        return PMPI_Ineighbor_alltoallv(p->sbuf, p->scounts, p->sdispls, p->stype, p->rbuf,
                                        p->rcounts, p->rdispls, p->rtype, p->comm, r);
    default:
        return PMPI_Ineighbor_alltoallw(p->sbuf, p->scounts, p->sadispls, p->stypes, p->rbuf,
                                        p->rcounts, p->radispls, p->rtypes, p->comm, r);
    }
}

int mpi_pcoll_start(struct mpi_req *mr)
{
    MPI_Request h;
    /* MPI 4.0: persistent collectives match in the order of their init calls, whatever
     * the order of the starts. The collective's tags come from its number on the
     * communicator among the non-blocking ones (coll_sched_init_as), so every start reuses
     * the number the init took. */
    struct mpi_pcoll *pc = mr->pcoll;
    struct mpi_comm *c = pc->has_seq ? mpi_comm_get(pc->comm) : NULL;
    uint32_t saved = c ? c->tc->coll_nbseq : 0;
    if (c) c->tc->coll_nbseq = pc->seq;
    int rc = pc_call(pc, &h);
    if (c) c->tc->coll_nbseq = saved;
    if (rc) return rc; /* reported by the MPI_I* call already */
    struct mpi_req *t = mpi_req_at(h);
    if (mr->utype) mpi_type_unref(mr->utype); /* the previous start's */
    mr->r = t->r;
    mr->tmp = t->tmp;
    mr->unpack = t->unpack;
    mr->ubuf = t->ubuf;
    mr->ucount = t->ucount;
    mr->utype = t->utype; /* its reference moves too */
    mr->uoff = t->uoff;
    t->r = NULL;
    t->tmp = NULL;
    t->utype = NULL;
    mpi_req_release(t);
    mr->active = 1;
    return MPI_SUCCESS;
}

/* Neighbour counts of a topology communicator (0, 0 without one: the start fails). */
static void pc_degrees(MPI_Comm comm, int *in, int *out)
{
    int kind = MPI_UNDEFINED, nd = 0, rank = 0, w = 0;
    *in = *out = 0;
    PMPI_Topo_test(comm, &kind);
    if (kind == MPI_CART && PMPI_Cartdim_get(comm, &nd) == MPI_SUCCESS) {
        *in = *out = 2 * nd;
    } else if (kind == MPI_GRAPH && PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS &&
               PMPI_Graph_neighbors_count(comm, rank, in) == MPI_SUCCESS) {
        *out = *in;
    } else if (kind == MPI_DIST_GRAPH) {
        PMPI_Dist_graph_neighbors_count(comm, in, out, &w);
    }
}

/* Copies of p's arrays into one allocation (pc->own); MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int pc_copy_arrays(struct mpi_pcoll *pc, struct mpi_comm *c)
{
    int k = pc->kind, n = 0, ns = 0, nr = 0, rank = 0;
    PMPI_Comm_rank(pc->comm, &rank);
    if (c->inter)
        PMPI_Comm_remote_size(pc->comm, &n);
    else
        PMPI_Comm_size(pc->comm, &n);
    switch (k) {
    case PC_RS: /* one count per member of the local group */
        PMPI_Comm_size(pc->comm, &nr);
        break;
    case PC_GATHERV: /* significant at the root only */
        nr = (c->inter ? pc->root == MPI_ROOT : pc->root == rank) ? n : 0;
        break;
    case PC_SCATTERV:
        ns = (c->inter ? pc->root == MPI_ROOT : pc->root == rank) ? n : 0;
        break;
    case PC_ALLGATHERV:
        nr = n;
        break;
    case PC_ALLTOALLV:
    case PC_ALLTOALLW:
        ns = nr = n;
        break;
    case PC_NALLGATHERV:
        pc_degrees(pc->comm, &nr, &ns);
        ns = 0;
        break;
    case PC_NALLTOALLV:
    case PC_NALLTOALLW:
        pc_degrees(pc->comm, &nr, &ns);
        break;
    default:
        return MPI_SUCCESS;
    }
    size_t need = 2 * (size_t)(ns + nr) * (sizeof(MPI_Aint) + sizeof(int) + sizeof(MPI_Datatype));
    need += 64; /* each copy starts 8-aligned */
    char *m = malloc(need);
    if (m == NULL) return MPI_ERR_NO_MEM;
    pc->own = m;
#define PC_DUP(field, cnt)                                                                         \
    do {                                                                                           \
        if (pc->field != NULL && (cnt) > 0) {                                                      \
            size_t b = (size_t)(cnt) * sizeof *pc->field;                                          \
            memcpy(m, pc->field, b);                                                               \
            pc->field = (void *)m;                                                                 \
            m += (b + 7) & ~(size_t)7;                                                             \
        }                                                                                          \
    } while (0)
    PC_DUP(scounts, ns);
    PC_DUP(sdispls, ns);
    PC_DUP(sadispls, ns);
    PC_DUP(stypes, ns);
    PC_DUP(rcounts, nr);
    PC_DUP(rdispls, nr);
    PC_DUP(radispls, nr);
    PC_DUP(rtypes, nr);
#undef PC_DUP
    return MPI_SUCCESS;
}

/* Make the inactive persistent request of p (copied). */
static int pc_init(const char *fn, const struct mpi_pcoll *p, MPI_Info info, MPI_Request *req)
{
    if (mpi_state()) return mpi_err(p->comm, fn, MPI_ERR_OTHER);
    if (mpi_comm_get(p->comm) == NULL) return mpi_err(p->comm, fn, MPI_ERR_COMM);
    if (!mpi_info_valid(info)) return mpi_err(p->comm, fn, MPI_ERR_INFO);
    if (req == NULL) return mpi_err(p->comm, fn, MPI_ERR_ARG);
    struct mpi_pcoll *pc = malloc(sizeof *pc);
    struct mpi_req *mr = pc ? mpi_req_new(MPI_RK_COLL, p->comm) : NULL;
    if (mr == NULL) {
        free(pc);
        return mpi_err(p->comm, fn, MPI_ERR_NO_MEM);
    }
    *pc = *p;
    pc->own = NULL;
    if (pc_copy_arrays(pc, mpi_comm_get(p->comm)) != MPI_SUCCESS) {
        free(pc);
        mpi_req_release(mr);
        return mpi_err(p->comm, fn, MPI_ERR_NO_MEM);
    }
    /* which kinds name one send / one receive datatype */
    int k = p->kind, w = k == PC_ALLTOALLW || k == PC_NALLTOALLW;
    pc->sref = k >= PC_GATHER && !w ? mpi_type_get(p->stype) : NULL;
    pc->rref = k != PC_BARRIER && !w ? mpi_type_get(p->rtype) : NULL;
    if (pc->sref) mpi_type_ref(pc->sref);
    if (pc->rref) mpi_type_ref(pc->rref);
    struct mpi_comm *c = mpi_comm_get(p->comm);
    if (!c->inter) { /* its place among the communicator's collectives */
        pc->has_seq = 1;
        pc->seq = c->tc->coll_nbseq++;
    }
    mr->persistent = 1;
    mr->active = 0;
    mr->pcoll = pc;
    *req = mr->handle;
    return MPI_SUCCESS;
}

#define PC(...) (&(struct mpi_pcoll){__VA_ARGS__})

int PMPI_Barrier_init(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return pc_init("MPI_Barrier_init", PC(.kind = PC_BARRIER, .comm = comm), info, request);
}
MPI_ALIAS(Barrier_init)

int PMPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return pc_init("MPI_Bcast_init",
                   PC(.kind = PC_BCAST, .rbuf = buffer, .rcount = count, .rtype = datatype,
                      .root = root, .comm = comm),
                   info, request);
}
MPI_ALIAS(Bcast_init)

int PMPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return pc_init("MPI_Reduce_init",
                   PC(.kind = PC_REDUCE, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,
                      .rtype = datatype, .op = op, .root = root, .comm = comm),
                   info, request);
}
MPI_ALIAS(Reduce_init)

#define PC_RED_FN(Name, K)                                                                         \
    int PMPI_##Name(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,          \
                    MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request)                 \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return pc_init("MPI_" #Name,                                                               \
                       PC(.kind = K, .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count,            \
                          .rtype = datatype, .op = op, .comm = comm),                              \
                       info, request);                                                             \
    }                                                                                              \
    MPI_ALIAS(Name)
PC_RED_FN(Allreduce_init, PC_ALLREDUCE)
PC_RED_FN(Scan_init, PC_SCAN)
PC_RED_FN(Exscan_init, PC_EXSCAN)
PC_RED_FN(Reduce_scatter_block_init, PC_RSB)

int PMPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request)
{
    CORE_CS_SCOPE();
    return pc_init("MPI_Reduce_scatter_init",
                   PC(.kind = PC_RS, .sbuf = sendbuf, .rbuf = recvbuf, .rcounts = recvcounts,
                      .rtype = datatype, .op = op, .comm = comm),
                   info, request);
}
MPI_ALIAS(Reduce_scatter_init)

#define PC_MOVE_FN(Name, K)                                                                        \
    int PMPI_##Name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,      \
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,            \
                    MPI_Request *request)                                                          \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return pc_init("MPI_" #Name,                                                               \
                       PC(.kind = K, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,      \
                          .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .comm = comm),  \
                       info, request);                                                             \
    }                                                                                              \
    MPI_ALIAS(Name)
PC_MOVE_FN(Allgather_init, PC_ALLGATHER)
PC_MOVE_FN(Alltoall_init, PC_ALLTOALL)
PC_MOVE_FN(Neighbor_allgather_init, PC_NALLGATHER)
PC_MOVE_FN(Neighbor_alltoall_init, PC_NALLTOALL)

#define PC_ROOTED_FN(Name, K)                                                                      \
    int PMPI_##Name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,      \
                    int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info,  \
                    MPI_Request *request)                                                          \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return pc_init("MPI_" #Name,                                                               \
                       PC(.kind = K, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,      \
                          .rbuf = recvbuf, .rcount = recvcount, .rtype = recvtype, .root = root,   \
                          .comm = comm),                                                           \
                       info, request);                                                             \
    }                                                                                              \
    MPI_ALIAS(Name)
PC_ROOTED_FN(Gather_init, PC_GATHER)
PC_ROOTED_FN(Scatter_init, PC_SCATTER)

int PMPI_Gatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                      MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return pc_init("MPI_Gatherv_init",
                   PC(.kind = PC_GATHERV, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,
                      .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs, .rtype = recvtype,
                      .root = root, .comm = comm),
                   info, request);
}
MPI_ALIAS(Gatherv_init)

int PMPI_Scatterv_init(const void *sendbuf, const int sendcounts[], const int displs[],
                       MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                       int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return pc_init("MPI_Scatterv_init",
                   PC(.kind = PC_SCATTERV, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = displs, .stype = sendtype, .rbuf = recvbuf, .rcount = recvcount,
                      .rtype = recvtype, .root = root, .comm = comm),
                   info, request);
}
MPI_ALIAS(Scatterv_init)

#define PC_GATHERV_FN(Name, K)                                                                     \
    int PMPI_##Name(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,      \
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,             \
                    MPI_Comm comm, MPI_Info info, MPI_Request *request)                            \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return pc_init("MPI_" #Name,                                                               \
                       PC(.kind = K, .sbuf = sendbuf, .scount = sendcount, .stype = sendtype,      \
                          .rbuf = recvbuf, .rcounts = recvcounts, .rdispls = displs,               \
                          .rtype = recvtype, .comm = comm),                                        \
                       info, request);                                                             \
    }                                                                                              \
    MPI_ALIAS(Name)
PC_GATHERV_FN(Allgatherv_init, PC_ALLGATHERV)
PC_GATHERV_FN(Neighbor_allgatherv_init, PC_NALLGATHERV)

#define PC_ALLTOALLV_FN(Name, K)                                                                   \
    int PMPI_##Name(const void *sendbuf, const int sendcounts[], const int sdispls[],              \
                    MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],                  \
                    const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,      \
                    MPI_Request *request)                                                          \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return pc_init("MPI_" #Name,                                                               \
                       PC(.kind = K, .sbuf = sendbuf, .scounts = sendcounts, .sdispls = sdispls,   \
                          .stype = sendtype, .rbuf = recvbuf, .rcounts = recvcounts,               \
                          .rdispls = rdispls, .rtype = recvtype, .comm = comm),                    \
                       info, request);                                                             \
    }                                                                                              \
    MPI_ALIAS(Name)
PC_ALLTOALLV_FN(Alltoallv_init, PC_ALLTOALLV)
PC_ALLTOALLV_FN(Neighbor_alltoallv_init, PC_NALLTOALLV)

int PMPI_Alltoallw_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                        const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                        MPI_Info info, MPI_Request *request)
{
    CORE_CS_SCOPE();
    return pc_init("MPI_Alltoallw_init",
                   PC(.kind = PC_ALLTOALLW, .sbuf = sendbuf, .scounts = sendcounts,
                      .sdispls = sdispls, .stypes = sendtypes, .rbuf = recvbuf,
                      .rcounts = recvcounts, .rdispls = rdispls, .rtypes = recvtypes, .comm = comm),
                   info, request);
}
MPI_ALIAS(Alltoallw_init)

int PMPI_Neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                 const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
                                 MPI_Request *request)
{
    CORE_CS_SCOPE();
    return pc_init("MPI_Neighbor_alltoallw_init",
                   PC(.kind = PC_NALLTOALLW, .sbuf = sendbuf, .scounts = sendcounts,
                      .sadispls = sdispls, .stypes = sendtypes, .rbuf = recvbuf,
                      .rcounts = recvcounts, .radispls = rdispls, .rtypes = recvtypes,
                      .comm = comm),
                   info, request);
}
MPI_ALIAS(Neighbor_alltoallw_init)

/*
 * mpi_comm_impl.h - internals shared by mpi_comm.c (communicators), mpi_group.c (groups)
 * and mpi_cart.c (Cartesian topologies): the argument check of calls on a communicator,
 * the group object, and the functions one of them uses from another.
 */
#ifndef TERN_MPI_COMM_IMPL_H
#define TERN_MPI_COMM_IMPL_H

#include "mpi/mpi_impl.h"

/* Checks of every call on a communicator with an output. */
#define COMM_CHECK(fn, comm, out)                                                                  \
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);                                      \
    struct mpi_comm *c = mpi_comm_get(comm);                                                       \
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);                                         \
    if ((out) == NULL) return mpi_err(comm, fn, MPI_ERR_ARG)

struct mpi_group {
    int size;
    int world[]; /* world rank of each member */
};

/* mpi_comm.c */
int mpi_split(const char *fn, MPI_Comm comm, int color, int key, MPI_Comm *newcomm);

/* Wrap a core communicator in a new handle (NULL tc: MPI_COMM_NULL); error handler of
 * parent, or MPI_ERRORS_ARE_FATAL without one. */
int mpi_comm_wrap(struct tern_comm *tc, const struct mpi_comm *parent, MPI_Comm *out);

/* mpi_inter.c: intercommunicators (c->inter). Each returns an MPI error class. */
int mpi_ic_dup(struct mpi_comm *c, MPI_Comm *out);
int mpi_ic_idup_start(struct mpi_comm *c, core_req_t *done, struct core_ctx_nb **out);
int mpi_ic_idup_finish(struct mpi_comm *c, const uint16_t *ctx, MPI_Comm *out);
int mpi_ic_split(struct mpi_comm *c, int color, int key, MPI_Comm *out);
int mpi_ic_create(struct mpi_comm *c, const struct mpi_group *g, MPI_Comm *out);
void mpi_ic_free(struct mpi_comm *c); /* its hidden communicators */
/* The collectives on an intercommunicator (MPI-3 meaning), run to completion. `which`
 * numbers the call as mpi_coll.c does: gather, scatter, allgather, alltoall (and their v
 * forms); counts NULL in reduce_scatter: rcount each (MPI_Reduce_scatter_block). */
int mpi_ic_barrier(struct mpi_comm *c);
int mpi_ic_bcast(struct mpi_comm *c, void *buf, int count, MPI_Datatype dt, int root);
int mpi_ic_reduce(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                  MPI_Op op, int root);
int mpi_ic_allreduce(struct mpi_comm *c, const void *sbuf, void *rbuf, int count, MPI_Datatype dt,
                     MPI_Op op);
int mpi_ic_reduce_scatter(struct mpi_comm *c, const void *sbuf, void *rbuf, const int *counts,
                          int rcount, MPI_Datatype dt, MPI_Op op);
int mpi_ic_move(int which, struct mpi_comm *c, const void *sbuf, int scount, MPI_Datatype stype,
                void *rbuf, int rcount, MPI_Datatype rtype, int root);
int mpi_ic_movev(int which, struct mpi_comm *c, const void *sbuf, int scount, const int *scounts,
                 const int *sdispls, MPI_Datatype stype, void *rbuf, int rcount, const int *rcounts,
                 const int *rdispls, MPI_Datatype rtype, int root);
int mpi_ic_alltoallw(struct mpi_comm *c, const void *sbuf, const int *scounts, const int *sdispls,
                     const MPI_Datatype *stypes, void *rbuf, const int *rcounts, const int *rdispls,
                     const MPI_Datatype *rtypes);

/* mpi_group.c */
int mpi_group_make(const int *world, int n, MPI_Group *out); /* a new group of these ranks */
struct mpi_group *mpi_group_get(MPI_Group h);
int mpi_group_rank_of(const struct mpi_group *g, int world);
int mpi_group_cmp(const struct mpi_group *a, const struct mpi_group *b);

#endif

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

/* mpi_group.c */
struct mpi_group *mpi_group_get(MPI_Group h);
int mpi_group_rank_of(const struct mpi_group *g, int world);
int mpi_group_cmp(const struct mpi_group *a, const struct mpi_group *b);

#endif

/*
 * mpi_p2p_impl.h - internals shared by the point-to-point files of the MPI layer
 * (mpi_p2p.c, mpi_req.c, mpi_bsend.c, mpi_probe.c): the argument checks of sends,
 * receives and probes, and the functions one of them uses from another.
 */
#ifndef TERN_MPI_P2P_IMPL_H
#define TERN_MPI_P2P_IMPL_H

#include "mpi/mpi_impl.h"

/* ---- argument checks -------------------------------------------------------------- */

static inline int mpi_check_common(MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                                   struct mpi_comm **c, struct mpi_type **t)
{
    if (__builtin_expect(mpi_state(), 0)) return MPI_ERR_OTHER;
    if ((*c = mpi_comm_get(comm)) == NULL) return MPI_ERR_COMM;
    if (count < 0) return MPI_ERR_COUNT;
    if ((*t = mpi_type_ok(dt)) == NULL) return MPI_ERR_TYPE;
    return MPI_SUCCESS;
}

static inline int mpi_check_send(const void *buf, MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                                 int dest, int tag, struct mpi_comm **c, struct mpi_type **t)
{
    int rc = mpi_check_common(comm, count, dt, c, t);
    if (rc) return rc;
    if (dest != MPI_PROC_NULL && (dest < 0 || dest >= (*c)->tc->size)) return MPI_ERR_RANK;
    if (tag < 0 || tag > TERN_TAG_UB) return MPI_ERR_TAG;
    /* MPI_BOTTOM (NULL) is a valid base for derived types with absolute addresses. */
    if (buf == NULL && count > 0 && (*t)->predefined && (*t)->size > 0) return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}

static inline int mpi_check_recv(const void *buf, MPI_Comm comm, MPI_Count count, MPI_Datatype dt,
                                 int source, int tag, struct mpi_comm **c, struct mpi_type **t)
{
    int rc = mpi_check_common(comm, count, dt, c, t);
    if (rc) return rc;
    if (source != MPI_PROC_NULL && source != MPI_ANY_SOURCE &&
        (source < 0 || source >= (*c)->tc->size))
        return MPI_ERR_RANK;
    if (tag < MPI_ANY_TAG) return MPI_ERR_TAG;
    if (buf == NULL && count > 0 && (*t)->predefined && (*t)->size > 0) return MPI_ERR_BUFFER;
    return MPI_SUCCESS;
}

static inline int mpi_src_world(const struct tern_comm *tc, int source)
{
    return source == MPI_ANY_SOURCE ? TERN_ANY_SOURCE : core_comm_world(tc, source);
}

/* mpi_req.c */
int mpi_req_finish_op(struct mpi_req *mr, MPI_Status *st);

/* mpi_bsend.c */
/* The request id of the last message mpi_bsend_start sent (MPI_Cancel of an Ibsend). */
extern uint32_t mpi_bsend_last_id;
core_req_t *mpi_bsend_find(uint32_t id);
int mpi_bsend_start(const void *buf, MPI_Count count, const struct mpi_type *t, int dest, int tag,
                    uint16_t ctx);

#endif

/*
 * mpi_stubs.c - MPI entry points tern does not implement (parallel I/O, dynamic
 * processes, matched probes, graph topologies, neighbourhood collectives).
 * They exist so programs that mention them link; a call reports
 * MPI_ERR_UNSUPPORTED_OPERATION, naming the function, through the error handler of the
 * communicator involved (MPI_COMM_WORLD's when there is none). See docs/MPI.md.
 */
#include "mpi/mpi_impl.h"

#define MPI_STUB(Name, params, comm)                                                               \
    int PMPI_##Name params                                                                         \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return mpi_err(comm, "MPI_" #Name, MPI_ERR_UNSUPPORTED_OPERATION);                         \
    }                                                                                              \
    MPI_ALIAS(Name)

#pragma GCC diagnostic ignored "-Wunused-parameter"

MPI_STUB(File_open, (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh),
         comm)
MPI_STUB(File_close, (MPI_File * fh), MPI_COMM_WORLD)
MPI_STUB(File_delete, (const char *filename, MPI_Info info), MPI_COMM_WORLD)
MPI_STUB(File_read, (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_write,
         (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_read_at,
         (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
          MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_write_at,
         (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
          MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_read_all,
         (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_write_all,
         (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_read_at_all,
         (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
          MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_write_at_all,
         (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
          MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_set_view,
         (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
          const char *datarep, MPI_Info info),
         MPI_COMM_WORLD)
MPI_STUB(File_get_size, (MPI_File fh, MPI_Offset *size), MPI_COMM_WORLD)
MPI_STUB(File_set_size, (MPI_File fh, MPI_Offset size), MPI_COMM_WORLD)
MPI_STUB(File_seek, (MPI_File fh, MPI_Offset offset, int whence), MPI_COMM_WORLD)
MPI_STUB(File_sync, (MPI_File fh), MPI_COMM_WORLD)
MPI_STUB(Comm_spawn,
         (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
          MPI_Comm *intercomm, int array_of_errcodes[]),
         comm)
MPI_STUB(Intercomm_create,
         (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
          MPI_Comm *newintercomm),
         local_comm)
MPI_STUB(Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm), intercomm)
MPI_STUB(Mprobe, (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status),
         comm)
MPI_STUB(Improbe,
         (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message, MPI_Status *status),
         comm)
MPI_STUB(Mrecv,
         (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(Imrecv,
         (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(Graph_create,
         (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
          MPI_Comm *comm_graph),
         comm_old)
MPI_STUB(Dist_graph_create_adjacent,
         (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
          int outdegree, const int destinations[], const int destweights[], MPI_Info info,
          int reorder, MPI_Comm *comm_dist_graph),
         comm_old)
MPI_STUB(Neighbor_allgather,
         (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
          MPI_Datatype recvtype, MPI_Comm comm),
         comm)
MPI_STUB(Neighbor_alltoall,
         (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
          MPI_Datatype recvtype, MPI_Comm comm),
         comm)

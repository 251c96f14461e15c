/*
 * mpi_stubs.c - MPI 3.1 entry points tern does not implement: parallel I/O (MPI_File_*,
 * MPI_Register_datarep) and dynamic processes (spawn). They exist so
 * programs that mention them link (the mpi.symbols test checks every MPI 3.1 function has a
 * symbol); a call reports MPI_ERR_UNSUPPORTED_OPERATION, naming the function, through the error
 * handler of the communicator involved (MPI_COMM_WORLD's when there is none). See docs/MPI.md.
 */
#include "mpi/mpi_impl.h"

#define MPI_STUB(Name, params, comm)                                                               \
    int PMPI_##Name params                                                                         \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        return mpi_err(comm, "MPI_" #Name, MPI_ERR_UNSUPPORTED_OPERATION);                         \
    }                                                                                              \
    MPI_ALIAS(Name)

/*
 * The stubs that take a communicator check it first: an invalid one (MPI_COMM_NULL) is
 * MPI_ERR_COMM, as the standard's error classes say, before "unsupported". `inter` marks
 * calls whose communicator must be an intercommunicator.
 */
#define MPI_STUB_COMM(Name, params, comm, inter)                                                   \
    int PMPI_##Name params                                                                         \
    {                                                                                              \
        CORE_CS_SCOPE();                                                                           \
        int cls =                                                                                  \
            mpi_comm_get(comm) == NULL || (inter) ? MPI_ERR_COMM : MPI_ERR_UNSUPPORTED_OPERATION;  \
        return mpi_err(comm, "MPI_" #Name, cls);                                                   \
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
MPI_STUB_COMM(Comm_spawn,
              (const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
               MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]),
              comm, 0)
MPI_STUB_COMM(Comm_disconnect, (MPI_Comm * comm), comm ? *comm : MPI_COMM_NULL, 0)
MPI_STUB_COMM(Comm_spawn_multiple,
              (int count, char *array_of_commands[], char **array_of_argv[],
               const int array_of_maxprocs[], const MPI_Info array_of_info[], int root,
               MPI_Comm comm, MPI_Comm *intercomm, int array_of_errcodes[]),
              comm, 0)
MPI_STUB(File_call_errhandler, (MPI_File fh, int errorcode), MPI_COMM_WORLD)
MPI_STUB(File_create_errhandler,
         (MPI_File_errhandler_function * file_errhandler_fn, MPI_Errhandler *errhandler),
         MPI_COMM_WORLD)
MPI_STUB(File_get_amode, (MPI_File fh, int *amode), MPI_COMM_WORLD)
MPI_STUB(File_get_atomicity, (MPI_File fh, int *flag), MPI_COMM_WORLD)
MPI_STUB(File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp), MPI_COMM_WORLD)
MPI_STUB(File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler), MPI_COMM_WORLD)
MPI_STUB(File_get_group, (MPI_File fh, MPI_Group *group), MPI_COMM_WORLD)
MPI_STUB(File_get_info, (MPI_File fh, MPI_Info *info_used), MPI_COMM_WORLD)
MPI_STUB(File_get_position, (MPI_File fh, MPI_Offset *offset), MPI_COMM_WORLD)
MPI_STUB(File_get_position_shared, (MPI_File fh, MPI_Offset *offset), MPI_COMM_WORLD)
MPI_STUB(File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent),
         MPI_COMM_WORLD)
MPI_STUB(File_get_view,
         (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
          char *datarep),
         MPI_COMM_WORLD)
MPI_STUB(File_iread,
         (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iread_all,
         (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iread_at,
         (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
          MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iread_at_all,
         (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
          MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iread_shared,
         (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iwrite,
         (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iwrite_all,
         (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iwrite_at,
         (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
          MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iwrite_at_all,
         (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
          MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_iwrite_shared,
         (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request),
         MPI_COMM_WORLD)
MPI_STUB(File_preallocate, (MPI_File fh, MPI_Offset size), MPI_COMM_WORLD)
MPI_STUB(File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype),
         MPI_COMM_WORLD)
MPI_STUB(File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status), MPI_COMM_WORLD)
MPI_STUB(File_read_at_all_begin,
         (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype),
         MPI_COMM_WORLD)
MPI_STUB(File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status), MPI_COMM_WORLD)
MPI_STUB(File_read_ordered,
         (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype),
         MPI_COMM_WORLD)
MPI_STUB(File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status), MPI_COMM_WORLD)
MPI_STUB(File_read_shared,
         (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence), MPI_COMM_WORLD)
MPI_STUB(File_set_atomicity, (MPI_File fh, int flag), MPI_COMM_WORLD)
MPI_STUB(File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler), MPI_COMM_WORLD)
MPI_STUB(File_set_info, (MPI_File fh, MPI_Info info), MPI_COMM_WORLD)
MPI_STUB(File_write_all_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype),
         MPI_COMM_WORLD)
MPI_STUB(File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status), MPI_COMM_WORLD)
MPI_STUB(File_write_at_all_begin,
         (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype),
         MPI_COMM_WORLD)
MPI_STUB(File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status), MPI_COMM_WORLD)
MPI_STUB(File_write_ordered,
         (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(File_write_ordered_begin, (MPI_File fh, const void *buf, int count, MPI_Datatype datatype),
         MPI_COMM_WORLD)
MPI_STUB(File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status), MPI_COMM_WORLD)
MPI_STUB(File_write_shared,
         (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status),
         MPI_COMM_WORLD)
MPI_STUB(Register_datarep,
         (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
          MPI_Datarep_conversion_function *write_conversion_fn,
          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state),
         MPI_COMM_WORLD)

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
MPI_STUB(Add_error_class, (int *errorclass), MPI_COMM_WORLD)
MPI_STUB(Add_error_code, (int errorclass, int *errorcode), MPI_COMM_WORLD)
MPI_STUB(Add_error_string, (int errorcode, const char *string), MPI_COMM_WORLD)
MPI_STUB(Attr_delete, (MPI_Comm comm, int keyval), comm)
MPI_STUB(Attr_put, (MPI_Comm comm, int keyval, void *attribute_val), comm)
MPI_STUB(Close_port, (const char *port_name), MPI_COMM_WORLD)
MPI_STUB(Comm_accept,
         (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm), comm)
MPI_STUB(Comm_connect,
         (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm), comm)
MPI_STUB(Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm), comm)
MPI_STUB(Comm_disconnect, (MPI_Comm * comm), MPI_COMM_WORLD)
MPI_STUB(Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm), comm)
MPI_STUB(Comm_get_info, (MPI_Comm comm, MPI_Info *info_used), comm)
MPI_STUB(Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request), comm)
MPI_STUB(Comm_join, (int fd, MPI_Comm *intercomm), MPI_COMM_WORLD)
MPI_STUB(Comm_remote_group, (MPI_Comm comm, MPI_Group *group), comm)
MPI_STUB(Comm_remote_size, (MPI_Comm comm, int *size), comm)
MPI_STUB(Comm_set_info, (MPI_Comm comm, MPI_Info info), comm)
MPI_STUB(Comm_spawn_multiple,
         (int count, char *array_of_commands[], char **array_of_argv[],
          const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
          MPI_Comm *intercomm, int array_of_errcodes[]),
         comm)
MPI_STUB(Errhandler_create,
         (MPI_Comm_errhandler_function * comm_errhandler_fn, MPI_Errhandler *errhandler),
         MPI_COMM_WORLD)
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
MPI_STUB(Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count),
         MPI_COMM_WORLD)
MPI_STUB(Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup),
         MPI_COMM_WORLD)
MPI_STUB(Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup),
         MPI_COMM_WORLD)
MPI_STUB(Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup),
         MPI_COMM_WORLD)
MPI_STUB(Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup), MPI_COMM_WORLD)
MPI_STUB(Info_delete, (MPI_Info info, const char *key), MPI_COMM_WORLD)
MPI_STUB(Info_get_nthkey, (MPI_Info info, int n, char *key), MPI_COMM_WORLD)
MPI_STUB(Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag),
         MPI_COMM_WORLD)
MPI_STUB(Keyval_create,
         (MPI_Copy_function * copy_fn, MPI_Delete_function *delete_fn, int *keyval,
          void *extra_state),
         MPI_COMM_WORLD)
MPI_STUB(Keyval_free, (int *keyval), MPI_COMM_WORLD)
MPI_STUB(Lookup_name, (const char *service_name, MPI_Info info, char *port_name), MPI_COMM_WORLD)
MPI_STUB(Open_port, (MPI_Info info, char *port_name), MPI_COMM_WORLD)
MPI_STUB(Pack_external,
         (const char *datarep, const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
          MPI_Aint outsize, MPI_Aint *position),
         MPI_COMM_WORLD)
MPI_STUB(Pack_external_size,
         (const char *datarep, int incount, MPI_Datatype datatype, MPI_Aint *size), MPI_COMM_WORLD)
MPI_STUB(Publish_name, (const char *service_name, MPI_Info info, const char *port_name),
         MPI_COMM_WORLD)
MPI_STUB(Register_datarep,
         (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
          MPI_Datarep_conversion_function *write_conversion_fn,
          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state),
         MPI_COMM_WORLD)
MPI_STUB(Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status), MPI_COMM_WORLD)
MPI_STUB(Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status), MPI_COMM_WORLD)
MPI_STUB(Type_create_darray,
         (int size, int rank, int ndims, const int array_of_gsizes[], const int array_of_distribs[],
          const int array_of_dargs[], const int array_of_psizes[], int order, MPI_Datatype oldtype,
          MPI_Datatype *newtype),
         MPI_COMM_WORLD)
MPI_STUB(Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype), MPI_COMM_WORLD)
MPI_STUB(Type_create_f90_integer, (int r, MPI_Datatype *newtype), MPI_COMM_WORLD)
MPI_STUB(Type_create_f90_real, (int p, int r, MPI_Datatype *newtype), MPI_COMM_WORLD)
MPI_STUB(Type_create_keyval,
         (MPI_Type_copy_attr_function * type_copy_attr_fn,
          MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval, void *extra_state),
         MPI_COMM_WORLD)
MPI_STUB(Type_delete_attr, (MPI_Datatype datatype, int type_keyval), MPI_COMM_WORLD)
MPI_STUB(Type_extent, (MPI_Datatype datatype, MPI_Aint *extent), MPI_COMM_WORLD)
MPI_STUB(Type_free_keyval, (int *type_keyval), MPI_COMM_WORLD)
MPI_STUB(Type_get_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag),
         MPI_COMM_WORLD)
MPI_STUB(Type_get_contents,
         (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
          int array_of_integers[], MPI_Aint array_of_addresses[],
          MPI_Datatype array_of_datatypes[]),
         MPI_COMM_WORLD)
MPI_STUB(Type_get_envelope,
         (MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
          int *combiner),
         MPI_COMM_WORLD)
MPI_STUB(Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent),
         MPI_COMM_WORLD)
MPI_STUB(Type_get_true_extent_x,
         (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent), MPI_COMM_WORLD)
MPI_STUB(Type_hindexed,
         (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
          MPI_Datatype oldtype, MPI_Datatype *newtype),
         MPI_COMM_WORLD)
MPI_STUB(Type_hvector,
         (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype, MPI_Datatype *newtype),
         MPI_COMM_WORLD)
MPI_STUB(Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement), MPI_COMM_WORLD)
MPI_STUB(Type_match_size, (int typeclass, int size, MPI_Datatype *datatype), MPI_COMM_WORLD)
MPI_STUB(Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val),
         MPI_COMM_WORLD)
MPI_STUB(Type_struct,
         (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
          MPI_Datatype array_of_types[], MPI_Datatype *newtype),
         MPI_COMM_WORLD)
MPI_STUB(Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement), MPI_COMM_WORLD)
MPI_STUB(Unpack_external,
         (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
          void *outbuf, int outcount, MPI_Datatype datatype),
         MPI_COMM_WORLD)
MPI_STUB(Unpublish_name, (const char *service_name, MPI_Info info, const char *port_name),
         MPI_COMM_WORLD)
MPI_STUB(Win_call_errhandler, (MPI_Win win, int errorcode), MPI_COMM_WORLD)
MPI_STUB(Win_create_errhandler,
         (MPI_Win_errhandler_function * win_errhandler_fn, MPI_Errhandler *errhandler),
         MPI_COMM_WORLD)
MPI_STUB(Win_create_keyval,
         (MPI_Win_copy_attr_function * win_copy_attr_fn,
          MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state),
         MPI_COMM_WORLD)
MPI_STUB(Win_delete_attr, (MPI_Win win, int win_keyval), MPI_COMM_WORLD)
MPI_STUB(Win_free_keyval, (int *win_keyval), MPI_COMM_WORLD)
MPI_STUB(Win_get_info, (MPI_Win win, MPI_Info *info_used), MPI_COMM_WORLD)
MPI_STUB(Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val), MPI_COMM_WORLD)
MPI_STUB(Win_set_info, (MPI_Win win, MPI_Info info), MPI_COMM_WORLD)

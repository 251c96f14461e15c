/*
 * mpi.h - tern's MPI subset (MPI 3.1, C bindings): existing MPI programs compile with
 * `terncc` and run unmodified on tern's core. Installed as <prefix>/include/tern-mpi/mpi.h
 * so it never shadows another MPI's header.
 *
 * What is implemented and what is not is listed in docs/MPI.md; entry points that are not
 * implemented (I/O, spawn, ...) exist so programs link, and fail with
 * MPI_ERR_UNSUPPORTED_OPERATION through the communicator's error handler.
 *
 * Handles are integers (like MPICH's): every predefined handle is a compile-time constant,
 * usable in file-scope initializers and in switch statements. Handles, constants, error
 * classes and MPI_Status have the values and layout of the MPICH ABI (MPICH, Intel MPI,
 * MVAPICH: libmpi.so.12), so programs built against MPICH run on tern unchanged
 * (docs/MPI.md, "Running MPICH-built programs and mpi4py"). Every MPI_X function is
 * also available as PMPI_X for profiling tools; MPI_X is a weak alias of PMPI_X.
 *
 * Thread safety: MPI_Init_thread grants the level asked for, MPI_THREAD_MULTIPLE included:
 * then any thread may call any function at any time (one library-wide lock, let go while
 * a call waits); below MULTIPLE nothing is locked. As the standard requires, collective
 * calls on one communicator (communicator creation included) are ordered by the program
 * and one request is completed by one thread. Details: docs/MPI.md.
 */
#ifndef TERN_MPI_H
#define TERN_MPI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define MPI_VERSION    3
#define MPI_SUBVERSION 1
#define TERN_MPI       1 /* this is tern's MPI */

/* ---- handle and integer types --------------------------------------------- */

typedef int MPI_Comm;
typedef int MPI_Group;
typedef int MPI_Datatype;
typedef int MPI_Op;
typedef int MPI_Request;
typedef int MPI_Errhandler;
typedef int MPI_Info;
typedef int MPI_Win;
typedef int MPI_File;
typedef int MPI_Message;
typedef int MPI_Fint;
typedef intptr_t MPI_Aint;
typedef long long MPI_Offset;
typedef long long MPI_Count;

/** Status of a receive/probe. MPI_SOURCE, MPI_TAG and MPI_ERROR are public (MPI); the
 * first two ints are private: the byte count's low 32 bits, then its high bits shifted
 * left by one above the cancelled flag (bit 0) -- the MPICH ABI's layout, 20 bytes. */
typedef struct MPI_Status {
    int count_lo;
    int count_hi_and_cancelled;
    int MPI_SOURCE;
    int MPI_TAG;
    int MPI_ERROR;
} MPI_Status;

#define MPI_STATUS_IGNORE   ((MPI_Status *)1)
#define MPI_STATUSES_IGNORE ((MPI_Status *)1)

/* ---- constants -------------------------------------------------------------- */

#define MPI_ANY_SOURCE     (-2)
#define MPI_PROC_NULL      (-1)
#define MPI_ROOT           (-3)
#define MPI_ANY_TAG        (-1)
#define MPI_UNDEFINED      (-32766)
#define MPI_KEYVAL_INVALID 0x24000000
/* Per buffered message: covers tern's 16-byte rounding of each area (src/mpi/mpi_bsend.c). */
#define MPI_BSEND_OVERHEAD 96
#define MPI_BOTTOM         ((void *)0)
#define MPI_IN_PLACE       ((void *)-1)
/* Addresses the library exports (as MPICH does), not compile-time constants. */
extern int *const MPI_UNWEIGHTED;
extern int *const MPI_WEIGHTS_EMPTY;
#define MPI_ARGV_NULL       ((char **)0)
#define MPI_ARGVS_NULL      ((char ***)0)
#define MPI_ERRCODES_IGNORE ((int *)0)

#define MPI_MAX_PROCESSOR_NAME         128
#define MPI_MAX_ERROR_STRING           512
#define MPI_MAX_OBJECT_NAME            128
#define MPI_MAX_LIBRARY_VERSION_STRING 8192
#define MPI_MAX_INFO_KEY               255
#define MPI_MAX_INFO_VAL               1024
#define MPI_MAX_PORT_NAME              256
#define MPI_MAX_DATAREP_STRING         128

/* Thread levels. */
#define MPI_THREAD_SINGLE     0
#define MPI_THREAD_FUNNELED   1
#define MPI_THREAD_SERIALIZED 2
#define MPI_THREAD_MULTIPLE   3

/* Results of MPI_Comm_compare / MPI_Group_compare. */
#define MPI_IDENT     0
#define MPI_CONGRUENT 1
#define MPI_SIMILAR   2
#define MPI_UNEQUAL   3

/* Topologies (MPI_Topo_test). */
#define MPI_GRAPH      1
#define MPI_CART       2
#define MPI_DIST_GRAPH 3

/* MPI_Comm_split_type (MPI 4.0 7.4.2; MPICH's values). HW_GUIDED knows the
 * "mpi_hw_resource_type" values "mpi_shared_memory" and "machine" (both: the processes of
 * one node); any other value, or no such key, gives MPI_COMM_NULL. HW_UNGUIDED splits by
 * node when the job spans several (and sets that key in the info), else MPI_COMM_NULL. */
#define MPI_COMM_TYPE_SHARED      1
#define MPI_COMM_TYPE_HW_GUIDED   2
#define MPI_COMM_TYPE_HW_UNGUIDED 3

/* RMA: lock types, assertions, window attributes, flavors and memory models */
#define MPI_LOCK_EXCLUSIVE      234
#define MPI_LOCK_SHARED         235
#define MPI_MODE_NOCHECK        1024
#define MPI_MODE_NOSTORE        2048
#define MPI_MODE_NOPUT          4096
#define MPI_MODE_NOPRECEDE      8192
#define MPI_MODE_NOSUCCEED      16384
#define MPI_WIN_BASE            0x66000001
#define MPI_WIN_SIZE            0x66000003
#define MPI_WIN_DISP_UNIT       0x66000005
#define MPI_WIN_CREATE_FLAVOR   0x66000007
#define MPI_WIN_MODEL           0x66000009
#define MPI_WIN_FLAVOR_CREATE   1
#define MPI_WIN_FLAVOR_ALLOCATE 2
#define MPI_WIN_FLAVOR_DYNAMIC  3
#define MPI_WIN_FLAVOR_SHARED   4
#define MPI_WIN_SEPARATE        1
#define MPI_WIN_UNIFIED         2

/* Datatype combiners (MPI_Type_get_envelope). */
#define MPI_COMBINER_NAMED          1
#define MPI_COMBINER_DUP            2
#define MPI_COMBINER_CONTIGUOUS     3
#define MPI_COMBINER_VECTOR         4
#define MPI_COMBINER_HVECTOR        6
#define MPI_COMBINER_INDEXED        7
#define MPI_COMBINER_HINDEXED       9
#define MPI_COMBINER_INDEXED_BLOCK  10
#define MPI_COMBINER_HINDEXED_BLOCK 19
#define MPI_COMBINER_STRUCT         12
#define MPI_COMBINER_SUBARRAY       13
#define MPI_COMBINER_DARRAY         14
#define MPI_COMBINER_RESIZED        18
#define MPI_COMBINER_F90_REAL       15
#define MPI_COMBINER_F90_COMPLEX    16
#define MPI_COMBINER_F90_INTEGER    17

#define MPI_ORDER_C       56
#define MPI_ORDER_FORTRAN 57

/* Attribute keys of communicators (MPI_Comm_get_attr). */
#define MPI_TAG_UB          0x64400001
#define MPI_HOST            0x64400003
#define MPI_IO              0x64400005
#define MPI_WTIME_IS_GLOBAL 0x64400007
#define MPI_UNIVERSE_SIZE   0x64400009
#define MPI_APPNUM          0x6440000d
#define MPI_LASTUSEDCODE    0x6440000b

/* Error classes (error codes are the classes themselves). */
#define MPI_SUCCESS                   0
#define MPI_ERR_BUFFER                1
#define MPI_ERR_COUNT                 2
#define MPI_ERR_TYPE                  3
#define MPI_ERR_TAG                   4
#define MPI_ERR_COMM                  5
#define MPI_ERR_RANK                  6
#define MPI_ERR_REQUEST               19
#define MPI_ERR_ROOT                  7
#define MPI_ERR_GROUP                 8
#define MPI_ERR_OP                    9
#define MPI_ERR_TOPOLOGY              10
#define MPI_ERR_DIMS                  11
#define MPI_ERR_ARG                   12
#define MPI_ERR_UNKNOWN               13
#define MPI_ERR_TRUNCATE              14
#define MPI_ERR_OTHER                 15
#define MPI_ERR_INTERN                16
#define MPI_ERR_IN_STATUS             17
#define MPI_ERR_PENDING               18
#define MPI_ERR_KEYVAL                48
#define MPI_ERR_NO_MEM                34
#define MPI_ERR_BASE                  46
#define MPI_ERR_INFO_KEY              29
#define MPI_ERR_INFO_VALUE            30
#define MPI_ERR_INFO_NOKEY            31
#define MPI_ERR_SPAWN                 42
#define MPI_ERR_PORT                  38
#define MPI_ERR_SERVICE               41
#define MPI_ERR_NAME                  33
#define MPI_ERR_WIN                   45
#define MPI_ERR_SIZE                  51
#define MPI_ERR_DISP                  52
#define MPI_ERR_INFO                  28
#define MPI_ERR_LOCKTYPE              47
#define MPI_ERR_ASSERT                53
#define MPI_ERR_RMA_CONFLICT          49
#define MPI_ERR_RMA_SYNC              50
#define MPI_ERR_FILE                  27
#define MPI_ERR_NOT_SAME              35
#define MPI_ERR_AMODE                 21
#define MPI_ERR_UNSUPPORTED_DATAREP   43
#define MPI_ERR_UNSUPPORTED_OPERATION 44
#define MPI_ERR_NO_SUCH_FILE          37
#define MPI_ERR_FILE_EXISTS           25
#define MPI_ERR_BAD_FILE              22
#define MPI_ERR_ACCESS                20
#define MPI_ERR_NO_SPACE              36
#define MPI_ERR_QUOTA                 39
#define MPI_ERR_READ_ONLY             40
#define MPI_ERR_FILE_IN_USE           26
#define MPI_ERR_DUP_DATAREP           24
#define MPI_ERR_CONVERSION            23
#define MPI_ERR_IO                    32
#define MPI_ERR_RMA_RANGE             55
#define MPI_ERR_RMA_ATTACH            56
#define MPI_ERR_RMA_SHARED            57
#define MPI_ERR_RMA_FLAVOR            58
/* A process the operation involves has failed (MPI 5.0 / ULFM). tern reports it when a
 * peer dies and the communicator's handler is not MPI_ERRORS_ARE_FATAL. */
#define MPI_ERR_PROC_FAILED 101 /* MPICH's MPIX_ERR_PROC_FAILED */
/* Every predefined class is at most MPI_ERR_LASTCODE; MPI_Add_error_class/code hand out
 * numbers above it. */
#define MPI_ERR_LASTCODE 0x3fffffff

/* ---- predefined handles ---------------------------------------------------- */

#define MPI_COMM_NULL  ((MPI_Comm)0x04000000)
#define MPI_COMM_WORLD ((MPI_Comm)0x44000000)
#define MPI_COMM_SELF  ((MPI_Comm)0x44000001)

#define MPI_GROUP_NULL  ((MPI_Group)0x08000000)
#define MPI_GROUP_EMPTY ((MPI_Group)0x48000000)

#define MPI_REQUEST_NULL    ((MPI_Request)0x2c000000)
#define MPI_INFO_NULL       ((MPI_Info)0x1c000000)
#define MPI_INFO_ENV        ((MPI_Info)0x5c000001)
#define MPI_WIN_NULL        ((MPI_Win)0x20000000)
#define MPI_FILE_NULL       ((MPI_File)0)
#define MPI_MESSAGE_NULL    ((MPI_Message)0x2c000000)
#define MPI_MESSAGE_NO_PROC ((MPI_Message)0x6c000000)

#define MPI_ERRHANDLER_NULL  ((MPI_Errhandler)0x14000000)
#define MPI_ERRORS_ARE_FATAL ((MPI_Errhandler)0x54000000)
#define MPI_ERRORS_RETURN    ((MPI_Errhandler)0x54000001)
/* MPI 4.0: abort the processes of the communicator; tern ends the job, as for FATAL. */
#define MPI_ERRORS_ABORT ((MPI_Errhandler)0x54000003)

#define MPI_OP_NULL ((MPI_Op)0x18000000)
#define MPI_MAX     ((MPI_Op)0x58000001)
#define MPI_MIN     ((MPI_Op)0x58000002)
#define MPI_SUM     ((MPI_Op)0x58000003)
#define MPI_PROD    ((MPI_Op)0x58000004)
#define MPI_LAND    ((MPI_Op)0x58000005)
#define MPI_BAND    ((MPI_Op)0x58000006)
#define MPI_LOR     ((MPI_Op)0x58000007)
#define MPI_BOR     ((MPI_Op)0x58000008)
#define MPI_LXOR    ((MPI_Op)0x58000009)
#define MPI_BXOR    ((MPI_Op)0x5800000a)
#define MPI_MINLOC  ((MPI_Op)0x5800000b)
#define MPI_MAXLOC  ((MPI_Op)0x5800000c)
#define MPI_REPLACE ((MPI_Op)0x5800000d)
#define MPI_NO_OP   ((MPI_Op)0x5800000e)

#define MPI_DATATYPE_NULL         ((MPI_Datatype)0x0c000000)
#define MPI_CHAR                  ((MPI_Datatype)0x4c000101)
#define MPI_SIGNED_CHAR           ((MPI_Datatype)0x4c000118)
#define MPI_UNSIGNED_CHAR         ((MPI_Datatype)0x4c000102)
#define MPI_BYTE                  ((MPI_Datatype)0x4c00010d)
#define MPI_WCHAR                 ((MPI_Datatype)0x4c00040e)
#define MPI_SHORT                 ((MPI_Datatype)0x4c000203)
#define MPI_UNSIGNED_SHORT        ((MPI_Datatype)0x4c000204)
#define MPI_INT                   ((MPI_Datatype)0x4c000405)
#define MPI_UNSIGNED              ((MPI_Datatype)0x4c000406)
#define MPI_LONG                  ((MPI_Datatype)0x4c000807)
#define MPI_UNSIGNED_LONG         ((MPI_Datatype)0x4c000808)
#define MPI_LONG_LONG_INT         ((MPI_Datatype)0x4c000809)
#define MPI_LONG_LONG             MPI_LONG_LONG_INT
#define MPI_UNSIGNED_LONG_LONG    ((MPI_Datatype)0x4c000819)
#define MPI_FLOAT                 ((MPI_Datatype)0x4c00040a)
#define MPI_DOUBLE                ((MPI_Datatype)0x4c00080b)
#define MPI_LONG_DOUBLE           ((MPI_Datatype)0x4c00100c)
#define MPI_C_BOOL                ((MPI_Datatype)0x4c00013f)
#define MPI_INT8_T                ((MPI_Datatype)0x4c000137)
#define MPI_INT16_T               ((MPI_Datatype)0x4c000238)
#define MPI_INT32_T               ((MPI_Datatype)0x4c000439)
#define MPI_INT64_T               ((MPI_Datatype)0x4c00083a)
#define MPI_UINT8_T               ((MPI_Datatype)0x4c00013b)
#define MPI_UINT16_T              ((MPI_Datatype)0x4c00023c)
#define MPI_UINT32_T              ((MPI_Datatype)0x4c00043d)
#define MPI_UINT64_T              ((MPI_Datatype)0x4c00083e)
#define MPI_C_FLOAT_COMPLEX       ((MPI_Datatype)0x4c000840)
#define MPI_C_COMPLEX             MPI_C_FLOAT_COMPLEX
#define MPI_C_DOUBLE_COMPLEX      ((MPI_Datatype)0x4c001041)
#define MPI_C_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c002042)
#define MPI_AINT                  ((MPI_Datatype)0x4c000843)
#define MPI_OFFSET                ((MPI_Datatype)0x4c000844)
#define MPI_COUNT                 ((MPI_Datatype)0x4c000845)
#define MPI_PACKED                ((MPI_Datatype)0x4c00010f)
#define MPI_FLOAT_INT             ((MPI_Datatype)0x8c000000)
#define MPI_DOUBLE_INT            ((MPI_Datatype)0x8c000001)
#define MPI_LONG_INT              ((MPI_Datatype)0x8c000002)
#define MPI_2INT                  ((MPI_Datatype)0x4c000816)
#define MPI_SHORT_INT             ((MPI_Datatype)0x8c000003)
#define MPI_LONG_DOUBLE_INT       ((MPI_Datatype)0x8c000004)
/* The C++ types and Fortran's named types (MPI defines them for C too: a C library that
 * moves data for Fortran code, or C code reading Fortran data, names them). */
#define MPI_CXX_BOOL                ((MPI_Datatype)0x4c000133)
#define MPI_CXX_FLOAT_COMPLEX       ((MPI_Datatype)0x4c000834)
#define MPI_CXX_DOUBLE_COMPLEX      ((MPI_Datatype)0x4c001035)
#define MPI_CXX_LONG_DOUBLE_COMPLEX ((MPI_Datatype)0x4c002036)
#define MPI_CHARACTER               ((MPI_Datatype)0x4c00011a)
#define MPI_LOGICAL                 ((MPI_Datatype)0x4c00041d)
#define MPI_INTEGER                 ((MPI_Datatype)0x4c00041b)
#define MPI_REAL                    ((MPI_Datatype)0x4c00041c)
#define MPI_DOUBLE_PRECISION        ((MPI_Datatype)0x4c00081f)
#define MPI_COMPLEX                 ((MPI_Datatype)0x4c00081e)
#define MPI_DOUBLE_COMPLEX          ((MPI_Datatype)0x4c001022)
#define MPI_INTEGER1                ((MPI_Datatype)0x4c00012d)
#define MPI_INTEGER2                ((MPI_Datatype)0x4c00022f)
#define MPI_INTEGER4                ((MPI_Datatype)0x4c000430)
#define MPI_INTEGER8                ((MPI_Datatype)0x4c000831)
#define MPI_REAL4                   ((MPI_Datatype)0x4c000427)
#define MPI_REAL8                   ((MPI_Datatype)0x4c000829)
#define MPI_COMPLEX8                ((MPI_Datatype)0x4c000828)
#define MPI_COMPLEX16               ((MPI_Datatype)0x4c00102a)
#define MPI_2REAL                   ((MPI_Datatype)0x4c000821)
#define MPI_2DOUBLE_PRECISION       ((MPI_Datatype)0x4c001023)
#define MPI_2INTEGER                ((MPI_Datatype)0x4c000820)
/* Fortran types with no C counterpart here are MPI_DATATYPE_NULL, as MPI allows. */
#define MPI_INTEGER16 MPI_DATATYPE_NULL
#define MPI_REAL2     MPI_DATATYPE_NULL
#define MPI_REAL16    MPI_DATATYPE_NULL
#define MPI_COMPLEX4  MPI_DATATYPE_NULL
#define MPI_COMPLEX32 MPI_DATATYPE_NULL

/* ---- callback types ------------------------------------------------------- */

typedef void MPI_User_function(void *invec, void *inoutvec, int *len, MPI_Datatype *datatype);
typedef void MPI_Comm_errhandler_function(MPI_Comm *comm, int *errcode, ...);
typedef MPI_Comm_errhandler_function MPI_Comm_errhandler_fn;
typedef int MPI_Comm_copy_attr_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Comm_delete_attr_function(MPI_Comm comm, int keyval, void *attribute_val,
                                          void *extra_state);
#define MPI_COMM_NULL_COPY_FN   ((MPI_Comm_copy_attr_function *)0)
#define MPI_COMM_NULL_DELETE_FN ((MPI_Comm_delete_attr_function *)0)
#define MPI_COMM_DUP_FN         ((MPI_Comm_copy_attr_function *)1)

/* Callbacks of window and datatype attributes, generalized requests, error handlers of
 * windows and files, the MPI-1 attribute interface and data representations. */
typedef int MPI_Win_copy_attr_function(MPI_Win oldwin, int win_keyval, void *extra_state,
                                       void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Win_delete_attr_function(MPI_Win win, int win_keyval, void *attribute_val,
                                         void *extra_state);
typedef int MPI_Type_copy_attr_function(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                                        void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Type_delete_attr_function(MPI_Datatype datatype, int type_keyval,
                                          void *attribute_val, void *extra_state);
typedef int MPI_Copy_function(MPI_Comm oldcomm, int keyval, void *extra_state,
                              void *attribute_val_in, void *attribute_val_out, int *flag);
typedef int MPI_Delete_function(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state);
typedef void MPI_Win_errhandler_function(MPI_Win *win, int *errcode, ...);
typedef MPI_Win_errhandler_function MPI_Win_errhandler_fn;
typedef void MPI_File_errhandler_function(MPI_File *file, int *errcode, ...);
typedef MPI_File_errhandler_function MPI_File_errhandler_fn;
typedef MPI_Comm_errhandler_function MPI_Handler_function;
typedef int MPI_Grequest_query_function(void *extra_state, MPI_Status *status);
typedef int MPI_Grequest_free_function(void *extra_state);
typedef int MPI_Grequest_cancel_function(void *extra_state, int complete);
typedef int MPI_Datarep_extent_function(MPI_Datatype datatype, MPI_Aint *file_extent,
                                        void *extra_state);
typedef int MPI_Datarep_conversion_function(void *userbuf, MPI_Datatype datatype, int count,
                                            void *filebuf, MPI_Offset position, void *extra_state);
#define MPI_WIN_NULL_COPY_FN    ((MPI_Win_copy_attr_function *)0)
#define MPI_WIN_NULL_DELETE_FN  ((MPI_Win_delete_attr_function *)0)
#define MPI_WIN_DUP_FN          ((MPI_Win_copy_attr_function *)1)
#define MPI_TYPE_NULL_COPY_FN   ((MPI_Type_copy_attr_function *)0)
#define MPI_TYPE_NULL_DELETE_FN ((MPI_Type_delete_attr_function *)0)
#define MPI_TYPE_DUP_FN         ((MPI_Type_copy_attr_function *)1)
#define MPI_NULL_COPY_FN        ((MPI_Copy_function *)0)
#define MPI_NULL_DELETE_FN      ((MPI_Delete_function *)0)
#define MPI_DUP_FN              ((MPI_Copy_function *)1)
#define MPI_CONVERSION_FN_NULL  ((MPI_Datarep_conversion_function *)0)

/* ---- names of the MPICH ABI ------------------------------------------------------
 * Objects a program built against MPICH's mpi.h takes from the library by name
 * (src/mpi/mpi_abi.c; docs/MPI.md, "Running MPICH-built programs and mpi4py"). */
/** What MPICH's header calls MPI_DUP_FN (and MPI_COMM/TYPE/WIN_DUP_FN): stores
 * attribute_val_in at *(void **)attribute_val_out, sets *flag to 1, returns MPI_SUCCESS.
 * Thread safety: none needed (touches only its arguments). */
int MPIR_Dup_fn(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                void *attribute_val_out, int *flag);
/* Fortran sentinels (tern has no Fortran bindings: they exist so such programs link). */
extern MPI_Fint *MPI_F_STATUS_IGNORE;
extern MPI_Fint *MPI_F_STATUSES_IGNORE;
extern int MPIR_F08_MPI_IN_PLACE;
extern int MPIR_F08_MPI_BOTTOM;
extern MPI_Fint MPIR_F08_MPI_STATUS_IGNORE_OBJ[5];
extern MPI_Fint MPIR_F08_MPI_STATUSES_IGNORE_OBJ[5];
extern MPI_Fint *MPI_F08_STATUS_IGNORE;
extern MPI_Fint *MPI_F08_STATUSES_IGNORE;

/* A status as MPI_Fint[MPI_STATUS_SIZE] (MPI_Status_c2f / MPI_Status_f2c). */
#define MPI_STATUS_SIZE   5
#define MPI_F_STATUS_SIZE MPI_STATUS_SIZE
#define MPI_F_SOURCE      2
#define MPI_F_TAG         3
#define MPI_F_ERROR       4

/* MPI_Type_match_size, MPI_Type_create_darray. */
#define MPI_TYPECLASS_REAL       1
#define MPI_TYPECLASS_INTEGER    2
#define MPI_TYPECLASS_COMPLEX    3
#define MPI_DISTRIBUTE_BLOCK     121
#define MPI_DISTRIBUTE_CYCLIC    122
#define MPI_DISTRIBUTE_NONE      123
#define MPI_DISTRIBUTE_DFLT_DARG (-49767)

/* Parallel I/O constants (the functions are unsupported; programs that name them compile). */
#define MPI_MODE_RDONLY          2
#define MPI_MODE_RDWR            8
#define MPI_MODE_WRONLY          4
#define MPI_MODE_CREATE          1
#define MPI_MODE_EXCL            64
#define MPI_MODE_DELETE_ON_CLOSE 16
#define MPI_MODE_UNIQUE_OPEN     32
#define MPI_MODE_APPEND          128
#define MPI_MODE_SEQUENTIAL      256
#define MPI_SEEK_SET             600
#define MPI_SEEK_CUR             602
#define MPI_SEEK_END             604
#define MPI_DISPLACEMENT_CURRENT 0x - 33c3886

/* The tool information interface (MPI_T). tern exposes no control or performance
 * variables and no categories: the counts are 0 and every index is invalid. */
typedef int MPI_T_enum;
typedef int MPI_T_cvar_handle;
typedef int MPI_T_pvar_handle;
typedef int MPI_T_pvar_session;
#define MPI_T_ENUM_NULL                ((MPI_T_enum)0)
#define MPI_T_CVAR_HANDLE_NULL         ((MPI_T_cvar_handle)0)
#define MPI_T_PVAR_HANDLE_NULL         ((MPI_T_pvar_handle)0)
#define MPI_T_PVAR_ALL_HANDLES         ((MPI_T_pvar_handle)-1)
#define MPI_T_PVAR_SESSION_NULL        ((MPI_T_pvar_session)0)
#define MPI_T_VERBOSITY_USER_BASIC     221
#define MPI_T_VERBOSITY_USER_DETAIL    222
#define MPI_T_VERBOSITY_USER_ALL       223
#define MPI_T_VERBOSITY_TUNER_BASIC    224
#define MPI_T_VERBOSITY_TUNER_DETAIL   225
#define MPI_T_VERBOSITY_TUNER_ALL      226
#define MPI_T_VERBOSITY_MPIDEV_BASIC   227
#define MPI_T_VERBOSITY_MPIDEV_DETAIL  228
#define MPI_T_VERBOSITY_MPIDEV_ALL     229
#define MPI_T_BIND_NO_OBJECT           9700
#define MPI_T_BIND_MPI_COMM            9701
#define MPI_T_BIND_MPI_DATATYPE        9702
#define MPI_T_BIND_MPI_ERRHANDLER      9703
#define MPI_T_BIND_MPI_FILE            9704
#define MPI_T_BIND_MPI_GROUP           9705
#define MPI_T_BIND_MPI_OP              9706
#define MPI_T_BIND_MPI_REQUEST         9707
#define MPI_T_BIND_MPI_WIN             9708
#define MPI_T_BIND_MPI_MESSAGE         9709
#define MPI_T_BIND_MPI_INFO            9710
#define MPI_T_SCOPE_CONSTANT           60438
#define MPI_T_SCOPE_READONLY           60439
#define MPI_T_SCOPE_LOCAL              60440
#define MPI_T_SCOPE_GROUP              60441
#define MPI_T_SCOPE_GROUP_EQ           60442
#define MPI_T_SCOPE_ALL                60443
#define MPI_T_SCOPE_ALL_EQ             60444
#define MPI_T_PVAR_CLASS_STATE         240
#define MPI_T_PVAR_CLASS_LEVEL         241
#define MPI_T_PVAR_CLASS_SIZE          242
#define MPI_T_PVAR_CLASS_PERCENTAGE    243
#define MPI_T_PVAR_CLASS_HIGHWATERMARK 244
#define MPI_T_PVAR_CLASS_LOWWATERMARK  245
#define MPI_T_PVAR_CLASS_COUNTER       246
#define MPI_T_PVAR_CLASS_AGGREGATE     247
#define MPI_T_PVAR_CLASS_TIMER         248
#define MPI_T_PVAR_CLASS_GENERIC       249
/* MPI_T error codes (returned directly; MPI_T functions never call an error handler). */
#define MPI_T_ERR_MEMORY            59
#define MPI_T_ERR_NOT_INITIALIZED   60
#define MPI_T_ERR_CANNOT_INIT       61
#define MPI_T_ERR_INVALID_INDEX     62
#define MPI_T_ERR_INVALID_ITEM      63
#define MPI_T_ERR_INVALID_HANDLE    64
#define MPI_T_ERR_OUT_OF_HANDLES    65
#define MPI_T_ERR_OUT_OF_SESSIONS   66
#define MPI_T_ERR_INVALID_SESSION   67
#define MPI_T_ERR_CVAR_SET_NOT_NOW  68
#define MPI_T_ERR_CVAR_SET_NEVER    69
#define MPI_T_ERR_PVAR_NO_STARTSTOP 70
#define MPI_T_ERR_PVAR_NO_WRITE     71
#define MPI_T_ERR_PVAR_NO_ATOMIC    72
#define MPI_T_ERR_INVALID_NAME      73
#define MPI_T_ERR_INVALID           74

/* ---- functions ------------------------------------------------------------- */
/* TERN__MPI declares MPI_name and its profiling twin PMPI_name. */
#define TERN__MPI(ret, name, params)                                                               \
    ret MPI_##name params;                                                                         \
    ret PMPI_##name params

/* Environment */
TERN__MPI(int, Init, (int *argc, char ***argv));
TERN__MPI(int, Init_thread, (int *argc, char ***argv, int required, int *provided));
TERN__MPI(int, Initialized, (int *flag));
TERN__MPI(int, Finalized, (int *flag));
TERN__MPI(int, Finalize, (void));
TERN__MPI(int, Abort, (MPI_Comm comm, int errorcode));
TERN__MPI(double, Wtime, (void));
TERN__MPI(double, Wtick, (void));
TERN__MPI(int, Get_version, (int *version, int *subversion));
TERN__MPI(int, Get_library_version, (char *version, int *resultlen));
TERN__MPI(int, Get_processor_name, (char *name, int *resultlen));
TERN__MPI(int, Query_thread, (int *provided));
TERN__MPI(int, Is_thread_main, (int *flag));
TERN__MPI(int, Alloc_mem, (MPI_Aint size, MPI_Info info, void *baseptr));
TERN__MPI(int, Free_mem, (void *base));
TERN__MPI(int, Error_string, (int errorcode, char *string, int *resultlen));
TERN__MPI(int, Error_class, (int errorcode, int *errorclass));
TERN__MPI(int, Comm_set_errhandler, (MPI_Comm comm, MPI_Errhandler errhandler));
TERN__MPI(int, Comm_get_errhandler, (MPI_Comm comm, MPI_Errhandler *errhandler));
TERN__MPI(int, Errhandler_set, (MPI_Comm comm, MPI_Errhandler errhandler));
TERN__MPI(int, Errhandler_get, (MPI_Comm comm, MPI_Errhandler *errhandler));
TERN__MPI(int, Comm_create_errhandler,
          (MPI_Comm_errhandler_function * fn, MPI_Errhandler *errhandler));
TERN__MPI(int, Errhandler_free, (MPI_Errhandler * errhandler));
TERN__MPI(int, Comm_call_errhandler, (MPI_Comm comm, int errorcode));
TERN__MPI(int, Info_create, (MPI_Info * info));
TERN__MPI(int, Info_set, (MPI_Info info, const char *key, const char *value));
TERN__MPI(int, Info_get, (MPI_Info info, const char *key, int valuelen, char *value, int *flag));
TERN__MPI(int, Info_free, (MPI_Info * info));
TERN__MPI(int, Info_dup, (MPI_Info info, MPI_Info *newinfo));
TERN__MPI(int, Info_get_nkeys, (MPI_Info info, int *nkeys));
TERN__MPI(int, Pcontrol, (const int level, ...));

/* Point-to-point */
TERN__MPI(int, Send,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
TERN__MPI(int, Ssend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
TERN__MPI(int, Rsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
TERN__MPI(int, Bsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm));
TERN__MPI(int, Buffer_attach, (void *buffer, int size));
TERN__MPI(int, Buffer_detach, (void *buffer_addr, int *size));
TERN__MPI(int, Recv,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Status *status));
TERN__MPI(int, Isend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Issend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Irsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Ibsend,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Irecv,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Sendrecv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
           MPI_Comm comm, MPI_Status *status));
TERN__MPI(int, Sendrecv_replace,
          (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
           int recvtag, MPI_Comm comm, MPI_Status *status));
TERN__MPI(int, Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status));
TERN__MPI(int, Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status));
TERN__MPI(int, Get_count, (const MPI_Status *status, MPI_Datatype datatype, int *count));
TERN__MPI(int, Get_elements, (const MPI_Status *status, MPI_Datatype datatype, int *count));
TERN__MPI(int, Wait, (MPI_Request * request, MPI_Status *status));
TERN__MPI(int, Waitall, (int count, MPI_Request requests[], MPI_Status *statuses));
TERN__MPI(int, Waitany, (int count, MPI_Request requests[], int *index, MPI_Status *status));
TERN__MPI(int, Waitsome,
          (int incount, MPI_Request requests[], int *outcount, int indices[],
           MPI_Status *statuses));
TERN__MPI(int, Test, (MPI_Request * request, int *flag, MPI_Status *status));
TERN__MPI(int, Testall, (int count, MPI_Request requests[], int *flag, MPI_Status *statuses));
TERN__MPI(int, Testany,
          (int count, MPI_Request requests[], int *index, int *flag, MPI_Status *status));
TERN__MPI(int, Testsome,
          (int incount, MPI_Request requests[], int *outcount, int indices[],
           MPI_Status *statuses));
TERN__MPI(int, Request_free, (MPI_Request * request));
TERN__MPI(int, Request_get_status, (MPI_Request request, int *flag, MPI_Status *status));
TERN__MPI(int, Cancel, (MPI_Request * request));
TERN__MPI(int, Test_cancelled, (const MPI_Status *status, int *flag));
TERN__MPI(int, Send_init,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Ssend_init,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Rsend_init,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Bsend_init,
          (const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Recv_init,
          (void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Start, (MPI_Request * request));
TERN__MPI(int, Startall, (int count, MPI_Request requests[]));

/* Large-count point-to-point */
TERN__MPI(int, Send_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm));
TERN__MPI(int, Ssend_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm));
TERN__MPI(int, Rsend_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm));
TERN__MPI(int, Bsend_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm));
TERN__MPI(int, Recv_c,
          (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Status *status));
TERN__MPI(int, Isend_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Issend_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Irsend_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Ibsend_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Irecv_c,
          (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Sendrecv_c,
          (const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest, int sendtag,
           void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int source, int recvtag,
           MPI_Comm comm, MPI_Status *status));
TERN__MPI(int, Send_init_c,
          (const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Recv_init_c,
          (void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Get_count_c, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count));

/* Communicators and groups */
TERN__MPI(int, Comm_rank, (MPI_Comm comm, int *rank));
TERN__MPI(int, Comm_size, (MPI_Comm comm, int *size));
TERN__MPI(int, Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm));
TERN__MPI(int, Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm));
TERN__MPI(int, Comm_split_type,
          (MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm));
TERN__MPI(int, Comm_free, (MPI_Comm * comm));
TERN__MPI(int, Comm_compare, (MPI_Comm comm1, MPI_Comm comm2, int *result));
TERN__MPI(int, Comm_group, (MPI_Comm comm, MPI_Group *group));
TERN__MPI(int, Comm_create, (MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm));
TERN__MPI(int, Comm_get_name, (MPI_Comm comm, char *comm_name, int *resultlen));
TERN__MPI(int, Comm_set_name, (MPI_Comm comm, const char *comm_name));
TERN__MPI(int, Comm_test_inter, (MPI_Comm comm, int *flag));
TERN__MPI(int, Comm_get_parent, (MPI_Comm * parent));
TERN__MPI(int, Comm_get_attr, (MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag));
TERN__MPI(int, Attr_get, (MPI_Comm comm, int keyval, void *attribute_val, int *flag));
TERN__MPI(int, Comm_create_keyval,
          (MPI_Comm_copy_attr_function * copy_fn, MPI_Comm_delete_attr_function *delete_fn,
           int *keyval, void *extra_state));
TERN__MPI(int, Comm_free_keyval, (int *keyval));
TERN__MPI(int, Comm_set_attr, (MPI_Comm comm, int keyval, void *attribute_val));
TERN__MPI(int, Comm_delete_attr, (MPI_Comm comm, int keyval));
TERN__MPI(int, Group_size, (MPI_Group group, int *size));
TERN__MPI(int, Group_rank, (MPI_Group group, int *rank));
TERN__MPI(int, Group_incl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup));
TERN__MPI(int, Group_excl, (MPI_Group group, int n, const int ranks[], MPI_Group *newgroup));
TERN__MPI(int, Group_range_incl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup));
TERN__MPI(int, Group_translate_ranks,
          (MPI_Group group1, int n, const int ranks1[], MPI_Group group2, int ranks2[]));
TERN__MPI(int, Group_compare, (MPI_Group group1, MPI_Group group2, int *result));
TERN__MPI(int, Group_free, (MPI_Group * group));
TERN__MPI(int, Comm_c2f, (MPI_Comm comm));
TERN__MPI(MPI_Comm, Comm_f2c, (MPI_Fint comm));

/* Datatypes */
TERN__MPI(int, Type_size, (MPI_Datatype datatype, int *size));
TERN__MPI(int, Type_size_c, (MPI_Datatype datatype, MPI_Count *size));
TERN__MPI(int, Type_size_x, (MPI_Datatype datatype, MPI_Count *size));
TERN__MPI(int, Type_get_extent, (MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent));
TERN__MPI(int, Type_get_true_extent,
          (MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent));
TERN__MPI(int, Type_get_name, (MPI_Datatype datatype, char *type_name, int *resultlen));
TERN__MPI(int, Type_set_name, (MPI_Datatype datatype, const char *type_name));
TERN__MPI(int, Type_contiguous, (int count, MPI_Datatype oldtype, MPI_Datatype *newtype));
TERN__MPI(int, Type_vector,
          (int count, int blocklength, int stride, MPI_Datatype oldtype, MPI_Datatype *newtype));
TERN__MPI(int, Type_create_hvector,
          (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
           MPI_Datatype *newtype));
TERN__MPI(int, Type_indexed,
          (int count, const int blocklengths[], const int displacements[], MPI_Datatype oldtype,
           MPI_Datatype *newtype));
TERN__MPI(int, Type_create_hindexed,
          (int count, const int blocklengths[], const MPI_Aint displacements[],
           MPI_Datatype oldtype, MPI_Datatype *newtype));
TERN__MPI(int, Type_create_indexed_block,
          (int count, int blocklength, const int displacements[], MPI_Datatype oldtype,
           MPI_Datatype *newtype));
TERN__MPI(int, Type_create_hindexed_block,
          (int count, int blocklength, const MPI_Aint displacements[], MPI_Datatype oldtype,
           MPI_Datatype *newtype));
TERN__MPI(int, Type_create_struct,
          (int count, const int blocklengths[], const MPI_Aint displacements[],
           const MPI_Datatype types[], MPI_Datatype *newtype));
TERN__MPI(int, Type_create_resized,
          (MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *newtype));
TERN__MPI(int, Type_create_subarray,
          (int ndims, const int sizes[], const int subsizes[], const int starts[], int order,
           MPI_Datatype oldtype, MPI_Datatype *newtype));
TERN__MPI(int, Type_dup, (MPI_Datatype oldtype, MPI_Datatype *newtype));
TERN__MPI(int, Type_commit, (MPI_Datatype * datatype));
TERN__MPI(int, Type_free, (MPI_Datatype * datatype));
TERN__MPI(int, Get_address, (const void *location, MPI_Aint *address));
TERN__MPI(int, Address, (void *location, MPI_Aint *address));
TERN__MPI(MPI_Aint, Aint_add, (MPI_Aint base, MPI_Aint disp));
TERN__MPI(MPI_Aint, Aint_diff, (MPI_Aint addr1, MPI_Aint addr2));
TERN__MPI(int, Pack,
          (const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
           int *position, MPI_Comm comm));
TERN__MPI(int, Unpack,
          (const void *inbuf, int insize, int *position, void *outbuf, int outcount,
           MPI_Datatype datatype, MPI_Comm comm));
TERN__MPI(int, Pack_size, (int incount, MPI_Datatype datatype, MPI_Comm comm, int *size));

/* Collectives and reduction operations */
TERN__MPI(int, Op_create, (MPI_User_function * user_fn, int commute, MPI_Op *op));
TERN__MPI(int, Op_free, (MPI_Op * op));
TERN__MPI(int, Op_commutative, (MPI_Op op, int *commute));
TERN__MPI(int, Reduce_local,
          (const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype, MPI_Op op));
TERN__MPI(int, Barrier, (MPI_Comm comm));
TERN__MPI(int, Bcast, (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm));
TERN__MPI(int, Reduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm));
TERN__MPI(int, Allreduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm));
TERN__MPI(int, Gather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm));
TERN__MPI(int, Gatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm));
TERN__MPI(int, Scatter,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm));
TERN__MPI(int, Scatterv,
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm));
TERN__MPI(int, Allgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm));
TERN__MPI(int, Allgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm));
TERN__MPI(int, Alltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm));
TERN__MPI(int, Alltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm));
TERN__MPI(int, Reduce_scatter,
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm));
TERN__MPI(int, Reduce_scatter_block,
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm));
TERN__MPI(int, Scan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm));
TERN__MPI(int, Exscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm));
TERN__MPI(int, Ibarrier, (MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Ibcast,
          (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Ireduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Iallreduce,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Igather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Igatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Iscatter,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Iscatterv,
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Iallgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Iallgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Ialltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Alltoallw,
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm));
TERN__MPI(int, Ialltoallw,
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Ialltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Ireduce_scatter,
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Ireduce_scatter_block,
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Iscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Iexscan,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Request *request));

/* Topologies */
TERN__MPI(int, Dims_create, (int nnodes, int ndims, int dims[]));
TERN__MPI(int, Cart_create,
          (MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int reorder,
           MPI_Comm *comm_cart));
TERN__MPI(int, Cart_coords, (MPI_Comm comm, int rank, int maxdims, int coords[]));
TERN__MPI(int, Cart_rank, (MPI_Comm comm, const int coords[], int *rank));
TERN__MPI(int, Cart_shift,
          (MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest));
TERN__MPI(int, Cart_get, (MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]));
TERN__MPI(int, Cartdim_get, (MPI_Comm comm, int *ndims));
TERN__MPI(int, Cart_sub, (MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm));
TERN__MPI(int, Topo_test, (MPI_Comm comm, int *status));

/* One-sided communication (RMA). Windows on one node are shared memory (direct load and
 * store, CPU atomics); other targets are served by active messages in the target's
 * progress engine, so a passive target is served whenever it next enters the library. */
TERN__MPI(int, Win_create,
          (void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win *win));
TERN__MPI(int, Win_allocate,
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
           MPI_Win *win));
TERN__MPI(int, Win_allocate_shared,
          (MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
           MPI_Win *win));
TERN__MPI(int, Win_create_dynamic, (MPI_Info info, MPI_Comm comm, MPI_Win *win));
TERN__MPI(int, Win_free, (MPI_Win * win));
TERN__MPI(int, Win_fence, (int assert, MPI_Win win));
TERN__MPI(int, Win_lock, (int lock_type, int rank, int assert, MPI_Win win));
TERN__MPI(int, Win_unlock, (int rank, MPI_Win win));
TERN__MPI(int, Win_lock_all, (int assert, MPI_Win win));
TERN__MPI(int, Win_unlock_all, (MPI_Win win));
TERN__MPI(int, Win_flush, (int rank, MPI_Win win));
TERN__MPI(int, Win_flush_all, (MPI_Win win));
TERN__MPI(int, Win_sync, (MPI_Win win));
TERN__MPI(int, Put,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win));
TERN__MPI(int, Get,
          (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win));
TERN__MPI(int, Accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win));
TERN__MPI(int, Fetch_and_op,
          (const void *origin_addr, void *result_addr, MPI_Datatype datatype, int target_rank,
           MPI_Aint target_disp, MPI_Op op, MPI_Win win));
TERN__MPI(int, Compare_and_swap,
          (const void *origin_addr, const void *compare_addr, void *result_addr,
           MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win));
TERN__MPI(int, Win_attach, (MPI_Win win, void *base, MPI_Aint size));
TERN__MPI(int, Win_detach, (MPI_Win win, const void *base));
TERN__MPI(int, Win_shared_query,
          (MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr));
TERN__MPI(int, Win_get_group, (MPI_Win win, MPI_Group *group));
TERN__MPI(int, Win_get_attr, (MPI_Win win, int win_keyval, void *attribute_val, int *flag));
TERN__MPI(int, Win_set_errhandler, (MPI_Win win, MPI_Errhandler errhandler));
TERN__MPI(int, Win_get_errhandler, (MPI_Win win, MPI_Errhandler *errhandler));
TERN__MPI(int, Win_set_name, (MPI_Win win, const char *win_name));
TERN__MPI(int, Win_get_name, (MPI_Win win, char *win_name, int *resultlen));
TERN__MPI(int, Win_post, (MPI_Group group, int assert, MPI_Win win));
TERN__MPI(int, Win_start, (MPI_Group group, int assert, MPI_Win win));
TERN__MPI(int, Win_complete, (MPI_Win win));
TERN__MPI(int, Win_wait, (MPI_Win win));
TERN__MPI(int, Win_test, (MPI_Win win, int *flag));
TERN__MPI(int, Win_flush_local, (int rank, MPI_Win win));
TERN__MPI(int, Win_flush_local_all, (MPI_Win win));
TERN__MPI(int, Get_accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win));

/* Matched probes (MPI 3.1, 3.8.2). MPI_Mprobe/MPI_Improbe take the matched message out of
 * matching: only MPI_Mrecv/MPI_Imrecv with the returned handle can receive it. A probe of
 * MPI_PROC_NULL returns MPI_MESSAGE_NO_PROC, whose receive completes at once with source
 * MPI_PROC_NULL. Errors: MPI_ERR_COMM, MPI_ERR_RANK, MPI_ERR_TAG (probes), MPI_ERR_REQUEST
 * (not a live message handle), MPI_ERR_TRUNCATE, MPI_ERR_PROC_FAILED. */
TERN__MPI(int, Mprobe,
          (int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status));
TERN__MPI(int, Improbe,
          (int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
           MPI_Status *status));
TERN__MPI(int, Mrecv,
          (void *buf, int count, MPI_Datatype datatype, MPI_Message *message, MPI_Status *status));
TERN__MPI(int, Imrecv,
          (void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
           MPI_Request *request));

/* Graph and distributed-graph topologies (MPI 3.1, 7.5). Ranks keep their order (reorder is
 * accepted and ignored, as for MPI_Cart_create); MPI_Graph_map/MPI_Cart_map say so. Queries
 * on a communicator without that topology fail with MPI_ERR_TOPOLOGY. MPI_Dist_graph_create
 * gathers the edges with one MPI_Alltoall and one MPI_Alltoallv on comm_old. */
TERN__MPI(int, Graph_create,
          (MPI_Comm comm_old, int nnodes, const int index[], const int edges[], int reorder,
           MPI_Comm *comm_graph));
TERN__MPI(int, Graphdims_get, (MPI_Comm comm, int *nnodes, int *nedges));
TERN__MPI(int, Graph_get, (MPI_Comm comm, int maxindex, int maxedges, int indx[], int edges[]));
TERN__MPI(int, Graph_neighbors_count, (MPI_Comm comm, int rank, int *nneighbors));
TERN__MPI(int, Graph_neighbors, (MPI_Comm comm, int rank, int maxneighbors, int neighbors[]));
TERN__MPI(int, Graph_map,
          (MPI_Comm comm, int nnodes, const int indx[], const int edges[], int *newrank));
TERN__MPI(int, Cart_map,
          (MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank));
TERN__MPI(int, Dist_graph_create_adjacent,
          (MPI_Comm comm_old, int indegree, const int sources[], const int sourceweights[],
           int outdegree, const int destinations[], const int destweights[], MPI_Info info,
           int reorder, MPI_Comm *comm_dist_graph));
TERN__MPI(int, Dist_graph_create,
          (MPI_Comm comm_old, int n, const int sources[], const int degrees[],
           const int destinations[], const int weights[], MPI_Info info, int reorder,
           MPI_Comm *comm_dist_graph));
TERN__MPI(int, Dist_graph_neighbors_count,
          (MPI_Comm comm, int *indegree, int *outdegree, int *weighted));
TERN__MPI(int, Dist_graph_neighbors,
          (MPI_Comm comm, int maxindegree, int sources[], int sourceweights[], int maxoutdegree,
           int destinations[], int destweights[]));

/* Neighbourhood collectives (MPI 3.1, 7.6) on Cartesian, graph and distributed-graph
 * communicators: block k of the receive buffer comes from in-neighbour k, block j of the
 * send buffer goes to out-neighbour j (Cartesian: per dimension the -1 then the +1
 * neighbour; MPI_PROC_NULL neighbours leave their block untouched). Messages of one pair
 * of processes match in order. MPI_IN_PLACE is MPI_ERR_BUFFER; no topology is
 * MPI_ERR_TOPOLOGY. The I-forms return a request completed by MPI_Wait/MPI_Test. */
TERN__MPI(int, Neighbor_allgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm));
TERN__MPI(int, Neighbor_allgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm));
TERN__MPI(int, Neighbor_alltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm));
TERN__MPI(int, Neighbor_alltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm));
TERN__MPI(int, Neighbor_alltoallw,
          (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm));
TERN__MPI(int, Ineighbor_allgather,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Ineighbor_allgatherv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Request *request));
TERN__MPI(int, Ineighbor_alltoall,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Ineighbor_alltoallv,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Ineighbor_alltoallw,
          (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
           MPI_Request *request));

/* Request-based RMA (MPI 3.1, 11.3.5): only inside a passive-target epoch (MPI_Win_lock or
 * MPI_Win_lock_all), else MPI_ERR_RMA_SYNC. The request completes at local completion:
 * Rput/Raccumulate when the origin buffer may be reused (when the call returns: the data
 * is stored or copied out), Rget/Rget_accumulate when the result is in the origin buffer.
 * Completion at the target still needs MPI_Win_flush or MPI_Win_unlock. */
TERN__MPI(int, Rput,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           MPI_Request *request));
TERN__MPI(int, Rget,
          (void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
           MPI_Request *request));
TERN__MPI(int, Raccumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win, MPI_Request *request));
TERN__MPI(int, Rget_accumulate,
          (const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
           void *result_addr, int result_count, MPI_Datatype result_datatype, int target_rank,
           MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op,
           MPI_Win win, MPI_Request *request));

/* Generalized requests (MPI 3.1, 12.2). MPI_Grequest_start makes a request the program
 * completes with MPI_Grequest_complete (from any thread under MPI_THREAD_MULTIPLE, waking
 * a thread waiting on it). query_fn fills the status a completion call returns (also for
 * MPI_Request_get_status; called with a real status even when MPI_STATUS_IGNORE was
 * given); free_fn runs once the completed request is freed; cancel_fn from MPI_Cancel, told
 * whether the request completed. The callbacks' error codes are returned. Completing an
 * unknown or already completed request is MPI_ERR_REQUEST. MPI_Status_set_elements(_x)
 * and MPI_Status_set_cancelled fill a status for query_fn. */
TERN__MPI(int, Grequest_start,
          (MPI_Grequest_query_function * query_fn, MPI_Grequest_free_function *free_fn,
           MPI_Grequest_cancel_function *cancel_fn, void *extra_state, MPI_Request *request));
TERN__MPI(int, Grequest_complete, (MPI_Request request));
TERN__MPI(int, Status_set_cancelled, (MPI_Status * status, int flag));
TERN__MPI(int, Status_set_elements, (MPI_Status * status, MPI_Datatype datatype, int count));
TERN__MPI(int, Status_set_elements_x,
          (MPI_Status * status, MPI_Datatype datatype, MPI_Count count));

/* Groups and communicators, the rest of MPI 3.1. Group_union/intersection/difference keep
 * the standard's order (first group's order, then the second's). MPI_Comm_create_group is
 * collective over the group's members only (others need not call; a non-member gets
 * MPI_COMM_NULL). MPI_Comm_idup agrees on the new context in the background; *newcomm is
 * written when the request completes. MPI_Comm_idup_with_info (MPI 4.0) is MPI_Comm_idup
 * after checking info. Info hints are accepted and ignored: MPI_Comm_get_info and
 * MPI_Win_get_info return an empty info. */
TERN__MPI(int, Group_union, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
TERN__MPI(int, Group_intersection, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
TERN__MPI(int, Group_difference, (MPI_Group group1, MPI_Group group2, MPI_Group *newgroup));
TERN__MPI(int, Group_range_excl, (MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup));
TERN__MPI(int, Comm_create_group, (MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm));
TERN__MPI(int, Comm_idup, (MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request));
TERN__MPI(int, Comm_idup_with_info,
          (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request));
TERN__MPI(int, Comm_dup_with_info, (MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm));
TERN__MPI(int, Comm_set_info, (MPI_Comm comm, MPI_Info info));
TERN__MPI(int, Comm_get_info, (MPI_Comm comm, MPI_Info *info_used));
TERN__MPI(int, Comm_remote_size, (MPI_Comm comm, int *size));
TERN__MPI(int, Comm_remote_group, (MPI_Comm comm, MPI_Group *group));
TERN__MPI(int, Win_set_info, (MPI_Win win, MPI_Info info));
TERN__MPI(int, Win_get_info, (MPI_Win win, MPI_Info *info_used));

/* Info: deleting a key (MPI_ERR_INFO_NOKEY if absent), the n-th key in the order keys were
 * first set, a value's length. Error classes, codes and strings of the program: numbers
 * above every predefined class; MPI_Error_class/MPI_Error_string and MPI_LASTUSEDCODE know
 * them. */
TERN__MPI(int, Info_delete, (MPI_Info info, const char *key));
TERN__MPI(int, Info_get_nthkey, (MPI_Info info, int n, char *key));
TERN__MPI(int, Info_get_valuelen, (MPI_Info info, const char *key, int *valuelen, int *flag));
TERN__MPI(int, Add_error_class, (int *errorclass));
TERN__MPI(int, Add_error_code, (int errorclass, int *errorcode));
TERN__MPI(int, Add_error_string, (int errorcode, const char *string));

/* Attributes of windows and datatypes (copy callbacks run by MPI_Type_dup, delete callbacks
 * by MPI_Win_free, MPI_Type_free, replacement and deletion; a keyval of another kind is
 * MPI_ERR_KEYVAL), window error handlers (called with the window's handle), and the MPI-1
 * names of attribute functions. */
TERN__MPI(int, Win_create_keyval,
          (MPI_Win_copy_attr_function * win_copy_attr_fn,
           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval, void *extra_state));
TERN__MPI(int, Win_free_keyval, (int *win_keyval));
TERN__MPI(int, Win_set_attr, (MPI_Win win, int win_keyval, void *attribute_val));
TERN__MPI(int, Win_delete_attr, (MPI_Win win, int win_keyval));
TERN__MPI(int, Win_create_errhandler,
          (MPI_Win_errhandler_function * win_errhandler_fn, MPI_Errhandler *errhandler));
TERN__MPI(int, Win_call_errhandler, (MPI_Win win, int errorcode));
TERN__MPI(int, Type_create_keyval,
          (MPI_Type_copy_attr_function * type_copy_attr_fn,
           MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
           void *extra_state));
TERN__MPI(int, Type_free_keyval, (int *type_keyval));
TERN__MPI(int, Type_set_attr, (MPI_Datatype datatype, int type_keyval, void *attribute_val));
TERN__MPI(int, Type_get_attr,
          (MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag));
TERN__MPI(int, Type_delete_attr, (MPI_Datatype datatype, int type_keyval));
TERN__MPI(int, Keyval_create,
          (MPI_Copy_function * copy_fn, MPI_Delete_function *delete_fn, int *keyval,
           void *extra_state));
TERN__MPI(int, Keyval_free, (int *keyval));
TERN__MPI(int, Attr_put, (MPI_Comm comm, int keyval, void *attribute_val));
TERN__MPI(int, Attr_delete, (MPI_Comm comm, int keyval));
TERN__MPI(int, Errhandler_create,
          (MPI_Comm_errhandler_function * comm_errhandler_fn, MPI_Errhandler *errhandler));

/* Datatypes, the rest of MPI 3.1: the MPI-1 names removed by MPI 3.0 (kept for old programs),
 * MPI_Type_create_darray (BLOCK, CYCLIC, NONE; C and Fortran order; row-major process grid),
 * MPI_Count forms, types by size (MPI_Type_match_size) and by Fortran 90 precision (the C
 * type of that class and size; MPI_ERR_ARG if none), and statuses as MPI_Fint arrays.
 * MPI_Type_get_envelope decodes predefined types (MPI_COMBINER_NAMED) only: for derived
 * types it and MPI_Type_get_contents fail with MPI_ERR_UNSUPPORTED_OPERATION. */
TERN__MPI(int, Type_create_darray,
          (int size, int rank, int ndims, const int array_of_gsizes[],
           const int array_of_distribs[], const int array_of_dargs[], const int array_of_psizes[],
           int order, MPI_Datatype oldtype, MPI_Datatype *newtype));
TERN__MPI(int, Type_extent, (MPI_Datatype datatype, MPI_Aint *extent));
TERN__MPI(int, Type_lb, (MPI_Datatype datatype, MPI_Aint *displacement));
TERN__MPI(int, Type_ub, (MPI_Datatype datatype, MPI_Aint *displacement));
TERN__MPI(int, Type_hvector,
          (int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
           MPI_Datatype *newtype));
TERN__MPI(int, Type_hindexed,
          (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
           MPI_Datatype oldtype, MPI_Datatype *newtype));
TERN__MPI(int, Type_struct,
          (int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
           MPI_Datatype array_of_types[], MPI_Datatype *newtype));
TERN__MPI(int, Type_get_extent_x, (MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent));
TERN__MPI(int, Type_get_true_extent_x,
          (MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent));
TERN__MPI(int, Get_elements_x, (const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count));
TERN__MPI(int, Type_match_size, (int typeclass, int size, MPI_Datatype *datatype));
TERN__MPI(int, Type_create_f90_integer, (int r, MPI_Datatype *newtype));
TERN__MPI(int, Type_create_f90_real, (int p, int r, MPI_Datatype *newtype));
TERN__MPI(int, Type_create_f90_complex, (int p, int r, MPI_Datatype *newtype));
TERN__MPI(int, Type_get_envelope,
          (MPI_Datatype datatype, int *num_integers, int *num_addresses, int *num_datatypes,
           int *combiner));
TERN__MPI(int, Type_get_contents,
          (MPI_Datatype datatype, int max_integers, int max_addresses, int max_datatypes,
           int array_of_integers[], MPI_Aint array_of_addresses[],
           MPI_Datatype array_of_datatypes[]));
TERN__MPI(int, Status_c2f, (const MPI_Status *c_status, MPI_Fint *f_status));
TERN__MPI(int, Status_f2c, (const MPI_Fint *f_status, MPI_Status *c_status));

/* The tool information interface (MPI_T, MPI 3.1 chapter 14), empty: tern's tunables are
 * read once from the environment at start and it keeps no counters, so there are no control
 * variables, performance variables or categories. MPI_T_init_thread/MPI_T_finalize nest;
 * the counts are 0; performance-variable sessions can be created and freed; any index is
 * MPI_T_ERR_INVALID_INDEX, any name MPI_T_ERR_INVALID_NAME, any handle
 * MPI_T_ERR_INVALID_HANDLE; before MPI_T_init_thread, MPI_T_ERR_NOT_INITIALIZED. They
 * return their error codes and never call an error handler; thread safe at every level. */
TERN__MPI(int, T_category_changed, (int *update_number));
TERN__MPI(int, T_category_get_categories, (int cat_index, int len, int indices[]));
TERN__MPI(int, T_category_get_cvars, (int cat_index, int len, int indices[]));
TERN__MPI(int, T_category_get_index, (const char *name, int *cat_index));
TERN__MPI(int, T_category_get_info,
          (int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
           int *num_pvars, int *num_categories));
TERN__MPI(int, T_category_get_num, (int *num_cat));
TERN__MPI(int, T_category_get_pvars, (int cat_index, int len, int indices[]));
TERN__MPI(int, T_cvar_get_index, (const char *name, int *cvar_index));
TERN__MPI(int, T_cvar_get_info,
          (int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
           MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope));
TERN__MPI(int, T_cvar_get_num, (int *num_cvar));
TERN__MPI(int, T_cvar_handle_alloc,
          (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count));
TERN__MPI(int, T_cvar_handle_free, (MPI_T_cvar_handle * handle));
TERN__MPI(int, T_cvar_read, (MPI_T_cvar_handle handle, void *buf));
TERN__MPI(int, T_cvar_write, (MPI_T_cvar_handle handle, const void *buf));
TERN__MPI(int, T_enum_get_info, (MPI_T_enum enumtype, int *num, char *name, int *name_len));
TERN__MPI(int, T_enum_get_item,
          (MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len));
TERN__MPI(int, T_finalize, (void));
TERN__MPI(int, T_init_thread, (int required, int *provided));
TERN__MPI(int, T_pvar_get_index, (const char *name, int var_class, int *pvar_index));
TERN__MPI(int, T_pvar_get_info,
          (int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
           MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
           int *readonly, int *continuous, int *atomic));
TERN__MPI(int, T_pvar_get_num, (int *num_pvar));
TERN__MPI(int, T_pvar_handle_alloc,
          (MPI_T_pvar_session session, int pvar_index, void *obj_handle, MPI_T_pvar_handle *handle,
           int *count));
TERN__MPI(int, T_pvar_handle_free, (MPI_T_pvar_session session, MPI_T_pvar_handle *handle));
TERN__MPI(int, T_pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf));
TERN__MPI(int, T_pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf));
TERN__MPI(int, T_pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle));
TERN__MPI(int, T_pvar_session_create, (MPI_T_pvar_session * session));
TERN__MPI(int, T_pvar_session_free, (MPI_T_pvar_session * session));
TERN__MPI(int, T_pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle));
TERN__MPI(int, T_pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle));
TERN__MPI(int, T_pvar_write,
          (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf));

/* C <-> Fortran handle conversions: a tern handle is its own Fortran integer (also
 * MPI_File's, though files cannot be opened). */
TERN__MPI(MPI_Fint, File_c2f, (MPI_File file));
TERN__MPI(MPI_File, File_f2c, (MPI_Fint file));
TERN__MPI(MPI_Fint, Type_c2f, (MPI_Datatype datatype));
TERN__MPI(MPI_Datatype, Type_f2c, (MPI_Fint datatype));
TERN__MPI(MPI_Fint, Group_c2f, (MPI_Group group));
TERN__MPI(MPI_Group, Group_f2c, (MPI_Fint group));
TERN__MPI(MPI_Fint, Info_c2f, (MPI_Info info));
TERN__MPI(MPI_Info, Info_f2c, (MPI_Fint info));
TERN__MPI(MPI_Fint, Request_c2f, (MPI_Request request));
TERN__MPI(MPI_Request, Request_f2c, (MPI_Fint request));
TERN__MPI(MPI_Fint, Op_c2f, (MPI_Op op));
TERN__MPI(MPI_Op, Op_f2c, (MPI_Fint op));
TERN__MPI(MPI_Fint, Errhandler_c2f, (MPI_Errhandler errhandler));
TERN__MPI(MPI_Errhandler, Errhandler_f2c, (MPI_Fint errhandler));
TERN__MPI(MPI_Fint, Win_c2f, (MPI_Win win));
TERN__MPI(MPI_Win, Win_f2c, (MPI_Fint win));
TERN__MPI(MPI_Fint, Message_c2f, (MPI_Message message));
TERN__MPI(MPI_Message, Message_f2c, (MPI_Fint message));

/* ---- not supported ----------------------------------------------------------------------
 * These exist so programs that use them link: a call fails with
 * MPI_ERR_UNSUPPORTED_OPERATION, naming the function, through the error handler of the
 * communicator passed (MPI_COMM_WORLD's otherwise). See docs/MPI.md. */

/* Parallel I/O. */
TERN__MPI(int, File_open,
          (MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh));
TERN__MPI(int, File_close, (MPI_File * fh));
TERN__MPI(int, File_delete, (const char *filename, MPI_Info info));
TERN__MPI(int, File_read,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
TERN__MPI(int, File_write,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
TERN__MPI(int, File_read_at,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status));
TERN__MPI(int, File_write_at,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status));
TERN__MPI(int, File_read_all,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
TERN__MPI(int, File_write_all,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
TERN__MPI(int, File_read_at_all,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status));
TERN__MPI(int, File_write_at_all,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Status *status));
TERN__MPI(int, File_set_view,
          (MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
           const char *datarep, MPI_Info info));
TERN__MPI(int, File_get_size, (MPI_File fh, MPI_Offset *size));
TERN__MPI(int, File_set_size, (MPI_File fh, MPI_Offset size));
TERN__MPI(int, File_seek, (MPI_File fh, MPI_Offset offset, int whence));
TERN__MPI(int, File_sync, (MPI_File fh));
TERN__MPI(int, File_call_errhandler, (MPI_File fh, int errorcode));
TERN__MPI(int, File_create_errhandler,
          (MPI_File_errhandler_function * file_errhandler_fn, MPI_Errhandler *errhandler));
TERN__MPI(int, File_get_errhandler, (MPI_File file, MPI_Errhandler *errhandler));
TERN__MPI(int, File_set_errhandler, (MPI_File file, MPI_Errhandler errhandler));
TERN__MPI(int, Register_datarep,
          (const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
           MPI_Datarep_conversion_function *write_conversion_fn,
           MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state));
TERN__MPI(int, File_get_amode, (MPI_File fh, int *amode));
TERN__MPI(int, File_get_atomicity, (MPI_File fh, int *flag));
TERN__MPI(int, File_get_byte_offset, (MPI_File fh, MPI_Offset offset, MPI_Offset *disp));
TERN__MPI(int, File_get_group, (MPI_File fh, MPI_Group *group));
TERN__MPI(int, File_get_info, (MPI_File fh, MPI_Info *info_used));
TERN__MPI(int, File_get_position, (MPI_File fh, MPI_Offset *offset));
TERN__MPI(int, File_get_position_shared, (MPI_File fh, MPI_Offset *offset));
TERN__MPI(int, File_get_type_extent, (MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent));
TERN__MPI(int, File_get_view,
          (MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
           char *datarep));
TERN__MPI(int, File_iread,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request));
TERN__MPI(int, File_iread_all,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request));
TERN__MPI(int, File_iread_at,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Request *request));
TERN__MPI(int, File_iread_at_all,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype,
           MPI_Request *request));
TERN__MPI(int, File_iread_shared,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Request *request));
TERN__MPI(int, File_iwrite,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request));
TERN__MPI(int, File_iwrite_all,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request));
TERN__MPI(int, File_iwrite_at,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Request *request));
TERN__MPI(int, File_iwrite_at_all,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype,
           MPI_Request *request));
TERN__MPI(int, File_iwrite_shared,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Request *request));
TERN__MPI(int, File_preallocate, (MPI_File fh, MPI_Offset size));
TERN__MPI(int, File_read_all_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype));
TERN__MPI(int, File_read_all_end, (MPI_File fh, void *buf, MPI_Status *status));
TERN__MPI(int, File_read_at_all_begin,
          (MPI_File fh, MPI_Offset offset, void *buf, int count, MPI_Datatype datatype));
TERN__MPI(int, File_read_at_all_end, (MPI_File fh, void *buf, MPI_Status *status));
TERN__MPI(int, File_read_ordered,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
TERN__MPI(int, File_read_ordered_begin, (MPI_File fh, void *buf, int count, MPI_Datatype datatype));
TERN__MPI(int, File_read_ordered_end, (MPI_File fh, void *buf, MPI_Status *status));
TERN__MPI(int, File_read_shared,
          (MPI_File fh, void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
TERN__MPI(int, File_seek_shared, (MPI_File fh, MPI_Offset offset, int whence));
TERN__MPI(int, File_set_atomicity, (MPI_File fh, int flag));
TERN__MPI(int, File_set_info, (MPI_File fh, MPI_Info info));
TERN__MPI(int, File_write_all_begin,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype));
TERN__MPI(int, File_write_all_end, (MPI_File fh, const void *buf, MPI_Status *status));
TERN__MPI(int, File_write_at_all_begin,
          (MPI_File fh, MPI_Offset offset, const void *buf, int count, MPI_Datatype datatype));
TERN__MPI(int, File_write_at_all_end, (MPI_File fh, const void *buf, MPI_Status *status));
TERN__MPI(int, File_write_ordered,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status));
TERN__MPI(int, File_write_ordered_begin,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype));
TERN__MPI(int, File_write_ordered_end, (MPI_File fh, const void *buf, MPI_Status *status));
TERN__MPI(int, File_write_shared,
          (MPI_File fh, const void *buf, int count, MPI_Datatype datatype, MPI_Status *status));

/* Dynamic processes and inter-communicators (tern has neither). */
TERN__MPI(int, Comm_spawn,
          (const char *command, char *argv[], int maxprocs, MPI_Info info, int root, MPI_Comm comm,
           MPI_Comm *intercomm, int array_of_errcodes[]));
TERN__MPI(int, Intercomm_create,
          (MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm, int remote_leader, int tag,
           MPI_Comm *newintercomm));
TERN__MPI(int, Intercomm_merge, (MPI_Comm intercomm, int high, MPI_Comm *newintracomm));
TERN__MPI(int, Close_port, (const char *port_name));
TERN__MPI(int, Comm_accept,
          (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm));
TERN__MPI(int, Comm_connect,
          (const char *port_name, MPI_Info info, int root, MPI_Comm comm, MPI_Comm *newcomm));
TERN__MPI(int, Comm_disconnect, (MPI_Comm * comm));
TERN__MPI(int, Comm_join, (int fd, MPI_Comm *intercomm));
TERN__MPI(int, Comm_spawn_multiple,
          (int count, char *array_of_commands[], char **array_of_argv[],
           const int array_of_maxprocs[], const MPI_Info array_of_info[], int root, MPI_Comm comm,
           MPI_Comm *intercomm, int array_of_errcodes[]));
TERN__MPI(int, Lookup_name, (const char *service_name, MPI_Info info, char *port_name));
TERN__MPI(int, Open_port, (MPI_Info info, char *port_name));
TERN__MPI(int, Publish_name, (const char *service_name, MPI_Info info, const char *port_name));
TERN__MPI(int, Unpublish_name, (const char *service_name, MPI_Info info, const char *port_name));

/* The external32 representation. */
TERN__MPI(int, Pack_external,
          (const char *datarep, const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf,
           MPI_Aint outsize, MPI_Aint *position));
TERN__MPI(int, Pack_external_size,
          (const char *datarep, int incount, MPI_Datatype datatype, MPI_Aint *size));
TERN__MPI(int, Unpack_external,
          (const char datarep[], const void *inbuf, MPI_Aint insize, MPI_Aint *position,
           void *outbuf, int outcount, MPI_Datatype datatype));

/* MPI 4.0: non-blocking send-receive; persistent collectives (made inactive, started
 * with MPI_Start/MPI_Startall, completed like any request, freed with MPI_Request_free). */
TERN__MPI(int, Isendrecv,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
           MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Isendrecv_replace,
          (void *buf, int count, MPI_Datatype datatype, int dest, int sendtag, int source,
           int recvtag, MPI_Comm comm, MPI_Request *request));
TERN__MPI(int, Barrier_init, (MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Bcast_init,
          (void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Info info,
           MPI_Request *request));
TERN__MPI(int, Reduce_init,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           int root, MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Allreduce_init,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Scan_init,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Exscan_init,
          (const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Reduce_scatter_block_init,
          (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Reduce_scatter_init,
          (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype,
           MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Gather_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Scatter_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Allgather_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Alltoall_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Gatherv_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Scatterv_init,
          (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
           void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
           MPI_Info info, MPI_Request *request));
TERN__MPI(int, Allgatherv_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Info info, MPI_Request *request));
TERN__MPI(int, Alltoallv_init,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Alltoallw_init,
          (const void *sendbuf, const int sendcounts[], const int sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
           MPI_Request *request));
TERN__MPI(int, Neighbor_allgather_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Neighbor_alltoall_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Neighbor_allgatherv_init,
          (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
           const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
           MPI_Info info, MPI_Request *request));
TERN__MPI(int, Neighbor_alltoallv_init,
          (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
           void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype,
           MPI_Comm comm, MPI_Info info, MPI_Request *request));
TERN__MPI(int, Neighbor_alltoallw_init,
          (const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Info info,
           MPI_Request *request));

/* tern extension, not MPI (test with #ifdef TERN_MPI): the value of one of the MPI
 * layer's counters since MPI_Init, or -1 for an unknown name.
 *   "p2p_temporaries"      packed copies made of point-to-point messages of
 *                          non-contiguous datatypes (eager sends of many small blocks)
 *   "p2p_temporary_bytes"  their bytes
 * Tests use it to show that a message moved between the user's blocks with no copy. */
long long tern_mpi_stat(const char *name);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* TERN_MPI_H */

/*
 * mpi_env.c - MPI environment: init and finalize, clocks, versions, memory, error
 * classes and strings, error handlers, and a small MPI_Info store.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conv/conv.h"
#include "mpi/mpi_impl.h"

static int mpi_thread_level = MPI_THREAD_SINGLE;
static int mpi_user_err_class(int code);
static const char *mpi_user_err_text(int code);

/* ---- errors ---------------------------------------------------------------------- */

/* The predefined classes have MPICH's numbers (mpi.h), up to MPI_ERR_PROC_FAILED (101); the
 * gaps are NULL. */
#define MPI_ERR_LASTCLASS MPI_ERR_PROC_FAILED
static const char *const mpi_err_text[MPI_ERR_LASTCLASS + 1] = {
    [MPI_SUCCESS] = "MPI_SUCCESS: no error",
    [MPI_ERR_BUFFER] = "MPI_ERR_BUFFER: invalid buffer pointer or insufficient buffer space",
    [MPI_ERR_COUNT] = "MPI_ERR_COUNT: invalid count argument",
    [MPI_ERR_TYPE] = "MPI_ERR_TYPE: invalid datatype",
    [MPI_ERR_TAG] = "MPI_ERR_TAG: invalid tag",
    [MPI_ERR_COMM] = "MPI_ERR_COMM: invalid communicator",
    [MPI_ERR_RANK] = "MPI_ERR_RANK: invalid rank",
    [MPI_ERR_REQUEST] = "MPI_ERR_REQUEST: invalid request",
    [MPI_ERR_ROOT] = "MPI_ERR_ROOT: invalid root",
    [MPI_ERR_GROUP] = "MPI_ERR_GROUP: invalid group",
    [MPI_ERR_OP] = "MPI_ERR_OP: invalid reduce operation",
    [MPI_ERR_TOPOLOGY] = "MPI_ERR_TOPOLOGY: invalid communicator topology",
    [MPI_ERR_DIMS] = "MPI_ERR_DIMS: invalid dimension argument",
    [MPI_ERR_ARG] = "MPI_ERR_ARG: invalid argument",
    [MPI_ERR_UNKNOWN] = "MPI_ERR_UNKNOWN: unknown error",
    [MPI_ERR_TRUNCATE] = "MPI_ERR_TRUNCATE: message truncated",
    [MPI_ERR_OTHER] = "MPI_ERR_OTHER: known error not in this list",
    [MPI_ERR_INTERN] = "MPI_ERR_INTERN: internal error",
    [MPI_ERR_IN_STATUS] = "MPI_ERR_IN_STATUS: error code is in status",
    [MPI_ERR_PENDING] = "MPI_ERR_PENDING: pending request",
    [MPI_ERR_KEYVAL] = "MPI_ERR_KEYVAL: invalid keyval",
    [MPI_ERR_NO_MEM] = "MPI_ERR_NO_MEM: out of memory",
    [MPI_ERR_BASE] = "MPI_ERR_BASE: invalid base address",
    [MPI_ERR_INFO_KEY] = "MPI_ERR_INFO_KEY: info key too long",
    [MPI_ERR_INFO_VALUE] = "MPI_ERR_INFO_VALUE: info value too long",
    [MPI_ERR_INFO_NOKEY] = "MPI_ERR_INFO_NOKEY: no such info key",
    [MPI_ERR_SPAWN] = "MPI_ERR_SPAWN: error spawning processes",
    [MPI_ERR_PORT] = "MPI_ERR_PORT: invalid port name",
    [MPI_ERR_SERVICE] = "MPI_ERR_SERVICE: invalid service name",
    [MPI_ERR_NAME] = "MPI_ERR_NAME: invalid name",
    [MPI_ERR_WIN] = "MPI_ERR_WIN: invalid window",
    [MPI_ERR_SIZE] = "MPI_ERR_SIZE: invalid size",
    [MPI_ERR_DISP] = "MPI_ERR_DISP: invalid displacement",
    [MPI_ERR_INFO] = "MPI_ERR_INFO: invalid info object",
    [MPI_ERR_LOCKTYPE] = "MPI_ERR_LOCKTYPE: invalid lock type",
    [MPI_ERR_ASSERT] = "MPI_ERR_ASSERT: invalid assert",
    [MPI_ERR_RMA_CONFLICT] = "MPI_ERR_RMA_CONFLICT: conflicting accesses to a window",
    [MPI_ERR_RMA_SYNC] = "MPI_ERR_RMA_SYNC: wrong synchronization of RMA calls",
    [MPI_ERR_FILE] = "MPI_ERR_FILE: invalid file handle",
    [MPI_ERR_NOT_SAME] = "MPI_ERR_NOT_SAME: collective arguments not identical",
    [MPI_ERR_AMODE] = "MPI_ERR_AMODE: invalid file access mode",
    [MPI_ERR_UNSUPPORTED_DATAREP] = "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] =
        "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported by tern",
    [MPI_ERR_NO_SUCH_FILE] = "MPI_ERR_NO_SUCH_FILE: file does not exist",
    [MPI_ERR_FILE_EXISTS] = "MPI_ERR_FILE_EXISTS: file exists",
    [MPI_ERR_BAD_FILE] = "MPI_ERR_BAD_FILE: invalid file name",
    [MPI_ERR_ACCESS] = "MPI_ERR_ACCESS: permission denied",
    [MPI_ERR_NO_SPACE] = "MPI_ERR_NO_SPACE: not enough space",
    [MPI_ERR_QUOTA] = "MPI_ERR_QUOTA: quota exceeded",
    [MPI_ERR_READ_ONLY] = "MPI_ERR_READ_ONLY: read-only file or file system",
    [MPI_ERR_FILE_IN_USE] = "MPI_ERR_FILE_IN_USE: file in use",
    [MPI_ERR_DUP_DATAREP] = "MPI_ERR_DUP_DATAREP: data representation already defined",
    [MPI_ERR_CONVERSION] = "MPI_ERR_CONVERSION: data conversion failed",
    [MPI_ERR_IO] = "MPI_ERR_IO: I/O error",
    [MPI_ERR_RMA_RANGE] = "MPI_ERR_RMA_RANGE: target memory outside the window",
    [MPI_ERR_RMA_ATTACH] = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    [MPI_ERR_RMA_SHARED] = "MPI_ERR_RMA_SHARED: memory cannot be shared",
    [MPI_ERR_RMA_FLAVOR] = "MPI_ERR_RMA_FLAVOR: wrong window flavor",
    [MPI_ERR_PROC_FAILED] = "MPI_ERR_PROC_FAILED: a process involved in the operation has failed",
};

static const char mpi_tunable_text[] =
    "MPI_ERR_OTHER: a TERN_* environment variable has a value tern cannot use (stderr names "
    "it; `ternrun --info` lists every tunable with its kind and range)";

/* The text of a predefined code (a class or MPI_ERR_TERN_TUNABLE), or NULL. */
static const char *mpi_code_text(int code)
{
    if (code == MPI_ERR_TERN_TUNABLE) return mpi_tunable_text;
    return (unsigned)code <= MPI_ERR_LASTCLASS ? mpi_err_text[code] : NULL;
}

int mpi_from_tern(int terr)
{
    switch (terr) {
    case TERN_ERR_TUNABLE:
        return MPI_ERR_TERN_TUNABLE;
    case TERN_OK:
        return MPI_SUCCESS;
    case TERN_ERR_INVAL:
        return MPI_ERR_ARG;
    case TERN_ERR_RANK:
        return MPI_ERR_RANK;
    case TERN_ERR_TAG:
        return MPI_ERR_TAG;
    case TERN_ERR_BUFFER:
    case TERN_ERR_FAULT:
        return MPI_ERR_BUFFER;
    case TERN_ERR_TRUNCATE:
        return MPI_ERR_TRUNCATE;
    case TERN_ERR_NOMEM:
    case TERN_ERR_NOSPACE: /* /dev/shm full: shared memory is memory */
        return MPI_ERR_NO_MEM;
    case TERN_ERR_COMM:
        return MPI_ERR_COMM;
    case TERN_ERR_REQUEST:
        return MPI_ERR_REQUEST;
    case TERN_ERR_UNSUPPORTED:
        return MPI_ERR_UNSUPPORTED_OPERATION;
    case TERN_ERR_INTERNAL:
        return MPI_ERR_INTERN;
    case TERN_ERR_PEER_FAILED:
        return MPI_ERR_PROC_FAILED;
    default:
        return MPI_ERR_OTHER;
    }
}

/* User error handlers: handles 3 ... */
#define MPI_EH_USER_BASE 3
static MPI_Comm_errhandler_function **mpi_ehs;
static int mpi_nehs;

static int mpi_eh_valid(MPI_Errhandler eh)
{
    if (eh == MPI_ERRORS_ARE_FATAL || eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ABORT) return 1;
    int i = eh - MPI_EH_USER_BASE;
    return i >= 0 && i < mpi_nehs && mpi_ehs[i] != NULL;
}

int mpi_err(MPI_Comm comm, const char *fn, int code)
{
    if (__builtin_expect(code == MPI_SUCCESS, 1)) return code;
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL) c = mpi_comm_get(MPI_COMM_WORLD);
    MPI_Errhandler eh = c ? c->errh : MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_RETURN) return code;
    if (eh != MPI_ERRORS_ARE_FATAL && eh != MPI_ERRORS_ABORT && mpi_eh_valid(eh)) {
        /* A window's handler (MPI_Win_create_errhandler) takes an MPI_Win *: both handles
         * are ints, so one table serves both. */
        MPI_Comm h = c->win != MPI_WIN_NULL ? (MPI_Comm)c->win : c->handle;
        mpi_ehs[eh - MPI_EH_USER_BASE](&h, &code);
        return code;
    }
    if (code == MPI_ERR_PROC_FAILED && core.initialized && core.boot.ternrun) {
        /* Another rank died and ternrun is ending the job with one line that names it.
         * An abort from here could reach ternrun first (a closed tcp connection is seen
         * before the dead process is reaped) and the line would blame this rank: give
         * the launcher time to end the job, and abort only if it does not. */
        double until = core_diag_now() + 2.0;
        while (core_diag_now() < until && core_health() == 0) {
            struct timespec ts = {0, 10 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    const char *text = mpi_code_text(code);
    if (text == NULL) text = "unknown error";
    char msg[512];
    snprintf(msg, sizeof msg, "%s: %s", fn, text);
    fprintf(stderr, "tern MPI [rank %d]: %s\n", core.initialized ? core.rank : -1, msg);
    fflush(stderr);
    if (core.initialized) boot_abort(&core.boot, code, msg);
    _exit(code);
}

int PMPI_Error_string(int errorcode, char *string, int *resultlen)
{
    CORE_CS_SCOPE();
    if (string == NULL || resultlen == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Error_string", MPI_ERR_ARG);
    const char *t = (unsigned)errorcode <= MPI_ERR_LASTCODE ? mpi_code_text(errorcode)
                                                            : mpi_user_err_text(errorcode);
    if (t == NULL) t = "unknown error code";
    snprintf(string, MPI_MAX_ERROR_STRING, "%s", t);
    *resultlen = (int)strlen(string);
    return MPI_SUCCESS;
}
MPI_ALIAS(Error_string)

int PMPI_Error_class(int errorcode, int *errorclass)
{
    CORE_CS_SCOPE();
    int cls = errorcode == MPI_ERR_TERN_TUNABLE         ? MPI_ERR_OTHER
              : (unsigned)errorcode <= MPI_ERR_LASTCODE ? errorcode
                                                        : mpi_user_err_class(errorcode);
    if (errorclass == NULL || cls < 0)
        return mpi_err(MPI_COMM_WORLD, "MPI_Error_class", MPI_ERR_ARG);
    *errorclass = cls;
    return MPI_SUCCESS;
}
MPI_ALIAS(Error_class)

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_set_errhandler";
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (!mpi_eh_valid(errhandler)) return mpi_err(comm, fn, MPI_ERR_ARG);
    c->errh = errhandler;
    /* A program that takes errors itself handles failed peers: under ternrun a rank's
     * death then no longer ends the job once every survivor said so. */
    if (errhandler != MPI_ERRORS_ARE_FATAL && errhandler != MPI_ERRORS_ABORT)
        (void)boot_tolerate(&core.boot);
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_set_errhandler)

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_get_errhandler";
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (errhandler == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    *errhandler = c->errh;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_get_errhandler)

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler errhandler)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_set_errhandler(comm, errhandler);
}
MPI_ALIAS(Errhandler_set)

int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler *errhandler)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_get_errhandler(comm, errhandler);
}
MPI_ALIAS(Errhandler_get)

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function *fnp, MPI_Errhandler *errhandler)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_create_errhandler";
    if (fnp == NULL || errhandler == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    int slot = -1;
    for (int i = 0; i < mpi_nehs; i++)
        if (mpi_ehs[i] == NULL) {
            slot = i;
            break;
        }
    if (slot < 0) {
        MPI_Comm_errhandler_function **t = realloc(mpi_ehs, (size_t)(mpi_nehs + 8) * sizeof *t);
        if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
        for (int i = mpi_nehs; i < mpi_nehs + 8; i++)
            t[i] = NULL;
        mpi_ehs = t;
        slot = mpi_nehs;
        mpi_nehs += 8;
    }
    mpi_ehs[slot] = fnp;
    *errhandler = MPI_EH_USER_BASE + slot;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_create_errhandler)

int PMPI_Errhandler_free(MPI_Errhandler *errhandler)
{
    CORE_CS_SCOPE();
    if (errhandler == NULL || !mpi_eh_valid(*errhandler))
        return mpi_err(MPI_COMM_WORLD, "MPI_Errhandler_free", MPI_ERR_ARG);
    /* The predefined ones stay; a user's stays usable by communicators that hold it. */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(Errhandler_free)

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    CORE_CS_SCOPE();
    if (mpi_comm_get(comm) == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Comm_call_errhandler", MPI_ERR_COMM);
    mpi_err(comm, "MPI_Comm_call_errhandler", errorcode);
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_call_errhandler)

/* ---- init and finalize --------------------------------------------------------------- */

/* MPI's state on the core; a fresh core also serves conversations, as tern_init's does
 * (a library on tern.h inside the MPI program may use them). */
static int mpi_setup(int fresh)
{
    int rc = fresh ? conv_init() : 0;
    if (rc == 0 && (mpi_type_init() || mpi_comm_init())) rc = TERN_ERR_NOMEM;
    if (rc == 0 && mpi_cancel_init()) rc = TERN_ERR_EXISTS; /* MPI_Cancel of sends */
    if (rc == 0 && mpi_name_init()) rc = TERN_ERR_EXISTS;   /* MPI_Publish_name, ... */
    return rc;
}

int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Init";
    (void)argc, (void)argv;
    /* Every level is granted; MULTIPLE turns the library's lock on (src/core/thread.c).
     * After tern_init (a library on tern.h) this joins its core. */
    int rc = core_start(CORE_USER_MPI, required, &mpi_thread_level, mpi_setup);
    if (rc == TERN_ERR_INIT || rc == TERN_ERR_FINALIZED)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (rc < 0) {
        fprintf(stderr, "tern MPI: MPI_Init failed: %s\n", tern_strerror(rc));
        return mpi_err(MPI_COMM_WORLD, fn, mpi_from_tern(rc));
    }
    if (provided) *provided = mpi_thread_level;
    return MPI_SUCCESS;
}
MPI_ALIAS(Init_thread)

int PMPI_Init(int *argc, char ***argv)
{
    CORE_CS_SCOPE();
    return PMPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, NULL);
}
MPI_ALIAS(Init)

int PMPI_Initialized(int *flag)
{
    CORE_CS_SCOPE();
    if (flag == NULL) return MPI_ERR_ARG;
    *flag = ((core.users | core.users_done) & CORE_USER_MPI) != 0;
    return MPI_SUCCESS;
}
MPI_ALIAS(Initialized)

int PMPI_Finalized(int *flag)
{
    CORE_CS_SCOPE();
    if (flag == NULL) return MPI_ERR_ARG;
    *flag = (core.users_done & CORE_USER_MPI) != 0;
    return MPI_SUCCESS;
}
MPI_ALIAS(Finalized)

int PMPI_Finalize(void)
{
    CORE_CS_SCOPE();
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, "MPI_Finalize", MPI_ERR_OTHER);
    int arc = mpi_comm_self_attrs_free();
    if (arc) return mpi_err(MPI_COMM_WORLD, "MPI_Finalize", arc);
    /* Buffered sends still in flight must reach their receivers. */
    void *b;
    int sz;
    PMPI_Buffer_detach(&b, &sz);
    mpi_name_quiesce();
    mpi_win_fini();
    mpi_p2p_fini();
    mpi_coll_fini();
    /* The core stays up while tern.h still uses it (tern_finalize finalizes it then). */
    int rc = core_stop(CORE_USER_MPI);
    mpi_comm_fini();
    mpi_type_fini();
    return rc ? mpi_err(MPI_COMM_WORLD, "MPI_Finalize", mpi_from_tern(rc)) : MPI_SUCCESS;
}
MPI_ALIAS(Finalize)

int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    CORE_CS_SCOPE();
    (void)comm;
    fflush(stdout);
    if (core.initialized) {
        char msg[64];
        snprintf(msg, sizeof msg, "MPI_Abort(errorcode %d)", errorcode);
        boot_abort(&core.boot, errorcode, msg);
    }
    _exit(errorcode);
}
MPI_ALIAS(Abort)

double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
MPI_ALIAS(Wtime)

double PMPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0) return 1e-9;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
MPI_ALIAS(Wtick)

int PMPI_Get_version(int *version, int *subversion)
{
    CORE_CS_SCOPE();
    if (version == NULL || subversion == NULL) return MPI_ERR_ARG;
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
MPI_ALIAS(Get_version)

int PMPI_Get_library_version(char *version, int *resultlen)
{
    CORE_CS_SCOPE();
    if (version == NULL || resultlen == NULL) return MPI_ERR_ARG;
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "tern MPI %d.%d.%d (MPI %d.%d subset)",
             TERN_VERSION_MAJOR, TERN_VERSION_MINOR, TERN_VERSION_PATCH, MPI_VERSION,
             MPI_SUBVERSION);
    *resultlen = (int)strlen(version);
    return MPI_SUCCESS;
}
MPI_ALIAS(Get_library_version)

int PMPI_Get_processor_name(char *name, int *resultlen)
{
    CORE_CS_SCOPE();
    if (name == NULL || resultlen == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Get_processor_name", MPI_ERR_ARG);
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = '\0';
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Get_processor_name)

int PMPI_Query_thread(int *provided)
{
    CORE_CS_SCOPE();
    if (provided == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Query_thread", MPI_ERR_ARG);
    *provided = mpi_thread_level;
    return MPI_SUCCESS;
}
MPI_ALIAS(Query_thread)

int PMPI_Is_thread_main(int *flag)
{
    CORE_CS_SCOPE();
    if (flag == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Is_thread_main", MPI_ERR_ARG);
    *flag = getpid() == (pid_t)gettid();
    return MPI_SUCCESS;
}
MPI_ALIAS(Is_thread_main)

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    CORE_CS_SCOPE();
    (void)info;
    if (size < 0 || baseptr == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Alloc_mem", MPI_ERR_ARG);
    void *p = malloc(size ? (size_t)size : 1);
    if (p == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Alloc_mem", MPI_ERR_NO_MEM);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
MPI_ALIAS(Alloc_mem)

int PMPI_Free_mem(void *base)
{
    CORE_CS_SCOPE();
    free(base);
    return MPI_SUCCESS;
}
MPI_ALIAS(Free_mem)

int PMPI_Pcontrol(const int level, ...)
{
    CORE_CS_SCOPE();
    (void)level;
    return MPI_SUCCESS;
}
MPI_ALIAS(Pcontrol)

/* ---- info: a list of key/value pairs per handle ------------------------------------ */

struct mpi_info_kv {
    struct mpi_info_kv *next;
    char *key, *val;
};
#define MPI_INFO_USER_BASE 2
static struct mpi_info_kv ***mpi_infos; /* slot -> pointer to list head (NULL: free) */
static int mpi_ninfos;

static struct mpi_info_kv **mpi_info_get(MPI_Info h)
{
    int i = h - MPI_INFO_USER_BASE;
    return i >= 0 && i < mpi_ninfos ? mpi_infos[i] : NULL;
}

int PMPI_Info_create(MPI_Info *info)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Info_create";
    if (info == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    int slot = -1;
    for (int i = 0; i < mpi_ninfos; i++)
        if (mpi_infos[i] == NULL) {
            slot = i;
            break;
        }
    if (slot < 0) {
        struct mpi_info_kv ***t = realloc(mpi_infos, (size_t)(mpi_ninfos + 8) * sizeof *t);
        if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
        for (int i = mpi_ninfos; i < mpi_ninfos + 8; i++)
            t[i] = NULL;
        mpi_infos = t;
        slot = mpi_ninfos;
        mpi_ninfos += 8;
    }
    mpi_infos[slot] = calloc(1, sizeof(struct mpi_info_kv *));
    if (mpi_infos[slot] == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    *info = MPI_INFO_USER_BASE + slot;
    return MPI_SUCCESS;
}
MPI_ALIAS(Info_create)

int PMPI_Info_set(MPI_Info info, const char *key, const char *value)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Info_set";
    struct mpi_info_kv **head = mpi_info_get(info);
    if (head == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO);
    if (key == NULL || strlen(key) > MPI_MAX_INFO_KEY || key[0] == '\0')
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO_KEY);
    if (value == NULL || strlen(value) > MPI_MAX_INFO_VAL)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO_VALUE);
    for (struct mpi_info_kv *kv = *head; kv; kv = kv->next)
        if (strcmp(kv->key, key) == 0) {
            char *v = strdup(value);
            if (v == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
            free(kv->val);
            kv->val = v;
            return MPI_SUCCESS;
        }
    struct mpi_info_kv *kv = malloc(sizeof *kv);
    if (kv == NULL || (kv->key = strdup(key)) == NULL || (kv->val = strdup(value)) == NULL)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    kv->next = *head;
    *head = kv;
    return MPI_SUCCESS;
}
MPI_ALIAS(Info_set)

int PMPI_Info_get(MPI_Info info, const char *key, int valuelen, char *value, int *flag)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Info_get";
    if (key == NULL || value == NULL || flag == NULL || valuelen < 0)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    *flag = 0;
    if (info == MPI_INFO_ENV) return MPI_SUCCESS;
    struct mpi_info_kv **head = mpi_info_get(info);
    if (head == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO);
    for (struct mpi_info_kv *kv = *head; kv; kv = kv->next)
        if (strcmp(kv->key, key) == 0) {
            snprintf(value, (size_t)valuelen + 1, "%s", kv->val);
            *flag = 1;
            break;
        }
    return MPI_SUCCESS;
}
MPI_ALIAS(Info_get)

int PMPI_Info_get_nkeys(MPI_Info info, int *nkeys)
{
    CORE_CS_SCOPE();
    if (nkeys == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Info_get_nkeys", MPI_ERR_ARG);
    *nkeys = 0;
    if (info == MPI_INFO_ENV) return MPI_SUCCESS;
    struct mpi_info_kv **head = mpi_info_get(info);
    if (head == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Info_get_nkeys", MPI_ERR_INFO);
    for (struct mpi_info_kv *kv = *head; kv; kv = kv->next)
        ++*nkeys;
    return MPI_SUCCESS;
}
MPI_ALIAS(Info_get_nkeys)

/* The copy keeps the keys' order (that of MPI_Info_get_nthkey); MPI_INFO_ENV, which
 * tern leaves empty, duplicates to a new empty info. */
int PMPI_Info_dup(MPI_Info info, MPI_Info *newinfo)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Info_dup";
    if (newinfo == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (info != MPI_INFO_ENV && mpi_info_get(info) == NULL)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO);
    MPI_Info n;
    int rc = PMPI_Info_create(&n);
    if (rc) return rc;
    if (info == MPI_INFO_ENV) {
        *newinfo = n;
        return MPI_SUCCESS;
    }
    /* mpi_info_get after the create: the table may have moved. */
    struct mpi_info_kv **tail = mpi_info_get(n);
    for (struct mpi_info_kv *kv = *mpi_info_get(info); kv; kv = kv->next) {
        struct mpi_info_kv *c = malloc(sizeof *c);
        if (c) c->key = strdup(kv->key), c->val = strdup(kv->val), c->next = NULL;
        if (c && c->key && c->val) {
            *tail = c;
            tail = &c->next;
            continue;
        }
        if (c) free(c->key), free(c->val);
        free(c);
        PMPI_Info_free(&n);
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    }
    *newinfo = n;
    return MPI_SUCCESS;
}
MPI_ALIAS(Info_dup)

int PMPI_Info_free(MPI_Info *info)
{
    CORE_CS_SCOPE();
    if (info == NULL || mpi_info_get(*info) == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Info_free", MPI_ERR_INFO);
    int i = *info - MPI_INFO_USER_BASE;
    for (struct mpi_info_kv *kv = *mpi_infos[i], *n; kv; kv = n) {
        n = kv->next;
        free(kv->key);
        free(kv->val);
        free(kv);
    }
    free(mpi_infos[i]);
    mpi_infos[i] = NULL;
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(Info_free)

/* ---- info: deleting, enumerating, value lengths ------------------------------------ */

int PMPI_Info_delete(MPI_Info info, const char *key)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Info_delete";
    struct mpi_info_kv **head = mpi_info_get(info);
    if (head == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO);
    if (key == NULL || strlen(key) > MPI_MAX_INFO_KEY || key[0] == '\0')
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO_KEY);
    for (struct mpi_info_kv **pp = head; *pp; pp = &(*pp)->next)
        if (strcmp((*pp)->key, key) == 0) {
            struct mpi_info_kv *kv = *pp;
            *pp = kv->next;
            free(kv->key);
            free(kv->val);
            free(kv);
            return MPI_SUCCESS;
        }
    return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO_NOKEY);
}
MPI_ALIAS(Info_delete)

/* Keys are numbered in the order they were first set (the list holds them newest first). */
int PMPI_Info_get_nthkey(MPI_Info info, int n, char *key)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Info_get_nthkey";
    if (key == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_info_kv **head = info == MPI_INFO_ENV ? NULL : mpi_info_get(info);
    if (head == NULL && info != MPI_INFO_ENV) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO);
    int nkeys = 0;
    for (struct mpi_info_kv *kv = head ? *head : NULL; kv; kv = kv->next)
        nkeys++;
    if (n < 0 || n >= nkeys) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_info_kv *kv = *head;
    for (int i = nkeys - 1; i > n; i--)
        kv = kv->next;
    snprintf(key, MPI_MAX_INFO_KEY + 1, "%s", kv->key);
    return MPI_SUCCESS;
}
MPI_ALIAS(Info_get_nthkey)

int PMPI_Info_get_valuelen(MPI_Info info, const char *key, int *valuelen, int *flag)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Info_get_valuelen";
    if (key == NULL || valuelen == NULL || flag == NULL)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (strlen(key) > MPI_MAX_INFO_KEY || key[0] == '\0')
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO_KEY);
    *flag = 0;
    if (info == MPI_INFO_ENV) return MPI_SUCCESS;
    struct mpi_info_kv **head = mpi_info_get(info);
    if (head == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INFO);
    for (struct mpi_info_kv *kv = *head; kv; kv = kv->next)
        if (strcmp(kv->key, key) == 0) {
            *valuelen = (int)strlen(kv->val);
            *flag = 1;
            break;
        }
    return MPI_SUCCESS;
}
MPI_ALIAS(Info_get_valuelen)

/* ---- error classes, codes and strings added by the program ---------------------------
 * MPI_Add_error_class/code hand out numbers above every predefined class (MPI_T's
 * included); each has its class and an optional string (MPI_Add_error_string, also for
 * predefined-above-LASTCODE ones only, as the standard allows). MPI_LASTUSEDCODE follows. */

#define MPI_USER_ERR_BASE (MPI_ERR_LASTCODE + 1)
struct mpi_user_err {
    int cls;
    char *text;
};
static struct mpi_user_err *mpi_uerrs;
static int mpi_nuerrs;
int mpi_lastusedcode = MPI_ERR_LASTCODE;

static void mpi_uerr_fini(void)
{
    for (int i = 0; i < mpi_nuerrs; i++)
        free(mpi_uerrs[i].text);
    free(mpi_uerrs);
    mpi_uerrs = NULL;
    mpi_nuerrs = 0;
    mpi_lastusedcode = MPI_ERR_LASTCODE;
}

/* The class of a user code (or -1), and its string (or NULL). */
static int mpi_user_err_class(int code)
{
    int i = code - MPI_USER_ERR_BASE;
    return i >= 0 && i < mpi_nuerrs ? mpi_uerrs[i].cls : -1;
}

static const char *mpi_user_err_text(int code)
{
    int i = code - MPI_USER_ERR_BASE;
    return i >= 0 && i < mpi_nuerrs ? (mpi_uerrs[i].text ? mpi_uerrs[i].text : "") : NULL;
}

static int mpi_uerr_add(int cls, int *out)
{
    if (mpi_nuerrs == 0 && core_atfini(mpi_uerr_fini)) return MPI_ERR_INTERN;
    struct mpi_user_err *t = realloc(mpi_uerrs, (size_t)(mpi_nuerrs + 1) * sizeof *t);
    if (t == NULL) return MPI_ERR_NO_MEM;
    mpi_uerrs = t;
    int code = MPI_USER_ERR_BASE + mpi_nuerrs;
    mpi_uerrs[mpi_nuerrs++] = (struct mpi_user_err){cls < 0 ? code : cls, NULL};
    mpi_lastusedcode = code;
    *out = code;
    return MPI_SUCCESS;
}

int PMPI_Add_error_class(int *errorclass)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Add_error_class";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (errorclass == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    return mpi_err(MPI_COMM_WORLD, fn, mpi_uerr_add(-1, errorclass));
}
MPI_ALIAS(Add_error_class)

int PMPI_Add_error_code(int errorclass, int *errorcode)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Add_error_code";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    /* The class: a predefined one or one added by MPI_Add_error_class. */
    int ok = (errorclass >= 0 && errorclass <= MPI_ERR_LASTCODE) ||
             mpi_user_err_class(errorclass) == errorclass;
    if (errorcode == NULL || !ok) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    return mpi_err(MPI_COMM_WORLD, fn, mpi_uerr_add(errorclass, errorcode));
}
MPI_ALIAS(Add_error_code)

int PMPI_Add_error_string(int errorcode, const char *string)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Add_error_string";
    int i = errorcode - MPI_USER_ERR_BASE;
    if (string == NULL || i < 0 || i >= mpi_nuerrs || strlen(string) >= MPI_MAX_ERROR_STRING)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    char *t = strdup(string);
    if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    free(mpi_uerrs[i].text);
    mpi_uerrs[i].text = t;
    return MPI_SUCCESS;
}
MPI_ALIAS(Add_error_string)

int mpi_info_valid(MPI_Info info)
{
    return info == MPI_INFO_NULL || info == MPI_INFO_ENV || mpi_info_get(info) != NULL;
}

/*
 * mpi_t.c - the MPI tool information interface (MPI_T) of tern: an honest empty one.
 *
 * tern's tunables are environment variables read once at start (src/util/tunables.def,
 * `ternrun --info`); none can change while a job runs, and tern keeps no performance
 * counters a tool could sample. So MPI_T here has no control variables, no performance
 * variables and no categories: the counts are 0, and every index, name, handle or
 * session a tool passes is invalid, as the standard says it is for an empty interface.
 * Sessions can still be created and freed (a tool may make one before asking for
 * variables). MPI_T functions return their error codes directly and never call an
 * error handler (MPI 3.1, 14.3.9); they may be called before MPI_Init and after
 * MPI_Finalize, between MPI_T_init_thread and MPI_T_finalize.
 */
#include <stdatomic.h>

#include "mpi/mpi_impl.h"

#pragma GCC diagnostic ignored "-Wunused-parameter"

/* MPI_T_init_thread calls minus MPI_T_finalize calls (they nest). */
static atomic_int mpit_refs;
/* Sessions created and not yet freed; handles are 1, 2, ... */
static atomic_int mpit_sessions, mpit_next_session = 1;

#define MPIT_CHECK()                                                                               \
    do {                                                                                           \
        if (atomic_load(&mpit_refs) <= 0) return MPI_T_ERR_NOT_INITIALIZED;                        \
    } while (0)

int PMPI_T_init_thread(int required, int *provided)
{
    if (provided == NULL) return MPI_T_ERR_INVALID;
    atomic_fetch_add(&mpit_refs, 1);
    /* Nothing here is shared mutable state but the counters, which are atomic. */
    *provided = required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                                               : required;
    return MPI_SUCCESS;
}
MPI_ALIAS(T_init_thread)

int PMPI_T_finalize(void)
{
    MPIT_CHECK();
    atomic_fetch_sub(&mpit_refs, 1);
    return MPI_SUCCESS;
}
MPI_ALIAS(T_finalize)

static int mpit_num(int *num)
{
    MPIT_CHECK();
    if (num == NULL) return MPI_T_ERR_INVALID;
    *num = 0;
    return MPI_SUCCESS;
}

int PMPI_T_cvar_get_num(int *num_cvar)
{
    return mpit_num(num_cvar);
}
MPI_ALIAS(T_cvar_get_num)

int PMPI_T_pvar_get_num(int *num_pvar)
{
    return mpit_num(num_pvar);
}
MPI_ALIAS(T_pvar_get_num)

int PMPI_T_category_get_num(int *num_cat)
{
    return mpit_num(num_cat);
}
MPI_ALIAS(T_category_get_num)

int PMPI_T_category_changed(int *update_number)
{
    /* The (empty) set of categories never changes. */
    return mpit_num(update_number);
}
MPI_ALIAS(T_category_changed)

/* Functions taking a variable or category index: there is none. */
#define MPIT_NO_INDEX(Name, params)                                                                \
    int PMPI_T_##Name params                                                                       \
    {                                                                                              \
        MPIT_CHECK();                                                                              \
        return MPI_T_ERR_INVALID_INDEX;                                                            \
    }                                                                                              \
    MPI_ALIAS(T_##Name)

MPIT_NO_INDEX(cvar_get_info,
              (int cvar_index, char *name, int *name_len, int *verbosity, MPI_Datatype *datatype,
               MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind, int *scope))
MPIT_NO_INDEX(cvar_handle_alloc,
              (int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count))
MPIT_NO_INDEX(pvar_get_info,
              (int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
               MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len, int *bind,
               int *readonly, int *continuous, int *atomic))
MPIT_NO_INDEX(category_get_info,
              (int cat_index, char *name, int *name_len, char *desc, int *desc_len, int *num_cvars,
               int *num_pvars, int *num_categories))
MPIT_NO_INDEX(category_get_categories, (int cat_index, int len, int indices[]))
MPIT_NO_INDEX(category_get_cvars, (int cat_index, int len, int indices[]))
MPIT_NO_INDEX(category_get_pvars, (int cat_index, int len, int indices[]))

/* Lookups by name: no variable or category has one. */
int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MPIT_CHECK();
    return name == NULL || cvar_index == NULL ? MPI_T_ERR_INVALID : MPI_T_ERR_INVALID_NAME;
}
MPI_ALIAS(T_cvar_get_index)

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    MPIT_CHECK();
    return name == NULL || pvar_index == NULL ? MPI_T_ERR_INVALID : MPI_T_ERR_INVALID_NAME;
}
MPI_ALIAS(T_pvar_get_index)

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    MPIT_CHECK();
    return name == NULL || cat_index == NULL ? MPI_T_ERR_INVALID : MPI_T_ERR_INVALID_NAME;
}
MPI_ALIAS(T_category_get_index)

/* Enumerations come only from variables: none exists. */
int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    MPIT_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}
MPI_ALIAS(T_enum_get_info)

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    MPIT_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}
MPI_ALIAS(T_enum_get_item)

/* No handle can be allocated, so every handle is invalid. */
int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPIT_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}
MPI_ALIAS(T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MPIT_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}
MPI_ALIAS(T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    MPIT_CHECK();
    return MPI_T_ERR_INVALID_HANDLE;
}
MPI_ALIAS(T_cvar_write)

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    MPIT_CHECK();
    if (session == NULL) return MPI_T_ERR_INVALID;
    atomic_fetch_add(&mpit_sessions, 1);
    *session = atomic_fetch_add(&mpit_next_session, 1);
    return MPI_SUCCESS;
}
MPI_ALIAS(T_pvar_session_create)

static int mpit_session_ok(MPI_T_pvar_session s)
{
    return s > 0 && s < atomic_load(&mpit_next_session);
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    MPIT_CHECK();
    if (session == NULL || !mpit_session_ok(*session)) return MPI_T_ERR_INVALID_SESSION;
    atomic_fetch_sub(&mpit_sessions, 1);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(T_pvar_session_free)

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    MPIT_CHECK();
    return mpit_session_ok(session) ? MPI_T_ERR_INVALID_INDEX : MPI_T_ERR_INVALID_SESSION;
}
MPI_ALIAS(T_pvar_handle_alloc)

/* Operations on a performance-variable handle: the session is checked, the handle
 * cannot be valid (MPI_T_PVAR_ALL_HANDLES, allowed for start/stop, names none). */
#define MPIT_PVAR_OP(Name, params, all_ok)                                                         \
    int PMPI_T_##Name params                                                                       \
    {                                                                                              \
        MPIT_CHECK();                                                                              \
        if (!mpit_session_ok(session)) return MPI_T_ERR_INVALID_SESSION;                           \
        return (all_ok) && handle == MPI_T_PVAR_ALL_HANDLES ? MPI_SUCCESS                          \
                                                            : MPI_T_ERR_INVALID_HANDLE;            \
    }                                                                                              \
    MPI_ALIAS(T_##Name)

MPIT_PVAR_OP(pvar_start, (MPI_T_pvar_session session, MPI_T_pvar_handle handle), 1)
MPIT_PVAR_OP(pvar_stop, (MPI_T_pvar_session session, MPI_T_pvar_handle handle), 1)
MPIT_PVAR_OP(pvar_reset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle), 1)
MPIT_PVAR_OP(pvar_read, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf), 0)
MPIT_PVAR_OP(pvar_readreset, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf), 0)
MPIT_PVAR_OP(pvar_write, (MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf), 0)

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    MPIT_CHECK();
    if (!mpit_session_ok(session)) return MPI_T_ERR_INVALID_SESSION;
    return MPI_T_ERR_INVALID_HANDLE;
}
MPI_ALIAS(T_pvar_handle_free)

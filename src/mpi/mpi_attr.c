/*
 * mpi_attr.c - the program's attributes on windows and datatypes (MPI 3.1, 6.7.3-6.7.4):
 * MPI_Win_/MPI_Type_create_keyval, _free_keyval, _set_attr, _get_attr, _delete_attr,
 * with copy callbacks run by MPI_Type_dup and delete callbacks run by MPI_Win_free,
 * MPI_Type_free, attribute replacement and deletion. Also the MPI-1 names of
 * communicator attributes and error handlers (MPI_Keyval_create, MPI_Attr_put, ...),
 * and window error handlers.
 *
 * Keyvals of windows and of datatypes are numbered in one table of their own, above
 * every communicator keyval and predefined attribute, each marked with its kind, so a
 * keyval of the wrong kind is MPI_ERR_KEYVAL. Attributes are a list of (kind, object,
 * keyval, value): objects carry a handful at most, and the list keeps set order for the
 * delete callbacks. Callbacks run with the library lock held, and may call MPI.
 */
#include <stdlib.h>

#include "mpi/mpi_impl.h"

#define ATTR_KEYVAL_BASE 0x40000000

struct attr_keyval {
    int kind;      /* 0: free slot */
    int freed;     /* MPI_X_free_keyval called: no new attributes, callbacks still run */
    int refs;      /* attributes using it */
    void *copy_fn; /* MPI_Win/Type_copy_attr_function, or the NULL/DUP sentinels */
    void *delete_fn;
    void *extra;
};

struct attr {
    struct attr *next;
    int kind, obj, keyval;
    void *val;
};

static struct attr_keyval *attr_kvs;
static int attr_nkvs;
static struct attr *attr_list;

static void attr_fini(void)
{
    for (struct attr *a = attr_list, *n; a; a = n) {
        n = a->next;
        free(a);
    }
    attr_list = NULL;
    free(attr_kvs);
    attr_kvs = NULL;
    attr_nkvs = 0;
}

static struct attr_keyval *attr_kv(int kind, int keyval)
{
    int i = keyval - ATTR_KEYVAL_BASE;
    return i >= 0 && i < attr_nkvs && attr_kvs[i].kind == kind ? &attr_kvs[i] : NULL;
}

static int attr_keyval_create(int kind, void *copy_fn, void *delete_fn, int *keyval, void *extra)
{
    if (keyval == NULL) return MPI_ERR_ARG;
    if (attr_nkvs == 0 && core_atfini(attr_fini)) return MPI_ERR_INTERN;
    int i = 0;
    while (i < attr_nkvs && attr_kvs[i].kind)
        i++;
    if (i == attr_nkvs) {
        struct attr_keyval *t = realloc(attr_kvs, (size_t)(attr_nkvs + 16) * sizeof *t);
        if (t == NULL) return MPI_ERR_NO_MEM;
        for (int k = attr_nkvs; k < attr_nkvs + 16; k++)
            t[k].kind = 0;
        attr_kvs = t;
        attr_nkvs += 16;
    }
    attr_kvs[i] = (struct attr_keyval){kind, 0, 0, copy_fn, delete_fn, extra};
    *keyval = ATTR_KEYVAL_BASE + i;
    return MPI_SUCCESS;
}

static void attr_kv_unref(struct attr_keyval *k)
{
    if (--k->refs == 0 && k->freed) k->kind = 0;
}

static int attr_keyval_free(int kind, int *keyval)
{
    if (keyval == NULL) return MPI_ERR_ARG;
    struct attr_keyval *k = attr_kv(kind, *keyval);
    /* A freed keyval attributes still use may be freed again (as for communicators, and
     * as in MPICH): nothing changes. */
    if (k == NULL) return MPI_ERR_KEYVAL;
    k->freed = 1;
    if (k->refs == 0) k->kind = 0;
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

static struct attr **attr_find(int kind, int obj, int keyval)
{
    for (struct attr **pp = &attr_list; *pp; pp = &(*pp)->next)
        if ((*pp)->kind == kind && (*pp)->obj == obj && (*pp)->keyval == keyval) return pp;
    return NULL;
}

/* The delete callback of one attribute (its value stays until the caller drops it). */
static int attr_delete_cb(const struct attr *a)
{
    struct attr_keyval *k = attr_kv(a->kind, a->keyval);
    if (k == NULL || k->delete_fn == NULL) return MPI_SUCCESS;
    if (a->kind == MPI_ATTR_WIN)
        return ((MPI_Win_delete_attr_function *)k->delete_fn)(a->obj, a->keyval, a->val, k->extra);
    return ((MPI_Type_delete_attr_function *)k->delete_fn)(a->obj, a->keyval, a->val, k->extra);
}

static void attr_drop(struct attr **pp)
{
    struct attr *a = *pp;
    struct attr_keyval *k = attr_kv(a->kind, a->keyval);
    *pp = a->next;
    if (k) attr_kv_unref(k);
    free(a);
}

static int attr_set(int kind, int obj, int keyval, void *val)
{
    struct attr_keyval *k = attr_kv(kind, keyval);
    if (k == NULL || k->freed) return MPI_ERR_KEYVAL;
    struct attr **pp = attr_find(kind, obj, keyval);
    if (pp) { /* replaced: the old value is deleted first */
        int rc = attr_delete_cb(*pp);
        if (rc) return rc;
        (*pp)->val = val;
        return MPI_SUCCESS;
    }
    struct attr *a = malloc(sizeof *a);
    if (a == NULL) return MPI_ERR_NO_MEM;
    *a = (struct attr){NULL, kind, obj, keyval, val};
    struct attr **tail = &attr_list; /* append: set order */
    while (*tail)
        tail = &(*tail)->next;
    *tail = a;
    k->refs++;
    return MPI_SUCCESS;
}

int mpi_attr_get(int kind, int obj, int keyval, void *attribute_val, int *flag)
{
    if (attribute_val == NULL || flag == NULL) return MPI_ERR_ARG;
    if (attr_kv(kind, keyval) == NULL) return MPI_ERR_KEYVAL;
    struct attr **pp = attr_find(kind, obj, keyval);
    *flag = pp != NULL;
    if (pp) *(void **)attribute_val = (*pp)->val;
    return MPI_SUCCESS;
}

static int attr_delete(int kind, int obj, int keyval)
{
    if (attr_kv(kind, keyval) == NULL) return MPI_ERR_KEYVAL;
    struct attr **pp = attr_find(kind, obj, keyval);
    if (pp == NULL) return MPI_ERR_KEYVAL; /* no such attribute on the object */
    int rc = attr_delete_cb(*pp);
    if (rc) return rc;
    attr_drop(pp);
    return MPI_SUCCESS;
}

void mpi_attr_free_all(int kind, int obj)
{
    struct attr **pp = &attr_list;
    while (*pp) {
        if ((*pp)->kind == kind && (*pp)->obj == obj) {
            (void)attr_delete_cb(*pp); /* MPI gives free no way to report its failure */
            attr_drop(pp);
        } else {
            pp = &(*pp)->next;
        }
    }
}

int mpi_attr_copy_all(int kind, int old, int new_obj)
{
    /* Walk a snapshot of the length: attributes appended for new_obj come after. */
    int n = 0;
    for (struct attr *a = attr_list; a; a = a->next)
        n++;
    struct attr *a = attr_list;
    for (int i = 0; i < n && a; i++, a = a->next) {
        if (a->kind != kind || a->obj != old) continue;
        struct attr_keyval *k = attr_kv(kind, a->keyval);
        if (k == NULL || k->copy_fn == NULL) continue; /* MPI_*_NULL_COPY_FN */
        void *out = a->val;
        int flag = 1;
        if (k->copy_fn != (void *)1) { /* not MPI_*_DUP_FN */
            int rc = ((MPI_Type_copy_attr_function *)k->copy_fn)(old, a->keyval, k->extra, a->val,
                                                                 &out, &flag);
            if (rc) return rc;
        }
        if (flag) {
            int rc = attr_set(kind, new_obj, a->keyval, out);
            if (rc) return rc;
        }
    }
    return MPI_SUCCESS;
}

/* ---- windows ------------------------------------------------------------------------ */

/* The window's error communicator, or an error return for a dead handle. */
#define ATTR_WIN(fn, win)                                                                          \
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);                            \
    MPI_Comm wc = mpi_win_comm(win);                                                               \
    if (wc == MPI_COMM_NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_WIN)

int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state)
{
    CORE_CS_SCOPE();
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, "MPI_Win_create_keyval", MPI_ERR_OTHER);
    return mpi_err(MPI_COMM_WORLD, "MPI_Win_create_keyval",
                   attr_keyval_create(MPI_ATTR_WIN, (void *)win_copy_attr_fn,
                                      (void *)win_delete_attr_fn, win_keyval, extra_state));
}
MPI_ALIAS(Win_create_keyval)

int PMPI_Win_free_keyval(int *win_keyval)
{
    CORE_CS_SCOPE();
    return mpi_err(MPI_COMM_WORLD, "MPI_Win_free_keyval",
                   attr_keyval_free(MPI_ATTR_WIN, win_keyval));
}
MPI_ALIAS(Win_free_keyval)

int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_set_attr";
    ATTR_WIN(fn, win);
    return mpi_err(wc, fn, attr_set(MPI_ATTR_WIN, win, win_keyval, attribute_val));
}
MPI_ALIAS(Win_set_attr)

int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_delete_attr";
    ATTR_WIN(fn, win);
    return mpi_err(wc, fn, attr_delete(MPI_ATTR_WIN, win, win_keyval));
}
MPI_ALIAS(Win_delete_attr)

/* Window error handlers share the table of communicator ones (handles of both kinds are
 * ints); mpi_err passes a window's handler the window's handle. */
int PMPI_Win_create_errhandler(MPI_Win_errhandler_function *win_errhandler_fn,
                               MPI_Errhandler *errhandler)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_create_errhandler((MPI_Comm_errhandler_function *)win_errhandler_fn,
                                       errhandler);
}
MPI_ALIAS(Win_create_errhandler)

int PMPI_Win_call_errhandler(MPI_Win win, int errorcode)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_call_errhandler";
    ATTR_WIN(fn, win);
    return PMPI_Comm_call_errhandler(wc, errorcode);
}
MPI_ALIAS(Win_call_errhandler)

/* ---- datatypes ------------------------------------------------------------------------ */

#define ATTR_TYPE(fn, type)                                                                        \
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);                            \
    if (mpi_type_get(type) == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE)

int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    CORE_CS_SCOPE();
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, "MPI_Type_create_keyval", MPI_ERR_OTHER);
    return mpi_err(MPI_COMM_WORLD, "MPI_Type_create_keyval",
                   attr_keyval_create(MPI_ATTR_TYPE, (void *)type_copy_attr_fn,
                                      (void *)type_delete_attr_fn, type_keyval, extra_state));
}
MPI_ALIAS(Type_create_keyval)

int PMPI_Type_free_keyval(int *type_keyval)
{
    CORE_CS_SCOPE();
    return mpi_err(MPI_COMM_WORLD, "MPI_Type_free_keyval",
                   attr_keyval_free(MPI_ATTR_TYPE, type_keyval));
}
MPI_ALIAS(Type_free_keyval)

int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_set_attr";
    ATTR_TYPE(fn, datatype);
    return mpi_err(MPI_COMM_WORLD, fn,
                   attr_set(MPI_ATTR_TYPE, datatype, type_keyval, attribute_val));
}
MPI_ALIAS(Type_set_attr)

int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_get_attr";
    ATTR_TYPE(fn, datatype);
    return mpi_err(MPI_COMM_WORLD, fn,
                   mpi_attr_get(MPI_ATTR_TYPE, datatype, type_keyval, attribute_val, flag));
}
MPI_ALIAS(Type_get_attr)

int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_delete_attr";
    ATTR_TYPE(fn, datatype);
    return mpi_err(MPI_COMM_WORLD, fn, attr_delete(MPI_ATTR_TYPE, datatype, type_keyval));
}
MPI_ALIAS(Type_delete_attr)

/* ---- MPI-1 names of communicator attributes and error handlers ------------------------ */

/* MPI_Copy_function and MPI_Delete_function have the signatures of the MPI-2 ones, and
 * MPI_NULL_COPY_FN / MPI_DUP_FN are the same sentinels as MPI_COMM_NULL_COPY_FN /
 * MPI_COMM_DUP_FN. */
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_create_keyval((MPI_Comm_copy_attr_function *)copy_fn,
                                   (MPI_Comm_delete_attr_function *)delete_fn, keyval, extra_state);
}
MPI_ALIAS(Keyval_create)

int PMPI_Keyval_free(int *keyval)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_free_keyval(keyval);
}
MPI_ALIAS(Keyval_free)

int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}
MPI_ALIAS(Attr_put)

int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_delete_attr(comm, keyval);
}
MPI_ALIAS(Attr_delete)

int PMPI_Errhandler_create(MPI_Handler_function *function, MPI_Errhandler *errhandler)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_create_errhandler(function, errhandler);
}
MPI_ALIAS(Errhandler_create)

/*
 * mpi_misc.c - small MPI 3.1 functions around the main objects: C/Fortran handle
 * conversions, statuses as Fortran integers, the MPI-1 datatype names kept for old
 * programs, MPI_Count queries, types by size and precision, MPI_Type_create_darray.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

/* C <-> Fortran handle conversions: handles are integers, the same in both languages. */
#define MPI_CONV(Kind, Type)                                                                       \
    MPI_Fint PMPI_##Kind##_c2f(Type h)                                                             \
    {                                                                                              \
        return (MPI_Fint)h;                                                                        \
    }                                                                                              \
    MPI_ALIAS(Kind##_c2f)                                                                          \
    Type PMPI_##Kind##_f2c(MPI_Fint h)                                                             \
    {                                                                                              \
        return (Type)h;                                                                            \
    }                                                                                              \
    MPI_ALIAS(Kind##_f2c)

MPI_CONV(Type, MPI_Datatype)
MPI_CONV(Group, MPI_Group)
MPI_CONV(Info, MPI_Info)
MPI_CONV(Request, MPI_Request)
MPI_CONV(Op, MPI_Op)
MPI_CONV(Errhandler, MPI_Errhandler)
MPI_CONV(Win, MPI_Win)
MPI_CONV(Message, MPI_Message)
MPI_CONV(File, MPI_File)

/* ---- statuses as Fortran integers ---------------------------------------------------- */

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    CORE_CS_SCOPE();
    if (c_status == NULL || c_status == MPI_STATUS_IGNORE || f_status == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Status_c2f", MPI_ERR_ARG);
    memcpy(f_status, c_status, sizeof *c_status); /* MPI_STATUS_SIZE integers, same layout */
    return MPI_SUCCESS;
}
MPI_ALIAS(Status_c2f)

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    CORE_CS_SCOPE();
    if (f_status == NULL || c_status == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Status_f2c", MPI_ERR_ARG);
    memcpy(c_status, f_status, sizeof *c_status);
    return MPI_SUCCESS;
}
MPI_ALIAS(Status_f2c)

/* ---- datatypes: MPI-1 names (removed in MPI 3.0, still called by old programs) ------- */

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint *extent)
{
    CORE_CS_SCOPE();
    MPI_Aint lb;
    return PMPI_Type_get_extent(datatype, &lb, extent);
}
MPI_ALIAS(Type_extent)

int PMPI_Type_lb(MPI_Datatype datatype, MPI_Aint *displacement)
{
    CORE_CS_SCOPE();
    MPI_Aint extent;
    return PMPI_Type_get_extent(datatype, displacement, &extent);
}
MPI_ALIAS(Type_lb)

int PMPI_Type_ub(MPI_Datatype datatype, MPI_Aint *displacement)
{
    CORE_CS_SCOPE();
    MPI_Aint lb, extent;
    int rc = PMPI_Type_get_extent(datatype, &lb, &extent);
    if (rc == MPI_SUCCESS) *displacement = lb + extent;
    return rc;
}
MPI_ALIAS(Type_ub)

int PMPI_Type_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    return PMPI_Type_create_hvector(count, blocklength, stride, oldtype, newtype);
}
MPI_ALIAS(Type_hvector)

int PMPI_Type_hindexed(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    return PMPI_Type_create_hindexed(count, array_of_blocklengths, array_of_displacements, oldtype,
                                     newtype);
}
MPI_ALIAS(Type_hindexed)

int PMPI_Type_struct(int count, int array_of_blocklengths[], MPI_Aint array_of_displacements[],
                     MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    return PMPI_Type_create_struct(count, array_of_blocklengths, array_of_displacements,
                                   array_of_types, newtype);
}
MPI_ALIAS(Type_struct)

/* ---- datatypes: MPI_Count forms ------------------------------------------------------ */

int PMPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count *lb, MPI_Count *extent)
{
    CORE_CS_SCOPE();
    MPI_Aint l, e;
    if (lb == NULL || extent == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_get_extent_x", MPI_ERR_ARG);
    int rc = PMPI_Type_get_extent(datatype, &l, &e);
    if (rc == MPI_SUCCESS) *lb = l, *extent = e;
    return rc;
}
MPI_ALIAS(Type_get_extent_x)

int PMPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count *true_lb, MPI_Count *true_extent)
{
    CORE_CS_SCOPE();
    MPI_Aint l, e;
    if (true_lb == NULL || true_extent == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_get_true_extent_x", MPI_ERR_ARG);
    int rc = PMPI_Type_get_true_extent(datatype, &l, &e);
    if (rc == MPI_SUCCESS) *true_lb = l, *true_extent = e;
    return rc;
}
MPI_ALIAS(Type_get_true_extent_x)

/* Elements past INT_MAX (MPI_UNDEFINED from the int form) are counted here again. */
int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    CORE_CS_SCOPE();
    int n;
    if (count == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Get_elements_x", MPI_ERR_ARG);
    if (status && mpi_type_ok(datatype) &&
        mpi_type_elements(datatype, status->tern_bytes, count) == 0)
        return MPI_SUCCESS;
    int rc = PMPI_Get_elements(status, datatype, &n);
    if (rc) return rc;
    struct mpi_type *t = mpi_type_ok(datatype);
    *count = n;
    if (n == MPI_UNDEFINED && t->basic_size > 0 && status->tern_bytes % t->basic_size == 0)
        *count = status->tern_bytes / t->basic_size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Get_elements_x)

/* ---- datatypes by size and by Fortran 90 precision -------------------------------------
 * tern has C types only, so these return the C type of that class and size: the
 * smallest integer type with `r` decimal digits of range, the smallest real (complex)
 * type with `p` digits of precision and an exponent range of `r`. */

static int mpi_match(int typeclass, int size, MPI_Datatype *out)
{
    static const struct {
        int cls, size;
        MPI_Datatype dt;
    } tab[] = {
        {MPI_TYPECLASS_INTEGER, 1, MPI_INT8_T},
        {MPI_TYPECLASS_INTEGER, 2, MPI_INT16_T},
        {MPI_TYPECLASS_INTEGER, 4, MPI_INT32_T},
        {MPI_TYPECLASS_INTEGER, 8, MPI_INT64_T},
        {MPI_TYPECLASS_REAL, sizeof(float), MPI_FLOAT},
        {MPI_TYPECLASS_REAL, sizeof(double), MPI_DOUBLE},
        {MPI_TYPECLASS_REAL, sizeof(long double), MPI_LONG_DOUBLE},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(float), MPI_C_FLOAT_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(double), MPI_C_DOUBLE_COMPLEX},
        {MPI_TYPECLASS_COMPLEX, 2 * sizeof(long double), MPI_C_LONG_DOUBLE_COMPLEX},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
        if (tab[i].cls == typeclass && tab[i].size == size) {
            *out = tab[i].dt;
            return MPI_SUCCESS;
        }
    return MPI_ERR_ARG;
}

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_match_size";
    if (datatype == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    return mpi_err(MPI_COMM_WORLD, fn, mpi_match(typeclass, size, datatype));
}
MPI_ALIAS(Type_match_size)

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_create_f90_integer";
    if (newtype == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    /* 10^r - 1 must fit: int8 holds r <= 2, int16 r <= 4, int32 r <= 9, int64 r <= 18. */
    int size = r <= 2 ? 1 : r <= 4 ? 2 : r <= 9 ? 4 : r <= 18 ? 8 : 0;
    return mpi_err(MPI_COMM_WORLD, fn, mpi_match(MPI_TYPECLASS_INTEGER, size, newtype));
}
MPI_ALIAS(Type_create_f90_integer)

/* Bytes of the smallest IEEE real with p digits and exponent range r (MPI_UNDEFINED:
 * either may be left out), 0 if none: float 6/37, double 15/307, x87 long double 18/4931. */
static int mpi_real_size(int p, int r)
{
    if (p == MPI_UNDEFINED) p = 0;
    if (r == MPI_UNDEFINED) r = 0;
    if (p < 0 || r < 0) return 0;
    if (p <= 6 && r <= 37) return sizeof(float);
    if (p <= 15 && r <= 307) return sizeof(double);
    if (sizeof(long double) > sizeof(double) && p <= 18 && r <= 4931) return sizeof(long double);
    return 0;
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_create_f90_real";
    if (newtype == NULL || (p == MPI_UNDEFINED && r == MPI_UNDEFINED))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    return mpi_err(MPI_COMM_WORLD, fn, mpi_match(MPI_TYPECLASS_REAL, mpi_real_size(p, r), newtype));
}
MPI_ALIAS(Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_create_f90_complex";
    if (newtype == NULL || (p == MPI_UNDEFINED && r == MPI_UNDEFINED))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    return mpi_err(MPI_COMM_WORLD, fn,
                   mpi_match(MPI_TYPECLASS_COMPLEX, 2 * mpi_real_size(p, r), newtype));
}
MPI_ALIAS(Type_create_f90_complex)

/* ---- decoding datatypes (MPI 3.1, 4.1.13) ---------------------------------------------
 * Every constructor records its combiner and arguments here (mpi_type.c), in a table by
 * handle slot that also keeps the full handle, so a slot reused by a later type never shows
 * a stale envelope. The datatypes an envelope names are kept as private duplicates (the
 * program may free its own), which share their envelope; MPI_Type_get_contents hands out
 * new duplicates of them for the caller to free, as MPI allows. */

struct mpi_env {
    int refs;
    int combiner, ni, na, nt;
    int *ints;
    MPI_Aint *aints;
    MPI_Datatype *types; /* predefined ones as they are, derived ones private duplicates */
};
static struct mpi_env **mpi_envs; /* by handle slot */
static MPI_Datatype *mpi_env_handles;
static int mpi_nenvs;

static void mpi_env_unref(struct mpi_env *e)
{
    if (e == NULL || --e->refs > 0) return;
    for (int i = 0; i < e->nt; i++) {
        struct mpi_type *t = mpi_type_get(e->types[i]);
        if (t && !t->predefined) PMPI_Type_free(&e->types[i]);
    }
    free(e->ints);
    free(e->aints);
    free(e->types);
    free(e);
}

static struct mpi_env *mpi_env_of(MPI_Datatype h)
{
    int slot = h < 0 ? -1 : mpi_handle_slot(h);
    return slot >= 0 && slot < mpi_nenvs && mpi_env_handles[slot] == h ? mpi_envs[slot] : NULL;
}

static int mpi_env_attach(MPI_Datatype h, struct mpi_env *e)
{
    int slot = mpi_handle_slot(h);
    if (slot >= mpi_nenvs) {
        int n = slot + 64;
        struct mpi_env **t = realloc(mpi_envs, (size_t)n * sizeof *t);
        if (t == NULL) return MPI_ERR_NO_MEM;
        mpi_envs = t;
        MPI_Datatype *hs = realloc(mpi_env_handles, (size_t)n * sizeof *hs);
        if (hs == NULL) return MPI_ERR_NO_MEM;
        mpi_env_handles = hs;
        for (int i = mpi_nenvs; i < n; i++) {
            mpi_envs[i] = NULL;
            mpi_env_handles[i] = MPI_DATATYPE_NULL;
        }
        mpi_nenvs = n;
    }
    struct mpi_env *old = mpi_envs[slot];
    mpi_envs[slot] = e;
    mpi_env_handles[slot] = h;
    if (e) e->refs++;
    mpi_env_unref(old);
    return MPI_SUCCESS;
}

/* A duplicate of a derived type that shares its envelope (private, or for the caller). */
static int mpi_env_dup(MPI_Datatype t, MPI_Datatype *out)
{
    int rc = mpi_type_dup_plain(t, out);
    struct mpi_env *e = mpi_env_of(t);
    if (rc == MPI_SUCCESS && e) rc = mpi_env_attach(*out, e);
    return rc;
}

void mpi_type_env_set(MPI_Datatype h, int combiner, int ni, const int *ints, int na,
                      const MPI_Aint *aints, int nt, const MPI_Datatype *types)
{
    struct mpi_env *e = calloc(1, sizeof *e);
    if (e == NULL) return; /* no envelope: decoding reports MPI_ERR_INTERN */
    e->refs = 1;
    e->combiner = combiner;
    e->ints = malloc((size_t)(ni ? ni : 1) * sizeof *e->ints);
    e->aints = malloc((size_t)(na ? na : 1) * sizeof *e->aints);
    e->types = malloc((size_t)(nt ? nt : 1) * sizeof *e->types);
    if (!e->ints || !e->aints || !e->types) {
        mpi_env_unref(e);
        return;
    }
    e->ni = ni;
    e->na = na;
    if (ni) memcpy(e->ints, ints, (size_t)ni * sizeof *ints);
    if (na) memcpy(e->aints, aints, (size_t)na * sizeof *aints);
    for (int i = 0; i < nt; i++) {
        struct mpi_type *t = mpi_type_get(types[i]);
        e->types[i] = types[i];
        if (t && !t->predefined && mpi_env_dup(types[i], &e->types[i]))
            e->types[i] = MPI_DATATYPE_NULL;
        e->nt = i + 1;
    }
    mpi_env_attach(h, e);
    mpi_env_unref(e);
}

void mpi_type_env_list(MPI_Datatype h, int combiner, int count, const int *bls, int bl,
                       const int *idisp, const MPI_Aint *adisp, MPI_Datatype old)
{
    int ni = 1 + (bls ? count : 1) + (idisp ? count : 0);
    int *ints = malloc((size_t)ni * sizeof *ints);
    if (ints == NULL) return;
    int n = 0;
    ints[n++] = count;
    if (bls)
        for (int i = 0; i < count; i++)
            ints[n++] = bls[i];
    else
        ints[n++] = bl;
    if (idisp)
        for (int i = 0; i < count; i++)
            ints[n++] = idisp[i];
    mpi_type_env_set(h, combiner, n, ints, adisp ? count : 0, adisp, 1, &old);
    free(ints);
}

void mpi_type_env_struct(MPI_Datatype h, int count, const int *bls, const MPI_Aint *disps,
                         const MPI_Datatype *types)
{
    int *ints = malloc((size_t)(count + 1) * sizeof *ints);
    if (ints == NULL) return;
    ints[0] = count;
    if (count) memcpy(ints + 1, bls, (size_t)count * sizeof *ints);
    mpi_type_env_set(h, MPI_COMBINER_STRUCT, count + 1, ints, count, disps, count, types);
    free(ints);
}

void mpi_type_env_subarray(MPI_Datatype h, int ndims, const int *sizes, const int *subsizes,
                           const int *starts, int order, MPI_Datatype old)
{
    int *ints = malloc((size_t)(3 * ndims + 2) * sizeof *ints);
    if (ints == NULL) return;
    ints[0] = ndims;
    memcpy(ints + 1, sizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 1 + ndims, subsizes, (size_t)ndims * sizeof *ints);
    memcpy(ints + 1 + 2 * ndims, starts, (size_t)ndims * sizeof *ints);
    ints[1 + 3 * ndims] = order;
    mpi_type_env_set(h, MPI_COMBINER_SUBARRAY, 3 * ndims + 2, ints, 0, NULL, 1, &old);
    free(ints);
}

void mpi_type_env_drop(MPI_Datatype h)
{
    if (mpi_env_of(h)) mpi_env_attach(h, NULL);
}

void mpi_type_env_fini(void)
{
    for (int i = 0; i < mpi_nenvs; i++)
        if (mpi_envs[i] && mpi_type_get(mpi_env_handles[i])) mpi_type_env_drop(mpi_env_handles[i]);
    free(mpi_envs);
    free(mpi_env_handles);
    mpi_envs = NULL;
    mpi_env_handles = NULL;
    mpi_nenvs = 0;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_get_envelope";
    struct mpi_type *t = mpi_type_get(datatype);
    if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE);
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (t->predefined) {
        *num_integers = *num_addresses = *num_datatypes = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    struct mpi_env *e = mpi_env_of(datatype);
    if (e == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INTERN); /* out of memory then */
    *num_integers = e->ni;
    *num_addresses = e->na;
    *num_datatypes = e->nt;
    *combiner = e->combiner;
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_get_envelope)

/* Erroneous for a predefined type (MPI 3.1, 4.1.13). */
int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_get_contents";
    struct mpi_type *t = mpi_type_get(datatype);
    if (t == NULL || t->predefined) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE);
    struct mpi_env *e = mpi_env_of(datatype);
    if (e == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_INTERN);
    if (max_integers < e->ni || max_addresses < e->na || max_datatypes < e->nt ||
        (e->ni && !array_of_integers) || (e->na && !array_of_addresses) ||
        (e->nt && !array_of_datatypes))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    if (e->ni) memcpy(array_of_integers, e->ints, (size_t)e->ni * sizeof *e->ints);
    if (e->na) memcpy(array_of_addresses, e->aints, (size_t)e->na * sizeof *e->aints);
    for (int i = 0; i < e->nt; i++) {
        struct mpi_type *c = mpi_type_get(e->types[i]);
        array_of_datatypes[i] = e->types[i];
        if (c && !c->predefined) {
            int rc = mpi_env_dup(e->types[i], &array_of_datatypes[i]);
            if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
        }
    }
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_get_contents)

/* ---- basic elements (MPI_Get_elements, MPI_Status_set_elements): the type map walked
 * through the envelopes, for derived types of mixed basic types and partial messages. */

/* One piece of a type map in order: `reps` instances of `child` (pieces of a derived type
 * other than a struct are all of its one child). */
static int mpi_env_pieces(const struct mpi_env *e, int i, MPI_Datatype *child, MPI_Count *reps)
{
    const int *n = e->ints;
    MPI_Count r = 0;
    switch (e->combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:
        r = 1;
        break;
    case MPI_COMBINER_CONTIGUOUS:
        r = n[0];
        break;
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
        r = (MPI_Count)n[0] * n[1];
        break;
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
        for (int k = 0; k < n[0]; k++)
            r += n[1 + k];
        break;
    case MPI_COMBINER_SUBARRAY:
        r = 1;
        for (int k = 0; k < n[0]; k++)
            r *= n[1 + n[0] + k];
        break;
    case MPI_COMBINER_STRUCT:
        if (i >= n[0]) return 0;
        *child = e->types[i];
        *reps = n[1 + i];
        return 1;
    default:
        return -1; /* darray: make-up not walked */
    }
    if (i > 0) return 0;
    *child = e->types[0];
    *reps = r;
    return 1;
}

/* Elements in one instance of a predefined type, and the bytes of its first element. */
static MPI_Count mpi_named_elements(MPI_Datatype dt, const struct mpi_type *t, MPI_Count *first)
{
    switch (dt) {
    case MPI_FLOAT_INT:
    case MPI_2INT:
        *first = 4;
        return 2;
    case MPI_DOUBLE_INT:
    case MPI_LONG_INT:
        *first = 8;
        return 2;
    case MPI_SHORT_INT:
        *first = sizeof(short);
        return 2;
    case MPI_LONG_DOUBLE_INT:
        *first = sizeof(long double);
        return 2;
    case MPI_2REAL:
    case MPI_2DOUBLE_PRECISION:
    case MPI_2INTEGER:
        *first = t->size / 2;
        return 2;
    default:
        *first = t->size;
        return t->size > 0;
    }
}

/* Basic elements in one instance of dt; -1 when its make-up is unknown. */
static MPI_Count mpi_type_elements1(MPI_Datatype dt)
{
    struct mpi_type *t = mpi_type_get(dt);
    if (t == NULL) return -1;
    MPI_Count first;
    if (t->predefined) return mpi_named_elements(dt, t, &first);
    struct mpi_env *e = mpi_env_of(dt);
    if (e == NULL) return -1;
    MPI_Count sum = 0, reps;
    MPI_Datatype c;
    for (int i = 0, pr; (pr = mpi_env_pieces(e, i, &c, &reps)) != 0; i++) {
        if (pr < 0) return -1;
        MPI_Count k = mpi_type_elements1(c);
        if (k < 0) return -1;
        sum += reps * k;
    }
    return sum;
}

/*
 * Walk one instance of dt in type-map order. by_bytes: *bytes is the budget, *elems
 * collects whole elements within it; otherwise *elems is the budget and *bytes collects
 * their size. Returns 1 when the instance was consumed whole, 0 when the budget ran out
 * inside it, -1 when dt's make-up is unknown.
 */
static int mpi_type_walk(MPI_Datatype dt, int by_bytes, MPI_Count *bytes, MPI_Count *elems)
{
    struct mpi_type *t = mpi_type_get(dt);
    if (t == NULL) return -1;
    if (t->predefined) {
        MPI_Count first, n = mpi_named_elements(dt, t, &first);
        MPI_Count have = by_bytes ? *bytes : *elems;
        MPI_Count need = by_bytes ? t->size : n;
        if (have >= need) {
            if (by_bytes)
                *bytes -= t->size, *elems += n;
            else
                *elems -= n, *bytes += t->size;
            return 1;
        }
        if (n == 2 && (by_bytes ? have >= first : have >= 1)) { /* the value of a pair */
            if (by_bytes)
                *bytes -= first, *elems += 1;
            else
                *elems -= 1, *bytes += first;
        }
        return 0;
    }
    struct mpi_env *e = mpi_env_of(dt);
    if (e == NULL) return -1;
    MPI_Count reps;
    MPI_Datatype c;
    for (int i = 0, pr; (pr = mpi_env_pieces(e, i, &c, &reps)) != 0; i++) {
        if (pr < 0) return -1;
        struct mpi_type *ct = mpi_type_get(c);
        MPI_Count k = mpi_type_elements1(c);
        if (ct == NULL || k < 0) return -1;
        /* whole instances at once, then one partial */
        MPI_Count whole = reps;
        if (by_bytes && ct->size > 0 && *bytes / ct->size < whole) whole = *bytes / ct->size;
        if (!by_bytes && k > 0 && *elems / k < whole) whole = *elems / k;
        if (by_bytes)
            *bytes -= whole * ct->size, *elems += whole * k;
        else
            *elems -= whole * k, *bytes += whole * ct->size;
        if (whole < reps && (ct->size > 0 && k > 0)) {
            int rc = mpi_type_walk(c, by_bytes, bytes, elems);
            if (rc <= 0) return rc;
            if (whole + 1 < reps) return 0;
        }
    }
    return 1;
}

int mpi_type_elements(MPI_Datatype dt, MPI_Count bytes, MPI_Count *count)
{
    struct mpi_type *t = mpi_type_get(dt);
    MPI_Count per = mpi_type_elements1(dt);
    if (t == NULL || per < 0) return -1;
    if (t->size == 0) {
        *count = 0;
        return 0;
    }
    MPI_Count n = bytes / t->size * per, left = bytes % t->size;
    if (left && mpi_type_walk(dt, 1, &left, &n) < 0) return -1;
    *count = left ? MPI_UNDEFINED : n; /* a piece of a basic element: undefined */
    return 0;
}

int mpi_type_elements_bytes(MPI_Datatype dt, MPI_Count elems, MPI_Count *bytes)
{
    struct mpi_type *t = mpi_type_get(dt);
    MPI_Count per = mpi_type_elements1(dt);
    if (t == NULL || per < 0) return -1;
    if (per == 0) {
        *bytes = 0;
        return elems ? -1 : 0;
    }
    MPI_Count b = elems / per * t->size, left = elems % per;
    if (left && mpi_type_walk(dt, 0, &b, &left) < 0) return -1;
    *bytes = b;
    return 0;
}

/* ---- distributed arrays (MPI_Type_create_darray, MPI 3.1 4.1.4) -----------------------
 * Built as the standard describes: one dimension at a time (the last first in C order,
 * the first first in Fortran order), each the elements of that dimension this process
 * owns (an hindexed type of its blocks over the previous dimension's type) resized to the
 * dimension's whole length, so the next dimension strides over full rows. The process
 * grid is row-major whatever the array order. */

/* One dimension: this process (coordinate r of p) owns, of gsize elements of `old`
 * (extent ext), the blocks a BLOCK / CYCLIC / NONE distribution with argument darg
 * gives it. */
static int darray_dim(int distrib, int darg, int gsize, int r, int p, MPI_Datatype old,
                      MPI_Aint ext, MPI_Datatype *out)
{
    int nblk = 0, *len = NULL;
    MPI_Aint *dis = NULL;
    if (distrib == MPI_DISTRIBUTE_NONE) {
        if (p != 1) return MPI_ERR_ARG;
        distrib = MPI_DISTRIBUTE_BLOCK;
        darg = gsize;
    }
    if (distrib == MPI_DISTRIBUTE_BLOCK) {
        if (darg == MPI_DISTRIBUTE_DFLT_DARG) darg = (gsize + p - 1) / p;
        if (darg <= 0 || (long)darg * p < gsize) return MPI_ERR_ARG;
        long first = (long)r * darg, n = gsize - first < darg ? gsize - first : darg;
        if ((len = malloc(sizeof *len)) == NULL || (dis = malloc(sizeof *dis)) == NULL) goto nomem;
        len[0] = n > 0 ? (int)n : 0;
        dis[0] = (MPI_Aint)(first < gsize ? first : 0) * ext;
        nblk = 1;
    } else if (distrib == MPI_DISTRIBUTE_CYCLIC) {
        if (darg == MPI_DISTRIBUTE_DFLT_DARG) darg = 1;
        if (darg <= 0) return MPI_ERR_ARG;
        long blocks = ((long)gsize + darg - 1) / darg;
        long mine = blocks > r ? (blocks - r + p - 1) / p : 0;
        len = malloc((size_t)(mine + 1) * sizeof *len);
        dis = malloc((size_t)(mine + 1) * sizeof *dis);
        if (len == NULL || dis == NULL) goto nomem;
        for (long b = r; b < blocks; b += p) {
            long first = b * darg, n = gsize - first < darg ? gsize - first : darg;
            len[nblk] = (int)n;
            dis[nblk++] = (MPI_Aint)first * ext;
        }
    } else {
        return MPI_ERR_ARG;
    }
    MPI_Datatype t;
    int rc = PMPI_Type_create_hindexed(nblk, len, dis, old, &t);
    if (rc == 0) {
        rc = PMPI_Type_create_resized(t, 0, (MPI_Aint)gsize * ext, out);
        PMPI_Type_free(&t);
    }
    free(len);
    free(dis);
    return rc;
nomem:
    free(len);
    free(dis);
    return MPI_ERR_NO_MEM;
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_create_darray";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    struct mpi_type *ot = mpi_type_get(oldtype);
    if (ot == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE);
    if (newtype == NULL || ndims <= 0 || size <= 0 || rank < 0 || rank >= size ||
        !array_of_gsizes || !array_of_distribs || !array_of_dargs || !array_of_psizes ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (array_of_gsizes[i] <= 0 || array_of_psizes[i] <= 0)
            return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
        prod *= array_of_psizes[i];
        if (prod > size) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    }
    if (prod != size) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    int *coord = malloc((size_t)ndims * sizeof *coord);
    if (coord == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    for (int i = ndims - 1, r = rank; i >= 0; i--) { /* row-major process grid */
        coord[i] = r % array_of_psizes[i];
        r /= array_of_psizes[i];
    }
    MPI_Datatype cur = oldtype;
    MPI_Aint ext = mpi_type_extent(ot);
    int rc = MPI_SUCCESS;
    for (int k = 0; k < ndims && rc == 0; k++) {
        int i = order == MPI_ORDER_C ? ndims - 1 - k : k;
        MPI_Datatype next;
        rc = darray_dim(array_of_distribs[i], array_of_dargs[i], array_of_gsizes[i], coord[i],
                        array_of_psizes[i], cur, ext, &next);
        if (cur != oldtype) PMPI_Type_free(&cur);
        if (rc == 0) {
            cur = next;
            ext *= array_of_gsizes[i];
        }
    }
    free(coord);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    *newtype = cur;
    /* envelope: size, rank, ndims, gsizes, distribs, dargs, psizes, order (MPI 3.1 4.1.13) */
    int *ints = malloc((size_t)(4 * ndims + 4) * sizeof *ints);
    if (ints) {
        ints[0] = size;
        ints[1] = rank;
        ints[2] = ndims;
        for (int d = 0; d < ndims; d++) {
            ints[3 + d] = array_of_gsizes[d];
            ints[3 + ndims + d] = array_of_distribs[d];
            ints[3 + 2 * ndims + d] = array_of_dargs[d];
            ints[3 + 3 * ndims + d] = array_of_psizes[d];
        }
        ints[3 + 4 * ndims] = order;
        mpi_type_env_set(cur, MPI_COMBINER_DARRAY, 4 * ndims + 4, ints, 0, NULL, 1, &oldtype);
        free(ints);
    }
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_create_darray)

/*
 * mpi_type_decode.c - decoding MPI datatypes: the envelope and contents every
 * constructor records (MPI_Type_get_envelope, MPI_Type_get_contents), and the count of
 * basic elements in a number of bytes of a type and back (behind MPI_Get_elements,
 * MPI_Get_elements_x and MPI_Status_set_elements).
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

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
    MPI_Datatype named;  /* an F90 combiner's named type (not in the envelope) */
};
static struct mpi_env **mpi_envs; /* by handle slot */
static MPI_Datatype *mpi_env_handles;
static int mpi_nenvs;

static void mpi_env_unref(struct mpi_env *e)
{
    if (e == NULL || --e->refs > 0) return;
    for (int i = 0; i < e->nt; i++) {
        struct mpi_type *t = mpi_type_get(e->types[i]);
        /* at MPI_Finalize (mpi_type_fini) every type goes anyway, and MPI_Type_free
         * would refuse: MPI is no longer initialized */
        if (t && !t->predefined && mpi_state() == MPI_SUCCESS) PMPI_Type_free(&e->types[i]);
    }
    free(e->ints);
    free(e->aints);
    free(e->types);
    free(e);
}

static struct mpi_env *mpi_env_of(MPI_Datatype h)
{
    int slot = mpi_handle_slot(h);
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

void mpi_type_env_set_f90(MPI_Datatype h, int combiner, int ni, const int *ints, MPI_Datatype named)
{
    mpi_type_env_set(h, combiner, ni, ints, 0, NULL, 0, NULL);
    struct mpi_env *e = mpi_env_of(h);
    if (e) e->named = named;
}

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
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
        if (i > 0) return 0;
        *child = e->named;
        *reps = 1;
        return 1;
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

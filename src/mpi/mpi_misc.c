/*
 * mpi_misc.c - small MPI 3.1 functions around the main objects: C/Fortran handle
 * conversions, statuses as Fortran integers, the MPI-1 datatype names kept for old
 * programs, MPI_Count queries, types by size and precision, MPI_Type_create_darray.
 * Decoding datatypes (envelopes, contents, basic elements) is in mpi_type_decode.c.
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
    if (status && status != MPI_STATUS_IGNORE && mpi_type_ok(datatype) &&
        mpi_type_elements(datatype, mpi_status_bytes(status), count) == 0)
        return MPI_SUCCESS;
    int rc = PMPI_Get_elements(status, datatype, &n);
    if (rc) return rc;
    struct mpi_type *t = mpi_type_ok(datatype);
    *count = n;
    if (n == MPI_UNDEFINED && t->basic_size > 0 && mpi_status_bytes(status) % t->basic_size == 0)
        *count = mpi_status_bytes(status) / t->basic_size;
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

/*
 * The types of MPI_Type_create_f90_*: the standard makes them predefined types whose
 * envelope is the F90 combiner with the (p, r) they were asked with, so each is a
 * duplicate of the matching named type carrying that envelope, made once per (combiner,
 * p, r) and handed out again for the same arguments (never freed, like a named type).
 */
struct mpi_f90 {
    int combiner, p, r;
    MPI_Datatype h;
};
static struct mpi_f90 *mpi_f90s;
static int mpi_nf90s;

static int mpi_f90_type(int combiner, int p, int r, int typeclass, int size, MPI_Datatype *out)
{
    for (int i = 0; i < mpi_nf90s; i++)
        if (mpi_f90s[i].combiner == combiner && mpi_f90s[i].p == p && mpi_f90s[i].r == r &&
            mpi_type_get(mpi_f90s[i].h)) {
            *out = mpi_f90s[i].h;
            return MPI_SUCCESS;
        }
    MPI_Datatype named, h;
    int rc = mpi_match(typeclass, size, &named);
    if (rc) return rc;
    struct mpi_f90 *t = realloc(mpi_f90s, (size_t)(mpi_nf90s + 1) * sizeof *t);
    if (t == NULL) return MPI_ERR_NO_MEM;
    mpi_f90s = t;
    if ((rc = mpi_type_dup_plain(named, &h))) return rc;
    mpi_type_get(h)->combiner = combiner;
    int ints[2] = {p, r};
    if (combiner == MPI_COMBINER_F90_INTEGER)
        mpi_type_env_set_f90(h, combiner, 1, &ints[1], named);
    else
        mpi_type_env_set_f90(h, combiner, 2, ints, named);
    mpi_f90s[mpi_nf90s++] = (struct mpi_f90){combiner, p, r, h};
    *out = h;
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_create_f90_integer";
    if (newtype == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    /* 10^r - 1 must fit: int8 holds r <= 2, int16 r <= 4, int32 r <= 9, int64 r <= 18. */
    int size = r <= 2 ? 1 : r <= 4 ? 2 : r <= 9 ? 4 : r <= 18 ? 8 : 0;
    return mpi_err(
        MPI_COMM_WORLD, fn,
        mpi_f90_type(MPI_COMBINER_F90_INTEGER, 0, r, MPI_TYPECLASS_INTEGER, size, newtype));
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
    return mpi_err(MPI_COMM_WORLD, fn,
                   mpi_f90_type(MPI_COMBINER_F90_REAL, p, r, MPI_TYPECLASS_REAL,
                                mpi_real_size(p, r), newtype));
}
MPI_ALIAS(Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_create_f90_complex";
    if (newtype == NULL || (p == MPI_UNDEFINED && r == MPI_UNDEFINED))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    return mpi_err(MPI_COMM_WORLD, fn,
                   mpi_f90_type(MPI_COMBINER_F90_COMPLEX, p, r, MPI_TYPECLASS_COMPLEX,
                                2 * mpi_real_size(p, r), newtype));
}
MPI_ALIAS(Type_create_f90_complex)

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

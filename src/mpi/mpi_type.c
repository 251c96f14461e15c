/*
 * mpi_type.c - MPI datatypes. Every datatype is kept flattened: the list of (offset,
 * length) byte blocks of one instance in type-map order, adjacent blocks merged, plus its
 * bounds. A type that is one block as long as its extent is "contiguous": messages of it
 * go straight from and to the user's buffer. Any other type is packed into a temporary
 * on send and unpacked from one on receive (first version; a vectored path that hands
 * the block list to the transport is a later improvement).
 */
#include <complex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "mpi/mpi_impl.h"

struct mpi_type **mpi_types;
int mpi_ntypes;
/* The generation of the last derived-type handle made: each new type takes the next. */
static int mpi_type_serial;

#define PAIR(T)                                                                                    \
    struct {                                                                                       \
        T v;                                                                                       \
        int i;                                                                                     \
    }
typedef PAIR(float) mpi_float_int;
typedef PAIR(double) mpi_double_int;
typedef PAIR(long) mpi_long_int;
typedef PAIR(int) mpi_2int;
typedef PAIR(short) mpi_short_int;
typedef PAIR(long double) mpi_long_double_int;
/* Fortran's MINLOC/MAXLOC pairs: value and index of the same type, one piece. */
typedef struct {
    float v, i;
} mpi_2real;
typedef struct {
    double v, i;
} mpi_2dp;
typedef struct {
    int v, i;
} mpi_2integer;

/* X(handle, C type, coll datatype or -1) for the one-piece predefined types. */
#define MPI_BASIC_TYPES(X)                                                                         \
    X(MPI_CHAR, char, TERN_INT8)                                                                   \
    X(MPI_SIGNED_CHAR, signed char, TERN_INT8)                                                     \
    X(MPI_UNSIGNED_CHAR, unsigned char, TERN_UINT8)                                                \
    X(MPI_BYTE, unsigned char, TERN_UINT8)                                                         \
    X(MPI_WCHAR, wchar_t, TERN_INT32)                                                              \
    X(MPI_SHORT, short, TERN_INT16)                                                                \
    X(MPI_UNSIGNED_SHORT, unsigned short, TERN_UINT16)                                             \
    X(MPI_INT, int, TERN_INT32)                                                                    \
    X(MPI_UNSIGNED, unsigned, TERN_UINT32)                                                         \
    X(MPI_LONG, long, TERN_INT64)                                                                  \
    X(MPI_UNSIGNED_LONG, unsigned long, TERN_UINT64)                                               \
    X(MPI_LONG_LONG_INT, long long, TERN_INT64)                                                    \
    X(MPI_UNSIGNED_LONG_LONG, unsigned long long, TERN_UINT64)                                     \
    X(MPI_FLOAT, float, TERN_FLOAT)                                                                \
    X(MPI_DOUBLE, double, TERN_DOUBLE)                                                             \
    X(MPI_LONG_DOUBLE, long double, -1)                                                            \
    X(MPI_C_BOOL, _Bool, TERN_UINT8)                                                               \
    X(MPI_INT8_T, int8_t, TERN_INT8)                                                               \
    X(MPI_INT16_T, int16_t, TERN_INT16)                                                            \
    X(MPI_INT32_T, int32_t, TERN_INT32)                                                            \
    X(MPI_INT64_T, int64_t, TERN_INT64)                                                            \
    X(MPI_UINT8_T, uint8_t, TERN_UINT8)                                                            \
    X(MPI_UINT16_T, uint16_t, TERN_UINT16)                                                         \
    X(MPI_UINT32_T, uint32_t, TERN_UINT32)                                                         \
    X(MPI_UINT64_T, uint64_t, TERN_UINT64)                                                         \
    X(MPI_C_FLOAT_COMPLEX, float _Complex, -1)                                                     \
    X(MPI_C_DOUBLE_COMPLEX, double _Complex, -1)                                                   \
    X(MPI_C_LONG_DOUBLE_COMPLEX, long double _Complex, -1)                                         \
    X(MPI_AINT, MPI_Aint, TERN_INT64)                                                              \
    X(MPI_OFFSET, MPI_Offset, TERN_INT64)                                                          \
    X(MPI_COUNT, MPI_Count, TERN_INT64)                                                            \
    X(MPI_PACKED, unsigned char, -1)                                                               \
    X(MPI_CXX_BOOL, _Bool, TERN_UINT8)                                                             \
    X(MPI_CXX_FLOAT_COMPLEX, float _Complex, -1)                                                   \
    X(MPI_CXX_DOUBLE_COMPLEX, double _Complex, -1)                                                 \
    X(MPI_CXX_LONG_DOUBLE_COMPLEX, long double _Complex, -1)                                       \
    X(MPI_CHARACTER, char, TERN_INT8)                                                              \
    X(MPI_LOGICAL, int, TERN_INT32)                                                                \
    X(MPI_INTEGER, int, TERN_INT32)                                                                \
    X(MPI_REAL, float, TERN_FLOAT)                                                                 \
    X(MPI_DOUBLE_PRECISION, double, TERN_DOUBLE)                                                   \
    X(MPI_COMPLEX, float _Complex, -1)                                                             \
    X(MPI_DOUBLE_COMPLEX, double _Complex, -1)                                                     \
    X(MPI_INTEGER1, int8_t, TERN_INT8)                                                             \
    X(MPI_INTEGER2, int16_t, TERN_INT16)                                                           \
    X(MPI_INTEGER4, int32_t, TERN_INT32)                                                           \
    X(MPI_INTEGER8, int64_t, TERN_INT64)                                                           \
    X(MPI_REAL4, float, TERN_FLOAT)                                                                \
    X(MPI_REAL8, double, TERN_DOUBLE)                                                              \
    X(MPI_COMPLEX8, float _Complex, -1)                                                            \
    X(MPI_COMPLEX16, double _Complex, -1)                                                          \
    X(MPI_2REAL, mpi_2real, -1)                                                                    \
    X(MPI_2DOUBLE_PRECISION, mpi_2dp, -1)                                                          \
    X(MPI_2INTEGER, mpi_2integer, -1)

/* X(handle, struct, value type, coll datatype or -1) for the value/index pairs. */
#define MPI_PAIR_TYPES(X)                                                                          \
    X(MPI_FLOAT_INT, mpi_float_int, float, TERN_FLOAT_INT)                                         \
    X(MPI_DOUBLE_INT, mpi_double_int, double, TERN_DOUBLE_INT)                                     \
    X(MPI_LONG_INT, mpi_long_int, long, TERN_LONG_INT)                                             \
    X(MPI_2INT, mpi_2int, int, TERN_INT_INT)                                                       \
    X(MPI_SHORT_INT, mpi_short_int, short, -1)                                                     \
    X(MPI_LONG_DOUBLE_INT, mpi_long_double_int, long double, -1)

/* Real bytes of long double (x86: 10 of 16); the rest is padding, but MPI counts the
 * whole sizeof, as MPICH and Open MPI do. */

static int mpi_types_grow(void)
{
    int n = mpi_ntypes ? mpi_ntypes * 2 : 64;
    struct mpi_type **t = realloc(mpi_types, (size_t)n * sizeof *t);
    if (t == NULL) return -1;
    memset(t + mpi_ntypes, 0, (size_t)(n - mpi_ntypes) * sizeof *t);
    mpi_types = t;
    mpi_ntypes = n;
    return 0;
}

static struct mpi_type *mpi_type_alloc(int nblk)
{
    struct mpi_type *t = calloc(1, sizeof *t);
    if (t == NULL) return NULL;
    t->blk = nblk ? malloc((size_t)nblk * sizeof *t->blk) : NULL;
    if (nblk && t->blk == NULL) {
        free(t);
        return NULL;
    }
    t->refs = 1;
    t->tdt = -1;
    return t;
}

static void mpi_type_finish(struct mpi_type *t)
{
    t->contig = t->nblk == 0 || (t->nblk == 1 && t->blk[0].len == t->ub - t->lb);
    t->contig_off = t->nblk ? t->blk[0].off : 0;
    if (t->nblk == 0) t->true_lb = t->true_ub = 0;
    t->lay = (struct core_layout){t->blk, t->nblk, t->ub - t->lb, (size_t)t->size};
}

static int mpi_type_predef(MPI_Datatype h, const char *name, MPI_Aint size, MPI_Aint extent,
                           int nblk, const struct mpi_blk *blk, int tdt, MPI_Aint basic, int align)
{
    struct mpi_type *t = mpi_type_alloc(nblk);
    if (t == NULL) return -1;
    t->predefined = t->committed = 1;
    t->handle = h;
    t->size = size;
    t->lb = 0;
    t->ub = extent;
    t->nblk = nblk;
    memcpy(t->blk, blk, (size_t)nblk * sizeof *blk);
    t->true_lb = 0;
    t->true_ub = blk[nblk - 1].off + blk[nblk - 1].len;
    t->tdt = tdt;
    t->basic_size = basic;
    t->basic = h;
    t->combiner = MPI_COMBINER_NAMED;
    t->align = align;
    snprintf(t->name, sizeof t->name, "%s", name);
    mpi_type_finish(t);
    mpi_types[mpi_handle_slot(h)] = t;
    return 0;
}

int mpi_type_init(void)
{
    while (mpi_ntypes <= MPI_TYPE_USER_SLOT0)
        if (mpi_types_grow()) return -1;
    int rc = 0;
#define MPI_DEF_BASIC(h, T, tdt)                                                                   \
    {                                                                                              \
        struct mpi_blk b[1] = {{0, sizeof(T)}};                                                    \
        rc |= mpi_type_predef(h, #h, sizeof(T), sizeof(T), 1, b, tdt, sizeof(T), _Alignof(T));     \
    }
    MPI_BASIC_TYPES(MPI_DEF_BASIC)
#define MPI_DEF_PAIR(h, S, V, tdt)                                                                 \
    {                                                                                              \
        struct mpi_blk b[2] = {{0, sizeof(V)}, {offsetof(S, i), sizeof(int)}};                     \
        int n = 2;                                                                                 \
        if (b[0].len == b[1].off) b[0].len += b[1].len, n = 1;                                     \
        rc |= mpi_type_predef(h, #h, sizeof(V) + sizeof(int), sizeof(S), n, b, tdt,                \
                              sizeof(V) == sizeof(int) ? (MPI_Aint)sizeof(int) : 0, _Alignof(S));  \
    }
    MPI_PAIR_TYPES(MPI_DEF_PAIR)
    if (rc == 0) {
        snprintf(mpi_types[mpi_handle_slot(MPI_LONG_LONG_INT)]->name, MPI_MAX_OBJECT_NAME,
                 "MPI_LONG_LONG_INT");
        /* MPI_C_FLOAT_COMPLEX is the synonym, MPI_C_COMPLEX the name (MPI 3.1 3.2.2) */
        snprintf(mpi_types[mpi_handle_slot(MPI_C_COMPLEX)]->name, MPI_MAX_OBJECT_NAME,
                 "MPI_C_COMPLEX");
    }
    return rc;
}

static void mpi_type_destroy(struct mpi_type *t)
{
    free(t->blk);
    free(t);
}

void mpi_type_fini(void)
{
    mpi_type_env_fini();
    for (int i = 0; i < mpi_ntypes; i++)
        if (mpi_types[i]) mpi_type_destroy(mpi_types[i]);
    free(mpi_types);
    mpi_types = NULL;
    mpi_ntypes = 0;
}

void mpi_type_ref(struct mpi_type *t)
{
    t->refs++;
}

void mpi_type_unref(struct mpi_type *t)
{
    if (--t->refs == 0) {
        int slot = mpi_handle_slot(t->handle);
        if (mpi_types[slot] == t) mpi_types[slot] = NULL;
        mpi_type_destroy(t);
    }
}

/* ---- packing --------------------------------------------------------------------- */

/* Addresses are computed as integers: with MPI_BOTTOM (NULL) and absolute displacements
 * the base is NULL and only base + offset is a real address. */
static inline char *mpi_at(const void *base, MPI_Aint off)
{
    return (char *)((uintptr_t)base + (uintptr_t)off);
}

void mpi_pack(const void *in, MPI_Count count, const struct mpi_type *t, void *out)
{
    char *dst = out;
    MPI_Aint ext = mpi_type_extent(t);
    for (MPI_Count i = 0; i < count; i++)
        for (int b = 0; b < t->nblk; b++) {
            memcpy(dst, mpi_at(in, (MPI_Aint)i * ext + t->blk[b].off), (size_t)t->blk[b].len);
            dst += t->blk[b].len;
        }
}

void mpi_unpack(const void *in, size_t bytes, void *out, MPI_Count count, const struct mpi_type *t)
{
    const char *src = in;
    MPI_Aint ext = mpi_type_extent(t);
    for (MPI_Count i = 0; i < count && bytes > 0; i++)
        for (int b = 0; b < t->nblk && bytes > 0; b++) {
            size_t n = (size_t)t->blk[b].len < bytes ? (size_t)t->blk[b].len : bytes;
            memcpy(mpi_at(out, (MPI_Aint)i * ext + t->blk[b].off), src, n);
            src += n;
            bytes -= n;
        }
}

/* ---- constructors ------------------------------------------------------------------ */

/* Block list builder with merging of adjacent pieces. */
struct mpi_bl {
    struct mpi_blk *b;
    int n, cap;
    int err;
};

static void mpi_bl_add(struct mpi_bl *l, MPI_Aint off, MPI_Aint len)
{
    if (len == 0) return;
    if (l->n && l->b[l->n - 1].off + l->b[l->n - 1].len == off) {
        l->b[l->n - 1].len += len;
        return;
    }
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 8;
        struct mpi_blk *nb = realloc(l->b, (size_t)cap * sizeof *nb);
        if (nb == NULL) {
            l->err = 1;
            return;
        }
        l->b = nb;
        l->cap = cap;
    }
    l->b[l->n++] = (struct mpi_blk){off, len};
}

/* One piece of a general constructor: `bl` instances of `ct` starting at byte `disp`. */
struct mpi_piece {
    MPI_Aint disp;
    MPI_Count bl;
    struct mpi_type *ct;
};

/* Make a datatype from pieces (every constructor reduces to this). */
static int mpi_type_build(int npieces, const struct mpi_piece *p, int combiner, MPI_Datatype *out)
{
    struct mpi_bl l = {0};
    MPI_Aint lb = 0, ub = 0, tlb = 0, tub = 0;
    int any = 0, anyt = 0;
    MPI_Count size = 0;
    MPI_Aint basic = -1;
    MPI_Datatype bt = MPI_DATATYPE_NULL; /* the one predefined type, if only one (for RMA) */
    int bt_any = 0, align = 1;
    for (int i = 0; i < npieces; i++) {
        const struct mpi_type *c = p[i].ct;
        MPI_Aint ext = mpi_type_extent(c);
        if (p[i].bl == 0) continue;
        if (c->align > align) align = c->align;
        /* first and last instance (a negative extent puts the last one lowest) */
        MPI_Aint last = p[i].disp + (MPI_Aint)(p[i].bl - 1) * ext;
        MPI_Aint plb = (ext < 0 ? last : p[i].disp) + c->lb;
        MPI_Aint pub = (ext < 0 ? p[i].disp : last) + c->ub;
        if (!any || plb < lb) lb = plb;
        if (!any || pub > ub) ub = pub;
        any = 1;
        size += p[i].bl * c->size;
        if (c->size > 0) {
            MPI_Aint ptlb = (ext < 0 ? last : p[i].disp) + c->true_lb;
            MPI_Aint ptub = (ext < 0 ? p[i].disp : last) + c->true_ub;
            if (!anyt || ptlb < tlb) tlb = ptlb;
            if (!anyt || ptub > tub) tub = ptub;
            anyt = 1;
            if (basic == -1)
                basic = c->basic_size;
            else if (basic != c->basic_size)
                basic = 0;
            if (!bt_any)
                bt = c->basic;
            else if (bt != c->basic)
                bt = MPI_DATATYPE_NULL;
            bt_any = 1;
        }
        if (c->contig) {
            mpi_bl_add(&l, p[i].disp + c->contig_off, (MPI_Aint)p[i].bl * c->size);
        } else {
            for (MPI_Count j = 0; j < p[i].bl; j++)
                for (int b = 0; b < c->nblk; b++)
                    mpi_bl_add(&l, p[i].disp + (MPI_Aint)j * ext + c->blk[b].off, c->blk[b].len);
        }
    }
    struct mpi_type *t = mpi_type_alloc(0);
    if (l.err || t == NULL) {
        free(l.b);
        free(t);
        return MPI_ERR_NO_MEM;
    }
    t->blk = l.b;
    t->nblk = l.n;
    t->size = size;
    t->lb = lb;
    t->ub = ub;
    t->true_lb = tlb;
    t->true_ub = tub;
    t->basic_size = basic < 0 ? 0 : basic;
    t->basic = bt;
    t->combiner = combiner;
    t->align = align;
    /* A struct's extent is padded to the strictest alignment of its basic types, as the C
     * compiler pads the struct it describes (MPI 3.1 4.1.6; MPICH and Open MPI do too). */
    MPI_Aint ext = ub - lb;
    if (combiner == MPI_COMBINER_STRUCT && any && ext % align) t->ub += align - ext % align;
    mpi_type_finish(t);
    int h = -1;
    for (int i = MPI_TYPE_USER_SLOT0; i < mpi_ntypes; i++)
        if (mpi_types[i] == NULL) {
            h = i;
            break;
        }
    if (h < 0) {
        h = mpi_ntypes;
        if (h > MPI_HANDLE_SLOT_MASK || mpi_types_grow()) {
            mpi_type_destroy(t);
            return MPI_ERR_NO_MEM;
        }
    }
    mpi_types[h] = t;
    mpi_type_serial = mpi_type_serial % MPI_HANDLE_GEN_MASK + 1; /* 1 .. 511 */
    t->handle = h | (mpi_type_serial << MPI_HANDLE_SLOT_BITS);
    *out = t->handle;
    return MPI_SUCCESS;
}

#define TYPE_CHECK(fn, cnt, old, out)                                                              \
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);                            \
    if ((cnt) < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_COUNT);                              \
    struct mpi_type *ot = mpi_type_get(old);                                                       \
    if (ot == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE);                              \
    if ((out) == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG)

/* count blocks of blocklen instances of ot at byte displacements disp(i). */
static int mpi_type_blocks(const char *fn, int count, const int *bls, int bl, const MPI_Aint *hd,
                           const int *id, MPI_Aint stride, struct mpi_type *ot, int combiner,
                           MPI_Datatype *out)
{
    struct mpi_piece *p = malloc((size_t)(count ? count : 1) * sizeof *p);
    if (p == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    MPI_Aint ext = mpi_type_extent(ot);
    for (int i = 0; i < count; i++) {
        int b = bls ? bls[i] : bl;
        if (b < 0) {
            free(p);
            return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
        }
        MPI_Aint d = hd ? hd[i] : id ? (MPI_Aint)id[i] * ext : (MPI_Aint)i * stride;
        p[i] = (struct mpi_piece){d, b, ot};
    }
    int rc = mpi_type_build(count, p, combiner, out);
    free(p);
    return mpi_err(MPI_COMM_WORLD, fn, rc);
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_contiguous", count, oldtype, newtype);
    struct mpi_piece p = {0, count, ot};
    int rc = mpi_type_build(1, &p, MPI_COMBINER_CONTIGUOUS, newtype);
    if (rc == 0)
        mpi_type_env_set(*newtype, MPI_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &oldtype);
    return mpi_err(MPI_COMM_WORLD, "MPI_Type_contiguous", rc);
}
MPI_ALIAS(Type_contiguous)

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_vector", count, oldtype, newtype);
    int rc =
        mpi_type_blocks("MPI_Type_vector", count, NULL, blocklength, NULL, NULL,
                        (MPI_Aint)stride * mpi_type_extent(ot), ot, MPI_COMBINER_VECTOR, newtype);
    int ints[3] = {count, blocklength, stride};
    if (rc == 0) mpi_type_env_set(*newtype, MPI_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &oldtype);
    return rc;
}
MPI_ALIAS(Type_vector)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_create_hvector", count, oldtype, newtype);
    int rc = mpi_type_blocks("MPI_Type_create_hvector", count, NULL, blocklength, NULL, NULL,
                             stride, ot, MPI_COMBINER_HVECTOR, newtype);
    int ints[2] = {count, blocklength};
    if (rc == 0) mpi_type_env_set(*newtype, MPI_COMBINER_HVECTOR, 2, ints, 1, &stride, 1, &oldtype);
    return rc;
}
MPI_ALIAS(Type_create_hvector)

int PMPI_Type_indexed(int count, const int blocklengths[], const int displacements[],
                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_indexed", count, oldtype, newtype);
    if (count > 0 && (blocklengths == NULL || displacements == NULL))
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_indexed", MPI_ERR_ARG);
    int rc = mpi_type_blocks("MPI_Type_indexed", count, blocklengths, 0, NULL, displacements, 0, ot,
                             MPI_COMBINER_INDEXED, newtype);
    if (rc == 0)
        mpi_type_env_list(*newtype, MPI_COMBINER_INDEXED, count, blocklengths, -1, displacements,
                          NULL, oldtype);
    return rc;
}
MPI_ALIAS(Type_indexed)

int PMPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[],
                              MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_create_hindexed", count, oldtype, newtype);
    if (count > 0 && (blocklengths == NULL || displacements == NULL))
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_create_hindexed", MPI_ERR_ARG);
    int rc = mpi_type_blocks("MPI_Type_create_hindexed", count, blocklengths, 0, displacements,
                             NULL, 0, ot, MPI_COMBINER_HINDEXED, newtype);
    if (rc == 0)
        mpi_type_env_list(*newtype, MPI_COMBINER_HINDEXED, count, blocklengths, -1, NULL,
                          displacements, oldtype);
    return rc;
}
MPI_ALIAS(Type_create_hindexed)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_create_indexed_block", count, oldtype, newtype);
    if (count > 0 && displacements == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_create_indexed_block", MPI_ERR_ARG);
    int rc = mpi_type_blocks("MPI_Type_create_indexed_block", count, NULL, blocklength, NULL,
                             displacements, 0, ot, MPI_COMBINER_INDEXED_BLOCK, newtype);
    if (rc == 0)
        mpi_type_env_list(*newtype, MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength,
                          displacements, NULL, oldtype);
    return rc;
}
MPI_ALIAS(Type_create_indexed_block)

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_create_hindexed_block", count, oldtype, newtype);
    if (count > 0 && displacements == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_create_hindexed_block", MPI_ERR_ARG);
    int rc = mpi_type_blocks("MPI_Type_create_hindexed_block", count, NULL, blocklength,
                             displacements, NULL, 0, ot, MPI_COMBINER_HINDEXED_BLOCK, newtype);
    if (rc == 0)
        mpi_type_env_list(*newtype, MPI_COMBINER_HINDEXED_BLOCK, count, NULL, blocklength, NULL,
                          displacements, oldtype);
    return rc;
}
MPI_ALIAS(Type_create_hindexed_block)

int PMPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                            const MPI_Datatype types[], MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_create_struct";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (count < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_COUNT);
    if (newtype == NULL || (count > 0 && (!blocklengths || !displacements || !types)))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_piece *p = malloc((size_t)(count ? count : 1) * sizeof *p);
    if (p == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    for (int i = 0; i < count; i++) {
        struct mpi_type *t = mpi_type_get(types[i]);
        int bad = t == NULL ? MPI_ERR_TYPE : blocklengths[i] < 0 ? MPI_ERR_ARG : 0;
        if (bad) {
            free(p);
            return mpi_err(MPI_COMM_WORLD, fn, bad);
        }
        p[i] = (struct mpi_piece){displacements[i], blocklengths[i], t};
    }
    int rc = mpi_type_build(count, p, MPI_COMBINER_STRUCT, newtype);
    free(p);
    if (rc == 0) mpi_type_env_struct(*newtype, count, blocklengths, displacements, types);
    return mpi_err(MPI_COMM_WORLD, fn, rc);
}
MPI_ALIAS(Type_create_struct)

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_create_resized", 0, oldtype, newtype);
    struct mpi_piece p = {0, 1, ot};
    int rc = mpi_type_build(1, &p, MPI_COMBINER_RESIZED, newtype);
    if (rc) return mpi_err(MPI_COMM_WORLD, "MPI_Type_create_resized", rc);
    struct mpi_type *t = mpi_type_get(*newtype);
    t->lb = lb;
    t->ub = lb + extent;
    mpi_type_finish(t);
    MPI_Aint a[2] = {lb, extent};
    mpi_type_env_set(*newtype, MPI_COMBINER_RESIZED, 0, NULL, 2, a, 1, &oldtype);
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_create_resized)

/* A new handle for the same type map, without attributes or envelope (MPI_Type_dup, and
 * the private copies an envelope keeps of the types it names). */
int mpi_type_dup_plain(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    struct mpi_type *ot = mpi_type_get(oldtype);
    if (ot == NULL) return MPI_ERR_TYPE;
    struct mpi_piece p = {0, 1, ot};
    int rc = mpi_type_build(1, &p, MPI_COMBINER_DUP, newtype);
    if (rc) return rc;
    struct mpi_type *t = mpi_type_get(*newtype);
    t->lb = ot->lb;
    t->ub = ot->ub;
    t->committed = ot->committed;
    t->tdt = ot->tdt;
    mpi_type_finish(t);
    return MPI_SUCCESS;
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    TYPE_CHECK("MPI_Type_dup", 0, oldtype, newtype);
    (void)ot;
    int rc = mpi_type_dup_plain(oldtype, newtype);
    if (rc) return mpi_err(MPI_COMM_WORLD, "MPI_Type_dup", rc);
    mpi_type_env_set(*newtype, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, &oldtype);
    /* Attributes follow their copy callbacks (mpi_attr.c). */
    rc = mpi_attr_copy_all(MPI_ATTR_TYPE, oldtype, *newtype);
    if (rc) { /* a copy callback failed: no new datatype (as MPICH) */
        PMPI_Type_free(newtype);
        *newtype = MPI_DATATYPE_NULL;
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_dup", rc);
    }
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_dup)

int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                              const int starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Type_create_subarray";
    TYPE_CHECK(fn, ndims, oldtype, newtype);
    if (ndims < 1 || !sizes || !subsizes || !starts ||
        (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    for (int i = 0; i < ndims; i++)
        if (sizes[i] < 1 || subsizes[i] < 1 || starts[i] < 0 || starts[i] + subsizes[i] > sizes[i])
            return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    /* Build from the fastest-varying dimension outwards as nested hvectors, then place the
     * start and resize to the whole array. */
    MPI_Aint ext = mpi_type_extent(ot), stride = ext, disp = 0;
    MPI_Datatype cur = oldtype, next;
    int rc = 0;
    for (int k = 0; k < ndims; k++) {
        int d = order == MPI_ORDER_C ? ndims - 1 - k : k;
        struct mpi_piece *p = malloc((size_t)subsizes[d] * sizeof *p);
        if (p == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
        for (int i = 0; i < subsizes[d]; i++)
            p[i] = (struct mpi_piece){(MPI_Aint)i * stride, 1, mpi_type_get(cur)};
        rc = mpi_type_build(subsizes[d], p, MPI_COMBINER_SUBARRAY, &next);
        free(p);
        if (cur != oldtype) mpi_type_unref(mpi_type_get(cur));
        if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
        cur = next;
        disp += (MPI_Aint)starts[d] * stride;
        stride *= sizes[d];
    }
    struct mpi_piece p = {disp, 1, mpi_type_get(cur)};
    rc = mpi_type_build(1, &p, MPI_COMBINER_SUBARRAY, newtype);
    mpi_type_unref(mpi_type_get(cur));
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    struct mpi_type *t = mpi_type_get(*newtype);
    t->lb = 0;
    t->ub = stride;
    mpi_type_finish(t);
    mpi_type_env_subarray(*newtype, ndims, sizes, subsizes, starts, order, oldtype);
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_create_subarray)

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    CORE_CS_SCOPE();
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, "MPI_Type_commit", MPI_ERR_OTHER);
    struct mpi_type *t = datatype ? mpi_type_get(*datatype) : NULL;
    if (t == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Type_commit", MPI_ERR_TYPE);
    t->committed = 1;
    t->lay = (struct core_layout){t->blk, t->nblk, t->ub - t->lb, (size_t)t->size};
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    CORE_CS_SCOPE();
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, "MPI_Type_free", MPI_ERR_OTHER);
    struct mpi_type *t = datatype ? mpi_type_get(*datatype) : NULL;
    /* The types of MPI_Type_create_f90_* count as predefined: they are not freed. */
    if (t == NULL || t->predefined || t->combiner == MPI_COMBINER_F90_REAL ||
        t->combiner == MPI_COMBINER_F90_COMPLEX || t->combiner == MPI_COMBINER_F90_INTEGER)
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_free", MPI_ERR_TYPE);
    mpi_attr_free_all(MPI_ATTR_TYPE, t->handle); /* delete callbacks of its attributes */
    mpi_type_env_drop(t->handle);
    /* Pending operations keep their reference; the handle goes now. */
    mpi_types[mpi_handle_slot(t->handle)] = NULL;
    if (--t->refs == 0) mpi_type_destroy(t);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_free)

/* ---- queries ------------------------------------------------------------------------- */

#define TYPE_QUERY(fn, dt, out)                                                                    \
    struct mpi_type *t = mpi_type_get(dt);                                                         \
    if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TYPE);                               \
    if ((out) == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG)

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    CORE_CS_SCOPE();
    TYPE_QUERY("MPI_Type_size", datatype, size);
    *size = t->size > INT32_MAX ? MPI_UNDEFINED : (int)t->size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_size)

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    CORE_CS_SCOPE();
    TYPE_QUERY("MPI_Type_size_c", datatype, size);
    *size = t->size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_size_c)

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    CORE_CS_SCOPE();
    return PMPI_Type_size_c(datatype, size);
}
MPI_ALIAS(Type_size_x)

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    CORE_CS_SCOPE();
    TYPE_QUERY("MPI_Type_get_extent", datatype, lb);
    if (extent == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Type_get_extent", MPI_ERR_ARG);
    *lb = t->lb;
    *extent = t->ub - t->lb;
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_get_extent)

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint *true_lb, MPI_Aint *true_extent)
{
    CORE_CS_SCOPE();
    TYPE_QUERY("MPI_Type_get_true_extent", datatype, true_lb);
    if (true_extent == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Type_get_true_extent", MPI_ERR_ARG);
    *true_lb = t->true_lb;
    *true_extent = t->true_ub - t->true_lb;
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_get_true_extent)

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    CORE_CS_SCOPE();
    TYPE_QUERY("MPI_Type_get_name", datatype, type_name);
    if (resultlen == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Type_get_name", MPI_ERR_ARG);
    snprintf(type_name, MPI_MAX_OBJECT_NAME, "%s", t->name);
    *resultlen = (int)strlen(type_name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_get_name)

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    CORE_CS_SCOPE();
    TYPE_QUERY("MPI_Type_set_name", datatype, type_name);
    snprintf(t->name, sizeof t->name, "%s", type_name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Type_set_name)

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    CORE_CS_SCOPE();
    if (address == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Get_address", MPI_ERR_ARG);
    *address = (MPI_Aint)(intptr_t)location;
    return MPI_SUCCESS;
}
MPI_ALIAS(Get_address)

int PMPI_Address(void *location, MPI_Aint *address)
{
    CORE_CS_SCOPE();
    return PMPI_Get_address(location, address);
}
MPI_ALIAS(Address)

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    CORE_CS_SCOPE();
    return base + disp;
}
MPI_ALIAS(Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    CORE_CS_SCOPE();
    return addr1 - addr2;
}
MPI_ALIAS(Aint_diff)

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Pack";
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    if (mpi_comm_get(comm) == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (incount < 0) return mpi_err(comm, fn, MPI_ERR_COUNT);
    struct mpi_type *t = mpi_type_ok(datatype);
    if (t == NULL) return mpi_err(comm, fn, MPI_ERR_TYPE);
    if (position == NULL || *position < 0 || outsize < 0) return mpi_err(comm, fn, MPI_ERR_ARG);
    MPI_Count n = (MPI_Count)incount * t->size;
    if (*position + n > outsize) return mpi_err(comm, fn, MPI_ERR_TRUNCATE);
    if (n && (outbuf == NULL)) return mpi_err(comm, fn, MPI_ERR_BUFFER);
    mpi_pack(inbuf, incount, t, (char *)outbuf + *position);
    *position += (int)n;
    return MPI_SUCCESS;
}
MPI_ALIAS(Pack)

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Unpack";
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    if (mpi_comm_get(comm) == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (outcount < 0) return mpi_err(comm, fn, MPI_ERR_COUNT);
    struct mpi_type *t = mpi_type_ok(datatype);
    if (t == NULL) return mpi_err(comm, fn, MPI_ERR_TYPE);
    if (position == NULL || *position < 0 || insize < 0) return mpi_err(comm, fn, MPI_ERR_ARG);
    MPI_Count n = (MPI_Count)outcount * t->size;
    if (*position + n > insize) return mpi_err(comm, fn, MPI_ERR_TRUNCATE);
    if (n && inbuf == NULL) return mpi_err(comm, fn, MPI_ERR_BUFFER);
    mpi_unpack((const char *)inbuf + *position, (size_t)n, outbuf, outcount, t);
    *position += (int)n;
    return MPI_SUCCESS;
}
MPI_ALIAS(Unpack)

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Pack_size";
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    if (mpi_comm_get(comm) == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (incount < 0) return mpi_err(comm, fn, MPI_ERR_COUNT);
    struct mpi_type *t = mpi_type_ok(datatype);
    if (t == NULL) return mpi_err(comm, fn, MPI_ERR_TYPE);
    if (size == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    MPI_Count n = (MPI_Count)incount * t->size;
    if (n > INT32_MAX) return mpi_err(comm, fn, MPI_ERR_COUNT);
    *size = (int)n;
    return MPI_SUCCESS;
}
MPI_ALIAS(Pack_size)

/*
 * mpi_pack_ext.c - MPI_Pack_external, MPI_Unpack_external, MPI_Pack_external_size: the
 * "external32" representation (MPI 3.1 13.5.2): every basic element big-endian at the
 * standard's fixed size (MPI_LONG 4 bytes, MPI_WCHAR 2, MPI_LONG_DOUBLE 16 as IEEE
 * binary128, ...), no padding.
 *
 * The data is first packed natively (mpi_pack: the type map's bytes end to end), then
 * each element is converted in place order. The element sequence of a datatype comes
 * from its basic type when it has one kind only, else from its envelope (MPI_Type_get_
 * contents), walked down to the predefined types.
 */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

enum { EK_INT, EK_UINT, EK_FLOAT, EK_LDOUBLE };

/* One predefined element kind: its external size and kind; complex types are two. */
struct ext_basic {
    MPI_Datatype dt;
    unsigned char esize, kind, parts;
};

static const struct ext_basic ext_table[] = {
    {MPI_CHAR, 1, EK_INT, 1},
    {MPI_SIGNED_CHAR, 1, EK_INT, 1},
    {MPI_UNSIGNED_CHAR, 1, EK_UINT, 1},
    {MPI_BYTE, 1, EK_UINT, 1},
    {MPI_PACKED, 1, EK_UINT, 1},
    {MPI_C_BOOL, 1, EK_UINT, 1},
    {MPI_CXX_BOOL, 1, EK_UINT, 1},
    {MPI_WCHAR, 2, EK_UINT, 1},
    {MPI_SHORT, 2, EK_INT, 1},
    {MPI_UNSIGNED_SHORT, 2, EK_UINT, 1},
    {MPI_INT, 4, EK_INT, 1},
    {MPI_UNSIGNED, 4, EK_UINT, 1},
    {MPI_LONG, 4, EK_INT, 1},
    {MPI_UNSIGNED_LONG, 4, EK_UINT, 1},
    {MPI_LONG_LONG_INT, 8, EK_INT, 1},
    {MPI_UNSIGNED_LONG_LONG, 8, EK_UINT, 1},
    {MPI_INT8_T, 1, EK_INT, 1},
    {MPI_INT16_T, 2, EK_INT, 1},
    {MPI_INT32_T, 4, EK_INT, 1},
    {MPI_INT64_T, 8, EK_INT, 1},
    {MPI_UINT8_T, 1, EK_UINT, 1},
    {MPI_UINT16_T, 2, EK_UINT, 1},
    {MPI_UINT32_T, 4, EK_UINT, 1},
    {MPI_UINT64_T, 8, EK_UINT, 1},
    {MPI_AINT, 8, EK_INT, 1},
    {MPI_OFFSET, 8, EK_INT, 1},
    {MPI_COUNT, 8, EK_INT, 1},
    {MPI_FLOAT, 4, EK_FLOAT, 1},
    {MPI_DOUBLE, 8, EK_FLOAT, 1},
    {MPI_LONG_DOUBLE, 16, EK_LDOUBLE, 1},
    {MPI_C_FLOAT_COMPLEX, 4, EK_FLOAT, 2},
    {MPI_C_DOUBLE_COMPLEX, 8, EK_FLOAT, 2},
    {MPI_C_LONG_DOUBLE_COMPLEX, 16, EK_LDOUBLE, 2},
    {MPI_CXX_FLOAT_COMPLEX, 4, EK_FLOAT, 2},
    {MPI_CXX_DOUBLE_COMPLEX, 8, EK_FLOAT, 2},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, 16, EK_LDOUBLE, 2},
    {MPI_CHARACTER, 1, EK_UINT, 1},
    {MPI_LOGICAL, 4, EK_INT, 1},
    {MPI_INTEGER, 4, EK_INT, 1},
    {MPI_REAL, 4, EK_FLOAT, 1},
    {MPI_DOUBLE_PRECISION, 8, EK_FLOAT, 1},
    {MPI_COMPLEX, 4, EK_FLOAT, 2},
    {MPI_DOUBLE_COMPLEX, 8, EK_FLOAT, 2},
    {MPI_INTEGER1, 1, EK_INT, 1},
    {MPI_INTEGER2, 2, EK_INT, 1},
    {MPI_INTEGER4, 4, EK_INT, 1},
    {MPI_INTEGER8, 8, EK_INT, 1},
    {MPI_REAL4, 4, EK_FLOAT, 1},
    {MPI_REAL8, 8, EK_FLOAT, 1},
    {MPI_COMPLEX8, 4, EK_FLOAT, 2},
    {MPI_COMPLEX16, 8, EK_FLOAT, 2},
    {MPI_2REAL, 4, EK_FLOAT, 2},
    {MPI_2DOUBLE_PRECISION, 8, EK_FLOAT, 2},
    {MPI_2INTEGER, 4, EK_INT, 2},
    {MPI_2INT, 4, EK_INT, 2},
};

/* A run of n elements of one kind: native size nsize, external esize. */
struct ext_run {
    MPI_Count n;
    unsigned char nsize, esize, kind;
};

struct ext_seq {
    struct ext_run *v;
    int n, cap;
    int err;
};

static void ext_add(struct ext_seq *s, MPI_Count n, int nsize, int esize, int kind)
{
    if (n <= 0 || s->err) return;
    if (s->n && s->v[s->n - 1].nsize == nsize && s->v[s->n - 1].esize == esize &&
        s->v[s->n - 1].kind == kind) {
        s->v[s->n - 1].n += n;
        return;
    }
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        struct ext_run *v = realloc(s->v, (size_t)cap * sizeof *v);
        if (v == NULL) {
            s->err = MPI_ERR_NO_MEM;
            return;
        }
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] =
        (struct ext_run){n, (unsigned char)nsize, (unsigned char)esize, (unsigned char)kind};
}

static const struct ext_basic *ext_find(MPI_Datatype dt)
{
    for (size_t i = 0; i < sizeof ext_table / sizeof ext_table[0]; i++)
        if (ext_table[i].dt == dt) return &ext_table[i];
    return NULL;
}

/* A basic element type repeated reps times (pairs: value type then int). */
static int ext_basic_add(struct ext_seq *s, MPI_Datatype dt, MPI_Count reps)
{
    const struct ext_basic *b = ext_find(dt);
    if (b) {
        struct mpi_type *t = mpi_type_get(dt);
        int part = (int)(t->size / b->parts);
        ext_add(s, reps * b->parts, part, b->esize, b->kind);
        return 1;
    }
    MPI_Datatype first;
    int fsize;
    if (dt == MPI_FLOAT_INT)
        first = MPI_FLOAT, fsize = (int)sizeof(float);
    else if (dt == MPI_DOUBLE_INT)
        first = MPI_DOUBLE, fsize = (int)sizeof(double);
    else if (dt == MPI_LONG_INT)
        first = MPI_LONG, fsize = (int)sizeof(long);
    else if (dt == MPI_SHORT_INT)
        first = MPI_SHORT, fsize = (int)sizeof(short);
    else if (dt == MPI_LONG_DOUBLE_INT)
        first = MPI_LONG_DOUBLE, fsize = (int)sizeof(long double);
    else
        return 0;
    const struct ext_basic *fb = ext_find(first);
    for (MPI_Count r = 0; r < reps && !s->err; r++) {
        ext_add(s, 1, fsize, fb->esize, fb->kind);
        ext_add(s, 1, (int)sizeof(int), 4, EK_INT);
    }
    return 1;
}

/* The elements of reps instances of dt, in type-map order. */
static void ext_walk(struct ext_seq *s, MPI_Datatype dt, MPI_Count reps)
{
    struct mpi_type *t = mpi_type_get(dt);
    if (t == NULL) {
        s->err = MPI_ERR_TYPE;
        return;
    }
    if (reps <= 0 || t->size == 0 || s->err) return;
    if (ext_basic_add(s, dt, reps)) return;
    if (t->basic != MPI_DATATYPE_NULL && t->basic_size > 0 && ext_find(t->basic)) {
        ext_basic_add(s, t->basic, reps * (t->size / mpi_type_get(t->basic)->size));
        return;
    }
    int ni, na, nt, comb;
    if (PMPI_Type_get_envelope(dt, &ni, &na, &nt, &comb) || comb == MPI_COMBINER_NAMED) {
        s->err = MPI_ERR_TYPE;
        return;
    }
    int *ints = malloc(((size_t)ni + 1) * sizeof *ints);
    MPI_Aint *aints = malloc(((size_t)na + 1) * sizeof *aints);
    MPI_Datatype *types = malloc(((size_t)nt + 1) * sizeof *types);
    if (!ints || !aints || !types || PMPI_Type_get_contents(dt, ni, na, nt, ints, aints, types)) {
        s->err = s->err ? s->err : MPI_ERR_TYPE;
    } else if (comb == MPI_COMBINER_STRUCT) {
        for (MPI_Count r = 0; r < reps && !s->err; r++)
            for (int i = 0; i < ints[0]; i++)
                ext_walk(s, types[i], ints[1 + i]);
    } else if (nt >= 1) { /* one old type: its elements, as many times as fit */
        struct mpi_type *o = mpi_type_get(types[0]);
        if (o && o->size > 0) ext_walk(s, types[0], reps * (t->size / o->size));
    }
    for (int i = 0; i < nt; i++) {
        struct mpi_type *o = mpi_type_get(types[i]);
        if (o && !o->predefined) PMPI_Type_free(&types[i]);
    }
    free(ints);
    free(aints);
    free(types);
}

static int ext_datarep(const char *datarep)
{
    return datarep && strcmp(datarep, "external32") == 0;
}

/* The runs of count instances of dt and their external size. */
static int ext_seq_of(MPI_Datatype dt, MPI_Count count, struct ext_seq *s, MPI_Aint *bytes)
{
    memset(s, 0, sizeof *s);
    if (mpi_type_ok(dt) == NULL) return MPI_ERR_TYPE;
    if (count < 0) return MPI_ERR_COUNT;
    ext_walk(s, dt, count);
    if (s->err) {
        free(s->v);
        return s->err;
    }
    MPI_Aint b = 0;
    for (int i = 0; i < s->n; i++)
        b += (MPI_Aint)(s->v[i].n * s->v[i].esize);
    *bytes = b;
    return MPI_SUCCESS;
}

/* x87 80-bit extended (in 16 bytes, little-endian) <-> IEEE binary128, big-endian. */
static void ext_ld_out(const unsigned char *in, unsigned char *out)
{
    uint64_t mant;
    uint16_t se;
    memcpy(&mant, in, 8);
    memcpy(&se, in + 8, 2);
    uint64_t frac = mant << 1; /* drop the explicit integer bit: 63 bits, left-aligned */
    unsigned char q[16];
    q[0] = (unsigned char)(se >> 8);
    q[1] = (unsigned char)se;
    for (int i = 0; i < 8; i++)
        q[2 + i] = (unsigned char)(frac >> (56 - 8 * i));
    memset(q + 10, 0, 6);
    memcpy(out, q, 16);
}

static void ext_ld_in(const unsigned char *in, unsigned char *out)
{
    uint16_t se = (uint16_t)(in[0] << 8 | in[1]);
    uint64_t frac = 0;
    for (int i = 0; i < 8; i++)
        frac |= (uint64_t)in[2 + i] << (56 - 8 * i);
    uint64_t mant = frac >> 1;
    if ((se & 0x7fff) != 0) mant |= 1ull << 63; /* normal numbers: explicit integer bit */
    memset(out, 0, 16);
    memcpy(out, &mant, 8);
    memcpy(out + 8, &se, 2);
}

/* One element native -> external (dir 0) or back (dir 1). */
static int ext_conv(const struct ext_run *r, const unsigned char *in, unsigned char *out, int dir)
{
    if (r->kind == EK_LDOUBLE) {
        if (r->nsize != 16) return MPI_ERR_UNSUPPORTED_DATAREP;
        if (dir == 0)
            ext_ld_out(in, out);
        else
            ext_ld_in(in, out);
        return MPI_SUCCESS;
    }
    int ns = r->nsize, es = r->esize;
    if (dir == 0) { /* little-endian native: low bytes first */
        if (r->kind == EK_FLOAT && ns != es) return MPI_ERR_UNSUPPORTED_DATAREP;
        for (int i = 0; i < es; i++)
            out[i] = i < ns ? in[es - 1 - i] : 0;
        if (es < ns) { /* narrower: the value must fit */
            int neg = r->kind == EK_INT && (in[ns - 1] & 0x80);
            for (int i = es; i < ns; i++)
                if (in[i] != (neg ? 0xff : 0)) return MPI_ERR_CONVERSION;
            if (r->kind == EK_INT && ((in[es - 1] & 0x80) != 0) != neg) return MPI_ERR_CONVERSION;
        }
    } else {
        for (int i = 0; i < ns; i++)
            out[i] = i < es ? in[es - 1 - i] : 0;
        if (ns > es && r->kind == EK_INT && (in[0] & 0x80))
            for (int i = es; i < ns; i++)
                out[i] = 0xff; /* sign extension */
    }
    return MPI_SUCCESS;
}

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Pack_external_size";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (!ext_datarep(datarep)) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_UNSUPPORTED_DATAREP);
    if (size == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct ext_seq s;
    int rc = ext_seq_of(datatype, incount, &s, size);
    if (rc == 0) free(s.v);
    return mpi_err(MPI_COMM_WORLD, fn, rc);
}
MPI_ALIAS(Pack_external_size)

/* Convert the runs between native packed bytes and external32, dir as ext_conv. */
static int ext_convert_all(const struct ext_seq *s, const unsigned char *in, unsigned char *out,
                           int dir)
{
    for (int i = 0; i < s->n; i++) {
        const struct ext_run *r = &s->v[i];
        int is = dir == 0 ? r->nsize : r->esize, os = dir == 0 ? r->esize : r->nsize;
        for (MPI_Count k = 0; k < r->n; k++) {
            int rc = ext_conv(r, in, out, dir);
            if (rc) return rc;
            in += is;
            out += os;
        }
    }
    return MPI_SUCCESS;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Pack_external";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (!ext_datarep(datarep)) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_UNSUPPORTED_DATAREP);
    if (position == NULL || *position < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct ext_seq s;
    MPI_Aint bytes;
    int rc = ext_seq_of(datatype, incount, &s, &bytes);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    if (*position + bytes > outsize) {
        free(s.v);
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TRUNCATE);
    }
    struct mpi_type *t = mpi_type_get(datatype);
    size_t nb = (size_t)(incount * t->size);
    unsigned char *native = malloc(nb ? nb : 1);
    if (native == NULL) {
        free(s.v);
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    }
    mpi_pack(inbuf, incount, t, native);
    rc = ext_convert_all(&s, native, (unsigned char *)outbuf + *position, 0);
    if (rc == 0) *position += bytes;
    free(native);
    free(s.v);
    return mpi_err(MPI_COMM_WORLD, fn, rc);
}
MPI_ALIAS(Pack_external)

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Unpack_external";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (!ext_datarep(datarep)) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_UNSUPPORTED_DATAREP);
    if (position == NULL || *position < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct ext_seq s;
    MPI_Aint bytes;
    int rc = ext_seq_of(datatype, outcount, &s, &bytes);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    if (*position + bytes > insize) {
        free(s.v);
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_TRUNCATE);
    }
    struct mpi_type *t = mpi_type_get(datatype);
    size_t nb = (size_t)(outcount * t->size);
    unsigned char *native = malloc(nb ? nb : 1);
    if (native == NULL) {
        free(s.v);
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    }
    rc = ext_convert_all(&s, (const unsigned char *)inbuf + *position, native, 1);
    if (rc == 0) {
        mpi_unpack(native, nb, outbuf, outcount, t);
        *position += bytes;
    }
    free(native);
    free(s.v);
    return mpi_err(MPI_COMM_WORLD, fn, rc);
}
MPI_ALIAS(Unpack_external)

/*
 * mpi_op.c - MPI reduction operations: the predefined ones resolved to src/coll's
 * reduction loops (with the types and pair types only MPI has), user operations
 * (MPI_Op_create, MPI_Op_free, MPI_Op_commutative) called through trampolines, and
 * MPI_Reduce_local.
 */
#include <complex.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

/* ---- operations ---------------------------------------------------------------------- */

/* User ops are MPI_OP_USER_BASE + slot + MPI_OP_SLOTS * generation: freeing moves the
 * slot's generation on, so a freed handle stays MPI_ERR_OP after the slot is reused. */
#define MPI_OP_USER_BASE 32
#define MPI_OP_SLOTS     4096
/* User handles stay below 0x04000000, under every predefined handle and null (mpi.h). */
#define MPI_OP_GENS ((0x04000000 - MPI_OP_USER_BASE) / MPI_OP_SLOTS)
struct mpi_user_op {
    MPI_User_function *fn;
    int commute;
    int used;
    int gen;
    int freed; /* MPI_Op_free called: no new use, but operations in flight still call it */
};
static struct mpi_user_op *mpi_uops;
static int mpi_nuops;

/* The user operation of handle op, freed ones too (a nonblocking reduction started before
 * MPI_Op_free still calls it, as MPI requires). */
static struct mpi_user_op *mpi_uop_live(MPI_Op op)
{
    if (op < MPI_OP_USER_BASE) return NULL;
    int v = op - MPI_OP_USER_BASE, i = v % MPI_OP_SLOTS;
    return i < mpi_nuops && mpi_uops[i].used && mpi_uops[i].gen == v / MPI_OP_SLOTS ? &mpi_uops[i]
                                                                                    : NULL;
}
/* ... and one the program may still name. */
static struct mpi_user_op *mpi_uop_get(MPI_Op op)
{
    struct mpi_user_op *u = mpi_uop_live(op);
    return u && !u->freed ? u : NULL;
}

/*
 * A user function needs its MPI datatype, which the collectives' element function does not
 * carry: each (user op, datatype) pair in use is bound to one of a fixed set of
 * trampolines that knows its binding.
 */
#define MPI_NBIND 64
static struct {
    MPI_Op op;
    MPI_Datatype dt;
    uint64_t used; /* when last bound (mpi_bind_clock): freed ops' bindings go oldest first */
} mpi_binds[MPI_NBIND];
static uint64_t mpi_bind_clock;

static void mpi_bind_call(int k, const void *in, void *inout, size_t count)
{
    struct mpi_user_op *u = mpi_uop_live(mpi_binds[k].op);
    MPI_Datatype dt = mpi_binds[k].dt;
    /* MPI counts are int: hand very long vectors over in pieces. */
    struct mpi_type *t = mpi_type_get(dt);
    size_t ext = t ? (size_t)mpi_type_extent(t) : 0;
    while (count > 0 && u) {
        int n = count > (size_t)INT32_MAX ? INT32_MAX : (int)count;
        u->fn((void *)in, inout, &n, &dt);
        in = (const char *)in + (size_t)n * ext;
        inout = (char *)inout + (size_t)n * ext;
        count -= (size_t)n;
    }
}

// clang-format off
/* 64 trampolines: token-pasted lists that clang-format cannot lay out stably. */
#define MPI_TRAMP(k)                                                                               \
    static void mpi_tramp_##k(const void *in, void *inout, size_t count, tern_datatype_t dt)       \
    {                                                                                              \
        (void)dt;                                                                                  \
        mpi_bind_call(0##k, in, inout, count); /* 0##k: the names are octal 00..77 */            \
    }
#define MPI_T8(b)                                                                                  \
    MPI_TRAMP(b##0) MPI_TRAMP(b##1) MPI_TRAMP(b##2) MPI_TRAMP(b##3)                                \
    MPI_TRAMP(b##4) MPI_TRAMP(b##5) MPI_TRAMP(b##6) MPI_TRAMP(b##7)
MPI_T8(0) MPI_T8(1) MPI_T8(2) MPI_T8(3) MPI_T8(4) MPI_T8(5) MPI_T8(6) MPI_T8(7)
#define MPI_TR8(b)                                                                                 \
    mpi_tramp_##b##0, mpi_tramp_##b##1, mpi_tramp_##b##2, mpi_tramp_##b##3, mpi_tramp_##b##4,      \
    mpi_tramp_##b##5, mpi_tramp_##b##6, mpi_tramp_##b##7
static const coll_op_fn mpi_tramps[MPI_NBIND] = {
    MPI_TR8(0), MPI_TR8(1), MPI_TR8(2), MPI_TR8(3), MPI_TR8(4), MPI_TR8(5), MPI_TR8(6), MPI_TR8(7)};
// clang-format on

static int mpi_bind(MPI_Op op, MPI_Datatype dt)
{
    int free_slot = -1;
    for (int k = 0; k < MPI_NBIND; k++) {
        if (mpi_binds[k].op == op && mpi_binds[k].dt == dt) {
            mpi_binds[k].used = ++mpi_bind_clock;
            return k;
        }
        if ((mpi_binds[k].op == 0 || mpi_binds[k].op == MPI_OP_NULL) && free_slot < 0)
            free_slot = k;
    }
    /* Full: take the binding of a freed operation, the one bound longest ago (a reduction
     * still in flight with it would be among the most recent). */
    for (int k = 0, any_free = free_slot >= 0; k < MPI_NBIND && !any_free; k++) {
        struct mpi_user_op *u = mpi_uop_live(mpi_binds[k].op);
        if ((u == NULL || u->freed) &&
            (free_slot < 0 || mpi_binds[k].used < mpi_binds[free_slot].used))
            free_slot = k;
    }
    if (free_slot >= 0) {
        mpi_binds[free_slot].op = op;
        mpi_binds[free_slot].dt = dt;
        mpi_binds[free_slot].used = ++mpi_bind_clock;
    }
    return free_slot;
}

/* Built-in operations on the predefined types the collectives do not know. */
#define MPI_LOOP(name, T, expr)                                                                    \
    static void name(const void *in_, void *io_, size_t n, tern_datatype_t dt)                     \
    {                                                                                              \
        (void)dt;                                                                                  \
        const T *a = in_;                                                                          \
        T *b = io_;                                                                                \
        for (size_t i = 0; i < n; i++)                                                             \
            b[i] = (expr);                                                                         \
    }
MPI_LOOP(mpi_sum_ld, long double, a[i] + b[i])
MPI_LOOP(mpi_prod_ld, long double, a[i] * b[i])
MPI_LOOP(mpi_min_ld, long double, a[i] < b[i] ? a[i] : b[i])
MPI_LOOP(mpi_max_ld, long double, a[i] > b[i] ? a[i] : b[i])
MPI_LOOP(mpi_sum_cf, float _Complex, a[i] + b[i])
MPI_LOOP(mpi_prod_cf, float _Complex, a[i] * b[i])
MPI_LOOP(mpi_sum_cd, double _Complex, a[i] + b[i])
MPI_LOOP(mpi_prod_cd, double _Complex, a[i] * b[i])
MPI_LOOP(mpi_sum_cld, long double _Complex, a[i] + b[i])
MPI_LOOP(mpi_prod_cld, long double _Complex, a[i] * b[i])
#define MPI_LOC(name, T, better)                                                                   \
    static void name(const void *in_, void *io_, size_t n, tern_datatype_t dt)                     \
    {                                                                                              \
        (void)dt;                                                                                  \
        const T *a = in_;                                                                          \
        T *b = io_;                                                                                \
        for (size_t i = 0; i < n; i++)                                                             \
            if (a[i].v better b[i].v || (a[i].v == b[i].v && a[i].i < b[i].i)) b[i] = a[i];        \
    }
typedef struct {
    short v;
    int i;
} mpi_si;
typedef struct {
    long double v;
    int i;
} mpi_ldi;
MPI_LOC(mpi_minloc_si, mpi_si, <)
MPI_LOC(mpi_maxloc_si, mpi_si, >)
MPI_LOC(mpi_minloc_ldi, mpi_ldi, <)
MPI_LOC(mpi_maxloc_ldi, mpi_ldi, >)
typedef struct {
    float v, i;
} mpi_ff;
typedef struct {
    double v, i;
} mpi_dd;
typedef struct {
    int v, i;
} mpi_ii;
MPI_LOC(mpi_minloc_ff, mpi_ff, <)
MPI_LOC(mpi_maxloc_ff, mpi_ff, >)
MPI_LOC(mpi_minloc_dd, mpi_dd, <)
MPI_LOC(mpi_maxloc_dd, mpi_dd, >)
MPI_LOC(mpi_minloc_ii, mpi_ii, <)
MPI_LOC(mpi_maxloc_ii, mpi_ii, >)

static coll_op_fn mpi_extra_fn(MPI_Op op, MPI_Datatype dt)
{
    switch (dt) { /* the C++ and Fortran names of C types */
    case MPI_CXX_FLOAT_COMPLEX:
    case MPI_COMPLEX:
    case MPI_COMPLEX8:
        dt = MPI_C_FLOAT_COMPLEX;
        break;
    case MPI_CXX_DOUBLE_COMPLEX:
    case MPI_DOUBLE_COMPLEX:
    case MPI_COMPLEX16:
        dt = MPI_C_DOUBLE_COMPLEX;
        break;
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
        dt = MPI_C_LONG_DOUBLE_COMPLEX;
        break;
    }
    switch (dt) {
    case MPI_2REAL:
        return op == MPI_MINLOC ? mpi_minloc_ff : op == MPI_MAXLOC ? mpi_maxloc_ff : NULL;
    case MPI_2DOUBLE_PRECISION:
        return op == MPI_MINLOC ? mpi_minloc_dd : op == MPI_MAXLOC ? mpi_maxloc_dd : NULL;
    case MPI_2INTEGER:
        return op == MPI_MINLOC ? mpi_minloc_ii : op == MPI_MAXLOC ? mpi_maxloc_ii : NULL;
    case MPI_LONG_DOUBLE:
        return op == MPI_SUM    ? mpi_sum_ld
               : op == MPI_PROD ? mpi_prod_ld
               : op == MPI_MIN  ? mpi_min_ld
               : op == MPI_MAX  ? mpi_max_ld
                                : NULL;
    case MPI_C_FLOAT_COMPLEX:
        return op == MPI_SUM ? mpi_sum_cf : op == MPI_PROD ? mpi_prod_cf : NULL;
    case MPI_C_DOUBLE_COMPLEX:
        return op == MPI_SUM ? mpi_sum_cd : op == MPI_PROD ? mpi_prod_cd : NULL;
    case MPI_C_LONG_DOUBLE_COMPLEX:
        return op == MPI_SUM ? mpi_sum_cld : op == MPI_PROD ? mpi_prod_cld : NULL;
    case MPI_SHORT_INT:
        return op == MPI_MINLOC ? mpi_minloc_si : op == MPI_MAXLOC ? mpi_maxloc_si : NULL;
    case MPI_LONG_DOUBLE_INT:
        return op == MPI_MINLOC ? mpi_minloc_ldi : op == MPI_MAXLOC ? mpi_maxloc_ldi : NULL;
    default:
        return NULL;
    }
}

/* The predefined operations are consecutive handles from MPI_MAX (mpi.h). */
#define OPX(op) ((op)-MPI_MAX)
static const tern_op_t mpi_top[] = {
    [OPX(MPI_MAX)] = TERN_MAX,   [OPX(MPI_MIN)] = TERN_MIN,       [OPX(MPI_SUM)] = TERN_SUM,
    [OPX(MPI_PROD)] = TERN_PROD, [OPX(MPI_LAND)] = TERN_LAND,     [OPX(MPI_BAND)] = TERN_BAND,
    [OPX(MPI_LOR)] = TERN_LOR,   [OPX(MPI_BOR)] = TERN_BOR,       [OPX(MPI_LXOR)] = TERN_LXOR,
    [OPX(MPI_BXOR)] = TERN_BXOR, [OPX(MPI_MINLOC)] = TERN_MINLOC, [OPX(MPI_MAXLOC)] = TERN_MAXLOC,
};

int mpi_op_resolve(MPI_Op op, MPI_Datatype dt, struct coll_op *out)
{
    struct mpi_type *t = mpi_type_ok(dt);
    if (t == NULL) return MPI_ERR_TYPE;
    struct mpi_user_op *u = mpi_uop_get(op);
    if (u) {
        /* The collectives move count * extent bytes of the user's memory as they are. */
        if (t->lb != 0 || t->true_lb < 0 || t->true_ub > t->ub || t->ub <= 0) return MPI_ERR_TYPE;
        int k = mpi_bind(op, dt);
        if (k < 0) return MPI_ERR_UNSUPPORTED_OPERATION; /* too many pairs in use at once */
        *out = (struct coll_op){mpi_tramps[k], u->commute, TERN_UINT8, (size_t)t->ub};
        return MPI_SUCCESS;
    }
    if (op < MPI_MAX || op > MPI_MAXLOC) return MPI_ERR_OP;
    if (t->tdt >= 0) {
        if (coll_op_resolve(mpi_top[OPX(op)], (tern_datatype_t)t->tdt, out)) return MPI_ERR_OP;
        out->esize = (size_t)mpi_type_extent(t);
        return MPI_SUCCESS;
    }
    coll_op_fn fn = mpi_extra_fn(op, t->predefined ? dt : MPI_DATATYPE_NULL);
    if (fn == NULL) return t->predefined ? MPI_ERR_OP : MPI_ERR_TYPE;
    *out = (struct coll_op){fn, 1, TERN_UINT8, (size_t)mpi_type_extent(t)};
    return MPI_SUCCESS;
}

int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Op_create";
    if (user_fn == NULL || op == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    int slot = -1;
    for (int i = 0; i < mpi_nuops; i++)
        if (!mpi_uops[i].used) {
            slot = i;
            break;
        }
    if (slot < 0 && mpi_nuops >= MPI_OP_SLOTS) {
        /* Every slot taken: recycle a freed operation's (its reductions in flight are long
         * done after thousands of creations) and its trampolines. */
        for (int i = 0; i < mpi_nuops && slot < 0; i++)
            if (mpi_uops[i].freed) slot = i;
        if (slot < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
        MPI_Op old = MPI_OP_USER_BASE + slot + MPI_OP_SLOTS * mpi_uops[slot].gen;
        for (int k = 0; k < MPI_NBIND; k++)
            if (mpi_binds[k].op == old) mpi_binds[k].op = MPI_OP_NULL;
        mpi_uops[slot].gen = (mpi_uops[slot].gen + 1) % MPI_OP_GENS;
    }
    if (slot < 0) {
        struct mpi_user_op *t = realloc(mpi_uops, (size_t)(mpi_nuops + 16) * sizeof *t);
        if (t == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
        memset(t + mpi_nuops, 0, 16 * sizeof *t);
        mpi_uops = t;
        slot = mpi_nuops;
        mpi_nuops += 16;
    }
    mpi_uops[slot] = (struct mpi_user_op){user_fn, commute != 0, 1, mpi_uops[slot].gen, 0};
    *op = MPI_OP_USER_BASE + slot + MPI_OP_SLOTS * mpi_uops[slot].gen;
    return MPI_SUCCESS;
}
MPI_ALIAS(Op_create)

int PMPI_Op_free(MPI_Op *op)
{
    CORE_CS_SCOPE();
    if (op == NULL || mpi_uop_get(*op) == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Op_free", MPI_ERR_OP);
    /* The handle is dead for the program now; the function stays callable for reductions
     * already started (nonblocking ones), until the slot is recycled. */
    mpi_uop_get(*op)->freed = 1;
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(Op_free)

int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    CORE_CS_SCOPE();
    if (commute == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Op_commutative", MPI_ERR_ARG);
    struct mpi_user_op *u = mpi_uop_get(op);
    if (u == NULL && (op < MPI_MAX || op > MPI_NO_OP))
        return mpi_err(MPI_COMM_WORLD, "MPI_Op_commutative", MPI_ERR_OP);
    *commute = u ? u->commute : 1;
    return MPI_SUCCESS;
}
MPI_ALIAS(Op_commutative)

int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Reduce_local";
    if (count < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_COUNT);
    struct coll_op o;
    int rc = mpi_op_resolve(op, datatype, &o);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    if (count > 0 && (inbuf == NULL || inoutbuf == NULL))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_BUFFER);
    if (count > 0) o.fn(inbuf, inoutbuf, (size_t)count, o.dt);
    return MPI_SUCCESS;
}
MPI_ALIAS(Reduce_local)

void mpi_coll_fini(void)
{
    free(mpi_uops);
    mpi_uops = NULL;
    mpi_nuops = 0;
    memset(mpi_binds, 0, sizeof mpi_binds);
}

/*
 * coll_op.c - datatypes and reduction operations: the built-in ops on every type they
 * are defined for (one table, generated from X-macros) and the registry of user ops.
 */
#include <stdlib.h>

#include "coll/coll.h"

/* X(enum, C type, arithmetic type, name) for the integer and floating types. Integer
 * sums and products are computed in an unsigned type at least as wide as int, so that an
 * overflow wraps (as MPICH's and Open MPI's do) instead of being undefined in C, and
 * narrow unsigned operands are not promoted to a signed int that can overflow. */
#define COLL_INT_TYPES(X)                                                                          \
    X(TERN_INT8, int8_t, unsigned, i8)                                                             \
    X(TERN_INT16, int16_t, unsigned, i16)                                                          \
    X(TERN_INT32, int32_t, uint32_t, i32)                                                          \
    X(TERN_INT64, int64_t, uint64_t, i64)                                                          \
    X(TERN_UINT8, uint8_t, unsigned, u8)                                                           \
    X(TERN_UINT16, uint16_t, unsigned, u16)                                                        \
    X(TERN_UINT32, uint32_t, uint32_t, u32)                                                        \
    X(TERN_UINT64, uint64_t, uint64_t, u64)
#define COLL_FLOAT_TYPES(X)                                                                        \
    X(TERN_FLOAT, float, float, f32)                                                               \
    X(TERN_DOUBLE, double, double, f64)
#define COLL_PAIR_TYPES(X)                                                                         \
    X(TERN_FLOAT_INT, tern_float_int_t, void, fi)                                                  \
    X(TERN_DOUBLE_INT, tern_double_int_t, void, di)                                                \
    X(TERN_INT_INT, tern_int_int_t, void, ii)                                                      \
    X(TERN_LONG_INT, tern_long_int_t, void, li)

static const size_t coll_dt_sizes[TERN_DATATYPE_COUNT] = {
#define COLL_DT_SIZE(e, t, w, n) [e] = sizeof(t),
    COLL_INT_TYPES(COLL_DT_SIZE) COLL_FLOAT_TYPES(COLL_DT_SIZE) COLL_PAIR_TYPES(COLL_DT_SIZE)
#undef COLL_DT_SIZE
};

size_t coll_dt_size(tern_datatype_t dt)
{
    return (unsigned)dt < TERN_DATATYPE_COUNT ? coll_dt_sizes[dt] : 0;
}

/* One elementwise loop per (op, type). The result is converted back to T, which for
 * the narrow integer types wraps as the hardware does. */
#define COLL_DEF_LOOP(opname, T, n, expr)                                                          \
    static void coll_##opname##_##n(const void *in_, void *io_, size_t cnt, tern_datatype_t dt)    \
    {                                                                                              \
        (void)dt;                                                                                  \
        const T *restrict a = in_;                                                                 \
        T *restrict b = io_;                                                                       \
        for (size_t i = 0; i < cnt; i++)                                                           \
            b[i] = (T)(expr);                                                                      \
    }

#define COLL_ARITH(e, T, W, n)                                                                     \
    COLL_DEF_LOOP(sum, T, n, (W)a[i] + (W)b[i])                                                    \
    COLL_DEF_LOOP(prod, T, n, (W)a[i] * (W)b[i])                                                   \
    COLL_DEF_LOOP(min, T, n, a[i] < b[i] ? a[i] : b[i])                                            \
    COLL_DEF_LOOP(max, T, n, a[i] > b[i] ? a[i] : b[i])
#define COLL_LOGIC(e, T, W, n)                                                                     \
    COLL_DEF_LOOP(land, T, n, (a[i] != 0) && (b[i] != 0))                                          \
    COLL_DEF_LOOP(lor, T, n, (a[i] != 0) || (b[i] != 0))                                           \
    COLL_DEF_LOOP(lxor, T, n, (a[i] != 0) != (b[i] != 0))                                          \
    COLL_DEF_LOOP(band, T, n, a[i] & b[i])                                                         \
    COLL_DEF_LOOP(bor, T, n, a[i] | b[i])                                                          \
    COLL_DEF_LOOP(bxor, T, n, a[i] ^ b[i])

COLL_INT_TYPES(COLL_ARITH)
COLL_FLOAT_TYPES(COLL_ARITH)
COLL_INT_TYPES(COLL_LOGIC)

/* MINLOC/MAXLOC: the better value wins; on a tie the smaller index. */
#define COLL_LOC(e, T, W, n)                                                                       \
    static void coll_minloc_##n(const void *in_, void *io_, size_t cnt, tern_datatype_t dt)        \
    {                                                                                              \
        (void)dt;                                                                                  \
        const T *a = in_;                                                                          \
        T *b = io_;                                                                                \
        for (size_t i = 0; i < cnt; i++) {                                                         \
            if (a[i].val < b[i].val || (a[i].val == b[i].val && a[i].idx < b[i].idx)) b[i] = a[i]; \
        }                                                                                          \
    }                                                                                              \
    static void coll_maxloc_##n(const void *in_, void *io_, size_t cnt, tern_datatype_t dt)        \
    {                                                                                              \
        (void)dt;                                                                                  \
        const T *a = in_;                                                                          \
        T *b = io_;                                                                                \
        for (size_t i = 0; i < cnt; i++) {                                                         \
            if (a[i].val > b[i].val || (a[i].val == b[i].val && a[i].idx < b[i].idx)) b[i] = a[i]; \
        }                                                                                          \
    }
COLL_PAIR_TYPES(COLL_LOC)

/* [op][datatype] -> function; NULL where the op is not defined on the type. */
static const coll_op_fn coll_builtin[TERN_OP_BUILTIN_COUNT][TERN_DATATYPE_COUNT] = {
#define COLL_SET(opname, OPENUM) [OPENUM][e] = coll_##opname##_##n,
#define COLL_SET_ARITH(e, T, W, n)                                                                 \
    [TERN_SUM][e] = coll_sum_##n, [TERN_PROD][e] = coll_prod_##n, [TERN_MIN][e] = coll_min_##n,    \
    [TERN_MAX][e] = coll_max_##n,
#define COLL_SET_LOGIC(e, T, W, n)                                                                 \
    [TERN_LAND][e] = coll_land_##n, [TERN_LOR][e] = coll_lor_##n, [TERN_LXOR][e] = coll_lxor_##n,  \
    [TERN_BAND][e] = coll_band_##n, [TERN_BOR][e] = coll_bor_##n, [TERN_BXOR][e] = coll_bxor_##n,
#define COLL_SET_LOC(e, T, W, n)                                                                   \
    [TERN_MINLOC][e] = coll_minloc_##n, [TERN_MAXLOC][e] = coll_maxloc_##n,
    COLL_INT_TYPES(COLL_SET_ARITH) COLL_FLOAT_TYPES(COLL_SET_ARITH) COLL_INT_TYPES(COLL_SET_LOGIC)
        COLL_PAIR_TYPES(COLL_SET_LOC)
#undef COLL_SET
};

/*
 * User ops are handles COLL_USER_BASE + slot + COLL_USER_SLOTS * generation. A slot's
 * generation moves on when the op is freed, so a freed handle stays invalid
 * (TERN_ERR_INVAL) after its slot is reused, instead of naming someone else's op.
 */
#define COLL_USER_BASE  0x100
#define COLL_USER_SLOTS 4096
#define COLL_USER_GENS  ((0x7fffffff - COLL_USER_BASE) / COLL_USER_SLOTS)

struct coll_user_op {
    coll_op_fn fn;
    int commute;
    int used;
    int gen;
};

static struct coll_user_op *coll_users;
static int coll_nusers;

/* The live user op a handle names, or NULL. */
static struct coll_user_op *coll_user_get(tern_op_t op)
{
    if ((int)op < COLL_USER_BASE) return NULL;
    int v = (int)op - COLL_USER_BASE, slot = v % COLL_USER_SLOTS;
    if (slot >= coll_nusers) return NULL;
    struct coll_user_op *u = &coll_users[slot];
    return u->used && u->gen == v / COLL_USER_SLOTS ? u : NULL;
}

int coll_op_resolve(tern_op_t op, tern_datatype_t dt, struct coll_op *out)
{
    size_t es = coll_dt_size(dt);
    if (es == 0) return TERN_ERR_INVAL;
    coll_op_fn fn = NULL;
    int commute = 1;
    if ((int)op >= 0 && op < TERN_OP_BUILTIN_COUNT) {
        fn = coll_builtin[op][dt];
    } else {
        struct coll_user_op *u = coll_user_get(op);
        if (u) {
            fn = u->fn;
            commute = u->commute;
        }
    }
    if (fn == NULL) return TERN_ERR_INVAL;
    out->fn = fn;
    out->commute = commute;
    out->dt = dt;
    out->esize = es;
    return 0;
}

int coll_op_create(coll_op_fn fn, int commute, tern_op_t *out)
{
    int slot = -1;
    for (int i = 0; i < coll_nusers; i++)
        if (!coll_users[i].used) {
            slot = i;
            break;
        }
    if (slot < 0) {
        if (coll_nusers == COLL_USER_SLOTS) return TERN_ERR_NOMEM;
        int n = coll_nusers ? coll_nusers * 2 : 16;
        struct coll_user_op *t = realloc(coll_users, (size_t)n * sizeof *t);
        if (t == NULL) return TERN_ERR_NOMEM;
        for (int i = coll_nusers; i < n; i++)
            t[i] = (struct coll_user_op){NULL, 0, 0, 0};
        coll_users = t;
        slot = coll_nusers;
        coll_nusers = n;
    }
    struct coll_user_op *u = &coll_users[slot];
    *u = (struct coll_user_op){fn, commute != 0, 1, u->gen};
    *out = (tern_op_t)(COLL_USER_BASE + slot + COLL_USER_SLOTS * u->gen);
    return 0;
}

int coll_op_free(tern_op_t op)
{
    struct coll_user_op *u = coll_user_get(op);
    if (u == NULL) return TERN_ERR_INVAL;
    u->used = 0;
    u->gen = (u->gen + 1) % COLL_USER_GENS;
    return 0;
}

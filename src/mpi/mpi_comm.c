/*
 * mpi_comm.c - MPI communicators, groups, attributes and Cartesian topologies. A
 * communicator handle wraps a core communicator (struct tern_comm: context ids and rank
 * maps) with what only MPI has: error handler, name, attributes, topology. Groups are
 * lists of world ranks.
 */
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

struct mpi_comm **mpi_comms;
int mpi_ncomms;

/* ---- the communicator table -------------------------------------------------------- */

static int mpi_comm_slot(void)
{
    for (int i = 3; i < mpi_ncomms; i++)
        if (mpi_comms[i] == NULL) return i;
    if (mpi_ncomms >= MPI_COMM_SLOTS) return -1;
    int n = mpi_ncomms ? mpi_ncomms * 2 : 16;
    struct mpi_comm **t = realloc(mpi_comms, (size_t)n * sizeof *t);
    if (t == NULL) return -1;
    memset(t + mpi_ncomms, 0, (size_t)(n - mpi_ncomms) * sizeof *t);
    int slot = mpi_ncomms < 3 ? 3 : mpi_ncomms;
    mpi_comms = t;
    mpi_ncomms = n;
    return slot;
}

/* Communicators made so far: the generation of the next handle. */
static unsigned mpi_comm_serial;

/* Fill slot with a new communicator; its handle is *handle (generation 0 for the
 * predefined ones, the next generation otherwise). */
static int mpi_comm_put(int slot, struct tern_comm *tc, MPI_Errhandler errh, const char *name,
                        MPI_Comm *handle)
{
    struct mpi_comm *c = calloc(1, sizeof *c);
    if (c == NULL) return -1;
    c->tc = tc;
    unsigned gen = slot < 3 ? 0 : 1 + mpi_comm_serial++ % (INT_MAX / MPI_COMM_SLOTS - 1);
    c->handle = slot + MPI_COMM_SLOTS * (int)gen;
    if (handle) *handle = c->handle;
    c->errh = errh;
    snprintf(c->name, sizeof c->name, "%s", name);
    mpi_comms[slot] = c;
    return 0;
}

int mpi_comm_init(void)
{
    if (mpi_comm_slot() < 0) return -1;
    if (mpi_comm_put(MPI_COMM_WORLD, TERN_COMM_WORLD, MPI_ERRORS_ARE_FATAL, "MPI_COMM_WORLD",
                     NULL) ||
        mpi_comm_put(MPI_COMM_SELF, TERN_COMM_SELF, MPI_ERRORS_ARE_FATAL, "MPI_COMM_SELF", NULL))
        return -1;
    return 0;
}

static void mpi_comm_destroy(struct mpi_comm *c)
{
    for (struct mpi_attr *a = c->attrs, *n; a; a = n) {
        n = a->next;
        free(a);
    }
    free(c->dims);
    free(c->periods);
    mpi_topo_free(c->topo);
    mpi_comms[c->handle % MPI_COMM_SLOTS] = NULL;
    free(c);
}

void mpi_comm_fini(void)
{
    for (int i = 0; i < mpi_ncomms; i++)
        if (mpi_comms[i]) mpi_comm_destroy(mpi_comms[i]);
    free(mpi_comms);
    mpi_comms = NULL;
    mpi_ncomms = 0;
}

/* Wrap a core communicator in a new handle (NULL tc gives MPI_COMM_NULL). */
static int mpi_comm_wrap(struct tern_comm *tc, const struct mpi_comm *parent, MPI_Comm *out)
{
    if (tc == NULL) {
        *out = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int slot = mpi_comm_slot();
    MPI_Comm h;
    if (slot < 0 || mpi_comm_put(slot, tc, parent ? parent->errh : MPI_ERRORS_ARE_FATAL, "", &h)) {
        core_comm_free(tc);
        return MPI_ERR_NO_MEM;
    }
    *out = h;
    return MPI_SUCCESS;
}

/* Checks of every call on a communicator with an output. */
#define COMM_CHECK(fn, comm, out)                                                                  \
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);                                      \
    struct mpi_comm *c = mpi_comm_get(comm);                                                       \
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);                                         \
    if ((out) == NULL) return mpi_err(comm, fn, MPI_ERR_ARG)

int PMPI_Comm_rank(MPI_Comm comm, int *rank)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_rank", comm, rank);
    *rank = c->tc->rank;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_rank)

int PMPI_Comm_size(MPI_Comm comm, int *size)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_size", comm, size);
    *size = c->tc->size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_size)

/* ---- attributes --------------------------------------------------------------------- */

struct mpi_keyval {
    MPI_Comm_copy_attr_function *copy;
    MPI_Comm_delete_attr_function *del;
    void *extra;
    int used;
    int freed; /* MPI_Comm_free_keyval called: attributes set with it live on */
    int refs;  /* attributes set with it */
};
#define MPI_KEYVAL_BASE 16
static struct mpi_keyval *mpi_keyvals;
static int mpi_nkeyvals;

/* A keyval the program may use (created, not freed). */
static struct mpi_keyval *mpi_keyval_get(int k)
{
    int i = k - MPI_KEYVAL_BASE;
    return i >= 0 && i < mpi_nkeyvals && mpi_keyvals[i].used && !mpi_keyvals[i].freed
               ? &mpi_keyvals[i]
               : NULL;
}
/* A keyval attributes still use, freed or not: their copy and delete callbacks still run
 * (MPI: freeing a keyval in use takes effect when its last attribute goes). */
static struct mpi_keyval *mpi_keyval_live(int k)
{
    int i = k - MPI_KEYVAL_BASE;
    return i >= 0 && i < mpi_nkeyvals && mpi_keyvals[i].used ? &mpi_keyvals[i] : NULL;
}
static void mpi_keyval_unref(int k)
{
    struct mpi_keyval *kv = mpi_keyval_live(k);
    if (kv && --kv->refs == 0 && kv->freed) kv->used = 0;
}

int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *copy_fn,
                            MPI_Comm_delete_attr_function *delete_fn, int *keyval,
                            void *extra_state)
{
    CORE_CS_SCOPE();
    if (keyval == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Comm_create_keyval", MPI_ERR_ARG);
    int slot = -1;
    for (int i = 0; i < mpi_nkeyvals; i++)
        if (!mpi_keyvals[i].used) slot = i;
    if (slot < 0) {
        struct mpi_keyval *t = realloc(mpi_keyvals, (size_t)(mpi_nkeyvals + 8) * sizeof *t);
        if (t == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Comm_create_keyval", MPI_ERR_NO_MEM);
        memset(t + mpi_nkeyvals, 0, 8 * sizeof *t);
        mpi_keyvals = t;
        slot = mpi_nkeyvals;
        mpi_nkeyvals += 8;
    }
    mpi_keyvals[slot] = (struct mpi_keyval){copy_fn, delete_fn, extra_state, 1, 0, 0};
    *keyval = MPI_KEYVAL_BASE + slot;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_create_keyval)

int PMPI_Comm_free_keyval(int *keyval)
{
    CORE_CS_SCOPE();
    /* A freed keyval still in use may be freed again (as in MPICH): nothing changes. */
    if (keyval == NULL || mpi_keyval_live(*keyval) == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Comm_free_keyval", MPI_ERR_KEYVAL);
    struct mpi_keyval *k = mpi_keyval_live(*keyval);
    k->freed = 1;
    if (k->refs == 0) k->used = 0;
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_free_keyval)

static int mpi_attr_delete(struct mpi_comm *c, int keyval)
{
    for (struct mpi_attr **p = &c->attrs, *a; (a = *p) != NULL; p = &a->next)
        if (a->keyval == keyval) {
            struct mpi_keyval *k = mpi_keyval_live(keyval);
            if (k && k->del) {
                int rc = k->del(c->handle, keyval, a->val, k->extra);
                if (rc) return rc;
            }
            *p = a->next;
            free(a);
            mpi_keyval_unref(keyval);
            return MPI_SUCCESS;
        }
    return MPI_SUCCESS;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int keyval, void *attribute_val)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_set_attr";
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (mpi_keyval_get(keyval) == NULL) return mpi_err(comm, fn, MPI_ERR_KEYVAL);
    int rc = mpi_attr_delete(c, keyval);
    if (rc) return mpi_err(comm, fn, rc);
    struct mpi_attr *a = malloc(sizeof *a);
    if (a == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    *a = (struct mpi_attr){c->attrs, keyval, attribute_val};
    c->attrs = a;
    mpi_keyval_get(keyval)->refs++;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_set_attr)

int PMPI_Comm_delete_attr(MPI_Comm comm, int keyval)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_delete_attr";
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    /* a freed keyval whose attributes live on still names them */
    if (mpi_keyval_live(keyval) == NULL) return mpi_err(comm, fn, MPI_ERR_KEYVAL);
    return mpi_err(comm, fn, mpi_attr_delete(c, keyval));
}
MPI_ALIAS(Comm_delete_attr)

int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_get_attr";
    static int tag_ub = TERN_TAG_UB, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0,
               universe, appnum = 0;
    COMM_CHECK(fn, comm, flag);
    if (attribute_val == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    int *p = NULL;
    switch (comm_keyval) {
    case MPI_TAG_UB:
        p = &tag_ub;
        break;
    case MPI_HOST:
        p = &host;
        break;
    case MPI_IO:
        p = &io;
        break;
    case MPI_WTIME_IS_GLOBAL:
        p = &wtime_global;
        break;
    case MPI_UNIVERSE_SIZE:
        universe = core.size, p = &universe;
        break;
    case MPI_APPNUM:
        p = &appnum;
        break;
    case MPI_LASTUSEDCODE:
        p = &mpi_lastusedcode; /* grows with MPI_Add_error_class/code */
        break;
    default:
        break;
    }
    if (p) {
        *(void **)attribute_val = p;
        *flag = 1;
        return MPI_SUCCESS;
    }
    if (mpi_keyval_live(comm_keyval) == NULL) return mpi_err(comm, fn, MPI_ERR_KEYVAL);
    *flag = 0;
    for (struct mpi_attr *a = c->attrs; a; a = a->next)
        if (a->keyval == comm_keyval) {
            *(void **)attribute_val = a->val;
            *flag = 1;
        }
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_get_attr)

int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    CORE_CS_SCOPE();
    return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}
MPI_ALIAS(Attr_get)

/* Copy attributes and topology from old to new (MPI_Comm_dup). */
static int mpi_comm_inherit(const struct mpi_comm *old, struct mpi_comm *nc)
{
    if (old->ndims > 0) {
        nc->dims = malloc((size_t)old->ndims * sizeof(int));
        nc->periods = malloc((size_t)old->ndims * sizeof(int));
        if (!nc->dims || !nc->periods) return MPI_ERR_NO_MEM;
        memcpy(nc->dims, old->dims, (size_t)old->ndims * sizeof(int));
        memcpy(nc->periods, old->periods, (size_t)old->ndims * sizeof(int));
    }
    nc->ndims = old->ndims;
    if (old->topo && mpi_topo_copy(old->topo, &nc->topo)) return MPI_ERR_NO_MEM;
    for (const struct mpi_attr *a = old->attrs; a; a = a->next) {
        struct mpi_keyval *k = mpi_keyval_live(a->keyval);
        if (k == NULL || k->copy == MPI_COMM_NULL_COPY_FN) continue;
        void *val = a->val;
        int flag = 1;
        if (k->copy != MPI_COMM_DUP_FN) {
            int rc = k->copy(old->handle, a->keyval, k->extra, a->val, &val, &flag);
            if (rc) return rc;
        }
        if (!flag) continue;
        struct mpi_attr *na = malloc(sizeof *na);
        if (na == NULL) return MPI_ERR_NO_MEM;
        *na = (struct mpi_attr){nc->attrs, a->keyval, val};
        nc->attrs = na;
        k->refs++;
    }
    return MPI_SUCCESS;
}

/* ---- construction ------------------------------------------------------------------- */

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_dup";
    COMM_CHECK(fn, comm, newcomm);
    struct tern_comm *tc;
    int rc = core_comm_dup(c->tc, &tc);
    if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    MPI_Comm h;
    rc = mpi_comm_wrap(tc, c, &h);
    if (rc) {
        core_comm_free(tc);
        *newcomm = MPI_COMM_NULL;
        return mpi_err(comm, fn, rc);
    }
    rc = mpi_comm_inherit(mpi_comm_get(comm), mpi_comm_get(h));
    if (rc) { /* a copy callback failed: no new communicator (MPI) */
        MPI_Comm tmp = h;
        PMPI_Comm_free(&tmp);
        *newcomm = MPI_COMM_NULL;
        return mpi_err(comm, fn, rc);
    }
    *newcomm = h;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_dup)

static int mpi_split(const char *fn, MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    struct mpi_comm *c = mpi_comm_get(comm);
    struct tern_comm *tc;
    int rc = core_comm_split(c->tc, color, key, &tc);
    if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    MPI_Comm h;
    rc = mpi_comm_wrap(tc, c, &h);
    if (rc) return mpi_err(comm, fn, rc);
    *newcomm = h;
    return MPI_SUCCESS;
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_split";
    COMM_CHECK(fn, comm, newcomm);
    if (color < 0 && color != MPI_UNDEFINED) return mpi_err(comm, fn, MPI_ERR_ARG);
    return mpi_split(fn, comm, color, key, newcomm);
}
MPI_ALIAS(Comm_split)

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info, MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_split_type";
    (void)info;
    COMM_CHECK(fn, comm, newcomm);
    int color;
    if (split_type == MPI_UNDEFINED)
        color = MPI_UNDEFINED;
    else if (split_type == MPI_COMM_TYPE_SHARED)
        color = core.boot.node_of ? core.boot.node_of[core.rank] : 0;
    else
        return mpi_err(comm, fn, MPI_ERR_ARG);
    return mpi_split(fn, comm, color, key, newcomm);
}
MPI_ALIAS(Comm_split_type)

/* MPI_Finalize first deletes the attributes of MPI_COMM_SELF, last set first (MPI 3.1
 * 8.7.1), so their delete callbacks can act while MPI still works. */
int mpi_comm_self_attrs_free(void)
{
    struct mpi_comm *c = mpi_comm_get(MPI_COMM_SELF);
    int rc = MPI_SUCCESS;
    while (c && c->attrs) {
        int e = mpi_attr_delete(c, c->attrs->keyval);
        if (e) { /* the callback failed: report it and drop the attribute anyway */
            struct mpi_attr *a = c->attrs;
            c->attrs = a->next;
            mpi_keyval_unref(a->keyval);
            free(a);
            if (!rc) rc = e;
        }
    }
    return rc;
}

int PMPI_Comm_free(MPI_Comm *comm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_free";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (comm == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    struct mpi_comm *c = mpi_comm_get(*comm);
    if (c == NULL || *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF)
        return mpi_err(*comm, fn, MPI_ERR_COMM);
    while (c->attrs) {
        int rc = mpi_attr_delete(c, c->attrs->keyval);
        if (rc) return mpi_err(*comm, fn, rc);
    }
    int rc = core_comm_free(c->tc);
    if (rc) return mpi_err(*comm, fn, mpi_from_tern(rc));
    mpi_comm_destroy(c);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_free)

int PMPI_Comm_get_name(MPI_Comm comm, char *comm_name, int *resultlen)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_get_name", comm, comm_name);
    if (resultlen == NULL) return mpi_err(comm, "MPI_Comm_get_name", MPI_ERR_ARG);
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", c->name);
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_get_name)

int PMPI_Comm_set_name(MPI_Comm comm, const char *comm_name)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_set_name", comm, comm_name);
    snprintf(c->name, sizeof c->name, "%s", comm_name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_set_name)

int PMPI_Comm_test_inter(MPI_Comm comm, int *flag)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_test_inter", comm, flag);
    *flag = 0;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_test_inter)

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    CORE_CS_SCOPE();
    if (parent == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Comm_get_parent", MPI_ERR_ARG);
    *parent = MPI_COMM_NULL; /* no dynamic processes: never spawned */
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_get_parent)

int PMPI_Comm_c2f(MPI_Comm comm)
{
    CORE_CS_SCOPE();
    return comm;
}
MPI_ALIAS(Comm_c2f)

MPI_Comm PMPI_Comm_f2c(MPI_Fint comm)
{
    CORE_CS_SCOPE();
    return comm;
}
MPI_ALIAS(Comm_f2c)

/* ---- groups ------------------------------------------------------------------------ */

struct mpi_group {
    int size;
    int world[]; /* world rank of each member */
};
static struct mpi_group **mpi_groups;
static int mpi_ngroups;
static struct mpi_group mpi_group_empty = {0};

static struct mpi_group *mpi_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY) return &mpi_group_empty;
    return h > MPI_GROUP_EMPTY && h < mpi_ngroups ? mpi_groups[h] : NULL;
}

static struct mpi_group *mpi_group_alloc(int n)
{
    struct mpi_group *g = malloc(sizeof *g + (size_t)n * sizeof(int));
    if (g) g->size = n;
    return g;
}

/* Give g a handle (an empty group is MPI_GROUP_EMPTY). Frees g on failure. */
static int mpi_group_put(struct mpi_group *g, MPI_Group *out)
{
    if (g == NULL) return MPI_ERR_NO_MEM;
    if (g->size == 0) {
        free(g);
        *out = MPI_GROUP_EMPTY;
        return MPI_SUCCESS;
    }
    int slot = -1;
    for (int i = 2; i < mpi_ngroups; i++)
        if (mpi_groups[i] == NULL) {
            slot = i;
            break;
        }
    if (slot < 0) {
        int n = mpi_ngroups ? mpi_ngroups * 2 : 16;
        struct mpi_group **t = realloc(mpi_groups, (size_t)n * sizeof *t);
        if (t == NULL) {
            free(g);
            return MPI_ERR_NO_MEM;
        }
        memset(t + mpi_ngroups, 0, (size_t)(n - mpi_ngroups) * sizeof *t);
        slot = mpi_ngroups < 2 ? 2 : mpi_ngroups;
        mpi_groups = t;
        mpi_ngroups = n;
    }
    mpi_groups[slot] = g;
    *out = slot;
    return MPI_SUCCESS;
}

static int mpi_group_rank_of(const struct mpi_group *g, int world)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world) return i;
    return MPI_UNDEFINED;
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_group", comm, group);
    struct mpi_group *g = mpi_group_alloc(c->tc->size);
    if (g)
        for (int i = 0; i < g->size; i++)
            g->world[i] = c->tc == TERN_COMM_SELF ? core.rank : core_comm_world(c->tc, i);
    return mpi_err(comm, "MPI_Comm_group", mpi_group_put(g, group));
}
MPI_ALIAS(Comm_group)

#define GROUP_CHECK(fn, h, out)                                                                    \
    struct mpi_group *g = mpi_group_get(h);                                                        \
    if (g == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_GROUP);                              \
    if ((out) == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG)

int PMPI_Group_size(MPI_Group group, int *size)
{
    CORE_CS_SCOPE();
    GROUP_CHECK("MPI_Group_size", group, size);
    *size = g->size;
    return MPI_SUCCESS;
}
MPI_ALIAS(Group_size)

int PMPI_Group_rank(MPI_Group group, int *rank)
{
    CORE_CS_SCOPE();
    GROUP_CHECK("MPI_Group_rank", group, rank);
    *rank = mpi_group_rank_of(g, core.rank);
    return MPI_SUCCESS;
}
MPI_ALIAS(Group_rank)

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_incl";
    GROUP_CHECK(fn, group, newgroup);
    if (n < 0 || n > g->size || (n > 0 && ranks == NULL))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_RANK);
        for (int j = 0; j < i; j++)
            if (ranks[j] == ranks[i]) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_RANK);
    }
    struct mpi_group *ng = mpi_group_alloc(n);
    if (ng)
        for (int i = 0; i < n; i++)
            ng->world[i] = g->world[ranks[i]];
    return mpi_err(MPI_COMM_WORLD, fn, mpi_group_put(ng, newgroup));
}
MPI_ALIAS(Group_incl)

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group *newgroup)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_excl";
    GROUP_CHECK(fn, group, newgroup);
    if (n < 0 || n > g->size || (n > 0 && ranks == NULL))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    char *drop = calloc((size_t)g->size + 1, 1);
    if (drop == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= g->size || drop[ranks[i]]) {
            free(drop);
            return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_RANK);
        }
        drop[ranks[i]] = 1;
    }
    struct mpi_group *ng = mpi_group_alloc(g->size - n);
    if (ng)
        for (int i = 0, k = 0; i < g->size; i++)
            if (!drop[i]) ng->world[k++] = g->world[i];
    free(drop);
    return mpi_err(MPI_COMM_WORLD, fn, mpi_group_put(ng, newgroup));
}
MPI_ALIAS(Group_excl)

/* MPI_Group_range_incl/excl: the (first, last, stride) triplets expanded into a rank
 * list (malloc'ed, *total entries), or an MPI error class. */
static int mpi_group_ranges(const struct mpi_group *g, int n, int ranges[][3], int **list,
                            int *total)
{
    if (n < 0 || (n > 0 && ranges == NULL)) return MPI_ERR_ARG;
    int t = 0;
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0 || first < 0 || first >= g->size || last < 0 || last >= g->size)
            return MPI_ERR_RANK;
        if ((stride > 0 && first > last) || (stride < 0 && first < last)) return MPI_ERR_ARG;
        t += (last - first) / stride + 1;
        if (t > g->size) return MPI_ERR_RANK;
    }
    int *l = malloc((size_t)(t ? t : 1) * sizeof *l), k = 0;
    if (l == NULL) return MPI_ERR_NO_MEM;
    for (int i = 0; i < n; i++)
        for (int r = ranges[i][0]; ranges[i][2] > 0 ? r <= ranges[i][1] : r >= ranges[i][1];
             r += ranges[i][2])
            l[k++] = r;
    *list = l;
    *total = t;
    return MPI_SUCCESS;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_range_incl";
    GROUP_CHECK(fn, group, newgroup);
    int total, *list, rc = mpi_group_ranges(g, n, ranges, &list, &total);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    rc = PMPI_Group_incl(group, total, list, newgroup);
    free(list);
    return rc;
}
MPI_ALIAS(Group_range_incl)

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_translate_ranks";
    struct mpi_group *g1 = mpi_group_get(group1), *g2 = mpi_group_get(group2);
    if (g1 == NULL || g2 == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_GROUP);
    if (n < 0 || (n > 0 && (ranks1 == NULL || ranks2 == NULL)))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    for (int i = 0; i < n; i++)
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= g1->size))
            return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_RANK);
    for (int i = 0; i < n; i++)
        ranks2[i] = ranks1[i] == MPI_PROC_NULL ? MPI_PROC_NULL
                                               : mpi_group_rank_of(g2, g1->world[ranks1[i]]);
    return MPI_SUCCESS;
}
MPI_ALIAS(Group_translate_ranks)

static int mpi_group_cmp(const struct mpi_group *a, const struct mpi_group *b)
{
    if (a->size != b->size) return MPI_UNEQUAL;
    int same_order = 1;
    for (int i = 0; i < a->size; i++) {
        if (a->world[i] != b->world[i]) same_order = 0;
        if (mpi_group_rank_of(b, a->world[i]) == MPI_UNDEFINED) return MPI_UNEQUAL;
    }
    return same_order ? MPI_IDENT : MPI_SIMILAR;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int *result)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_compare";
    struct mpi_group *g1 = mpi_group_get(group1), *g2 = mpi_group_get(group2);
    if (g1 == NULL || g2 == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_GROUP);
    if (result == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    *result = mpi_group_cmp(g1, g2);
    return MPI_SUCCESS;
}
MPI_ALIAS(Group_compare)

int PMPI_Group_free(MPI_Group *group)
{
    CORE_CS_SCOPE();
    if (group == NULL || mpi_group_get(*group) == NULL)
        return mpi_err(MPI_COMM_WORLD, "MPI_Group_free", MPI_ERR_GROUP);
    if (*group != MPI_GROUP_EMPTY) {
        free(mpi_groups[*group]);
        mpi_groups[*group] = NULL;
    }
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(Group_free)

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int *result)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_compare";
    if (mpi_state()) return mpi_err(comm1, fn, MPI_ERR_OTHER);
    struct mpi_comm *a = mpi_comm_get(comm1), *b = mpi_comm_get(comm2);
    if (a == NULL || b == NULL) return mpi_err(comm1, fn, MPI_ERR_COMM);
    if (result == NULL) return mpi_err(comm1, fn, MPI_ERR_ARG);
    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    MPI_Group ga, gb;
    PMPI_Comm_group(comm1, &ga);
    PMPI_Comm_group(comm2, &gb);
    int r = mpi_group_cmp(mpi_group_get(ga), mpi_group_get(gb));
    *result = r == MPI_IDENT ? MPI_CONGRUENT : r;
    PMPI_Group_free(&ga);
    PMPI_Group_free(&gb);
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_compare)

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_create";
    COMM_CHECK(fn, comm, newcomm);
    struct mpi_group *g = mpi_group_get(group);
    if (g == NULL) return mpi_err(comm, fn, MPI_ERR_GROUP);
    for (int i = 0; i < g->size; i++) {
        int w = g->world[i];
        int in = c->tc == TERN_COMM_SELF ? w == core.rank : core_comm_rank_of(c->tc, w) >= 0;
        if (!in) return mpi_err(comm, fn, MPI_ERR_GROUP);
    }
    /* A split whose colour names the group and whose key is the rank in the group. MPI
     * lets processes pass different, disjoint groups (one new communicator each): the
     * colour is the rank in comm of the group's first member, the same for all its
     * members and different for disjoint groups. */
    int me = mpi_group_rank_of(g, core.rank);
    int color = MPI_UNDEFINED;
    if (me != MPI_UNDEFINED)
        color = c->tc == TERN_COMM_SELF ? 0 : core_comm_rank_of(c->tc, g->world[0]);
    return mpi_split(fn, comm, color, me, newcomm);
}
MPI_ALIAS(Comm_create)

/* ---- Cartesian topologies --------------------------------------------------------------- */

/* Factors cur[at..n-1] of r, non-increasing, each at most cur[at-1], from divs[] (the
 * divisors of the original product). Keeps in best the factorisation with the least
 * spread between largest and smallest dimension, and among those the one whose smallest
 * dimension is largest (then the next smallest, ...): the most balanced, as MPI asks,
 * and MPICH's choice (its test suite checks 75,000 cases). *spread is -1 before the
 * first. */
static void mpi_dims_search(int r, int n, int at, int *cur, const int *divs, int ndivs, int *best,
                            int *spread)
{
    if (at == n - 1) {
        if (at > 0 && r > cur[at - 1]) return;
        cur[at] = r;
        int sp = cur[0] - r;
        if (*spread >= 0 && sp > *spread) return;
        if (*spread >= 0 && sp == *spread) {
            int k = n - 1;
            while (k >= 0 && cur[k] == best[k])
                k--;
            if (k < 0 || cur[k] < best[k]) return;
        }
        *spread = sp;
        memcpy(best, cur, (size_t)n * sizeof(int));
        return;
    }
    int hi = at > 0 && cur[at - 1] < r ? cur[at - 1] : r;
    for (int i = 0; i < ndivs && divs[i] <= hi; i++) {
        int d = divs[i];
        if (r % d) continue;
        /* the remaining n - at factors are each <= d: d^(n-at) must reach r */
        long long reach = 1;
        for (int k = 0; k < n - at && reach < r; k++)
            reach *= d;
        if (reach < r) continue;
        /* the smallest dimension will be <= d: the spread is at least cur[0] - d */
        if (*spread >= 0 && at > 0 && cur[0] - d > *spread) continue;
        cur[at] = d;
        mpi_dims_search(r / d, n, at + 1, cur, divs, ndivs, best, spread);
    }
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Dims_create";
    if (nnodes < 1 || ndims < 0 || (ndims > 0 && dims == NULL))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    int rest = nnodes, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_DIMS);
        if (dims[i] > 0) {
            if (rest % dims[i]) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_DIMS);
            rest /= dims[i];
        } else {
            nfree++;
        }
    }
    if (nfree == 0) return rest == 1 ? MPI_SUCCESS : mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_DIMS);
    int *f = malloc((size_t)nfree * sizeof(int));
    if (f == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    for (int i = 0; i < nfree; i++)
        f[i] = 1;
    /* The most balanced factorisation (MPI: dimensions as close to each other as
     * possible), found by a search over divisors (mpi_dims_search). */
    int ndivs = 0;
    for (long long d = 1; d * d <= rest; d++)
        if (rest % d == 0) ndivs += d * d == rest ? 1 : 2;
    int *cur = malloc((size_t)nfree * sizeof(int)), *divs = malloc((size_t)ndivs * sizeof(int));
    if (cur == NULL || divs == NULL) {
        free(f);
        free(cur);
        free(divs);
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM);
    }
    int lo = 0, hi = ndivs - 1; /* divisors in increasing order */
    for (long long d = 1; d * d <= rest; d++)
        if (rest % d == 0) {
            divs[lo++] = (int)d;
            if (d * d != rest) divs[hi--] = (int)(rest / d);
        }
    int spread = -1; /* r x 1 x ... x 1 always fits, so f is always set */
    mpi_dims_search(rest, nfree, 0, cur, divs, ndivs, f, &spread);
    free(cur);
    free(divs);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0) dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}
MPI_ALIAS(Dims_create)

static int mpi_set_cart(MPI_Comm h, int ndims, const int dims[], const int periods[])
{
    struct mpi_comm *c = mpi_comm_get(h);
    if (c == NULL) return MPI_SUCCESS; /* MPI_COMM_NULL: not a member */
    c->ndims = ndims ? ndims : -1;
    if (ndims == 0) return MPI_SUCCESS;
    c->dims = malloc((size_t)ndims * sizeof(int));
    c->periods = malloc((size_t)ndims * sizeof(int));
    if (!c->dims || !c->periods) return MPI_ERR_NO_MEM;
    for (int i = 0; i < ndims; i++) {
        c->dims[i] = dims[i];
        c->periods[i] = periods[i] != 0;
    }
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_create";
    (void)reorder;
    COMM_CHECK(fn, comm_old, comm_cart);
    if (ndims < 0 || (ndims > 0 && (dims == NULL || periods == NULL)))
        return mpi_err(comm_old, fn, MPI_ERR_ARG);
    long prod = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0) return mpi_err(comm_old, fn, MPI_ERR_DIMS);
        prod *= dims[i];
        if (prod > c->tc->size) return mpi_err(comm_old, fn, MPI_ERR_DIMS);
    }
    int r = c->tc->rank;
    int rc = mpi_split(fn, comm_old, r < prod ? 0 : MPI_UNDEFINED, r, comm_cart);
    if (rc) return rc;
    return mpi_err(comm_old, fn, mpi_set_cart(*comm_cart, ndims, dims, periods));
}
MPI_ALIAS(Cart_create)

#define CART_CHECK(fn, comm)                                                                       \
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);                                      \
    struct mpi_comm *c = mpi_comm_get(comm);                                                       \
    if (c == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);                                         \
    if (c->ndims == 0) return mpi_err(comm, fn, MPI_ERR_TOPOLOGY);                                 \
    int nd = c->ndims < 0 ? 0 : c->ndims

static void mpi_cart_coords(const struct mpi_comm *c, int nd, int rank, int *coords)
{
    for (int i = nd - 1; i >= 0; i--) {
        coords[i] = rank % c->dims[i];
        rank /= c->dims[i];
    }
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_coords";
    CART_CHECK(fn, comm);
    if (rank < 0 || rank >= c->tc->size) return mpi_err(comm, fn, MPI_ERR_RANK);
    if (maxdims < nd || (nd > 0 && coords == NULL)) return mpi_err(comm, fn, MPI_ERR_ARG);
    mpi_cart_coords(c, nd, rank, coords);
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_coords)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_rank";
    CART_CHECK(fn, comm);
    if (rank == NULL || (nd > 0 && coords == NULL)) return mpi_err(comm, fn, MPI_ERR_ARG);
    int r = 0;
    for (int i = 0; i < nd; i++) {
        int x = coords[i];
        if (c->periods[i]) {
            x %= c->dims[i];
            if (x < 0) x += c->dims[i];
        } else if (x < 0 || x >= c->dims[i]) {
            return mpi_err(comm, fn, MPI_ERR_RANK);
        }
        r = r * c->dims[i] + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_rank)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_shift";
    CART_CHECK(fn, comm);
    if (direction < 0 || direction >= nd) return mpi_err(comm, fn, MPI_ERR_DIMS);
    if (rank_source == NULL || rank_dest == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    int coords[64];
    if (nd > 64) return mpi_err(comm, fn, MPI_ERR_DIMS);
    mpi_cart_coords(c, nd, c->tc->rank, coords);
    int me = coords[direction];
    int out[2], d[2] = {-disp, disp};
    for (int k = 0; k < 2; k++) {
        int x = me + d[k], n = c->dims[direction];
        if (c->periods[direction]) {
            x %= n;
            if (x < 0) x += n;
        } else if (x < 0 || x >= n) {
            out[k] = MPI_PROC_NULL;
            continue;
        }
        coords[direction] = x;
        int r = 0;
        for (int i = 0; i < nd; i++)
            r = r * c->dims[i] + coords[i];
        out[k] = r;
        coords[direction] = me;
    }
    *rank_source = out[0];
    *rank_dest = out[1];
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_shift)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_get";
    CART_CHECK(fn, comm);
    if (maxdims < nd || (nd > 0 && (!dims || !periods || !coords)))
        return mpi_err(comm, fn, MPI_ERR_ARG);
    for (int i = 0; i < nd; i++) {
        dims[i] = c->dims[i];
        periods[i] = c->periods[i];
    }
    mpi_cart_coords(c, nd, c->tc->rank, coords);
    return MPI_SUCCESS;
}
MPI_ALIAS(Cart_get)

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cartdim_get";
    CART_CHECK(fn, comm);
    if (ndims == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    *ndims = nd;
    return MPI_SUCCESS;
}
MPI_ALIAS(Cartdim_get)

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Cart_sub";
    CART_CHECK(fn, comm);
    if (newcomm == NULL || (nd > 0 && remain_dims == NULL)) return mpi_err(comm, fn, MPI_ERR_ARG);
    int coords[64], ndims = 0, dims[64], periods[64];
    if (nd > 64) return mpi_err(comm, fn, MPI_ERR_DIMS);
    mpi_cart_coords(c, nd, c->tc->rank, coords);
    /* Colour: position along the dropped dimensions; key: along the kept ones. */
    int color = 0, key = 0;
    for (int i = 0; i < nd; i++) {
        if (remain_dims[i]) {
            key = key * c->dims[i] + coords[i];
            dims[ndims] = c->dims[i];
            periods[ndims++] = c->periods[i];
        } else {
            color = color * c->dims[i] + coords[i];
        }
    }
    int rc = mpi_split(fn, comm, color, key, newcomm);
    if (rc) return rc;
    return mpi_err(comm, fn, mpi_set_cart(*newcomm, ndims, dims, periods));
}
MPI_ALIAS(Cart_sub)

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Topo_test", comm, status);
    *status = c->ndims ? MPI_CART : c->topo ? mpi_topo_kind(c->topo) : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
MPI_ALIAS(Topo_test)

/* ---- group set operations, MPI_Comm_create_group, communicator info and MPI_Comm_idup -- */

/* Members of a that are (in == 1) or are not (in == 0) in b, in a's order. */
static struct mpi_group *mpi_group_filter(const struct mpi_group *a, const struct mpi_group *b,
                                          int in, int extra)
{
    struct mpi_group *ng = mpi_group_alloc(a->size + extra);
    if (ng == NULL) return NULL;
    ng->size = 0;
    for (int i = 0; i < a->size; i++)
        if ((mpi_group_rank_of(b, a->world[i]) != MPI_UNDEFINED) == in)
            ng->world[ng->size++] = a->world[i];
    return ng;
}

#define GROUP2_CHECK(fn, h1, h2, out)                                                              \
    struct mpi_group *g1 = mpi_group_get(h1), *g2 = mpi_group_get(h2);                             \
    if (g1 == NULL || g2 == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_GROUP);               \
    if ((out) == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG)

/* Union: group1's members, then group2's that are not in group1, each in its order. */
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_union";
    GROUP2_CHECK(fn, group1, group2, newgroup);
    struct mpi_group *ng = mpi_group_filter(g1, g1, 1, g2->size);
    if (ng)
        for (int i = 0; i < g2->size; i++)
            if (mpi_group_rank_of(g1, g2->world[i]) == MPI_UNDEFINED)
                ng->world[ng->size++] = g2->world[i];
    return mpi_err(MPI_COMM_WORLD, fn, mpi_group_put(ng, newgroup));
}
MPI_ALIAS(Group_union)

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_intersection";
    GROUP2_CHECK(fn, group1, group2, newgroup);
    return mpi_err(MPI_COMM_WORLD, fn, mpi_group_put(mpi_group_filter(g1, g2, 1, 0), newgroup));
}
MPI_ALIAS(Group_intersection)

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group *newgroup)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_difference";
    GROUP2_CHECK(fn, group1, group2, newgroup);
    return mpi_err(MPI_COMM_WORLD, fn, mpi_group_put(mpi_group_filter(g1, g2, 0, 0), newgroup));
}
MPI_ALIAS(Group_difference)

/* The ranges expand into a rank list for MPI_Group_excl (which rejects repeats). */
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group *newgroup)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Group_range_excl";
    GROUP_CHECK(fn, group, newgroup);
    int total, *list, rc = mpi_group_ranges(g, n, ranges, &list, &total);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    rc = PMPI_Group_excl(group, total, list, newgroup);
    free(list);
    return rc;
}
MPI_ALIAS(Group_range_excl)

/*
 * MPI_Comm_create_group: collective over the group's members only. They agree on a
 * context id among themselves (core_comm_dup on a communicator object that lists just
 * them, talking on comm's collective context, where messages from non-members can never
 * match). As the members' calls on comm are ordered like any collective, `tag` is not
 * needed to keep concurrent calls apart and is only checked.
 */
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_create_group";
    COMM_CHECK(fn, comm, newcomm);
    struct mpi_group *g = mpi_group_get(group);
    if (g == NULL) return mpi_err(comm, fn, MPI_ERR_GROUP);
    if (tag < 0 || tag > TERN_TAG_UB) return mpi_err(comm, fn, MPI_ERR_TAG);
    int me = -1;
    for (int i = 0; i < g->size; i++) {
        if (core_comm_rank_of(c->tc, g->world[i]) < 0) return mpi_err(comm, fn, MPI_ERR_GROUP);
        if (g->world[i] == core.rank) me = i;
    }
    if (me < 0) { /* not a member: MPI_COMM_NULL, as MPI_Comm_create gives */
        *newcomm = MPI_COMM_NULL;
        return MPI_SUCCESS;
    }
    int *comm_of = malloc((size_t)core.size * sizeof(int));
    if (comm_of == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    for (int w = 0; w < core.size; w++)
        comm_of[w] = -1;
    for (int i = 0; i < g->size; i++)
        comm_of[g->world[i]] = i;
    struct tern_comm sub = {.magic = CORE_COMM_MAGIC,
                            .ctx = c->tc->ctx,
                            .rank = me,
                            .size = g->size,
                            .world_of = g->world,
                            .comm_of = comm_of};
    struct tern_comm *tc;
    int rc = core_comm_dup(&sub, &tc);
    free(comm_of);
    if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
    return mpi_err(comm, fn, mpi_comm_wrap(tc, c, newcomm));
}
MPI_ALIAS(Comm_create_group)

/* Info hints on communicators: tern uses none, so setting them is accepted (the info
 * handle checked) and MPI_Comm_get_info returns a new, empty info: "the hints in use". */
static int mpi_info_check(MPI_Info info)
{
    return mpi_info_valid(info) ? MPI_SUCCESS : MPI_ERR_INFO;
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info info)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_set_info";
    if (mpi_state()) return mpi_err(comm, fn, MPI_ERR_OTHER);
    if (mpi_comm_get(comm) == NULL) return mpi_err(comm, fn, MPI_ERR_COMM);
    return mpi_err(comm, fn, mpi_info_check(info));
}
MPI_ALIAS(Comm_set_info)

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info *info_used)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_get_info";
    COMM_CHECK(fn, comm, info_used);
    return PMPI_Info_create(info_used);
}
MPI_ALIAS(Comm_get_info)

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_dup_with_info";
    COMM_CHECK(fn, comm, newcomm);
    int rc = mpi_info_check(info);
    if (rc) return mpi_err(comm, fn, rc);
    return PMPI_Comm_dup(comm, newcomm);
}
MPI_ALIAS(Comm_dup_with_info)

/* MPI_Comm_idup duplicates at once (the context-id agreement runs to completion inside
 * the call) and returns a request that is already complete. Programs that start the dup
 * and only then do what lets the other members reach it (a send they wait for) would
 * block here; see docs/MPI.md. */
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_idup";
    COMM_CHECK(fn, comm, newcomm);
    if (request == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_new(MPI_RK_DONE, comm);
    if (mr == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    int rc = PMPI_Comm_dup(comm, newcomm);
    if (rc) {
        mpi_req_release(mr);
        return rc;
    }
    *request = mr->handle;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_idup)

/* tern has no inter-communicators: every communicator is an intra-communicator, for
 * which these are erroneous (MPI_ERR_COMM). */
int PMPI_Comm_remote_size(MPI_Comm comm, int *size)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_remote_size", comm, size);
    return mpi_err(comm, "MPI_Comm_remote_size", MPI_ERR_COMM);
}
MPI_ALIAS(Comm_remote_size)

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group *group)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_remote_group", comm, group);
    return mpi_err(comm, "MPI_Comm_remote_group", MPI_ERR_COMM);
}
MPI_ALIAS(Comm_remote_group)

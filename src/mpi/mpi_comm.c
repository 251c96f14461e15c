/*
 * mpi_comm.c - MPI communicators and their attributes. A communicator handle wraps a
 * core communicator (struct tern_comm: context ids and rank maps) with what only MPI
 * has: error handler, name, attributes, topology. Groups are in mpi_group.c, Cartesian
 * topologies in mpi_cart.c.
 */
#include <stdio.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_comm_impl.h"

struct mpi_comm **mpi_comms;
int mpi_ncomms;

/* ---- the communicator table -------------------------------------------------------- */

static int mpi_comm_slot(void)
{
    for (int i = MPI_COMM_NPREDEF; i < mpi_ncomms; i++)
        if (mpi_comms[i] == NULL) return i;
    if (mpi_ncomms >= MPI_COMM_SLOTS) return -1;
    int n = mpi_ncomms ? mpi_ncomms * 2 : 16;
    struct mpi_comm **t = realloc(mpi_comms, (size_t)n * sizeof *t);
    if (t == NULL) return -1;
    memset(t + mpi_ncomms, 0, (size_t)(n - mpi_ncomms) * sizeof *t);
    int slot = mpi_ncomms < MPI_COMM_NPREDEF ? MPI_COMM_NPREDEF : mpi_ncomms;
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
    if (slot < MPI_COMM_NPREDEF) {
        c->handle = slot == 0 ? MPI_COMM_WORLD : MPI_COMM_SELF;
    } else {
        unsigned gen = 1 + mpi_comm_serial++ % (INT_MAX / MPI_COMM_SLOTS - 1);
        c->handle = slot + MPI_COMM_SLOTS * (int)gen;
    }
    if (handle) *handle = c->handle;
    c->errh = errh;
    c->win = MPI_WIN_NULL;
    snprintf(c->name, sizeof c->name, "%s", name);
    mpi_comms[slot] = c;
    return 0;
}

int mpi_comm_init(void)
{
    if (mpi_comm_slot() < 0) return -1;
    if (mpi_comm_put(MPI_COMM_WORLD & (MPI_COMM_SLOTS - 1), TERN_COMM_WORLD, MPI_ERRORS_ARE_FATAL,
                     "MPI_COMM_WORLD", NULL) ||
        mpi_comm_put(MPI_COMM_SELF & (MPI_COMM_SLOTS - 1), TERN_COMM_SELF, MPI_ERRORS_ARE_FATAL,
                     "MPI_COMM_SELF", NULL))
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
    mpi_comms[c->handle & (MPI_COMM_SLOTS - 1)] = NULL;
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
int mpi_comm_wrap(struct tern_comm *tc, const struct mpi_comm *parent, MPI_Comm *out)
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
    *size = c->inter ? c->ltc->size : c->tc->size;
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
    MPI_Comm h;
    int rc;
    if (c->inter) {
        rc = mpi_ic_dup(c, &h);
        if (rc) {
            *newcomm = MPI_COMM_NULL;
            return mpi_err(comm, fn, rc);
        }
    } else {
        struct tern_comm *tc;
        rc = core_comm_dup(c->tc, &tc);
        if (rc) return mpi_err(comm, fn, mpi_from_tern(rc));
        rc = mpi_comm_wrap(tc, c, &h);
        if (rc) {
            *newcomm = MPI_COMM_NULL;
            return mpi_err(comm, fn, rc);
        }
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

int mpi_split(const char *fn, MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c->inter) return mpi_err(comm, fn, mpi_ic_split(c, color, key, newcomm));
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
    COMM_CHECK(fn, comm, newcomm);
    if (!mpi_info_valid(info)) return mpi_err(comm, fn, MPI_ERR_INFO);
    int node = core.boot.node_of ? core.boot.node_of[core.rank] : 0;
    int color;
    if (split_type == MPI_UNDEFINED) {
        color = MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_SHARED) {
        color = node;
    } else if (split_type == MPI_COMM_TYPE_HW_GUIDED) {
        /* MPI 4.0 7.4.2: every process gives the same value; an unknown one (or none)
         * gives MPI_COMM_NULL everywhere. */
        char v[MPI_MAX_INFO_VAL + 1] = "";
        int flag = 0;
        if (info != MPI_INFO_NULL)
            PMPI_Info_get(info, "mpi_hw_resource_type", MPI_MAX_INFO_VAL, v, &flag);
        color = flag && (!strcmp(v, "mpi_shared_memory") || !strcmp(v, "machine")) ? node
                                                                                   : MPI_UNDEFINED;
    } else if (split_type == MPI_COMM_TYPE_HW_UNGUIDED) {
        /* A strict subset of comm's group: the node's processes when comm spans nodes. */
        int n = 0, split = 0;
        struct mpi_comm *cc = mpi_comm_get(comm);
        PMPI_Comm_size(comm, &n);
        for (int i = 0; i < n && core.boot.node_of && !cc->inter; i++)
            if (core.boot.node_of[core_comm_world(cc->tc, i)] != node) split = 1;
        color = split ? node : MPI_UNDEFINED;
        if (split && info != MPI_INFO_NULL)
            PMPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
    } else {
        return mpi_err(comm, fn, MPI_ERR_ARG);
    }
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
    if (c->inter) mpi_ic_free(c);
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
    if (c->inter) return mpi_err(comm, fn, mpi_ic_create(c, g, newcomm));
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

/*
 * MPI_Comm_create_group: collective over the group's members only. They agree on a
 * context id among themselves (core_comm_dup on a communicator object that lists just
 * them, talking on comm's collective context, where messages from non-members can never
 * match). `tag` keeps calls made on one parent by different threads at once apart: it
 * offsets the agreement's internal tags (agree_tag, between the core's fixed internal
 * tags and the background agreements' ones).
 */
int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_create_group";
    COMM_CHECK(fn, comm, newcomm);
    if (c->inter) return mpi_err(comm, fn, MPI_ERR_COMM);
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
                            .comm_of = comm_of,
                            .agree_tag = 0x10000000 + ((tag & 0x03ffffff) << 2)};
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

/*
 * MPI_Comm_idup: the context-id agreement runs in the background (core_comm_idup_start,
 * advanced by the progress engine), so idups of overlapping communicators started in
 * different orders on different processes complete. The new handle is made and written
 * to *newcomm when the request completes (MPI_Wait/MPI_Test), attributes copied then.
 * An intercommunicator's agreement spans both groups (mpi_ic_idup_start).
 */
int PMPI_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_idup";
    COMM_CHECK(fn, comm, newcomm);
    if (request == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    struct mpi_req *mr = mpi_req_new(MPI_RK_IDUP, comm);
    core_req_t *r = mr ? core_req_alloc(CORE_REQ_COLL) : NULL;
    if (r == NULL) {
        if (mr) mpi_req_release(mr);
        return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    }
    r->state = CORE_RS_POSTED;
    r->ctx = CORE_CTX_NONE;
    struct core_ctx_nb *nb;
    int rc = c->inter ? mpi_ic_idup_start(c, r, &nb)
                      : mpi_from_tern(core_comm_idup_start(c->tc, r, &nb));
    if (rc) {
        core_req_free(r);
        mpi_req_release(mr);
        return mpi_err(comm, fn, rc);
    }
    r->user = nb;
    mr->r = r;
    mr->pbuf = newcomm;
    *newcomm = MPI_COMM_NULL; /* until the request completes */
    *request = mr->handle;
    return MPI_SUCCESS;
}
MPI_ALIAS(Comm_idup)

int PMPI_Comm_idup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm, MPI_Request *request)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_idup_with_info";
    COMM_CHECK(fn, comm, newcomm);
    int rc = mpi_info_check(info);
    if (rc) return mpi_err(comm, fn, rc);
    return PMPI_Comm_idup(comm, newcomm, request);
}
MPI_ALIAS(Comm_idup_with_info)

int mpi_idup_finish(struct mpi_req *mr)
{
    core_req_t *r = mr->r;
    struct core_ctx_nb *nb = r->user;
    MPI_Comm *out = (MPI_Comm *)mr->pbuf;
    struct mpi_comm *parent = mpi_comm_get(mr->comm);
    struct tern_comm *tc = NULL;
    uint16_t ctx[3];
    int inter = parent && parent->inter;
    int rc = inter ? core_ctx_agree_test(nb, ctx) : core_comm_idup_test(nb, &tc);
    core_comm_idup_free(nb);
    core_req_free(r);
    mr->r = NULL;
    mr->pbuf = NULL;
    if (rc < 0) return mpi_from_tern(rc);
    MPI_Comm h;
    rc = inter ? mpi_ic_idup_finish(parent, ctx, &h) : mpi_comm_wrap(tc, parent, &h);
    if (rc) return rc;
    if (parent && (rc = mpi_comm_inherit(parent, mpi_comm_get(h)))) {
        PMPI_Comm_free(&h);
        return rc;
    }
    *out = h;
    return MPI_SUCCESS;
}

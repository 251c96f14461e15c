/*
 * mpi_group.c - MPI groups: lists of world ranks, made from a communicator
 * (MPI_Comm_group) or from other groups (incl/excl and their range forms, union,
 * intersection, difference), compared, translated and freed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_comm_impl.h"

/* ---- groups ------------------------------------------------------------------------ */

static struct mpi_group **mpi_groups;
static int mpi_ngroups;
static struct mpi_group mpi_group_empty = {0};

struct mpi_group *mpi_group_get(MPI_Group h)
{
    if (h == MPI_GROUP_EMPTY) return &mpi_group_empty;
    return h >= 2 && h < mpi_ngroups ? mpi_groups[h] : NULL; /* user groups: slots 2 ... */
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

int mpi_group_rank_of(const struct mpi_group *g, int world)
{
    for (int i = 0; i < g->size; i++)
        if (g->world[i] == world) return i;
    return MPI_UNDEFINED;
}

int mpi_group_make(const int *world, int n, MPI_Group *out)
{
    struct mpi_group *g = mpi_group_alloc(n);
    if (g) memcpy(g->world, world, (size_t)n * sizeof(int));
    return mpi_group_put(g, out);
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group *group)
{
    CORE_CS_SCOPE();
    COMM_CHECK("MPI_Comm_group", comm, group);
    const struct tern_comm *tc = c->inter ? c->ltc : c->tc; /* the local group */
    struct mpi_group *g = mpi_group_alloc(tc->size);
    if (g)
        for (int i = 0; i < g->size; i++)
            g->world[i] = tc == TERN_COMM_SELF ? core.rank : core_comm_world(tc, i);
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

int mpi_group_cmp(const struct mpi_group *a, const struct mpi_group *b)
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

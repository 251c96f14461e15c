/*
 * shmem_aset.c - the OpenSHMEM 1.4 active-set collectives: shmem_barrier, shmem_sync,
 * broadcast32/64, collect32/64, fcollect32/64 and the TYPE_OP_to_all reductions. An
 * active set (PE_start, logPE_stride, PE_size) becomes a team of those world PEs, and
 * each routine is the team routine on it (so the tern collectives and their TERN_COLL_*
 * selection do the work). Only the set's members call, so its team is made by them alone:
 * they agree on a context id among themselves over a duplicate of the world communicator
 * kept for that (as MPI_Comm_create_group does), where nothing else ever talks. A set's
 * team is cached until shmem_finalize, so a loop over one set agrees once. pSync and pWrk
 * are never touched: tern's collectives keep their own state.
 */
#include <stdlib.h>
#include <string.h>

#include "shmem/shmem_impl.h"

struct osh_aset {
    int start, logstride, size;
    struct shmem_team team;
    struct osh_aset *next;
};
static struct osh_aset *osh_asets;
static tern_comm_t osh_aset_base; /* where members of a new set agree on its context */

int osh_aset_init(void)
{
    return tern_comm_dup(TERN_COMM_WORLD, &osh_aset_base);
}

void osh_aset_release(int free_comms)
{
    while (osh_asets) {
        struct osh_aset *a = osh_asets;
        osh_asets = a->next;
        if (free_comms && a->team.owns_comm) tern_comm_free(&a->team.comm);
        free(a);
    }
    if (free_comms && osh_aset_base) tern_comm_free(&osh_aset_base);
    osh_aset_base = TERN_COMM_NULL;
}

/* The team of an active set, made on first use; bad sets and non-members are fatal. */
static shmem_team_t osh_aset_team(const char *fn, int start, int logstride, int size)
{
    osh_check(fn);
    if (size < 1 || start < 0 || logstride < 0 || logstride > 30 ||
        (long long)start + ((long long)(size - 1) << logstride) >= osh.npes)
        osh_fatal(fn, TERN_ERR_INVAL, "active set (start %d, log stride %d, size %d) is not in 0..%d",
                  start, logstride, size, osh.npes - 1);
    int off = osh.me - start, me = -1;
    if (off >= 0 && (off & ((1 << logstride) - 1)) == 0 && (off >> logstride) < size)
        me = off >> logstride;
    if (me < 0)
        osh_fatal(fn, TERN_ERR_INVAL, "PE %d is not in active set (start %d, log stride %d, size %d)",
                  osh.me, start, logstride, size);
    if (start == 0 && logstride == 0 && size == osh.npes) return SHMEM_TEAM_WORLD;
    for (struct osh_aset *a = osh_asets; a; a = a->next)
        if (a->start == start && a->logstride == logstride && a->size == size) return &a->team;
    struct osh_aset *a = calloc(1, sizeof *a);
    int *world_of = malloc((size_t)size * sizeof(int));
    int *comm_of = malloc((size_t)osh.npes * sizeof(int));
    int rc = TERN_ERR_NOMEM;
    if (a && world_of && comm_of) {
        for (int w = 0; w < osh.npes; w++)
            comm_of[w] = -1;
        for (int i = 0; i < size; i++) {
            world_of[i] = start + (i << logstride);
            comm_of[world_of[i]] = i;
        }
        struct tern_comm sub = {.magic = CORE_COMM_MAGIC,
                                .ctx = osh_aset_base->ctx,
                                .rank = me,
                                .size = size,
                                .world_of = world_of,
                                .comm_of = comm_of};
        rc = core_comm_dup(&sub, &a->team.comm);
    }
    free(world_of);
    free(comm_of);
    if (rc) {
        free(a);
        osh_fatal(fn, rc, "cannot make the team of active set (start %d, log stride %d, size %d)",
                  start, logstride, size);
    }
    a->start = start;
    a->logstride = logstride;
    a->size = size;
    a->team.magic = OSH_TEAM_MAGIC;
    a->team.owns_comm = 1;
    a->next = osh_asets;
    osh_asets = a;
    return &a->team;
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    shmem_team_t t = osh_aset_team("shmem_barrier", PE_start, logPE_stride, PE_size);
    osh_quiet();
    shmem_team_sync(t);
}

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    shmem_team_sync(osh_aset_team("shmem_sync", PE_start, logPE_stride, PE_size));
}

static void osh_aset_bcast(const char *fn, void *dest, const void *source, size_t nbytes,
                           int root, int start, int logstride, int size)
{
    shmem_team_t t = osh_aset_team(fn, start, logstride, size);
    if (root < 0 || root >= size)
        osh_fatal(fn, TERN_ERR_RANK, "PE_root %d is not in the active set (size %d)", root, size);
    /* The root's dest is left alone (1.4): it broadcasts straight from source. */
    void *buf = t->comm->rank == root ? (void *)(uintptr_t)source : dest;
    int rc = tern_bcast(buf, nbytes, root, t->comm);
    if (rc) osh_error(rc);
}

void shmem_broadcast32(void *dest, const void *source, size_t nelems, int PE_root,
                       int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    osh_aset_bcast("shmem_broadcast32", dest, source, nelems * 4, PE_root, PE_start,
                   logPE_stride, PE_size);
}

void shmem_broadcast64(void *dest, const void *source, size_t nelems, int PE_root,
                       int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    osh_aset_bcast("shmem_broadcast64", dest, source, nelems * 8, PE_root, PE_start,
                   logPE_stride, PE_size);
}

#define OSH_ASET_COLLECT(NAME, CALL, ESIZE)                                                         \
    void NAME(void *dest, const void *source, size_t nelems, int PE_start, int logPE_stride,        \
              int PE_size, long *pSync)                                                            \
    {                                                                                              \
        (void)pSync;                                                                               \
        CALL(osh_aset_team(#NAME, PE_start, logPE_stride, PE_size), dest, source,                  \
             nelems *(ESIZE));                                                                     \
    }
OSH_ASET_COLLECT(shmem_collect32, shmem_collectmem, 4)
OSH_ASET_COLLECT(shmem_collect64, shmem_collectmem, 8)
OSH_ASET_COLLECT(shmem_fcollect32, shmem_fcollectmem, 4)
OSH_ASET_COLLECT(shmem_fcollect64, shmem_fcollectmem, 8)

/* The types the team reductions have: the _to_all form is the team form on the set. */
#define OSH_TOALL_OP(N, T, OP)                                                                     \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,            \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync)            \
    {                                                                                              \
        (void)pWrk, (void)pSync;                                                                   \
        static const char fn[] = "shmem_" #N "_" #OP "_to_all";                                    \
        shmem_team_t t = osh_aset_team(fn, PE_start, logPE_stride, PE_size);                       \
        if (nreduce < 0) osh_fatal(fn, TERN_ERR_INVAL, "nreduce %d < 0", nreduce);                 \
        shmem_##N##_##OP##_reduce(t, dest, source, (size_t)nreduce);                               \
    }
#define OSH_TOALL_INT(N, T)                                                                        \
    OSH_TOALL_OP(N, T, and)                                                                        \
    OSH_TOALL_OP(N, T, or)                                                                         \
    OSH_TOALL_OP(N, T, xor)                                                                        \
    OSH_TOALL_OP(N, T, max)                                                                        \
    OSH_TOALL_OP(N, T, min)                                                                        \
    OSH_TOALL_OP(N, T, sum)                                                                        \
    OSH_TOALL_OP(N, T, prod)
#define OSH_TOALL_FLT(N, T)                                                                        \
    OSH_TOALL_OP(N, T, max)                                                                        \
    OSH_TOALL_OP(N, T, min)                                                                        \
    OSH_TOALL_OP(N, T, sum)                                                                        \
    OSH_TOALL_OP(N, T, prod)
SHMEM__TOALL_INT_TYPES(OSH_TOALL_INT)
OSH_TOALL_FLT(float, float)
OSH_TOALL_FLT(double, double)

/*
 * long double has no tern datatype: every member's elements are gathered and each member
 * folds them in set order (the same order everywhere, so every member gets the same bits).
 */
static void osh_ld_to_all(const char *fn, long double *dest, const long double *source, int n,
                          int start, int logstride, int size, int op)
{
    shmem_team_t t = osh_aset_team(fn, start, logstride, size);
    if (n < 0) osh_fatal(fn, TERN_ERR_INVAL, "nreduce %d < 0", n);
    if (n == 0) return;
    long double *all = malloc((size_t)n * (size_t)size * sizeof *all);
    if (all == NULL) {
        osh_error(TERN_ERR_NOMEM);
        return;
    }
    if (shmem_fcollectmem(t, all, source, (size_t)n * sizeof *all) == 0) {
        for (int k = 0; k < n; k++) {
            long double v = all[k];
            for (int p = 1; p < size; p++) {
                long double x = all[(size_t)p * (size_t)n + (size_t)k];
                switch (op) {
                case 0: v = x > v ? x : v; break;
                case 1: v = x < v ? x : v; break;
                case 2: v += x; break;
                default: v *= x; break;
                }
            }
            dest[k] = v;
        }
    }
    free(all);
}

#define OSH_TOALL_LD(OP, CODE)                                                                     \
    void shmem_longdouble_##OP##_to_all(long double *dest, const long double *source,              \
                                        int nreduce, int PE_start, int logPE_stride, int PE_size,  \
                                        long double *pWrk, long *pSync)                            \
    {                                                                                              \
        (void)pWrk, (void)pSync;                                                                   \
        osh_ld_to_all("shmem_longdouble_" #OP "_to_all", dest, source, nreduce, PE_start,          \
                      logPE_stride, PE_size, CODE);                                                \
    }
OSH_TOALL_LD(max, 0)
OSH_TOALL_LD(min, 1)
OSH_TOALL_LD(sum, 2)
OSH_TOALL_LD(prod, 3)

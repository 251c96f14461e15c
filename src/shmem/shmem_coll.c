/*
 * shmem_coll.c - teams and collectives. A team is a tern communicator of its members
 * (world: a duplicate of TERN_COMM_WORLD, so SHMEM's collectives never interleave with
 * the program's own on TERN_COMM_WORLD; shared: split by node; strided splits: split of
 * the parent), and every collective is the matching tern collective on it, so SHMEM
 * gets tern's algorithms and their TERN_COLL_* selection.
 */
#include <stdlib.h>
#include <string.h>

#include "shmem/shmem_impl.h"

struct shmem_team shmem__team_world;
struct shmem_team shmem__team_shared;

int osh_teams_init(void)
{
    tern_comm_t w = TERN_COMM_NULL, s = TERN_COMM_NULL;
    int rc = tern_comm_dup(TERN_COMM_WORLD, &w);
    /* The shared team is what shmem_ptr reaches: PEs of my node whose memory is mapped
     * here (with self). */
    int on_shm = 0;
    for (int pe = 0; pe < osh.npes; pe++)
        if (pe != osh.me && core_peer_can_map(pe)) on_shm = 1;
    int color = on_shm ? core.boot.node_of[osh.me] : osh.npes + osh.me;
    if (rc == 0) rc = tern_comm_split(TERN_COMM_WORLD, color, osh.me, &s);
    if (rc) return rc;
    shmem__team_world = (struct shmem_team){OSH_TEAM_MAGIC, w, 1};
    shmem__team_shared = (struct shmem_team){OSH_TEAM_MAGIC, s, 1};
    return osh_aset_init();
}

void osh_teams_release(int free_comms)
{
    osh_aset_release(free_comms);
    if (free_comms) {
        if (shmem__team_world.comm) tern_comm_free(&shmem__team_world.comm);
        if (shmem__team_shared.comm) tern_comm_free(&shmem__team_shared.comm);
    }
    memset(&shmem__team_world, 0, sizeof shmem__team_world);
    memset(&shmem__team_shared, 0, sizeof shmem__team_shared);
}

static int osh_team_ok(shmem_team_t t)
{
    return osh.up && t && t->magic == OSH_TEAM_MAGIC && t->comm;
}

int shmem_team_my_pe(shmem_team_t team)
{
    return osh_team_ok(team) ? team->comm->rank : -1;
}

int shmem_team_n_pes(shmem_team_t team)
{
    return osh_team_ok(team) ? team->comm->size : -1;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    if (!osh_team_ok(src_team) || !osh_team_ok(dest_team)) return -1;
    if (src_pe < 0 || src_pe >= src_team->comm->size) return -1;
    int w = core_comm_world(src_team->comm, src_pe);
    return core_comm_rank_of(dest_team->comm, w);
}

int shmem_team_split_strided(shmem_team_t parent, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team)
{
    (void)config, (void)config_mask;
    if (new_team) *new_team = SHMEM_TEAM_INVALID;
    if (!osh_team_ok(parent) || new_team == NULL || size < 1) return -1;
    int n = parent->comm->size;
    long last = (long)start + (long)stride * (size - 1);
    if (start < 0 || start >= n || last < 0 || last >= n || (stride == 0 && size > 1)) return -1;
    int me = parent->comm->rank, idx = -1;
    for (int i = 0; i < size; i++)
        if (start + stride * i == me) idx = i;
    tern_comm_t c = TERN_COMM_NULL;
    int rc = tern_comm_split(parent->comm, idx >= 0 ? 0 : TERN_UNDEFINED, idx, &c);
    if (rc) {
        osh_error(rc);
        return -1;
    }
    if (c == TERN_COMM_NULL) return 0;
    struct shmem_team *t = malloc(sizeof *t);
    if (t == NULL) {
        tern_comm_free(&c);
        return -1;
    }
    *t = (struct shmem_team){OSH_TEAM_MAGIC, c, 1};
    *new_team = t;
    return 0;
}

int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    (void)config_mask;
    if (!osh_team_ok(team)) return -1;
    if (config) config->num_contexts = 0;
    return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
    if (!osh_team_ok(team) || team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED) return;
    tern_comm_free(&team->comm);
    team->magic = 0;
    free(team);
}

int shmem_team_sync(shmem_team_t team)
{
    if (!osh_team_ok(team)) return -1;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    int rc = tern_barrier(team->comm);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (rc) osh_error(rc);
    return rc ? -1 : 0;
}

/* ---- collectives ------------------------------------------------------------------------ */

static int osh_coll_rc(int rc)
{
    if (rc) osh_error(rc);
    return rc ? -1 : 0;
}

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root)
{
    if (!osh_team_ok(team) || PE_root < 0 || PE_root >= team->comm->size) return -1;
    if (team->comm->rank == PE_root && dest != source && nelems) memmove(dest, source, nelems);
    return osh_coll_rc(tern_bcast(dest, nelems, PE_root, team->comm));
}

int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (!osh_team_ok(team)) return -1;
    return osh_coll_rc(tern_allgather(source, dest, nelems, team->comm));
}

int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (!osh_team_ok(team)) return -1;
    int n = team->comm->size;
    size_t *counts = malloc(2 * (size_t)n * sizeof(size_t));
    if (counts == NULL) return osh_coll_rc(TERN_ERR_NOMEM);
    size_t *displs = counts + n;
    int rc = tern_allgather(&nelems, counts, sizeof nelems, team->comm);
    if (rc == 0) {
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            displs[i] = at;
            at += counts[i];
        }
        rc = tern_allgatherv(source, nelems, dest, counts, displs, team->comm);
    }
    free(counts);
    return osh_coll_rc(rc);
}

int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    if (!osh_team_ok(team)) return -1;
    return osh_coll_rc(tern_alltoall(source, dest, nelems, team->comm));
}

#define OSH_COLL_DEF(N, T)                                                                         \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,          \
                              int PE_root)                                                         \
    {                                                                                              \
        return shmem_broadcastmem(team, dest, source, nelems * sizeof(T), PE_root);                \
    }                                                                                              \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                              \
        return shmem_fcollectmem(team, dest, source, nelems * sizeof(T));                          \
    }                                                                                              \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)            \
    {                                                                                              \
        return shmem_collectmem(team, dest, source, nelems * sizeof(T));                           \
    }                                                                                              \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                              \
        return shmem_alltoallmem(team, dest, source, nelems * sizeof(T));                          \
    }
SHMEM__RMA_TYPES(OSH_COLL_DEF)

/* The tern datatype of a C integer (by size and signedness) or floating type. */
static tern_datatype_t osh_dt(size_t size, int sgn, int flt)
{
    if (flt) return size == 4 ? TERN_FLOAT : TERN_DOUBLE;
    switch (size) {
    case 1:
        return sgn ? TERN_INT8 : TERN_UINT8;
    case 2:
        return sgn ? TERN_INT16 : TERN_UINT16;
    case 4:
        return sgn ? TERN_INT32 : TERN_UINT32;
    default:
        return sgn ? TERN_INT64 : TERN_UINT64;
    }
}

static int osh_reduce(shmem_team_t team, void *dest, const void *source, size_t n,
                      tern_datatype_t dt, tern_op_t op)
{
    if (!osh_team_ok(team)) return -1;
    const void *s = source == dest ? TERN_IN_PLACE : source;
    return osh_coll_rc(tern_allreduce(s, dest, n, dt, op, team->comm));
}

#define OSH_RED_OP(N, T, OP, TOP, FLT)                                                             \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)     \
    {                                                                                              \
        return osh_reduce(team, dest, source, nreduce,                                             \
                          osh_dt(sizeof(T), FLT || ((T)-1 < (T)1), FLT), TOP);                     \
    }
#define OSH_RED_INT(N, T)                                                                          \
    OSH_RED_OP(N, T, and, TERN_BAND, 0)                                                            \
    OSH_RED_OP(N, T, or, TERN_BOR, 0)                                                              \
    OSH_RED_OP(N, T, xor, TERN_BXOR, 0)                                                            \
    OSH_RED_OP(N, T, max, TERN_MAX, 0)                                                             \
    OSH_RED_OP(N, T, min, TERN_MIN, 0)                                                             \
    OSH_RED_OP(N, T, sum, TERN_SUM, 0)                                                             \
    OSH_RED_OP(N, T, prod, TERN_PROD, 0)
#define OSH_RED_FLT(N, T)                                                                          \
    OSH_RED_OP(N, T, max, TERN_MAX, 1)                                                             \
    OSH_RED_OP(N, T, min, TERN_MIN, 1)                                                             \
    OSH_RED_OP(N, T, sum, TERN_SUM, 1)                                                             \
    OSH_RED_OP(N, T, prod, TERN_PROD, 1)
SHMEM__RED_INT_TYPES(OSH_RED_INT)
SHMEM__RED_FLT_TYPES(OSH_RED_FLT)

/*
 * mpi_win.c - MPI windows (one-sided communication): creation in its four flavors
 * (Win_create, Win_allocate, Win_allocate_shared, Win_create_dynamic) with the node
 * segment every window maps, attach/detach, hints (Win_set_info/get_info), Win_free,
 * the queries (group, attributes, shared_query, error handler, name) and the release of
 * windows left at MPI_Finalize. The design of the one-sided layer is described in
 * mpi_win_impl.h; the operations live in mpi_rma_*.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi/mpi_win_impl.h"
#include "util/log.h"
#include "util/shmseg.h"
#include "util/tunables.h"

struct mpi_win **rma_wins;
int rma_nwins;
struct mpi_win *rma_by_ctx[CORE_CTX_MAX];
static int rma_registered;
static unsigned rma_seq;
int rma_nqueued; /* windows with queued lock requests */

struct rma_fetch *rma_fetches;
uint32_t rma_nfetches;

char rma_scratch[1 << 17];

/* ---- windows: creation and release ----------------------------------------------------- */

static int rma_coll_err(int rc)
{
    return rc ? mpi_from_tern(rc) : MPI_SUCCESS;
}

int rma_barrier(struct mpi_win *w)
{
    struct coll_sched s;
    coll_sched_init(&s, w->tc);
    return rma_coll_err(coll_sched_run(&s, coll_barrier(&s)));
}

static int rma_allgather(struct mpi_win *w, const void *mine, void *all, size_t bytes)
{
    struct coll_sched s;
    coll_sched_init(&s, w->tc);
    return rma_coll_err(coll_sched_run(&s, coll_allgather(&s, mine, all, bytes)));
}

/* Is window rank r on my node for this window's purposes? Shared windows: same node;
 * others: reached through shared memory (TERN_TRANSPORTS may forbid it). */
static int rma_local(const struct mpi_win *w, int world)
{
    if (world == core.rank) return 1;
    if (w->flavor == MPI_WIN_FLAVOR_SHARED) return core_peer_on_node(world);
    return core_peer_can_map(world);
}

struct rma_card {
    int64_t size;
    uint64_t base;
    int32_t disp_unit;
    int32_t pid;
    uint32_t seq;
    uint32_t nonce; /* random: the leader's nonce names the node segment (util/shmseg.h) */
};

static MPI_Aint rma_round(MPI_Aint n, int flavor)
{
    return flavor == MPI_WIN_FLAVOR_SHARED ? n : (n + 63) & ~(MPI_Aint)63;
}

/*
 * Collective part of every window creation: exchange sizes, make and map the node
 * segment (control blocks, plus the memory of allocated windows), agree on the id.
 * `size` and `base` are mine (base ignored for allocated flavors, where it is set).
 */
static int rma_setup(struct mpi_win *w, MPI_Aint size, int disp_unit, void *base)
{
    int n = w->size;
    struct rma_card mine = {
        size, (uint64_t)(uintptr_t)base, disp_unit, (int32_t)getpid(), ++rma_seq, 0};
    mine.nonce = (uint32_t)shmseg_nonce();
    struct rma_card *all = calloc((size_t)n, sizeof *all);
    w->p = calloc((size_t)n, sizeof *w->p);
    if (all == NULL || w->p == NULL) {
        free(all);
        return MPI_ERR_NO_MEM;
    }
    int rc = rma_allgather(w, &mine, all, sizeof mine);
    if (rc) {
        free(all);
        return rc;
    }
    int alloc = w->flavor == MPI_WIN_FLAVOR_ALLOCATE || w->flavor == MPI_WIN_FLAVOR_SHARED;
    /* The segment: control blocks of the local ranks, then (allocated windows) their
     * memory in rank order. */
    int leader = -1, nloc = 0;
    size_t ctl_bytes, data = 0;
    for (int r = 0; r < n; r++) {
        int wr = core_comm_world(w->tc, r);
        w->p[r].world = wr;
        w->p[r].size = (MPI_Aint)all[r].size;
        w->p[r].disp_unit = all[r].disp_unit;
        w->p[r].base = all[r].base;
        w->p[r].pid = all[r].pid;
        if (!rma_local(w, wr)) continue;
        if (leader < 0) leader = r;
        nloc++;
        if (alloc) data += (size_t)rma_round(w->p[r].size, w->flavor);
    }
    ctl_bytes = ((size_t)nloc * sizeof(struct rma_ctl) + 4095) & ~(size_t)4095;
    w->seglen = ctl_bytes + data;
    int solo = nloc == 1;
    struct shmseg seg = {0};
    uint64_t nonce = (uint64_t)all[leader].seq << 32 | all[leader].nonce;
    if (solo) {
        /* Alone on the node: private memory will do. */
        w->seg = mmap(NULL, w->seglen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    } else if (w->rank == leader) {
        (void)shmseg_create(&seg, core.boot.kvsname, "win", w->p[leader].world, nonce, w->seglen,
                            "MPI window segment");
    }
    rc = rma_barrier(w);
    if (!solo && w->rank != leader)
        (void)shmseg_attach(&seg, core.boot.kvsname, "win", w->p[leader].world, nonce, w->seglen,
                            "MPI window segment");
    if (!solo) w->seg = seg.base;
    if (w->seg == MAP_FAILED) w->seg = NULL;
    /* Ready to serve before the last collective: a peer leaves it (and may send its
     * first lock or put) as soon as it has my contribution. */
    if (w->seg) {
        int li = 0;
        size_t at = ctl_bytes;
        for (int r = 0; r < n; r++) {
            if (!rma_local(w, w->p[r].world)) continue;
            w->p[r].ctl = (struct rma_ctl *)((char *)w->seg + (size_t)li * sizeof(struct rma_ctl));
            if (alloc) {
                w->p[r].direct = (char *)w->seg + at;
                at += (size_t)rma_round(w->p[r].size, w->flavor);
            } else {
                w->p[r].cma = util_tun.shm_cma ? 1 : 0; /* TERN_SHM_CMA=0: active messages */
            }
            li++;
        }
        w->myctl = w->p[w->rank].ctl;
        if (alloc)
            w->base = w->p[w->rank].direct;
        else
            w->p[w->rank].direct = base;
        w->p[w->rank].cma = 0;
    }
    int bad = w->seg == NULL, anybad = 0;
    {
        struct coll_sched s;
        coll_sched_init(&s, w->tc);
        (void)coll_op_resolve(TERN_MAX, TERN_INT32, &s.op);
        int e = rma_coll_err(coll_sched_run(&s, coll_allreduce(&s, &bad, &anybad, 1)));
        if (!rc) rc = e;
    }
    /* Everyone attached (or failed): the name can go, so nothing stays in /dev/shm. */
    shmseg_unlink(&seg);
    if (rc == 0 && anybad) rc = MPI_ERR_NO_MEM;
    if (rc) {
        free(all);
        return rc;
    }
    free(all);
    return MPI_SUCCESS;
}

static int rma_win_new(const char *fn, MPI_Comm comm, int flavor, MPI_Win *win,
                       struct mpi_win **out)
{
    int rc = mpi_state();
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    struct mpi_comm *c = mpi_comm_get(comm);
    if (c == NULL || c->tc == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_COMM);
    if (win == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    if (!rma_registered) {
        if (core_am_register(RMA_AM_REQ, rma_am_req) || core_am_register(RMA_AM_REP, rma_am_rep) ||
            core_progress_hook_add(rma_hook))
            return mpi_err(comm, fn, MPI_ERR_INTERN);
        rma_registered = 1;
    }
    struct mpi_win *w = calloc(1, sizeof *w);
    if (w == NULL) return mpi_err(comm, fn, MPI_ERR_NO_MEM);
    rc = PMPI_Comm_dup(comm, &w->comm);
    if (rc) {
        free(w);
        return rc;
    }
    struct mpi_comm *dc = mpi_comm_get(w->comm);
    dc->errh = MPI_ERRORS_ARE_FATAL; /* a window's default handler (MPI 3.1, 8.3) */
    w->tc = dc->tc;
    w->rank = w->tc->rank;
    w->size = w->tc->size;
    w->flavor = flavor;
    w->model = MPI_WIN_UNIFIED;
    int h = -1;
    for (int i = 1; i < rma_nwins; i++)
        if (rma_wins[i] == NULL) {
            h = i;
            break;
        }
    if (h < 0) {
        int cap = rma_nwins ? rma_nwins * 2 : 8;
        struct mpi_win **t = realloc(rma_wins, (size_t)cap * sizeof *t);
        if (t == NULL) {
            PMPI_Comm_free(&w->comm);
            free(w);
            return mpi_err(comm, fn, MPI_ERR_NO_MEM);
        }
        memset(t + rma_nwins, 0, (size_t)(cap - rma_nwins) * sizeof *t);
        h = rma_nwins ? rma_nwins : 1;
        rma_wins = t;
        rma_nwins = cap;
    }
    w->handle = h;
    rma_wins[h] = w;
    mpi_comm_get(w->comm)->win = h; /* errors on it name the window to user handlers */
    rma_by_ctx[w->tc->ctx] = w;
    *out = w;
    return MPI_SUCCESS;
}

/*
 * The standard one-sided hints of each window (MPI 3.1 11.2.1, 11.2.7), as
 * MPI_Win_get_info reports them: the defaults, then what creation and MPI_Win_set_info
 * gave. None changes what tern does (every operation works under the strictest
 * reading), so other keys are dropped.
 */
static MPI_Info *rma_hints_of; /* by window handle */
static int rma_nhints;
static const char *const rma_hint_keys[][2] = {
    {"no_locks", "false"},
    {"accumulate_ordering", "rar,raw,war,waw"},
    {"accumulate_ops", "same_op_no_op"},
    {"same_size", "false"},
    {"same_disp_unit", "false"},
    {"alloc_shared_noncontig", "false"},
};

static void rma_hints_free(MPI_Win h)
{
    if (h < rma_nhints && rma_hints_of[h] != MPI_INFO_NULL) PMPI_Info_free(&rma_hints_of[h]);
}

static int rma_hints(MPI_Win h, MPI_Info in, int create)
{
    if (h >= rma_nhints) {
        int n = h + 16;
        MPI_Info *t = realloc(rma_hints_of, (size_t)n * sizeof *t);
        if (t == NULL) return MPI_ERR_NO_MEM;
        for (int i = rma_nhints; i < n; i++)
            t[i] = MPI_INFO_NULL;
        rma_hints_of = t;
        rma_nhints = n;
    }
    if (create) {
        rma_hints_free(h);
        int rc = PMPI_Info_create(&rma_hints_of[h]);
        if (rc) return rc;
        for (unsigned k = 0; k < sizeof rma_hint_keys / sizeof *rma_hint_keys; k++)
            PMPI_Info_set(rma_hints_of[h], rma_hint_keys[k][0], rma_hint_keys[k][1]);
    }
    if (in == MPI_INFO_NULL || rma_hints_of[h] == MPI_INFO_NULL) return MPI_SUCCESS;
    char v[MPI_MAX_INFO_VAL + 1];
    for (unsigned k = 0; k < sizeof rma_hint_keys / sizeof *rma_hint_keys; k++) {
        int flag = 0;
        if (PMPI_Info_get(in, rma_hint_keys[k][0], MPI_MAX_INFO_VAL, v, &flag) == MPI_SUCCESS &&
            flag)
            PMPI_Info_set(rma_hints_of[h], rma_hint_keys[k][0], v);
    }
    return MPI_SUCCESS;
}

static void rma_win_release(struct mpi_win *w)
{
    rma_hints_free(w->handle);
    rma_by_ctx[w->tc->ctx] = NULL;
    rma_wins[w->handle] = NULL;
    if (w->lockq) rma_nqueued--;
    while (w->lockq) {
        struct rma_lockq *q = w->lockq;
        w->lockq = q->next;
        free(q);
    }
    if (w->seg) munmap(w->seg, w->seglen);
    PMPI_Comm_free(&w->comm);
    for (int r = 0; r < w->size && w->p; r++)
        free(w->p[r].batch);
    free(w->p);
    free(w->reg);
    free(w->agroup);
    free(w->egroup);
    free(w);
}

/* Finish creating: on failure everyone releases what it made. */
static int rma_win_done(const char *fn, MPI_Comm comm, struct mpi_win *w, int rc, MPI_Win *win)
{
    if (rc) {
        rma_win_release(w);
        *win = MPI_WIN_NULL;
        return mpi_err(comm, fn, rc);
    }
    *win = w->handle;
    return MPI_SUCCESS;
}

/* A window just made records its hints. */
static int rma_made(MPI_Win win, MPI_Info info, int rc)
{
    if (rc == MPI_SUCCESS) rma_hints(win, info, 1);
    return rc;
}

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_create";
    struct mpi_win *w = NULL;
    if (size < 0) return mpi_err(comm, fn, MPI_ERR_SIZE);
    if (disp_unit <= 0) return mpi_err(comm, fn, MPI_ERR_DISP);
    if (size > 0 && base == NULL) return mpi_err(comm, fn, MPI_ERR_BASE);
    int rc = rma_win_new(fn, comm, MPI_WIN_FLAVOR_CREATE, win, &w);
    if (rc) return rc;
    w->base = base;
    w->wsize = size;
    w->disp_unit = disp_unit;
    return rma_made(*win, info,
                    rma_win_done(fn, comm, w, rma_setup(w, size, disp_unit, base), win));
}
MPI_ALIAS(Win_create)

static int rma_allocate(const char *fn, int flavor, MPI_Aint size, int disp_unit, MPI_Comm comm,
                        void *baseptr, MPI_Win *win)
{
    struct mpi_win *w = NULL;
    if (size < 0) return mpi_err(comm, fn, MPI_ERR_SIZE);
    if (disp_unit <= 0) return mpi_err(comm, fn, MPI_ERR_DISP);
    if (baseptr == NULL) return mpi_err(comm, fn, MPI_ERR_ARG);
    int rc = rma_win_new(fn, comm, flavor, win, &w);
    if (rc) return rc;
    w->wsize = size;
    w->disp_unit = disp_unit;
    rc = rma_setup(w, size, disp_unit, NULL);
    if (rc == 0 && flavor == MPI_WIN_FLAVOR_SHARED)
        for (int r = 0; r < w->size; r++)
            if (w->p[r].direct == NULL) rc = MPI_ERR_RMA_SHARED;
    if (rc == 0) *(void **)baseptr = w->base;
    return rma_win_done(fn, comm, w, rc, win);
}

int PMPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void *baseptr,
                      MPI_Win *win)
{
    CORE_CS_SCOPE();
    return rma_made(*win, info,
                    rma_allocate("MPI_Win_allocate", MPI_WIN_FLAVOR_ALLOCATE, size, disp_unit, comm,
                                 baseptr, win));
}
MPI_ALIAS(Win_allocate)

int PMPI_Win_allocate_shared(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                             void *baseptr, MPI_Win *win)
{
    CORE_CS_SCOPE();
    return rma_made(*win, info,
                    rma_allocate("MPI_Win_allocate_shared", MPI_WIN_FLAVOR_SHARED, size, disp_unit,
                                 comm, baseptr, win));
}
MPI_ALIAS(Win_allocate_shared)

int PMPI_Win_create_dynamic(MPI_Info info, MPI_Comm comm, MPI_Win *win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_create_dynamic";
    struct mpi_win *w = NULL;
    int rc = rma_win_new(fn, comm, MPI_WIN_FLAVOR_DYNAMIC, win, &w);
    if (rc) return rc;
    w->disp_unit = 1;
    return rma_made(*win, info, rma_win_done(fn, comm, w, rma_setup(w, 0, 1, NULL), win));
}
MPI_ALIAS(Win_create_dynamic)

int PMPI_Win_set_info(MPI_Win win, MPI_Info info)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_set_info", win);
    if (!mpi_info_valid(info)) return mpi_err(w->comm, "MPI_Win_set_info", MPI_ERR_INFO);
    return mpi_err(w->comm, "MPI_Win_set_info", rma_hints(win, info, 0));
}
MPI_ALIAS(Win_set_info)

int PMPI_Win_get_info(MPI_Win win, MPI_Info *info_used)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_get_info", win);
    if (info_used == NULL) return mpi_err(w->comm, "MPI_Win_get_info", MPI_ERR_ARG);
    if (win < rma_nhints && rma_hints_of[win] != MPI_INFO_NULL)
        return PMPI_Info_dup(rma_hints_of[win], info_used);
    return PMPI_Info_create(info_used);
}
MPI_ALIAS(Win_get_info)

int PMPI_Win_attach(MPI_Win win, void *base, MPI_Aint size)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_attach";
    WIN_CHECK(fn, win);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return mpi_err(w->comm, fn, MPI_ERR_RMA_FLAVOR);
    if (size < 0) return mpi_err(w->comm, fn, MPI_ERR_SIZE);
    if (size > 0 && base == NULL) return mpi_err(w->comm, fn, MPI_ERR_BASE);
    for (int i = 0; i < w->nreg; i++) {
        char *b = w->reg[i].base;
        if ((char *)base < b + w->reg[i].len && b < (char *)base + size)
            return mpi_err(w->comm, fn, MPI_ERR_RMA_ATTACH); /* overlapping regions */
    }
    if (w->nreg == w->capreg) {
        int cap = w->capreg ? 2 * w->capreg : 8;
        struct rma_region *t = realloc(w->reg, (size_t)cap * sizeof *t);
        if (t == NULL) return mpi_err(w->comm, fn, MPI_ERR_NO_MEM);
        w->reg = t;
        w->capreg = cap;
    }
    w->reg[w->nreg++] = (struct rma_region){base, (size_t)size};
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_attach)

int PMPI_Win_detach(MPI_Win win, const void *base)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_detach";
    WIN_CHECK(fn, win);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) return mpi_err(w->comm, fn, MPI_ERR_RMA_FLAVOR);
    for (int i = 0; i < w->nreg; i++)
        if (w->reg[i].base == base) {
            w->reg[i] = w->reg[--w->nreg];
            return MPI_SUCCESS;
        }
    return mpi_err(w->comm, fn, MPI_ERR_RMA_ATTACH);
}
MPI_ALIAS(Win_detach)

int PMPI_Win_free(MPI_Win *win)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_free";
    if (win == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    WIN_CHECK(fn, *win);
    for (int r = 0; r < w->size; r++)
        if (w->p[r].locked || w->p[r].fetching) return mpi_err(w->comm, fn, MPI_ERR_RMA_SYNC);
    /* Every origin finished with me (MPI requires its epochs closed) once all arrive. */
    int rc = rma_barrier(w);
    mpi_attr_free_all(MPI_ATTR_WIN, *win); /* delete callbacks run before the window goes */
    MPI_Comm comm = w->comm;
    (void)comm;
    rma_win_release(w);
    *win = MPI_WIN_NULL;
    return rc ? mpi_err(MPI_COMM_WORLD, fn, rc) : MPI_SUCCESS;
}
MPI_ALIAS(Win_free)

/* ---- queries ----------------------------------------------------------------------------------
 */

int PMPI_Win_get_group(MPI_Win win, MPI_Group *group)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_get_group", win);
    if (group == NULL) return mpi_err(w->comm, "MPI_Win_get_group", MPI_ERR_ARG);
    return PMPI_Comm_group(w->comm, group);
}
MPI_ALIAS(Win_get_group)

int PMPI_Win_get_attr(MPI_Win win, int keyval, void *attribute_val, int *flag)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_get_attr";
    WIN_CHECK(fn, win);
    if (attribute_val == NULL || flag == NULL) return mpi_err(w->comm, fn, MPI_ERR_ARG);
    void *v;
    switch (keyval) {
    case MPI_WIN_BASE:
        v = w->base;
        break;
    case MPI_WIN_SIZE:
        v = &w->wsize;
        break;
    case MPI_WIN_DISP_UNIT:
        v = &w->disp_unit;
        break;
    case MPI_WIN_CREATE_FLAVOR:
        v = &w->flavor;
        break;
    case MPI_WIN_MODEL:
        v = &w->model;
        break;
    default: /* the program's own attributes (mpi_attr.c) */
        return mpi_err(w->comm, fn, mpi_attr_get(MPI_ATTR_WIN, win, keyval, attribute_val, flag));
    }
    *(void **)attribute_val = v;
    *flag = 1;
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_get_attr)

int PMPI_Win_shared_query(MPI_Win win, int rank, MPI_Aint *size, int *disp_unit, void *baseptr)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Win_shared_query";
    WIN_CHECK(fn, win);
    if (size == NULL || disp_unit == NULL || baseptr == NULL)
        return mpi_err(w->comm, fn, MPI_ERR_ARG);
    if (w->flavor != MPI_WIN_FLAVOR_SHARED && w->flavor != MPI_WIN_FLAVOR_ALLOCATE)
        return mpi_err(w->comm, fn, MPI_ERR_RMA_FLAVOR);
    if (rank == MPI_PROC_NULL) { /* the lowest rank with memory */
        rank = 0;
        for (int r = 0; r < w->size; r++)
            if (w->p[r].size > 0) {
                rank = r;
                break;
            }
    }
    if (rank < 0 || rank >= w->size) return mpi_err(w->comm, fn, MPI_ERR_RANK);
    if (w->p[rank].direct == NULL) return mpi_err(w->comm, fn, MPI_ERR_RMA_SHARED);
    *size = w->p[rank].size;
    *disp_unit = w->p[rank].disp_unit;
    /* a rank that gave no memory has no base (NULL, as in MPICH and MPI 4) */
    *(void **)baseptr = w->p[rank].size > 0 ? w->p[rank].direct : NULL;
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_shared_query)

int PMPI_Win_set_errhandler(MPI_Win win, MPI_Errhandler errhandler)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_set_errhandler", win);
    return PMPI_Comm_set_errhandler(w->comm, errhandler);
}
MPI_ALIAS(Win_set_errhandler)

int PMPI_Win_get_errhandler(MPI_Win win, MPI_Errhandler *errhandler)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_get_errhandler", win);
    return PMPI_Comm_get_errhandler(w->comm, errhandler);
}
MPI_ALIAS(Win_get_errhandler)

int PMPI_Win_set_name(MPI_Win win, const char *name)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_set_name", win);
    if (name == NULL) return mpi_err(w->comm, "MPI_Win_set_name", MPI_ERR_ARG);
    snprintf(w->name, sizeof w->name, "%s", name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_set_name)

int PMPI_Win_get_name(MPI_Win win, char *name, int *len)
{
    CORE_CS_SCOPE();
    WIN_CHECK("MPI_Win_get_name", win);
    if (name == NULL || len == NULL) return mpi_err(w->comm, "MPI_Win_get_name", MPI_ERR_ARG);
    snprintf(name, MPI_MAX_OBJECT_NAME, "%s", w->name);
    *len = (int)strlen(name);
    return MPI_SUCCESS;
}
MPI_ALIAS(Win_get_name)

/* MPI_Finalize: windows the program did not free. */
void mpi_win_fini(void)
{
    for (int i = 1; i < rma_nwins; i++)
        if (rma_wins[i]) {
            struct mpi_win *w = rma_wins[i];
            if (w->seg) munmap(w->seg, w->seglen);
            for (int r = 0; r < w->size; r++)
                free(w->p[r].batch);
            free(w->p);
            free(w->reg);
            free(w->agroup);
            free(w->egroup);
            while (w->lockq) {
                struct rma_lockq *q = w->lockq;
                w->lockq = q->next;
                free(q);
            }
            free(w);
        }
    free(rma_wins);
    rma_wins = NULL;
    rma_nwins = 0;
    rma_nqueued = 0;
    memset(rma_by_ctx, 0, sizeof rma_by_ctx);
    free(rma_fetches);
    rma_fetches = NULL;
    rma_nfetches = 0;
}

/* The private communicator of a window (its errors go through it), or MPI_COMM_NULL when
 * win is not a live window: for the window functions outside this file (mpi_attr.c). */
MPI_Comm mpi_win_comm(MPI_Win win)
{
    struct mpi_win *w = rma_win_get(win);
    return w ? w->comm : MPI_COMM_NULL;
}

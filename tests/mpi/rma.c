/*
 * rma.c - one-sided communication: every window flavor (create, allocate, dynamic,
 * allocate_shared) through every kind of epoch (fence, post-start-complete-wait,
 * lock/unlock shared and exclusive, lock_all + flush), with concurrent accumulates from
 * every rank checked exactly, contended Fetch_and_op / Compare_and_swap /
 * Get_accumulate counters, non-contiguous datatypes on both sides, window attributes
 * and shared-memory queries. Run on odd and even process counts, on shm and over TCP.
 */
#include <complex.h>
#include <stdint.h>

#include "mpi_check.h"

#define N      64  /* doubles per rank slot */
#define ITERS  200 /* contended operations per rank */
#define HAMMER 100000

static int rank, size;

/* Window memory: slots[size][N] ints, then counters. Same layout in every flavor. */
struct layout {
    int slots;  /* offset (in ints) of size*N ints written by puts */
    int acc;    /* N ints accumulated by everyone */
    int fop;    /* one long long fetch-and-add counter (8-aligned int index) */
    int cas;    /* one long long CAS counter */
    int mutex;  /* one int incremented non-atomically under an exclusive lock */
    int cplx;   /* 2 * 4 ints: a double complex accumulated by everyone (locked path) */
    int hammer; /* 2 ints: a long long hammered by back-to-back accumulates */
    int total;  /* ints */
};

static struct layout lay(void)
{
    struct layout l;
    l.slots = 0;
    l.acc = l.slots + size * N;
    l.fop = (l.acc + N + 1) & ~1;
    l.cas = l.fop + 2;
    l.mutex = l.cas + 2;
    l.cplx = (l.mutex + 1 + 3) & ~3;
    l.hammer = l.cplx + 8;
    l.total = l.hammer + 2;
    return l;
}

enum flavor { F_CREATE, F_ALLOCATE, F_DYNAMIC, F_SHARED };
static const char *fname[] = {"create", "allocate", "dynamic", "shared"};

struct win {
    MPI_Win w;
    int *mem;       /* my window memory */
    MPI_Aint *base; /* per rank: target displacement of int 0 (dynamic: its address) */
    int dyn;
};

static void win_open(struct win *x, enum flavor f, MPI_Comm comm)
{
    struct layout l = lay();
    MPI_Aint bytes = (MPI_Aint)l.total * (MPI_Aint)sizeof(int);
    x->base = calloc((size_t)size, sizeof *x->base);
    CHECK(x->base != NULL);
    x->dyn = f == F_DYNAMIC;
    switch (f) {
    case F_CREATE:
        x->mem = calloc((size_t)l.total, sizeof(int));
        CHECK(x->mem != NULL);
        OK(MPI_Win_create(x->mem, bytes, sizeof(int), MPI_INFO_NULL, comm, &x->w));
        break;
    case F_ALLOCATE:
        OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, comm, &x->mem, &x->w));
        break;
    case F_SHARED:
        OK(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, comm, &x->mem, &x->w));
        break;
    case F_DYNAMIC: {
        OK(MPI_Win_create_dynamic(MPI_INFO_NULL, comm, &x->w));
        x->mem = calloc((size_t)l.total, sizeof(int));
        CHECK(x->mem != NULL);
        OK(MPI_Win_attach(x->w, x->mem, bytes));
        MPI_Aint a;
        OK(MPI_Get_address(x->mem, &a));
        OK(MPI_Allgather(&a, 1, MPI_AINT, x->base, 1, MPI_AINT, comm));
        break;
    }
    }
    /* At once, with no barrier: a neighbour may still be finishing its own creation. */
    int next = (rank + 1) % size;
    OK(MPI_Win_lock(MPI_LOCK_SHARED, next, 0, x->w));
    OK(MPI_Win_unlock(next, x->w));
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, x->w));
    memset(x->mem, 0, (size_t)bytes);
    OK(MPI_Win_unlock(rank, x->w));
    MPI_Barrier(comm);

    /* Attributes */
    void *b;
    MPI_Aint *sz;
    int *du, *fl, flag;
    OK(MPI_Win_get_attr(x->w, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    CHECK(flag);
    CHECK(*fl == (f == F_CREATE     ? MPI_WIN_FLAVOR_CREATE
                  : f == F_ALLOCATE ? MPI_WIN_FLAVOR_ALLOCATE
                  : f == F_DYNAMIC  ? MPI_WIN_FLAVOR_DYNAMIC
                                    : MPI_WIN_FLAVOR_SHARED));
    if (!x->dyn) {
        OK(MPI_Win_get_attr(x->w, MPI_WIN_BASE, &b, &flag));
        CHECK(flag && b == x->mem);
        OK(MPI_Win_get_attr(x->w, MPI_WIN_SIZE, &sz, &flag));
        CHECK(flag && *sz == bytes);
        OK(MPI_Win_get_attr(x->w, MPI_WIN_DISP_UNIT, &du, &flag));
        CHECK(flag && *du == (int)sizeof(int));
    }
    MPI_Group g, wg;
    int cmp;
    OK(MPI_Win_get_group(x->w, &g));
    OK(MPI_Comm_group(comm, &wg));
    OK(MPI_Group_compare(g, wg, &cmp));
    CHECK(cmp == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
}

/* Target displacement of int index i in rank r's window. */
static MPI_Aint disp(const struct win *x, int r, int i)
{
    return x->dyn ? x->base[r] + (MPI_Aint)i * (MPI_Aint)sizeof(int) : (MPI_Aint)i;
}
static void win_close(struct win *x)
{
    if (x->dyn) OK(MPI_Win_detach(x->w, x->mem));
    int flavor_alloc = !x->dyn;
    int *fl, flag;
    OK(MPI_Win_get_attr(x->w, MPI_WIN_CREATE_FLAVOR, &fl, &flag));
    flavor_alloc = *fl == MPI_WIN_FLAVOR_ALLOCATE || *fl == MPI_WIN_FLAVOR_SHARED;
    OK(MPI_Win_free(&x->w));
    CHECK(x->w == MPI_WIN_NULL);
    if (!flavor_alloc) free(x->mem);
    free(x->base);
}

/* Reads of my own window: done in an exclusive epoch on myself so the memory is synced. */
static void self_sync(struct win *x)
{
    OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, x->w));
    OK(MPI_Win_unlock(rank, x->w));
}

static int val(int from, int to, int i)
{
    return from * 1000003 + to * 1009 + i;
}

static void t_fence(struct win *x)
{
    struct layout l = lay();
    int src[N], got[N];
    OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, x->w));
    for (int t = 0; t < size; t++) {
        for (int i = 0; i < N; i++)
            src[i] = val(rank, t, i);
        OK(MPI_Put(src, N, MPI_INT, t, disp(x, t, l.slots + rank * N), N, MPI_INT, x->w));
    }
    /* Every rank adds (rank + 1) * (i + 1) to every acc[i] of every target, several times. */
    int add[N];
    for (int i = 0; i < N; i++)
        add[i] = (rank + 1) * (i + 1);
    for (int k = 0; k < 5; k++)
        for (int t = 0; t < size; t++)
            OK(MPI_Accumulate(add, N, MPI_INT, (t + k) % size, disp(x, (t + k) % size, l.acc), N,
                              MPI_INT, MPI_SUM, x->w));
    OK(MPI_Win_fence(0, x->w));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < N; i++)
            CHECKF(x->mem[l.slots + r * N + i] == val(r, rank, i), "fence put from %d [%d]", r, i);
    long sum = (long)size * (size + 1) / 2;
    for (int i = 0; i < N; i++)
        CHECKF(x->mem[l.acc + i] == (int)(5 * sum * (i + 1)), "fence acc[%d] = %d", i,
               x->mem[l.acc + i]);
    /* Get what the right neighbour received from me. */
    int right = (rank + 1) % size;
    OK(MPI_Get(got, N, MPI_INT, right, disp(x, right, l.slots + rank * N), N, MPI_INT, x->w));
    OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, x->w));
    for (int i = 0; i < N; i++)
        CHECK(got[i] == val(rank, right, i));
}

/* Non-contiguous layouts: a strided origin into a contiguous target and back, and a
 * vector target with an indexed origin. */
static void t_types(struct win *x)
{
    struct layout l = lay();
    MPI_Datatype vec, vec4, idx;
    OK(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &vec)); /* every other int, N/2 of them */
    OK(MPI_Type_commit(&vec));
    OK(MPI_Type_vector(N / 4, 1, 2, MPI_INT, &vec4)); /* every other int, N/4 of them */
    OK(MPI_Type_commit(&vec4));
    int bl[3] = {3, 5, N / 4 - 8}, dp[3] = {0, 10, 30};
    OK(MPI_Type_indexed(3, bl, dp, MPI_INT, &idx)); /* N/4 ints in 3 blocks */
    OK(MPI_Type_commit(&idx));
    int src[N + 32], back[N + 32];
    for (int i = 0; i < N + 32; i++)
        src[i] = val(rank, 7, i);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    OK(MPI_Win_fence(0, x->w));
    /* origin: vector over src; target: N/2 contiguous ints, the first half of my slot */
    OK(MPI_Put(src, 1, vec, right, disp(x, right, l.slots + rank * N), N / 2, MPI_INT, x->w));
    /* origin: indexed; target: every other int of the second half (vector) */
    OK(MPI_Put(src, 1, idx, right, disp(x, right, l.slots + rank * N + N / 2), 1, vec4, x->w));
    /* accumulate through a vector target: add 1 to every other acc */
    int ones[N / 2];
    for (int i = 0; i < N / 2; i++)
        ones[i] = 1;
    OK(MPI_Accumulate(ones, N / 2, MPI_INT, right, disp(x, right, l.acc), 1, vec, MPI_SUM, x->w));
    OK(MPI_Win_fence(0, x->w));
    int *s = x->mem + l.slots + left * N;
    int srcl[N + 32];
    for (int i = 0; i < N + 32; i++)
        srcl[i] = val(left, 7, i);
    for (int i = 0; i < N / 2; i++)
        CHECKF(s[i] == srcl[2 * i], "vector->contig [%d]", i);
    int k = 0;
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < bl[b]; j++, k++)
            CHECKF(s[N / 2 + 2 * k] == srcl[dp[b] + j], "indexed->vector [%d]", k);
    /* Get back through a vector target into an indexed origin. */
    memset(back, 0, sizeof back);
    OK(MPI_Get(back, 1, idx, right, disp(x, right, l.slots + rank * N + N / 2), 1, vec4, x->w));
    OK(MPI_Win_fence(0, x->w));
    k = 0;
    for (int b = 0; b < 3; b++)
        for (int j = 0; j < bl[b]; j++, k++)
            CHECKF(back[dp[b] + j] == src[dp[b] + j], "get vector->indexed [%d]", k);
    CHECK(back[3] == 0 && back[9] == 0); /* the gaps of idx untouched */
    long sum = (long)size * (size + 1) / 2;
    for (int i = 0; i < N; i++)
        CHECKF(x->mem[l.acc + i] == (int)(5 * sum * (i + 1)) + (i % 2 == 0), "vector acc[%d] = %d",
               i, x->mem[l.acc + i]);
    MPI_Type_free(&vec);
    MPI_Type_free(&vec4);
    MPI_Type_free(&idx);
}

/* Post-start-complete-wait on a ring: I expose to my left neighbour, access my right. */
static void t_pscw(struct win *x)
{
    struct layout l = lay();
    MPI_Group wg, lg, rg;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    OK(MPI_Win_get_group(x->w, &wg));
    OK(MPI_Group_incl(wg, 1, &left, &lg));
    OK(MPI_Group_incl(wg, 1, &right, &rg));
    for (int round = 0; round < 3; round++) {
        int src[N];
        for (int i = 0; i < N; i++)
            src[i] = val(rank, round, i);
        OK(MPI_Win_post(lg, 0, x->w));
        OK(MPI_Win_start(rg, 0, x->w));
        OK(MPI_Put(src, N, MPI_INT, right, disp(x, right, l.slots + rank * N), N, MPI_INT, x->w));
        int one = 1;
        OK(MPI_Accumulate(&one, 1, MPI_INT, right, disp(x, right, l.mutex), 1, MPI_INT, MPI_SUM,
                          x->w));
        OK(MPI_Win_complete(x->w));
        if (round == 1) {
            int flag = 0;
            while (!flag)
                OK(MPI_Win_test(x->w, &flag));
        } else {
            OK(MPI_Win_wait(x->w));
        }
        for (int i = 0; i < N; i++)
            CHECKF(x->mem[l.slots + left * N + i] == val(left, round, i), "pscw round %d [%d]",
                   round, i);
        CHECK(x->mem[l.mutex] == round + 1);
    }
    MPI_Group_free(&wg);
    MPI_Group_free(&lg);
    MPI_Group_free(&rg);
    MPI_Barrier(MPI_COMM_WORLD);
    OK(MPI_Win_fence(0, x->w));
    x->mem[l.mutex] = 0; /* my own memory, between fences */
    OK(MPI_Win_fence(0, x->w));
}

/* Exclusive locks give mutual exclusion: a non-atomic read-modify-write of rank 0's
 * `mutex` by everyone ends exact. Shared locks with concurrent accumulates. */
static void t_locks(struct win *x)
{
    struct layout l = lay();
    int root = size - 1;
    for (int k = 0; k < ITERS / 4; k++) {
        int v = -1;
        OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, root, 0, x->w));
        OK(MPI_Get(&v, 1, MPI_INT, root, disp(x, root, l.mutex), 1, MPI_INT, x->w));
        OK(MPI_Win_flush(root, x->w));
        v++;
        OK(MPI_Put(&v, 1, MPI_INT, root, disp(x, root, l.mutex), 1, MPI_INT, x->w));
        OK(MPI_Win_unlock(root, x->w));
    }
    /* shared: everyone accumulates into everyone's acc, in a shared epoch per target */
    int add[N];
    for (int i = 0; i < N; i++)
        add[i] = rank + 1;
    for (int t = 0; t < size; t++) {
        OK(MPI_Win_lock(MPI_LOCK_SHARED, t, 0, x->w));
        OK(MPI_Accumulate(add, N, MPI_INT, t, disp(x, t, l.acc), N, MPI_INT, MPI_SUM, x->w));
        OK(MPI_Win_unlock(t, x->w));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    self_sync(x);
    if (rank == root) CHECKF(x->mem[l.mutex] == size * (ITERS / 4), "mutex %d", x->mem[l.mutex]);
    long sum = (long)size * (size + 1) / 2;
    for (int i = 0; i < N; i++)
        CHECKF(x->mem[l.acc + i] == (int)(5 * sum * (i + 1) + (i % 2 == 0) + sum),
               "shared-lock acc[%d] = %d", i, x->mem[l.acc + i]);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* lock_all + flush: contended atomics on rank 0's counters. */
static void t_atomics(struct win *x)
{
    struct layout l = lay();
    int root = 0;
    long long *seen = malloc(ITERS * sizeof *seen);
    CHECK(seen != NULL);
    OK(MPI_Win_lock_all(0, x->w));
    for (int k = 0; k < ITERS; k++) {
        long long one = 1, old = -1;
        OK(MPI_Fetch_and_op(&one, &old, MPI_LONG_LONG, root, disp(x, root, l.fop), MPI_SUM, x->w));
        OK(MPI_Win_flush(root, x->w));
        seen[k] = old;
        /* CAS increment loop */
        long long cur = 0, res;
        for (;;) {
            long long nv = cur + 1;
            OK(MPI_Compare_and_swap(&nv, &cur, &res, MPI_LONG_LONG, root, disp(x, root, l.cas),
                                    x->w));
            OK(MPI_Win_flush(root, x->w));
            if (res == cur) break;
            cur = res;
        }
        /* double complex accumulate: 16-byte elements (no CPU atomic) */
        double complex c = (double)(rank + 1) + 2.0 * I;
        OK(MPI_Accumulate(&c, 1, MPI_C_DOUBLE_COMPLEX, root, disp(x, root, l.cplx), 1,
                          MPI_C_DOUBLE_COMPLEX, MPI_SUM, x->w));
        if (k % 16 == 0) OK(MPI_Win_flush_all(x->w));
    }
    /* Back-to-back accumulates from everyone at once: the sum must be exact. */
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < HAMMER; k++) {
        long long one = 1;
        OK(MPI_Accumulate(&one, 1, MPI_LONG_LONG, root, disp(x, root, l.hammer), 1, MPI_LONG_LONG,
                          MPI_SUM, x->w));
        if (k % 512 == 511) OK(MPI_Win_flush(root, x->w));
    }
    /* Get_accumulate: fetch acc[] while adding, and NO_OP reads */
    int add[N], before[N], now[N];
    for (int i = 0; i < N; i++)
        add[i] = 1;
    OK(MPI_Get_accumulate(add, N, MPI_INT, before, N, MPI_INT, root, disp(x, root, l.acc), N,
                          MPI_INT, MPI_SUM, x->w));
    OK(MPI_Win_flush_local(root, x->w));
    OK(MPI_Get_accumulate(NULL, 0, MPI_INT, now, N, MPI_INT, root, disp(x, root, l.acc), N, MPI_INT,
                          MPI_NO_OP, x->w));
    OK(MPI_Win_flush(root, x->w));
    for (int i = 0; i < N; i++)
        CHECKF(now[i] > before[i], "get_accumulate [%d]: %d then %d", i, before[i], now[i]);
    OK(MPI_Win_unlock_all(x->w));

    /* Every value of the fetch-and-add counter was handed out exactly once. */
    long long *all = NULL;
    if (rank == root) all = malloc((size_t)size * ITERS * sizeof *all);
    OK(MPI_Gather(seen, ITERS, MPI_LONG_LONG, all, ITERS, MPI_LONG_LONG, root, MPI_COMM_WORLD));
    MPI_Barrier(MPI_COMM_WORLD);
    self_sync(x);
    if (rank == root) {
        long long n = (long long)size * ITERS;
        char *hit = calloc((size_t)n, 1);
        CHECK(hit != NULL);
        for (long long i = 0; i < n; i++) {
            CHECKF(all[i] >= 0 && all[i] < n && !hit[all[i]], "fetch_and_op value %lld", all[i]);
            hit[all[i]] = 1;
        }
        free(hit);
        long long f, c;
        memcpy(&f, &x->mem[l.fop], 8);
        memcpy(&c, &x->mem[l.cas], 8);
        CHECKF(f == n, "fop counter %lld", f);
        CHECKF(c == n, "cas counter %lld", c);
        memcpy(&f, &x->mem[l.hammer], 8);
        CHECKF(f == (long long)size * HAMMER, "hammered counter %lld", f);
        double complex z;
        memcpy(&z, &x->mem[l.cplx], sizeof z);
        double want = (double)ITERS * size * (size + 1) / 2;
        CHECKF(creal(z) == want && cimag(z) == 2.0 * ITERS * size, "complex %g%+gi", creal(z),
               cimag(z));
        free(all);
    }
    free(seen);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Win_allocate_shared: plain loads and stores of the neighbours' memory. */
static void t_shared(MPI_Comm node)
{
    int nr, ns;
    MPI_Comm_rank(node, &nr);
    MPI_Comm_size(node, &ns);
    MPI_Win w;
    int *mine;
    MPI_Aint bytes = (nr % 2 ? 0 : 16) * (MPI_Aint)sizeof(int); /* odd ranks: empty */
    OK(MPI_Win_allocate_shared(bytes, sizeof(int), MPI_INFO_NULL, node, &mine, &w));
    OK(MPI_Win_lock_all(0, w));
    for (int i = 0; i < (int)(bytes / sizeof(int)); i++)
        mine[i] = nr * 100 + i;
    OK(MPI_Win_sync(w));
    MPI_Barrier(node);
    OK(MPI_Win_sync(w));
    for (int r = 0; r < ns; r++) {
        MPI_Aint sz;
        int du, *p;
        OK(MPI_Win_shared_query(w, r, &sz, &du, &p));
        CHECK(du == (int)sizeof(int));
        CHECK(sz == (r % 2 ? 0 : 16) * (MPI_Aint)sizeof(int));
        for (int i = 0; i < (int)(sz / sizeof(int)); i++)
            CHECKF(p[i] == r * 100 + i, "shared rank %d [%d]", r, i);
    }
    /* Default contiguity: rank r's memory follows rank r-1's. */
    int *p0;
    MPI_Aint sz;
    int du;
    OK(MPI_Win_shared_query(w, 0, &sz, &du, &p0));
    for (int r = 1; r < ns; r++) {
        int *p;
        OK(MPI_Win_shared_query(w, r, &sz, &du, &p));
        if (sz) CHECKF(p == p0 + 16 * ((r + 1) / 2), "contiguous at rank %d", r);
    }
    OK(MPI_Win_unlock_all(w));
    OK(MPI_Win_free(&w));
}

/* Large transfers (many active messages or CMA iovecs): contiguous and strided puts,
 * gets and accumulates of 300 KB or more to the right neighbour. */
static void t_big(int allocate)
{
    enum { BIG = 40000 }; /* doubles per rank slot */
    MPI_Win w;
    double *mem;
    MPI_Aint bytes = (MPI_Aint)size * 2 * BIG * (MPI_Aint)sizeof(double);
    if (allocate) {
        OK(MPI_Win_allocate(bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &w));
    } else {
        mem = malloc((size_t)bytes);
        CHECK(mem != NULL);
        OK(MPI_Win_create(mem, bytes, sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &w));
    }
    double *src = malloc(2 * BIG * sizeof *src), *back = malloc(2 * BIG * sizeof *back);
    CHECK(src && back);
    for (int i = 0; i < 2 * BIG; i++)
        src[i] = rank * 1e6 + i;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Datatype strided;
    OK(MPI_Type_vector(BIG / 2, 1, 2, MPI_DOUBLE, &strided)); /* BIG/2 doubles, every other */
    OK(MPI_Type_commit(&strided));
    OK(MPI_Win_fence(0, w));
    for (int i = 0; i < 2 * BIG * size; i++)
        mem[i] = 0;
    OK(MPI_Win_fence(0, w));
    /* contiguous BIG doubles into the first half of my slot; strided origin into the
     * even doubles of the second half (strided target) */
    OK(MPI_Put(src, BIG, MPI_DOUBLE, right, (MPI_Aint)rank * 2 * BIG, BIG, MPI_DOUBLE, w));
    OK(MPI_Put(src, 1, strided, right, (MPI_Aint)rank * 2 * BIG + BIG, 1, strided, w));
    OK(MPI_Win_fence(0, w));
    /* accumulate 1.0 onto every odd double of the second half */
    for (int i = 0; i < BIG; i++)
        back[i] = 1.0;
    OK(MPI_Accumulate(back, BIG / 2, MPI_DOUBLE, right, (MPI_Aint)rank * 2 * BIG + BIG + 1, 1,
                      strided, MPI_SUM, w));
    OK(MPI_Win_fence(0, w));
    double *s = mem + (size_t)left * 2 * BIG;
    for (int i = 0; i < BIG; i++)
        CHECKF(s[i] == left * 1e6 + i, "big put [%d] = %g", i, s[i]);
    for (int i = 0; i < BIG; i += 2) {
        CHECKF(s[BIG + i] == left * 1e6 + i, "big strided put [%d]", i);
        CHECKF(s[BIG + i + 1] == 1.0, "big strided acc [%d]", i);
    }
    /* and read it all back in one Get */
    memset(back, 0, 2 * BIG * sizeof *back);
    OK(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, w));
    OK(MPI_Get(back, 2 * BIG, MPI_DOUBLE, right, (MPI_Aint)rank * 2 * BIG, 2 * BIG, MPI_DOUBLE, w));
    OK(MPI_Win_unlock(right, w));
    for (int i = 0; i < BIG; i++)
        CHECKF(back[i] == src[i], "big get [%d]", i);
    for (int i = 0; i < BIG; i += 2)
        CHECKF(back[BIG + i] == src[i] && back[BIG + i + 1] == 1.0, "big get strided [%d]", i);
    MPI_Type_free(&strided);
    OK(MPI_Win_free(&w));
    if (!allocate) free(mem);
    free(src);
    free(back);
}

/* Bad input gives the right error class (MPI_ERRORS_RETURN on the window). */
static void t_errors(void)
{
    MPI_Win w;
    int *mem;
    OK(MPI_Win_allocate(4 * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem,
                        &w));
    OK(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN));
    int v = 1;
    FAILS(MPI_Win_unlock(0, w), MPI_ERR_RMA_SYNC);         /* not locked */
    FAILS(MPI_Win_lock(12345, 0, 0, w), MPI_ERR_LOCKTYPE); /* no such lock type */
    OK(MPI_Win_lock_all(0, w));
    FAILS(MPI_Put(&v, 1, MPI_INT, size, 0, 1, MPI_INT, w), MPI_ERR_RANK);
    FAILS(MPI_Put(&v, -1, MPI_INT, 0, 0, -1, MPI_INT, w), MPI_ERR_COUNT);
    FAILS(MPI_Accumulate(&v, 1, MPI_INT, 0, 0, 1, MPI_INT, MPI_OP_NULL, w), MPI_ERR_OP);
#ifdef TERN_MPI /* MPI leaves detecting this to the implementation; Open MPI does not */
    FAILS(MPI_Put(&v, 1, MPI_INT, 0, 4, 1, MPI_INT, w), MPI_ERR_RMA_RANGE); /* past the end */
#endif
    OK(MPI_Put(&v, 1, MPI_INT, MPI_PROC_NULL, 0, 1, MPI_INT, w)); /* a no-op */
    OK(MPI_Win_unlock_all(w));
    OK(MPI_Win_free(&w));
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    mt_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm node;
    OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
    int ns;
    MPI_Comm_size(node, &ns);
    for (int f = F_CREATE; f <= F_SHARED; f++) {
        if (f == F_SHARED && ns != size) continue; /* needs one node */
        struct win x;
        win_open(&x, (enum flavor)f, MPI_COMM_WORLD);
        t_fence(&x);
        t_types(&x);
        t_pscw(&x);
        t_locks(&x);
        t_atomics(&x);
        win_close(&x);
        if (rank == 0) printf("rma %s: ok\n", fname[f]);
    }
    t_big(0);
    t_big(1);
    t_shared(node);
    t_errors();
    MPI_Comm_free(&node);
    return mt_done("rma");
}

/*
 * coll.c - teams and collectives: broadcast, reductions (every operation on int, long,
 * uint64 and double), fcollect, collect with a different count per PE, alltoall, on
 * SHMEM_TEAM_WORLD, SHMEM_TEAM_SHARED and a strided team of the even PEs; team numbering
 * and translation; invalid teams and roots return errors.
 */
#include "shmem_check.h"

/* Symmetric buffers, allocated once by every PE (shmem_malloc is collective over all
 * PEs, so a team of some PEs cannot allocate on its own). */
static long *src, *dst;
static uint64_t *u;
static int *x;
static double *d;

static void run_on(shmem_team_t team, const char *name)
{
    int tn = shmem_team_n_pes(team), tme = shmem_team_my_pe(team);
    CHECK(tn >= 1 && tme >= 0 && tme < tn);
    MP_WHERE("%s broadcast", name);
    for (int root = 0; root < tn; root++) {
        for (int i = 0; i < 1000; i++)
            src[i] = tme * 100000 + i;
        memset(dst, 0, 1000 * sizeof(long));
        CHECK_EQ_INT(shmem_long_broadcast(team, dst, src, 1000, root), 0);
        for (int i = 0; i < 1000; i++)
            CHECK_EQ_INT(dst[i], root * 100000 + i);
    }
    MP_WHERE("%s reductions", name);
    for (int i = 0; i < 10; i++)
        src[i] = tme + 1 + i;
    CHECK_EQ_INT(shmem_long_sum_reduce(team, dst, src, 10), 0);
    for (int i = 0; i < 10; i++)
        CHECK_EQ_INT(dst[i], (long)tn * (tn + 1) / 2 + (long)tn * i);
    CHECK_EQ_INT(shmem_long_max_reduce(team, dst, src, 10), 0);
    CHECK_EQ_INT(dst[3], tn + 3);
    CHECK_EQ_INT(shmem_long_min_reduce(team, dst, src, 10), 0);
    CHECK_EQ_INT(dst[3], 1 + 3);
    CHECK_EQ_INT(shmem_long_prod_reduce(team, dst, src, 1), 0);
    long f = 1;
    for (int k = 1; k <= tn; k++)
        f *= k;
    CHECK_EQ_INT(dst[0], f);
    u[0] = 1ull << tme;
    u[1] = ~(1ull << tme);
    CHECK_EQ_INT(shmem_uint64_or_reduce(team, u, u, 1), 0); /* in place */
    CHECK_EQ_INT(u[0], (tn >= 64 ? ~0ull : (1ull << tn) - 1));
    CHECK_EQ_INT(shmem_uint64_and_reduce(team, u + 1, u + 1, 1), 0);
    CHECK_EQ_INT(~u[1], (1ull << tn) - 1);
    x[0] = 1 << tme;
    CHECK_EQ_INT(shmem_int_xor_reduce(team, x + 1, x, 1), 0);
    CHECK_EQ_INT(x[1], (1 << tn) - 1);
    d[0] = 0.5 * (tme + 1);
    CHECK_EQ_INT(shmem_double_sum_reduce(team, d + 1, d, 1), 0);
    CHECK(d[1] == 0.25 * tn * (tn + 1));

    MP_WHERE("%s fcollect/collect/alltoall", name);
    for (int i = 0; i < 7; i++)
        src[i] = tme * 10 + i;
    CHECK_EQ_INT(shmem_long_fcollect(team, dst, src, 7), 0);
    for (int p = 0; p < tn; p++)
        for (int i = 0; i < 7; i++)
            CHECK_EQ_INT(dst[p * 7 + i], p * 10 + i);
    /* collect: PE p contributes p + 1 elements */
    CHECK_EQ_INT(shmem_long_collect(team, dst, src, (size_t)tme + 1), 0);
    int at = 0;
    for (int p = 0; p < tn; p++)
        for (int i = 0; i <= p; i++)
            CHECK_EQ_INT(dst[at++], p * 10 + i);
    for (int p = 0; p < tn; p++)
        for (int i = 0; i < 3; i++)
            src[p * 3 + i] = tme * 1000 + p * 10 + i;
    CHECK_EQ_INT(shmem_long_alltoall(team, dst, src, 3), 0);
    for (int p = 0; p < tn; p++)
        for (int i = 0; i < 3; i++)
            CHECK_EQ_INT(dst[p * 3 + i], p * 1000 + tme * 10 + i);
    CHECK_EQ_INT(shmem_team_sync(team), 0);
}

int main(void)
{
    sh_init();
    int me = sh_me, n = sh_n;
    CHECK_EQ_INT(shmem_team_n_pes(SHMEM_TEAM_WORLD), n);
    CHECK_EQ_INT(shmem_team_my_pe(SHMEM_TEAM_WORLD), me);
    src = shmem_malloc(1000 * sizeof(long));
    dst = shmem_malloc(1000 * sizeof(long) * 64);
    u = shmem_malloc(2 * sizeof(uint64_t));
    x = shmem_malloc(2 * sizeof(int));
    d = shmem_malloc(2 * sizeof(double));
    CHECK(src && dst && u && x && d);
    run_on(SHMEM_TEAM_WORLD, "world");

    MP_WHERE("shared team");
    int sn = shmem_team_n_pes(SHMEM_TEAM_SHARED);
    const char *tl = getenv("TERN_TRANSPORTS");
    CHECK_EQ_INT(sn, tl && !strstr(tl, "shm") ? 1 : n); /* one node */
    for (int p = 0; p < sn; p++) {
        int w = shmem_team_translate_pe(SHMEM_TEAM_SHARED, p, SHMEM_TEAM_WORLD);
        CHECK(w >= 0 && w < n);
        long dummy;
        CHECK(shmem_ptr(&dummy, w) == NULL); /* stack: never symmetric */
    }
    /* Participation in any collective must be by every member: only here, sn is equal
     * on all PEs of the team. */
    run_on(SHMEM_TEAM_SHARED, "shared");

    MP_WHERE("strided team");
    shmem_team_t even = SHMEM_TEAM_INVALID;
    int ne = (n + 1) / 2;
    CHECK_EQ_INT(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, ne, NULL, 0, &even), 0);
    if (me % 2 == 0) {
        CHECK(even != SHMEM_TEAM_INVALID);
        CHECK_EQ_INT(shmem_team_my_pe(even), me / 2);
        CHECK_EQ_INT(shmem_team_n_pes(even), ne);
        CHECK_EQ_INT(shmem_team_translate_pe(even, ne - 1, SHMEM_TEAM_WORLD), 2 * (ne - 1));
        CHECK_EQ_INT(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, even), me / 2);
        run_on(even, "even");
    } else {
        CHECK(even == SHMEM_TEAM_INVALID);
        CHECK_EQ_INT(shmem_team_my_pe(even), -1);
        CHECK_EQ_INT(shmem_team_translate_pe(SHMEM_TEAM_WORLD, me, SHMEM_TEAM_WORLD), me);
    }
    /* Reverse order: stride -1 from the last PE. */
    shmem_team_t rev = SHMEM_TEAM_INVALID;
    CHECK_EQ_INT(shmem_team_split_strided(SHMEM_TEAM_WORLD, n - 1, -1, n, NULL, 0, &rev), 0);
    CHECK_EQ_INT(shmem_team_my_pe(rev), n - 1 - me);
    run_on(rev, "reversed");
    shmem_team_destroy(rev);
    if (even != SHMEM_TEAM_INVALID) shmem_team_destroy(even);

    MP_WHERE("errors");
    shmem_team_t bad = SHMEM_TEAM_WORLD;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, n + 1, NULL, 0, &bad) != 0);
    CHECK(bad == SHMEM_TEAM_INVALID);
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, -1, 1, 1, NULL, 0, &bad) != 0);
    long v = 0;
    CHECK(shmem_long_broadcast(SHMEM_TEAM_WORLD, &v, &v, 1, n) != 0);
    CHECK(shmem_long_sum_reduce(SHMEM_TEAM_INVALID, &v, &v, 1) != 0);
    CHECK_EQ_INT(shmem_team_n_pes(SHMEM_TEAM_INVALID), -1);
    shmem_barrier_all();
    sh_finish();
    return 0;
}

/*
 * workqueue.c - a distributed work queue on fetch-and-increment: PE 0 holds the next-task
 * counter; every PE takes tasks with shmem_long_atomic_fetch_inc until they run out and
 * records each task it ran in PE 0's per-task tally (atomic add) and its result in a
 * result array on PE 0 (put). Every task must run exactly once, and the sum of results
 * (a reduction of per-PE sums) must match the closed form.
 */
#include "shmem_check.h"

#define NTASKS 20000

static long next_task; /* the queue head lives in a global on PE 0 */

static uint64_t work(long t)
{
    return mp_mix64((uint64_t)t) & 0xffff;
}

int main(void)
{
    sh_init();
    int *tally = shmem_calloc(NTASKS, sizeof *tally);
    uint64_t *result = shmem_calloc(NTASKS, sizeof *result);
    uint64_t *mysum = shmem_calloc(1, sizeof *mysum);
    uint64_t *total = shmem_calloc(1, sizeof *total);
    CHECK(tally && result && mysum && total);
    long done = 0;
    for (;;) {
        long t = shmem_long_atomic_fetch_inc(&next_task, 0);
        if (t >= NTASKS) break;
        CHECKF(t >= 0, "fetch_inc returned %ld", t);
        uint64_t r = work(t);
        shmem_int_atomic_inc(&tally[t], 0);
        shmem_uint64_p(&result[t], r, 0);
        *mysum += r;
        done++;
    }
    shmem_barrier_all();
    CHECK_EQ_INT(shmem_uint64_sum_reduce(SHMEM_TEAM_WORLD, total, mysum, 1), 0);
    uint64_t want = 0;
    for (long t = 0; t < NTASKS; t++)
        want += work(t);
    CHECK_EQ_INT(*total, want);
    if (sh_me == 0) {
        for (long t = 0; t < NTASKS; t++) {
            CHECKF(tally[t] == 1, "task %ld ran %d times", t, tally[t]);
            CHECKF(result[t] == work(t), "task %ld result wrong", t);
        }
        CHECK_EQ_INT(next_task, NTASKS + sh_n);
    }
    printf("PE %d ran %ld tasks\n", sh_me, done);
    shmem_barrier_all();
    sh_finish();
    return 0;
}

/*
 * lock.c - shmem_set_lock / shmem_clear_lock / shmem_test_lock give mutual exclusion:
 * inside the lock each PE checks nobody else is inside (an `inside` word on PE 0 it
 * swaps from 0 to its number and back) and does a non-atomic read-modify-write of a
 * counter on the last PE (get, then put). Lost updates or a second PE inside fail the
 * test; the final count must be exact. Half the acquisitions spin on test_lock.
 */
#include "shmem_check.h"

#define ITERS 300

static long glock; /* a lock in a global */

int main(void)
{
    sh_init();
    int me = sh_me, n = sh_n, last = n - 1;
    long *lock = shmem_calloc(1, sizeof *lock);
    long *counter = shmem_calloc(1, sizeof *counter);
    int *inside = shmem_calloc(1, sizeof *inside);
    CHECK(lock && counter && inside);
    for (int i = 0; i < ITERS; i++) {
        MP_WHERE("iteration %d", i);
        /* Every PE uses the same lock in the same half: the heap one, then the global. */
        long *l = i < ITERS / 2 ? lock : &glock;
        if (i == ITERS / 2) shmem_barrier_all();
        if (i & 1) {
            while (shmem_test_lock(l) != 0) {
            }
        } else {
            shmem_set_lock(l);
        }
        int was = shmem_int_atomic_swap(inside, me + 1, 0);
        CHECKF(was == 0, "PE %d is inside the lock together with PE %d", me, was - 1);
        long c = shmem_long_g(counter, last);
        if (i % 16 == 0) mp_sleep_ms(1); /* widen the window a broken lock would show */
        shmem_long_p(counter, c + 1, last);
        was = shmem_int_atomic_swap(inside, 0, 0);
        CHECKF(was == me + 1, "inside changed to %d while PE %d held the lock", was - 1, me);
        shmem_clear_lock(l);
    }
    shmem_barrier_all();
    CHECK_EQ_INT(shmem_long_g(counter, last), (long)n * ITERS);
    /* A free lock: test_lock takes it, a second test_lock from another PE fails. */
    MP_WHERE("test_lock when held");
    if (me == 0) CHECK_EQ_INT(shmem_test_lock(lock), 0);
    shmem_barrier_all();
    if (me == last && n > 1) CHECK_EQ_INT(shmem_test_lock(lock), 1);
    shmem_barrier_all();
    if (me == 0) shmem_clear_lock(lock);
    shmem_barrier_all();
    if (me == last) {
        CHECK_EQ_INT(shmem_test_lock(lock), 0);
        shmem_clear_lock(lock);
    }
    shmem_barrier_all();
    sh_finish();
    return 0;
}

/*
 * signal.c - point-to-point synchronisation:
 *  - a ring of put_signal (ADD and SET, every size up to 256 KiB): PE i sends round r's
 *    data to PE i+1 with the signal, PE i+1 waits with shmem_signal_wait_until and must
 *    find all of round r's data (the data is delivered before the signal);
 *  - wait_until on a value a peer writes with a put (GE), and the _all/_any/_some/vector
 *    forms and the test forms on a flag array every PE writes.
 */
#include "shmem_check.h"

#define ROUNDS 300
#define MAXB   (256u << 10)

int main(void)
{
    sh_init();
    int me = sh_me, n = sh_n, right = (me + 1) % n, left = (me + n - 1) % n;
    char *buf = shmem_malloc(MAXB);
    uint64_t *sig = shmem_calloc(2, sizeof *sig);
    char *src = mp_malloc(MAXB);
    CHECK(buf && sig);

    for (int r = 1; r <= ROUNDS; r++) {
        size_t sz = (size_t)mp_seed((uint64_t)r, 0, 0, 0) % MAXB;
        if (r % 50 == 0) sz = MAXB;
        MP_WHERE("ring round %d size %zu", r, sz);
        mp_fill(src, sz, mp_seed((uint64_t)r, (uint64_t)me, sz, 5));
        if (r & 1)
            shmem_putmem_signal(buf, src, sz, &sig[0], 1, SHMEM_SIGNAL_ADD, right);
        else
            shmem_putmem_signal_nbi(buf, src, sz, &sig[0], (uint64_t)r, SHMEM_SIGNAL_SET, right);
        uint64_t v = shmem_signal_wait_until(&sig[0], SHMEM_CMP_GE, (uint64_t)r);
        CHECK_EQ_INT(v, r);
        CHECK_PATTERN(buf, sz, mp_seed((uint64_t)r, (uint64_t)left, sz, 5), "round %d from PE %d",
                      r, left);
        CHECK_EQ_INT(shmem_signal_fetch(&sig[0]), r);
        /* Tell the left neighbour its buffer on me may be overwritten. */
        shmem_uint64_atomic_set(&sig[1], (uint64_t)r, left);
        shmem_uint64_wait_until(&sig[1], SHMEM_CMP_GE, (uint64_t)r);
        shmem_quiet();
    }

    MP_WHERE("wait_until forms");
    int *flags = shmem_calloc((size_t)n, sizeof *flags);
    long *val = shmem_calloc(1, sizeof *val);
    CHECK(flags && val);
    shmem_barrier_all();
    shmem_long_p(val, 1000 + me, right); /* a put, not an atomic */
    shmem_long_wait_until(val, SHMEM_CMP_GE, 1000);
    CHECK_EQ_INT(*val, 1000 + left);
    CHECK(shmem_long_test(val, SHMEM_CMP_EQ, 1000 + left));
    CHECK(!shmem_long_test(val, SHMEM_CMP_LT, 1000));
    for (int t = 0; t < n; t++)
        shmem_int_p(&flags[me], 1 + me, t);
    shmem_int_wait_until_all(flags, (size_t)n, NULL, SHMEM_CMP_GT, 0);
    for (int s = 0; s < n; s++)
        CHECK_EQ_INT(flags[s], 1 + s);
    size_t any = shmem_int_wait_until_any(flags, (size_t)n, NULL, SHMEM_CMP_EQ, 1 + left);
    CHECK_EQ_INT(any, left);
    size_t idx[64];
    int *status = mp_malloc((size_t)n * sizeof(int));
    for (int s = 0; s < n; s++)
        status[s] = s == me; /* skip my own */
    size_t some = shmem_int_wait_until_some(flags, (size_t)n, idx, status, SHMEM_CMP_GE, 1);
    CHECK_EQ_INT(some, n - 1);
    for (size_t k = 0; k < some; k++)
        CHECK(idx[k] != (size_t)me);
    int *want = mp_malloc((size_t)n * sizeof(int));
    for (int s = 0; s < n; s++)
        want[s] = 1 + s;
    shmem_int_wait_until_all_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want);
    CHECK(shmem_int_test_all_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want));
    want[me] = -1;
    CHECK_EQ_INT(shmem_int_test_any_vector(flags, (size_t)n, NULL, SHMEM_CMP_EQ, want),
                 me == 0 ? (n > 1 ? 1 : SIZE_MAX) : 0);
    CHECK_EQ_INT(shmem_int_test_any(flags, (size_t)n, NULL, SHMEM_CMP_GT, n), SIZE_MAX);
    CHECK_EQ_INT(shmem_int_test_some(flags, (size_t)n, idx, NULL, SHMEM_CMP_GT, n), 0);
    CHECK_EQ_INT(shmem_int_wait_until_any(flags, 0, NULL, SHMEM_CMP_EQ, 0), SIZE_MAX);
    shmem_barrier_all();
    free(want);
    free(status);
    free(src);
    sh_finish();
    return 0;
}

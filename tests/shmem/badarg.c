/*
 * badarg.c - bad arguments end the job through the documented fatal path (exit code
 * 255, one line naming the routine and the error). BADARG selects the mistake:
 *   pe      shmem_putmem to PE n_pes          -> TERN_ERR_RANK
 *   addr    shmem_long_p into a stack variable -> TERN_ERR_INVAL (not symmetric)
 *   cmp     shmem_long_wait_until with cmp 99  -> TERN_ERR_INVAL
 *   sigop   put_signal with sig_op 7           -> TERN_ERR_INVAL
 *   free    shmem_free of a non-heap pointer   -> TERN_ERR_INVAL
 *   init    shmem_putmem before shmem_init     -> TERN_ERR_NOT_INIT
 * A rank that gets past its mistake prints FAIL, which fails the test.
 */
#include "shmem_check.h"

int main(void)
{
    const char *what = getenv("BADARG");
    if (what == NULL) what = "pe";
    long stackvar = 0;
    if (strcmp(what, "init") == 0) {
        static long g;
        shmem_long_p(&g, 1, 0);
        MP_FAIL("shmem_long_p before shmem_init returned");
    }
    sh_init();
    long *h = shmem_calloc(4, sizeof(long));
    uint64_t *sig = shmem_calloc(1, sizeof *sig);
    CHECK(h && sig);
    shmem_barrier_all();
    if (sh_me == sh_n - 1) {
        if (strcmp(what, "pe") == 0)
            shmem_putmem(h, &stackvar, sizeof stackvar, sh_n);
        else if (strcmp(what, "addr") == 0)
            shmem_long_p(&stackvar, 1, 0);
        else if (strcmp(what, "cmp") == 0)
            shmem_long_wait_until(h, 99, 0);
        else if (strcmp(what, "sigop") == 0)
            shmem_putmem_signal(h, &stackvar, 8, sig, 1, 7, 0);
        else if (strcmp(what, "free") == 0)
            shmem_free(&stackvar);
        MP_FAIL("BADARG=%s: the call returned", what);
    }
    /* The others wait; the fatal path ends them. Over tcp the barrier may return first
     * (the dead PE's connection closes before ternrun ends the job): keep waiting, the
     * test's 20 s limit fails a job that is never ended. */
    shmem_barrier_all();
    mp_sleep_ms(30000);
    MP_FAIL("the job was not ended");
}

/*
 * shmem_check.h - helpers of the SHMEM tests: mp_check.h's CHECK macros and data
 * patterns, with a start that goes through shmem_init (which starts tern).
 */
#ifndef TERN_TESTS_SHMEM_CHECK_H
#define TERN_TESTS_SHMEM_CHECK_H

#include "mp_check.h"
#include "shmem.h"

static int sh_me, sh_n;

static inline void sh_init(void)
{
    mp_watchdog(100);
    shmem_init();
    sh_me = shmem_my_pe();
    sh_n = shmem_n_pes();
    mp_rank = sh_me;
    CHECKF(sh_me >= 0 && sh_me < sh_n, "shmem_my_pe %d, shmem_n_pes %d", sh_me, sh_n);
    CHECK_EQ_INT(sh_me, tern_rank());
    CHECK_EQ_INT(sh_n, tern_size());
}

static inline void sh_finish(void)
{
    CHECK_EQ_INT(shmemx_error(), 0);
    shmem_finalize();
    printf("mp-done rank %d\n", sh_me);
}

#endif

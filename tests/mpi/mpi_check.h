/*
 * mpi_check.h - helpers of the MPI test programs in tests/mpi. Plain MPI only: the same
 * programs build with terncc and with any other MPI's mpicc (tests/mpi/openmpi.sh runs
 * them on Open MPI), which proves they test MPI semantics, not tern's.
 */
#ifndef TERN_TESTS_MPI_CHECK_H
#define TERN_TESTS_MPI_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int mt_rank = -1;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL [rank %d] %s:%d: CHECK(%s)\n", mt_rank, __FILE__, __LINE__,      \
                    #cond);                                                                        \
            fflush(stderr);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "FAIL [rank %d] %s:%d: CHECK(%s): ", mt_rank, __FILE__, __LINE__,      \
                    #cond);                                                                        \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
            fflush(stderr);                                                                        \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

/* An MPI call that must succeed. */
#define OK(expr) CHECKF((expr) == MPI_SUCCESS, "%s failed", #expr)

/* An MPI call that must fail with error class `cls` (MPI_ERRORS_RETURN must be set). */
#define FAILS(expr, cls)                                                                           \
    do {                                                                                           \
        int mt_rc_ = (expr), mt_cls_ = -1;                                                         \
        MPI_Error_class(mt_rc_, &mt_cls_);                                                         \
        CHECKF(mt_cls_ == (cls), "%s: error class %d, expected %d (%s)", #expr, mt_cls_, (cls),    \
               #cls);                                                                              \
    } while (0)

static inline void mt_init(int *argc, char ***argv)
{
    OK(MPI_Init(argc, argv));
    MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank);
}

static inline int mt_done(const char *name)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (mt_rank == 0) printf("%s: ok\n", name);
    OK(MPI_Finalize());
    return 0;
}

#endif

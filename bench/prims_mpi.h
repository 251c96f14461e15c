/*
 * prims_mpi.h - the communication primitives of the benchmark patterns
 * (patterns.h) on MPI. Plain MPI-1 calls only, so the same source builds with
 * Open MPI, MPICH and later tern's own terncc.
 *
 * "Standard" mode is MPI_Send / MPI_Isend; "sync" mode is MPI_Ssend / MPI_Issend.
 * MPI's default error handler (MPI_ERRORS_ARE_FATAL) ends the job on any error.
 */
#ifndef TERN_BENCH_PRIMS_MPI_H
#define TERN_BENCH_PRIMS_MPI_H

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#define BENCH_LIB_DEFAULT "mpi"

typedef MPI_Request bp_req_t;

/* BENCH_THREAD_MULTIPLE=1 asks for MPI_THREAD_MULTIPLE: what thread safety costs one thread. */
static void bp_init(int *argc, char ***argv)
{
    const char *mt = getenv("BENCH_THREAD_MULTIPLE");
    int provided;
    if (mt && *mt == '1')
        MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
    else
        MPI_Init(argc, argv);
}
static void bp_finalize(void)
{
    MPI_Finalize();
}
static int bp_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}
static int bp_size(void)
{
    int s;
    MPI_Comm_size(MPI_COMM_WORLD, &s);
    return s;
}
static void bp_barrier(void)
{
    MPI_Barrier(MPI_COMM_WORLD);
}
static void bp_abort(int code)
{
    MPI_Abort(MPI_COMM_WORLD, code);
}

/* The largest x over all ranks, on every rank (the slowest rank's time). */
static inline double bp_max_double(double x)
{
    double m = 0;
    MPI_Allreduce(&x, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m;
}

/* Which MPI this is, for the "lib" column: openmpi, mpich, tern-mpi or mpi. */
static const char *bp_lib_name(void)
{
#ifdef MPI_MAX_LIBRARY_VERSION_STRING
    static char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int n = 0;
    MPI_Get_library_version(v, &n);
    if (strstr(v, "Open MPI")) return "openmpi";
    if (strstr(v, "MPICH")) return "mpich";
    if (strstr(v, "tern")) return "tern-mpi";
#endif
    return BENCH_LIB_DEFAULT;
}

/* The library's own description of itself (first line), for run metadata. */
static inline const char *bp_lib_version(void)
{
    static char v[4096] = "unknown MPI";
#ifdef MPI_MAX_LIBRARY_VERSION_STRING
    int n = 0;
    MPI_Get_library_version(v, &n);
    v[strcspn(v, "\n")] = 0;
#endif
    return v;
}

/* Message sizes of the benchmarks stay far below INT_MAX bytes (64 MiB by default). */
static inline int bp_count(size_t len)
{
    if (len > (size_t)INT_MAX) {
        fprintf(stderr, "bench: message of %zu bytes does not fit an MPI count\n", len);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return (int)len;
}

static inline void bp_send(const void *buf, size_t len, int peer, int tag, int sync)
{
    if (sync)
        MPI_Ssend((void *)buf, bp_count(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    else
        MPI_Send((void *)buf, bp_count(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD);
}

static inline void bp_recv(void *buf, size_t cap, int peer, int tag)
{
    MPI_Recv(buf, bp_count(cap), MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

static inline void bp_isend(const void *buf, size_t len, int peer, int tag, int sync, bp_req_t *r)
{
    if (sync)
        MPI_Issend((void *)buf, bp_count(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
    else
        MPI_Isend((void *)buf, bp_count(len), MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
}

static inline void bp_irecv(void *buf, size_t cap, int peer, int tag, bp_req_t *r)
{
    MPI_Irecv(buf, bp_count(cap), MPI_BYTE, peer, tag, MPI_COMM_WORLD, r);
}

/* GCC mistakes MPICH's MPI_STATUSES_IGNORE (a sentinel pointer) for an empty array. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
static inline void bp_waitall(int n, bp_req_t *r)
{
    MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#endif /* TERN_BENCH_PRIMS_MPI_H */

/*
 * prims_tern.h - the few communication primitives the benchmark patterns
 * (patterns.h) need, implemented on the native tern API.
 *
 * "Standard" mode is tern_isend + tern_wait (tern_send is synchronous by contract);
 * "sync" mode is tern_send / tern_issend. Every error ends the job with its name:
 * a benchmark that silently measured a failing call would report nonsense.
 */
#ifndef TERN_BENCH_PRIMS_TERN_H
#define TERN_BENCH_PRIMS_TERN_H

#include <stdio.h>
#include <stdlib.h>

#include <tern.h>

#define BENCH_LIB_DEFAULT "tern"

typedef tern_request_t bp_req_t;

static void bp_check(int rc, const char *what)
{
    if (rc != TERN_OK) {
        fprintf(stderr, "bench: rank %d: %s failed: %s (%s)\n", tern_rank(), what,
                tern_err_name(rc), tern_strerror(rc));
        tern_abort(2);
    }
}

/* BENCH_THREAD_MULTIPLE=1 asks for TERN_THREAD_MULTIPLE: what the lock costs one thread. */
static void bp_init(int *argc, char ***argv)
{
    const char *mt = getenv("BENCH_THREAD_MULTIPLE");
    int level = mt && *mt == '1' ? TERN_THREAD_MULTIPLE : TERN_THREAD_SINGLE;
    bp_check(tern_init_thread(argc, argv, level, NULL), "tern_init_thread");
}
static void bp_finalize(void)
{
    bp_check(tern_finalize(), "tern_finalize");
}
static int bp_rank(void)
{
    return tern_rank();
}
static int bp_size(void)
{
    return tern_size();
}
static void bp_barrier(void)
{
    bp_check(tern_barrier(TERN_COMM_WORLD), "tern_barrier");
}
static void bp_abort(int code)
{
    tern_abort(code);
}
/* The largest x over all ranks, on every rank (the slowest rank's time). */
static inline double bp_max_double(double x)
{
    double m = 0;
    bp_check(tern_allreduce(&x, &m, 1, TERN_DOUBLE, TERN_MAX, TERN_COMM_WORLD), "tern_allreduce");
    return m;
}
static const char *bp_lib_name(void)
{
    return BENCH_LIB_DEFAULT;
}

static inline const char *bp_lib_version(void)
{
    static char v[64];
    snprintf(v, sizeof v, "tern %d.%d.%d (native API)", TERN_VERSION_MAJOR, TERN_VERSION_MINOR,
             TERN_VERSION_PATCH);
    return v;
}

static inline void bp_send(const void *buf, size_t len, int peer, int tag, int sync)
{
    if (sync) {
        bp_check(tern_send(buf, len, peer, tag, TERN_COMM_WORLD), "tern_send");
    } else {
        tern_request_t r;
        bp_check(tern_isend(buf, len, peer, tag, TERN_COMM_WORLD, &r), "tern_isend");
        bp_check(tern_wait(&r, NULL), "tern_wait(isend)");
    }
}

static inline void bp_recv(void *buf, size_t cap, int peer, int tag)
{
    bp_check(tern_recv(buf, cap, peer, tag, TERN_COMM_WORLD, NULL), "tern_recv");
}

static inline void bp_isend(const void *buf, size_t len, int peer, int tag, int sync, bp_req_t *r)
{
    if (sync)
        bp_check(tern_issend(buf, len, peer, tag, TERN_COMM_WORLD, r), "tern_issend");
    else
        bp_check(tern_isend(buf, len, peer, tag, TERN_COMM_WORLD, r), "tern_isend");
}

static inline void bp_irecv(void *buf, size_t cap, int peer, int tag, bp_req_t *r)
{
    bp_check(tern_irecv(buf, cap, peer, tag, TERN_COMM_WORLD, r), "tern_irecv");
}

static inline void bp_waitall(int n, bp_req_t *r)
{
    bp_check(tern_waitall((size_t)n, r, NULL), "tern_waitall");
}

#endif /* TERN_BENCH_PRIMS_TERN_H */

/*
 * trace.h - tern's built-in tracer (docs/TRACING.md): per rank, every call of the public
 * APIs (enter and leave, with the arguments that matter) and every message the core moves
 * (handed to tern, matched, completed), kept in a per-thread buffer and written to
 * TERN_TRACE/tern-trace.<rank>.bin as self-contained chunks when a buffer fills and at
 * finalize. Clocks are tied to rank 0's by ping-pongs at start and stop.
 *
 * Off (TERN_TRACE unset), every hook is one test of `trace_on`, predicted not taken.
 * The entry points of the public APIs are generated wrappers (trace_wrap_*.c, made by
 * gen_trace_wrap.py from the public headers): they test trace_on and otherwise jump to
 * the real function.
 */
#ifndef TERN_TRACE_H
#define TERN_TRACE_H

#include <stdint.h>

#include "trace/trace_format.h"

/* Nonzero while this process records. Read on every hook; written only by trace_start
 * and trace_stop (single-threaded moments of init and finalize). */
extern int trace_on;
#ifdef TERN_TRACING
#define TRACE_ON() __builtin_expect(trace_on != 0, 0)
#else
#define TRACE_ON() 0 /* built without the tracer (cmake -DTERN_TRACING=OFF) */
#endif

/* The arguments of a call worth keeping; -1 (TRACE_NONE) where the call has none. */
#define TRACE_NONE INT32_MIN
struct trace_args {
    int32_t peer; /* world rank */
    int32_t tag;
    int32_t comm;  /* core context id of the communicator */
    int32_t csize; /* communicator size */
    int32_t root;  /* world rank */
    int32_t op;    /* TRACE_OP_* (a reduction) */
    uint64_t bytes;
};
#define TRACE_ARGS_INIT                                                                            \
    {                                                                                              \
        TRACE_NONE, TRACE_NONE, TRACE_NONE, TRACE_NONE, TRACE_NONE, TRACE_NONE, 0                  \
    }

/* Called by core_init once the core is up (every rank): opens the file, aligns clocks. */
void trace_start(void);
/* Called first thing in core_finalize (every live rank): aligns clocks again, writes out
 * every buffer and closes the file. */
void trace_stop(void);

/* Call records, from the generated wrappers. `site` is the caller's return address. */
void trace_enter(uint16_t fn, const struct trace_args *a, const void *site);
void trace_leave(uint16_t fn, int rc);
/* A message record from the core (kinds TRACE_MSG_*). */
void trace_msg(int kind, int peer, int tag, int ctx, uint64_t bytes, uint32_t req, int err);
/* The same, stamped at `t` (from trace_clock()): a send is stamped before its frame
 * leaves, since the receiver may complete it before the sender records it. */
void trace_msg_at(uint64_t t, int kind, int peer, int tag, int ctx, uint64_t bytes, uint32_t req,
                  int err);
uint64_t trace_clock(void);
uint64_t trace_send_clock(void); /* for a send: the first in a call takes the call's entry */

/* Argument helpers for the generated wrappers (trace_args.c and trace_mpi.c). */
struct tern_comm;
void trace_native_comm(struct trace_args *a, const struct tern_comm *c);
int32_t trace_native_rank(const struct tern_comm *c, int rank); /* comm rank -> world rank */
uint64_t trace_native_dt_bytes(int dt, uint64_t count);
int32_t trace_native_op(int op);
void trace_mpi_comm(struct trace_args *a, int comm);
/* The ENTER of an MPI point-to-point call (one communicator look-up for its context, size
 * and the peer's world rank): the generated wrappers' one call before the real one. */
void trace_mpi_p2p(uint16_t fn, int comm, int peer, int tag, int count, int datatype,
                   const void *site);
int32_t trace_mpi_rank(int comm, int rank);
uint64_t trace_mpi_bytes(int64_t count, int datatype);
int32_t trace_mpi_op(int op);

#endif

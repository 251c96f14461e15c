/*
 * trace_args.c - what the generated wrappers record about their arguments: communicator
 * context and size, ranks translated to world ranks, byte counts. Only called while
 * tracing is on, before the real function has checked its arguments, so every handle is
 * validated here and a bad one is recorded as "none" (the real call then reports it).
 */
#include "coll/coll.h"
#include "core/core.h"
#include "trace/trace.h"

static const struct tern_comm *trace_native_ok(const struct tern_comm *c)
{
    return c != NULL && c->magic == CORE_COMM_MAGIC ? c : NULL;
}

void trace_native_comm(struct trace_args *a, const struct tern_comm *c)
{
    if ((c = trace_native_ok(c)) == NULL) return;
    a->comm = c->ctx;
    a->csize = c->size;
}

int32_t trace_native_rank(const struct tern_comm *c, int rank)
{
    if ((c = trace_native_ok(c)) == NULL || rank < 0 || rank >= c->size) return rank;
    return core_comm_world(c, rank);
}

uint64_t trace_native_dt_bytes(int dt, uint64_t count)
{
    return count * coll_dt_size((tern_datatype_t)dt);
}

int32_t trace_native_op(int op)
{
    return op;
}

/*
 * req.c - request objects. Requests are never returned to malloc while the library
 * runs: a free list recycles them and each keeps its table index (id) for life, so an
 * id carried in a frame always names a real object.
 */
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "trace/trace.h"
#include "core/core_tl.h"
#include "util/mem.h"

volatile sig_atomic_t core_req_growing;

static int core_req_grow_table(void)
{
    uint32_t add = core.nreqs ? core.nreqs : 64;
    if (core.nreqs > UINT32_MAX / 4) return TERN_ERR_NOMEM;
    core_req_t **t = realloc(core.reqs, (size_t)(core.nreqs + add) * sizeof *t);
    if (t == NULL) return TERN_ERR_NOMEM;
    core.reqs = t;
    core_req_t *block = aligned_alloc(_Alignof(core_req_t), (size_t)add * sizeof *block);
    if (block == NULL) return TERN_ERR_NOMEM;
    memset(block, 0, (size_t)add * sizeof *block);
    /* Slot 0 of the first block stays unused so that id 0 means "none". */
    for (uint32_t i = 0; i < add; i++) {
        core_req_t *r = &block[i];
        r->id = core.nreqs + i;
        t[r->id] = r;
        if (r->id == 0) continue;
        r->next = core.req_free;
        core.req_free = r;
    }
    core.nreqs += add;
    return 0;
}

static int core_req_grow(void)
{
    core_req_growing = 1; /* the hang report's handler must not walk the table now */
    int rc = core_req_grow_table();
    core_req_growing = 0;
    return rc;
}

core_req_t *core_req_alloc(int kind)
{
    if (core.req_free == NULL && core_req_grow() != 0) return NULL;
    core_req_t *r = core.req_free;
    core.req_free = r->next;
    uint32_t id = r->id;
    uint16_t gen = r->gen;
    /* A plain request never reads cur: clearing up to lay keeps it in two cache lines. */
    util_zero(r, offsetof(core_req_t, lay));
    r->lay = NULL;
    r->id = id;
    r->gen = gen;
    r->kind = (uint8_t)kind;
    return r;
}

void core_req_free(core_req_t *r)
{
    r->gen++; /* handles to it from now on are stale */
    r->state = CORE_RS_FREE;
    r->kind = 0;
    r->next = core.req_free;
    core.req_free = r;
}

core_req_t *core_req_lookup(uint32_t id, int kind)
{
    if (id == 0 || id >= core.nreqs) return NULL;
    core_req_t *r = core.reqs[id];
    return r->kind == kind && r->state != CORE_RS_FREE && r->state != CORE_RS_DONE ? r : NULL;
}

void core_req_complete(core_req_t *r, int err)
{
    if (r->ref) { /* ended early (error, failure, abandon): the transport lets go */
        r->ref = 0;
        core.peers[r->peer].tl->unref(r->peer);
    }
    if (err == TERN_OK && r->fault) err = TERN_ERR_FAULT; /* the protocol ended, the data not */
    r->err = err;
    r->state = CORE_RS_DONE;
    if (TRACE_ON() && r->kind == CORE_REQ_RECV)
        trace_msg(TRACE_MSG_DONE, r->src, r->msg_tag, r->ctx, r->bytes, r->id, err);
    core.ncomplete++; /* a thread waiting for another's completion looks (thread.c) */
    if (r->on_complete) r->on_complete(r);
}

static void core_req_free_when_done(core_req_t *r)
{
    core_req_free(r);
}

void core_req_abandon(core_req_t *r)
{
    if (r->state == CORE_RS_DONE) {
        core_req_free(r);
        return;
    }
    if (r->kind == CORE_REQ_RECV && r->state == CORE_RS_POSTED) {
        core_match_unpost(core.match[r->ctx], r);
        core_req_free(r);
        return;
    }
    if (r->kind == CORE_REQ_SEND && r->ref) {
        /* The transport still reads buf for a partly written frame: it copies the rest. */
        r->ref = 0;
        core.peers[r->peer].tl->unref(r->peer);
        if (r->state == CORE_RS_SENDING) {
            core_req_free(r);
            return;
        }
    }
    /* Under way with a live peer: let it end on its own without touching the buffer
     * again. A streaming receive drops the rest of its data; a send not started goes
     * out empty; a streaming send stops where it is. */
    if (r->kind == CORE_REQ_RECV) {
        r->len = 0;
    } else if (r->state == CORE_RS_QUEUED) {
        r->len = 0;
        r->rndv = 0;
    } else if (r->state == CORE_RS_STREAM) {
        r->len = r->offset;
    }
    r->on_complete = core_req_free_when_done;
    if (r->kind == CORE_REQ_RECV && r->state == CORE_RS_STREAM && r->src >= 0 &&
        core.peers[r->src].placing == r) {
        /* The transport is writing into buf right now: divert the rest to scratch. */
        core.peers[r->src].tl->place_abort(r->src);
    }
}

void core_req_release_all(void)
{
    /* Blocks were allocated with aligned_alloc in doubling sizes; their first elements are
     * the ids 0, 64, 128, 256, ... */
    uint32_t start = 0, size = 64;
    while (start < core.nreqs) {
        free(core.reqs[start]);
        start += size;
        size = start;
    }
    free(core.reqs);
    core.reqs = NULL;
    core.nreqs = 0;
    core.req_free = NULL;
}

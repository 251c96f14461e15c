/*
 * trace_format.h - the layout of a tern trace file, tern-trace.<rank>.bin (one per rank,
 * docs/TRACING.md). Shared by the writer (trace.c) and the OTF2 converter
 * (tools/tern-otf2); the Python reader (ternbench/tracefile.py) follows the same layout.
 * Little-endian, the writer's natural alignment; every struct has a fixed size.
 *
 * A file is a sequence of chunks, each a struct trace_chunk followed by `bytes` bytes of
 * payload. A file cut short (a killed rank) ends at its last whole chunk.
 */
#ifndef TERN_TRACE_FORMAT_H
#define TERN_TRACE_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define TRACE_NONE        INT32_MIN   /* an absent value (as in trace.h) */
#define TRACE_CHUNK_MAGIC 0x43525454u /* "TTRC" */
#define TRACE_FORMAT_VERSION                                                                       \
    4 /* 4: one record per point-to-point call; 3: merged records; 2: compact records; 1:          \
         struct trace_rec */

enum trace_chunk_type {
    TRACE_CHUNK_HEADER = 1,  /* struct trace_header; first chunk of the file */
    TRACE_CHUNK_NAMES = 2,   /* text: one "api name\n" line per function id, from 0 */
    TRACE_CHUNK_RECORDS = 3, /* struct trace_records_head, then the records (see below) */
    TRACE_CHUNK_CLOCK = 4,   /* struct trace_clock: alignment with rank 0 */
    TRACE_CHUNK_MAPS = 5,    /* text: "lo hi offset path\n" per executable mapping (hex) */
    TRACE_CHUNK_END = 6,     /* struct trace_end: the rank finalized cleanly */
};

struct trace_chunk {
    uint32_t magic;
    uint16_t type;
    uint16_t version;
    uint32_t bytes; /* payload that follows */
    uint32_t reserved;
};

struct trace_header {
    uint32_t rank, size;
    uint64_t pid;
    int64_t realtime_ns; /* wall clock at start (for people) */
    uint64_t start_tick; /* tick counter and monotonic clock read together at start */
    int64_t start_ns;
    uint32_t tick_is_ns; /* ticks are CLOCK_MONOTONIC nanoseconds (else a counter) */
    uint32_t rec_bytes;  /* v2, v3: sizeof(struct trace_unit) (16); v1: sizeof(struct trace_rec) */
    uint32_t version_major, version_minor;
    char host[64];
    char exe[256];
};

struct trace_records_head {
    uint32_t tid;  /* thread that made them */
    uint32_t n;    /* events (v1: struct trace_rec each; v2, v3: of the records, a v3 record
                    * with a merged send or leave counting as two or three) */
    uint64_t tick; /* tick counter and monotonic clock read together when written */
    int64_t ns;
    /* v2 and v3: */
    uint64_t t0;    /* the time the first record's delta counts from */
    uint32_t units; /* 16-byte units of records that follow */
    uint32_t pad;
};
#define TRACE_RECORDS_HEAD_V1 24 /* bytes of trace_records_head in version 1 */

/* Version 2 and 3 records: each is 1 to 6 units of 16 bytes. The first unit has the time
 * as a signed delta from the last stamp of the record before it in the chunk (from t0 for
 * the first; records are in the order they were written, their stamps need not be), the
 * kind, the number of units and two fields; the kind says what the next units hold:
 *
 *   LEAVE      1 unit:  fn, a = return code
 *   ENTER      2-5:     fn, a = peer, b = tag; [u64 bytes, u64 call site];
 *                       with TRACE_UF_ARGS: [i32 comm, csize, root, op];
 *                       with TRACE_UF_MSG (v3): [u64 bytes, u32 request, u16 context,
 *                       u8 kind (MSG_SEND), u8 0]: the call's send, at the ENTER's stamp,
 *                       to the ENTER's peer with its tag, error 0;
 *                       with TRACE_UF_LEAVE (v3): the call's LEAVE (below)
 *   MSG_*      2-3:     fn = context, a = peer, b = tag; [u64 bytes, u32 request, i32 error];
 *                       with TRACE_UF_LEAVE (v3, MSG_DONE only): the LEAVE of the call the
 *                       receive completed in
 *
 *   P2P_SEND, P2P_RECV (v4) 3 units: a whole point-to-point call with its one message,
 *                       fn, a = peer (world rank), b = tag; [u64 bytes, u64 call site];
 *                       [i32 mdt (ticks from the entry to the message: 0 for a send, whose
 *                       message has the entry's stamp), i32 ldt (ticks from the message to
 *                       the LEAVE), u32 request, u16 context, u16 communicator size]. It
 *                       stands for ENTER (comm = context, csize, root and op absent), the
 *                       message (MSG_SEND or MSG_DONE, same peer, tag, context and bytes,
 *                       error 0) and the LEAVE (return code 0); written only when all of that
 *                       holds, else the call is written as the records above.
 *
 * A merged LEAVE unit is [i32 dt (ticks after the record's stamp), u8 TRACE_LEAVE, u8 0,
 * u16 fn, i32 return code, i32 0]; the next record's delta counts from the LEAVE's stamp.
 * With TRACE_UF_ABS the delta did not fit 32 bits: the unit after the first holds the
 * absolute time (u64 ticks, u64 0) and the delta field is 0. Absent values are
 * TRACE_NONE (INT32_MIN); an ENTER without TRACE_UF_ARGS has comm, csize, root and op
 * absent. */
struct trace_unit {
    int32_t dt;    /* ticks since the previous record (or t0) */
    uint8_t kind;  /* enum trace_kind | TRACE_UF_* flags */
    uint8_t units; /* units of this record, this one included */
    uint16_t fn;   /* function id (calls) or core context id (messages) */
    int32_t a, b;
};
#define TRACE_UF_MSG       0x10u /* v3: ENTER with its send merged */
#define TRACE_UF_LEAVE     0x20u /* v3: ENTER or MSG_DONE with a LEAVE merged */
#define TRACE_UF_ARGS      0x40u
#define TRACE_UF_ABS       0x80u
#define TRACE_UF_KIND      0x0fu
#define TRACE_REC_P2P_SEND 6 /* v4: a point-to-point call with its send, one record */
#define TRACE_REC_P2P_RECV 7 /* v4: a point-to-point call with its completed receive */
#define TRACE_P2P_UNITS    3
#define TRACE_UNITS_MAX    6

/* One event as the readers keep it (and the records of version 1 files). Unused integer
 * fields hold TRACE_NONE (INT32_MIN). */
struct trace_rec {
    uint64_t t;   /* ticks */
    uint8_t kind; /* enum trace_kind */
    uint8_t api;  /* TRACE_API_* of fn (calls) */
    uint16_t fn;  /* function id (NAMES chunk) */
    int32_t peer; /* world rank */
    int32_t tag;  /* LEAVE: the return code */
    int32_t comm; /* core context id */
    int32_t csize;
    int32_t root;
    int32_t op;   /* reduction (per api: the MPI_Op or tern_op_t value); MSG_DONE: error */
    uint32_t pad; /* readers: the record's place in its file (orders equal stamps) */
    uint64_t bytes;
    uint64_t x; /* ENTER: the call site (return address); MSG_MATCH/DONE: request id */
};

enum trace_clock_phase { TRACE_CLOCK_INIT = 0, TRACE_CLOCK_FINI = 1 };

struct trace_clock {
    uint32_t phase;
    uint32_t ok;   /* 0: rank 0 could not be reached (offset unknown) */
    uint64_t tick; /* tick counter and monotonic clock read together */
    int64_t ns;
    int64_t offset_ns; /* rank 0's monotonic clock minus mine, at ns */
    int64_t rtt_ns;    /* the round trip the offset came from (error <= rtt/2) */
};

struct trace_end {
    uint64_t records;
    uint64_t lost; /* records dropped because the file could not be written */
};

/* Record kinds (docs/TRACING.md has the file layout). */
enum trace_kind {
    TRACE_ENTER =
        1, /* a public function was called: fn, peer, tag, comm, root, op, bytes, x=site */
    TRACE_LEAVE = 2,    /* it returned: fn, tag = return code */
    TRACE_MSG_SEND = 3, /* a message handed to the core: peer = dest, tag, comm = ctx, bytes */
    TRACE_MSG_MATCH =
        4, /* a rendezvous receive met its message: peer = src, tag, comm, bytes, x=req */
    TRACE_MSG_DONE = 5, /* a receive completed: peer = src, tag, comm, bytes, x=req, op=error;
                         * without a MATCH before it (eager), matched at this moment too */
};

enum trace_api { TRACE_API_NATIVE = 1, TRACE_API_MPI = 2, TRACE_API_SHMEM = 3, TRACE_API_CONV = 4 };

/* The events of one version 2, 3 or 4 RECORDS chunk (`units` units at `u`, delta times from
 * t0) as struct trace_rec, a merged record giving two or three, into `out` (room for `n`
 * events); `api` is the api of each function id (NULL: 0) with `nfn` entries. Returns the
 * events decoded, or -1 if the units are inconsistent. */
static inline long trace_decode(const struct trace_unit *u, uint32_t units, uint32_t n, uint64_t t0,
                                const uint8_t *api, int nfn, struct trace_rec *out)
{
    uint64_t t = t0;
    uint32_t i = 0;
    long k = 0;
    while (i < units) {
        const struct trace_unit *h = &u[i];
        unsigned kind = h->kind & TRACE_UF_KIND, nu = h->units, x = 1;
        if (nu < 1 || nu > TRACE_UNITS_MAX || i + nu > units || (uint32_t)k >= n) return -1;
        struct trace_rec *r = &out[k++];
        if (h->kind & TRACE_UF_ABS) {
            uint64_t abs_t;
            __builtin_memcpy(&abs_t, &u[i + x], sizeof abs_t);
            t = abs_t;
            x++;
        } else {
            t += (uint64_t)(int64_t)h->dt;
        }
        r->t = t;
        r->kind = (uint8_t)kind;
        r->api = 0;
        r->fn = 0;
        r->peer = h->a;
        r->tag = h->b;
        r->comm = r->csize = r->root = r->op = TRACE_NONE;
        r->pad = 0;
        r->bytes = 0;
        r->x = 0;
        if (kind == TRACE_LEAVE) {
            r->fn = h->fn;
            r->peer = TRACE_NONE;
            r->tag = h->a;
        } else if (kind == TRACE_ENTER) {
            if (x >= nu) return -1;
            r->fn = h->fn;
            __builtin_memcpy(&r->bytes, &u[i + x], 8);
            __builtin_memcpy(&r->x, (const char *)&u[i + x] + 8, 8);
            x++;
            if (h->kind & TRACE_UF_ARGS) {
                if (x >= nu) return -1;
                const int32_t *g = (const int32_t *)(const void *)&u[i + x];
                r->comm = g[0];
                r->csize = g[1];
                r->root = g[2];
                r->op = g[3];
                x++;
            }
            if (h->kind & TRACE_UF_MSG) { /* the call's send, at its entry */
                if (x >= nu || (uint32_t)k >= n) return -1;
                struct trace_rec *m = &out[k++];
                const unsigned char *p = (const unsigned char *)&u[i + x];
                uint32_t req;
                uint16_t ctx;
                *m = *r;
                m->kind = TRACE_MSG_SEND;
                m->fn = 0;
                __builtin_memcpy(&m->bytes, p, 8);
                __builtin_memcpy(&req, p + 8, 4);
                __builtin_memcpy(&ctx, p + 12, 2);
                m->x = req;
                m->comm = ctx;
                m->csize = m->root = TRACE_NONE;
                m->op = 0;
                x++;
            }
        } else if (kind == TRACE_REC_P2P_SEND || kind == TRACE_REC_P2P_RECV) {
            /* ENTER, its message and its LEAVE (v4) */
            if (nu != TRACE_P2P_UNITS || h->kind != kind || (uint32_t)k + 2 > n) return -1;
            const unsigned char *p = (const unsigned char *)&u[i + 2];
            int32_t mdt, ldt;
            uint32_t req;
            uint16_t ctx, csize;
            __builtin_memcpy(&mdt, p, 4);
            __builtin_memcpy(&ldt, p + 4, 4);
            __builtin_memcpy(&req, p + 8, 4);
            __builtin_memcpy(&ctx, p + 12, 2);
            __builtin_memcpy(&csize, p + 14, 2);
            r->kind = TRACE_ENTER;
            r->fn = h->fn;
            r->api = api != NULL && r->fn < nfn ? api[r->fn] : 0;
            __builtin_memcpy(&r->bytes, &u[i + 1], 8);
            __builtin_memcpy(&r->x, (const char *)&u[i + 1] + 8, 8);
            r->comm = ctx;
            r->csize = csize;
            struct trace_rec *m = &out[k++], *v = &out[k++];
            *m = *r;
            m->kind = kind == TRACE_REC_P2P_SEND ? TRACE_MSG_SEND : TRACE_MSG_DONE;
            m->api = 0;
            m->fn = 0;
            m->csize = TRACE_NONE;
            m->op = 0;
            m->x = req;
            t += (uint64_t)(int64_t)mdt;
            m->t = t;
            t += (uint64_t)(int64_t)ldt;
            v->t = t;
            v->kind = TRACE_LEAVE;
            v->fn = h->fn;
            v->api = r->api;
            v->peer = TRACE_NONE;
            v->tag = 0;
            v->comm = v->csize = v->root = v->op = TRACE_NONE;
            v->pad = 0;
            v->bytes = 0;
            v->x = 0;
            i += nu;
            continue;
        } else if (kind >= TRACE_MSG_SEND && kind <= TRACE_MSG_DONE) {
            if (x >= nu) return -1;
            uint32_t req;
            int32_t err;
            r->comm = h->fn;
            __builtin_memcpy(&r->bytes, &u[i + x], 8);
            __builtin_memcpy(&req, (const char *)&u[i + x] + 8, 4);
            __builtin_memcpy(&err, (const char *)&u[i + x] + 12, 4);
            r->x = req;
            r->op = err;
            x++;
        } else {
            return -1;
        }
        if (r->kind == TRACE_ENTER) r->api = api != NULL && r->fn < nfn ? api[r->fn] : 0;
        if (h->kind & TRACE_UF_LEAVE) { /* the call's LEAVE, merged */
            if (x >= nu || (uint32_t)k >= n) return -1;
            const struct trace_unit *l = &u[i + x];
            struct trace_rec *v = &out[k++];
            t += (uint64_t)(int64_t)l->dt;
            v->t = t;
            v->kind = TRACE_LEAVE;
            v->fn = l->fn;
            v->api = api != NULL && l->fn < nfn ? api[l->fn] : 0;
            v->peer = TRACE_NONE;
            v->tag = l->a;
            v->comm = v->csize = v->root = v->op = TRACE_NONE;
            v->pad = 0;
            v->bytes = 0;
            v->x = 0;
            x++;
        }
        if (x != nu) return -1;
        if (kind == TRACE_LEAVE) r->api = api != NULL && r->fn < nfn ? api[r->fn] : 0;
        i += nu;
    }
    return k;
}

#endif

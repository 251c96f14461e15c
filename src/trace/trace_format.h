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

#include <stdint.h>

#define TRACE_CHUNK_MAGIC    0x43525454u /* "TTRC" */
#define TRACE_FORMAT_VERSION 1

enum trace_chunk_type {
    TRACE_CHUNK_HEADER = 1,  /* struct trace_header; first chunk of the file */
    TRACE_CHUNK_NAMES = 2,   /* text: one "api name\n" line per function id, from 0 */
    TRACE_CHUNK_RECORDS = 3, /* struct trace_records_head, then n struct trace_rec */
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
    uint32_t rec_bytes;  /* sizeof(struct trace_rec) */
    uint32_t version_major, version_minor;
    char host[64];
    char exe[256];
};

struct trace_records_head {
    uint32_t tid; /* thread that made them */
    uint32_t n;
    uint64_t tick; /* tick counter and monotonic clock read together when written */
    int64_t ns;
};

/* One event. Unused integer fields hold TRACE_NONE (INT32_MIN). */
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
    int32_t op; /* reduction (per api: the MPI_Op or tern_op_t value); MSG_DONE: error */
    uint32_t pad;
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

#endif

/*
 * trace.c - the tracer's runtime: per-thread record buffers, the per-rank file of
 * self-contained chunks, and the clock alignment with rank 0 (docs/TRACING.md).
 *
 * Why chunks: a rank killed mid-run leaves a file that ends after its last whole chunk,
 * which the readers take as a truncated but valid trace; nothing in a chunk refers to a
 * later one. Each chunk of records carries the tick counter and the monotonic clock read
 * together when it was written, so ticks can be turned into nanoseconds from whatever
 * part of the file survived.
 *
 * Why ticks: a record costs one time-stamp; on x86-64 the invariant TSC (rdtsc, about
 * 7 ns) is several times cheaper than clock_gettime, which matters at 4-8 records per
 * small message. Elsewhere ticks are clock_gettime(CLOCK_MONOTONIC) nanoseconds.
 */
#define _GNU_SOURCE
#include "trace/trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define TRACE_TSC 1
#else
#define TRACE_TSC 0
#endif

#include "core/core.h"
#include "trace/trace_fn.h"
#include "trace/trace_format.h"
#include "util/log.h"
#include "util/tunables.h"

int trace_on;

struct trace_buf {
    struct trace_buf *next; /* every buffer, for trace_stop */
    uint32_t tid;
    uint32_t n, cap;
    struct trace_rec *rec;
    uint64_t enter_t; /* the last ENTER's time stamp, and whether no message has used it */
    int fresh;
    uint64_t done_t; /* the last receive completion's stamp since that ENTER, if done_fresh */
    int done_fresh;
};

static __thread struct trace_buf *trace_tls __attribute__((tls_model("initial-exec")));
static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER; /* the list and the file */
static struct trace_buf *trace_bufs;
static int trace_fd = -1;
static uint32_t trace_cap; /* records per buffer */
static uint64_t trace_written, trace_lost;
static int trace_muted; /* the clock ping-pongs are not traced */

static inline uint64_t trace_ticks(void)
{
#if TRACE_TSC
    return __rdtsc();
#else
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
#endif
}

static int64_t trace_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The tick counter and the monotonic clock read together: the best of a few tries, the
 * one whose two tick reads are closest (a preemption between the reads would otherwise
 * shift every time the pair anchors). */
static void trace_pair(uint64_t *tick, int64_t *ns)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 5; i++) {
        uint64_t a = trace_ticks();
        int64_t n = trace_ns();
        uint64_t b = trace_ticks();
        if (b - a < best) {
            best = b - a;
            *tick = a + (b - a) / 2;
            *ns = n;
        }
    }
}

/* A number naming this machine's boot: ranks that share it share CLOCK_MONOTONIC. */
static int64_t trace_boot_id(void)
{
    char buf[64] = "";
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (f) {
        if (fgets(buf, sizeof buf, f) == NULL) buf[0] = '\0';
        fclose(f);
    }
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (const char *p = buf; *p && *p != '\n'; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return buf[0] ? (int64_t)(h >> 1) : -1;
}

/* One chunk, header and payload in one write (O_APPEND: chunks of threads never mix). */
static void trace_write_chunk(uint16_t type, const void *head, size_t hlen, const void *body,
                              size_t blen)
{
    if (trace_fd < 0) return;
    struct trace_chunk c = {.magic = TRACE_CHUNK_MAGIC,
                            .type = type,
                            .version = TRACE_FORMAT_VERSION,
                            .bytes = (uint32_t)(hlen + blen)};
    struct iovec v[3] = {{&c, sizeof c}, {(void *)head, hlen}, {(void *)body, blen}};
    size_t want = sizeof c + hlen + blen;
    ssize_t n = writev(trace_fd, v, 3);
    if (n != (ssize_t)want) {
        UTIL_ERROR("trace: writing %zu bytes to the trace file failed (%s); tracing stops here",
                   want, n < 0 ? strerror(errno) : "short write");
        close(trace_fd);
        trace_fd = -1;
    }
}

/* Write a buffer out as one RECORDS chunk. Called with trace_lock held. */
static void trace_flush_locked(struct trace_buf *b)
{
    if (b->n == 0) return;
    struct trace_records_head h = {.tid = b->tid, .n = b->n};
    trace_pair(&h.tick, &h.ns);
    if (trace_fd >= 0)
        trace_written += b->n;
    else
        trace_lost += b->n;
    trace_write_chunk(TRACE_CHUNK_RECORDS, &h, sizeof h, b->rec, (size_t)b->n * sizeof *b->rec);
    b->n = 0;
}

static __attribute__((noinline)) struct trace_buf *trace_buf_new(void)
{
    struct trace_buf *b = calloc(1, sizeof *b);
    if (b == NULL) return NULL;
    b->rec = malloc((size_t)trace_cap * sizeof *b->rec);
    if (b->rec == NULL) {
        free(b);
        return NULL;
    }
    /* Touched now: a page fault on the way (one per 73 records) costs more than the
     * records themselves. */
    memset(b->rec, 0, (size_t)trace_cap * sizeof *b->rec);
    b->cap = trace_cap;
    b->tid = (uint32_t)syscall(SYS_gettid);
    pthread_mutex_lock(&trace_lock);
    b->next = trace_bufs;
    trace_bufs = b;
    pthread_mutex_unlock(&trace_lock);
    trace_tls = b;
    return b;
}

/* The next free record of this thread's buffer (written out first when full). */
static inline struct trace_rec *trace_slot(void)
{
    struct trace_buf *b = trace_tls;
    if (__builtin_expect(b == NULL, 0) && (b = trace_buf_new()) == NULL) return NULL;
    if (__builtin_expect(b->n == b->cap, 0)) {
        pthread_mutex_lock(&trace_lock);
        trace_flush_locked(b);
        pthread_mutex_unlock(&trace_lock);
    }
    return &b->rec[b->n++];
}

void trace_enter(uint16_t fn, const struct trace_args *a, const void *site)
{
    if (!trace_on) return;
    struct trace_rec *r = trace_slot();
    if (r == NULL) return;
    r->t = trace_ticks();
    trace_tls->enter_t = r->t;
    trace_tls->fresh = 1;
    trace_tls->done_fresh = 0;
    r->kind = TRACE_ENTER;
    r->api = trace_fn_api[fn];
    r->fn = fn;
    r->peer = a->peer;
    r->tag = a->tag;
    r->comm = a->comm;
    r->csize = a->csize;
    r->root = a->root;
    r->op = a->op;
    r->pad = 0;
    r->bytes = a->bytes;
    r->x = (uint64_t)(uintptr_t)site;
}

void trace_leave(uint16_t fn, int rc)
{
    if (!trace_on) return; /* MPI_Finalize: tracing ended inside the call */
    struct trace_rec *r = trace_slot();
    if (r == NULL) return;
    /* A call that completed a receive is left when it completed: a blocking receive
     * returns right after, and the clock is most of a record's cost. */
    r->t = trace_tls->done_fresh ? trace_tls->done_t : trace_ticks();
    trace_tls->fresh = 0;
    trace_tls->done_fresh = 0;
    r->kind = TRACE_LEAVE;
    r->api = trace_fn_api[fn];
    r->fn = fn;
    r->peer = r->comm = r->csize = r->root = r->op = TRACE_NONE;
    r->tag = rc;
    r->pad = 0;
    r->bytes = 0;
    r->x = 0;
}

uint64_t trace_clock(void)
{
    return trace_ticks();
}

/* The first message a call sends is stamped with the call's entry: it was handed to tern
 * during the call, a few tens of nanoseconds later, and an 8-byte ping-pong then reads
 * the clock three times per message instead of four (the clock is most of the cost). */
uint64_t trace_send_clock(void)
{
    struct trace_buf *b = trace_tls;
    if (b != NULL && b->fresh) {
        b->fresh = 0;
        return b->enter_t;
    }
    return trace_ticks();
}

void trace_msg(int kind, int peer, int tag, int ctx, uint64_t bytes, uint32_t req, int err)
{
    trace_msg_at(trace_ticks(), kind, peer, tag, ctx, bytes, req, err);
}

void trace_msg_at(uint64_t t, int kind, int peer, int tag, int ctx, uint64_t bytes, uint32_t req,
                  int err)
{
    if (trace_muted) return;
    struct trace_rec *r = trace_slot();
    if (r == NULL) return;
    r->t = t;
    r->kind = (uint8_t)kind;
    r->api = 0;
    r->fn = 0;
    r->peer = peer;
    r->tag = tag;
    r->comm = ctx;
    r->csize = TRACE_NONE;
    r->root = TRACE_NONE;
    r->op = err;
    r->pad = 0;
    r->bytes = bytes;
    r->x = req;
    if (kind == TRACE_MSG_DONE) {
        trace_tls->done_t = t;
        trace_tls->done_fresh = 1;
    } else {
        trace_tls->done_fresh = 0; /* a later event: the leave takes its own stamp */
    }
}

/* ---- clock alignment --------------------------------------------------------------
 * Each rank r != 0 ping-pongs with rank 0 TRACE_SYNC_ROUNDS times and keeps the round
 * with the smallest round-trip: rank 0's clock read when it answered is taken to match
 * the middle of that round on r (error at most half that round-trip). Rank 0 serves the
 * ranks one after the other; a dead rank fails its receive at once and is skipped. A rank
 * booted with rank 0 (same boot_id: one kernel, one CLOCK_MONOTONIC) records offset 0. */
#define TRACE_SYNC_ROUNDS 12
#define TRACE_SYNC_TAG    (-4242) /* below every user tag: nothing else can match it */
#define TRACE_SYNC_CTX    1       /* the world communicator's collective context */

static int trace_xfer(int send, void *buf, int peer)
{
    core_req_t *r;
    int rc = send
                 ? core_isend(buf, 2 * sizeof(int64_t), peer, TRACE_SYNC_TAG, TRACE_SYNC_CTX, 0, &r)
                 : core_irecv(buf, 2 * sizeof(int64_t), peer, TRACE_SYNC_TAG, TRACE_SYNC_CTX,
                              &tern__comm_world, &r);
    if (rc) return rc;
    rc = core_wait(r);
    if (rc) return rc; /* the core keeps the request: the peer failed */
    rc = r->err;
    core_req_free(r);
    return rc;
}

static void trace_sync(uint32_t phase)
{
    struct trace_clock c = {.phase = phase, .ok = 1, .offset_ns = 0, .rtt_ns = 0};
    int64_t boot = trace_boot_id();
    trace_muted = 1;
    if (core.rank == 0) {
        for (int r = 1; r < core.size; r++)
            for (int k = 0; k < TRACE_SYNC_ROUNDS; k++) {
                int64_t t[2];
                if (trace_xfer(0, &t, r)) break;
                t[0] = trace_ns();
                t[1] = boot;
                if (trace_xfer(1, &t, r)) break;
            }
    } else if (core.size > 1) {
        int64_t best = INT64_MAX;
        for (int k = 0; k < TRACE_SYNC_ROUNDS; k++) {
            int64_t t0 = trace_ns(), out[2] = {t0, boot}, t_root[2];
            if (trace_xfer(1, out, 0) || trace_xfer(0, t_root, 0)) {
                c.ok = best != INT64_MAX;
                break;
            }
            int64_t t1 = trace_ns();
            if (t1 - t0 < best) {
                best = t1 - t0;
                /* Same boot as rank 0: the same CLOCK_MONOTONIC, offset 0 exactly; the
                 * round trip still bounds what a measurement would have erred by. */
                c.offset_ns =
                    t_root[1] == boot && boot != -1 ? 0 : t_root[0] - (t0 + (t1 - t0) / 2);
                c.rtt_ns = best;
            }
        }
    }
    trace_muted = 0;
    trace_pair(&c.tick, &c.ns);
    trace_write_chunk(TRACE_CHUNK_CLOCK, &c, sizeof c, NULL, 0);
}

/* The executable mappings, so that call sites (return addresses) can be named
 * "binary+0xoffset" and resolved to file:line by the readers. */
static void trace_write_maps(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (f == NULL) return;
    char line[PATH_MAX + 128], *out = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&out, &len);
    if (m == NULL) {
        fclose(f);
        return;
    }
    while (fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off;
        char perm[8];
        int pos = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perm, &off, &pos) < 4) continue;
        if (perm[2] != 'x' || pos == 0 || line[pos] != '/') continue;
        fprintf(m, "%lx %lx %lx %s", lo, hi, off, line + pos);
    }
    fclose(f);
    fclose(m);
    trace_write_chunk(TRACE_CHUNK_MAPS, out, len, NULL, 0);
    free(out);
}

void trace_start(void)
{
    const char *dir = util_tun.trace;
    if (dir == NULL || dir[0] == '\0' || trace_on) return;
#ifndef TERN_TRACING
    if (core.rank == 0)
        UTIL_ERROR("trace: TERN_TRACE is set but this tern was built without the tracer");
    return;
#endif
    size_t bytes = util_tun.trace_buffer;
    if (bytes < 8 * sizeof(struct trace_rec)) bytes = 8 * sizeof(struct trace_rec);
    trace_cap = (uint32_t)(bytes / sizeof(struct trace_rec));
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        UTIL_ERROR("trace: cannot make the trace directory %s (%s); not tracing", dir,
                   strerror(errno));
        return;
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tern-trace.%d.bin", dir, core.rank);
    trace_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644);
    if (trace_fd < 0) {
        UTIL_ERROR("trace: cannot create %s (%s); not tracing", path, strerror(errno));
        return;
    }
    struct trace_header h = {.rank = (uint32_t)core.rank,
                             .size = (uint32_t)core.size,
                             .pid = (uint64_t)getpid(),
                             .tick_is_ns = !TRACE_TSC,
                             .rec_bytes = sizeof(struct trace_rec),
                             .version_major = TERN_VERSION_MAJOR,
                             .version_minor = TERN_VERSION_MINOR};
    gethostname(h.host, sizeof h.host - 1);
    ssize_t n = readlink("/proc/self/exe", h.exe, sizeof h.exe - 1);
    if (n < 0) h.exe[0] = '\0';
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    h.realtime_ns = (int64_t)rt.tv_sec * 1000000000 + rt.tv_nsec;
    trace_pair(&h.start_tick, &h.start_ns);
    trace_write_chunk(TRACE_CHUNK_HEADER, &h, sizeof h, NULL, 0);
    /* The function names, so the file describes itself. */
    char *names = NULL;
    size_t nlen = 0;
    FILE *m = open_memstream(&names, &nlen);
    if (m) {
        for (int i = 0; i < TRACE_FN_COUNT; i++)
            fprintf(m, "%u %s\n", (unsigned)trace_fn_api[i], trace_fn_names[i]);
        fclose(m);
        trace_write_chunk(TRACE_CHUNK_NAMES, names, nlen, NULL, 0);
        free(names);
    }
    trace_write_maps();
    trace_sync(TRACE_CLOCK_INIT);
    trace_on = 1;
}

void trace_stop(void)
{
    if (!trace_on) return;
    trace_on = 0;
    trace_sync(TRACE_CLOCK_FINI);
    trace_write_maps(); /* libraries loaded since the start */
    pthread_mutex_lock(&trace_lock);
    for (struct trace_buf *b = trace_bufs; b; b = b->next)
        trace_flush_locked(b);
    struct trace_end e = {.records = trace_written, .lost = trace_lost};
    trace_write_chunk(TRACE_CHUNK_END, &e, sizeof e, NULL, 0);
    while (trace_bufs) {
        struct trace_buf *b = trace_bufs;
        trace_bufs = b->next;
        free(b->rec);
        free(b);
    }
    trace_tls = NULL; /* other threads' pointers are never used again: trace_on is 0 */
    if (trace_fd >= 0) close(trace_fd);
    trace_fd = -1;
    pthread_mutex_unlock(&trace_lock);
}

/*
 * tern_otf2.c - tern-otf2 DIR: convert the per-rank trace files a traced job left in DIR
 * (tern-trace.<rank>.bin, docs/TRACING.md) into one OTF2 archive, DIR/traces.otf2 (with
 * DIR/traces.def and DIR/traces/), that otf2-print, Vampir and other OTF2 tools read.
 *
 * One location (a process) per rank. Every traced call is a region, entered and left;
 * collectives also carry MpiCollectiveBegin/End; point-to-point messages are MpiSend on
 * the sender (when handed to tern) and MpiRecv on the receiver (when complete), all on one
 * communicator of every rank with world ranks. Messages the collectives send underneath
 * (their own context) are left out, as MPI tracers leave them. Times are nanoseconds on
 * the common clock (rank 0's, with the offsets and drift the files carry), starting at 0.
 *
 * Built only when CMake finds libotf2; the library itself never depends on it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <ftw.h>
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace_format.h"

struct rank_file {
    int present;
    int version; /* of the file's format (the header chunk's) */
    struct trace_header h;
    char **names; /* "api name" lines by function id */
    int nnames;
    struct trace_rec *rec;
    size_t nrec, caprec;
    uint64_t tick_lo, tick_hi; /* the first and last (tick, ns) pairs */
    int64_t ns_lo, ns_hi;
    int npairs;
    struct trace_clock clk[2];
    int has_clk[2];
    double rate; /* ns per tick */
};

static int quiet;

static void die(const char *fmt, const char *arg)
{
    fprintf(stderr, "tern-otf2: ");
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    exit(1);
}

static void pair_add(struct rank_file *f, uint64_t tick, int64_t ns)
{
    if (f->npairs++ == 0 || tick < f->tick_lo) {
        f->tick_lo = tick;
        f->ns_lo = ns;
    }
    if (f->npairs == 1 || tick > f->tick_hi) {
        f->tick_hi = tick;
        f->ns_hi = ns;
    }
}

/* Read one rank's file up to its last whole chunk (a killed rank's file ends early). */
static void rank_read(const char *path, struct rank_file *f)
{
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) die("cannot open %s", path);
    struct trace_chunk c;
    char *buf = NULL;
    size_t cap = 0;
    while (fread(&c, sizeof c, 1, fp) == 1) {
        if (c.magic != TRACE_CHUNK_MAGIC) break;
        if (c.bytes + 1 > cap) {
            cap = c.bytes + 1;
            if ((buf = realloc(buf, cap)) == NULL) die("out of memory reading %s", path);
        }
        if (fread(buf, 1, c.bytes, fp) != c.bytes) break;
        buf[c.bytes] = '\0';
        switch (c.type) {
        case TRACE_CHUNK_HEADER:
            if (c.bytes < sizeof f->h) die("%s: short header", path);
            memcpy(&f->h, buf, sizeof f->h);
            f->version = c.version;
            if (c.version >= 2 ? f->h.rec_bytes != sizeof(struct trace_unit)
                               : f->h.rec_bytes != sizeof(struct trace_rec))
                die("%s: unknown record size", path);
            f->present = 1;
            pair_add(f, f->h.start_tick, f->h.start_ns);
            break;
        case TRACE_CHUNK_NAMES:
            for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                f->names = realloc(f->names, (size_t)(f->nnames + 1) * sizeof *f->names);
                if (f->names == NULL) die("out of memory reading %s", path);
                f->names[f->nnames++] = strdup(line);
            }
            break;
        case TRACE_CHUNK_RECORDS: {
            struct trace_records_head rh = {0};
            size_t hlen = f->version >= 2 ? sizeof rh : TRACE_RECORDS_HEAD_V1;
            if (c.bytes < hlen) die("%s: a records chunk is inconsistent", path);
            memcpy(&rh, buf, hlen);
            size_t body = f->version >= 2 ? (size_t)rh.units * sizeof(struct trace_unit)
                                          : (size_t)rh.n * sizeof(struct trace_rec);
            if (hlen + body > c.bytes) die("%s: a records chunk is inconsistent", path);
            pair_add(f, rh.tick, rh.ns);
            if (f->nrec + rh.n > f->caprec) {
                f->caprec = (f->nrec + rh.n) * 2;
                f->rec = realloc(f->rec, f->caprec * sizeof *f->rec);
                if (f->rec == NULL) die("out of memory reading %s", path);
            }
            if (f->version >= 2) {
                /* 16-byte aligned copy: the payload sits 40 bytes into buf */
                struct trace_unit *u = malloc(body + 1);
                if (u == NULL) die("out of memory reading %s", path);
                memcpy(u, buf + hlen, body);
                long k = trace_decode(u, rh.units, rh.n, rh.t0, NULL, 0, f->rec + f->nrec);
                free(u);
                if (k != (long)rh.n) die("%s: a records chunk is inconsistent", path);
            } else {
                memcpy(f->rec + f->nrec, buf + hlen, (size_t)rh.n * sizeof *f->rec);
            }
            for (uint32_t i = 0; i < rh.n; i++) /* the order they were written in */
                f->rec[f->nrec + i].pad = (uint32_t)(f->nrec + i);
            f->nrec += rh.n;
            break;
        }
        case TRACE_CHUNK_CLOCK: {
            struct trace_clock k;
            memcpy(&k, buf, sizeof k);
            pair_add(f, k.tick, k.ns);
            if (k.phase < 2) {
                f->clk[k.phase] = k;
                f->has_clk[k.phase] = k.ok != 0;
            }
            break;
        }
        default:
            break;
        }
    }
    free(buf);
    fclose(fp);
    if (!f->present) die("%s: not a tern trace file", path);
    f->rate = f->h.tick_is_ns || f->tick_hi == f->tick_lo
                  ? 1.0
                  : (double)(f->ns_hi - f->ns_lo) / (double)(f->tick_hi - f->tick_lo);
}

/* A record's time on the common clock, in ns (before the shift to start at 0). */
static double rank_time(const struct rank_file *f, uint64_t tick)
{
    double ns = f->h.tick_is_ns ? (double)tick
                                : (double)f->ns_lo + ((double)tick - (double)f->tick_lo) * f->rate;
    double off = 0;
    if (f->has_clk[0]) {
        off = (double)f->clk[0].offset_ns;
        if (f->has_clk[1] && f->clk[1].ns != f->clk[0].ns)
            off += (ns - (double)f->clk[0].ns) *
                   (double)(f->clk[1].offset_ns - f->clk[0].offset_ns) /
                   (double)(f->clk[1].ns - f->clk[0].ns);
    }
    return ns + off;
}

static int rec_cmp(const void *a, const void *b)
{
    const struct trace_rec *x = a, *y = b; /* by time, then in the order written */
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return x->pad < y->pad ? -1 : x->pad > y->pad;
}

static const char *fn_name(const struct rank_file *f, int fn, int *api)
{
    if (fn >= f->nnames) {
        *api = 0;
        return "unknown";
    }
    *api = atoi(f->names[fn]);
    const char *sp = strchr(f->names[fn], ' ');
    return sp ? sp + 1 : f->names[fn];
}

/* The OTF2 collective operation of a function, or -1 for one that is not a collective. */
static int coll_of(const char *name)
{
    static const struct {
        const char *suffix;
        int op;
    } t[] = {{"barrier", OTF2_COLLECTIVE_OP_BARRIER},
             {"bcast", OTF2_COLLECTIVE_OP_BCAST},
             {"broadcast", OTF2_COLLECTIVE_OP_BCAST},
             {"gatherv", OTF2_COLLECTIVE_OP_GATHERV},
             {"gather", OTF2_COLLECTIVE_OP_GATHER},
             {"scatterv", OTF2_COLLECTIVE_OP_SCATTERV},
             {"scatter", OTF2_COLLECTIVE_OP_SCATTER},
             {"allgatherv", OTF2_COLLECTIVE_OP_ALLGATHERV},
             {"allgather", OTF2_COLLECTIVE_OP_ALLGATHER},
             {"alltoallv", OTF2_COLLECTIVE_OP_ALLTOALLV},
             {"alltoallw", OTF2_COLLECTIVE_OP_ALLTOALLW},
             {"alltoall", OTF2_COLLECTIVE_OP_ALLTOALL},
             {"allreduce", OTF2_COLLECTIVE_OP_ALLREDUCE},
             {"reduce_scatter_block", OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK},
             {"reduce_scatter", OTF2_COLLECTIVE_OP_REDUCE_SCATTER},
             {"reduce", OTF2_COLLECTIVE_OP_REDUCE},
             {"exscan", OTF2_COLLECTIVE_OP_EXSCAN},
             {"scan", OTF2_COLLECTIVE_OP_SCAN}};
    const char *base = strchr(name, '_'); /* MPI_Allreduce, tern_allreduce */
    if (base == NULL || strncmp(name, "shmem", 5) == 0) return -1;
    base++;
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (strcasecmp(base, t[i].suffix) == 0) return t[i].op;
    return -1;
}

static OTF2_FlushType pre_flush(void *u, OTF2_FileType ft, OTF2_LocationRef loc, void *cd, bool fin)
{
    return OTF2_FLUSH;
}

static OTF2_TimeStamp post_flush(void *u, OTF2_FileType ft, OTF2_LocationRef loc)
{
    return 0;
}

static int rm_entry(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(p);
}

static void check(OTF2_ErrorCode e, const char *what)
{
    if (e != OTF2_SUCCESS) die("libotf2 failed: %s", what);
}

int main(int argc, char **argv)
{
    int a = 1;
    if (a < argc && strcmp(argv[a], "--quiet") == 0) {
        quiet = 1;
        a++;
    }
    if (a + 1 != argc || argv[a][0] == '-') {
        fprintf(stderr, "usage: tern-otf2 [--quiet] DIR\n"
                        "Convert DIR/tern-trace.<rank>.bin into the OTF2 archive "
                        "DIR/traces.otf2.\n");
        return 2;
    }
    const char *dir = argv[a];
    char path[4096];
    /* Ranks: as many as the first file found says the job had. */
    int nranks = 0;
    for (int r = 0; r < 1 << 20; r++) {
        snprintf(path, sizeof path, "%s/tern-trace.%d.bin", dir, r);
        if (access(path, R_OK) == 0) {
            struct rank_file probe = {0};
            rank_read(path, &probe);
            nranks = (int)probe.h.size;
            for (int i = 0; i < probe.nnames; i++)
                free(probe.names[i]);
            free(probe.names);
            free(probe.rec);
            break;
        }
        if (r > 4096) break;
    }
    if (nranks == 0) die("no tern-trace.<rank>.bin in %s", dir);
    struct rank_file *files = calloc((size_t)nranks, sizeof *files);
    if (files == NULL) die("out of memory for %s", dir);
    int nfound = 0;
    for (int r = 0; r < nranks; r++) {
        snprintf(path, sizeof path, "%s/tern-trace.%d.bin", dir, r);
        if (access(path, R_OK) != 0) continue;
        rank_read(path, &files[r]);
        qsort(files[r].rec, files[r].nrec, sizeof *files[r].rec, rec_cmp);
        nfound++;
    }
    /* The origin: the earliest event of any rank. */
    double t0 = 0, tmax = 0;
    int first = 1;
    for (int r = 0; r < nranks; r++)
        if (files[r].present && files[r].nrec) {
            double lo = rank_time(&files[r], files[r].rec[0].t);
            double hi = rank_time(&files[r], files[r].rec[files[r].nrec - 1].t);
            if (first || lo < t0) t0 = lo;
            if (first || hi > tmax) tmax = hi;
            first = 0;
        }

    /* A fresh archive each time. */
    snprintf(path, sizeof path, "%s/traces", dir);
    nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
    snprintf(path, sizeof path, "%s/traces.otf2", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/traces.def", dir);
    unlink(path);

    OTF2_Archive *ar =
        OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                          OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (ar == NULL) die("cannot create the OTF2 archive in %s", dir);
    OTF2_FlushCallbacks fcb = {.otf2_pre_flush = pre_flush, .otf2_post_flush = post_flush};
    check(OTF2_Archive_SetFlushCallbacks(ar, &fcb, NULL), "flush callbacks");
    check(OTF2_Archive_SetSerialCollectiveCallbacks(ar), "collective callbacks");
    check(OTF2_Archive_SetCreator(ar, "tern-otf2"), "creator");
    check(OTF2_Archive_OpenEvtFiles(ar), "opening event files");

    /* Regions: one per function id of rank files (ids are the same in every file of a
     * job: one library wrote them). */
    int nfn = 0;
    const struct rank_file *names_of = NULL;
    for (int r = 0; r < nranks; r++)
        if (files[r].present && files[r].nnames > nfn) {
            nfn = files[r].nnames;
            names_of = &files[r];
        }
    /* Regions are numbered densely, in function-id order, over the functions used. */
    char *used = calloc((size_t)nfn + 1, 1);
    uint32_t *region_of = calloc((size_t)nfn + 1, sizeof *region_of);
    if (used == NULL || region_of == NULL) die("out of memory%s", "");
    for (int r = 0; r < nranks; r++)
        for (size_t i = 0; i < files[r].nrec; i++)
            if (files[r].rec[i].kind == TRACE_ENTER && files[r].rec[i].fn < nfn)
                used[files[r].rec[i].fn] = 1;
    uint32_t nregions = 0;
    for (int fn = 0; fn < nfn; fn++)
        if (used[fn]) region_of[fn] = nregions++;
    uint64_t *nevents = calloc((size_t)nranks, sizeof *nevents);
    uint64_t nsend = 0, nrecv = 0, ncoll = 0;
    for (int r = 0; r < nranks; r++) {
        struct rank_file *f = &files[r];
        if (!f->present) continue;
        OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, (OTF2_LocationRef)r);
        if (w == NULL) die("cannot make an event writer for rank %s", "");
        /* Receives: MATCH gives the message, DONE (same request) its completion. */
        struct {
            uint64_t req;
            int32_t src, tag, comm;
            uint64_t bytes;
        } *open_rx = NULL;
        size_t nrx = 0, caprx = 0;
        int depth = 0;
        int stack_fn[256];
        size_t stack_i[256];
        uint64_t last = 0;
        for (size_t i = 0; i < f->nrec; i++) {
            const struct trace_rec *e = &f->rec[i];
            double tt = rank_time(f, e->t) - t0;
            uint64_t ts = tt < 0 ? 0 : (uint64_t)tt;
            if (ts < last) ts = last; /* one location's events never go back in time */
            last = ts;
            int api;
            switch (e->kind) {
            case TRACE_ENTER: {
                const char *name = fn_name(f, e->fn, &api);
                check(OTF2_EvtWriter_Enter(w, NULL, ts, region_of[e->fn < nfn ? e->fn : 0]),
                      "Enter");
                nevents[r]++;
                if (depth < 256) {
                    stack_fn[depth] = e->fn;
                    stack_i[depth] = i;
                }
                depth++;
                if (coll_of(name) >= 0) {
                    check(OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, ts), "CollectiveBegin");
                    nevents[r]++;
                }
                break;
            }
            case TRACE_LEAVE: {
                const char *name = fn_name(f, e->fn, &api);
                /* The enter's arguments, for the collective's end record. */
                const struct trace_rec *en =
                    depth > 0 && depth <= 256 ? &f->rec[stack_i[depth - 1]] : NULL;
                if (en && en->fn != e->fn) en = NULL;
                int op = coll_of(name);
                if (op >= 0 && en) {
                    uint32_t root = en->root == INT32_MIN || en->root < 0 ? OTF2_UNDEFINED_UINT32
                                                                          : (uint32_t)en->root;
                    check(OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, ts, (OTF2_CollectiveOp)op, 0,
                                                          root, en->bytes, en->bytes),
                          "CollectiveEnd");
                    nevents[r]++;
                    ncoll++;
                }
                if (depth > 0) depth--;
                check(OTF2_EvtWriter_Leave(w, NULL, ts, region_of[e->fn < nfn ? e->fn : 0]),
                      "Leave");
                nevents[r]++;
                break;
            }
            case TRACE_MSG_SEND:
                if (e->comm % 2 == 0 && e->peer >= 0 && e->peer < nranks) {
                    check(OTF2_EvtWriter_MpiSend(w, NULL, ts, (uint32_t)e->peer, 0,
                                                 (uint32_t)e->tag, e->bytes),
                          "MpiSend");
                    nevents[r]++;
                    nsend++;
                }
                break;
            case TRACE_MSG_MATCH:
                if (e->comm % 2 == 0 && e->peer >= 0 && e->peer < nranks) {
                    if (nrx == caprx) {
                        caprx = caprx ? 2 * caprx : 64;
                        open_rx = realloc(open_rx, caprx * sizeof *open_rx);
                        if (open_rx == NULL) die("out of memory%s", "");
                    }
                    open_rx[nrx].req = e->x;
                    open_rx[nrx].src = e->peer;
                    open_rx[nrx].tag = e->tag;
                    open_rx[nrx].comm = e->comm;
                    open_rx[nrx].bytes = e->bytes;
                    nrx++;
                }
                break;
            case TRACE_MSG_DONE: {
                int found = 0;
                for (size_t j = 0; j < nrx; j++)
                    if (open_rx[j].req == e->x) {
                        if (e->op == 0) {
                            check(OTF2_EvtWriter_MpiRecv(w, NULL, ts, (uint32_t)open_rx[j].src, 0,
                                                         (uint32_t)open_rx[j].tag,
                                                         open_rx[j].bytes),
                                  "MpiRecv");
                            nevents[r]++;
                            nrecv++;
                        }
                        open_rx[j] = open_rx[--nrx];
                        found = 1;
                        break;
                    }
                /* Eager: no MATCH record, the message completed as it was matched. */
                if (!found && e->op == 0 && e->comm % 2 == 0 && e->peer >= 0 && e->peer < nranks) {
                    check(OTF2_EvtWriter_MpiRecv(w, NULL, ts, (uint32_t)e->peer, 0,
                                                 (uint32_t)e->tag, e->bytes),
                          "MpiRecv");
                    nevents[r]++;
                    nrecv++;
                }
                break;
            }
            default:
                break;
            }
        }
        /* A rank that died inside calls: close them at its last event. */
        while (depth > 0) {
            depth--;
            if (depth < 256) {
                check(OTF2_EvtWriter_Leave(w, NULL, last, region_of[stack_fn[depth]]), "Leave");
                nevents[r]++;
            }
        }
        free(open_rx);
        check(OTF2_Archive_CloseEvtWriter(ar, w), "closing an event writer");
    }
    check(OTF2_Archive_CloseEvtFiles(ar), "closing event files");

    /* Definitions. */
    check(OTF2_Archive_OpenDefFiles(ar), "opening definition files");
    for (int r = 0; r < nranks; r++) {
        if (!files[r].present) continue;
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, (OTF2_LocationRef)r);
        check(OTF2_Archive_CloseDefWriter(ar, dw), "closing a definition writer");
    }
    check(OTF2_Archive_CloseDefFiles(ar), "closing definition files");
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(ar);
    if (g == NULL) die("no global definition writer%s", "");
    check(OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, (uint64_t)(tmax - t0) + 1,
                                                    OTF2_UNDEFINED_TIMESTAMP),
          "clock properties");
    /* Strings: 0 "", 1 "machine", 2 "node", 3 "tern world", then one per rank, per
     * region, per host. */
    uint32_t s = 0;
    check(OTF2_GlobalDefWriter_WriteString(g, s++, ""), "string");
    check(OTF2_GlobalDefWriter_WriteString(g, s++, "machine"), "string");
    check(OTF2_GlobalDefWriter_WriteString(g, s++, "node"), "string");
    check(OTF2_GlobalDefWriter_WriteString(g, s++, "MPI_COMM_WORLD"), "string");
    check(OTF2_GlobalDefWriter_WriteString(g, s++, "tern world group"), "string");
    uint32_t s_host = s;
    const char *host = names_of ? names_of->h.host : "host";
    check(OTF2_GlobalDefWriter_WriteString(g, s++, host), "string");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 1, 1, OTF2_UNDEFINED_SYSTEM_TREE_NODE),
          "system tree");
    check(OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, s_host, 2, 0), "system tree");
    for (int r = 0; r < nranks; r++) {
        char name[32];
        snprintf(name, sizeof name, "rank %d", r);
        uint32_t sr = s++;
        check(OTF2_GlobalDefWriter_WriteString(g, sr, name), "string");
        check(OTF2_GlobalDefWriter_WriteLocationGroup(g, (OTF2_LocationGroupRef)r, sr,
                                                      OTF2_LOCATION_GROUP_TYPE_PROCESS, 1,
                                                      OTF2_UNDEFINED_LOCATION_GROUP),
              "location group");
        check(OTF2_GlobalDefWriter_WriteLocation(g, (OTF2_LocationRef)r, sr,
                                                 OTF2_LOCATION_TYPE_CPU_THREAD, nevents[r],
                                                 (OTF2_LocationGroupRef)r),
              "location");
    }
    for (int fn = 0; fn < nfn; fn++) {
        if (!used[fn]) continue;
        int api;
        const char *name = fn_name(names_of, fn, &api);
        uint32_t sn = s++;
        check(OTF2_GlobalDefWriter_WriteString(g, sn, name), "string");
        int op = coll_of(name);
        OTF2_RegionRole role =
            op == OTF2_COLLECTIVE_OP_BARRIER ? OTF2_REGION_ROLE_BARRIER
            : op == OTF2_COLLECTIVE_OP_BCAST || op == OTF2_COLLECTIVE_OP_SCATTER ||
                    op == OTF2_COLLECTIVE_OP_SCATTERV
                ? OTF2_REGION_ROLE_COLL_ONE2ALL
            : op == OTF2_COLLECTIVE_OP_GATHER || op == OTF2_COLLECTIVE_OP_GATHERV ||
                    op == OTF2_COLLECTIVE_OP_REDUCE
                ? OTF2_REGION_ROLE_COLL_ALL2ONE
            : op >= 0 ? OTF2_REGION_ROLE_COLL_ALL2ALL
            : strstr(name, "send") || strstr(name, "recv") || strstr(name, "Send") ||
                    strstr(name, "Recv")
                ? OTF2_REGION_ROLE_POINT2POINT
                : OTF2_REGION_ROLE_FUNCTION;
        OTF2_Paradigm par = api == TRACE_API_MPI     ? OTF2_PARADIGM_MPI
                            : api == TRACE_API_SHMEM ? OTF2_PARADIGM_SHMEM
                                                     : OTF2_PARADIGM_USER;
        check(OTF2_GlobalDefWriter_WriteRegion(g, (OTF2_RegionRef)region_of[fn], sn, sn, 0, role,
                                               par, OTF2_REGION_FLAG_NONE, 0, 0, 0),
              "region");
    }
    uint64_t *members = malloc((size_t)nranks * sizeof *members);
    if (members == NULL) die("out of memory%s", "");
    for (int r = 0; r < nranks; r++)
        members[r] = (uint64_t)r;
    check(OTF2_GlobalDefWriter_WriteGroup(g, 0, 0, OTF2_GROUP_TYPE_COMM_LOCATIONS,
                                          OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, (uint32_t)nranks,
                                          members),
          "locations group");
    check(OTF2_GlobalDefWriter_WriteGroup(g, 1, 4, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                          OTF2_GROUP_FLAG_NONE, (uint32_t)nranks, members),
          "world group");
    check(OTF2_GlobalDefWriter_WriteComm(g, 0, 3, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE),
          "communicator");
    check(OTF2_Archive_CloseGlobalDefWriter(ar, g), "closing the global definitions");
    check(OTF2_Archive_Close(ar), "closing the archive");
    if (!quiet)
        printf("tern-otf2: %s/traces.otf2: %d of %d ranks, %llu sends, %llu receives, %llu "
               "collectives\n",
               dir, nfound, nranks, (unsigned long long)nsend, (unsigned long long)nrecv,
               (unsigned long long)ncoll);
    free(members);
    free(used);
    free(region_of);
    free(nevents);
    for (int r = 0; r < nranks; r++) {
        for (int i = 0; i < files[r].nnames; i++)
            free(files[r].names[i]);
        free(files[r].names);
        free(files[r].rec);
    }
    free(files);
    return 0;
}

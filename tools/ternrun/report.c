/*
 * report.c - the hang report: what every rank is blocked in, and its stack.
 *
 * Asked for by --timeout (before the job is ended with 124) and by SIGUSR1 to ternrun
 * (the job goes on). A rank that said cmd=tern_report_ready sig=N (every tern process
 * under ternrun, see src/core/diag.c) is sent signal N and answers with one tern_report
 * line: the operation it waits in, peer, tag, communicator, bytes, how long, the
 * requests under way and its return addresses. The ternrun on the rank's host (the root,
 * or the proxy of a remote host) turns the addresses into function, file and line with
 * the rank's /proc/<pid>/maps and addr2line (binutils; without it the frames show as
 * module+offset), formats the rank's block, and the root prints all blocks in rank
 * order. A rank that is not a tern process, or does not answer within the deadline, is
 * described from /proc (state and kernel wait channel).
 *
 * Every line of the report starts with "[rank] " (or "tern report"), never with
 * "ternrun: ", which stays reserved for the one line that says why a job ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tern.h"
#include "ternrun.h"

#define REPORT_WAIT_PROXY 2.0 /* seconds a host waits for its ranks' answers */
#define REPORT_WAIT_ROOT  3.0 /* the root waits a little longer for the proxies */
#define REPORT_MAX_FRAMES 64

/* A growing text buffer. */
struct report_text {
    char *p;
    size_t len, cap;
};

static void rt_printf(struct report_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void rt_printf(struct report_text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = t->cap - t->len;
        int n = vsnprintf(t->p ? t->p + t->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) return;
        if ((size_t)n < room) {
            t->len += (size_t)n;
            return;
        }
        size_t cap = t->cap ? t->cap * 2 : 1024;
        while (cap - t->len <= (size_t)n)
            cap *= 2;
        char *p = realloc(t->p, cap);
        if (p == NULL) return;
        t->p = p;
        t->cap = cap;
    }
}

/* "state S (sleeping), waiting in do_nanosleep" from /proc, for a rank that does not
 * answer itself. */
static void report_proc_state(struct report_text *t, pid_t pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    char *p = n > 0 ? (buf[n] = '\0', strrchr(buf, ')')) : NULL;
    if (p == NULL || p[1] == '\0' || p[2] == '\0') {
        rt_printf(t, "process gone");
        return;
    }
    static const char *const names[][2] = {
        {"R", "running"},
        {"S", "sleeping"},
        {"D", "in uninterruptible sleep"},
        {"T", "stopped"},
        {"t", "stopped by a debugger"},
        {"Z", "exited, not yet reaped"},
    };
    char st = p[2];
    const char *sname = "";
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i][0][0] == st) sname = names[i][1];
    rt_printf(t, "state %c (%s)", st, sname);
    snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
    if (fd >= 0) close(fd);
    if (n > 0) {
        buf[n] = '\0';
        if (strcmp(buf, "0") != 0) rt_printf(t, ", waiting in %s", buf);
    }
}

/* ---- stacks --------------------------------------------------------------------- */

struct report_map {
    uintptr_t start, end, offset;
    char path[512];
};

struct report_frame {
    uintptr_t pc;
    const struct report_map *map;
    uintptr_t rel; /* address in the module's own numbering (what addr2line takes) */
    char *func, *where;
    int tried; /* addr2line was run for it */
};

static int report_read_maps(pid_t pid, struct report_map **out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
    FILE *f = fopen(path, "re");
    if (f == NULL) return 0;
    int n = 0, cap = 0;
    struct report_map *v = NULL;
    char line[1024];
    while (fgets(line, sizeof line, f)) {
        struct report_map m;
        unsigned long long s, e, off;
        int pos = 0;
        if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &s, &e, &off, &pos) < 3 || pos == 0)
            continue;
        char *p = line + pos;
        p[strcspn(p, "\n")] = '\0';
        if (p[0] != '/') continue;
        m.start = (uintptr_t)s;
        m.end = (uintptr_t)e;
        m.offset = (uintptr_t)off;
        snprintf(m.path, sizeof m.path, "%s", p);
        if (n == cap) {
            cap = cap ? 2 * cap : 64;
            struct report_map *nv = realloc(v, (size_t)cap * sizeof *v);
            if (nv == NULL) break;
            v = nv;
        }
        v[n++] = m;
    }
    fclose(f);
    *out = v;
    return n;
}

/* Is the ELF file at path a fixed-address executable (ET_EXEC), not PIE or a library? */
static int report_is_exec(const char *path)
{
    unsigned char h[18];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, h, sizeof h) : -1;
    if (fd >= 0) close(fd);
    return n == (ssize_t)sizeof h && memcmp(h, "\177ELF", 4) == 0 && h[16] == 2 && h[17] == 0;
}

/* Run addr2line on `path` for the frames that map to it; fills func and where. */
/* A frame's function as the user knows it: the tracer compiles the library's public
 * functions under hidden inner names (src/trace: tern__real_tern_recv behind tern_recv,
 * tern__pmpi_Send behind PMPI_Send), and a stack should say tern_recv. */
static char *report_public_name(const char *fn)
{
    static const char real[] = "tern__real_", pmpi[] = "tern__pmpi_";
    if (strncmp(fn, real, sizeof real - 1) == 0) return strdup(fn + sizeof real - 1);
    if (strncmp(fn, pmpi, sizeof pmpi - 1) == 0) {
        size_t n = strlen(fn + sizeof pmpi - 1);
        char *s = malloc(n + 6);
        if (s) snprintf(s, n + 6, "PMPI_%s", fn + sizeof pmpi - 1);
        return s;
    }
    return strdup(fn);
}

static void report_addr2line(struct run_job *job, const char *path, struct report_frame *fr, int n)
{
    int idx[REPORT_MAX_FRAMES], k = 0;
    for (int i = 0; i < n; i++)
        if (fr[i].map && strcmp(fr[i].map->path, path) == 0 && !fr[i].tried) {
            fr[i].tried = 1;
            idx[k++] = i;
        }
    if (k == 0) return;
    char addrs[REPORT_MAX_FRAMES][24];
    char *argv[REPORT_MAX_FRAMES + 6];
    int a = 0;
    argv[a++] = "addr2line";
    argv[a++] = "-f";
    argv[a++] = "-e";
    argv[a++] = (char *)path;
    for (int i = 0; i < k; i++) {
        /* Return addresses point after the call: look up the call itself. */
        uintptr_t rel = fr[idx[i]].rel - (idx[i] > 0 ? 1 : 0);
        snprintf(addrs[i], sizeof addrs[i], "0x%" PRIxPTR, rel);
        argv[a++] = addrs[i];
    }
    argv[a] = NULL;
    int pp[2];
    if (pipe2(pp, O_CLOEXEC) != 0) return;
    pid_t pid = fork();
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &job->orig_sigmask, NULL);
        int null = open("/dev/null", O_RDWR);
        if (dup2(pp[1], 1) < 0 || (null >= 0 && (dup2(null, 2) < 0 || dup2(null, 0) < 0)))
            _exit(127);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pp[1]);
    if (pid < 0) {
        close(pp[0]);
        return;
    }
    struct report_text out = {0};
    char buf[4096];
    ssize_t got;
    while ((got = read(pp[0], buf, sizeof buf)) > 0 || (got < 0 && errno == EINTR))
        if (got > 0) rt_printf(&out, "%.*s", (int)got, buf);
    close(pp[0]);
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    /* Two lines per address: function, then file:line ("??" when unknown). */
    char *save = NULL, *line = out.p ? strtok_r(out.p, "\n", &save) : NULL;
    for (int i = 0; i < k && line; i++) {
        char *fn = line, *where = strtok_r(NULL, "\n", &save);
        if (where == NULL) break;
        if (strcmp(fn, "??") != 0) fr[idx[i]].func = report_public_name(fn);
        if (strncmp(where, "??", 2) != 0) fr[idx[i]].where = strdup(where);
        line = strtok_r(NULL, "\n", &save);
    }
    free(out.p);
}

/* Append the stack "#i function at file:line" lines for the addresses in `list`. */
static void report_stack(struct run_job *job, struct report_text *t, int rank, pid_t pid,
                         const char *list)
{
    struct report_frame fr[REPORT_MAX_FRAMES];
    int n = 0;
    const char *p = list;
    while (p && *p && *p != '-' && n < REPORT_MAX_FRAMES) {
        char *end;
        unsigned long long v = strtoull(p, &end, 16);
        if (end == p) break;
        memset(&fr[n], 0, sizeof fr[n]);
        fr[n++].pc = (uintptr_t)v;
        p = *end == ',' ? end + 1 : NULL;
    }
    struct report_map *maps = NULL;
    int nmaps = report_read_maps(pid, &maps);
    for (int i = 0; i < n; i++)
        for (int m = 0; m < nmaps; m++) {
            if (fr[i].pc < maps[m].start || fr[i].pc >= maps[m].end) continue;
            fr[i].map = &maps[m];
            /* The load base: where the module's offset-0 mapping starts. */
            uintptr_t base = maps[m].start - maps[m].offset;
            for (int q = 0; q < nmaps; q++)
                if (strcmp(maps[q].path, maps[m].path) == 0 && maps[q].offset == 0) {
                    base = maps[q].start;
                    break;
                }
            if (report_is_exec(maps[m].path)) base = 0;
            fr[i].rel = fr[i].pc - base;
            break;
        }
    for (int i = 0; i < n; i++)
        if (fr[i].map && !fr[i].tried) report_addr2line(job, fr[i].map->path, fr, n);
    /* Frames of the signal's delivery (a sanitizer adds its own wrapper) are noise. */
    int first = 0;
    for (int i = 0; i < n && i < 4; i++)
        if (fr[i].func && strcmp(fr[i].func, "__restore_rt") == 0) first = i + 1;
    int shown = 0;
    for (int i = 0; i < n; i++) {
        if (i < first || shown < 0) {
            free(fr[i].func);
            free(fr[i].where);
            continue;
        }
        rt_printf(t, "[%d]   #%-2d ", rank, shown++);
        const char *mod = fr[i].map ? strrchr(fr[i].map->path, '/') + 1 : NULL;
        if (fr[i].func && fr[i].where)
            rt_printf(t, "%s at %s\n", fr[i].func, fr[i].where);
        else if (fr[i].func)
            rt_printf(t, "%s (%s)\n", fr[i].func, mod ? mod : "?");
        else if (mod)
            rt_printf(t, "%s+0x%" PRIxPTR "\n", mod, fr[i].rel);
        else
            rt_printf(t, "0x%" PRIxPTR "\n", fr[i].pc);
        /* What runs before main (libc's start-up) says nothing about the hang. */
        if (fr[i].func && strcmp(fr[i].func, "main") == 0) shown = -1;
        free(fr[i].func);
        free(fr[i].where);
    }
    if (n == 0) rt_printf(t, "[%d]   (no stack)\n", rank);
    free(maps);
}

/* ---- one rank's block ---------------------------------------------------------- */

static void report_comm(struct report_text *t, int ctx)
{
    static const char *const builtin[] = {"world", "self"};
    if (ctx >= 0 && ctx < 4)
        rt_printf(t, "communicator %s%s", builtin[ctx / 2], ctx % 2 ? " (collective)" : "");
    else
        rt_printf(t, "communicator ctx %d%s", ctx, ctx % 2 ? " (collective)" : "");
}

static void report_peer(struct report_text *t, const char *dir, int peer)
{
    if (peer < 0)
        rt_printf(t, "%s any source", dir);
    else
        rt_printf(t, "%s rank %d", dir, peer);
}

static void report_tag(struct report_text *t, int tag)
{
    if (tag == TERN_ANY_TAG)
        rt_printf(t, "any tag");
    else if (tag >= 0x40000000 && (tag & 0x20000000)) /* src/coll/coll_sched.c's numbering */
        rt_printf(t, "non-blocking collective tag %d", tag & 0x1fffffff);
    else if (tag >= 0x40000000)
        rt_printf(t, "collective tag %d", tag & 0x1fffffff);
    else
        rt_printf(t, "tag %d", tag);
}

static long report_int(const struct pmi_msg *m, const char *key, long dflt)
{
    const char *v = pmi_msg_get(m, key);
    if (v == NULL) return dflt;
    char *end;
    long x = strtol(v, &end, 10);
    return *end == '\0' ? x : dflt;
}

/* The block of rank r from its tern_report line. */
static char *report_format(struct run_job *job, const struct run_rank *r, const struct pmi_msg *m)
{
    struct report_text t = {0};
    const char *in = pmi_msg_get(m, "in");
    if (in == NULL) in = "none";
    long peer = report_int(m, "peer", -2), tag = report_int(m, "tag", 0);
    long ctx = report_int(m, "ctx", -1), bytes = report_int(m, "bytes", -1);
    long ms = report_int(m, "ms", 0), size = report_int(m, "size", -1);
    rt_printf(&t, "[%d] %s: ", r->rank, run_rank_where(job, r));
    int is_send = strcmp(in, "send") == 0 || strcmp(in, "ssend") == 0;
    if (strcmp(in, "none") == 0) {
        rt_printf(&t, "not in a tern call (running its own code)\n");
    } else if (strncmp(in, "pmi_", 4) == 0) {
        rt_printf(&t, "in a launcher (PMI) call, waiting for %s\n", in + 4);
    } else {
        rt_printf(&t, "blocked");
        if (ms > 0) rt_printf(&t, " %.2f s", (double)ms / 1e3);
        if ((strcmp(in, "recv") == 0 || is_send) && peer != -2) {
            rt_printf(&t, " in %s ",
                      strcmp(in, "recv") == 0    ? "a receive"
                      : strcmp(in, "ssend") == 0 ? "a synchronous send"
                                                 : "a send");
            report_peer(&t, strcmp(in, "recv") == 0 ? "from" : "to", (int)peer);
            rt_printf(&t, ", ");
            report_tag(&t, (int)tag);
            rt_printf(&t, ", ");
            report_comm(&t, (int)ctx);
            rt_printf(&t, ", %s%ld bytes\n", is_send ? "" : "up to ", bytes);
        } else {
            rt_printf(&t, " in %s", strncmp(in, "api_", 4) == 0 ? in + 4 : in);
            if (ctx >= 0) {
                rt_printf(&t, " on ");
                report_comm(&t, (int)ctx);
                if (size > 0) rt_printf(&t, " (%ld ranks)", size);
            }
            rt_printf(&t, "\n");
        }
    }
    /* The requests under way: for a collective, they say whom it waits for. */
    const char *reqs = pmi_msg_get(m, "reqs");
    if (reqs && strcmp(reqs, "-") != 0) {
        char *copy = strdup(reqs), *save = NULL;
        for (char *it = copy ? strtok_r(copy, ",", &save) : NULL; it;
             it = strtok_r(NULL, ",", &save)) {
            char kind;
            int q, qt, qc;
            unsigned long long qb;
            if (sscanf(it, "%c:%d:%d:%d:%llu", &kind, &q, &qt, &qc, &qb) != 5) continue;
            rt_printf(&t, "[%d]   pending: %s ", r->rank,
                      kind == 'r'   ? "receive"
                      : kind == 'S' ? "synchronous send"
                                    : "send");
            report_peer(&t, kind == 'r' ? "from" : "to", q);
            rt_printf(&t, ", ");
            report_tag(&t, qt);
            rt_printf(&t, ", ");
            report_comm(&t, qc);
            rt_printf(&t, ", %llu bytes\n", qb);
        }
        free(copy);
    }
    report_stack(job, &t, r->rank, r->pid, pmi_msg_get(m, "stack"));
    return t.p;
}

/* A rank that cannot answer: what /proc says. */
static char *report_unanswered(struct run_job *job, const struct run_rank *r, const char *why)
{
    struct report_text t = {0};
    rt_printf(&t, "[%d] %s: %s; ", r->rank, run_rank_where(job, r), why);
    report_proc_state(&t, r->pid);
    rt_printf(&t, "\n");
    return t.p;
}

/* ---- the report under way ------------------------------------------------------ */

static int report_mine(const struct run_job *job, const struct run_rank *r)
{
    return job->proxy || r->host == NULL || r->host->local;
}

static void report_finish(struct run_job *job)
{
    job->report_at = 0;
    if (job->proxy) {
        for (int i = 0; i < job->nranks; i++) {
            struct run_rank *r = &job->ranks[i];
            if (r->report_text)
                run_proxy_send(job, RUN_CTL_REPORT, r->rank, 0, r->report_text,
                               strlen(r->report_text));
            free(r->report_text);
            r->report_text = NULL;
        }
        run_proxy_send(job, RUN_CTL_REPORT, -1, 0, NULL, 0);
        return;
    }
    struct report_text t = {0};
    rt_printf(&t, "tern report: %d rank(s), %s\n", job->size,
              job->report_then_end ? "the job timed out" : "asked by SIGUSR1; the job goes on");
    for (int i = 0; i < job->nranks; i++) {
        struct run_rank *r = &job->ranks[i];
        if (r->report_text)
            rt_printf(&t, "%s", r->report_text);
        else
            rt_printf(&t, "[%d] no report (%s)\n", r->rank,
                      r->host && !r->host->local ? "its proxy did not answer" : "no answer");
        free(r->report_text);
        r->report_text = NULL;
    }
    if (t.p) run_out_write(2, t.p, t.len);
    free(t.p);
    if (job->report_then_end) {
        job->report_then_end = 0;
        run_job_fail(job, RUN_EXIT_TIMEOUT, "ternrun: job timed out after %g s; ending it",
                     job->opts.timeout);
    }
}

static void report_check_done(struct run_job *job)
{
    if (job->report_at == 0) return;
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].report_asked) return;
    if (job->report_remote > 0) return;
    report_finish(job);
}

void run_report_start(struct run_job *job, int then_end)
{
    if (then_end) job->report_then_end = 1;
    if (job->report_at > 0) return; /* one under way answers this request too */
    job->report_at = run_now() + (job->proxy ? REPORT_WAIT_PROXY : REPORT_WAIT_ROOT);
    for (int i = 0; i < job->nranks; i++) {
        struct run_rank *r = &job->ranks[i];
        if (!report_mine(job, r)) continue;
        free(r->report_text);
        r->report_text = NULL;
        r->report_asked = 0;
        if (r->pid <= 0)
            r->report_text = report_unanswered(job, r, "not started");
        else if (!r->alive)
            r->report_text = report_unanswered(job, r, "exited");
        else if (r->finalized)
            r->report_text = report_unanswered(job, r, "finalized, exiting");
        else if (r->report_sig > 0 && r->pmi_fd >= 0 && kill(r->pid, r->report_sig) == 0)
            r->report_asked = 1;
        else
            r->report_text = report_unanswered(
                job, r,
                r->inited ? "a PMI client that does not answer reports" : "not a tern process");
    }
    if (!job->proxy) job->report_remote = run_remote_report_req(job);
    report_check_done(job);
}

void run_report_answer(struct run_job *job, struct run_rank *r, const struct pmi_msg *m)
{
    if (!r->report_asked) return; /* late, after the deadline: its block is written */
    r->report_asked = 0;
    free(r->report_text);
    r->report_text = report_format(job, r, m);
    report_check_done(job);
}

void run_report_remote(struct run_job *job, int rank, const char *text)
{
    if (job->report_at == 0) return;
    if (rank < 0) {
        if (job->report_remote > 0) job->report_remote--;
    } else if (rank < job->nranks && job->ranks[rank].report_text == NULL) {
        job->ranks[rank].report_text = strdup(text);
    }
    report_check_done(job);
}

void run_report_deadline(struct run_job *job)
{
    for (int i = 0; i < job->nranks; i++) {
        struct run_rank *r = &job->ranks[i];
        if (!r->report_asked) continue;
        r->report_asked = 0;
        free(r->report_text);
        r->report_text = report_unanswered(job, r, "no answer in time");
    }
    job->report_remote = 0;
    report_finish(job);
}

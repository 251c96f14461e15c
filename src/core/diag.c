/*
 * diag.c - the rank's side of the hang report (ternrun --timeout, kill -USR1 <ternrun>).
 *
 * At start-up the process tells ternrun, over PMI, which signal makes it report
 * (cmd=tern_report_ready sig=N, a real-time signal nobody else uses). ternrun sends that
 * signal when it wants a report; the handler answers with one PMI line:
 *
 *   cmd=tern_report in=recv peer=1 tag=7 ctx=0 bytes=16 ms=2950 reqs=r:1:7:0:16 stack=...
 *
 *   in     what the process waits in (core.doing.what: recv, send, ssend, a collective's
 *          API name, waitany, flush...), pmi_<reply> inside a launcher call, or none
 *   peer/tag/ctx/bytes   the request waited for (world rank, -1 for any), or ctx/size
 *          of a collective's communicator
 *   ms     how long the wait has gone on (0 while it still spins)
 *   reqs   requests under way: kind (r recv, s send, S synchronous send) : peer : tag :
 *          ctx : bytes, at most DIAG_MAX_REQS
 *   stack  return addresses, from glibc's backtrace(); ternrun turns them into function,
 *          file and line with the rank's /proc/<pid>/maps and addr2line, on the rank's
 *          host, so the handler stays small.
 *
 * A signal rather than a PMI request: a rank computing, or stuck outside tern, answers
 * too. The handler is async-signal-safe: it reads the core state (the interrupted thread
 * is stopped; tern is not yet thread-safe), formats by hand into a static buffer and
 * writes the line with one write(), which the interrupted code cannot split because its
 * own PMI writes are whole lines. backtrace() is called once at set-up, so that the
 * unwinder is loaded before any signal (its first call may allocate).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"

#define DIAG_MAX_REQS   12
#define DIAG_MAX_FRAMES 48

double core_diag_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct diag_buf {
    char *p;
    size_t len, cap;
};

static void diag_str(struct diag_buf *b, const char *s)
{
    for (; *s && b->len < b->cap; s++)
        b->p[b->len++] = (*s == ' ' || *s == '\n' || *s == '=') ? '_' : *s;
}

static void diag_raw(struct diag_buf *b, const char *s)
{
    for (; *s && b->len < b->cap; s++)
        b->p[b->len++] = *s;
}

static void diag_num(struct diag_buf *b, long long v, int base)
{
    char t[24];
    int n = 0;
    unsigned long long u = v < 0 ? (unsigned long long)-v : (unsigned long long)v;
    if (base == 16) u = (unsigned long long)v;
    do {
        t[n++] = "0123456789abcdef"[u % (unsigned)base];
        u /= (unsigned)base;
    } while (u && n < (int)sizeof t);
    if (v < 0 && base == 10 && b->len < b->cap) b->p[b->len++] = '-';
    while (n > 0 && b->len < b->cap)
        b->p[b->len++] = t[--n];
}

static void diag_field(struct diag_buf *b, const char *key, long long v)
{
    diag_raw(b, key);
    diag_num(b, v, 10);
}

static int diag_active(const core_req_t *r)
{
    return (r->kind == CORE_REQ_SEND || r->kind == CORE_REQ_RECV) && r->state != CORE_RS_FREE &&
           r->state != CORE_RS_DONE;
}

static void diag_handler(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    int saved_errno = errno;
    int fd = core.boot.fd;
    if (fd < 0) goto out;
    static char line[4000]; /* under PMI_WIRE_MAX_LINE */
    struct diag_buf b = {line, 0, sizeof line - 2};
    diag_raw(&b, "cmd=tern_report in=");
    const struct core_doing d = core.doing;
    const char *in_call = core.boot.in_call;
    if (d.what) {
        diag_str(&b, d.what);
    } else if (in_call) {
        diag_raw(&b, "pmi_");
        diag_str(&b, in_call);
    } else {
        diag_raw(&b, "none");
    }
    if (d.what && d.req) {
        diag_field(&b, " peer=", d.req->peer);
        diag_field(&b, " tag=", d.req->tag);
        diag_field(&b, " ctx=", d.req->ctx);
        diag_field(&b, " bytes=", (long long)d.req->len);
    } else if (d.what && d.comm) {
        diag_field(&b, " ctx=", d.comm->ctx);
        diag_field(&b, " size=", d.comm->size);
    }
    if (d.what && d.since > 0)
        diag_field(&b, " ms=", (long long)((core_diag_now() - d.since) * 1e3));
    if ((core.initialized || core.doing.what) && !core_req_growing) {
        diag_raw(&b, " reqs=");
        int n = 0;
        for (uint32_t i = 0; i < core.nreqs && core.reqs && n < DIAG_MAX_REQS; i++) {
            const core_req_t *r = core.reqs[i];
            if (r == NULL || !diag_active(r)) continue;
            if (n++) diag_raw(&b, ",");
            diag_raw(&b, r->kind == CORE_REQ_RECV ? "r" : r->sync ? "S" : "s");
            diag_field(&b, ":", r->peer);
            diag_field(&b, ":", r->tag);
            diag_field(&b, ":", r->ctx);
            diag_field(&b, ":", (long long)r->len);
        }
        if (n == 0) diag_raw(&b, "-");
    }
    void *pcs[DIAG_MAX_FRAMES];
    int npc = backtrace(pcs, DIAG_MAX_FRAMES);
    /* pcs[0] is this handler, pcs[1] the kernel's signal trampoline in libc. */
    diag_raw(&b, " stack=");
    for (int i = 2; i < npc; i++) {
        if (i > 2) diag_raw(&b, ",");
        diag_num(&b, (long long)(uintptr_t)pcs[i], 16);
    }
    if (npc <= 2) diag_raw(&b, "-");
    b.p[b.len++] = '\n';
    ssize_t w;
    do
        w = write(fd, line, b.len);
    while (w < 0 && errno == EINTR);
out:
    errno = saved_errno;
}

void core_diag_init(void)
{
    if (core.boot.singleton || !core.boot.ternrun) return;
    /* A real-time signal: its default action would end the process, so ternrun sends it
     * only to processes that said they handle it. */
    int sig = SIGRTMIN + 4;
    if (sig > SIGRTMAX) return;
    void *warm[4];
    (void)backtrace(warm, 4);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = diag_handler;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0) return;
    (void)boot_report_ready(&core.boot, sig);
}

/*
 * progress.c - the progress engine and the blocking wait.
 *
 * Every blocking call and every test drives core_progress(): poll each transport for
 * arrived frames, then push whatever waits in the pending queues. A blocked caller spins
 * for a while (latency), then yields the CPU (other ranks on the same core get to run),
 * then sleeps on its transports' doorbells; how long each phase lasts is the wait
 * engine's policy (wait.h), shared with the multi-threaded path (thread.c). With more
 * ranks than cores the spin phase is cut short, because spinning then only steals the
 * time the peer needs to answer.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "core/core_tl.h"
#include "core/wait.h"
#include "util/cpu.h"
#include "util/tunables.h"

static double core_now(void)
{
    return core_diag_now();
}

/* At most this many polls of every transport before a death is acted on: enough for a
 * dead peer's full ring (32 frames a poll), bounded when live peers keep sending. */
#define CORE_NEWS_DRAIN_ROUNDS 256

/* One poll of every transport: the frames they delivered. */
static int core_poll_tls(void)
{
    int n = 0;
    for (int i = 0; i < core.ntls; i++) {
        int k = core.tls[i]->poll();
        if (k > 0) n += k;
    }
    return n;
}

/* Deaths heard during core_health, acted on at its end (core_peer_news). */
static int *core_news;
static int core_news_n, core_news_cap, core_news_defer;

void core_peer_news(int rank)
{
    if (core.peers[rank].failed) return;
    if (core_news_defer) {
        for (int i = 0; i < core_news_n; i++)
            if (core_news[i] == rank) return;
        if (core_news_n == core_news_cap) {
            int cap = core_news_cap ? 2 * core_news_cap : 16;
            int *p = realloc(core_news, (size_t)cap * sizeof *p);
            if (p == NULL) goto now; /* no room to defer: act at once */
            core_news = p;
            core_news_cap = cap;
        }
        core_news[core_news_n++] = rank;
        return;
    }
now:
    core_peer_failed(rank);
}

/*
 * A dead rank's last frames may still wait in its ring or my socket when the launcher's
 * news of its death, or a transport's liveness check, tells of it: an acknowledgement it
 * sent just before dying, a message a survivor will still receive. The news wins that
 * race whenever this rank was asleep or descheduled, and acted on at once it would fail
 * a synchronous send the dead rank had received. So core_health first gathers the news,
 * then takes in what the transports hold, then fails the dead ranks' operations. Not
 * when called from inside a transport's poll (in_progress): nothing can be polled there.
 * A transport that finds a loss in its own receive path (tcp at a closed socket) has
 * read all there was and reports it directly (core_peer_failed).
 */
int core_health(void)
{
    unsigned long seen = core.ncomplete;
    core.health_last = core_now();
    int outer = !core_news_defer;
    core_news_defer = 1;
    int rc = boot_poll(&core.boot, core_peer_news);
    for (int i = 0; i < core.ntls; i++)
        core.tls[i]->health();
    if (outer) {
        core_news_defer = 0;
        if (core_news_n && !core.in_progress) {
            core.in_progress = 1;
            for (int round = 0; round < CORE_NEWS_DRAIN_ROUNDS && core_poll_tls() > 0; round++) {
            }
            core.in_progress = 0;
        }
        /* core_peer_failed may run hooks that wait, and so come back here. */
        while (core_news_n > 0)
            core_peer_failed(core_news[--core_news_n]);
    }
    if (rc) core.launcher_gone = 1;
    if (__builtin_expect(core_mt, 0) && (rc || core.ncomplete != seen))
        core_mt_wake(CORE_WAKE_DONE);
    return rc;
}

/* Every 256 progress calls, read the (vDSO) clock; run the health check when it is due. */
static void core_health_maybe(void)
{
    if ((++core.health_tick & 255) != 0) return;
    if (core_now() - core.health_last >= (double)util_tun.failure_check_ms * 1e-3)
        (void)core_health();
}

int core_progress(void)
{
    int n = 0;
    if (core.in_progress) return 0;
    unsigned long seen = core.ncomplete;
    core_health_maybe(); /* before in_progress: news of a death first drains (core_peer_news) */
    core.in_progress = 1;
    n += core_poll_tls();
    if (core.npending) core_pend_drain();
    for (int i = 0; i < core.nhooks; i++) {
        int k = core.hooks[i]();
        if (k > 0) n += k;
    }
    core.in_progress = 0;
    /* Threads asleep may wait for what just arrived or completed (thread.c). */
    if (__builtin_expect(core_mt, 0) && (n > 0 || core.ncomplete != seen))
        core_mt_wake(core.ncomplete != seen ? CORE_WAKE_DONE : CORE_WAKE_FRAMES);
    return n;
}

int core_atfini(void (*fn)(void))
{
    for (int i = 0; i < core.nfinis; i++)
        if (core.finis[i] == fn) return 0;
    if (core.nfinis == (int)(sizeof core.finis / sizeof core.finis[0])) return TERN_ERR_NOMEM;
    core.finis[core.nfinis++] = fn;
    return 0;
}

int core_failure_hook_add(void (*fn)(int rank))
{
    for (int i = 0; i < core.nfailhooks; i++)
        if (core.failhooks[i] == fn) return 0;
    if (core.nfailhooks == (int)(sizeof core.failhooks / sizeof core.failhooks[0]))
        return TERN_ERR_NOMEM;
    core.failhooks[core.nfailhooks++] = fn;
    return 0;
}

int core_progress_hook_add(int (*hook)(void))
{
    for (int i = 0; i < core.nhooks; i++)
        if (core.hooks[i] == hook) return 0;
    if (core.nhooks == (int)(sizeof core.hooks / sizeof core.hooks[0])) return TERN_ERR_NOMEM;
    core.hooks[core.nhooks++] = hook;
    return 0;
}

/* Block until done(arg), escalating spin -> yield -> sleep. */
static int core_req_done(const void *arg);
static int core_any_done(const void *arg);

static void core_sched_yield(void)
{
    sched_yield();
}

static int core_block_loop(core_done_fn done, const void *arg)
{
    /* With threads: waiting for requests needs a wake-up only when one completes;
     * anything else (a probe, conversations) on every arrival. */
    if (__builtin_expect(core_mt, 0))
        return core_block_mt(done, arg, done == core_req_done || done == core_any_done);
    struct core_waiter w;
    /* Consumed here: a wait nested inside this one (a failure hook's) is a plain one. */
    enum core_wait_kind kind = core.wait_bulk ? CORE_WAIT_BULK : CORE_WAIT_MSG;
    core.wait_bulk = 0;
    core_wait_begin(&w, kind);
    for (;;) {
        int spun;
        enum core_round r = core_wait_round(&w, done, arg, &spun);
        if (r == CORE_ROUND_DONE) return 0;
        if (r == CORE_ROUND_AGAIN) {
            if (spun) core_wait_pause(&w);
            continue;
        }
        if (r == CORE_ROUND_YIELD) {
            core_wait_yield(&w, core_sched_yield);
            continue;
        }
        for (int i = 0; i < core.ntls; i++)
            core.tls[i]->sleep_begin();
        /* (A kernel waiter needs no last look: epoll reports what came meanwhile.) */
        if ((core.kernel_wait || core_progress() == 0) && !done(arg)) {
            /* Each transport sleeps on its own doorbell (shm's futex, tcp's epoll). When
             * more than one really sleeps, a long sleep in the first would leave the
             * other's arrivals waiting: then each sleeps only briefly, in turn. */
            int sleepers = 0;
            for (int i = 0; i < core.ntls; i++)
                if (core.tls[i]->sleep_wait != tl_stub_sleep_wait) sleepers++;
            int ms = sleepers > 1 ? 1 : (int)util_tun.sleep_ms;
            for (int i = 0; i < core.ntls; i++)
                core.tls[i]->sleep_wait(ms);
        }
        for (int i = 0; i < core.ntls; i++)
            core.tls[i]->sleep_end();
        /* Liveness at most every TERN_FAILURE_CHECK_MS: a wake-up per message must not
         * cost a look at the launcher each time. */
        int rc = core_now() - core.health_last >= (double)util_tun.failure_check_ms * 1e-3
                     ? core_health()
                     : core_alive();
        if (rc) return rc;
        core_wait_woke(&w); /* go on yielding (if the policy yields) before sleeping again */
    }
}

int core_block(core_done_fn done, const void *arg)
{
    /* Nested waits (a collective's done() test never blocks, but a failure hook may)
     * restore what the outer wait recorded. */
    struct core_doing saved = core.doing;
    if (core.doing.what == NULL) core.doing.what = "wait";
    core.doing.since = 0;
    int rc = core_block_loop(done, arg);
    core.doing = saved;
    return rc;
}

static int core_req_done(const void *arg)
{
    return ((const core_req_t *)arg)->state == CORE_RS_DONE;
}

int core_wait(core_req_t *r)
{
    if (r->state == CORE_RS_DONE) return 0;
    const char *saved_what = core.doing.what;
    const core_req_t *saved_req = core.doing.req;
    if (saved_what == NULL)
        core.doing.what = r->kind == CORE_REQ_RECV   ? "recv"
                          : r->sync                  ? "ssend"
                          : r->kind == CORE_REQ_SEND ? "send"
                                                     : "wait";
    core.doing.req = r;
    int rc = core_block(core_req_done, r);
    core.doing.what = saved_what;
    core.doing.req = saved_req;
    return rc;
}

struct core_any {
    core_req_t *const *reqs;
    size_t n;
    size_t *index;
};

static int core_any_done(const void *arg)
{
    const struct core_any *a = arg;
    for (size_t i = 0; i < a->n; i++)
        if (a->reqs[i] && a->reqs[i]->state == CORE_RS_DONE) {
            *a->index = i;
            return 1;
        }
    return 0;
}

int core_wait_any(core_req_t *const *reqs, size_t n, size_t *index)
{
    struct core_any a = {reqs, n, index};
    const char *saved = core.doing.what;
    if (saved == NULL) core.doing.what = "waitany";
    int rc = core_block(core_any_done, &a);
    core.doing.what = saved;
    return rc;
}

static int core_nothing_pending(const void *arg)
{
    (void)arg;
    if (core.npending) return 0;
    /* A transport may still hold the tail of a frame it accepted (tcp). */
    for (int i = 0; i < core.ntls; i++)
        if (core.tls[i]->busy()) return 0;
    return 1;
}

int core_wait_pending(void)
{
    const char *saved = core.doing.what;
    if (saved == NULL) core.doing.what = "flush";
    int rc = core_block(core_nothing_pending, NULL);
    core.doing.what = saved;
    return rc;
}

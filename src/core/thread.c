/*
 * thread.c - thread safety: the global critical section, waiting when several threads
 * share the library, and the optional progress thread (TERN_PROGRESS_THREAD=1).
 *
 * The critical section is one mutex taken at every API entry, and only when core_mt is
 * set (thread level MULTIPLE or a progress thread): a single-threaded program pays one
 * test of a global per call. The nesting depth is per thread, so API functions may call
 * each other. Whoever holds it may touch everything the core and the layers above own.
 *
 * Waiting with several threads. A blocked thread polls while holding the section; when
 * another thread wants in (core_cs_waiters), it lets go around a sched_yield so that
 * thread can post, complete and poll too. When it is time to sleep, exactly one thread
 * (core.tl_sleeper) sleeps on the transports' doorbells, without the section; every
 * other blocked thread sleeps on a condition variable. Whoever makes progress while
 * others sleep wakes them (core_mt_wake): the condition is broadcast and the doorbell
 * sleeper is woken through each transport's wake(), so a request completed by another
 * thread is seen at once, not after a sleep timeout. The doorbell sleeper, once up,
 * broadcasts too, so another blocked thread takes over the doorbells if it leaves.
 *
 * The progress thread holds the section only while it polls. When no program thread is
 * inside a blocking call it is the doorbell sleeper, so frames that arrive while the
 * program computes are handled at once and an idle process takes no CPU; while a program
 * thread waits in the library (core.nblocked) that thread polls, and the progress thread
 * stands by on the condition, looking again every millisecond.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

#include "core/core_tl.h"
#include "core/wait.h"
#include "util/cpu.h"
#include "util/log.h"
#include "util/tunables.h"

int core_mt;

static pthread_mutex_t core_cs_mutex = PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP;
static pthread_cond_t core_cs_cond; /* blocked program threads sleep on it */
static pthread_cond_t core_pt_cond; /* the progress thread stands by on it */
static pthread_once_t core_cs_once = PTHREAD_ONCE_INIT;
static _Thread_local int core_cs_depth;   /* nesting of this thread's entries */
static _Thread_local int core_cs_sleeper; /* this thread is core.tl_sleeper */
static atomic_int core_cs_waiters;        /* threads blocked on the mutex */

static struct {
    pthread_t tid;
    int running;
    int stop; /* under the section */
} core_pt;

static void core_cs_init(void)
{
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&core_cs_cond, &a);
    pthread_cond_init(&core_pt_cond, &a);
    pthread_condattr_destroy(&a);
}

void core_cs_lock(void)
{
    if (core_cs_depth++ > 0) return;
    if (pthread_mutex_trylock(&core_cs_mutex) == 0) return;
    atomic_fetch_add_explicit(&core_cs_waiters, 1, memory_order_relaxed);
    pthread_mutex_lock(&core_cs_mutex);
    atomic_fetch_sub_explicit(&core_cs_waiters, 1, memory_order_relaxed);
}

void core_cs_unlock(void)
{
    if (--core_cs_depth == 0) pthread_mutex_unlock(&core_cs_mutex);
}

/* Let go wholly, whatever the nesting; core_cs_take(depth) takes it back. */
static int core_cs_drop(void)
{
    int d = core_cs_depth;
    core_cs_depth = 0;
    pthread_mutex_unlock(&core_cs_mutex);
    return d;
}

static void core_cs_take(int depth)
{
    core_cs_lock();
    core_cs_depth = depth;
}

/* Give a thread that waits for the section its turn. */
static void core_cs_yield(void)
{
    int d = core_cs_drop();
    sched_yield();
    core_cs_take(d);
}

/* Sleep on condition cv (section let go meanwhile) for at most ms. Blocked threads use
 * core_cs_cond, counted in core.cond_waiters so that progress wakes them; the progress
 * thread stands by on its own, which nobody signals but finalize: a broadcast for every
 * arrival would wake it for nothing, on the core its rank computes on. */
static void core_cs_cond_wait(pthread_cond_t *cv, int ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (long)(ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    int d = core_cs_depth;
    core_cs_depth = 0;
    int counted = cv == &core_cs_cond;
    core.cond_waiters += counted;
    pthread_cond_timedwait(cv, &core_cs_mutex, &ts);
    core.cond_waiters -= counted;
    core_cs_depth = d;
}

void core_mt_wake(int why)
{
    if (core.cond_waiters) pthread_cond_broadcast(&core_cs_cond);
    int k = core.tl_sleeper;
    int want = why == CORE_WAKE_ALL ? k != 0 : k == 2 || (k == 1 && why == CORE_WAKE_DONE);
    if (want && !core_cs_sleeper)
        for (int i = 0; i < core.ntls; i++)
            core.tls[i]->wake_self();
}

/*
 * Be the doorbell sleeper for one sleep: announce it to the transports, poll once more
 * (a frame may have come in between), then sleep without the section. kind says when
 * others wake it: 1 when a request completes, 2 on any arrival, 3 never (the progress
 * thread, done NULL: it has nothing of its own to wait for; those who progress handle
 * what they receive).
 */
static void core_doorbell_sleep(core_done_fn done, const void *arg, int kind)
{
    core.tl_sleeper = kind;
    core_cs_sleeper = 1;
    for (int i = 0; i < core.ntls; i++)
        core.tls[i]->sleep_begin();
    /* As in core_block: a kernel waiter needs no last look (epoll reports what came
     * meanwhile, and what a poll stashed makes sleep_wait return at once). */
    if ((core.kernel_wait || core_progress() == 0) && (done == NULL || !done(arg))) {
        /* As in core_block: with two sleeping transports each sleeps briefly, in turn. */
        int sleepers = 0;
        for (int i = 0; i < core.ntls; i++)
            if (core.tls[i]->sleep_wait != tl_stub_sleep_wait) sleepers++;
        int ms = sleepers > 1 ? 1 : (int)util_tun.sleep_ms;
        int d = core_cs_drop();
        for (int i = 0; i < core.ntls; i++)
            core.tls[i]->sleep_wait(ms);
        core_cs_take(d);
    }
    for (int i = 0; i < core.ntls; i++)
        core.tls[i]->sleep_end();
    core.tl_sleeper = 0;
    core_cs_sleeper = 0;
    /* Whoever waits on the condition may now take over the doorbells. */
    if (core.cond_waiters) pthread_cond_broadcast(&core_cs_cond);
}

static int core_block_mt_locked(core_done_fn done, const void *arg, int reqs_only)
{
    /* The same policy as the single-threaded path (wait.h), so TERN_TCP_SPIN_* and the
     * load check hold here too; only the ways to yield and sleep differ. */
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
            if (!spun) continue;
            if (atomic_load_explicit(&core_cs_waiters, memory_order_relaxed))
                core_cs_yield();
            else
                core_wait_pause(&w);
            continue;
        }
        if (r == CORE_ROUND_YIELD) {
            core_wait_yield(&w, core_cs_yield);
            continue;
        }
        if (!core.tl_sleeper)
            core_doorbell_sleep(done, arg, reqs_only ? 1 : 2);
        else
            core_cs_cond_wait(&core_cs_cond, (int)util_tun.sleep_ms);
        /* As in core_block: liveness at most every TERN_FAILURE_CHECK_MS, so that a
         * wake-up per message (tcp, loaded) does not cost a look at the launcher. */
        int rc = core_diag_now() - core.health_last >= (double)util_tun.failure_check_ms * 1e-3
                     ? core_health()
                     : core_alive();
        if (rc) return rc;
        core_wait_woke(&w);
    }
}

int core_block_mt(core_done_fn done, const void *arg, int reqs_only)
{
    /* Callers hold the section (API entry); take it if one does not. */
    int took = core_cs_depth == 0;
    if (took) core_cs_lock();
    core.nblocked++;
    int rc = core_block_mt_locked(done, arg, reqs_only);
    core.nblocked--;
    if (took) core_cs_unlock();
    return rc;
}

int core_thread_setup(int required)
{
    int level = required;
    if (level < TERN_THREAD_SINGLE) level = TERN_THREAD_SINGLE;
    if (level > TERN_THREAD_MULTIPLE) level = TERN_THREAD_MULTIPLE;
    /* A layer joining the core of another keeps the level it was given. */
    if (level < core.thread_level) level = core.thread_level;
    core.thread_level = level;
    pthread_once(&core_cs_once, core_cs_init);
    if (level == TERN_THREAD_MULTIPLE || util_tun.progress_thread) core_mt = 1;
    return level;
}

/* ---- the progress thread -------------------------------------------------------- */

static double core_pt_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *core_progress_main(void *unused)
{
    (void)unused;
    core_cs_lock();
    while (!core_pt.stop) {
        /* While a program thread waits in the library it polls by itself: stand by,
         * looking again every millisecond. Polling too would only fight it for the lock
         * and for its core (the progress thread shares its rank's binding), and sleeping
         * on the doorbells would make every shm sender ring us, a system call per
         * message. */
        if (core.nblocked || core.tl_sleeper) {
            core_cs_cond_wait(&core_pt_cond, 1);
            continue;
        }
        if (core_progress() > 0) {
            if (atomic_load_explicit(&core_cs_waiters, memory_order_relaxed)) core_cs_yield();
            continue;
        }
        /* Nothing moved and the program computes: sleep on the doorbells until a frame
         * comes. Never spin: that would steal the core a rank needs. Frames waiting for
         * room in a peer's ring are the exception: room appearing rings no doorbell, so
         * look again every millisecond. */
        if (core.npending)
            core_cs_cond_wait(&core_pt_cond, 1);
        else
            core_doorbell_sleep(NULL, NULL, 3);
        if (core_pt_now() - core.health_last >= (double)util_tun.failure_check_ms * 1e-3)
            (void)core_health();
    }
    core_cs_unlock();
    return NULL;
}

int core_progress_thread_start(void)
{
    if (!util_tun.progress_thread || core_pt.running) return 0;
    core_pt.stop = 0;
    int rc = pthread_create(&core_pt.tid, NULL, core_progress_main, NULL);
    if (rc != 0) {
        UTIL_ERROR("cannot start the progress thread (error %d)", rc);
        return TERN_ERR_NOMEM;
    }
    core_pt.running = 1;
    UTIL_DEBUG(1, "progress thread started");
    return 0;
}

void core_progress_thread_stop(void)
{
    if (!core_pt.running) return;
    int held = core_cs_depth > 0;
    if (!held) core_cs_lock();
    core_pt.stop = 1;
    pthread_cond_broadcast(&core_pt_cond);
    core_mt_wake(CORE_WAKE_ALL);
    int d = core_cs_drop();
    pthread_join(core_pt.tid, NULL);
    core_cs_take(d);
    if (!held) core_cs_unlock();
    core_pt.running = 0;
}

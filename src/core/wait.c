/*
 * wait.c - the wait engine (see wait.h): the phase decision, the policy from the
 * tunables and the machine's load, and the idle step of waits on memory.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "core/wait.h"
#include "util/cpu.h"

enum core_wait_phase core_wait_decide(const struct core_wait_policy *p, long polls, double idle_s,
                                      int may_sleep)
{
    if (polls < p->spin_polls || idle_s < p->spin_s) return CORE_WAIT_SPIN;
    if (polls < p->spin_polls + p->yield_polls || !may_sleep) return CORE_WAIT_YIELD;
    return CORE_WAIT_SLEEP;
}

void core_wait_policy_make(const struct util_tunables *t, enum core_wait_kind kind, int kernel_wait,
                           int oversubscribed, int free_core, struct core_wait_policy *out)
{
    int ratio = t->oversub_sleep_ratio;
    if (kind == CORE_WAIT_BULK) { /* a message wait, with its own ratio */
        kind = CORE_WAIT_MSG;
        ratio = t->oversub_bulk_sleep_ratio;
    }
    if (kind == CORE_WAIT_MSG && kernel_wait) {
        /* The kernel wakes a sleeper as data comes: yielding buys nothing. Spinning by
         * time only while a core is free, so that it never takes the peer's CPU. */
        out->spin_polls = t->tcp_spin_count;
        out->tight_polls = 0; /* each poll is a system call */
        out->yield_polls = 0;
        out->lost_s = 0;
        /* The loaded budget (at most the free-core one; core_wait_begin keeps it only
         * for a rank bound apart from its peers, whose spinning takes no peer's CPU). */
        int loaded_us =
            t->tcp_loaded_spin_us < t->tcp_spin_us ? t->tcp_loaded_spin_us : t->tcp_spin_us;
        out->spin_loaded_s = oversubscribed || loaded_us <= 0 ? 0 : (double)loaded_us * 1e-6;
        out->spin_s = oversubscribed ? 0
                      : free_core    ? (double)t->tcp_spin_us * 1e-6
                                     : out->spin_loaded_s;
        return;
    }
    out->spin_polls = oversubscribed ? t->oversub_spin_count : t->spin_count;
    /* Back to back only for a rank with a core of its own: sharing one, its polls take
     * the time its peer needs to answer. Memory waits (SHMEM, window locks) keep the
     * pause between polls. */
    out->tight_polls = kind == CORE_WAIT_MSG && !oversubscribed ? t->spin_tight : 0;
    if (out->tight_polls > out->spin_polls) out->tight_polls = out->spin_polls;
    out->yield_polls = t->yield_count;
    /* Ranks outnumbering cores yield to each other: a long yield is then a peer's turn,
     * not a stranger's, and memory waits have no doorbell to be woken by. */
    out->lost_s = kind == CORE_WAIT_MSG && !oversubscribed && t->yield_lost_us > 0
                      ? (double)t->yield_lost_us * 1e-6
                      : 0;
    /* Many ranks per core: a yield rarely hands the CPU to the one peer that will raise
     * what we wait for (it is one of many runnable), so yielding thousands of times only
     * burns the slices the others need; a sleeper leaves the run queue and its peer's
     * doorbell wakes exactly it. Measured at 16 ranks on 2 cores: barrier 5-10x faster.
     * Not so in an all-to-all, where every rank has frames coming from many peers: a
     * yield then mostly hands the CPU to a rank with work, while every sleeper costs its
     * senders a futex wake per frame and itself a wake-up (2 KiB blocks, 32-128 ranks on
     * 2 cores, quiet: 1.3-1.6x faster yielding; docs/PERFORMANCE.md). */
    if (kind == CORE_WAIT_MSG && ratio > 0 && oversubscribed >= ratio) out->yield_polls = 0;
    out->spin_s = 0;
    out->spin_loaded_s = 0;
}

int core_wait_parse_loadavg(const char *text, long *running)
{
    /* "0.52 0.58 0.59 3/467 12345": the fourth field is runnable/total tasks. */
    const char *p = text;
    for (int field = 0; field < 3; field++) {
        while (*p == ' ')
            p++;
        if (*p == '\0') return -1;
        while (*p && *p != ' ')
            p++;
    }
    while (*p == ' ')
        p++;
    char *end;
    long r = strtol(p, &end, 10);
    if (end == p || *end != '/' || r < 0) return -1;
    *running = r;
    return 0;
}

/* The text of a small /proc file into buf (NULL when it cannot be read). */
static const char *core_wait_read(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0) return NULL;
    buf[n] = '\0';
    return buf;
}

/* Whether the comma-separated list has the word. */
static int core_wait_has_word(const char *list, size_t len, const char *word)
{
    size_t wl = strlen(word);
    const char *p = list, *end = list + len;
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);
        if (n == wl && memcmp(p, word, wl) == 0) return 1;
        p += n + 1;
    }
    return 0;
}

int core_wait_autogroup(const char *enabled_text, const char *cgroup_text, const char *cgroot)
{
    if (!enabled_text || atoi(enabled_text) != 1) return 0;
    if (!cgroup_text) return 1;
    char v2[PATH_MAX] = ""; /* the cgroup v2 path ("/..."), empty without one */
    for (const char *line = cgroup_text; *line;) {
        const char *eol = strchr(line, '\n');
        size_t len = eol ? (size_t)(eol - line) : strlen(line);
        /* "id:controllers:path" */
        const char *c1 = memchr(line, ':', len);
        const char *c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
        if (c2) {
            const char *path = c2 + 1;
            size_t plen = len - (size_t)(path - line);
            if (core_wait_has_word(c1 + 1, (size_t)(c2 - c1 - 1), "cpu"))
                return plen == 1 && path[0] == '/';
            if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0' && plen < sizeof v2) {
                memcpy(v2, path, plen);
                v2[plen] = '\0';
            }
        }
        line += len + (eol != NULL);
    }
    if (v2[0] == '\0') return 1;
    char dir[PATH_MAX];
    if (snprintf(dir, sizeof dir, "%s%s", cgroot, v2) >= (int)sizeof dir) return 1;
    size_t root_len = strlen(cgroot);
    for (;;) {
        size_t n = strlen(dir);
        while (n > root_len && dir[n - 1] == '/')
            dir[--n] = '\0';
        char file[PATH_MAX + 16];
        snprintf(file, sizeof file, "%s/cpu.weight", dir);
        if (access(file, F_OK) == 0) return 0;
        if (n <= root_len) return 1;
        char *slash = strrchr(dir, '/');
        if (!slash || (size_t)(slash - dir) < root_len) return 1;
        *slash = '\0';
    }
}

int core_wait_own_autogroup(void)
{
    if (getsid(0) != getpid()) return 0;
    char en[16], cg[4096];
    return core_wait_autogroup(
        core_wait_read("/proc/sys/kernel/sched_autogroup_enabled", en, sizeof en),
        core_wait_read("/proc/self/cgroup", cg, sizeof cg), "/sys/fs/cgroup");
}

/* The machine's load, sampled at most every CORE_WAIT_SAMPLE_S by the first empty poll
 * of a wait that may spin by time: a read of /proc/loadavg costs a few microseconds,
 * about one tcp poll. Touched only by a blocked caller (under the critical section when
 * several threads wait). */
#define CORE_WAIT_SAMPLE_S 0.05
static struct {
    double at; /* when last sampled; 0: never */
    int level; /* then: enum core_wait_load (core_wait_load_level) */
    long ncpu;
} core_wait_load;

enum core_wait_load core_wait_load_level(long running, long ncpu)
{
    if (running <= ncpu) return CORE_LOAD_FREE;
    return running <= CORE_WAIT_LIGHT_PER_CPU * ncpu + 1 ? CORE_LOAD_LIGHT : CORE_LOAD_HEAVY;
}

enum core_wait_load core_wait_load_rt(enum core_wait_load level, int sched_policy)
{
    return sched_policy == SCHED_FIFO || sched_policy == SCHED_RR ? CORE_LOAD_FREE : level;
}

static int core_wait_level(double now)
{
    if (core_wait_load.at != 0 && now - core_wait_load.at < CORE_WAIT_SAMPLE_S)
        return core_wait_load.level;
    if (core_wait_load.ncpu == 0) {
        core_wait_load.ncpu = sysconf(_SC_NPROCESSORS_ONLN);
        if (core_wait_load.ncpu < 1) core_wait_load.ncpu = 1;
    }
    core_wait_load.at = now;
    core_wait_load.level = CORE_LOAD_FREE; /* unreadable: trust the static check */
    char buf[128];
    long running;
    if (core_wait_read("/proc/loadavg", buf, sizeof buf) &&
        core_wait_parse_loadavg(buf, &running) == 0)
        core_wait_load.level = core_wait_load_level(running, core_wait_load.ncpu);
    core_wait_load.level = core_wait_load_rt(core_wait_load.level, sched_getscheduler(0));
    return core_wait_load.level;
}

int core_wait_yields_lost(const struct core_wait_policy *p, double lost_at, double now)
{
    return p->lost_s > 0 && lost_at != 0 && now - lost_at < CORE_WAIT_LOST_WINDOW_S;
}

/* When a yield of this process last lost the CPU (0: never); see core_wait_yield. */
static double core_wait_lost_at;

void core_wait_yield(struct core_waiter *w, void (*yield_fn)(void))
{
    if (w->pol.lost_s <= 0) {
        yield_fn();
        return;
    }
    double t0 = core_diag_now();
    yield_fn();
    double t1 = core_diag_now();
    if (t1 - t0 >= w->pol.lost_s) core_wait_lost_at = t1;
}

int core_wait_smt_shared(long local_ranks, long ncpu, long threads_per_core)
{
    if (threads_per_core < 2 || ncpu < 1) return 0;
    long cores = ncpu / threads_per_core;
    return local_ranks > (cores > 0 ? cores : 1);
}

void core_wait_begin(struct core_waiter *w, enum core_wait_kind kind)
{
    /* free_core is settled lazily by the first empty poll (core_wait_next): most waits
     * end before one, and they need not read the clock. */
    core_wait_policy_make(&util_tun, kind, core.kernel_wait, core.oversubscribed, 1, &w->pol);
    /* Unbound and sharing its CPU share with other tasks, the scheduler may wake this
     * rank on its peer's core: spinning while loaded would then take the peer's CPU
     * (measured 2-3x slower), so sleep at once. A rank leading its own session (ternrun's
     * default) where autogroup applies is a scheduling group of its own, and spinning
     * won. */
    if (!core.bound && !core.own_autogroup) w->pol.spin_loaded_s = 0;
    if (core.smt_shared) w->pol.tight_polls = 0; /* a sibling thread may be the peer */
    w->polls = 0;
    w->idle_since = 0;
    w->nap_us = 50;
}

enum core_wait_phase core_wait_next(struct core_waiter *w, int may_sleep)
{
    double idle = 0;
    if (w->pol.spin_s > 0) {
        double now = core_diag_now();
        if (w->polls == 0) {
            w->idle_since = now;
            /* No free core: the loaded budget while lightly loaded, else sleep at once. */
            int level = core_wait_level(now);
            if (level != CORE_LOAD_FREE)
                w->pol.spin_s = level == CORE_LOAD_LIGHT ? w->pol.spin_loaded_s : 0;
        }
        idle = now - w->idle_since;
    }
    w->polls++;
    enum core_wait_phase ph = core_wait_decide(&w->pol, w->polls, idle, may_sleep);
    /* Yields lose the CPU here (a loaded machine): sleep, to be woken by the frame. */
    if (ph == CORE_WAIT_YIELD && may_sleep && core_wait_lost_at != 0 &&
        core_wait_yields_lost(&w->pol, core_wait_lost_at, core_diag_now()))
        ph = CORE_WAIT_SLEEP;
    return ph;
}

void core_wait_woke(struct core_waiter *w)
{
    /* At least one poll counted, so that core_wait_next does not restart the clock. */
    w->polls = w->pol.spin_polls > 0 ? w->pol.spin_polls : 1;
    w->idle_since = -HUGE_VAL; /* the time budget is spent */
}

enum core_wait_phase core_wait_idle(struct core_waiter *w)
{
    enum core_wait_phase ph = core_wait_next(w, 1);
    if (ph == CORE_WAIT_SPIN) {
        util_cpu_relax();
    } else if (ph == CORE_WAIT_YIELD) {
        sched_yield();
    } else {
        struct timespec ts = {0, w->nap_us * 1000};
        nanosleep(&ts, NULL);
        if (w->nap_us < 1000) w->nap_us *= 2;
    }
    return ph;
}

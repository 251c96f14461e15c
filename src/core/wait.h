/*
 * wait.h - the wait engine: how a blocked caller spends a poll that found nothing to do.
 *
 * Every blocking path uses it: the single-threaded and multi-threaded message waits
 * (progress.c, thread.c), SHMEM's waits on memory (shmem_sync.c) and MPI windows' lock
 * words (mpi_win.c). A wait escalates spin -> yield -> sleep; one policy structure says
 * how long each phase lasts, and one pure function (core_wait_decide) maps a wait's
 * state to its phase, so the paths cannot drift apart and the decision is unit-tested.
 *
 * The policy comes from the tunables and the machine:
 *   - messages, with a transport that must be polled (shm): TERN_SPIN_COUNT polls
 *     (TERN_OVERSUB_SPIN_COUNT with more ranks than cores; the first TERN_SPIN_TIGHT back
 *     to back, the rest with a pause between, and all with a pause when oversubscribed),
 *     TERN_YIELD_COUNT yields, then
 *     a sleep on the doorbells. With no more ranks than cores, a yield that kept the
 *     process off the CPU for TERN_YIELD_LOST_US (another task ran: a loaded machine)
 *     makes its message waits skip yielding for the next CORE_WAIT_LOST_WINDOW_S and
 *     sleep right after spinning: a sleeper is woken by the peer's frame, a yielder only
 *     when the other task's time slice ends (milliseconds per message);
 *   - messages, when every sleeping transport waits in the kernel (tcp alone): the
 *     kernel wakes a sleeper as data comes, so yielding is useless; the wait spins
 *     TERN_TCP_SPIN_COUNT polls and, while the node has a free core, for TERN_TCP_SPIN_US
 *     microseconds (a few loopback round trips), then sleeps in epoll_wait. On a loaded
 *     node (more runnable tasks than online CPUs, sampled from /proc/loadavg at most
 *     every 50 ms, or more ranks than cores; a real-time process, which those tasks
 *     cannot preempt, counts its node as free) it sleeps at once: spinning would only take
 *     the CPU the peer needs to answer. Except a rank bound apart from its peers
 *     (core.bound: --bind-to core) or leading a session of its own where the kernel's
 *     autogroup applies (core.own_autogroup: ternrun's TERN_RANK_SESSION; a scheduling
 *     group of its own) on a lightly loaded node (core_wait_load_level) whose ranks do
 *     not outnumber its cores: its spinning does not take the peer's share, so it spins
 *     TERN_TCP_LOADED_SPIN_US, and an answer within that time costs no wake-up, which on
 *     a busy core waits for another task's slice;
 *   - memory (a store rings no doorbell): as for shm, then naps growing from 50 us to 1 ms.
 */
#ifndef TERN_CORE_WAIT_H
#define TERN_CORE_WAIT_H

#include "util/cpu.h"
#include "util/tunables.h"

enum core_wait_phase { CORE_WAIT_SPIN, CORE_WAIT_YIELD, CORE_WAIT_SLEEP };

/* What a wait waits for; it decides the policy and how the wait sleeps. */
enum core_wait_kind {
    CORE_WAIT_MSG, /* frames: the caller sleeps on the transports' doorbells */
    CORE_WAIT_MEM, /* a store to memory, which rings no doorbell: core_wait_idle naps */
    /* Frames from many peers at once (a blocking all-to-all's schedule, core.wait_bulk):
     * as CORE_WAIT_MSG, but ranks outnumbering cores skip yielding only from
     * TERN_OVERSUB_BULK_SLEEP_RATIO ranks per core (default: never). */
    CORE_WAIT_BULK,
};

struct core_wait_policy {
    long spin_polls;      /* empty polls that spin */
    long tight_polls;     /* of those, the first ones run back to back (no pause between) */
    long yield_polls;     /* empty polls after those that yield the CPU */
    double spin_s;        /* and spin at least this long after the first empty poll (s) */
    double spin_loaded_s; /* spin_s instead when the node has no free core (kernel waits) */
    double lost_s;        /* a yield off the CPU this long (s) skips yields for a while; 0: never */
};

/* One wait's state; on the caller's stack. */
struct core_waiter {
    struct core_wait_policy pol;
    long polls;        /* empty polls since the last progress */
    double idle_since; /* clock at the first of them (read only when pol.spin_s > 0) */
    long nap_us;       /* the next nap of a memory wait */
};

/*
 * The phase of a wait after its polls-th empty poll (counting from 1), idle_s seconds
 * after the first: spin while polls < spin_polls or idle_s < spin_s, then yield while
 * polls < spin_polls + yield_polls, then sleep - or yield when the caller may not sleep
 * (!may_sleep: frames wait for room at a peer that rings nobody when room appears).
 * Pure.
 */
enum core_wait_phase core_wait_decide(const struct core_wait_policy *p, long polls, double idle_s,
                                      int may_sleep);

/*
 * The policy for a wait of `kind` from tunables t: kernel_wait, every sleeping transport
 * waits in the kernel (core.kernel_wait); oversubscribed, 0 or the ranks per core on
 * this node when they outnumber its cores (rounded up); free_core, the node had a free core when
 * last sampled. Pure.
 */
void core_wait_policy_make(const struct util_tunables *t, enum core_wait_kind kind, int kernel_wait,
                           int oversubscribed, int free_core, struct core_wait_policy *out);

/* The machine's load from /proc/loadavg's runnable tasks (this one included) and the
 * online CPUs: a free core; lightly loaded, at most CORE_WAIT_LIGHT_PER_CPU runnable per
 * CPU plus one (2 ranks beside 2 busy loops on 2 CPUs); or heavily. Pure. */
enum core_wait_load { CORE_LOAD_FREE, CORE_LOAD_LIGHT, CORE_LOAD_HEAVY };
#define CORE_WAIT_LIGHT_PER_CPU 2
enum core_wait_load core_wait_load_level(long running, long ncpu);
/*
 * The load as a process of scheduling policy sched_policy (sched_getscheduler) sees it:
 * a real-time one (SCHED_FIFO, SCHED_RR) is never preempted by the ordinary tasks that
 * /proc/loadavg counts, so for it every core they fill is free (level otherwise). Its
 * spin cannot take its peer's CPU from it either: a peer on another core is not
 * displaced by a spinner, and ranks sharing a core are counted as oversubscribed. Pure.
 */
enum core_wait_load core_wait_load_rt(enum core_wait_load level, int sched_policy);

/* Parse the runnable-task count (the "R" of "R/T", fourth field) out of /proc/loadavg's
 * text. Returns 0 and sets *running, or -1 when the text does not parse. Pure. */
int core_wait_parse_loadavg(const char *text, long *running);

/*
 * Whether the kernel's autogroup sets this process's CPU share, which it does only for
 * tasks of the root CPU task group: enabled_text is /proc/sys/kernel/sched_autogroup_enabled
 * (NULL: the kernel has no autogroup), cgroup_text /proc/self/cgroup (NULL: no cgroups),
 * cgroot where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup). With a cgroup v1
 * hierarchy that has the cpu controller ("4:cpu,cpuacct:/path"), the process is in the
 * root group when that path is "/". Else on cgroup v2 ("0::/path") it is unless a
 * directory from its cgroup up to cgroot has cpu.weight: the root cgroup has none, and a
 * cgroup namespace's root (a container's "/") has one when the cpu controller is on for
 * it. Systemd sessions with the cpu controller on, Slurm's job cgroups and containers are
 * thus groups of their own, where a session of its own changes nothing. Returns 1 or 0.
 */
int core_wait_autogroup(const char *enabled_text, const char *cgroup_text, const char *cgroot);

/* This process is a scheduling group of its own: it leads its session (ternrun's
 * TERN_RANK_SESSION, Hydra) and core_wait_autogroup says so of this machine's procfs and
 * cgroups (read once, at start: core.own_autogroup). */
int core_wait_own_autogroup(void);

/*
 * Whether a wait whose policy is p, in its yield phase at time now, sleeps instead: a yield
 * of this process lost the CPU (took at least p->lost_s, someone else ran) at lost_at (0:
 * never), less than CORE_WAIT_LOST_WINDOW_S before. Pure.
 */
#define CORE_WAIT_LOST_WINDOW_S 0.1
int core_wait_yields_lost(const struct core_wait_policy *p, double lost_at, double now);
/* Yield the CPU in a message wait with yield_fn (sched_yield, or the threaded path's
 * hand-over of the critical section) and time it: a yield of at least w->pol.lost_s is
 * remembered process-wide (core_wait_yields_lost). */
void core_wait_yield(struct core_waiter *w, void (*yield_fn)(void));
/* Start a wait of `kind` with the policy in force (util_tun, core's flags). */
void core_wait_begin(struct core_waiter *w, enum core_wait_kind kind);

/* Count one empty poll and return the phase the caller is to act on (see decide). The
 * first empty poll of a wait that may spin by time samples the machine's load (cached). */
enum core_wait_phase core_wait_next(struct core_waiter *w, int may_sleep);

/* Between two spin polls: pause the core (util_cpu_relax), but not in the wait's first
 * pol.tight_polls empty polls, which run back to back. */
static inline void core_wait_pause(const struct core_waiter *w)
{
    if (w->polls > w->pol.tight_polls) util_cpu_relax();
}

/* Do the ranks of a node share cores' hardware threads: local_ranks on ncpu CPUs of
 * threads_per_core each, more ranks than cores? Then a spin without a pause takes issue
 * slots from a sibling thread that may be the peer, and the policy keeps the pause
 * (core_wait_begin: no tight polls). Pure. */
int core_wait_smt_shared(long local_ranks, long ncpu, long threads_per_core);

/* A poll made progress: the next empty poll starts spinning again. */
static inline void core_wait_progressed(struct core_waiter *w)
{
    w->polls = 0;
    w->nap_us = 50;
}

/* The caller slept and woke with nothing to do: go on yielding (or sleep again at once),
 * without a second spin phase. */
void core_wait_woke(struct core_waiter *w);

/* For waits that poll something besides the progress engine (memory, a lock word) after
 * an empty poll: count it and act on its phase - a pause instruction, sched_yield, or a
 * nap of 50 us doubling up to 1 ms. Returns the phase it acted on. */
enum core_wait_phase core_wait_idle(struct core_waiter *w);

#endif

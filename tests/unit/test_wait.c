/*
 * test_wait.c - the wait engine's decisions (core/wait.h), which the single-threaded and
 * multi-threaded blocking paths, SHMEM and MPI windows all follow: the phase for a given
 * empty poll, the policy chosen from the tunables and the machine (a tcp-only wait spins
 * by time only while a core is free; a loaded or oversubscribed node sleeps at once), the
 * parse of /proc/loadavg, whether autogroup sets a process's CPU share (cgroups), and when
 * a shm receiver counts a cooperative copy whose helper held it up as a declined offer
 * (transport/shm/shm_coop.h).
 */
#define _GNU_SOURCE
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "core/wait.h"
#include "transport/shm/shm_coop.h"
#include "unit.h"

static void yield_quick(void) {}

static void yield_away(void)
{
    struct timespec ts = {0, 5000000};
    nanosleep(&ts, NULL);
}

static void test_decide(void)
{
    /* Polls: 3 spins, 2 yields, then sleep. */
    struct core_wait_policy p = {.spin_polls = 3, .yield_polls = 2, .spin_s = 0};
    CHECK_EQ(core_wait_decide(&p, 1, 0, 1), CORE_WAIT_SPIN);
    CHECK_EQ(core_wait_decide(&p, 2, 0, 1), CORE_WAIT_SPIN);
    CHECK_EQ(core_wait_decide(&p, 3, 0, 1), CORE_WAIT_YIELD);
    CHECK_EQ(core_wait_decide(&p, 4, 0, 1), CORE_WAIT_YIELD);
    CHECK_EQ(core_wait_decide(&p, 5, 0, 1), CORE_WAIT_SLEEP);
    CHECK_EQ(core_wait_decide(&p, 500, 0, 1), CORE_WAIT_SLEEP);
    /* Frames waiting for room at a peer that rings nobody: never sleep. */
    CHECK_EQ(core_wait_decide(&p, 500, 0, 0), CORE_WAIT_YIELD);
    CHECK_EQ(core_wait_decide(&p, 1, 0, 0), CORE_WAIT_SPIN);

    /* Time: spin while within the budget, whatever the poll count; then sleep at once. */
    struct core_wait_policy t = {.spin_polls = 0, .yield_polls = 0, .spin_s = 50e-6};
    CHECK_EQ(core_wait_decide(&t, 1, 0, 1), CORE_WAIT_SPIN);
    CHECK_EQ(core_wait_decide(&t, 100000, 49e-6, 1), CORE_WAIT_SPIN);
    CHECK_EQ(core_wait_decide(&t, 2, 51e-6, 1), CORE_WAIT_SLEEP);
    CHECK_EQ(core_wait_decide(&t, 2, HUGE_VAL, 1), CORE_WAIT_SLEEP);

    /* The old tcp default: sleep after one empty poll. */
    struct core_wait_policy z = {0};
    CHECK_EQ(core_wait_decide(&z, 1, 0, 1), CORE_WAIT_SLEEP);
}

static void test_policy(void)
{
    struct util_tunables t = {0};
    t.spin_count = 4000;
    t.yield_count = 2000;
    t.oversub_spin_count = 16;
    t.tcp_spin_count = 0;
    t.tcp_spin_us = 50;
    struct core_wait_policy p;

    /* shm in use: polls, then yields. */
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 0, 1, &p);
    CHECK_EQ(p.spin_polls, 4000);
    CHECK_EQ(p.yield_polls, 2000);
    CHECK(p.spin_s == 0);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 1, 1, &p);
    CHECK_EQ(p.spin_polls, 16);
    CHECK_EQ(p.yield_polls, 2000);
    /* Back-to-back polls (TERN_SPIN_TIGHT) only for message waits of a rank with a core of
     * its own: not oversubscribed, not memory waits, not the kernel's (each poll a call). */
    t.spin_tight = 64;
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 0, 1, &p);
    CHECK_EQ(p.tight_polls, 64);
    core_wait_policy_make(&t, CORE_WAIT_BULK, 0, 0, 1, &p);
    CHECK_EQ(p.tight_polls, 64);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 1, 1, &p);
    CHECK_EQ(p.tight_polls, 0);
    core_wait_policy_make(&t, CORE_WAIT_MEM, 0, 0, 1, &p);
    CHECK_EQ(p.tight_polls, 0);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 1, &p);
    CHECK_EQ(p.tight_polls, 0);
    /* Ranks sharing cores' hardware threads (more ranks than cores): no tight polls
     * (core_wait_begin). 2 threads a core: 8 CPUs are 4 cores. */
    /* {ranks, CPUs, threads a core, shared}; 9 on 8 with 1 thread is oversubscribed (the
     * policy's own rule), 0 CPUs unknown. */
    static const long smt[][4] = {{4, 8, 2, 0}, {5, 8, 2, 1}, {8, 8, 1, 0}, {9, 8, 1, 0},
                                  {2, 1, 2, 1}, {1, 1, 2, 0}, {3, 0, 2, 0}};
    for (size_t i = 0; i < sizeof smt / sizeof smt[0]; i++)
        CHECK_EQ(core_wait_smt_shared(smt[i][0], smt[i][1], smt[i][2]), smt[i][3]);
    /* core_wait_pause: no pause up to tight_polls empty polls, then one per poll. */
    struct core_waiter w = {.pol = {.tight_polls = 2}, .polls = 2};
    core_wait_pause(&w); /* (a pause is not observable; this only runs both branches) */
    w.polls = 3;
    core_wait_pause(&w);
    /* TERN_OVERSUB_SLEEP_RATIO ranks per core or more: sleep right after spinning;
     * memory waits (no doorbell to ring) still yield; 0 turns the rule off. */
    t.oversub_sleep_ratio = 4;
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 3, 1, &p);
    CHECK_EQ(p.yield_polls, 2000);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 4, 1, &p);
    CHECK_EQ(p.yield_polls, 0);
    CHECK_EQ(core_wait_decide(&p, 16, 0, 1), CORE_WAIT_SLEEP);
    core_wait_policy_make(&t, CORE_WAIT_MEM, 0, 128, 1, &p);
    CHECK_EQ(p.yield_polls, 2000);
    /* An all-to-all's waits (CORE_WAIT_BULK) have their own ratio: 0 yields at any ratio,
     * a value acts as TERN_OVERSUB_SLEEP_RATIO does; otherwise they are message waits. */
    t.oversub_bulk_sleep_ratio = 0;
    core_wait_policy_make(&t, CORE_WAIT_BULK, 0, 64, 1, &p);
    CHECK_EQ(p.spin_polls, 16);
    CHECK_EQ(p.yield_polls, 2000);
    CHECK_EQ(core_wait_decide(&p, 16, 0, 1), CORE_WAIT_YIELD);
    CHECK_EQ(core_wait_decide(&p, 2016, 0, 1), CORE_WAIT_SLEEP);
    t.oversub_bulk_sleep_ratio = 8;
    core_wait_policy_make(&t, CORE_WAIT_BULK, 0, 7, 1, &p);
    CHECK_EQ(p.yield_polls, 2000);
    core_wait_policy_make(&t, CORE_WAIT_BULK, 0, 8, 1, &p);
    CHECK_EQ(p.yield_polls, 0);
    core_wait_policy_make(&t, CORE_WAIT_BULK, 0, 0, 1, &p);
    CHECK_EQ(p.spin_polls, 4000);
    CHECK_EQ(p.yield_polls, 2000);
    core_wait_policy_make(&t, CORE_WAIT_BULK, 1, 0, 1, &p); /* tcp alone: as MSG */
    CHECK_EQ(p.yield_polls, 0);
    CHECK(p.spin_s > 49e-6 && p.spin_s < 51e-6);
    t.oversub_sleep_ratio = 0;
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 128, 1, &p);
    CHECK_EQ(p.yield_polls, 2000);

    /* tcp alone on a free core: spin for the time budget, no yields. */
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 1, &p);
    CHECK_EQ(p.spin_polls, 0);
    CHECK_EQ(p.yield_polls, 0);
    CHECK(p.spin_s > 49e-6 && p.spin_s < 51e-6);
    CHECK_EQ(core_wait_decide(&p, 1, 10e-6, 1), CORE_WAIT_SPIN);
    /* ... on a loaded node, or with more ranks than cores: sleep after one empty poll. */
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 0, &p);
    CHECK(p.spin_s == 0);
    CHECK_EQ(core_wait_decide(&p, 1, 0, 1), CORE_WAIT_SLEEP);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 1, 1, &p);
    CHECK(p.spin_s == 0);
    CHECK_EQ(core_wait_decide(&p, 1, 0, 1), CORE_WAIT_SLEEP);
    /* TERN_TCP_SPIN_COUNT spins whatever the load. */
    t.tcp_spin_count = 100;
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 1, 0, &p);
    CHECK_EQ(core_wait_decide(&p, 99, 0, 1), CORE_WAIT_SPIN);
    CHECK_EQ(core_wait_decide(&p, 100, 0, 1), CORE_WAIT_SLEEP);

    /* Memory waits ignore the kernel's doorbells: polls and yields, as shm. */
    core_wait_policy_make(&t, CORE_WAIT_MEM, 1, 0, 1, &p);
    CHECK_EQ(p.spin_polls, 4000);
    CHECK_EQ(p.yield_polls, 2000);
    CHECK(p.spin_s == 0);
}

static void test_loadavg(void)
{
    long r = -1;
    CHECK_EQ(core_wait_parse_loadavg("0.52 0.58 0.59 3/467 12345\n", &r), 0);
    CHECK_EQ(r, 3);
    CHECK_EQ(core_wait_parse_loadavg("12.00 9.10 8.00 17/1024 99", &r), 0);
    CHECK_EQ(r, 17);
    CHECK_EQ(core_wait_parse_loadavg("0.52 0.58 0.59", &r), -1);
    CHECK_EQ(core_wait_parse_loadavg("0.52 0.58 0.59 x/4 1", &r), -1);
    CHECK_EQ(core_wait_parse_loadavg("0.52 0.58 0.59 3 1", &r), -1);
    CHECK_EQ(core_wait_parse_loadavg("", &r), -1);
}

/* Autogroup applies only in the root CPU task group: cgroup v1's cpu hierarchy at "/",
 * or cgroup v2 with no cpu.weight from the process's cgroup up to the mount (a fake one
 * in a temporary directory here). */
static void test_autogroup(void)
{
    char root[] = "/tmp/tern_cgXXXXXX";
    CHECK(mkdtemp(root) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/user.slice", root);
    CHECK_EQ(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/user.slice/session-3.scope", root);
    CHECK_EQ(mkdir(path, 0700), 0);

    /* The feature off, or a kernel without it. */
    CHECK_EQ(core_wait_autogroup("0\n", "0::/\n", root), 0);
    CHECK_EQ(core_wait_autogroup(NULL, "0::/\n", root), 0);
    /* No cgroups at all: the root group. */
    CHECK_EQ(core_wait_autogroup("1\n", NULL, root), 1);
    /* cgroup v1: the cpu hierarchy's path decides, whatever memory's is. */
    const char *v1 = "9:name=systemd:/\n4:memory:/job/7\n2:cpuacct:/\n1:cpu:/\n0::/\n";
    CHECK_EQ(core_wait_autogroup("1\n", v1, root), 1);
    CHECK_EQ(core_wait_autogroup("1\n", "3:cpu,cpuacct:/slurm/uid_0/job_5\n0::/\n", root), 0);
    CHECK_EQ(core_wait_autogroup("1\n", "3:cpuacct,cpu:/\n", root), 1);
    /* "cpuset" is not "cpu". */
    CHECK_EQ(core_wait_autogroup("1\n", "5:cpuset:/x\n0::/user.slice\n", root), 1);
    /* cgroup v2 without the cpu controller anywhere. */
    CHECK_EQ(core_wait_autogroup("1\n", "0::/user.slice/session-3.scope\n", root), 1);
    CHECK_EQ(core_wait_autogroup("1\n", "0::/\n", root), 1);
    /* The cpu controller on for user.slice: the session's scope inherits its group. */
    snprintf(path, sizeof path, "%s/user.slice/cpu.weight", root);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_EQ(core_wait_autogroup("1\n", "0::/user.slice/session-3.scope\n", root), 0);
    CHECK_EQ(core_wait_autogroup("1\n", "0::/user.slice/\n", root), 0);
    CHECK_EQ(core_wait_autogroup("1\n", "0::/\n", root), 1);
    /* A container's namespace root with the cpu controller on. */
    snprintf(path, sizeof path, "%s/cpu.weight", root);
    f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) fclose(f);
    CHECK_EQ(core_wait_autogroup("1\n", "0::/\n", root), 0);

    unlink(path);
    snprintf(path, sizeof path, "%s/user.slice/cpu.weight", root);
    unlink(path);
    snprintf(path, sizeof path, "%s/user.slice/session-3.scope", root);
    rmdir(path);
    snprintf(path, sizeof path, "%s/user.slice", root);
    rmdir(path);
    rmdir(root);
}

/* A waiter in motion: the policy's phases in order, a wake-up skips the spin phase, and
 * progress restarts it. */
static void test_waiter(void)
{
    struct core_waiter w = {.pol = {.spin_polls = 2, .yield_polls = 2, .spin_s = 0}};
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_SPIN);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_YIELD);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_YIELD);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_SLEEP);
    core_wait_woke(&w);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_YIELD);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_SLEEP);
    core_wait_progressed(&w);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_SPIN);

    /* By time: a huge budget keeps spinning; after a wake-up it is spent. The first
     * empty poll samples the machine's load: if no core is free it must not spin. */
    struct core_waiter v = {.pol = {.spin_polls = 0, .yield_polls = 0, .spin_s = 1e9}};
    enum core_wait_phase first = core_wait_next(&v, 1);
    CHECK(first == CORE_WAIT_SPIN || (first == CORE_WAIT_SLEEP && v.pol.spin_s == 0));
    if (first == CORE_WAIT_SPIN) CHECK_EQ(core_wait_next(&v, 1), CORE_WAIT_SPIN);
    core_wait_woke(&v);
    CHECK_EQ(core_wait_next(&v, 1), CORE_WAIT_SLEEP);
}

/* A yield that lost the CPU (TERN_YIELD_LOST_US): which waits time their yields, and a
 * lost one turns the yield phase of the next 100 ms into sleep (when sleeping is allowed). */
static void test_yield_lost(void)
{
    struct util_tunables t = {0};
    t.spin_count = 4000;
    t.yield_count = 2000;
    t.oversub_spin_count = 16;
    t.oversub_sleep_ratio = 4;
    t.yield_lost_us = 50;
    struct core_wait_policy p;
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 0, 1, &p);
    CHECK(p.lost_s > 49e-6 && p.lost_s < 51e-6);
    core_wait_policy_make(&t, CORE_WAIT_BULK, 0, 0, 1, &p);
    CHECK(p.lost_s > 49e-6 && p.lost_s < 51e-6);
    /* Ranks outnumbering cores yield to each other; memory waits and tcp-only waits do
     * not yield by this rule; 0 turns it off. */
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 2, 1, &p);
    CHECK(p.lost_s == 0);
    core_wait_policy_make(&t, CORE_WAIT_MEM, 0, 0, 1, &p);
    CHECK(p.lost_s == 0);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 1, &p);
    CHECK(p.lost_s == 0);
    t.yield_lost_us = 0;
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 0, 1, &p);
    CHECK(p.lost_s == 0);

    struct core_wait_policy q = {.spin_polls = 1, .yield_polls = 100, .lost_s = 1e-3};
    CHECK(!core_wait_yields_lost(&q, 0, 5.0));   /* never lost */
    CHECK(core_wait_yields_lost(&q, 5.0, 5.01)); /* 10 ms ago */
    CHECK(!core_wait_yields_lost(&q, 5.0, 5.2)); /* the window is over */
    struct core_wait_policy off = {.spin_polls = 1, .yield_polls = 100, .lost_s = 0};
    CHECK(!core_wait_yields_lost(&off, 5.0, 5.01));

    /* In motion: a quick yield keeps yielding, a yield off the CPU for 5 ms (> 1 ms)
     * makes the next yield-phase poll sleep, unless the caller may not sleep. */
    struct core_waiter w = {.pol = q};
    w.pol.spin_polls = 2;
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_SPIN);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_YIELD);
    core_wait_yield(&w, yield_quick);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_YIELD);
    core_wait_yield(&w, yield_away);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_SLEEP);
    CHECK_EQ(core_wait_next(&w, 0), CORE_WAIT_YIELD);
    core_wait_progressed(&w);
    CHECK_EQ(core_wait_next(&w, 1), CORE_WAIT_SPIN); /* spinning is kept */
    /* A waiter whose policy does not time yields is not affected. */
    struct core_waiter v = {.pol = {.spin_polls = 1, .yield_polls = 100, .lost_s = 0}};
    CHECK_EQ(core_wait_next(&v, 1), CORE_WAIT_YIELD);
    CHECK_EQ(core_wait_next(&v, 1), CORE_WAIT_YIELD);
}

/* A loaded node (TERN_TCP_LOADED_SPIN_US): tcp-only waits keep a short spin by time, at
 * most TERN_TCP_SPIN_US, never with more ranks than cores, and only for a rank bound apart
 * from its peers (an unbound one may be woken on its peer's core). */
static void test_loaded_spin(void)
{
    struct util_tunables t = {0};
    t.spin_count = 4000;
    t.yield_count = 2000;
    t.tcp_spin_us = 50;
    t.tcp_loaded_spin_us = 20;
    struct core_wait_policy p;
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 0, &p);
    CHECK(p.spin_s > 19e-6 && p.spin_s < 21e-6);
    CHECK(p.spin_loaded_s > 19e-6 && p.spin_loaded_s < 21e-6);
    CHECK(p.lost_s == 0);
    CHECK_EQ(core_wait_decide(&p, 1, 10e-6, 1), CORE_WAIT_SPIN);
    CHECK_EQ(core_wait_decide(&p, 1, 21e-6, 1), CORE_WAIT_SLEEP);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 1, &p); /* a free core: the full budget */
    CHECK(p.spin_s > 49e-6 && p.spin_s < 51e-6);
    CHECK(p.spin_loaded_s > 19e-6 && p.spin_loaded_s < 21e-6);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 1, 0, &p); /* oversubscribed */
    CHECK(p.spin_s == 0 && p.spin_loaded_s == 0);
    core_wait_policy_make(&t, CORE_WAIT_MSG, 0, 0, 0, &p); /* shm: polls and yields */
    CHECK(p.spin_s == 0 && p.spin_loaded_s == 0);
    t.tcp_loaded_spin_us = 500; /* capped by TERN_TCP_SPIN_US */
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 0, &p);
    CHECK(p.spin_loaded_s > 49e-6 && p.spin_loaded_s < 51e-6);
    t.tcp_spin_us = 0; /* "sleep at once" holds loaded too */
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 0, &p);
    CHECK(p.spin_s == 0 && p.spin_loaded_s == 0);
    t.tcp_spin_us = 50;
    t.tcp_loaded_spin_us = 0; /* 0: sleep at once when loaded (the unbound default) */
    core_wait_policy_make(&t, CORE_WAIT_MSG, 1, 0, 0, &p);
    CHECK(p.spin_s == 0 && p.spin_loaded_s == 0);

    /* Lightly loaded: at most 2 runnable per CPU plus one (2 ranks, 2 busy loops, 2 CPUs
     * and the launcher); beyond that a bound rank sleeps at once too. */
    CHECK_EQ(core_wait_load_level(2, 2), CORE_LOAD_FREE);
    CHECK_EQ(core_wait_load_level(3, 2), CORE_LOAD_LIGHT);
    CHECK_EQ(core_wait_load_level(5, 2), CORE_LOAD_LIGHT);
    CHECK_EQ(core_wait_load_level(6, 2), CORE_LOAD_HEAVY);
    CHECK_EQ(core_wait_load_level(14, 2), CORE_LOAD_HEAVY);
    CHECK_EQ(core_wait_load_level(1, 1), CORE_LOAD_FREE);
    CHECK_EQ(core_wait_load_level(4, 1), CORE_LOAD_HEAVY);
    /* A real-time process is not preempted by the tasks loadavg counts: free for it. */
    CHECK_EQ(core_wait_load_rt(CORE_LOAD_HEAVY, SCHED_FIFO), CORE_LOAD_FREE);
    CHECK_EQ(core_wait_load_rt(CORE_LOAD_LIGHT, SCHED_RR), CORE_LOAD_FREE);
    CHECK_EQ(core_wait_load_rt(CORE_LOAD_HEAVY, SCHED_OTHER), CORE_LOAD_HEAVY);
    CHECK_EQ(core_wait_load_rt(CORE_LOAD_LIGHT, SCHED_BATCH), CORE_LOAD_LIGHT);
    CHECK_EQ(core_wait_load_rt(CORE_LOAD_FREE, SCHED_OTHER), CORE_LOAD_FREE);

    /* core_wait_begin keeps the loaded budget only for a bound rank. */
    struct util_tunables saved = util_tun;
    int kw = core.kernel_wait, os = core.oversubscribed, bd = core.bound;
    util_tun.tcp_spin_count = 0;
    util_tun.tcp_spin_us = 50;
    util_tun.tcp_loaded_spin_us = 20;
    core.kernel_wait = 1;
    core.oversubscribed = 0;
    struct core_waiter w;
    core.bound = 1;
    core_wait_begin(&w, CORE_WAIT_MSG);
    CHECK(w.pol.spin_loaded_s > 19e-6 && w.pol.spin_loaded_s < 21e-6);
    core.bound = 0;
    core_wait_begin(&w, CORE_WAIT_MSG);
    CHECK(w.pol.spin_loaded_s == 0);
    CHECK(w.pol.spin_s > 49e-6 && w.pol.spin_s < 51e-6); /* a free core: as before */
    util_tun = saved;
    core.kernel_wait = kw;
    core.oversubscribed = os;
    core.bound = bd;
}

/* A cooperative copy was a loss when it took longer than the receiver, at its own rate,
 * would have taken for every chunk alone. */
static void test_coop_slower(void)
{
    /* 2 halves, mine took 10 us: alone it would have been 20 us. */
    CHECK_EQ(shm_coop_was_slower(10e-6, 12e-6, 1, 2), 0); /* the helper kept pace */
    CHECK_EQ(shm_coop_was_slower(10e-6, 20e-6, 1, 2), 0); /* level: not slower */
    CHECK_EQ(shm_coop_was_slower(10e-6, 21e-6, 1, 2), 1); /* the helper woke late */
    CHECK_EQ(shm_coop_was_slower(10e-6, 3e-3, 1, 2), 1);  /* it lost its CPU half-way */
    /* 8 chunks, I took 6 in 30 us (5 us each: 40 us alone). */
    CHECK_EQ(shm_coop_was_slower(30e-6, 35e-6, 6, 8), 0);
    CHECK_EQ(shm_coop_was_slower(30e-6, 45e-6, 6, 8), 1);
    /* No rate of my own to compare with, or nothing left to the sender: never slower. */
    CHECK_EQ(shm_coop_was_slower(0, 1.0, 0, 8), 0);
    CHECK_EQ(shm_coop_was_slower(10e-6, 1.0, 2, 2), 0);
}

int main(void)
{
    test_decide();
    test_policy();
    test_loadavg();
    test_autogroup();
    test_yield_lost();
    test_waiter();
    test_loaded_spin();
    test_coop_slower();
    return unit_done("test_wait");
}

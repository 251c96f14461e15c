/*
 * core.c - bring-up and tear-down: tunables, boot, one transport per peer, the
 * built-in communicators; and the documented fatal path.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "trace/trace.h"
#include "core/core_tl.h"
#include "core/wait.h"
#include "util/log.h"
#include "util/mem.h"
#include "util/topo.h"
#include "util/tunables.h"

struct core_state core;

void core_fatal(const char *what)
{
    UTIL_ERROR("fatal: %s", what);
    boot_abort(&core.boot, 1, what);
    _exit(1);
}

/*
 * The CPUs this node's ranks share: those this process may run on, together with those
 * of its parent (the launcher's daemon). A launcher that binds each rank to its own core
 * (ternrun, mpirun --bind-to core) leaves each rank a mask of one core, and comparing the
 * node's ranks with that would call every bound job oversubscribed (2 ranks "on 1 core"):
 * 16 polls of spinning, then thousands of sched_yield()s, which on a loaded machine hand
 * a whole time slice to another task per message. The parent was not bound with them
 * (or was bound to the same CPUs, which then really are shared).
 */
static int core_count_cpus(void)
{
    cpu_set_t set, parent;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        if (sched_getaffinity(getppid(), sizeof parent, &parent) == 0) CPU_OR(&set, &set, &parent);
        return CPU_COUNT(&set);
    }
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/*
 * Bind this process when TERN_BIND allows, the launcher left it unbound (the mask is
 * still the whole machine it may use) and the node's ranks fit: where TERN_BIND_TO and
 * TERN_MAP_BY say, by local rank, on the topology (util/topo.c: ternrun places its ranks
 * with the same rules, and tells them TERN_BIND=0). Two ranks left to the scheduler can
 * end up sharing one core: each wake-up pulls the woken rank onto the waker's core, and a
 * message then costs a context switch instead of a cache miss. Not when every transport
 * that sleeps waits in the kernel (tcp alone): such a rank sleeps in epoll_wait, and the
 * scheduler must stay free to wake it on whichever core is idle - on a loaded machine a
 * pinned rank waits for its one core (15 us against 4 us per 8-byte message over
 * loopback, measured). `pol` is TERN_BIND_TO/TERN_MAP_BY, checked before anything
 * was created (core_bind_policy).
 */
static void core_bind(const struct topo_policy *pol)
{
    cpu_set_t allowed;
    if (!util_tun.bind || core.kernel_wait || sched_getaffinity(0, sizeof allowed, &allowed) != 0)
        return;
    int ncpu = CPU_COUNT(&allowed);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    if (ncpu < 2 || ncpu != online || core.boot.local_size > ncpu) return;
    struct topo t;
    struct topo_binding b;
    if (topo_load(&t, NULL, &allowed) != 0) return;
    int rc = topo_place(&t, pol, core.boot.local_rank, core.boot.local_size, &b);
    if (rc == 0 && b.bound && sched_setaffinity(0, sizeof b.mask, &b.mask) == 0)
        UTIL_DEBUG(1, "bound to %s %d (local rank %d of %d)", topo_level_name(b.level), b.obj,
                   core.boot.local_rank, core.boot.local_size);
    topo_free(&t);
}

/* The binding policy of TERN_BIND_TO/TERN_MAP_BY; a bad value is TERN_ERR_TUNABLE, found
 * before any segment or connection exists (a rank failing later leaves its peers' work
 * to clean up). */
static int core_bind_policy(struct topo_policy *pol)
{
    char err[300];
    topo_policy_default(pol);
    if (topo_policy_parse(pol, util_tun.bind_to, NULL, err, sizeof err) != 0 ||
        topo_policy_parse(pol, NULL, util_tun.map_by, err, sizeof err) != 0) {
        UTIL_ERROR("TERN_BIND_TO/TERN_MAP_BY: %s", err);
        return TERN_ERR_TUNABLE;
    }
    return 0;
}

/* A transport's limits. Fields it leaves alone are 0; a capability its ops table
 * contradicts (the operation is the "not supported" stub) is dropped, so the layers
 * that trust core_peer_caps() never call a stub expecting it to act. */
static struct tl_limits core_tl_limits(const struct tl_ops *tl)
{
    struct tl_limits lim;
    memset(&lim, 0, sizeof lim);
    tl->limits(&lim);
    if (tl->wake == tl_stub_wake) lim.caps &= ~TL_CAP_WAKE;
    if (tl->send_ref == tl_stub_send_ref) lim.caps &= ~TL_CAP_SEND_REF;
    if (tl->get == tl_stub_get) lim.caps &= ~TL_CAP_GET;
    if (!(lim.caps & TL_CAP_MAP)) lim.caps &= ~TL_CAP_ATOMIC;
    return lim;
}

void core_wake(int rank)
{
    core.peers[rank].tl->wake(rank);
}

/* Pick one transport per peer and open each transport for its peers. */
static int core_transports_open(void)
{
    struct boot *b = &core.boot;
    int *peers = malloc((size_t)core.size * sizeof(int));
    if (peers == NULL) return TERN_ERR_NOMEM;
    for (int r = 0; r < core.size; r++) {
        const struct tl_ops *pick = NULL;
        for (int i = 0; tl_registry[i] && !pick; i++) {
            const struct tl_ops *tl = tl_registry[i];
            /* A transport with nothing to configure (self) needs no TERN_TRANSPORTS entry. */
            int allowed = tl->implicit || util_list_has(util_tun.transports, tl->name);
            if (allowed && tl->size == sizeof(struct tl_ops) && tl->reaches(b, r)) pick = tl;
        }
        if (pick == NULL) {
            UTIL_ERROR("no transport reaches rank %d (TERN_TRANSPORTS=%s)", r, util_tun.transports);
            free(peers);
            return TERN_ERR_TRANSPORT;
        }
        core.peers[r].tl = pick;
    }
    struct tl_env env = {.boot = b,
                         .recv = core_frame_recv,
                         .failed = core_peer_news,
                         .place = core_frame_place,
                         .placed = core_frame_placed,
                         .place_head = sizeof(struct core_data),
                         .sent = core_frame_sent};
    int rc = 0;
    for (int i = 0; tl_registry[i] && rc == 0; i++) {
        const struct tl_ops *tl = tl_registry[i];
        int n = 0;
        for (int r = 0; r < core.size; r++)
            if (core.peers[r].tl == tl) peers[n++] = r;
        if (n == 0) continue;
        core.tls[core.ntls++] = tl;
        rc = tl->open(&env, peers, n);
        UTIL_DEBUG(1, "transport %s serves %d peer(s)", tl->name, n);
    }
    free(peers);
    return rc;
}

/* Milliseconds since the last call into *ms (the first call just starts the clock). */
static void core_step(double *ms)
{
    static struct timespec last;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    *ms = (double)(now.tv_sec - last.tv_sec) * 1e3 + (double)(now.tv_nsec - last.tv_nsec) * 1e-6;
    last = now;
}

static int core_init(void)
{
    struct topo_policy bind_policy;
    /* Milliseconds spent in each step of the bring-up, for TERN_DEBUG=2. */
    double step[8] = {0};
    core_step(&step[0]);
    int rc = util_tunables_load(stderr);
    if (rc == 0) rc = core_bind_policy(&bind_policy);
    if (rc) return rc;
    util_copy_wide_max = util_tun.copy_wide_max;
    memset(&core, 0, sizeof core);
    rc = boot_init(&core.boot);
    if (rc) goto fail_boot;
    core_diag_init();
    core.rank = core.boot.rank;
    core.size = core.boot.size;
    util_log_rank = core.rank;
    core.peers = calloc((size_t)core.size, sizeof *core.peers);
    if (core.peers == NULL) {
        rc = TERN_ERR_NOMEM;
        goto fail_boot;
    }
    core_step(&step[0]);
    rc = core_transports_open();
    core_step(&step[1]);
    if (rc == 0) rc = boot_fence(&core.boot);
    core_step(&step[2]);
    /* Every transport's address keys (tern-shm-, tern-tcp-, tern-ofi-) in a few requests
     * instead of one get per peer (ternrun only; elsewhere the gets go key by key). */
    if (rc == 0) rc = boot_prefetch(&core.boot, "tern-");
    core_step(&step[3]);
    for (int i = 0; i < core.ntls && rc == 0; i++)
        rc = core.tls[i]->connect();
    core_step(&step[4]);
    if (rc == 0) rc = boot_fence(&core.boot);
    core_step(&step[5]);
    for (int i = 0; i < core.ntls && rc == 0; i++)
        rc = core.tls[i]->ready();
    core_step(&step[6]);
    if (rc) goto fail_transports;

    core_adapt_clock_init();
    for (int r = 0; r < core.size; r++) {
        struct core_peer *p = &core.peers[r];
        struct tl_limits lim = core_tl_limits(p->tl);
        p->max_frame = lim.max_frame;
        p->caps = lim.caps;
        size_t room = lim.max_frame - sizeof(struct core_hdr);
        p->eager_max = lim.eager_max < room ? lim.eager_max : room;
        p->stream_max = lim.stream_max < room ? lim.stream_max : room;
        if (p->stream_max < p->eager_max) p->stream_max = p->eager_max;
        p->adapt_max = (p->caps & CORE_CAP_GET) ? (lim.adapt_max < room ? lim.adapt_max : room) : 0;
        p->adapt_min = lim.adapt_min;
        p->rv_min = (p->caps & CORE_CAP_GET) ? lim.rv_min : 0;
        p->nt_max = p->tl->send_nt ? lim.nt_max : 0;
        if (p->adapt_min >= p->adapt_max) p->adapt_max = 0;
        p->adapt_top = p->adapt_max && p->stream_max > p->adapt_max ? p->stream_max : p->adapt_max;
        p->chunk = lim.max_frame - sizeof(struct core_data);
        p->big_max = (p->caps & CORE_CAP_GET) ? 0 : (lim.posted_max < room ? lim.posted_max : room);
        if (p->big_max <= p->eager_max) p->big_max = 0;
    }
    {
        /* 0, or the ranks per core rounded up (the wait policy looks at how many). */
        int ncpu = core_count_cpus();
        core.oversubscribed =
            core.boot.local_size > ncpu ? (core.boot.local_size + ncpu - 1) / ncpu : 0;
    }
    int sleepers = 0, kernel = 0;
    for (int i = 0; i < core.ntls; i++)
        if (core.tls[i]->sleep_wait != tl_stub_sleep_wait) {
            sleepers++;
            kernel += (core_tl_limits(core.tls[i]).caps & TL_CAP_KERNEL_WAIT) != 0;
        }
    core.kernel_wait = sleepers > 0 && kernel == sleepers;
    core_bind(&bind_policy);
    {
        cpu_set_t own;
        int ncpu = core_count_cpus(); /* after binding, as the node's ranks now share them */
        core.bound = !core.oversubscribed && sched_getaffinity(0, sizeof own, &own) == 0 &&
                     CPU_COUNT(&own) < ncpu;
        core.smt_shared =
            core_wait_smt_shared(core.boot.local_size, ncpu, topo_threads_per_core(NULL));
    }
    core.own_autogroup = core_wait_own_autogroup();
    UTIL_DEBUG(2,
               "waits: bound %d, own autogroup %d, oversubscribed %d, kernel waits %d, smt "
               "shared %d",
               core.bound, core.own_autogroup, core.oversubscribed, core.kernel_wait,
               core.smt_shared);
    rc = core_comm_init_builtin();
    if (rc) goto fail_transports;
    core_step(&step[7]);
    UTIL_DEBUG(2,
               "bring-up ms: boot %.1f open %.1f fence %.1f keys %.1f connect %.1f fence %.1f "
               "ready %.1f rest %.1f",
               step[0], step[1], step[2], step[3], step[4], step[5], step[6], step[7]);
    core.initialized = 1;
    trace_start(); /* TERN_TRACE: opens this rank's file, aligns clocks with rank 0 */
    UTIL_DEBUG(1, "up: rank %d of %d, %d on this node%s, after %ld PMI requests", core.rank,
               core.size, core.boot.local_size, core.oversubscribed ? " (oversubscribed)" : "",
               core.boot.nrequests);
    return 0;

fail_transports:
    for (int i = core.ntls - 1; i >= 0; i--)
        core.tls[i]->close();
    core.ntls = 0;
    core_comm_fini();
    free(core.peers);
    core.peers = NULL;
fail_boot:
    boot_release(&core.boot);
    return rc;
}

static int core_finalize(void)
{
    core_progress_thread_stop();
    /* Clocks again (every live rank is here), then the file is written; after the
     * progress thread, which records messages too, has stopped. */
    trace_stop();
    /* Frames still waiting for room are part of sends the program considers done. */
    int rc = core_wait_pending();
    int rc2 = boot_fence(&core.boot);
    if (rc == 0) rc = rc2;
    for (int i = core.ntls - 1; i >= 0; i--)
        core.tls[i]->close();
    core.ntls = 0;
    for (int i = core.nfinis - 1; i >= 0; i--)
        core.finis[i]();
    core_comm_fini();
    core_match_release_all();
    core_req_release_all();
    core_adapt_report();
    for (int r = 0; r < core.size; r++) {
        struct core_pend *pd = core.peers[r].pend_head;
        while (pd) {
            struct core_pend *next = pd->next;
            free(pd);
            pd = next;
        }
        free(core.peers[r].piov);
    }
    core_scratch_free();
    core_am_early_free();
    free(core.peers);
    core.peers = NULL;
    rc2 = boot_finalize(&core.boot);
    if (rc == 0) rc = rc2;
    boot_release(&core.boot);
    core.initialized = 0;
    core.finalized = 1;
    return rc;
}

int core_start(unsigned user, int required, int *level, int (*setup)(int fresh))
{
    if (core.initialized && (core.users & user)) return TERN_ERR_INIT;
    if (core.finalized || (core.initialized && (core.users_done & user))) return TERN_ERR_FINALIZED;
    int fresh = !core.initialized;
    if (fresh) {
        int rc = core_init();
        if (rc) return rc;
    }
    int rc = setup ? setup(fresh) : 0;
    int granted = rc ? 0 : core_thread_setup(required);
    if (rc == 0) rc = core_progress_thread_start();
    if (rc) {
        if (fresh) core_finalize();
        return rc;
    }
    core.users |= user;
    if (level) *level = granted;
    return fresh;
}

int core_stop(unsigned user)
{
    if (!core.initialized || !(core.users & user)) return TERN_ERR_NOT_INIT;
    core.users &= ~user;
    core.users_done |= user;
    /* Another layer still works on the core: it finalizes it when it leaves. */
    if (core.users) return 0;
    return core_finalize();
}

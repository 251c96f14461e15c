/*
 * bind.c - where the ranks ternrun starts on its host run: --bind-to, --map-by and
 * --report-bindings (Open MPI's and MPICH Hydra's spellings), over TERN_BIND_TO,
 * TERN_MAP_BY and TERN_REPORT_BINDINGS.
 *
 * Each rank is bound between fork and exec, from the topology of the host it runs on (a
 * proxy reads its own host's), within what ternrun itself may use (its affinity mask and
 * its cgroup's cpuset): inside a Slurm allocation or a container it binds only to the CPUs
 * it was given. Every rank started with a topology in hand gets TERN_BIND=0: the launcher
 * has decided, and the library must not bind again (it binds itself only under launchers
 * that leave ranks unbound). When the topology cannot be read, ranks are left to the
 * library as before.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tern.h"
#include "ternrun.h"
#include "util/tunables.h"

/* Apply one value to p, or exit 2 with a message naming where it came from. */
static void bind_parse_or_die(struct topo_policy *p, const char *from, const char *bind,
                              const char *map)
{
    char err[300];
    if (topo_policy_parse(p, bind, map, err, sizeof err) == 0) return;
    fprintf(stderr, "ternrun: %s: %s (see ternrun --help)\n", from, err);
    exit(RUN_EXIT_USAGE);
}

void run_bind_setup(struct run_opts *o, const char *bind, const char *map, int use_hwthreads)
{
    /* Read after the command line's -x/--env, which may set these variables. */
    util_tunables_load(NULL);
    topo_policy_default(&o->policy);
    bind_parse_or_die(&o->policy, "TERN_BIND_TO", util_tun.bind_to, NULL);
    bind_parse_or_die(&o->policy, "TERN_MAP_BY", NULL, util_tun.map_by);
    /* TERN_BIND=0 kept ranks unbound before ternrun bound them; it still does. */
    if (!util_tun.bind && getenv("TERN_BIND_TO") == NULL) o->policy.bind = TOPO_BIND_NONE;
    if (use_hwthreads && map == NULL) o->policy.map = TOPO_PU;
    bind_parse_or_die(&o->policy, "--bind-to", bind, NULL);
    bind_parse_or_die(&o->policy, "--map-by", NULL, map);
    o->report_bindings |= util_tun.report_bindings;
}

static const char *bind_policy_name(int bind)
{
    return bind == TOPO_BIND_AUTO ? "auto" : topo_level_name(bind);
}

void run_bind_format(const struct run_opts *o, char *bind, size_t blen, char *map, size_t mlen)
{
    snprintf(bind, blen, "%s", bind_policy_name(o->policy.bind));
    if (o->policy.pe > 1)
        snprintf(map, mlen, "%s:PE=%d", topo_level_name(o->policy.map), o->policy.pe);
    else
        snprintf(map, mlen, "%s", topo_level_name(o->policy.map));
}

/* Say once why an explicit core or hwthread binding was not applied on this host. */
static void bind_note_oversub(const struct run_job *job, int lsize)
{
    const struct topo_policy *p = &job->opts.policy;
    int unit = p->bind == TOPO_PU || p->map == TOPO_PU ? TOPO_PU : TOPO_CORE;
    char host[256] = "this host", line[600];
    if (job->hostname) snprintf(host, sizeof host, "%s", job->hostname);
    snprintf(line, sizeof line,
             "ternrun: %d ranks%s on %s but %d %s allowed: the ranks are left unbound "
             "(--bind-to %s needs one %s per rank); the job runs oversubscribed\n",
             lsize, p->pe > 1 ? " (of several cores each)" : "", host,
             job->topo->count_allowed[unit], unit == TOPO_PU ? "hardware threads" : "cores",
             topo_level_name(p->bind), unit == TOPO_PU ? "hardware thread" : "core");
    run_out_write(2, line, strlen(line));
}

/*
 * The default binds only ranks that wait on shared memory: a rank with no shm peer (alone
 * on its host, or shm not in TERN_TRANSPORTS) sleeps in the kernel when it waits (tcp), and
 * the scheduler must stay free to wake it on whichever core is idle - pinned, it waits for
 * its one core on a loaded machine (15 us against 4 us per message, measured). The
 * library's own binding made the same exception.
 */
static void bind_exempt(const struct run_opts *o, int lsize, struct topo_binding *b)
{
    const char *tl = getenv("TERN_TRANSPORTS");
    if (!b->bound || o->policy.bind != TOPO_BIND_AUTO) return;
    if (lsize == 1)
        b->why = "alone on its host, no shm peer to wait for";
    else if (!util_list_has(tl && *tl ? tl : "self,shm,tcp", "shm"))
        b->why = "TERN_TRANSPORTS leaves out shm, it waits on tcp in the kernel";
    if (b->why) b->bound = 0;
}

void run_bind_prepare(struct run_job *job)
{
    job->topo = malloc(sizeof *job->topo);
    job->bindings = calloc((size_t)job->nranks, sizeof *job->bindings);
    if (job->topo == NULL || job->bindings == NULL || topo_load(job->topo, NULL, NULL) != 0) {
        free(job->topo);
        free(job->bindings);
        job->topo = NULL;
        job->bindings = NULL;
        return;
    }
    int noted = 0;
    for (int i = 0; i < job->nranks; i++) {
        struct run_rank *r = &job->ranks[i];
        struct topo_binding *b = &job->bindings[i];
        if (r->host && !r->host->local) continue;
        if (topo_place(job->topo, &job->opts.policy, r->lrank, r->lsize, b) != 0) b->bound = 0;
        bind_exempt(&job->opts, r->lsize, b);
        if (job->bindings[i].oversub && !noted && job->opts.policy.explicit_bind &&
            (job->opts.policy.bind == TOPO_PU || job->opts.policy.bind == TOPO_CORE)) {
            bind_note_oversub(job, r->lsize);
            noted = 1;
        }
    }
}

void run_bind_apply(const struct run_job *job, const struct run_rank *r)
{
    if (job->bindings == NULL) return;
    setenv("TERN_BIND", "0", 1);
    const struct topo_binding *b = &job->bindings[r - job->ranks];
    if (b->bound && sched_setaffinity(0, sizeof b->mask, &b->mask) != 0)
        fprintf(stderr, "ternrun: warning: cannot bind rank %d to its %s: %s; it runs unbound\n",
                r->rank, topo_level_name(b->level), strerror(errno));
}

/* One character per PU in logical order: B bound here, . allowed, x not allowed;
 * cores in brackets (threads split by '/'), sockets split by a blank. */
static void bind_picture(const struct topo *t, const cpu_set_t *mask, char *buf, size_t len)
{
    size_t off = 0;
    for (int i = 0; i < t->npu && off + 8 < len; i++) {
        const struct topo_pu *pu = &t->pu[i], *q = i ? &t->pu[i - 1] : NULL;
        int new_core = !q || q->idx[TOPO_CORE] != pu->idx[TOPO_CORE];
        if (q && new_core) buf[off++] = ']';
        if (q && q->idx[TOPO_SOCKET] != pu->idx[TOPO_SOCKET]) buf[off++] = ' ';
        buf[off++] = new_core ? '[' : '/';
        buf[off++] = !pu->allowed ? 'x' : mask && CPU_ISSET(pu->os, mask) ? 'B' : '.';
    }
    if (t->npu) buf[off++] = ']';
    buf[off] = '\0';
}

/* "bound to core 3 (cpus 3,11) [.][B]..." or "not bound: why" for local rank lrank. */
static void bind_describe(const struct topo *t, const struct topo_policy *p,
                          const struct topo_binding *b, int lsize, char *buf, size_t len)
{
    char cpus[256], pic[2048];
    if (b->bound) {
        topo_cpulist_format(&b->mask, cpus, sizeof cpus);
        bind_picture(t, &b->mask, pic, sizeof pic);
        snprintf(buf, len, "bound to %s %d%s (cpus %s): %s", topo_level_name(b->level), b->obj,
                 p->pe > 1 ? " and the next" : "", cpus, pic);
        return;
    }
    int unit = p->bind == TOPO_PU || p->map == TOPO_PU ? TOPO_PU : TOPO_CORE;
    if (b->why)
        snprintf(buf, len, "not bound by default: %s (--bind-to core binds it)", b->why);
    else if (b->oversub)
        snprintf(buf, len, "not bound: %d ranks%s but %d %s allowed", lsize,
                 p->pe > 1 ? " of several cores each" : "", t->count_allowed[unit],
                 unit == TOPO_PU ? "hardware threads" : "cores");
    else
        snprintf(buf, len, "not bound (--bind-to none)");
}

void run_bind_report(const struct run_job *job, const struct run_rank *r)
{
    if (!job->opts.report_bindings) return;
    char what[2400], line[2600];
    if (job->bindings == NULL)
        snprintf(what, sizeof what,
                 "not bound by ternrun (no topology under %s; the rank binds itself, TERN_BIND)",
                 util_tun.topo_sysfs);
    else
        bind_describe(job->topo, &job->opts.policy, &job->bindings[r - job->ranks], r->lsize, what,
                      sizeof what);
    int n = snprintf(line, sizeof line, "ternrun: rank %d (%s) %s\n", r->rank,
                     run_rank_where(job, r), what);
    if (n > 0) run_out_write(2, line, (size_t)n < sizeof line ? (size_t)n : sizeof line - 1);
}

void run_bind_info(FILE *out, const struct run_opts *o, int nprocs)
{
    struct topo t;
    int rc = topo_load(&t, NULL, NULL);
    fprintf(out, "\nTopology (read from %s):\n", util_tun.topo_sysfs);
    if (rc) {
        fprintf(out, "  unreadable (%s): ranks are not bound by ternrun\n", tern_err_name(rc));
        return;
    }
    fprintf(out, "  sockets: %d, NUMA nodes: %d, L3 groups: %d, cores: %d, hardware threads: %d\n",
            t.count[TOPO_SOCKET], t.count[TOPO_NUMA], t.count[TOPO_L3], t.count[TOPO_CORE], t.npu);
    char cpus[1024];
    topo_cpulist_format(&t.allowed, cpus, sizeof cpus);
    fprintf(out,
            "  allowed: cpus %s (%d hardware threads on %d cores, %d L3 groups, %d NUMA nodes, "
            "%d sockets)%s%s\n",
            cpus, t.count_allowed[TOPO_PU], t.count_allowed[TOPO_CORE], t.count_allowed[TOPO_L3],
            t.count_allowed[TOPO_NUMA], t.count_allowed[TOPO_SOCKET],
            t.cpuset_limited ? "; limited by the cgroup's cpuset" : "",
            t.affinity_limited ? "; limited by this process's affinity" : "");
    if (t.ncache) {
        fprintf(out, "  caches (of the first cpu):");
        for (int i = 0; i < t.ncache; i++)
            fprintf(out, "%s L%d%s %ld KiB (shared by %d)", i ? "," : "", t.cache[i].level,
                    t.cache[i].type == 'd'   ? "d"
                    : t.cache[i].type == 'i' ? "i"
                                             : "",
                    t.cache[i].kib, t.cache[i].sharing);
        fputc('\n', out);
    }
    /* One line per NUMA node: its socket, kernel number, cores and cpus. */
    for (int n = 0; n < t.count[TOPO_NUMA]; n++) {
        cpu_set_t set;
        CPU_ZERO(&set);
        int socket = -1, kernel = -1, c0 = -1, c1 = -1, l0 = -1, l1 = -1;
        for (int i = 0; i < t.npu; i++) {
            const struct topo_pu *pu = &t.pu[i];
            if (pu->idx[TOPO_NUMA] != n) continue;
            CPU_SET(pu->os, &set);
            socket = pu->idx[TOPO_SOCKET];
            kernel = pu->numa_os;
            if (c0 < 0) c0 = pu->idx[TOPO_CORE], l0 = pu->idx[TOPO_L3];
            c1 = pu->idx[TOPO_CORE];
            l1 = pu->idx[TOPO_L3];
        }
        topo_cpulist_format(&set, cpus, sizeof cpus);
        fprintf(out,
                "  numa %d (kernel node %d) in socket %d: cores %d-%d, L3 groups %d-%d, cpus %s\n",
                n, kernel, socket, c0, c1, l0, l1, cpus);
    }
    int lsize = nprocs > 0 ? nprocs : t.count_allowed[TOPO_CORE];
    char bind[32], map[48];
    run_bind_format(o, bind, sizeof bind, map, sizeof map);
    int res = topo_policy_resolve(&t, &o->policy, lsize);
    fprintf(out, "  binding of %d rank(s) (--bind-to %s --map-by %s): %s\n", lsize, bind, map,
            res == TOPO_BIND_NONE ? "none" : topo_level_name(res));
    for (int r = 0; r < lsize && r < 16; r++) {
        struct topo_binding b;
        char what[2400];
        if (topo_place(&t, &o->policy, r, lsize, &b) != 0) break;
        bind_exempt(o, lsize, &b);
        bind_describe(&t, &o->policy, &b, lsize, what, sizeof what);
        fprintf(out, "    rank %d %s\n", r, what);
    }
    if (lsize > 16) fprintf(out, "    ... (%d more)\n", lsize - 16);
    topo_free(&t);
}

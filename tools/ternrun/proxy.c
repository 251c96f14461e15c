/*
 * proxy.c - `ternrun --proxy`: this host's part of a job started by a ternrun on
 * another host (see remote.c), reached through the launch agent. Its stdin and
 * stdout are the control channel to the root (ctl.h); its stderr is the agent's,
 * for the rare message that cannot go through the channel.
 *
 * The proxy waits for the job (SETUP, ENV, ARGV, KVS, START), forks its ranks with
 * the code that forks them on the root (launch.c) and serves them PMI-1 with the
 * same server (pmi_server.c), forwarding what the root must know. It ends its ranks
 * when the root says so (SIGNAL), and at once with SIGKILL when the channel closes,
 * which is also what happens when the root dies: nothing outlives the job.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ternrun.h"
#include "util/tunables.h"

/* Program arguments received in ARGV, and the path they resolve to. */
static char **proxy_argv;
static char proxy_path[4096];
static char proxy_host[RUN_HOST_NAME_MAX + 1] = "?";
static char proxy_cwd[4096];
static int proxy_first, proxy_count;

static void proxy_watch_out(struct run_job *job)
{
    int want = job->up.len > job->up.off && !job->up.broken;
    if (want == job->up_watched) return;
    struct epoll_event ev = {.events = EPOLLOUT, .data.u64 = RUN_EV(RUN_EV_UP_OUT, 0)};
    if (epoll_ctl(job->epfd, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, job->up.fd, &ev) == 0)
        job->up_watched = want;
}

static void proxy_after_send(void *arg)
{
    proxy_watch_out(arg);
}

void run_proxy_send(struct run_job *job, int type, int arg, int arg2, const void *p, size_t len)
{
    run_ctl_send(&job->up, type, arg, arg2, p, len);
    proxy_watch_out(job);
}

void run_proxy_writable(struct run_job *job)
{
    run_ctl_flush(&job->up);
    proxy_watch_out(job);
}

/* The root is gone or done with us: nothing may outlive it. */
static void proxy_orphaned(struct run_job *job)
{
    if (job->up_fd >= 0) {
        epoll_ctl(job->epfd, EPOLL_CTL_DEL, job->up_fd, NULL);
        close(job->up_fd);
        job->up_fd = -1;
    }
    if (job->exit_code < 0) job->exit_code = RUN_EXIT_FAIL;
    run_job_kill_now(job);
}

static int proxy_setup(struct run_job *job, const char *p, size_t len)
{
    size_t pos = 0;
    const char *kv;
    int tag = 0;
    char err[300];
    util_tunables_load(NULL); /* this host's TERN_TOPO_SYSFS */
    topo_policy_default(&job->opts.policy);
    while ((kv = run_ctl_str(p, len, &pos)) != NULL) {
        const char *eq = strchr(kv, '=');
        if (eq == NULL) return -1;
        size_t klen = (size_t)(eq - kv);
        const char *v = eq + 1;
#define KEY(name) (klen == sizeof name - 1 && memcmp(kv, name, klen) == 0)
        if (KEY("size"))
            job->size = atoi(v);
        else if (KEY("first"))
            proxy_first = atoi(v);
        else if (KEY("count"))
            proxy_count = atoi(v);
        else if (KEY("tag"))
            tag = atoi(v);
        else if (KEY("kvsname"))
            snprintf(job->kvsname, sizeof job->kvsname, "%s", v);
        else if (KEY("host"))
            snprintf(proxy_host, sizeof proxy_host, "%s", v);
        else if (KEY("cwd"))
            snprintf(proxy_cwd, sizeof proxy_cwd, "%s", v);
        else if (KEY("bind") || KEY("map")) {
            if (topo_policy_parse(&job->opts.policy, KEY("bind") ? v : NULL, KEY("map") ? v : NULL,
                                  err, sizeof err) != 0)
                return -1;
        } else if (KEY("report"))
            job->opts.report_bindings = atoi(v) != 0;
#undef KEY
    }
    job->opts.tag_output = tag != 0;
    job->hostname = proxy_host;
    if (job->size < 1 || proxy_count < 1 || proxy_first < 0 ||
        proxy_first > job->size - proxy_count)
        return -1;
    return 0;
}

static int proxy_set_argv(const char *p, size_t len)
{
    size_t n = 0, pos = 0;
    while (run_ctl_str(p, len, &pos))
        n++;
    if (n == 0 || proxy_argv) return -1;
    proxy_argv = calloc(n + 1, sizeof *proxy_argv);
    if (proxy_argv == NULL) return -1;
    pos = 0;
    for (size_t i = 0; i < n; i++)
        if ((proxy_argv[i] = strdup(run_ctl_str(p, len, &pos))) == NULL) return -1;
    return 0;
}

/* START: fork the ranks and tell the root their pids. */
static void proxy_start(struct run_job *job)
{
    job->started = 1;
    if (proxy_argv == NULL || proxy_count < 1) {
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: the proxy on %s got no program to run",
                     proxy_host);
        proxy_orphaned(job);
        return;
    }
    /* The root's directory, if this host has it: "./prog" then means the same. */
    if (proxy_cwd[0] && chdir(proxy_cwd) != 0) {
        /* Stay where the agent put us (the home directory under ssh). */
    }
    job->opts.argv = proxy_argv;
    int err = run_launch_resolve(proxy_argv[0], proxy_path, sizeof proxy_path);
    if (err) {
        run_job_fail(job, err == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC,
                     "ternrun: cannot %s '%s' on host %s: %s", err == ENOENT ? "find" : "execute",
                     proxy_argv[0], proxy_host, strerror(err));
        return; /* the root ends the job and closes the channel */
    }
    job->path = proxy_path;
    job->ranks = calloc((size_t)proxy_count, sizeof *job->ranks);
    if (job->ranks == NULL) {
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: the proxy on %s is out of memory", proxy_host);
        return;
    }
    job->nranks = proxy_count;
    for (int i = 0; i < proxy_count; i++) {
        struct run_rank *r = &job->ranks[i];
        r->rank = proxy_first + i;
        r->lrank = i;
        r->lsize = proxy_count;
        r->pmi_fd = -1;
        r->out[0].fd = r->out[1].fd = -1;
    }
    run_launch_start(job);
    for (int i = 0; i < job->nranks; i++)
        if (job->ranks[i].pid > 0)
            run_proxy_send(job, RUN_CTL_STARTED, job->ranks[i].rank, (int)job->ranks[i].pid, NULL,
                           0);
}

static int proxy_frame(struct run_job *job, const struct run_ctl_hdr *f, const char *p)
{
    switch (f->type) {
    case RUN_CTL_SETUP:
        return job->started ? -1 : proxy_setup(job, p, f->len);
    case RUN_CTL_ENV: {
        size_t pos = 0;
        const char *kv;
        while ((kv = run_ctl_str(p, f->len, &pos)) != NULL) {
            const char *eq = strchr(kv, '=');
            if (eq == NULL || eq == kv) return -1;
            char *name = strndup(kv, (size_t)(eq - kv));
            if (name == NULL) return -1;
            setenv(name, eq + 1, 1);
            free(name);
        }
        return 0;
    }
    case RUN_CTL_ARGV:
        return proxy_set_argv(p, f->len);
    case RUN_CTL_KVS:
        if (job->kvs == NULL && run_pmi_init(job) != 0) return -1;
        return run_pmi_kvs_merge(job, p, f->len, 0);
    case RUN_CTL_START:
        if (job->started || job->kvs == NULL) return -1;
        proxy_start(job);
        return 0;
    case RUN_CTL_BARRIER_OUT:
        if (!job->up_barrier) return -1;
        if (run_pmi_kvs_merge(job, p, f->len, 0) != 0) return -1;
        run_pmi_barrier_release_local(job);
        return 0;
    case RUN_CTL_PEER_FAILED:
        if (f->arg < 0 || f->arg >= job->size) return -1;
        run_pmi_mark_failed(job, f->arg); /* when it is ours: our barriers stop waiting */
        (void)run_pmi_peer_failed(job, f->arg);
        run_pmi_barrier_add(job, 0);
        return 0;
    case RUN_CTL_REPORT_REQ:
        if (!job->started) return -1;
        run_report_start(job, 0);
        return 0;
    case RUN_CTL_SIGNAL:
        if (f->arg == SIGKILL) {
            run_job_kill_now(job);
        } else if (f->arg == SIGTERM) {
            job->terminating = 1; /* what ranks leave behind is ended with them */
            run_launch_signal_all(job, SIGTERM);
            run_launch_kill_strays(SIGTERM);
        } else if (f->arg > 0 && f->arg < NSIG) {
            run_launch_signal_all(job, f->arg);
        }
        return 0;
    default:
        return -1;
    }
}

void run_proxy_readable(struct run_job *job)
{
    for (int round = 0; round < 64 && job->up_fd >= 0; round++) {
        long n = run_ctl_fill(&job->up_rd, job->up_fd);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        struct run_ctl_hdr f;
        char *p;
        int got = 0;
        while (job->up_fd >= 0 && (got = run_ctl_next(&job->up_rd, &f, &p)) == 1) {
            if (proxy_frame(job, &f, p) != 0) {
                fprintf(stderr,
                        "ternrun: the proxy on %s got a malformed control frame "
                        "(type %u); ending its ranks\n",
                        proxy_host, (unsigned)f.type);
                got = -1;
                break;
            }
        }
        if (job->up_fd >= 0 && (got < 0 || n <= 0)) {
            proxy_orphaned(job);
            return;
        }
    }
}

int run_proxy_main(struct run_job *job)
{
    /* The channel moves off 0 and 1, which become /dev/null: a stray write to stdout
     * must not corrupt the frames, and the ranks must not inherit the channel. */
    int in = fcntl(0, F_DUPFD_CLOEXEC, 3);
    int out = fcntl(1, F_DUPFD_CLOEXEC, 3);
    int null = open("/dev/null", O_RDWR);
    if (in < 0 || out < 0 || null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0) {
        fprintf(stderr, "ternrun --proxy: cannot set up its channel: %s\n", strerror(errno));
        return RUN_EXIT_FAIL;
    }
    if (null > 2) close(null);
    for (int fd = 0; fd < 2; fd++) {
        int fl = fcntl(fd == 0 ? in : out, F_GETFL);
        if (fl >= 0) fcntl(fd == 0 ? in : out, F_SETFL, fl | O_NONBLOCK);
    }
    job->proxy = 1;
    job->up_fd = in;
    job->up.fd = out;
    job->stdin_rank = -1; /* only the root's host can hand its stdin to rank 0 */
    job->hostname = proxy_host;
    run_out_set_sink(&job->up, proxy_after_send, job);
    int code = run_job_run(job);
    run_out_set_sink(NULL, NULL, NULL);
    run_ctl_reader_free(&job->up_rd);
    run_ctl_queue_free(&job->up);
    close(out);
    if (job->up_fd >= 0) close(job->up_fd);
    for (size_t i = 0; proxy_argv && proxy_argv[i]; i++)
        free(proxy_argv[i]);
    free(proxy_argv);
    return code;
}

/*
 * remote.c - the root's side of a job across hosts: one proxy per remote host,
 * started through the launch agent (`ssh -o BatchMode=yes {host}` unless
 * --launch-agent says otherwise) as `<this ternrun> --proxy`, with a socketpair as
 * the agent's stdin and stdout: the control channel (ctl.h).
 *
 * Everything the proxy needs travels on that channel, not on its command line: the
 * program and its arguments, the environment exported with -x/--env, and the first
 * key-value entries, among them the job secret. So nothing of the job shows in ps
 * on either host, and the agent's command needs no quoting (ssh hands its words to
 * a shell on the far side, ip netns exec does not).
 *
 * A proxy reports what happens on its host: each rank's start (pid), output,
 * finalize and exit, and its first failure as the line to print. A proxy that goes
 * away while its ranks are running - the agent failed, the host was lost - ends the
 * job with one line naming the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ternrun.h"

#define REMOTE_DEFAULT_AGENT "ssh -o BatchMode=yes {host}"

int run_remote_is_local(const char *name)
{
    if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0) return 1;
    char me[HOST_NAME_MAX + 1];
    if (gethostname(me, sizeof me) != 0) return 0;
    me[HOST_NAME_MAX] = '\0';
    if (strcmp(name, me) == 0) return 1;
    /* "node1" names "node1.example.org" and the other way round. */
    size_t a = strcspn(name, "."), b = strcspn(me, ".");
    return a == b && strncmp(name, me, a) == 0 && (name[a] == '\0' || me[b] == '\0');
}

/*
 * The agent's argv: the template's words with {host} replaced (or the host
 * appended if the template has no {host}), then this ternrun and --proxy.
 * Returns a NULL-terminated malloc'ed array of malloc'ed strings, or NULL.
 */
static char **remote_agent_argv(const char *tmpl, const char *host, const char *self)
{
    size_t cap = 8, n = 0;
    char **av = calloc(cap, sizeof *av);
    int had_host = 0;
    const char *p = tmpl;
    while (av) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == '\0') break;
        size_t wlen = strcspn(p, " \t");
        /* Substitute every {host} in the word. */
        size_t hl = strlen(host), out = 0;
        char *w = malloc(wlen * (hl + 1) + 1);
        if (w == NULL) goto oom;
        for (size_t i = 0; i < wlen;) {
            if (wlen - i >= 6 && memcmp(p + i, "{host}", 6) == 0) {
                memcpy(w + out, host, hl);
                out += hl;
                i += 6;
                had_host = 1;
            } else {
                w[out++] = p[i++];
            }
        }
        w[out] = '\0';
        p += wlen;
        if (n + 4 >= cap) {
            char **nav = realloc(av, (cap *= 2) * sizeof *av);
            if (nav == NULL) {
                free(w);
                goto oom;
            }
            av = nav;
        }
        av[n++] = w;
    }
    if (av == NULL) return NULL;
    if (n + 4 >= cap) {
        char **nav = realloc(av, (cap + 4) * sizeof *av);
        if (nav == NULL) goto oom;
        av = nav;
    }
    if (!had_host && (av[n++] = strdup(host)) == NULL) goto oom;
    if ((av[n++] = strdup(self)) == NULL) goto oom;
    if ((av[n++] = strdup("--proxy")) == NULL) goto oom;
    av[n] = NULL;
    return av;
oom:
    for (size_t i = 0; av && i < n; i++)
        free(av[i]);
    free(av);
    return NULL;
}

static void remote_free_argv(char **av)
{
    for (size_t i = 0; av && av[i]; i++)
        free(av[i]);
    free(av);
}

static void remote_watch_out(struct run_job *job, struct run_host *h)
{
    int want = h->q.len > h->q.off && !h->q.broken;
    if (want == h->q_watched || h->q.fd < 0) return;
    struct epoll_event ev = {.events = EPOLLOUT,
                             .data.u64 = RUN_EV(RUN_EV_CTL_OUT, (unsigned)(h - job->hosts))};
    if (epoll_ctl(job->epfd, want ? EPOLL_CTL_ADD : EPOLL_CTL_DEL, h->q.fd, &ev) == 0)
        h->q_watched = want;
}

static void remote_send(struct run_job *job, struct run_host *h, int type, int arg, int arg2,
                        const void *p, size_t len)
{
    if (h->ctl_fd < 0) return;
    run_ctl_send(&h->q, type, arg, arg2, p, len); /* a broken channel shows as EOF */
    remote_watch_out(job, h);
}

static void remote_close_ctl(struct run_job *job, struct run_host *h)
{
    if (h->ctl_fd < 0) return;
    if (h->q_watched) epoll_ctl(job->epfd, EPOLL_CTL_DEL, h->q.fd, NULL);
    h->q_watched = 0;
    close(h->ctl_fd);
    if (h->q.fd >= 0) close(h->q.fd);
    h->ctl_fd = h->q.fd = -1;
    run_ctl_reader_free(&h->rd);
    run_ctl_queue_free(&h->q);
}

/* The host's ranks can no longer be reached or reported: the job fails. */
static void remote_lost(struct run_job *job, struct run_host *h, const char *why)
{
    remote_close_ctl(job, h);
    if (h->nlive == 0) return;
    run_job_fail(job, RUN_EXIT_FAIL,
                 "ternrun: lost the proxy on host %s (%s) with %d rank(s) running", h->name, why,
                 h->nlive);
    for (int r = h->first; r < h->first + h->count; r++) {
        if (!job->ranks[r].alive) continue;
        job->ranks[r].alive = 0;
        job->nalive--;
    }
    h->nlive = 0;
    run_pmi_rank_gone(job);
}

/* Queue the job for the proxy of h: setup, environment, argv, first entries, start. */
static int remote_send_job(struct run_job *job, struct run_host *h, const char *kvs, size_t kvslen)
{
    char setup[2048], cwd[PATH_MAX], bind[32], map[48];
    if (getcwd(cwd, sizeof cwd) == NULL) strcpy(cwd, "/");
    run_bind_format(&job->opts, bind, sizeof bind, map, sizeof map);
    int n = snprintf(setup, sizeof setup,
                     "size=%d%cfirst=%d%ccount=%d%ctag=%d%ckvsname=%s%chost=%s%ccwd=%s%c"
                     "bind=%s%cmap=%s%creport=%d%c",
                     job->size, 0, h->first, 0, h->count, 0, job->opts.tag_output, 0, job->kvsname,
                     0, h->name, 0, cwd, 0, bind, 0, map, 0, job->opts.report_bindings, 0);
    if (n < 0 || (size_t)n >= sizeof setup) return -1;
    remote_send(job, h, RUN_CTL_SETUP, 0, 0, setup, (size_t)n);
    for (int i = 0; i < job->opts.nenv_pairs; i++)
        remote_send(job, h, RUN_CTL_ENV, 0, 0, job->opts.env_pairs[i],
                    strlen(job->opts.env_pairs[i]) + 1);
    size_t alen = 0;
    for (char **a = job->opts.argv; *a; a++)
        alen += strlen(*a) + 1;
    char *args = malloc(alen);
    if (args == NULL) return -1;
    size_t off = 0;
    for (char **a = job->opts.argv; *a; a++) {
        size_t l = strlen(*a) + 1;
        memcpy(args + off, *a, l);
        off += l;
    }
    remote_send(job, h, RUN_CTL_ARGV, 0, 0, args, alen);
    free(args);
    remote_send(job, h, RUN_CTL_KVS, 0, 0, kvs, kvslen);
    remote_send(job, h, RUN_CTL_START, 0, 0, NULL, 0);
    return 0;
}

/* In the child: the agent, with the channel as stdin and stdout. Never returns. */
static void remote_agent_child(struct run_job *job, int sock, char **av, pid_t parent)
{
    /* Its own process group: a Ctrl-C at the terminal reaches ternrun, which ends
     * the job in order, rather than killing every ssh mid-flight. */
    setpgid(0, 0);
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(RUN_EXIT_FAIL);
    sigaction(SIGPIPE, &job->orig_sigpipe, NULL);
    sigprocmask(SIG_SETMASK, &job->orig_sigmask, NULL);
    setrlimit(RLIMIT_NOFILE, &job->orig_nofile);
    if (dup2(sock, 0) < 0 || dup2(sock, 1) < 0) _exit(RUN_EXIT_FAIL);
    execvp(av[0], av);
    fprintf(stderr, "ternrun: cannot run the launch agent '%s': %s\n", av[0], strerror(errno));
    _exit(errno == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC);
}

static int remote_start_one(struct run_job *job, struct run_host *h, const char *self,
                            const char *kvs, size_t kvslen)
{
    const char *tmpl = job->opts.launch_agent ? job->opts.launch_agent : REMOTE_DEFAULT_AGENT;
    char **av = remote_agent_argv(tmpl, h->name, self);
    int sv[2];
    if (av == NULL || av[0] == NULL) {
        remote_free_argv(av);
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: cannot build the launch agent command");
        return -1;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        remote_free_argv(av);
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: socketpair failed: %s", strerror(errno));
        return -1;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid == 0) remote_agent_child(job, sv[1], av, parent);
    int err = errno;
    remote_free_argv(av);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: cannot start the proxy for host %s: fork: %s",
                     h->name, strerror(err));
        return -1;
    }
    h->agent_pid = pid;
    job->nagents++;
    h->ctl_fd = sv[0];
    h->q.fd = fcntl(sv[0], F_DUPFD_CLOEXEC, 3);
    for (int r = h->first; r < h->first + h->count; r++)
        job->ranks[r].alive = 1;
    job->nalive += h->count;
    h->nlive = h->count;

    int fl = fcntl(sv[0], F_GETFL);
    struct epoll_event ev = {.events = EPOLLIN,
                             .data.u64 = RUN_EV(RUN_EV_CTL, (unsigned)(h - job->hosts))};
    if (h->q.fd < 0 || fl < 0 || fcntl(sv[0], F_SETFL, fl | O_NONBLOCK) != 0 ||
        epoll_ctl(job->epfd, EPOLL_CTL_ADD, sv[0], &ev) != 0 ||
        remote_send_job(job, h, kvs, kvslen) != 0) {
        remote_lost(job, h, strerror(errno));
        return -1;
    }
    return 0;
}

void run_remote_start(struct run_job *job)
{
    int remote = 0;
    for (int i = 0; i < job->nhosts; i++)
        remote += !job->hosts[i].local;
    if (remote == 0) return;
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) {
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: cannot find its own path: %s", strerror(errno));
        return;
    }
    self[n] = '\0';
    char *kvs;
    size_t kvslen;
    if (run_pmi_kvs_dump(job, 0, &kvs, &kvslen) != 0) {
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: out of memory");
        return;
    }
    for (int i = 0; i < job->nhosts && !job->terminating; i++)
        if (!job->hosts[i].local && remote_start_one(job, &job->hosts[i], self, kvs, kvslen) != 0)
            break;
    free(kvs);
}

/* The rank index of a frame about host h's rank `rank`, or -1 if it is not one. */
static int remote_rank(const struct run_host *h, int rank)
{
    return rank >= h->first && rank < h->first + h->count ? rank : -1;
}

/* One frame from h's proxy. Returns 0, or -1 if it breaks the protocol. */
static int remote_frame(struct run_job *job, struct run_host *h, const struct run_ctl_hdr *f,
                        char *p)
{
    int r = remote_rank(h, f->arg);
    switch (f->type) {
    case RUN_CTL_STARTED:
        if (r < 0) return -1;
        job->ranks[r].pid = f->arg2;
        return 0;
    case RUN_CTL_OUT:
        if (f->arg != 1 && f->arg != 2) return -1;
        run_out_write(f->arg, p, f->len);
        return 0;
    case RUN_CTL_BARRIER_IN:
        if (h->in_barrier) return -1;
        if (run_pmi_kvs_merge(job, p, f->len, 1) != 0) return -1;
        h->in_barrier = 1;
        for (int i = h->first; i < h->first + h->count; i++)
            job->ranks[i].in_barrier = 1;
        /* Its failed ranks are counted already (job->nfailed). */
        run_pmi_barrier_add(job, h->count - h->nfailed);
        return 0;
    case RUN_CTL_FINALIZED:
        if (r < 0) return -1;
        job->ranks[r].finalized = 1;
        run_pmi_rank_gone(job);
        return 0;
    case RUN_CTL_EXIT:
        if (r < 0) return -1;
        if (job->ranks[r].alive) {
            job->ranks[r].alive = 0;
            job->nalive--;
            h->nlive--;
            run_pmi_rank_gone(job);
        }
        return 0;
    case RUN_CTL_TOLERANT:
        if (r < 0) return -1;
        job->ranks[r].tolerant = 1;
        return 0;
    case RUN_CTL_DIED: {
        if (r < 0) return -1;
        for (char *c = p; *c; c++)
            if ((unsigned char)*c < ' ') *c = ' ';
        int code = f->arg2 >= 0 && f->arg2 <= 255 ? f->arg2 : RUN_EXIT_FAIL;
        /* Its proxy has told the host's tolerant ranks; the root decides for the job. */
        int tolerated = !job->terminating && run_pmi_peer_failed(job, r);
        if (p[0] == '\0') return 0; /* left without finalize, exit code 0: no line */
        if (tolerated)
            run_job_note_failure(job, code, "%.900s", p);
        else
            run_job_fail(job, code, "%.900s", p);
        return 0;
    }
    case RUN_CTL_REPORT:
        if (f->arg != -1 && r < 0) return -1;
        run_report_remote(job, f->arg == -1 ? -1 : r, p);
        return 0;
    case RUN_CTL_FAIL: {
        int code = f->arg >= 1 && f->arg <= 255 ? f->arg : RUN_EXIT_FAIL;
        /* One line, as the proxy wrote it; control characters are not passed on. */
        for (char *c = p; *c; c++)
            if ((unsigned char)*c < ' ') *c = ' ';
        run_job_fail(job, code, "%.900s", p);
        return 0;
    }
    default:
        return -1;
    }
}

void run_remote_readable(struct run_job *job, struct run_host *h)
{
    for (int round = 0; round < 64 && h->ctl_fd >= 0; round++) {
        long n = run_ctl_fill(&h->rd, h->ctl_fd);
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        struct run_ctl_hdr f;
        char *p;
        int got = 0;
        while (h->ctl_fd >= 0 && (got = run_ctl_next(&h->rd, &f, &p)) == 1)
            if (remote_frame(job, h, &f, p) != 0) got = -1;
        if (h->ctl_fd >= 0 && got < 0) {
            remote_lost(job, h, "it sent a malformed control frame");
            return;
        }
        if (n <= 0 && h->ctl_fd >= 0) {
            /* While the agent runs, its exit status will say more than the EOF. */
            if (h->agent_pid != 0 && h->nlive > 0)
                remote_close_ctl(job, h);
            else
                remote_lost(job, h, n == 0 ? "its channel closed" : strerror(errno));
            return;
        }
    }
}

void run_remote_writable(struct run_job *job, struct run_host *h)
{
    run_ctl_flush(&h->q);
    remote_watch_out(job, h);
}

void run_remote_signal(struct run_job *job, int sig)
{
    for (int i = 0; i < job->nhosts; i++)
        if (!job->hosts[i].local && job->hosts[i].nlive > 0)
            remote_send(job, &job->hosts[i], RUN_CTL_SIGNAL, sig, 0, NULL, 0);
}

void run_remote_peer_failed(struct run_job *job, int rank)
{
    for (int i = 0; i < job->nhosts; i++)
        if (!job->hosts[i].local && job->hosts[i].nlive > 0)
            remote_send(job, &job->hosts[i], RUN_CTL_PEER_FAILED, rank, 0, NULL, 0);
}

int run_remote_report_req(struct run_job *job)
{
    int n = 0;
    for (int i = 0; i < job->nhosts; i++) {
        struct run_host *h = &job->hosts[i];
        if (h->local || h->nlive == 0 || h->ctl_fd < 0) continue;
        remote_send(job, h, RUN_CTL_REPORT_REQ, 0, 0, NULL, 0);
        n++;
    }
    return n;
}

void run_remote_barrier_out(struct run_job *job, const char *buf, size_t len)
{
    for (int i = 0; i < job->nhosts; i++)
        if (!job->hosts[i].local)
            remote_send(job, &job->hosts[i], RUN_CTL_BARRIER_OUT, 0, 0, buf, len);
}

int run_remote_reaped(struct run_job *job, pid_t pid, int status)
{
    for (int i = 0; i < job->nhosts; i++) {
        struct run_host *h = &job->hosts[i];
        if (h->local || h->agent_pid != pid) continue;
        /* What the proxy wrote before it ended is still in the socket. While it is read,
         * agent_pid is -1 (reaped, reason pending), so that an EOF there leaves the report
         * to the agent's status below instead of a bare "channel closed". */
        h->agent_pid = -1;
        job->nagents--;
        if (h->ctl_fd >= 0) run_remote_readable(job, h);
        h->agent_pid = 0;
        char why[128];
        if (WIFEXITED(status))
            snprintf(why, sizeof why, "its launch agent, pid %d, exited with code %d", (int)pid,
                     WEXITSTATUS(status));
        else
            snprintf(why, sizeof why, "its launch agent, pid %d, was killed by %s", (int)pid,
                     run_signal_name(WTERMSIG(status)));
        remote_lost(job, h, why);
        return 1;
    }
    return 0;
}

void run_remote_kill_agents(struct run_job *job)
{
    for (int i = 0; i < job->nhosts; i++)
        if (job->hosts[i].agent_pid > 0) kill(job->hosts[i].agent_pid, SIGKILL);
}

void run_remote_close(struct run_job *job)
{
    for (int i = 0; i < job->nhosts; i++)
        remote_close_ctl(job, &job->hosts[i]);
}

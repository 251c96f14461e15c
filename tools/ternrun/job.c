/*
 * job.c - the event loop of a job and the policy for ending it.
 *
 * One epoll set, no sleeps: the loop wakes for a signal (signalfd), a PMI command,
 * output to forward, or the next deadline (--timeout, or the SIGKILL that follows
 * SIGTERM after --kill-grace). The first failure - a rank exiting non-zero or dying
 * of a signal, an abort, a PMI deadlock, the timeout, or a signal to ternrun - is
 * reported in one line and decides the exit code; the job is then ended with SIGTERM
 * and, after the grace, SIGKILL. Later failures are consequences and stay silent.
 *
 * The same loop runs in a proxy (ternrun --proxy) on another host, whose one extra
 * event source is the root's channel. A proxy does not judge the job: its first
 * failure line goes to the root as a FAIL frame, and the root decides and tells
 * every proxy to end its ranks.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "ternrun.h"

/* How long to wait for ranks after SIGKILL before giving up on them (a process in
 * uninterruptible sleep cannot be reaped; ternrun must still not hang). */
#define JOB_ABANDON_SECONDS 5.0

double run_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *run_rank_where(const struct run_job *job, const struct run_rank *r)
{
    static char buf[RUN_HOST_NAME_MAX + 64];
    static char me[RUN_HOST_NAME_MAX + 1];
    const char *host = r->host ? r->host->name : job->hostname;
    if (host == NULL) {
        /* One host: still name it, so the line alone says where to look. */
        if (me[0] == '\0' && gethostname(me, sizeof me - 1) != 0) strcpy(me, "localhost");
        host = me;
    }
    snprintf(buf, sizeof buf, "pid %d on %s", (int)r->pid, host);
    return buf;
}

void run_job_kill_now(struct run_job *job)
{
    job->terminating = 1;
    run_launch_signal_all(job, SIGKILL);
    run_launch_kill_strays(SIGKILL);
    job->kill_at = 0;
}

/* Ask every rank to stop; SIGKILL follows after the grace period. */
void run_job_terminate(struct run_job *job)
{
    if (job->terminating) return;
    job->terminating = 1;
    if (job->opts.kill_grace <= 0) {
        run_job_kill_now(job);
        return;
    }
    run_launch_signal_all(job, SIGTERM);
    run_launch_kill_strays(SIGTERM);
    /* A stopped rank (Ctrl-Z) sees SIGTERM only once continued. */
    run_launch_signal_all(job, SIGCONT);
    job->kill_at = run_now() + job->opts.kill_grace;
}

/* Record a failure and print its line. The first failure decides the exit code. A
 * tolerated failure (a rank died and every survivor handles it) does not end the job, so
 * it must not silence what ends it later - a signal, the timeout, an abort - or the job
 * could never be stopped. Returns 1 if the caller is to end the job here (0 for a later
 * consequence, or a proxy's failure, which went to the root). */
static int job_record_failure(struct run_job *job, int code, int ends_job, const char *fmt,
                              va_list ap)
{
    if (job->ending) return 0;                      /* already ending: a consequence, silent */
    if (!ends_job && job->exit_code >= 0) return 0; /* a later tolerated failure */
    if (job->exit_code < 0) job->exit_code = code;
    if (ends_job) job->ending = 1;
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    if (job->proxy && !job->up.broken) {
        /* The root reports it (if it is the job's first) and ends the job everywhere. */
        run_proxy_send(job, RUN_CTL_FAIL, code, 0, line, strlen(line));
        return 0;
    }
    fprintf(stderr, "%s\n", line);
    return 1;
}

void run_job_fail(struct run_job *job, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int first = job_record_failure(job, code, 1, fmt, ap);
    va_end(ap);
    if (first) run_job_terminate(job);
}

void run_job_note_failure(struct run_job *job, int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    (void)job_record_failure(job, code, 0, fmt, ap);
    va_end(ap);
}

static void job_on_signal(struct run_job *job, int sig)
{
    switch (sig) {
    case SIGCHLD:
        run_launch_reap(job);
        break;
    case SIGUSR1:
        /* The hang report, and the job goes on (a proxy never gets this from the root:
         * the report is asked with REPORT_REQ). */
        if (!job->proxy) {
            run_report_start(job, 0);
            break;
        }
        run_launch_signal_all(job, sig);
        break;
    case SIGUSR2:
        run_launch_signal_all(job, sig);
        break;
    case SIGTSTP:
        /* Stop every rank (SIGTSTP would be discarded: a rank's process group has no
         * parent in its session), then ternrun itself, so that the shell sees the job
         * stopped; its SIGCONT comes back here. */
        run_launch_signal_all(job, SIGSTOP);
        raise(SIGSTOP);
        break;
    case SIGCONT:
        run_launch_signal_all(job, SIGCONT);
        break;
    default:
        /* INT, TERM, HUP: end the job; asked again while ending it, stop waiting. */
        if (job->terminating) {
            run_job_kill_now(job);
            if (job->exit_code < 0) job->exit_code = RUN_EXIT_SIGNAL + sig;
        } else if (job->proxy) {
            /* Someone ends this host's part of the job: say so, and end it here now. */
            run_job_fail(job, RUN_EXIT_SIGNAL + sig,
                         "ternrun: the proxy on %s received %s; ending the job", job->hostname,
                         run_signal_name(sig));
            run_job_terminate(job);
        } else {
            run_job_fail(job, RUN_EXIT_SIGNAL + sig, "ternrun: received %s; ending the job",
                         run_signal_name(sig));
        }
        break;
    }
}

static void job_read_signals(struct run_job *job)
{
    struct signalfd_siginfo si[16];
    for (;;) {
        ssize_t n = read(job->sigfd, si, sizeof si);
        if (n < (ssize_t)sizeof si[0]) return;
        for (size_t i = 0; i < (size_t)n / sizeof si[0]; i++)
            job_on_signal(job, (int)si[i].ssi_signo);
    }
}

static void job_dispatch(struct run_job *job, unsigned long long what)
{
    int kind = (int)(what >> 32);
    unsigned idx = (unsigned)what;
    if (kind == RUN_EV_SIGNAL) {
        job_read_signals(job);
        return;
    }
    if (kind == RUN_EV_CTL || kind == RUN_EV_CTL_OUT) {
        if (idx >= (unsigned)job->nhosts) return;
        if (kind == RUN_EV_CTL)
            run_remote_readable(job, &job->hosts[idx]);
        else
            run_remote_writable(job, &job->hosts[idx]);
        return;
    }
    if (kind == RUN_EV_UP) {
        run_proxy_readable(job);
        return;
    }
    if (kind == RUN_EV_UP_OUT) {
        run_proxy_writable(job);
        return;
    }
    if (idx >= (unsigned)job->nranks) return;
    struct run_rank *r = &job->ranks[idx];
    if (kind == RUN_EV_PMI && r->pmi_fd >= 0)
        run_pmi_readable(job, r);
    else if (kind == RUN_EV_STDOUT)
        run_out_readable(&r->out[0], r->rank);
    else if (kind == RUN_EV_STDERR)
        run_out_readable(&r->out[1], r->rank);
}

/* Milliseconds until the nearest deadline, rounded up; -1 if there is none. */
static int job_wait_ms(const struct run_job *job, double abandon_at)
{
    double next = 0;
    const double t[4] = {job->timeout_at, job->kill_at, abandon_at, job->report_at};
    for (int i = 0; i < 4; i++)
        if (t[i] > 0 && (next == 0 || t[i] < next)) next = t[i];
    if (next == 0) return -1;
    double ms = (next - run_now()) * 1e3;
    if (ms <= 0) return 0;
    if (ms > 1e9) return 1000000000;
    int whole = (int)ms;
    return whole < ms ? whole + 1 : whole; /* round up: never wake before the deadline */
}

static void job_cleanup(struct run_job *job)
{
    for (int i = 0; i < job->nranks; i++) {
        struct run_rank *r = &job->ranks[i];
        run_pmi_close(job, r);
        for (int k = 0; k < 2; k++)
            if (r->out[k].fd >= 0) run_out_close(&r->out[k], r->rank);
    }
    if (job->execerr_fd >= 0) close(job->execerr_fd);
    if (job->epfd >= 0) close(job->epfd);
    job->execerr_fd = job->epfd = -1;
    run_remote_close(job);
    run_pmi_fini(job);
}

/* Is there anything left to wait for? */
static int job_active(const struct run_job *job)
{
    if (job->proxy) return job->nalive > 0 || (!job->started && job->up_fd >= 0);
    return job->nalive > 0 || job->nagents > 0;
}

int run_job_run(struct run_job *job)
{
    job->epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event sev = {.events = EPOLLIN, .data.u64 = RUN_EV(RUN_EV_SIGNAL, 0)};
    if (job->epfd < 0 || epoll_ctl(job->epfd, EPOLL_CTL_ADD, job->sigfd, &sev) != 0 ||
        run_pmi_init(job) != 0) {
        fprintf(stderr, "ternrun: cannot set up the job: %s\n", strerror(errno));
        job_cleanup(job);
        return RUN_EXIT_FAIL;
    }
    if (job->opts.timeout > 0) job->timeout_at = run_now() + job->opts.timeout;

    if (job->proxy) {
        struct epoll_event uev = {.events = EPOLLIN, .data.u64 = RUN_EV(RUN_EV_UP, 0)};
        if (epoll_ctl(job->epfd, EPOLL_CTL_ADD, job->up_fd, &uev) != 0) {
            fprintf(stderr, "ternrun: proxy cannot watch its channel: %s\n", strerror(errno));
            job_cleanup(job);
            return RUN_EXIT_FAIL;
        }
    } else {
        /* On failure the job is already ending. */
        if (run_launch_start(job) == 0) run_remote_start(job);
    }

    double abandon_at = 0;
    while (job_active(job)) {
        double now = run_now();
        if (job->timeout_at > 0 && now >= job->timeout_at) {
            job->timeout_at = 0;
            if (job->opts.no_report || job->terminating)
                run_job_fail(job, RUN_EXIT_TIMEOUT, "ternrun: job timed out after %g s; ending it",
                             job->opts.timeout);
            else
                run_report_start(job, 1); /* the job ends (124) once the report is out */
        }
        if (job->report_at > 0 && now >= job->report_at) run_report_deadline(job);
        if (job->kill_at > 0 && now >= job->kill_at) run_job_kill_now(job);
        if (job->terminating && job->kill_at == 0 && abandon_at == 0)
            abandon_at = now + JOB_ABANDON_SECONDS;
        if (abandon_at > 0 && now >= abandon_at) {
            if (job->nalive > 0)
                fprintf(stderr,
                        "ternrun: %d rank(s) did not die after SIGKILL; giving up on them\n",
                        job->nalive);
            else
                fprintf(stderr, "ternrun: %d proxies did not end; giving up on them\n",
                        job->nagents);
            run_remote_kill_agents(job);
            break;
        }

        struct epoll_event ev[64];
        int n = epoll_wait(job->epfd, ev, 64, job_wait_ms(job, abandon_at));
        if (n < 0 && errno != EINTR) {
            run_job_fail(job, RUN_EXIT_FAIL, "ternrun: epoll_wait failed: %s", strerror(errno));
            run_job_kill_now(job);
            n = 0;
        }
        for (int i = 0; i < n; i++)
            job_dispatch(job, ev[i].data.u64);
    }

    if (job->report_at > 0) run_report_deadline(job); /* ranks ended while it was asked */
    /* Processes a rank left behind are ended with a job that failed; after a clean
     * run they are the user's business, as they would be under a shell. */
    if (job->terminating) run_launch_kill_strays(SIGKILL);
    if (job->proxy) run_ctl_flush_blocking(&job->up, 5000); /* the last exits and output */
    job_cleanup(job);
    run_launch_remove_shm(job->kvsname);
    run_launch_janitor_stop();
    return job->exit_code >= 0 ? job->exit_code : RUN_EXIT_OK;
}

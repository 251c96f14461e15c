/*
 * launch.c - starting, signalling and reaping the processes of a job.
 *
 * Each rank is fork()ed and exec()ed directly (no shell in between) with one end
 * of its own socketpair as PMI_FD. Every descriptor ternrun opens is close-on-exec,
 * so a rank inherits only its own PMI end, stdin (rank 0) or /dev/null, either
 * ternrun's stdout/stderr or its --tag-output pipes, and the janitor's pipe (below).
 * A rank asks the kernel to SIGKILL it if ternrun dies (PR_SET_PDEATHSIG), and
 * ternrun is a child subreaper so processes a rank leaves behind are adopted by
 * ternrun and ended with the job instead of escaping to init.
 *
 * Shared-memory segments: ranks unlink theirs once every peer has attached, and when the
 * job ends ternrun removes any /dev/shm/tern-<job>-* a rank killed during start-up could
 * not. For the one end ternrun cannot clean up after - its own SIGKILL - a janitor
 * process (named ternrun-clean) is started before the first rank: it holds the read end
 * of a pipe whose write end ternrun and every rank hold, so it sees end-of-file only once
 * all of them are gone, and then removes what is left of the job. It leaves ternrun's
 * session and process group (a Ctrl-C or a kill of the group does not end it) and
 * blocks the signals ternrun handles; after a normal end ternrun stops it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ternrun.h"
#include "util/tunables.h"

/* The janitor (see the top of the file): its pid, and the write end of its pipe that
 * ternrun and the ranks hold. */
static pid_t launch_janitor_pid = -1;
static int launch_janitor_w = -1;

/* What a child writes on the exec-error pipe when exec fails (one atomic write). */
struct launch_exec_error {
    int rank;
    int err;
};

const char *run_signal_name(int sig)
{
    /* By name, not by number: numbering differs between architectures. */
    static const struct {
        int sig;
        const char *name;
    } names[] = {
#define LAUNCH_SIG(s) {s, #s}
        LAUNCH_SIG(SIGHUP),    LAUNCH_SIG(SIGINT),  LAUNCH_SIG(SIGQUIT),  LAUNCH_SIG(SIGILL),
        LAUNCH_SIG(SIGTRAP),   LAUNCH_SIG(SIGABRT), LAUNCH_SIG(SIGBUS),   LAUNCH_SIG(SIGFPE),
        LAUNCH_SIG(SIGKILL),   LAUNCH_SIG(SIGUSR1), LAUNCH_SIG(SIGSEGV),  LAUNCH_SIG(SIGUSR2),
        LAUNCH_SIG(SIGPIPE),   LAUNCH_SIG(SIGALRM), LAUNCH_SIG(SIGTERM),  LAUNCH_SIG(SIGCHLD),
        LAUNCH_SIG(SIGCONT),   LAUNCH_SIG(SIGSTOP), LAUNCH_SIG(SIGTSTP),  LAUNCH_SIG(SIGTTIN),
        LAUNCH_SIG(SIGTTOU),   LAUNCH_SIG(SIGURG),  LAUNCH_SIG(SIGXCPU),  LAUNCH_SIG(SIGXFSZ),
        LAUNCH_SIG(SIGVTALRM), LAUNCH_SIG(SIGPROF), LAUNCH_SIG(SIGWINCH), LAUNCH_SIG(SIGIO),
        LAUNCH_SIG(SIGSYS),
#undef LAUNCH_SIG
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (names[i].sig == sig) return names[i].name;
    return "unknown signal";
}

/* Is `path` a file this process may execute? Returns 0 or an errno value. */
static int launch_check_exec(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) return errno;
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (!S_ISREG(st.st_mode)) return EACCES;
    if (access(path, X_OK) != 0) return errno;
    /* root passes access(X_OK) if any x bit is set; exec needs one for someone. */
    if (!(st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH))) return EACCES;
    return 0;
}

/*
 * Find prog as execvp would, once, so N children need not search PATH N times and
 * a missing program is reported before anything starts. Returns 0 or an errno value
 * (ENOENT if nowhere; otherwise the reason the best candidate cannot run).
 */
int run_launch_resolve(const char *prog, char *path, size_t pathsz)
{
    if (*prog == '\0') return ENOENT;
    if (strchr(prog, '/')) {
        if (strlen(prog) >= pathsz) return ENAMETOOLONG;
        strcpy(path, prog);
        return launch_check_exec(path);
    }
    const char *dirs = getenv("PATH");
    if (dirs == NULL) dirs = "/usr/local/bin:/usr/bin:/bin";
    int best = ENOENT;
    for (const char *d = dirs;; d++) {
        const char *end = strchr(d, ':');
        size_t dlen = end ? (size_t)(end - d) : strlen(d);
        int n = dlen ? snprintf(path, pathsz, "%.*s/%s", (int)dlen, d, prog)
                     : snprintf(path, pathsz, "%s", prog); /* empty entry: cwd */
        if (n > 0 && (size_t)n < pathsz) {
            int err = launch_check_exec(path);
            if (err == 0) return 0;
            if (err != ENOENT && err != ENOTDIR) best = err;
        }
        if (end == NULL) break;
        d = end;
    }
    return best;
}

static int launch_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int launch_watch(struct run_job *job, int fd, unsigned long long what)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = what};
    return epoll_ctl(job->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static void launch_setenv_int(const char *name, int v)
{
    char buf[16];
    snprintf(buf, sizeof buf, "%d", v);
    setenv(name, buf, 1);
}

/*
 * In the child between fork and exec. ternrun is single-threaded, so malloc (in
 * setenv) is safe here. Never returns.
 */
static void launch_child(struct run_job *job, const struct run_rank *r, int pmi_fd,
                         const int out_w[2], int err_w, pid_t parent)
{
    int rank = r->rank;
    /* Die with ternrun. Checking the parent after asking closes the window in which
     * ternrun could have died before the request took effect. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(RUN_EXIT_FAIL);

    sigaction(SIGPIPE, &job->orig_sigpipe, NULL);
    sigprocmask(SIG_SETMASK, &job->orig_sigmask, NULL);
    setrlimit(RLIMIT_NOFILE, &job->orig_nofile);

    if (rank != job->stdin_rank && dup2(job->devnull, 0) < 0) _exit(RUN_EXIT_FAIL);
    if (out_w[0] >= 0 && (dup2(out_w[0], 1) < 0 || dup2(out_w[1], 2) < 0)) _exit(RUN_EXIT_FAIL);
    if (fcntl(pmi_fd, F_SETFD, 0) != 0) _exit(RUN_EXIT_FAIL);
    /* Held until the rank ends: the janitor waits for every holder to be gone. */
    if (launch_janitor_w >= 0 && fcntl(launch_janitor_w, F_SETFD, 0) != 0) _exit(RUN_EXIT_FAIL);

    launch_setenv_int("PMI_FD", pmi_fd);
    launch_setenv_int("PMI_RANK", rank);
    launch_setenv_int("PMI_SIZE", job->size);
    launch_setenv_int("TERN_LOCAL_RANK", r->lrank);
    launch_setenv_int("TERN_LOCAL_SIZE", r->lsize);
    /* Set if ternrun itself runs under another launcher; would point elsewhere. */
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    run_bind_apply(job, r);
    /* A session of its own: under autogroup the rank weighs as much as another session's
     * tasks together. A new process can always start one (it leads no group). */
    if (util_tun.rank_session && setsid() < 0) _exit(RUN_EXIT_FAIL);

    execv(job->path, job->opts.argv);
    int err = errno;
    if (err == ENOEXEC) {
        /* A script without "#!": run it with sh, as execvp and shells do. */
        int argc = 0;
        while (job->opts.argv[argc])
            argc++;
        char **av = calloc((size_t)argc + 2, sizeof *av);
        if (av) {
            av[0] = "sh";
            av[1] = (char *)job->path;
            for (int i = 1; i <= argc; i++)
                av[i + 1] = job->opts.argv[i];
            execv("/bin/sh", av);
        }
        err = errno;
    }
    struct launch_exec_error rec = {rank, err};
    if (write(err_w, &rec, sizeof rec) < 0) {
        /* Nothing more to do: the exit code still tells ternrun. */
    }
    _exit(err == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC);
}

/* Start rank r. Returns 0, or -1 with the job failed and a message printed. */
static int launch_one(struct run_job *job, struct run_rank *r, int err_w, pid_t parent)
{
    int sv[2];
    int out_r[2] = {-1, -1}, out_w[2] = {-1, -1};
    const char *what = "socketpair";
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) goto fail;
    what = "pipe";
    /* A proxy forwards every byte to the root; ternrun itself only to tag lines. */
    int piped = job->opts.tag_output || job->proxy;
    for (int i = 0; piped && i < 2; i++) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) != 0) goto fail_pipes;
        out_r[i] = p[0];
        out_w[i] = p[1];
    }
    what = "fork";
    pid_t pid = fork();
    if (pid < 0) goto fail_pipes;
    if (pid == 0) launch_child(job, r, sv[1], out_w, err_w, parent);

    r->pid = pid;
    r->alive = 1;
    job->nalive++;
    run_bind_report(job, r);
    close(sv[1]);
    for (int i = 0; i < 2; i++)
        if (out_w[i] >= 0) close(out_w[i]);
    r->pmi_fd = sv[0];
    if (launch_set_nonblock(sv[0]) != 0 ||
        launch_watch(job, sv[0], RUN_EV(RUN_EV_PMI, (unsigned)(r - job->ranks))))
        run_pmi_close(job, r); /* the rank will see EOF; its exit status decides */
    for (int i = 0; i < 2 && out_r[i] >= 0; i++) {
        run_out_open(&r->out[i], out_r[i], i + 1, job->opts.tag_output);
        if (launch_set_nonblock(out_r[i]) != 0 ||
            launch_watch(job, out_r[i],
                         RUN_EV(i ? RUN_EV_STDERR : RUN_EV_STDOUT, (unsigned)(r - job->ranks))))
            run_out_close(&r->out[i], r->rank);
    }
    return 0;

fail_pipes:;
    int err = errno;
    for (int i = 0; i < 2; i++) {
        if (out_r[i] >= 0) close(out_r[i]);
        if (out_w[i] >= 0) close(out_w[i]);
    }
    close(sv[0]);
    close(sv[1]);
    errno = err;
fail:
    run_job_fail(job, RUN_EXIT_FAIL, "ternrun: cannot start rank %d: %s failed: %s", r->rank, what,
                 strerror(errno));
    return -1;
}

/* In the janitor: wait until ternrun and every rank are gone, remove what they left in
 * /dev/shm, exit. Never returns. */
static void launch_janitor(const char *kvsname, int life_r)
{
    setsid();
    prctl(PR_SET_NAME, "ternrun-clean");
    /* Nothing of ternrun's: a pipe it holds open would keep a reader of ternrun's output
     * waiting for an end-of-file. */
    int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd < 3 && null >= 0; fd++)
        dup2(null, fd);
    if (dup2(life_r, 3) != 3) _exit(1);
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
#endif
        for (int fd = 4; fd < 65536; fd++)
            close(fd);
    for (;;) {
        char c;
        ssize_t n = read(3, &c, 1);
        if (n == 0 || (n < 0 && errno != EINTR)) break;
    }
    run_launch_remove_shm(kvsname);
    _exit(0);
}

/* Start the janitor; without one (fork failed) the job still runs, as before it. */
static void launch_janitor_start(struct run_job *job)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) return;
    pid_t pid = fork();
    if (pid == 0) launch_janitor(job->kvsname, p[0]);
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return;
    }
    launch_janitor_pid = pid;
    launch_janitor_w = p[1];
}

void run_launch_janitor_stop(void)
{
    if (launch_janitor_w >= 0) close(launch_janitor_w);
    launch_janitor_w = -1;
    if (launch_janitor_pid <= 0) return;
    /* ternrun has cleaned up itself; ranks' forked children may hold the pipe for long. */
    kill(launch_janitor_pid, SIGKILL);
    waitpid(launch_janitor_pid, NULL, 0);
    launch_janitor_pid = -1;
}

int run_launch_start(struct run_job *job)
{
    int ep[2];
    run_bind_prepare(job);
    launch_janitor_start(job);
    if (pipe2(ep, O_CLOEXEC) != 0 || launch_set_nonblock(ep[0]) != 0) {
        run_job_fail(job, RUN_EXIT_FAIL, "ternrun: cannot create a pipe: %s", strerror(errno));
        return -1;
    }
    job->execerr_fd = ep[0];
    pid_t parent = getpid();
    int rc = 0;
    for (int i = 0; i < job->nranks && rc == 0; i++)
        if (job->ranks[i].host == NULL || job->ranks[i].host->local)
            rc = launch_one(job, &job->ranks[i], ep[1], parent);
    close(ep[1]); /* children hold the only write ends now */
    return rc;
}

void run_launch_signal_all(struct run_job *job, int sig)
{
    /* Stopping and continuing reach what a rank started as well, as the terminal's
     * Ctrl-Z does when ranks share its process group. */
    int group = util_tun.rank_session && (sig == SIGSTOP || sig == SIGCONT);
    for (int i = 0; i < job->nranks; i++) {
        struct run_rank *r = &job->ranks[i];
        if (!r->alive || r->pid <= 0 || (r->host != NULL && !r->host->local)) continue;
        if (!group || kill(-r->pid, sig) != 0) kill(r->pid, sig);
    }
    run_remote_signal(job, sig);
}

/*
 * Signal every process whose parent is ternrun but that is not a rank still alive:
 * those a rank left behind and ternrun adopted as subreaper. Found through /proc,
 * which is read only while a job is being ended.
 */
void run_launch_kill_strays(int sig)
{
    DIR *d = opendir("/proc");
    if (d == NULL) return;
    pid_t self = getpid();
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
        char path[300], buf[512];
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        if (n <= 0) continue;
        buf[n] = '\0';
        /* "pid (comm) state ppid ...": comm may hold spaces and ')', so take the last. */
        char *p = strrchr(buf, ')');
        char state;
        int ppid;
        if (p == NULL || sscanf(p + 1, " %c %d", &state, &ppid) != 2) continue;
        pid_t pid = (pid_t)atoi(e->d_name);
        if (ppid == (int)self && state != 'Z' && pid != launch_janitor_pid) kill(pid, sig);
    }
    closedir(d);
}

/* Record the exec failures children reported, so the exit message can say why. */
static void launch_read_exec_errors(struct run_job *job)
{
    struct launch_exec_error rec;
    while (job->execerr_fd >= 0 && read(job->execerr_fd, &rec, sizeof rec) == sizeof rec)
        for (int i = 0; i < job->nranks; i++)
            if (job->ranks[i].rank == rec.rank) job->ranks[i].exec_errno = rec.err;
}

static void launch_exited(struct run_job *job, struct run_rank *r, int status)
{
    r->alive = 0;
    job->nalive--;
    /* The rank wrote before it exited: take in its last PMI commands (an abort) and
     * its last output before judging its exit, so messages come in causal order. */
    launch_read_exec_errors(job);
    if (r->pmi_fd >= 0) run_pmi_readable(job, r);
    run_pmi_close(job, r);
    for (int i = 0; i < 2; i++) {
        if (r->out[i].fd < 0) continue;
        run_out_drain(&r->out[i], r->rank);
        run_out_close(&r->out[i], r->rank);
    }

    /* A rank that dies, or leaves without finalizing, fails its peers: they hear of it
     * at once. If every survivor handles peer failures itself the job goes on (the
     * failure still sets the exit code); otherwise it ends. */
    int died = (WIFEXITED(status) && WEXITSTATUS(status) != 0) || WIFSIGNALED(status);
    char line[1024] = "";
    int code = 0;
    if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
        code = WEXITSTATUS(status);
        if (r->exec_errno)
            snprintf(line, sizeof line, "ternrun: rank %d (%s) could not execute '%s': %s", r->rank,
                     run_rank_where(job, r), job->path, strerror(r->exec_errno));
        else
            snprintf(line, sizeof line, "ternrun: rank %d (%s) exited with code %d", r->rank,
                     run_rank_where(job, r), code);
    } else if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        code = RUN_EXIT_SIGNAL + sig;
        snprintf(line, sizeof line, "ternrun: rank %d (%s) killed by signal %d (%s)%s", r->rank,
                 run_rank_where(job, r), sig, run_signal_name(sig),
                 WCOREDUMP(status) ? ", core dumped" : "");
    }
    int early = (died || (r->inited && !r->finalized)) && !job->terminating;
    if (job->proxy && early && r->inited) {
        /* This host's tolerant ranks hear of it now; whether the job goes on is the
         * root's call, which knows every host's ranks (remote.c, RUN_CTL_DIED). */
        (void)run_pmi_peer_failed(job, r->rank);
        run_proxy_send(job, RUN_CTL_DIED, r->rank, code, line, strlen(line));
    } else {
        int tolerated = early && run_pmi_peer_failed(job, r->rank) && job->nalive > 0;
        if (line[0] && tolerated)
            run_job_note_failure(job, code, "%s", line);
        else if (line[0])
            run_job_fail(job, code, "%s", line);
    }
    if (job->proxy) run_proxy_send(job, RUN_CTL_EXIT, r->rank, status, NULL, 0);
    run_pmi_rank_gone(job);
}

void run_launch_reap(struct run_job *job)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) return;
        /* Linear: reaping is once per rank, and jobs on one node are small. */
        int found = 0;
        for (int i = 0; i < job->nranks && !found; i++) {
            struct run_rank *r = &job->ranks[i];
            if (r->alive && r->pid == pid && (r->host == NULL || r->host->local)) {
                launch_exited(job, r, status);
                found = 1;
            }
        }
        if (pid == launch_janitor_pid) launch_janitor_pid = -1; /* it failed: no backstop */
        if (!found) run_remote_reaped(job, pid, status);
        /* Anything else was adopted from a rank and is simply reaped. */
    }
}

/* Backstop for segments a rank could not unlink (killed during startup). */
void run_launch_remove_shm(const char *kvsname)
{
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "tern-%s-", kvsname);
    DIR *d = opendir("/dev/shm");
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strncmp(e->d_name, prefix, (size_t)plen) == 0) unlinkat(dirfd(d), e->d_name, 0);
    closedir(d);
}

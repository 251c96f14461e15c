/*
 * ternrun.h - the state of one ternrun job, shared by the files of the launcher:
 * ternrun.c (options, main), job.c (event loop and end-of-job policy), launch.c
 * (starting, signalling and reaping processes), pmi_server.c (PMI-1 server),
 * output.c (--tag-output forwarding), info.c (--info), hostfile.c (--host and
 * --hostfile parsing), ctl.c (framing of the root <-> proxy channel), remote.c (the
 * root's side of the proxies on other hosts) and proxy.c (ternrun --proxy, started
 * on another host through the launch agent).
 *
 * ternrun is single-threaded and event-driven: one epoll set watches a signalfd
 * (SIGCHLD and the signals ternrun forwards), every rank's PMI socket, every rank's
 * stdout/stderr pipe when they are forwarded, and the control channel of every
 * proxy (root) or to the root (proxy). Nothing sleeps on the hot path.
 *
 * A job across hosts: ranks are placed by blocks in host order. Ranks on the local
 * host are forked by ternrun itself; every other host gets ONE proxy, a `ternrun
 * --proxy` started through the launch agent, whose stdin/stdout carry the control
 * channel (ctl.h). A proxy forks its ranks and serves them PMI-1 with the same code
 * (this file's struct run_job, with `proxy` set and only its own ranks); puts go
 * to the root with the host's barrier_in, and the root's barrier_out brings back
 * every new entry, so gets are answered on the host.
 */
#ifndef TERNRUN_H
#define TERNRUN_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "boot/pmi_wire.h"
#include "ctl.h"
#include "hostfile.h"
#include "util/topo.h"

/* Exit codes with a fixed meaning, as a shell and coreutils' timeout use them. */
enum run_exit {
    RUN_EXIT_OK = 0,
    RUN_EXIT_FAIL = 1,       /* a failure with no better code (deadlock, fork failed) */
    RUN_EXIT_USAGE = 2,      /* bad command line */
    RUN_EXIT_TIMEOUT = 124,  /* --timeout expired */
    RUN_EXIT_NOEXEC = 126,   /* program found but cannot be executed */
    RUN_EXIT_NOTFOUND = 127, /* program not found */
    RUN_EXIT_SIGNAL = 128,   /* + signal number */
};

struct run_opts {
    int nprocs;
    int nprocs_given;          /* -n was on the command line */
    struct run_hostlist hosts; /* --host / --hostfile; empty: this host only */
    const char *launch_agent;  /* template with {host}; NULL: the default */
    char **env_pairs;          /* NAME=value the ranks on other hosts get (-x, --env) */
    int nenv_pairs;
    int tag_output;
    double timeout;        /* seconds; 0 means none */
    int no_report;         /* --no-report-on-timeout: end a timed-out job without the report */
    double kill_grace;     /* seconds between SIGTERM and SIGKILL when ending a job */
    char **argv;           /* the program and its arguments, NULL-terminated */
    const char *trace_dir; /* --trace: absolute directory the ranks trace into, or NULL */
    /* Placement (bind.c): --bind-to/--map-by over TERN_BIND_TO/TERN_MAP_BY. */
    struct topo_policy policy;
    int report_bindings; /* --report-bindings or TERN_REPORT_BINDINGS=1 */
};

/* One of a rank's output streams while --tag-output forwards it (see output.c). */
struct run_stream {
    int fd;      /* read end of the pipe, -1 once closed */
    int dest;    /* 1 (stdout) or 2 (stderr) of ternrun */
    int midline; /* an over-long line was emitted without its end */
    int tag;     /* prefix lines with "[rank] " */
    char *buf;   /* bytes of the line not yet complete */
    size_t len, cap;
};

struct run_host;

struct run_rank {
    int rank;
    int lrank, lsize;      /* TERN_LOCAL_RANK / TERN_LOCAL_SIZE: place on its host */
    struct run_host *host; /* NULL in a single-host job and in a proxy */
    pid_t pid;             /* 0 until started */
    int alive;             /* started and not yet reaped */
    int exec_errno;        /* set when the child reported that exec failed */

    /* PMI connection (pmi_server.c). */
    int pmi_fd; /* ternrun's end of the socketpair, -1 once closed */
    int in_barrier;
    int inited; /* sent cmd=init: a PMI client, whose peers must hear of its death */
    int finalized;
    int tolerant;      /* said cmd=tern_tolerate: it handles peers' failures itself */
    int failed;        /* died, and the job went on without it: barriers no longer wait */
    int report_sig;    /* said tern_report_ready: answers hang reports on this signal */
    int report_asked;  /* signalled for the report under way, no answer yet */
    char *report_text; /* its block of the report under way, formatted */
    struct pmi_reader rd;

    struct run_stream out[2]; /* stdout, stderr; used only with --tag-output */
};

/* A host of a multi-host job, on the root. */
struct run_host {
    char *name;
    int first, count; /* ranks placed on it */
    int local;        /* its ranks are forked by ternrun itself, without a proxy */
    /* The proxy, on a remote host (remote.c). */
    pid_t agent_pid; /* the launch agent; 0 when not running, -1 while its end is reported */
    int ctl_fd;      /* socket to the agent's stdin/stdout; -1 once closed */
    struct run_ctl_reader rd;
    struct run_ctl_queue q; /* writes go to a dup of ctl_fd, watched for EPOLLOUT */
    int q_watched;
    int nlive;      /* ranks not yet reported exited */
    int nfailed;    /* its ranks that died while the job went on */
    int in_barrier; /* the proxy's barrier_in arrived */
};

struct run_kvs; /* the key-value space, private to pmi_server.c */

struct run_job {
    struct run_opts opts;
    const char *path; /* the program resolved through PATH */
    int size;         /* ranks in the job (PMI_SIZE) */
    int nranks;       /* entries of ranks[]: size, or a proxy's own ranks */
    struct run_rank *ranks;
    int nalive;     /* ranks started and not yet reaped (or reported exited) */
    int stdin_rank; /* the rank whose stdin is ternrun's; -1 for none */
    char kvsname[48];
    struct run_kvs *kvs;
    char mapping[PMI_WIRE_VAL_MAX + 1]; /* PMI_process_mapping */
    int barrier_count;                  /* ranks waiting in the current barrier */
    int nfailed;                        /* ranks dead while every survivor tolerates it */

    /* Multi-host (root): hosts with at least one rank, in placement order. */
    struct run_host *hosts;
    int nhosts;
    int nagents;          /* launch agents not yet reaped */
    const char *hostname; /* host named in messages about ranks; NULL: one host */

    /* Proxy mode (proxy.c): the channel to the root. */
    int proxy;
    int started; /* START received and the ranks forked */
    int up_fd;   /* reads from the root; -1 once closed */
    struct run_ctl_reader up_rd;
    struct run_ctl_queue up; /* writes to the root */
    int up_watched;
    int up_barrier; /* barrier_in sent, barrier_out not yet back */

    /* bind.c: this host's topology and the binding of each entry of ranks[] started
     * here; NULL when the topology could not be read (ranks then bind themselves). */
    struct topo *topo;
    struct topo_binding *bindings;

    int exit_code;   /* first failure's code, or -1 while all is well */
    int terminating; /* SIGTERM sent to the ranks: the job is ending */
    int ending;      /* a failure that ends the job was recorded (not a tolerated one) */
    double kill_at;  /* monotonic time to send SIGKILL, 0 if none pending */
    double timeout_at;
    double report_at;    /* deadline of the hang report under way, 0 if none */
    int report_then_end; /* the report is for --timeout: end the job (124) after it */
    int report_remote;   /* root: proxies asked that have not answered */

    int epfd;       /* epoll set */
    int sigfd;      /* signalfd of the signals in sigmask */
    int execerr_fd; /* read end of the pipe children report exec failures on */
    int devnull;    /* stdin of every rank but 0 */
    sigset_t sigmask, orig_sigmask;
    struct sigaction orig_sigpipe;
    struct rlimit orig_nofile;
};

/*
 * epoll user data: what became ready. The low 32 bits hold the index in ranks[]
 * (or hosts[]) for the per-rank (per-host) kinds.
 */
enum run_ev_kind {
    RUN_EV_SIGNAL = 1,
    RUN_EV_PMI,
    RUN_EV_STDOUT,
    RUN_EV_STDERR,
    RUN_EV_CTL,     /* root: a proxy's channel is readable (index: host) */
    RUN_EV_CTL_OUT, /* root: a proxy's channel takes more bytes */
    RUN_EV_UP,      /* proxy: the root's channel is readable */
    RUN_EV_UP_OUT,  /* proxy: the root's channel takes more bytes */
};
#define RUN_EV(kind, rank) (((unsigned long long)(kind) << 32) | (unsigned)(rank))

/* job.c */
double run_now(void); /* monotonic seconds */
/* Run the job to its end (ranks started here); returns ternrun's exit code. */
int run_job_run(struct run_job *job);
/* Record the job's first failure: print the one line, keep `code`, end the job.
 * Later calls are consequences of the first and are ignored. */
void run_job_fail(struct run_job *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The same first-failure line and exit code, without ending the job: for a rank's
 * death when every survivor said it handles peer failures. */
void run_job_note_failure(struct run_job *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Terminate every rank now (SIGTERM, SIGKILL after the grace). */
void run_job_terminate(struct run_job *job);
void run_job_kill_now(struct run_job *job);
/* "pid 123 on host": for messages about r. */
const char *run_rank_where(const struct run_job *job, const struct run_rank *r);

/* launch.c */
/* Find prog through PATH into path; 0 or an errno value saying why it cannot run. */
int run_launch_resolve(const char *prog, char *path, size_t pathsz);
/* Fork and exec every rank; -1 (job already failed) if one could not start. */
int run_launch_start(struct run_job *job);
/* Send sig to every rank not yet reaped. */
void run_launch_signal_all(struct run_job *job, int sig);
/* Send sig to the processes ranks left behind that ternrun adopted. */
void run_launch_kill_strays(int sig);
/* Reap every exited child; judges ranks' exits (call on SIGCHLD). */
void run_launch_reap(struct run_job *job);
/* Unlink /dev/shm/tern-<kvsname>-* left by ranks that could not. */
void run_launch_remove_shm(const char *kvsname);
/* Stop the janitor that cleans /dev/shm if ternrun is killed (call after cleaning up). */
void run_launch_janitor_stop(void);
const char *run_signal_name(int sig); /* "SIGKILL" */

/* pmi_server.c */
/* The key-value space; the root also makes the job secret and PMI_process_mapping. */
int run_pmi_init(struct run_job *job);
/* Serialise entries (all, or those put since the last call with only_new) as
 * NUL-separated key, value pairs into a malloc'ed *buf. Returns 0 or -1. */
int run_pmi_kvs_dump(struct run_job *job, int only_new, char **buf, size_t *len);
/* Add the pairs of a dump; `fresh` marks them new (root: to pass on). Returns 0 or -1. */
int run_pmi_kvs_merge(struct run_job *job, const char *buf, size_t len, int fresh);
/* n more ranks entered the barrier (a proxy's host); release it if all are in. */
void run_pmi_barrier_add(struct run_job *job, int n);
/* Proxy: the root released the barrier; release the local ranks. */
void run_pmi_barrier_release_local(struct run_job *job);
void run_pmi_fini(struct run_job *job);
/* Read and answer what rank r sent; closes its connection at EOF or on garbage. */
void run_pmi_readable(struct run_job *job, struct run_rank *r);
void run_pmi_close(struct run_job *job, struct run_rank *r);
/* Rank `rank` died: tell every live rank that said tern_tolerate (cmd=tern_peer_failed,
 * unasked, between replies). Returns 1 when every
 * live rank said it handles peer failures (the job may go on), else 0. */
int run_pmi_peer_failed(struct run_job *job, int rank);
/* Count rank as failed: barriers stop waiting for it. */
void run_pmi_mark_failed(struct run_job *job, int rank);
/* A rank finished: fail the job if others now wait in a barrier it cannot enter. */
void run_pmi_rank_gone(struct run_job *job);

/* output.c */
void run_out_open(struct run_stream *s, int fd, int dest, int tag);
/* Write to ternrun's stdout (1) or stderr (2), or as OUT frames once a sink is set. */
void run_out_write(int dest, const char *buf, size_t len);
/* Proxy: everything forwarded goes to the root through q. */
void run_out_set_sink(struct run_ctl_queue *q, void (*after_send)(void *), void *arg);
/* Forward what one read brings; the stream closes itself at its end. */
void run_out_readable(struct run_stream *s, int rank);
/* Forward what is buffered in the pipe now (bounded), e.g. when the rank exited. */
void run_out_drain(struct run_stream *s, int rank);
/* Forward a last partial line, completed by '\n', and close. */
void run_out_close(struct run_stream *s, int rank);

/* remote.c (root) */
/* Start the launch agent of every remote host and send it the job. */
void run_remote_start(struct run_job *job);
void run_remote_readable(struct run_job *job, struct run_host *h);
void run_remote_writable(struct run_job *job, struct run_host *h);
/* Ask every proxy with ranks running for the hang report; returns how many were asked. */
int run_remote_report_req(struct run_job *job);
/* Tell every proxy that `rank` died and the job goes on. */
void run_remote_peer_failed(struct run_job *job, int rank);
/* Send sig to every rank on every remote host (through its proxy). */
void run_remote_signal(struct run_job *job, int sig);
/* A reaped child: 1 if it was a launch agent (and is dealt with), else 0. */
int run_remote_reaped(struct run_job *job, pid_t pid, int status);
/* Barrier released: send the new entries to every proxy. */
void run_remote_barrier_out(struct run_job *job, const char *buf, size_t len);
void run_remote_kill_agents(struct run_job *job);
void run_remote_close(struct run_job *job);
/* Is `name` this machine (its ranks are forked without a proxy)? */
int run_remote_is_local(const char *name);

/* proxy.c */
/* main() of `ternrun --proxy`. */
int run_proxy_main(struct run_job *job);
void run_proxy_readable(struct run_job *job);
void run_proxy_writable(struct run_job *job);
/* Send a frame to the root (watching for EPOLLOUT when it cannot all go now). */
void run_proxy_send(struct run_job *job, int type, int arg, int arg2, const void *p, size_t len);

/* report.c: the hang report (--timeout, kill -USR1 of ternrun). */
/* Ask every rank what it is blocked in (root: through proxies too); printed when all
 * answered or at the deadline; then_end: end the job with 124 afterwards. */
void run_report_start(struct run_job *job, int then_end);
/* A rank's tern_report line (PMI). */
void run_report_answer(struct run_job *job, struct run_rank *r, const struct pmi_msg *m);
/* Root: a proxy's formatted block for `rank` (payload of RUN_CTL_REPORT); rank -1: done. */
void run_report_remote(struct run_job *job, int rank, const char *text);
/* The deadline passed: report what is missing and finish. */
void run_report_deadline(struct run_job *job);

/* info.c */
/* --info; nprocs: ranks the binding is shown for (0: one per allowed core). */
void run_info_print(FILE *out, const struct run_opts *o, int nprocs);

/* bind.c: placing the ranks a ternrun (root or proxy) starts on its host. */
/* Command-line and environment spellings of the policy into o->policy; exits 2 with a
 * message naming the bad value. bind/map NULL: not given on the command line. */
void run_bind_setup(struct run_opts *o, const char *bind, const char *map, int use_hwthreads);
/* "core" / "numa:PE=2" forms of o->policy for a proxy's setup, parsed back by
 * topo_policy_parse. */
void run_bind_format(const struct run_opts *o, char *bind, size_t blen, char *map, size_t mlen);
/* Before forking the host's ranks: read the topology, work out each rank's binding (a
 * note on stderr when ranks outnumber the cores an explicit binding needs). */
void run_bind_prepare(struct run_job *job);
/* In the child: bind to what rank r was given (a failure is a warning, not an end). */
void run_bind_apply(const struct run_job *job, const struct run_rank *r);
/* In ternrun once r is forked: the --report-bindings line. */
void run_bind_report(const struct run_job *job, const struct run_rank *r);
/* Print the topology and, for nprocs ranks, the bindings (ternrun --info). */
void run_bind_info(FILE *out, const struct run_opts *o, int nprocs);

/* trace_dir.c: --trace DIR made and made absolute (exits on error; NULL for ""); at
 * the job's end, DIR/traces.otf2 converted from the ranks' files by tern-otf2, if built. */
const char *run_trace_prepare(const char *dir);
void run_trace_finish(const char *dir);

#endif

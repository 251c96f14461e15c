/*
 * ternrun.h - the state of one ternrun job, shared by the files of the launcher:
 * ternrun.c (options, main), job.c (event loop and end-of-job policy), launch.c
 * (starting, signalling and reaping processes), pmi_server.c (PMI-1 server),
 * output.c (--tag-output forwarding) and info.c (--info).
 *
 * ternrun is single-threaded and event-driven: one epoll set watches a signalfd
 * (SIGCHLD and the signals ternrun forwards), every rank's PMI socket and, with
 * --tag-output, every rank's stdout/stderr pipe. Nothing sleeps on the hot path.
 */
#ifndef TERNRUN_H
#define TERNRUN_H

#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/types.h>

#include "boot/pmi_wire.h"

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
    int tag_output;
    double timeout;    /* seconds; 0 means none */
    double kill_grace; /* seconds between SIGTERM and SIGKILL when ending a job */
    char **argv;       /* the program and its arguments, NULL-terminated */
};

/* One of a rank's output streams while --tag-output forwards it (see output.c). */
struct run_stream {
    int fd;      /* read end of the pipe, -1 once closed */
    int dest;    /* 1 (stdout) or 2 (stderr) of ternrun */
    int midline; /* an over-long line was emitted without its end */
    char *buf;   /* bytes of the line not yet complete */
    size_t len, cap;
};

struct run_rank {
    int rank;
    pid_t pid;      /* 0 until started */
    int alive;      /* started and not yet reaped */
    int exec_errno; /* set when the child reported that exec failed */

    /* PMI connection (pmi_server.c). */
    int pmi_fd; /* ternrun's end of the socketpair, -1 once closed */
    int in_barrier;
    int finalized;
    struct pmi_reader rd;

    struct run_stream out[2]; /* stdout, stderr; used only with --tag-output */
};

struct run_kvs; /* the key-value space, private to pmi_server.c */

struct run_job {
    struct run_opts opts;
    const char *path; /* the program resolved through PATH */
    int size;
    struct run_rank *ranks;
    int nalive; /* ranks started and not yet reaped */
    char kvsname[48];
    struct run_kvs *kvs;
    int barrier_count; /* ranks waiting in the current barrier */

    int exit_code;   /* first failure's code, or -1 while all is well */
    int terminating; /* SIGTERM sent to the ranks: the job is ending */
    double kill_at;  /* monotonic time to send SIGKILL, 0 if none pending */
    double timeout_at;

    int epfd;       /* epoll set */
    int sigfd;      /* signalfd of the signals in sigmask */
    int execerr_fd; /* read end of the pipe children report exec failures on */
    int devnull;    /* stdin of every rank but 0 */
    sigset_t sigmask, orig_sigmask;
    struct sigaction orig_sigpipe;
    struct rlimit orig_nofile;
};

/*
 * epoll user data: what became ready. The low 32 bits hold the rank for the
 * per-rank kinds.
 */
enum run_ev_kind { RUN_EV_SIGNAL = 1, RUN_EV_PMI, RUN_EV_STDOUT, RUN_EV_STDERR };
#define RUN_EV(kind, rank) (((unsigned long long)(kind) << 32) | (unsigned)(rank))

/* job.c */
double run_now(void); /* monotonic seconds */
/* Run the job to its end (ranks started here); returns ternrun's exit code. */
int run_job_run(struct run_job *job);
/* Record the job's first failure: print the one line, keep `code`, end the job.
 * Later calls are consequences of the first and are ignored. */
void run_job_fail(struct run_job *job, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

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
const char *run_signal_name(int sig); /* "SIGKILL" */

/* pmi_server.c */
int run_pmi_init(struct run_job *job);
void run_pmi_fini(struct run_job *job);
/* Read and answer what rank r sent; closes its connection at EOF or on garbage. */
void run_pmi_readable(struct run_job *job, struct run_rank *r);
void run_pmi_close(struct run_job *job, struct run_rank *r);
/* A rank finished: fail the job if others now wait in a barrier it cannot enter. */
void run_pmi_rank_gone(struct run_job *job);

/* output.c */
void run_out_open(struct run_stream *s, int fd, int dest);
/* Forward what one read brings; the stream closes itself at its end. */
void run_out_readable(struct run_stream *s, int rank);
/* Forward what is buffered in the pipe now (bounded), e.g. when the rank exited. */
void run_out_drain(struct run_stream *s, int rank);
/* Forward a last partial line, completed by '\n', and close. */
void run_out_close(struct run_stream *s, int rank);

/* info.c */
void run_info_print(FILE *out);

#endif

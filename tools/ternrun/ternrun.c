/*
 * ternrun.c - command line and process setup of the local-node launcher.
 *
 *   ternrun -n N [options] program [args...]
 *
 * Options follow both mpirun (Open MPI) and mpiexec (MPICH) spellings, so scripts
 * written for either run unchanged; unknown options are refused (exit 2) rather
 * than passed on, because a misspelt option would otherwise become the program.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

#include "tern.h"
#include "ternrun.h"

#define RUN_MAX_PROCS 65536

static const char run_usage[] =
    "usage: ternrun -n N [options] program [args...]\n"
    "\n"
    "Start N processes of program on this machine and serve them PMI-1.\n"
    "\n"
    "  -n, -np N             number of processes (default 1)\n"
    "  -x VAR[=value]        export VAR to the ranks (with a value: set it first)\n"
    "  --env VAR=value       set VAR for the ranks\n"
    "  -genv, -env VAR value set VAR for the ranks (MPICH spelling)\n"
    "  --tag-output, -l      prefix each output line of rank r with \"[r] \"\n"
    "  --timeout SECONDS     end the job after SECONDS, exit 124 (also MPIEXEC_TIMEOUT)\n"
    "  --kill-grace SECONDS  wait between SIGTERM and SIGKILL when ending a job (1)\n"
    "  --info                version, tunables, and what this machine allows\n"
    "  -h, --help            this text\n"
    "  -V, --version         the version\n"
    "  --oversubscribe, --bind-to X, --allow-run-as-root\n"
    "                        accepted for compatibility; no effect\n"
    "  --                    end of options\n"
    "\n"
    "stdin goes to rank 0; the others read /dev/null. Every rank gets PMI_FD,\n"
    "PMI_RANK, PMI_SIZE, TERN_LOCAL_RANK and TERN_LOCAL_SIZE.\n"
    "Exit status: 0 if every rank exits 0; else that of the first failure (128+signal\n"
    "for a signal), 124 on timeout, 126/127 if program cannot run, 2 for a bad command\n"
    "line. SIGINT, SIGTERM or SIGHUP end the whole job.\n";

enum opt_id {
    OPT_NP,
    OPT_EXPORT,
    OPT_ENV,
    OPT_GENV,
    OPT_TAG,
    OPT_TIMEOUT,
    OPT_GRACE,
    OPT_INFO,
    OPT_HELP,
    OPT_VERSION,
    OPT_IGNORE,
    OPT_IGNORE_ARG,
};

struct opt_def {
    const char *names[5];
    int nargs; /* values that follow */
    enum opt_id id;
};

static const struct opt_def opt_table[] = {
    {{"-n", "-np", "--np", "--n"}, 1, OPT_NP},
    {{"-x"}, 1, OPT_EXPORT},
    {{"--env"}, 1, OPT_ENV},
    {{"-genv", "-env", "--genv"}, 2, OPT_GENV},
    {{"--tag-output", "-tag-output", "-l", "--prepend-rank", "-prepend-rank"}, 0, OPT_TAG},
    {{"--timeout", "-timeout"}, 1, OPT_TIMEOUT},
    {{"--kill-grace"}, 1, OPT_GRACE},
    {{"--info", "-info"}, 0, OPT_INFO},
    {{"-h", "--help", "-help"}, 0, OPT_HELP},
    {{"-V", "--version", "-version"}, 0, OPT_VERSION},
    {{"--oversubscribe", "-oversubscribe", "--allow-run-as-root"}, 0, OPT_IGNORE},
    {{"--bind-to", "-bind-to"}, 1, OPT_IGNORE_ARG},
};

static void opt_die(const char *fmt, const char *arg) __attribute__((format(printf, 1, 0)));

static void opt_die(const char *fmt, const char *arg)
{
    fprintf(stderr, "ternrun: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, " (see ternrun --help)\n");
    exit(RUN_EXIT_USAGE);
}

/* Non-negative seconds, fractions allowed. */
static double opt_seconds(const char *name, const char *text)
{
    char *end;
    errno = 0;
    double v = strtod(text, &end);
    if (errno || end == text || *end != '\0' || !(v >= 0 && v < 1e8)) {
        fprintf(stderr, "ternrun: %s needs a number of seconds >= 0, not '%s'\n", name, text);
        exit(RUN_EXIT_USAGE);
    }
    return v;
}

static int opt_env_name_ok(const char *s, size_t len)
{
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++)
        if (s[i] == '=' || s[i] == '\0') return 0;
    return 1;
}

/* VAR=value: set it in ternrun's environment, which every rank inherits. */
static void opt_setenv_pair(const char *opt, const char *pair)
{
    const char *eq = strchr(pair, '=');
    if (eq == NULL || !opt_env_name_ok(pair, (size_t)(eq - pair))) {
        fprintf(stderr, "ternrun: %s needs VAR=value, not '%s'\n", opt, pair);
        exit(RUN_EXIT_USAGE);
    }
    char *name = strndup(pair, (size_t)(eq - pair));
    if (name == NULL || setenv(name, eq + 1, 1) != 0) {
        fprintf(stderr, "ternrun: cannot set %s: %s\n", pair, strerror(errno));
        exit(RUN_EXIT_FAIL);
    }
    free(name);
}

/* Match argv[*i] against the table; fills vals and advances *i past the values. */
static const struct opt_def *opt_match(int argc, char **argv, int *i, const char *vals[2])
{
    const char *a = argv[*i];
    for (size_t k = 0; k < sizeof opt_table / sizeof opt_table[0]; k++) {
        const struct opt_def *d = &opt_table[k];
        for (int j = 0; j < 5 && d->names[j]; j++) {
            size_t len = strlen(d->names[j]);
            if (strncmp(a, d->names[j], len) != 0) continue;
            if (a[len] == '=' && d->nargs == 1) { /* --timeout=5 */
                vals[0] = a + len + 1;
                return d;
            }
            if (a[len] != '\0') continue;
            for (int v = 0; v < d->nargs; v++) {
                if (*i + 1 >= argc) opt_die("option '%s' needs a value", a);
                vals[v] = argv[++*i];
            }
            return d;
        }
    }
    return NULL;
}

static void opt_parse(int argc, char **argv, struct run_opts *o)
{
    int i;
    for (i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-' || a[1] == '\0') break; /* the program */
        const char *vals[2] = {NULL, NULL};
        const struct opt_def *d = opt_match(argc, argv, &i, vals);
        if (d == NULL) opt_die("unknown option '%s'", a);
        switch (d->id) {
        case OPT_NP: {
            char *end;
            errno = 0;
            long n = strtol(vals[0], &end, 10);
            if (errno || end == vals[0] || *end != '\0' || n < 1 || n > RUN_MAX_PROCS) {
                fprintf(stderr, "ternrun: -n needs a number of processes from 1 to %d, not '%s'\n",
                        RUN_MAX_PROCS, vals[0]);
                exit(RUN_EXIT_USAGE);
            }
            o->nprocs = (int)n;
            break;
        }
        case OPT_EXPORT:
            /* Without a value the variable is exported already: ranks inherit ternrun's
             * environment. Open MPI needs -x to cross nodes; here it only documents. */
            if (strchr(vals[0], '='))
                opt_setenv_pair("-x", vals[0]);
            else if (!opt_env_name_ok(vals[0], strlen(vals[0])))
                opt_die("-x needs VAR or VAR=value, not '%s'", vals[0]);
            break;
        case OPT_ENV:
            opt_setenv_pair("--env", vals[0]);
            break;
        case OPT_GENV:
            if (!opt_env_name_ok(vals[0], strlen(vals[0])))
                opt_die("-genv needs a variable name, not '%s'", vals[0]);
            setenv(vals[0], vals[1], 1);
            break;
        case OPT_TAG:
            o->tag_output = 1;
            break;
        case OPT_TIMEOUT:
            o->timeout = opt_seconds("--timeout", vals[0]);
            break;
        case OPT_GRACE:
            o->kill_grace = opt_seconds("--kill-grace", vals[0]);
            break;
        case OPT_INFO:
            run_info_print(stdout);
            exit(RUN_EXIT_OK);
        case OPT_HELP:
            fputs(run_usage, stdout);
            exit(RUN_EXIT_OK);
        case OPT_VERSION:
            printf("ternrun (tern) %d.%d.%d\n", TERN_VERSION_MAJOR, TERN_VERSION_MINOR,
                   TERN_VERSION_PATCH);
            exit(RUN_EXIT_OK);
        case OPT_IGNORE:
        case OPT_IGNORE_ARG:
            break;
        }
    }
    if (i >= argc) {
        fprintf(stderr, "ternrun: no program to run (usage: ternrun -n N [options] program "
                        "[args...])\n");
        exit(RUN_EXIT_USAGE);
    }
    o->argv = argv + i;
}

/* Descriptors 0-2 must exist, or a pipe or socket could land on them and a rank's
 * dup2 onto stdout would clobber it. */
static void run_fix_std_fds(void)
{
    for (int fd = 0; fd < 3; fd++) {
        if (fcntl(fd, F_GETFD) >= 0) continue;
        int n = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
        if (n >= 0 && n != fd) close(n); /* lowest free is fd itself */
    }
}

/* Short, alphanumeric, unique: pid plus 32 random bits (the library builds shm
 * names from it, and two jobs may share a pid namespace's recycled pids). */
static void run_make_kvsname(char *buf, size_t len)
{
    unsigned r;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r = (unsigned)ts.tv_nsec ^ ((unsigned)ts.tv_sec << 12);
    }
    snprintf(buf, len, "tern%dx%08x", (int)getpid(), r);
}

int main(int argc, char **argv)
{
    struct run_job job = {.exit_code = -1, .epfd = -1, .sigfd = -1, .execerr_fd = -1};
    job.opts.nprocs = 1;
    job.opts.kill_grace = 1.0;

    run_fix_std_fds();
    const char *env_timeout = getenv("MPIEXEC_TIMEOUT"); /* before -x can change it */
    if (env_timeout && *env_timeout) job.opts.timeout = opt_seconds("MPIEXEC_TIMEOUT", env_timeout);
    opt_parse(argc, argv, &job.opts);

    char path[4096];
    int err = run_launch_resolve(job.opts.argv[0], path, sizeof path);
    if (err) {
        if (err == ENOENT && !strchr(job.opts.argv[0], '/'))
            fprintf(stderr, "ternrun: cannot find '%s' in PATH\n", job.opts.argv[0]);
        else
            fprintf(stderr, "ternrun: cannot execute '%s': %s\n", job.opts.argv[0], strerror(err));
        return err == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC;
    }
    job.path = path;
    job.size = job.opts.nprocs;
    run_make_kvsname(job.kvsname, sizeof job.kvsname);

    job.ranks = calloc((size_t)job.size, sizeof *job.ranks);
    if (job.ranks == NULL) {
        fprintf(stderr, "ternrun: out of memory for %d ranks\n", job.size);
        return RUN_EXIT_FAIL;
    }
    for (int i = 0; i < job.size; i++) {
        job.ranks[i].rank = i;
        job.ranks[i].pmi_fd = -1;
        job.ranks[i].out[0].fd = job.ranks[i].out[1].fd = -1;
    }

    /* Up to three descriptors per rank; ranks get the limit they would have had. */
    getrlimit(RLIMIT_NOFILE, &job.orig_nofile);
    struct rlimit nofile = job.orig_nofile;
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);

    /* Adopt what ranks leave behind, so ending the job can end it too. */
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    /* A rank that closed its PMI socket must cost an EPIPE, not ternrun's life. */
    struct sigaction ign = {.sa_handler = SIG_IGN};
    sigaction(SIGPIPE, &ign, &job.orig_sigpipe);

    sigemptyset(&job.sigmask);
    sigaddset(&job.sigmask, SIGCHLD);
    sigaddset(&job.sigmask, SIGINT);
    sigaddset(&job.sigmask, SIGTERM);
    sigaddset(&job.sigmask, SIGUSR1);
    sigaddset(&job.sigmask, SIGUSR2);
    /* Under nohup, SIGHUP stays ignored, for ternrun as for the ranks. */
    struct sigaction hup;
    if (sigaction(SIGHUP, NULL, &hup) == 0 && hup.sa_handler != SIG_IGN)
        sigaddset(&job.sigmask, SIGHUP);
    sigprocmask(SIG_BLOCK, &job.sigmask, &job.orig_sigmask);
    job.sigfd = signalfd(-1, &job.sigmask, SFD_NONBLOCK | SFD_CLOEXEC);
    job.devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (job.sigfd < 0 || job.devnull < 0) {
        fprintf(stderr, "ternrun: cannot set up: %s\n", strerror(errno));
        return RUN_EXIT_FAIL;
    }

    int code = run_job_run(&job);
    close(job.sigfd);
    close(job.devnull);
    free(job.ranks);
    return code;
}

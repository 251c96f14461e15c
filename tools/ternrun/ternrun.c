/*
 * ternrun.c - command line and process setup of the launcher.
 *
 *   ternrun -n N [options] program [args...]
 *   ternrun --host a:2,b:2 [options] program [args...]
 *   ternrun --proxy      (internal: started on another host by the launch agent)
 *
 * Options follow both mpirun (Open MPI) and mpiexec (MPICH) spellings, so scripts
 * written for either run unchanged; unknown options are refused (exit 2) rather
 * than passed on, because a misspelt option would otherwise become the program.
 */
#include <errno.h>
#include <limits.h>
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
#include "util/tunables.h"

#define RUN_MAX_PROCS 65536

static const char run_usage[] =
    "usage: ternrun -n N [options] program [args...]\n"
    "\n"
    "Start N processes of program on this machine, or across hosts, and serve them\n"
    "PMI-1.\n"
    "\n"
    "  -n, -np N             number of processes (default 1, or every slot of the hosts)\n"
    "  -H, --host LIST       hosts as a:2,b:2 or a,a,b (host:slots); ranks go by blocks\n"
    "                        in host order; this machine's name or localhost runs locally\n"
    "  --hostfile FILE       hosts, one a line: 'host', 'host:N' or 'host slots=N'; # comments\n"
    "  --launch-agent CMD    how to start the proxy on a host, with {host} in CMD\n"
    "                        (default: ssh -o BatchMode=yes {host})\n"
    "  -x VAR[=value]        export VAR to the ranks (with a value: set it first)\n"
    "  --env VAR=value       set VAR for the ranks\n"
    "  -genv, -env VAR value set VAR for the ranks (MPICH spelling)\n"
    "  --tag-output, -l      prefix each output line of rank r with \"[r] \"\n"
    "  --timeout SECONDS     end the job after SECONDS, exit 124 (also MPIEXEC_TIMEOUT),\n"
    "                        after a report of what every rank is blocked in, with stacks\n"
    "  --report-on-timeout   print that report on timeout (the default)\n"
    "  --no-report-on-timeout  end a timed-out job without the report\n"
    "  --kill-grace SECONDS  wait between SIGTERM and SIGKILL when ending a job (1)\n"
    "  --trace DIR           every rank records its calls and messages in DIR (TERN_TRACE);\n"
    "                        DIR/traces.otf2 is made at the end when tern-otf2 was built\n"
    "  --mpi-abi mpich       run programs built against MPICH (libmpi.so.12, mpi4py):\n"
    "                        put tern's libmpi.so.12 / libmpich.so.12 first on\n"
    "                        LD_LIBRARY_PATH\n"
    "  --mpi-abi standard    run programs built against the MPI 5.0 standard ABI\n"
    "                        (mpicc_abi, libmpi_abi.so.1): put tern's libmpi_abi.so.1\n"
    "                        first on LD_LIBRARY_PATH\n"
    "  --info                version, tunables, and what this machine allows\n"
    "  -h, --help            this text\n"
    "  -V, --version         the version\n"
    "  --oversubscribe       allow more processes than the hosts have slots\n"
    "  --bind-to X           bind each rank to a core, hwthread, l3cache, numa, socket, or\n"
    "                        none (default: core when the host's ranks fit on its allowed\n"
    "                        cores, else hwthread when they fit on its threads, else none)\n"
    "  --map-by X[:PE=n]     deal ranks round-robin over core, hwthread, l3cache, numa,\n"
    "                        socket or slot; PE=n gives each rank n cores\n"
    "  --report-bindings     print each rank's binding on stderr\n"
    "  --use-hwthread-cpus   map by hardware thread\n"
    "  --allow-run-as-root   accepted for compatibility; no effect\n"
    "  --                    end of options\n"
    "\n"
    "stdin goes to rank 0 (if it runs on this machine); the others read /dev/null.\n"
    "Every rank gets PMI_FD, PMI_RANK, PMI_SIZE, TERN_LOCAL_RANK and TERN_LOCAL_SIZE;\n"
    "ranks on other hosts also get the variables named with -x, --env and -genv.\n"
    "Exit status: 0 if every rank exits 0; else that of the first failure (128+signal\n"
    "for a signal), 124 on timeout, 126/127 if program cannot run, 2 for a bad command\n"
    "line. SIGINT, SIGTERM or SIGHUP end the whole job; SIGUSR1 prints the report of\n"
    "what every rank is blocked in and lets the job go on; SIGUSR2 is passed to the ranks.\n"
    "Each rank runs in a session of its own (TERN_RANK_SESSION=0: in ternrun's); SIGTSTP\n"
    "(Ctrl-Z) stops ternrun and every rank, SIGCONT continues them.\n";

enum opt_id {
    OPT_NP,
    OPT_EXPORT,
    OPT_ENV,
    OPT_GENV,
    OPT_TAG,
    OPT_TIMEOUT,
    OPT_REPORT,
    OPT_NO_REPORT,
    OPT_GRACE,
    OPT_INFO,
    OPT_HELP,
    OPT_VERSION,
    OPT_HOST,
    OPT_HOSTFILE,
    OPT_AGENT,
    OPT_OVERSUB,
    OPT_IGNORE,
    OPT_TRACE,
    OPT_BIND,
    OPT_MAP,
    OPT_REPORT_BIND,
    OPT_HWTHREADS,
    OPT_BIND_OLD,
    OPT_PE,
    OPT_MPI_ABI,
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
    {{"--report-on-timeout", "-report-on-timeout"}, 0, OPT_REPORT},
    {{"--no-report-on-timeout"}, 0, OPT_NO_REPORT},
    {{"--kill-grace"}, 1, OPT_GRACE},
    {{"--info", "-info"}, 0, OPT_INFO},
    {{"-h", "--help", "-help"}, 0, OPT_HELP},
    {{"-V", "--version", "-version"}, 0, OPT_VERSION},
    {{"-H", "--host", "-host", "--hosts", "-hosts"}, 1, OPT_HOST},
    {{"--hostfile", "-hostfile", "--machinefile", "-machinefile", "-f"}, 1, OPT_HOSTFILE},
    {{"--launch-agent", "-launch-agent", "-launcher-exec"}, 1, OPT_AGENT},
    {{"--oversubscribe", "-oversubscribe"}, 0, OPT_OVERSUB},
    {{"--allow-run-as-root"}, 0, OPT_IGNORE},
    {{"--trace"}, 1, OPT_TRACE},
    {{"--bind-to", "-bind-to"}, 1, OPT_BIND},
    {{"--map-by", "-map-by"}, 1, OPT_MAP},
    {{"--report-bindings", "-report-bindings"}, 0, OPT_REPORT_BIND},
    {{"--use-hwthread-cpus", "-use-hwthread-cpus"}, 0, OPT_HWTHREADS},
    {{"--bind-to-core", "-bind-to-core", "--bind-to-socket", "-bind-to-socket"}, 0, OPT_BIND_OLD},
    {{"--bind-to-none", "-bind-to-none"}, 0, OPT_BIND_OLD},
    {{"--cpus-per-proc", "-cpus-per-proc", "--cpus-per-rank", "-cpus-per-rank"}, 1, OPT_PE},
    {{"--mpi-abi", "-mpi-abi"}, 1, OPT_MPI_ABI},
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

static int opt_oversubscribe;

/* Remember NAME=value for the ranks on other hosts, which do not inherit it. */
static void opt_export(struct run_opts *o, const char *name, size_t nlen, const char *val)
{
    char **v = realloc(o->env_pairs, (size_t)(o->nenv_pairs + 1) * sizeof *v);
    char *pair = malloc(nlen + strlen(val) + 2);
    if (v == NULL || pair == NULL) {
        fprintf(stderr, "ternrun: out of memory\n");
        exit(RUN_EXIT_FAIL);
    }
    memcpy(pair, name, nlen);
    pair[nlen] = '=';
    strcpy(pair + nlen + 1, val);
    o->env_pairs = v;
    o->env_pairs[o->nenv_pairs++] = pair;
}

/* VAR=value: set it in ternrun's environment, which every rank inherits. */
static void opt_setenv_pair(struct run_opts *o, const char *opt, const char *pair)
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
    opt_export(o, name, strlen(name), eq + 1);
    free(name);
}

/*
 * --mpi-abi mpich: the directory of libmpi.so.12 and libmpich.so.12 (links to libtern,
 * whose handles and constants are MPICH's) goes first on LD_LIBRARY_PATH, so programs
 * built against MPICH and mpi4py's wheel load tern. It is <libdir>/tern/mpich-abi
 * beside this ternrun's bin/ (build tree or installed prefix).
 * --mpi-abi standard: likewise <libdir>/tern/mpi-abi, holding libmpi_abi.so.1 (the MPI 5.0
 * standard ABI, src/mpi/abi), for programs built with an ABI wrapper such as mpicc_abi.
 */
static void opt_mpi_abi(struct run_opts *o, const char *abi)
{
    /* standard: the MPI 5.0 standard ABI, libmpi_abi.so.1 in <libdir>/tern/mpi-abi. */
    int std = strcmp(abi, "standard") == 0;
    if (!std && strcmp(abi, "mpich") != 0)
        opt_die("--mpi-abi knows 'mpich' and 'standard', not '%s'", abi);
    const char *sub = std ? "mpi-abi" : "mpich-abi",
               *lib = std ? "libmpi_abi.so.1" : "libmpi.so.12";
    char exe[PATH_MAX], dir[PATH_MAX + 64];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) opt_die("--mpi-abi: cannot find ternrun's own path%s", "");
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0'; /* .../bin */
    static const char *const libdirs[] = {TERN_RUN_LIBDIR, "lib"};
    int found = 0;
    for (size_t k = 0; k < sizeof libdirs / sizeof libdirs[0] && !found; k++) {
        snprintf(dir, sizeof dir, "%s/../%s/tern/%s", exe, libdirs[k], sub);
        char probe[sizeof dir + 32];
        snprintf(probe, sizeof probe, "%s/%s", dir, lib);
        found = access(probe, R_OK) == 0;
    }
    if (!found) {
        fprintf(stderr, "ternrun: --mpi-abi: no %s in %s\n", lib, dir);
        exit(RUN_EXIT_FAIL);
    }
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t len = strlen(dir) + (old ? strlen(old) : 0) + 2;
    char *path = malloc(len);
    if (path == NULL) opt_die("out of memory%s", "");
    snprintf(path, len, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "");
    if (setenv("LD_LIBRARY_PATH", path, 1) != 0) opt_die("cannot set LD_LIBRARY_PATH%s", "");
    opt_export(o, "LD_LIBRARY_PATH", strlen("LD_LIBRARY_PATH"), path);
    free(path);
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
    int i, info = 0, hwthreads = 0;
    const char *bind = NULL, *map = NULL;
    char pe_map[64];
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
            o->nprocs_given = 1;
            break;
        }
        case OPT_EXPORT:
            /* Without a value the variable is exported already to local ranks, which
             * inherit ternrun's environment; ranks on other hosts get it sent. */
            if (strchr(vals[0], '='))
                opt_setenv_pair(o, "-x", vals[0]);
            else if (!opt_env_name_ok(vals[0], strlen(vals[0])))
                opt_die("-x needs VAR or VAR=value, not '%s'", vals[0]);
            else if (getenv(vals[0]))
                opt_export(o, vals[0], strlen(vals[0]), getenv(vals[0]));
            break;
        case OPT_ENV:
            opt_setenv_pair(o, "--env", vals[0]);
            break;
        case OPT_GENV:
            if (!opt_env_name_ok(vals[0], strlen(vals[0])))
                opt_die("-genv needs a variable name, not '%s'", vals[0]);
            setenv(vals[0], vals[1], 1);
            opt_export(o, vals[0], strlen(vals[0]), vals[1]);
            break;
        case OPT_HOST:
        case OPT_HOSTFILE: {
            char err[512];
            int rc = d->id == OPT_HOST ? run_hosts_parse_list(&o->hosts, vals[0], err, sizeof err)
                                       : run_hosts_parse_file(&o->hosts, vals[0], err, sizeof err);
            if (rc != 0) {
                fprintf(stderr, "ternrun: %s\n", err);
                exit(RUN_EXIT_USAGE);
            }
            break;
        }
        case OPT_AGENT:
            if (strspn(vals[0], " \t") == strlen(vals[0]))
                opt_die("--launch-agent needs a command, not '%s'", vals[0]);
            o->launch_agent = vals[0];
            break;
        case OPT_OVERSUB:
            opt_oversubscribe = 1;
            break;
        case OPT_TAG:
            o->tag_output = 1;
            break;
        case OPT_TIMEOUT:
            o->timeout = opt_seconds("--timeout", vals[0]);
            break;
        case OPT_REPORT:
            o->no_report = 0;
            break;
        case OPT_NO_REPORT:
            o->no_report = 1;
            break;
        case OPT_GRACE:
            o->kill_grace = opt_seconds("--kill-grace", vals[0]);
            break;
        case OPT_INFO:
            info = 1; /* after the whole line: --bind-to and -n that follow count */
            break;
        case OPT_HELP:
            fputs(run_usage, stdout);
            exit(RUN_EXIT_OK);
        case OPT_VERSION:
            printf("ternrun (tern) %d.%d.%d\n", TERN_VERSION_MAJOR, TERN_VERSION_MINOR,
                   TERN_VERSION_PATCH);
            exit(RUN_EXIT_OK);
        case OPT_IGNORE:
            break;
        case OPT_BIND:
            bind = vals[0];
            break;
        case OPT_MAP:
            map = vals[0];
            break;
        case OPT_REPORT_BIND:
            o->report_bindings = 1;
            break;
        case OPT_HWTHREADS:
            hwthreads = 1;
            break;
        case OPT_BIND_OLD: /* Open MPI 1.x: --bind-to-core, --bind-to-socket, --bind-to-none */
            bind = a + strspn(a, "-") + strlen("bind-to-");
            break;
        case OPT_PE: /* Open MPI's older spelling of --map-by core:PE=n */
            if (snprintf(pe_map, sizeof pe_map, "%.30s:PE=%.20s", map ? map : "core", vals[0]) < 0)
                pe_map[0] = '\0';
            map = pe_map;
            break;
        case OPT_TRACE: /* every rank traces into DIR (docs/TRACING.md) */
            if ((o->trace_dir = run_trace_prepare(vals[0])) == NULL)
                opt_die("--trace needs a directory, not '%s'", vals[0]);
            setenv("TERN_TRACE", o->trace_dir, 1);
            opt_export(o, "TERN_TRACE", strlen("TERN_TRACE"), o->trace_dir);
            break;
        case OPT_MPI_ABI:
            opt_mpi_abi(o, vals[0]);
            break;
        }
    }
    run_bind_setup(o, bind, map, hwthreads);
    if (info) {
        run_info_print(stdout, o, o->nprocs_given ? o->nprocs : 0);
        exit(RUN_EXIT_OK);
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

/*
 * Place the ranks on the hosts by blocks, in host order, and describe the layout
 * as PMI_process_mapping. Hosts left without ranks are dropped.
 */
static void run_place(struct run_job *job)
{
    struct run_hostlist *hl = &job->opts.hosts;
    long slots = run_hosts_slots(hl);
    if (!job->opts.nprocs_given)
        job->opts.nprocs = slots > RUN_MAX_PROCS ? RUN_MAX_PROCS : (int)slots;
    int n = job->opts.nprocs;
    if (n > slots && !opt_oversubscribe) {
        fprintf(stderr,
                "ternrun: %d processes but the hosts have only %ld slots "
                "(add slots, or --oversubscribe)\n",
                n, slots);
        exit(RUN_EXIT_USAGE);
    }
    int *count = calloc((size_t)hl->n, sizeof *count);
    job->hosts = calloc((size_t)hl->n, sizeof *job->hosts);
    if (count == NULL || job->hosts == NULL) {
        fprintf(stderr, "ternrun: out of memory\n");
        exit(RUN_EXIT_FAIL);
    }
    int left = n;
    for (int i = 0; i < hl->n && left > 0; i++) {
        count[i] = hl->v[i].slots < left ? hl->v[i].slots : left;
        left -= count[i];
    }
    for (int i = 0; left > 0; i = (i + 1) % hl->n, left--) /* oversubscribed: cyclic */
        count[i]++;
    int first = 0;
    size_t mlen = (size_t)snprintf(job->mapping, sizeof job->mapping, "(vector");
    for (int i = 0; i < hl->n; i++) {
        if (count[i] == 0) continue;
        struct run_host *h = &job->hosts[job->nhosts];
        h->name = hl->v[i].name;
        h->first = first;
        h->count = count[i];
        h->local = run_remote_is_local(h->name);
        h->ctl_fd = h->q.fd = -1;
        first += count[i];
        job->nhosts++;
    }
    /* Consecutive hosts with as many ranks share one (start,nodes,ppn) entry. */
    for (int i = 0; i < job->nhosts;) {
        int k = 1;
        while (i + k < job->nhosts && job->hosts[i + k].count == job->hosts[i].count)
            k++;
        mlen += (size_t)snprintf(job->mapping + mlen,
                                 mlen < sizeof job->mapping ? sizeof job->mapping - mlen : 0,
                                 ",(%d,%d,%d)", i, k, job->hosts[i].count);
        i += k;
    }
    if (mlen + 2 > sizeof job->mapping) {
        fprintf(stderr,
                "ternrun: the layout of %d hosts is too irregular to describe in "
                "PMI_process_mapping\n",
                job->nhosts);
        exit(RUN_EXIT_USAGE);
    }
    strcat(job->mapping, ")");
    free(count);
}

int main(int argc, char **argv)
{
    struct run_job job = {.exit_code = -1, .epfd = -1, .sigfd = -1, .execerr_fd = -1, .up_fd = -1};
    job.opts.nprocs = 1;
    job.opts.kill_grace = 1.0;
    job.up.fd = -1;

    run_fix_std_fds();
    int proxy = argc == 2 && strcmp(argv[1], "--proxy") == 0;
    char path[4096];
    if (!proxy) {
        const char *env_timeout = getenv("MPIEXEC_TIMEOUT"); /* before -x can change it */
        if (env_timeout && *env_timeout)
            job.opts.timeout = opt_seconds("MPIEXEC_TIMEOUT", env_timeout);
        opt_parse(argc, argv, &job.opts);
        if (job.opts.hosts.n > 0) run_place(&job);

        int any_local = job.nhosts == 0;
        for (int i = 0; i < job.nhosts; i++)
            any_local |= job.hosts[i].local;
        /* The program is looked for here only if it runs here; proxies look for it
         * on their hosts. */
        int err = any_local ? run_launch_resolve(job.opts.argv[0], path, sizeof path) : 0;
        if (err) {
            if (err == ENOENT && !strchr(job.opts.argv[0], '/'))
                fprintf(stderr, "ternrun: cannot find '%s' in PATH\n", job.opts.argv[0]);
            else
                fprintf(stderr, "ternrun: cannot execute '%s': %s\n", job.opts.argv[0],
                        strerror(err));
            return err == ENOENT ? RUN_EXIT_NOTFOUND : RUN_EXIT_NOEXEC;
        }
        job.path = any_local ? path : job.opts.argv[0];
        job.size = job.nranks = job.opts.nprocs;
        run_make_kvsname(job.kvsname, sizeof job.kvsname);

        job.ranks = calloc((size_t)job.size, sizeof *job.ranks);
        if (job.ranks == NULL) {
            fprintf(stderr, "ternrun: out of memory for %d ranks\n", job.size);
            return RUN_EXIT_FAIL;
        }
        for (int i = 0; i < job.size; i++) {
            job.ranks[i].rank = i;
            job.ranks[i].lrank = i;
            job.ranks[i].lsize = job.size;
            job.ranks[i].pmi_fd = -1;
            job.ranks[i].out[0].fd = job.ranks[i].out[1].fd = -1;
        }
        for (int h = 0; h < job.nhosts; h++) {
            struct run_host *ho = &job.hosts[h];
            for (int i = ho->first; i < ho->first + ho->count; i++) {
                job.ranks[i].host = ho;
                job.ranks[i].lrank = i - ho->first;
                job.ranks[i].lsize = ho->count;
            }
        }
        job.stdin_rank = job.nhosts == 0 || job.hosts[0].local ? 0 : -1;
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
    /* Ranks in sessions of their own miss the terminal's Ctrl-Z: ternrun passes it on. */
    if (!proxy && util_tun.rank_session) {
        sigaddset(&job.sigmask, SIGTSTP);
        sigaddset(&job.sigmask, SIGCONT);
    }
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

    int code = proxy ? run_proxy_main(&job) : run_job_run(&job);
    if (!proxy && job.opts.trace_dir) run_trace_finish(job.opts.trace_dir);
    close(job.sigfd);
    close(job.devnull);
    free(job.ranks);
    free(job.hosts);
    if (job.topo) topo_free(job.topo);
    free(job.topo);
    free(job.bindings);
    run_hosts_free(&job.opts.hosts);
    for (int i = 0; i < job.opts.nenv_pairs; i++)
        free(job.opts.env_pairs[i]);
    free(job.opts.env_pairs);
    return code;
}

/*
 * info.c - `ternrun --info`: the version, every TERN_* tunable, and what this
 * machine allows the library to do (cores, /dev/shm space, single-copy transfers).
 *
 * Cross-memory attach is tested for real rather than guessed from settings: the
 * answer depends on Yama, capabilities, seccomp filters of container runtimes and
 * the kernel build, and only an actual process_vm_readv between two sibling
 * processes - the relation ranks of one job have - says what the shm transport
 * will get.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tern.h"
#include "ternrun.h"
#include "transport/transport.h"
#include "util/tunables.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER 0x59616d61
#endif
#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY ((unsigned long)-1)
#endif

#define INFO_MAGIC 0x7465726e5f636d61ull /* "tern_cma" */

/* The word the reader child copies out of the target child's memory. */
static volatile unsigned long long info_cma_word;

/* Reader's exit codes: 0 read the magic, 1..99 the errno of the failure. */
#define INFO_CMA_WRONG 100
#define INFO_CMA_OTHER 101

/*
 * Fork a target and a reader (siblings) and let the reader copy a word out of the
 * target. With `allow_any`, the target first allows any process to trace it, as
 * the library can with prctl(PR_SET_PTRACER). Returns 0 if the read worked, else an
 * errno value (or -1 if the test itself could not run).
 */
static int info_cma_try(int allow_any)
{
    int ready[2], done[2];
    if (pipe2(ready, O_CLOEXEC) != 0) return -1;
    if (pipe2(done, O_CLOEXEC) != 0) {
        close(ready[0]);
        close(ready[1]);
        return -1;
    }
    pid_t target = fork();
    if (target == 0) {
        char c = 0;
        info_cma_word = INFO_MAGIC;
        if (allow_any) prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
        close(done[1]);
        if (write(ready[1], &c, 1) != 1) _exit(1);
        /* Wait until the parent closes `done`, i.e. the reader is finished. */
        while (read(done[0], &c, 1) < 0 && errno == EINTR) {
        }
        _exit(0);
    }
    close(ready[1]);
    close(done[0]);
    int result = -1;
    char c;
    if (target > 0 && read(ready[0], &c, 1) == 1) {
        pid_t reader = fork();
        if (reader == 0) {
            unsigned long long v = 0;
            struct iovec local = {&v, sizeof v};
            struct iovec remote = {(void *)&info_cma_word, sizeof v};
            ssize_t n = process_vm_readv(target, &local, 1, &remote, 1, 0);
            if (n == (ssize_t)sizeof v) _exit(v == INFO_MAGIC ? 0 : INFO_CMA_WRONG);
            _exit(n < 0 && errno > 0 && errno < INFO_CMA_WRONG ? errno : INFO_CMA_OTHER);
        }
        int st;
        if (reader > 0 && waitpid(reader, &st, 0) == reader && WIFEXITED(st)) {
            int code = WEXITSTATUS(st);
            result = code == 0                ? 0
                     : code < INFO_CMA_WRONG  ? code
                     : code == INFO_CMA_WRONG ? EIO
                                              : -1;
        }
    }
    close(ready[0]);
    close(done[1]); /* releases the target */
    if (target > 0) waitpid(target, NULL, 0);
    return result;
}

static void info_print_cma(FILE *out)
{
    const char *label = "cross-memory attach (process_vm_readv) between sibling ranks:";
    int plain = info_cma_try(0);
    if (plain == 0) {
        fprintf(out, "  %s permitted (single-copy large messages on shm)\n", label);
        return;
    }
    if (plain < 0) {
        fprintf(out, "  %s unknown (the test could not run)\n", label);
        return;
    }
    int any = info_cma_try(1);
    if (any == 0)
        fprintf(out, "  %s permitted once a rank calls prctl(PR_SET_PTRACER) (plain: %s)\n", label,
                strerror(plain));
    else
        fprintf(out, "  %s NOT permitted (%s); shm copies through shared cells\n", label,
                strerror(plain));
}

static void info_print_cores(FILE *out)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t set;
    int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : -1;
    fprintf(out, "  cores: %ld online, %d usable by this process", online, usable);
    /* cgroup v2 CPU quota, the usual limit of a CI container: "max 100000" or "Q P". */
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "re");
    if (f) {
        long quota, period;
        if (fscanf(f, "%ld %ld", &quota, &period) == 2 && period > 0)
            fprintf(out, ", cgroup quota %.2f CPUs", (double)quota / (double)period);
        fclose(f);
    }
    fputc('\n', out);
}

static void info_print_shm(FILE *out)
{
    struct statvfs vfs;
    if (statvfs("/dev/shm", &vfs) != 0) {
        fprintf(out, "  /dev/shm: unavailable (%s)\n", strerror(errno));
        return;
    }
    double mib = 1024.0 * 1024.0;
    fprintf(out, "  /dev/shm: %.1f MiB total, %.1f MiB free\n",
            (double)vfs.f_blocks * (double)vfs.f_frsize / mib,
            (double)vfs.f_bavail * (double)vfs.f_frsize / mib);
}

static void info_print_ptrace_scope(FILE *out)
{
    static const char *const meaning[] = {
        "classic: any process of the same user may be read",
        "restricted: only descendants, or processes that allow it with PR_SET_PTRACER",
        "admin-only: only with CAP_SYS_PTRACE",
        "no attach at all",
    };
    FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
    if (f == NULL) {
        fprintf(out, "  ptrace_scope: not present (no Yama; ordinary ptrace rules apply)\n");
        return;
    }
    int v = -1;
    if (fscanf(f, "%d", &v) != 1) v = -1;
    fclose(f);
    fprintf(out, "  ptrace_scope: %d (%s)\n", v, v >= 0 && v <= 3 ? meaning[v] : "unknown");
}

void run_info_print(FILE *out, const struct run_opts *o, int nprocs)
{
    fprintf(out, "ternrun (tern) %d.%d.%d\n\n", TERN_VERSION_MAJOR, TERN_VERSION_MINOR,
            TERN_VERSION_PATCH);
    fprintf(out, "Tunables (environment variables read by libtern):\n");
    util_tunables_print(out);
    fprintf(out, "\nThis machine:\n");
    info_print_cores(out);
    info_print_shm(out);
    fflush(out); /* before forking the test children, so nothing is printed twice */
    info_print_cma(out);
    info_print_ptrace_scope(out);
    fprintf(out, "  running as: uid %d%s\n", (int)getuid(),
            getuid() == 0 ? " (root; allowed, and root may read any process)" : "");
    run_bind_info(out, o, nprocs);
    fprintf(out, "\nFabric (libfabric, loaded for this listing only):\n");
    fflush(out);
    tl_fabric_info(out);
}

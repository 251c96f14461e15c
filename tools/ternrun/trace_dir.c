/*
 * trace_dir.c - ternrun --trace DIR: the ranks trace into DIR (TERN_TRACE, exported to
 * every host), and when the job ends DIR/traces.otf2 is made from their files by
 * tern-otf2, if that converter was built (it needs libotf2) and sits next to ternrun.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ternrun.h"

const char *run_trace_prepare(const char *dir)
{
    if (dir[0] == '\0') return NULL;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "ternrun: --trace: cannot make directory %s: %s\n", dir, strerror(errno));
        exit(RUN_EXIT_USAGE);
    }
    static char abs[PATH_MAX];
    if (realpath(dir, abs) == NULL) {
        fprintf(stderr, "ternrun: --trace: %s: %s\n", dir, strerror(errno));
        exit(RUN_EXIT_USAGE);
    }
    return abs;
}

void run_trace_finish(const char *dir)
{
    char self[PATH_MAX], conv[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0) return;
    self[n] = '\0';
    char *slash = strrchr(self, '/');
    if (slash == NULL) return;
    *slash = '\0';
    snprintf(conv, sizeof conv, "%s/tern-otf2", self);
    if (access(conv, X_OK) != 0) return; /* built without libotf2: the binary files remain */
    pid_t pid = fork();
    if (pid < 0) return;
    if (pid == 0) {
        execl(conv, conv, "--quiet", dir, (char *)NULL);
        _exit(127);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        fprintf(stderr,
                "ternrun: --trace: tern-otf2 could not convert %s (the per-rank files "
                "remain)\n",
                dir);
}

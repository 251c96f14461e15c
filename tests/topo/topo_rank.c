/*
 * topo_rank.c - a rank of topo_test.sh: after tern_init (so a binding the library might add
 * is in place too) it prints the CPUs it may run on, then checks that its peers are alive
 * by an allreduce of a known sum.
 *
 *   "rank R cpus LIST" on stdout, exit 0; exit 1 on a failed call or a wrong sum.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tern.h"

int main(int argc, char **argv)
{
    if (tern_init(&argc, &argv) != TERN_OK) return 1;
    int rank = tern_rank(), size = tern_size();
    char line[512], cpus[512] = "?";
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
            char *v = line + 18;
            v += strspn(v, " \t");
            v[strcspn(v, "\n")] = '\0';
            snprintf(cpus, sizeof cpus, "%s", v);
        }
    if (f) fclose(f);
    int64_t mine = rank + 1, sum = 0;
    int rc = tern_allreduce(&mine, &sum, 1, TERN_INT64, TERN_SUM, TERN_COMM_WORLD);
    if (rc != TERN_OK || sum != (int64_t)size * (size + 1) / 2) {
        fprintf(stderr, "rank %d: allreduce %s, sum %lld\n", rank, tern_err_name(rc),
                (long long)sum);
        return 1;
    }
    printf("rank %d cpus %s\n", rank, cpus);
    return tern_finalize() == TERN_OK ? 0 : 1;
}

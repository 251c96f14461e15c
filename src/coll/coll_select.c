/*
 * coll_select.c - which algorithm runs: the one table of thresholds, and the
 * TERN_COLL_<OP> variables that force a choice (declared in util/tunables.def).
 *
 * The size that drives each choice ("bytes" below):
 *   bcast                 the message
 *   reduce, allreduce     the vector (count * element size)
 *   gather, scatter       the whole root buffer (size * bytes)
 *   allgather             the whole result (size * bytes)
 *   alltoall              one block (bytes sent to one process)
 *   reduce_scatter        the whole input vector
 * The values follow the usual latency/bandwidth crossovers (MPICH's defaults) checked
 * against bench/tern_coll on shared memory; algorithms that need a power of two or a
 * commutative op fall back inside their builders, so every forced choice works.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "util/tunables.h"

struct coll_rule {
    enum coll_kind kind;
    int min_procs, max_procs;
    size_t max_bytes;
    enum coll_alg alg;
};

#define ANYP 0, INT_MAX
#define ANYB SIZE_MAX

/* Communicators spanning nodes with several ranks on some node look here first when
 * TERN_COLL_HIER=1 (off by default): shared memory inside each node, one leader per node
 * between them (a forced algorithm gives the flat schedules of the main table).
 * bench/hier_netns.sh (2 namespaces x 4 ranks, loaded), in its one run where hierarchical
 * won at small sizes: it lost for allreduce of 1 MiB (0.75x) and reduce from 1 KiB
 * (0.3-0.9x), where one leader per node carries the node's whole vector while the flat
 * schedules spread the bytes over every rank; hence the size limits. */
static const struct coll_rule coll_rules_multinode[] = {
    {COLL_BARRIER, ANYP, ANYB, COLL_ALG_HIER},
    {COLL_BCAST, ANYP, ANYB, COLL_ALG_HIER},
    {COLL_REDUCE, ANYP, 512, COLL_ALG_HIER},
    {COLL_ALLREDUCE, ANYP, 64 << 10, COLL_ALG_HIER},
};

/* Ranks outnumbering the node's cores (core.oversubscribed) once had their own rule here,
 * Bruck for all-to-all blocks up to 2 KiB, measured only on a loaded machine with waits that
 * slept right after spinning. Since an all-to-all's waits yield first (CORE_WAIT_BULK,
 * core/wait.h), the main table's windowed linear schedule beats it, quiet and loaded:
 * 2 KiB blocks at 32 / 64 / 128 ranks on 2 cores, quiet, 2.8-3.6 / 15.3-16.2 / 61-67 ms
 * per call vs Bruck's 3.6-4.2 / 17.4-22.4 / 76-79 ms; with 8 busy loops beside, 10-12 /
 * 30-31 ms vs 46 / 75-81 ms at 32 / 64 (docs/PERFORMANCE.md). */

/* First matching line wins. */
static const struct coll_rule coll_rules[] = {
    {COLL_BARRIER, ANYP, ANYB, COLL_ALG_DISSEMINATION},

    {COLL_BCAST, 0, 7, ANYB, COLL_ALG_BINOMIAL},
    {COLL_BCAST, ANYP, 12 << 10, COLL_ALG_BINOMIAL},
    {COLL_BCAST, ANYP, 512 << 10, COLL_ALG_SCATTER_RD},
    {COLL_BCAST, ANYP, ANYB, COLL_ALG_SCATTER_RING},

    {COLL_REDUCE, 0, 2, ANYB, COLL_ALG_BINOMIAL}, /* two ranks: the tree already moves n */
    {COLL_REDUCE, ANYP, 2 << 10, COLL_ALG_BINOMIAL},
    {COLL_REDUCE, ANYP, ANYB, COLL_ALG_RABENSEIFNER},

    {COLL_ALLREDUCE, ANYP, 2 << 10, COLL_ALG_RD},
    {COLL_ALLREDUCE, ANYP, 1 << 20, COLL_ALG_RABENSEIFNER},
    {COLL_ALLREDUCE, ANYP, ANYB, COLL_ALG_RING},

    {COLL_GATHER, ANYP, 64 << 10, COLL_ALG_BINOMIAL},
    {COLL_GATHER, ANYP, ANYB, COLL_ALG_LINEAR},

    {COLL_SCATTER, ANYP, 64 << 10, COLL_ALG_BINOMIAL},
    {COLL_SCATTER, ANYP, ANYB, COLL_ALG_LINEAR},

    {COLL_ALLGATHER, ANYP, 80 << 10, COLL_ALG_RD}, /* bruck when not a power of two */
    {COLL_ALLGATHER, ANYP, ANYB, COLL_ALG_RING},

    {COLL_ALLTOALL, 8, INT_MAX, 256, COLL_ALG_BRUCK},
    {COLL_ALLTOALL, 8, INT_MAX, 32 << 10, COLL_ALG_LINEAR}, /* windows of 32 peers */
    {COLL_ALLTOALL, ANYP, ANYB, COLL_ALG_PAIRWISE},

    {COLL_REDUCE_SCATTER, ANYP, 512 << 10, COLL_ALG_RH},
    {COLL_REDUCE_SCATTER, ANYP, ANYB, COLL_ALG_PAIRWISE},

    {COLL_SCAN, ANYP, ANYB, COLL_ALG_RD},
};

static const char *const coll_alg_names[COLL_NALGS] = {
    [COLL_ALG_AUTO] = "auto",
    [COLL_ALG_DISSEMINATION] = "dissemination",
    [COLL_ALG_BINOMIAL] = "binomial",
    [COLL_ALG_SCATTER_RING] = "scatter_ring",
    [COLL_ALG_SCATTER_RD] = "scatter_recursive_doubling",
    [COLL_ALG_LINEAR] = "linear",
    [COLL_ALG_RD] = "recursive_doubling",
    [COLL_ALG_RABENSEIFNER] = "rabenseifner",
    [COLL_ALG_RING] = "ring",
    [COLL_ALG_BRUCK] = "bruck",
    [COLL_ALG_PAIRWISE] = "pairwise",
    [COLL_ALG_RH] = "recursive_halving",
    [COLL_ALG_HIER] = "hierarchical",
};

/* The variable of each collective and the algorithms it may name. */
#define COLL_VAR_NALGS 5
static const struct {
    const char *env;
    size_t offset; /* of the value in util_tun */
    enum coll_alg algs[COLL_VAR_NALGS];
} coll_vars[COLL_NKINDS] = {
#define V(field) offsetof(struct util_tunables, field)
    [COLL_BARRIER] = {"TERN_COLL_BARRIER",
                      V(coll_barrier),
                      {COLL_ALG_DISSEMINATION, COLL_ALG_HIER}},
    [COLL_BCAST] = {"TERN_COLL_BCAST",
                    V(coll_bcast),
                    {COLL_ALG_BINOMIAL, COLL_ALG_SCATTER_RING, COLL_ALG_SCATTER_RD, COLL_ALG_HIER}},
    [COLL_REDUCE] = {"TERN_COLL_REDUCE",
                     V(coll_reduce),
                     {COLL_ALG_BINOMIAL, COLL_ALG_RABENSEIFNER, COLL_ALG_HIER}},
    [COLL_ALLREDUCE] = {"TERN_COLL_ALLREDUCE",
                        V(coll_allreduce),
                        {COLL_ALG_RD, COLL_ALG_RABENSEIFNER, COLL_ALG_RING, COLL_ALG_HIER}},
    [COLL_GATHER] = {"TERN_COLL_GATHER", V(coll_gather), {COLL_ALG_BINOMIAL, COLL_ALG_LINEAR}},
    [COLL_SCATTER] = {"TERN_COLL_SCATTER", V(coll_scatter), {COLL_ALG_BINOMIAL, COLL_ALG_LINEAR}},
    [COLL_ALLGATHER] = {"TERN_COLL_ALLGATHER",
                        V(coll_allgather),
                        {COLL_ALG_RD, COLL_ALG_BRUCK, COLL_ALG_RING}},
    [COLL_ALLTOALL] = {"TERN_COLL_ALLTOALL",
                       V(coll_alltoall),
                       {COLL_ALG_BRUCK, COLL_ALG_PAIRWISE, COLL_ALG_LINEAR}},
    [COLL_REDUCE_SCATTER] = {"TERN_COLL_REDUCE_SCATTER",
                             V(coll_reduce_scatter),
                             {COLL_ALG_RH, COLL_ALG_PAIRWISE}},
    [COLL_SCAN] = {"TERN_COLL_SCAN", V(coll_scan), {COLL_ALG_RD}},
#undef V
};

/* Parsed once, at the first collective: -1 bad name, 0 auto, else the algorithm. */
static int coll_forced_alg[COLL_NKINDS];
static int coll_parsed;

/*
 * The tuning file (TERN_TUNING): rules in the form of coll_rules, consulted first, one
 * per line:
 *     <collective> <procs> <bytes> <algorithm>
 * with <procs> "any", "N" or "N-M", <bytes> "any" or "<=SIZE" (a number with an
 * optional k/m/g suffix), '#' starting a comment. The first matching line of the file
 * wins; a size no line covers falls back to the built-in table.
 */
#define COLL_TUNING_MAX 256
static struct coll_rule coll_tuned[COLL_TUNING_MAX];
static int coll_ntuned;
static int coll_tuning_bad; /* the file could not be used: every collective fails */

static const char *const coll_kind_names[COLL_NKINDS] = {
    [COLL_BARRIER] = "barrier",
    [COLL_BCAST] = "bcast",
    [COLL_REDUCE] = "reduce",
    [COLL_ALLREDUCE] = "allreduce",
    [COLL_GATHER] = "gather",
    [COLL_SCATTER] = "scatter",
    [COLL_ALLGATHER] = "allgather",
    [COLL_ALLTOALL] = "alltoall",
    [COLL_REDUCE_SCATTER] = "reduce_scatter",
    [COLL_SCAN] = "scan",
};

static int coll_tuning_size(const char *s, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || errno) return -1;
    unsigned shift = 0;
    if (*end == 'k' || *end == 'K')
        shift = 10, end++;
    else if (*end == 'm' || *end == 'M')
        shift = 20, end++;
    else if (*end == 'g' || *end == 'G')
        shift = 30, end++;
    if (*end != '\0' || (shift && v > (SIZE_MAX >> shift))) return -1;
    *out = (size_t)(v << shift);
    return 0;
}

static int coll_tuning_line(char *line, struct coll_rule *r, const char **why)
{
    char *f[5], *save = NULL;
    int n = 0;
    for (char *t = strtok_r(line, " \t\r\n", &save); t && n < 5;
         t = strtok_r(NULL, " \t\r\n", &save))
        f[n++] = t;
    if (n == 0) return 0;
    if (n != 4) return *why = "expected: <collective> <procs> <bytes> <algorithm>", -1;
    int k = -1;
    for (int i = 0; i < COLL_NKINDS; i++)
        if (strcmp(f[0], coll_kind_names[i]) == 0) k = i;
    if (k < 0) return *why = "unknown collective", -1;
    r->kind = (enum coll_kind)k;
    if (strcmp(f[1], "any") == 0) {
        r->min_procs = 0, r->max_procs = INT_MAX;
    } else {
        char *end;
        long lo = strtol(f[1], &end, 10), hi = lo;
        if (*end == '-') hi = strtol(end + 1, &end, 10);
        if (*end != '\0' || lo < 1 || hi < lo || hi > INT_MAX)
            return *why = "process counts are any, N or N-M", -1;
        r->min_procs = (int)lo, r->max_procs = (int)hi;
    }
    if (strcmp(f[2], "any") == 0)
        r->max_bytes = SIZE_MAX;
    else if (strncmp(f[2], "<=", 2) != 0 || coll_tuning_size(f[2] + 2, &r->max_bytes))
        return *why = "sizes are any or <=SIZE (k, m, g suffixes)", -1;
    r->alg = COLL_ALG_AUTO;
    for (size_t i = 0; i < COLL_VAR_NALGS && coll_vars[k].algs[i]; i++)
        if (strcmp(f[3], coll_alg_names[coll_vars[k].algs[i]]) == 0) r->alg = coll_vars[k].algs[i];
    if (r->alg == COLL_ALG_AUTO) return *why = "not an algorithm of this collective", -1;
    return 1;
}

static void coll_tuning_load(const char *path)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr, "tern: TERN_TUNING=%s: %s\n", path, strerror(errno));
        coll_tuning_bad = 1;
        return;
    }
    char line[512];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        const char *why = NULL;
        struct coll_rule r;
        int got = coll_tuning_line(line, &r, &why);
        if (got == 0) continue;
        if (got > 0 && coll_ntuned == COLL_TUNING_MAX) why = "too many rules (256 at most)";
        if (why) {
            fprintf(stderr, "tern: TERN_TUNING=%s line %d: %s\n", path, lineno, why);
            coll_tuning_bad = 1;
            break;
        }
        coll_tuned[coll_ntuned++] = r;
    }
    fclose(f);
    if (coll_tuning_bad) coll_ntuned = 0;
}

static void coll_parse_vars(void)
{
    for (int k = 0; k < COLL_NKINDS; k++) {
        const char *v = *(const char *const *)((const char *)&util_tun + coll_vars[k].offset);
        coll_forced_alg[k] = -1;
        if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0) {
            coll_forced_alg[k] = COLL_ALG_AUTO;
            continue;
        }
        for (int i = 0; i < COLL_VAR_NALGS && coll_vars[k].algs[i]; i++)
            if (strcmp(v, coll_alg_names[coll_vars[k].algs[i]]) == 0)
                coll_forced_alg[k] = coll_vars[k].algs[i];
        if (coll_forced_alg[k] < 0) {
            /* One write, so the lines of several ranks do not interleave. */
            char msg[512];
            int n = snprintf(msg, sizeof msg,
                             "tern: %s=\"%.100s\" names no algorithm of this collective; use auto",
                             coll_vars[k].env, v);
            for (int i = 0; i < COLL_VAR_NALGS && coll_vars[k].algs[i]; i++)
                n += snprintf(msg + n, sizeof msg - (size_t)n, ", %s",
                              coll_alg_names[coll_vars[k].algs[i]]);
            fprintf(stderr, "%s\n", msg);
        }
    }
    if (util_tun.tuning && *util_tun.tuning) coll_tuning_load(util_tun.tuning);
    coll_parsed = 1;
}

const char *coll_alg_name(enum coll_alg alg)
{
    return (unsigned)alg < COLL_NALGS && coll_alg_names[alg] ? coll_alg_names[alg] : "?";
}

int coll_config_error(void)
{
    if (!coll_parsed) coll_parse_vars();
    return coll_tuning_bad ? TERN_ERR_TUNABLE : 0;
}

int coll_forced(enum coll_kind kind)
{
    if (!coll_parsed) coll_parse_vars();
    return coll_forced_alg[kind] != COLL_ALG_AUTO && coll_forced_alg[kind] != COLL_ALG_HIER;
}

/* The first of n rules that matches (kind, bytes, p): its algorithm in *alg, 1; else 0. */
static int coll_rule_find(const struct coll_rule *rules, size_t n, enum coll_kind kind,
                          size_t bytes, int p, enum coll_alg *alg)
{
    for (size_t i = 0; i < n; i++) {
        const struct coll_rule *r = &rules[i];
        if (r->kind == kind && p >= r->min_procs && p <= r->max_procs && bytes <= r->max_bytes) {
            *alg = r->alg;
            return 1;
        }
    }
    return 0;
}

int coll_select_topo(enum coll_kind kind, size_t bytes, int p, int multinode, enum coll_alg *alg)
{
    if (!coll_parsed) coll_parse_vars();
    int f = coll_forced_alg[kind];
    if (f < 0) return TERN_ERR_TUNABLE;
    /* A forced "hierarchical" where it cannot apply leaves the choice to the table. */
    if (f > 0 && (f != COLL_ALG_HIER || multinode)) {
        *alg = (enum coll_alg)f;
        return 0;
    }
    if (coll_tuning_bad) return TERN_ERR_TUNABLE;
    /* Communicators across nodes: their own rules first; then the tuning file's, then
     * the table's (which ends every kind with a catch-all line). */
    if (multinode && coll_rule_find(coll_rules_multinode,
                                    sizeof coll_rules_multinode / sizeof coll_rules_multinode[0],
                                    kind, bytes, p, alg))
        return 0;
    if (coll_rule_find(coll_tuned, (size_t)coll_ntuned, kind, bytes, p, alg)) return 0;
    if (coll_rule_find(coll_rules, sizeof coll_rules / sizeof coll_rules[0], kind, bytes, p, alg))
        return 0;
    return TERN_ERR_INTERNAL; /* every kind ends with a catch-all line */
}

int coll_select(enum coll_kind kind, size_t bytes, int p, enum coll_alg *alg)
{
    return coll_select_topo(kind, bytes, p, 0, alg);
}

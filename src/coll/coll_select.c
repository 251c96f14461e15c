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
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* Communicators spanning nodes with several ranks on some node look here first: shared
 * memory inside each node, one leader per node between them (TERN_COLL_HIER=0 or a
 * forced algorithm gives the flat schedules of the main table). */
static const struct coll_rule coll_rules_multinode[] = {
    {COLL_BARRIER, ANYP, ANYB, COLL_ALG_HIER},
    {COLL_BCAST, ANYP, ANYB, COLL_ALG_HIER},
    {COLL_REDUCE, ANYP, ANYB, COLL_ALG_HIER},
    {COLL_ALLREDUCE, ANYP, ANYB, COLL_ALG_HIER},
};

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
static const struct {
    const char *env;
    size_t offset; /* of the value in util_tun */
    enum coll_alg algs[5];
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

static void coll_parse_vars(void)
{
    for (int k = 0; k < COLL_NKINDS; k++) {
        const char *v = *(const char *const *)((const char *)&util_tun + coll_vars[k].offset);
        coll_forced_alg[k] = -1;
        if (v == NULL || *v == '\0' || strcmp(v, "auto") == 0) {
            coll_forced_alg[k] = COLL_ALG_AUTO;
            continue;
        }
        for (int i = 0; i < 5 && coll_vars[k].algs[i]; i++)
            if (strcmp(v, coll_alg_names[coll_vars[k].algs[i]]) == 0)
                coll_forced_alg[k] = coll_vars[k].algs[i];
        if (coll_forced_alg[k] < 0) {
            /* One write, so the lines of several ranks do not interleave. */
            char msg[512];
            int n = snprintf(msg, sizeof msg,
                             "tern: %s=\"%.100s\" names no algorithm of this collective; use auto",
                             coll_vars[k].env, v);
            for (int i = 0; i < 5 && coll_vars[k].algs[i]; i++)
                n += snprintf(msg + n, sizeof msg - (size_t)n, ", %s",
                              coll_alg_names[coll_vars[k].algs[i]]);
            fprintf(stderr, "%s\n", msg);
        }
    }
    coll_parsed = 1;
}

int coll_forced(enum coll_kind kind)
{
    if (!coll_parsed) coll_parse_vars();
    return coll_forced_alg[kind] != COLL_ALG_AUTO && coll_forced_alg[kind] != COLL_ALG_HIER;
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
    size_t nm = sizeof coll_rules_multinode / sizeof coll_rules_multinode[0];
    size_t n = sizeof coll_rules / sizeof coll_rules[0];
    for (size_t i = multinode ? 0 : nm; i < nm + n; i++) {
        const struct coll_rule *r = i < nm ? &coll_rules_multinode[i] : &coll_rules[i - nm];
        if (r->kind == kind && p >= r->min_procs && p <= r->max_procs && bytes <= r->max_bytes) {
            *alg = r->alg;
            return 0;
        }
    }
    return TERN_ERR_INTERNAL; /* every kind ends with a catch-all line */
}

int coll_select(enum coll_kind kind, size_t bytes, int p, enum coll_alg *alg)
{
    return coll_select_topo(kind, bytes, p, 0, alg);
}

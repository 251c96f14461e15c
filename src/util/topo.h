/*
 * topo.h - the node's processor topology and where ranks go on it.
 *
 * The topology is read from sysfs (devices/system/cpu, devices/system/node and the
 * cgroup's cpuset), with no library: hardware threads (PUs), the cores they belong to,
 * L3 cache groups, NUMA nodes and sockets, each PU marked allowed when this process may
 * run on it (online, in the cgroup's cpuset.cpus.effective and in sched_getaffinity).
 * ternrun uses it to bind the ranks it starts; the library uses it to bind itself under
 * other launchers and to find the NUMA node its shared segments belong on. TERN_TOPO_SYSFS
 * points the reader at another tree (tests use fake machines in tests/topo/).
 *
 * Objects are numbered logically, as hwloc and Open MPI do: PUs are sorted by socket,
 * NUMA node, L3 group, core and Linux number, and each level's objects take indexes
 * 0, 1, ... in that order, so "core 3" is the fourth core of the machine whatever the
 * kernel's numbering (some machines number socket 0, socket 1, socket 0, ...).
 * Nothing here is thread-safe; a struct topo is read-only once loaded.
 */
#ifndef TERN_UTIL_TOPO_H
#define TERN_UTIL_TOPO_H

#include <sched.h>
#include <stddef.h>

/* Levels, smallest first. */
enum topo_level {
    TOPO_PU,     /* a hardware thread */
    TOPO_CORE,   /* a physical core and its hardware threads */
    TOPO_L3,     /* the PUs sharing one L3 cache (one per NUMA node when there is no L3) */
    TOPO_NUMA,   /* a NUMA node (node 0 for all when the kernel has no NUMA) */
    TOPO_SOCKET, /* a package */
    TOPO_NLEVELS
};

struct topo_pu {
    int os;                /* Linux CPU number */
    int idx[TOPO_NLEVELS]; /* logical index of its PU, core, L3 group, NUMA node, socket */
    int numa_os;           /* the kernel's number of its NUMA node (for mbind) */
    int allowed;           /* this process may run on it */
};

struct topo_cache {
    int level;   /* 1, 2, 3 */
    char type;   /* 'd' data, 'i' instruction, 'u' unified */
    long kib;    /* size of one cache, KiB */
    int sharing; /* PUs that share one (of the first PU) */
};

struct topo {
    int npu;                         /* online PUs, in logical order */
    struct topo_pu *pu;              /* npu entries */
    int count[TOPO_NLEVELS];         /* objects of each level */
    int count_allowed[TOPO_NLEVELS]; /* objects with at least one allowed PU */
    cpu_set_t allowed;               /* the allowed PUs, by Linux number */
    int cpuset_limited;              /* the cgroup's cpuset left out online PUs */
    int affinity_limited;            /* sched_getaffinity left out PUs the cpuset allows */
    struct topo_cache cache[8];      /* caches of the first PU */
    int ncache;
    char root[256]; /* the sysfs tree read */
};

/*
 * Read the topology under `root` ("/sys", or TERN_TOPO_SYSFS when NULL). `affinity` is the
 * process's CPU mask, or NULL to ask sched_getaffinity. Missing optional files are tolerated
 * (no cache information: one L3 group per NUMA node; no NUMA: one node); a tree without
 * devices/system/cpu/online or with no usable PU is TERN_ERR_UNSUPPORTED, a malformed file
 * TERN_ERR_INVAL, memory TERN_ERR_NOMEM. On failure t is empty. Free with topo_free.
 */
int topo_load(struct topo *t, const char *root, const cpu_set_t *affinity);

/* Release what topo_load allocated; t is left empty (safe to call twice). */
void topo_free(struct topo *t);

/* Level names used on command lines: "hwthread", "core", "l3cache", "numa", "socket". */
const char *topo_level_name(enum topo_level l);

/*
 * Parse a Linux CPU list ("0-3,8,10-11", blanks and a final newline allowed) into `out`.
 * Returns 0 or TERN_ERR_INVAL (syntax, or a CPU >= CPU_SETSIZE).
 */
int topo_cpulist_parse(const char *text, cpu_set_t *out);

/* Format `set` as a Linux CPU list into buf ("" for the empty set; truncated to fit). */
void topo_cpulist_format(const cpu_set_t *set, char *buf, size_t len);

/* Binding policy: where each rank of a node goes (--map-by) and what it is bound to
 * (--bind-to), as Open MPI and MPICH's Hydra spell them. */
enum topo_bind {
    TOPO_BIND_AUTO = -2, /* core when ranks fit on cores, else hwthread when they fit, else none */
    TOPO_BIND_NONE = -1,
    /* otherwise an enum topo_level */
};

struct topo_policy {
    int bind;          /* enum topo_bind or enum topo_level */
    int map;           /* enum topo_level: ranks go round-robin over these objects */
    int pe;            /* cores (or PUs) per rank, map-by ...:PE=n; 1 by default */
    int explicit_bind; /* bind was asked for (not auto): say so when it cannot be honoured */
};

/*
 * Parse a --bind-to value (core, hwthread, l3cache, numa, socket, none, auto, and the
 * synonyms people type: cpu, thread, hwthreads, cores, l3, numanode, package, board..., with
 * Open MPI's ":overload-allowed"/":if-supported" qualifiers accepted and ignored) into p->bind,
 * and a --map-by value (core, hwthread, l3cache, numa, socket, slot, node, with ":PE=n")
 * into p->map and p->pe. Either text may be NULL (left as is). Returns 0, or
 * TERN_ERR_INVAL with a sentence naming the bad value and the choices in err (the caller
 * says where the value came from); p is then unchanged.
 */
int topo_policy_parse(struct topo_policy *p, const char *bind, const char *map, char *err,
                      size_t errlen);

/* The default policy: bind auto, map by core, 1 PE. */
void topo_policy_default(struct topo_policy *p);

/* What a rank got. */
struct topo_binding {
    int bound;       /* 1: mask is what the rank must be bound to; 0: leave it unbound */
    int level;       /* enum topo_level it is bound to (when bound) */
    int obj;         /* logical index of that object (of the first, for PE > 1) */
    int oversub;     /* ranks outnumber the allowed objects the policy places them on */
    cpu_set_t mask;  /* allowed PUs the rank is bound to (when bound) */
    const char *why; /* NULL, or why a caller left unbound a rank the policy would bind */
};

/*
 * Where local rank `lrank` of `lsize` goes under policy p: the ranks are dealt round-robin
 * over the allowed objects of p->map (each takes p->pe consecutive cores, or PUs when
 * binding or mapping to hardware threads), and each is bound to the object of p->bind that
 * holds what it was dealt. When ranks outnumber cores (or PUs) a core or hwthread binding
 * is dropped (b->bound = 0, b->oversub = 1): ranks sharing one core would each wait for
 * the other's time slice, while unbound the scheduler spreads them; larger objects wrap
 * round. Returns 0 or TERN_ERR_INVAL (lrank outside 0..lsize-1).
 */
int topo_place(const struct topo *t, const struct topo_policy *p, int lrank, int lsize,
               struct topo_binding *b);

/* The policy p resolves to for lsize ranks (auto made concrete), for messages. */
int topo_policy_resolve(const struct topo *t, const struct topo_policy *p, int lsize);

/*
 * The kernel's number of the one NUMA node all PUs of `mask` belong to, reading only what
 * it needs under `root` (NULL: TERN_TOPO_SYSFS); -1 when they span nodes, the tree has one
 * node, or it cannot be read. Cheap enough for every rank's start.
 */
int topo_numa_node_of(const char *root, const cpu_set_t *mask);

/* topo_numa_node_of(NULL, this process's affinity mask): the node a bound rank lives on. */
int topo_my_numa_node(void);

/* Hardware threads per core: those of cpu 0's core under `root` (NULL: TERN_TOPO_SYSFS),
 * 1 when the tree cannot say. One small file: cheap enough for every rank's start. */
int topo_threads_per_core(const char *root);

#endif

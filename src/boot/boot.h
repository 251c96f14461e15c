/*
 * boot.h - how a process joins its job: rank, size, node layout and a key-value
 * store with a barrier, spoken to the launcher over PMI-1 (or a singleton job).
 */
#ifndef TERN_BOOT_BOOT_H
#define TERN_BOOT_BOOT_H

#include <stddef.h>

struct boot {
    int rank;
    int size;
    int singleton; /* no launcher: size 1, key-value store is local */
    int fd;        /* PMI socket, -1 for a singleton */
    char kvsname[256];
    int *node_of;   /* node index of every rank */
    int local_rank; /* my index among the ranks of my node */
    int local_size;
    int *local_ranks;         /* world ranks on my node, ascending */
    struct boot_kv *local_kv; /* singleton store */
    int ternrun;              /* the launcher is ternrun: its extensions may be used */
    int *failed_news;         /* ranks the launcher said failed, not yet taken by boot_poll */
    int nfailed_news, failed_news_cap;
    const char *volatile in_call; /* the reply a PMI call waits for (hang report), or NULL */
    struct boot_kv **cache;       /* keys taken in bulk (boot_prefetch): open addressing */
    size_t cache_cap, cache_count;
    long nrequests; /* PMI requests sent that wait for a reply (startup cost) */
};

/* Join the job. Returns 0, TERN_ERR_BOOT or TERN_ERR_NOMEM. */
int boot_init(struct boot *b);

/* Publish key=value for the others (visible after the next boot_fence). */
int boot_put(struct boot *b, const char *key, const char *val);

/* Barrier over the whole job that also makes every put visible. */
int boot_fence(struct boot *b);

/*
 * Take every key starting with `prefix` that is in the store now, in as few requests
 * as the launcher allows (ternrun's tern_getall: one per 16 KiB of keys), into a local
 * cache that boot_get reads first. Keys are never overwritten, so a cached value stays
 * right. A no-op (0) for a singleton, under launchers without the extension, or with
 * TERN_PMI_BULK=0: boot_get then asks key by key. Returns 0, TERN_ERR_BOOT for a
 * malformed or failed reply, or TERN_ERR_NOMEM.
 */
int boot_prefetch(struct boot *b, const char *prefix);

/* Read a key published by anyone before the last fence. TERN_ERR_BOOT if missing. */
int boot_get(struct boot *b, const char *key, char *val, size_t cap);

/* Tell the launcher we finished cleanly and close the connection. */
int boot_finalize(struct boot *b);

/* Ask the launcher to end the job with `code`; does not wait for the answer. */
void boot_abort(struct boot *b, int code, const char *msg);

/*
 * ternrun extensions (no-ops under other launchers, which never send such news):
 *
 * boot_tolerate: tell the launcher this process handles peer failures itself, so a
 * rank's death does not end the job once every surviving rank said so.
 *
 * boot_poll: take in, without blocking, what the launcher sent unasked: for every rank
 * it reports failed, call failed(rank). Returns TERN_ERR_PEER_FAILED when the launcher
 * itself is gone, else 0.
 */
int boot_tolerate(struct boot *b);

/* ternrun extension: this process answers hang reports (see core/diag.c) when sent
 * signal `sig`. No reply; a no-op under other launchers. */
int boot_report_ready(struct boot *b, int sig);
int boot_poll(struct boot *b, void (*failed)(int rank));

/* Release memory held by b (after finalize, or on a failed init). */
void boot_release(struct boot *b);

#endif

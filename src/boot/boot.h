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
};

/* Join the job. Returns 0, TERN_ERR_BOOT or TERN_ERR_NOMEM. */
int boot_init(struct boot *b);

/* Publish key=value for the others (visible after the next boot_fence). */
int boot_put(struct boot *b, const char *key, const char *val);

/* Barrier over the whole job that also makes every put visible. */
int boot_fence(struct boot *b);

/* Read a key published by anyone before the last fence. TERN_ERR_BOOT if missing. */
int boot_get(struct boot *b, const char *key, char *val, size_t cap);

/* Tell the launcher we finished cleanly and close the connection. */
int boot_finalize(struct boot *b);

/* Ask the launcher to end the job with `code`; does not wait for the answer. */
void boot_abort(struct boot *b, int code, const char *msg);

/*
 * Non-blocking check that the launcher is still there: TERN_ERR_PEER_FAILED if the
 * PMI connection was closed (the launcher died or is ending the job), else 0.
 */
int boot_check(struct boot *b);

/* Release memory held by b (after finalize, or on a failed init). */
void boot_release(struct boot *b);

#endif

/*
 * shmseg.h - the one way tern makes, maps and removes POSIX shared-memory segments.
 *
 * Four parts of tern share memory between the processes of a node: the shm transport's
 * inboxes, the collectives' regions, MPI windows and the SHMEM heaps and globals. Each
 * goes through these calls, so every segment
 *   - is named /tern-<job>-<kind>-<rank>-<nonce>: the job's PMI kvsname (ternrun removes
 *     every /dev/shm/tern-<job>-* entry when the job ends, however it ends), what the
 *     segment is for, the rank that made it, and 64 random bits the creator draws and
 *     hands its peers (another local user can neither guess nor pre-create the name);
 *   - is created O_CREAT | O_EXCL with mode 0600, and its pages are taken from /dev/shm
 *     at creation (posix_fallocate): a /dev/shm too small for it is a clear
 *     TERN_ERR_NOSPACE naming the size, not a SIGBUS on first touch in the middle of a run;
 *   - is attached by name only if it belongs to this user, and unlinked by its creator as
 *     soon as every peer has attached, so even kill -9 of every rank leaves nothing.
 *
 * Not thread-safe per segment; distinct segments are independent.
 */
#ifndef TERN_UTIL_SHMSEG_H
#define TERN_UTIL_SHMSEG_H

#include <stddef.h>
#include <stdint.h>

/* "/tern-" + a kvsname of up to 255 bytes + kind, rank and nonce. */
#define SHMSEG_NAME_MAX 320

struct shmseg {
    void *base;                 /* the mapping, or NULL */
    size_t size;                /* bytes mapped */
    int named;                  /* made here and still has its name in /dev/shm */
    char name[SHMSEG_NAME_MAX]; /* for messages and the unlink */
};

/* 64 random bits for a segment's name (never 0, so 0 can mean "no segment"). */
uint64_t shmseg_nonce(void);

/*
 * Create segment (job, kind, rank, nonce) of `size` bytes, reserve its pages and map it
 * shared, zero-filled. `what` says in messages what the segment is for. On failure
 * nothing is left behind and a message naming the segment, the size and /dev/shm goes
 * to stderr. Returns 0, TERN_ERR_NOSPACE (/dev/shm cannot hold `size` more bytes) or
 * TERN_ERR_TRANSPORT (the name exists - a file someone else made is never reused - or
 * shm_open, posix_fallocate or mmap failed otherwise).
 */
int shmseg_create(struct shmseg *s, const char *job, const char *kind, int rank, uint64_t nonce,
                  size_t size, const char *what);

/*
 * As shmseg_create, but reserve only the first `reserve` bytes: the rest of the segment is
 * taken from /dev/shm page by page as it is first touched, so memory that is never used
 * costs nothing. The caller makes such a page real before writing it (for example with
 * madvise(MADV_POPULATE_WRITE), which fails cleanly where a plain write would raise SIGBUS
 * on a full /dev/shm).
 */
int shmseg_create_reserve(struct shmseg *s, const char *job, const char *kind, int rank,
                          uint64_t nonce, size_t size, size_t reserve, const char *what);

/*
 * Map segment (job, kind, rank, nonce) that a peer created. `size` is the size the
 * caller expects, or 0 to map whatever size the segment has (s->size says). The
 * segment must belong to this user and be at least `size` bytes. Returns 0 or
 * TERN_ERR_TRANSPORT (with a message on stderr).
 */
int shmseg_attach(struct shmseg *s, const char *job, const char *kind, int rank, uint64_t nonce,
                  size_t size, const char *what);

/* Remove the name of a segment made here (every peer has attached); the mapping stays. */
void shmseg_unlink(struct shmseg *s);

/* Unlink (if still named) and unmap; the struct is left empty. Safe on an empty one. */
void shmseg_close(struct shmseg *s);

/*
 * Place the pages of segment s on NUMA node `numa_node` (the kernel's number): the
 * segment's memory policy becomes "preferably this node" (mbind, MPOL_PREFERRED, raw
 * syscall: no libnuma), so pages taken later come from it, and the pages it holds already
 * are mapped here and moved there if they lie elsewhere. Call it in the process that reads
 * the segment most (the receiver of an inbox), right after shmseg_create or shmseg_attach.
 * numa_node < 0 does nothing. Advisory: the segment works wherever its pages are.
 * Returns 0, TERN_ERR_INVAL (node beyond 1023, or s not mapped) or TERN_ERR_UNSUPPORTED
 * (the kernel has no such node, no NUMA support, or forbids mbind).
 */
int shmseg_place(struct shmseg *s, int numa_node);

#endif

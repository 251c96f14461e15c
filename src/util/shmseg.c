/*
 * shmseg.c - named POSIX shared-memory segments of a job: create with the pages
 * reserved, attach, unlink once attached (see shmseg.h for the naming and why).
 */
#define _GNU_SOURCE
#include "util/shmseg.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tern.h"
#include "util/log.h"

uint64_t shmseg_nonce(void)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        /* No entropy yet (early boot): still unlikely to be guessed in time. */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        r = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 16) ^
            (uint64_t)(uintptr_t)&ts;
    }
    return r ? r : 1;
}

static int shmseg_name(struct shmseg *s, const char *job, const char *kind, int rank,
                       uint64_t nonce)
{
    int n = snprintf(s->name, sizeof s->name, "/tern-%s-%s-%d-%016llx", job, kind, rank,
                     (unsigned long long)nonce);
    return n > 0 && (size_t)n < sizeof s->name ? 0 : TERN_ERR_INTERNAL;
}

/* Bytes /dev/shm can still give this user, for the message; -1 if unknown. */
static long long shmseg_free_bytes(void)
{
    struct statvfs v;
    if (statvfs("/dev/shm", &v) != 0) return -1;
    return (long long)v.f_bavail * (long long)v.f_frsize;
}

int shmseg_create(struct shmseg *s, const char *job, const char *kind, int rank, uint64_t nonce,
                  size_t size, const char *what)
{
    return shmseg_create_reserve(s, job, kind, rank, nonce, size, size, what);
}

int shmseg_create_reserve(struct shmseg *s, const char *job, const char *kind, int rank,
                          uint64_t nonce, size_t size, size_t reserve, const char *what)
{
    memset(s, 0, sizeof *s);
    int rc = shmseg_name(s, job, kind, rank, nonce);
    if (rc) return rc;
    int fd = shm_open(s->name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        UTIL_ERROR("cannot create the %s %s in /dev/shm: %s", what, s->name, strerror(errno));
        return errno == ENOSPC ? TERN_ERR_NOSPACE : TERN_ERR_TRANSPORT;
    }
    /* Take the pages now: tmpfs gives them lazily, and a page it cannot give on first
     * touch is a SIGBUS in whatever code touches it. */
    int err;
    do
        err = posix_fallocate(fd, 0, (off_t)(reserve < size ? reserve : size));
    while (err == EINTR);
    if (!err && reserve < size && ftruncate(fd, (off_t)size) != 0) err = errno;
    if (err) {
        if (err == ENOSPC || err == EFBIG) {
            long long avail = shmseg_free_bytes();
            UTIL_ERROR(
                "no space in /dev/shm for the %s %s: it needs %zu bytes and /dev/shm has "
                "%lld free; enlarge /dev/shm (mount -o remount,size=...) or end what uses it",
                what, s->name, size, avail);
            rc = TERN_ERR_NOSPACE;
        } else {
            UTIL_ERROR("cannot reserve %zu bytes in /dev/shm for the %s %s: %s", size, what,
                       s->name, strerror(err));
            rc = TERN_ERR_TRANSPORT;
        }
        goto fail_unlink;
    }
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        UTIL_ERROR("cannot map the %s %s (%zu bytes): %s", what, s->name, size, strerror(errno));
        rc = errno == ENOMEM ? TERN_ERR_NOMEM : TERN_ERR_TRANSPORT;
        goto fail_unlink;
    }
    close(fd);
    s->base = p;
    s->size = size;
    s->named = 1;
    return 0;

fail_unlink:
    close(fd);
    shm_unlink(s->name);
    s->name[0] = '\0';
    return rc;
}

int shmseg_attach(struct shmseg *s, const char *job, const char *kind, int rank, uint64_t nonce,
                  size_t size, const char *what)
{
    memset(s, 0, sizeof *s);
    int rc = shmseg_name(s, job, kind, rank, nonce);
    if (rc) return rc;
    int fd = shm_open(s->name, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        UTIL_ERROR("cannot open rank %d's %s %s: %s", rank, what, s->name, strerror(errno));
        return TERN_ERR_TRANSPORT;
    }
    struct stat st;
    rc = TERN_ERR_TRANSPORT;
    if (fstat(fd, &st) != 0) {
        UTIL_ERROR("cannot stat rank %d's %s %s: %s", rank, what, s->name, strerror(errno));
        goto out;
    }
    /* The creator is a process of this job, so of this user: anything else was planted. */
    if (st.st_uid != geteuid() || (size_t)st.st_size < size || st.st_size == 0) {
        UTIL_ERROR("rank %d's %s %s is not the job's (owner %d, %lld bytes, %zu expected)", rank,
                   what, s->name, (int)st.st_uid, (long long)st.st_size, size);
        goto out;
    }
    if (size == 0) size = (size_t)st.st_size;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        UTIL_ERROR("cannot map rank %d's %s %s: %s", rank, what, s->name, strerror(errno));
        goto out;
    }
    s->base = p;
    s->size = size;
    rc = 0;
out:
    close(fd);
    return rc;
}

void shmseg_unlink(struct shmseg *s)
{
    if (!s->named) return;
    shm_unlink(s->name);
    s->named = 0;
}

void shmseg_close(struct shmseg *s)
{
    shmseg_unlink(s);
    if (s->base) munmap(s->base, s->size);
    memset(s, 0, sizeof *s);
}

/* mbind(2) constants, so that no libnuma header is needed. */
#define SHMSEG_MPOL_PREFERRED     1
#define SHMSEG_MPOL_MF_MOVE       (1 << 1)
#define SHMSEG_MADV_POPULATE_READ 22 /* Linux 5.14 */

int shmseg_place(struct shmseg *s, int numa_node)
{
    if (numa_node < 0) return 0;
    if (s->base == NULL || numa_node >= 1024) return TERN_ERR_INVAL;
#ifdef SYS_mbind
    unsigned long mask[1024 / (8 * sizeof(unsigned long))];
    memset(mask, 0, sizeof mask);
    mask[numa_node / (8 * sizeof(unsigned long))] |= 1ul
                                                     << (numa_node % (8 * sizeof(unsigned long)));
    /* No pre-faulting: the policy is the segment's (shmem's shared policy), so pages first
     * touched later are taken on the node, and MPOL_MF_MOVE moves those already mapped
     * here. Touching the rest would undo the lazy reservation (shmseg_create_reserve). */
    /* maxnode counts one more than the bits the kernel reads. */
    if (syscall(SYS_mbind, s->base, s->size, SHMSEG_MPOL_PREFERRED, mask, 8 * sizeof mask + 1,
                SHMSEG_MPOL_MF_MOVE) == 0) {
        UTIL_DEBUG(1, "%s placed on NUMA node %d", s->name, numa_node);
        return 0;
    }
    UTIL_DEBUG(1, "cannot place %s on NUMA node %d: %s (left where it is)", s->name, numa_node,
               strerror(errno));
#endif
    return TERN_ERR_UNSUPPORTED;
}

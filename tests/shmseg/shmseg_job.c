/*
 * shmseg_job.c - a job that makes every kind of shared-memory segment tern has (shm
 * transport inboxes at init, a collectives region, an MPI shared window, the SHMEM heap
 * and globals), for the tests of src/util/shmseg.c run by shmseg_test.sh.
 *
 *   shmseg_job MODE [BYTES]
 *   all        every kind of segment, data checked; with SHMSEG_WATCH=1 rank 0 first
 *              watches /dev/shm (inotify) and prints "seg NAME" for every entry created
 *              (the segments are unlinked at once, so only their creation can be seen)
 *   precreate  before MPI_Init each rank plants files under the names MPI windows had
 *              before they carried the job's prefix (/tern-win-<pid>-<seq>); windows must
 *              still work
 *   window     a shared window of BYTES per rank, every byte written and checked
 *   heap       a SHMEM heap block of BYTES, every byte written and checked
 *   stream     64 eager messages of 32 KiB from rank 0 to rank 1, which waits 300 ms
 *              before it receives them (so the sender's frames hold every big cell of its
 *              pool: 16 x 65 KiB, whatever the timing), then 4 MiB messages between the
 *              two (through the shm cells with TERN_SHM_CMA=0)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

static int rank = -1;

#define FAIL(...)                                                                                  \
    do {                                                                                           \
        fprintf(stderr, "FAIL [rank %d] ", rank);                                                  \
        fprintf(stderr, __VA_ARGS__);                                                              \
        fprintf(stderr, "\n");                                                                     \
        MPI_Abort(MPI_COMM_WORLD, 1);                                                              \
    } while (0)

static long globals[8];

/* A shared window of `bytes` per rank: write mine, check every neighbour's. */
static void do_window(size_t bytes)
{
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsigned char *mine;
    MPI_Win w;
    MPI_Win_allocate_shared((MPI_Aint)bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &w);
    MPI_Win_lock_all(0, w);
    memset(mine, 0x40 + rank, bytes);
    MPI_Win_sync(w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(w);
    for (int r = 0; r < size; r++) {
        MPI_Aint len;
        int du;
        unsigned char *p;
        MPI_Win_shared_query(w, r, &len, &du, &p);
        if ((size_t)len != bytes) FAIL("rank %d's window has %ld bytes", r, (long)len);
        for (size_t i = 0; i < bytes; i += 4093)
            if (p[i] != 0x40 + r) FAIL("rank %d's window byte %zu is %d", r, i, p[i]);
    }
    MPI_Win_unlock_all(w);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&w);
}

static void do_heap(size_t bytes)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    unsigned char *b = shmem_malloc(bytes);
    if (b == NULL) FAIL("shmem_malloc(%zu) failed", bytes);
    memset(b, 0x20 + me, bytes);
    int right = (me + 1) % n;
    shmem_long_p(&globals[1], 500 + me, right);
    shmem_barrier_all();
    unsigned char v = shmem_uchar_g(&b[bytes - 1], right);
    if (v != 0x20 + right) FAIL("PE %d's heap ends in %d", right, v);
    if (globals[1] != 500 + (me + n - 1) % n) FAIL("global %ld", globals[1]);
    shmem_barrier_all();
    shmem_free(b);
    shmem_finalize();
}

static void do_stream(void)
{
    size_t len = 4u << 20;
    char *buf = malloc(len);
    if (buf == NULL) FAIL("no memory");
    enum { NEAGER = 64, EAGER = 32 << 10 };
    if (rank == 0) {
        MPI_Request req[NEAGER];
        for (int i = 0; i < NEAGER; i++) {
            memset(buf + (size_t)i * EAGER, 'A' + i % 26, EAGER);
            MPI_Isend(buf + (size_t)i * EAGER, EAGER, MPI_CHAR, 1, 100 + i, MPI_COMM_WORLD,
                      &req[i]);
        }
        MPI_Waitall(NEAGER, req, MPI_STATUSES_IGNORE);
    } else if (rank == 1) {
        usleep(300000);
        for (int i = 0; i < NEAGER; i++) {
            MPI_Recv(buf, EAGER, MPI_CHAR, 0, 100 + i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t k = 0; k < EAGER; k += 997)
                if (buf[k] != 'A' + i % 26) FAIL("eager message %d byte %zu is %d", i, k, buf[k]);
        }
    }
    for (int it = 0; it < 4 && rank < 2; it++) {
        if (rank == it % 2) {
            memset(buf, 'a' + it, len);
            MPI_Send(buf, (int)len, MPI_CHAR, 1 - rank, it, MPI_COMM_WORLD);
        } else {
            MPI_Recv(buf, (int)len, MPI_CHAR, 1 - rank, it, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (size_t i = 0; i < len; i += 4099)
                if (buf[i] != 'a' + it) FAIL("message %d byte %zu is %d", it, i, buf[i]);
        }
    }
    free(buf);
}

/* The names planted for "precreate": what this process would have used as a leader. */
static void plant(int make)
{
    for (unsigned seq = 1; seq <= 4; seq++) {
        char name[64];
        snprintf(name, sizeof name, "/dev/shm/tern-win-%d-%u", (int)getpid(), seq);
        if (!make) {
            unlink(name);
            continue;
        }
        int fd = open(name, O_RDWR | O_CREAT | O_EXCL, 0644);
        if (fd < 0) {
            perror(name);
            exit(2);
        }
        close(fd);
    }
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "all";
    size_t bytes = argc > 2 ? strtoull(argv[2], NULL, 0) : 65536;
    const char *w = getenv("SHMSEG_WATCH");
    int watch = -1;
    /* Every rank watches (rank is not known before MPI_Init); rank 0 reports. */
    if (w && strcmp(w, "1") == 0) {
        watch = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
        if (watch < 0 || inotify_add_watch(watch, "/dev/shm", IN_CREATE) < 0) {
            perror("inotify /dev/shm");
            return 2;
        }
    }
    int precreate = strcmp(mode, "precreate") == 0;
    if (precreate) plant(1);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (strcmp(mode, "all") == 0 || precreate) {
        long v = rank + 1, sum = 0;
        MPI_Allreduce(&v, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
        int size;
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        if (sum != (long)size * (size + 1) / 2) FAIL("allreduce gave %ld", sum);
        do_window(bytes);
        do_window(bytes / 2);
        if (!precreate) do_heap(bytes);
    } else if (strcmp(mode, "window") == 0) {
        do_window(bytes);
    } else if (strcmp(mode, "heap") == 0) {
        do_heap(bytes);
    } else if (strcmp(mode, "stream") == 0) {
        do_stream();
    } else {
        FAIL("unknown mode %s", mode);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (precreate) plant(0);
    if (watch >= 0 && rank == 0) {
        char buf[65536] __attribute__((aligned(8)));
        ssize_t n;
        while ((n = read(watch, buf, sizeof buf)) > 0)
            for (char *p = buf; p < buf + n;) {
                struct inotify_event *e = (struct inotify_event *)p;
                if (e->len) printf("seg %s\n", e->name);
                p += sizeof *e + e->len;
            }
        fflush(stdout);
    }
    MPI_Finalize();
    if (rank == 0) printf("shmseg_job %s ok\n", mode);
    return 0;
}

/*
 * shm_alltoall_mem.c - shared memory a job holds after a 2 KiB all-to-all repeated 20
 * times (bench/shm_memory.sh). Built with each MPI's mpicc and with terncc. After the
 * exchanges rank 0 reads Shmem from /proc/meminfo while every rank is still alive and
 * prints it in kB; the script subtracts the value the machine had before the job.
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long shmem_kb(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "Shmem:", 6) == 0) kb = strtol(line + 6, NULL, 10);
    if (f) fclose(f);
    return kb;
}

/*
 * Where tern's bytes are (MEM_SPLIT=1): each rank counts the pages that exist (mincore)
 * in the parts of its own shm transport segment (mapped from /dev/shm, name
 * tern-<job>-shm-<rank>-<nonce>), whose header starts with the geometry below; rank 0
 * also counts every other tern segment it maps that is not a transport inbox (the
 * collectives' region, windows). Other MPIs have no such mappings: nothing is printed.
 */
struct seg_geo { /* the first fields of src/transport/shm/shm.c's struct shm_seg */
    uint32_t magic, version;
    int32_t owner, nlocal;
    uint64_t nlines, nsmall, nbig, cell_size;
    uint64_t list_off, next_off, chan_off, chan_stride, pool_off, seg_size;
    uint64_t nmid, mid_size; /* version >= 6 */
};

static long pages_in(const unsigned char *base, uint64_t from, uint64_t to)
{
    long ps = sysconf(_SC_PAGESIZE), n = 0;
    from = from / ps * ps;
    if (to <= from) return 0;
    size_t len = (to - from + ps - 1) / ps;
    unsigned char *v = malloc(len);
    if (v && mincore((void *)(base + from), len * ps, v) == 0)
        for (size_t i = 0; i < len; i++)
            n += v[i] & 1;
    free(v);
    return n;
}

/* out[0..5]: header+lists, channels, small cells, big cells, mid cells, other segments
 * (kB). */
static void mem_split(int rank, double out[6])
{
    FILE *f = fopen("/proc/self/maps", "r");
    char line[512], mine[32];
    long kb = sysconf(_SC_PAGESIZE) / 1024;
    snprintf(mine, sizeof mine, "-shm-%d-", rank);
    memset(out, 0, 6 * sizeof out[0]);
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) != 2 || !strstr(line, "/dev/shm/tern-")) continue;
        const unsigned char *b = (const unsigned char *)lo;
        if (strstr(line, mine)) {
            const struct seg_geo *g = (const void *)b;
            if (g->magic != 0x7465726eu || g->seg_size > hi - lo) continue;
            uint64_t big0 = g->pool_off + g->nsmall * g->cell_size;
            uint64_t mid0 = big0 + g->nbig * 8 * g->cell_size;
            uint64_t mid1 = g->version >= 6 ? mid0 + g->nmid * g->mid_size : mid0;
            out[0] += pages_in(b, 0, g->chan_off) * kb;
            out[1] += pages_in(b, g->chan_off, g->pool_off) * kb;
            out[2] += pages_in(b, g->pool_off, big0) * kb;
            out[3] += pages_in(b, big0, mid0) * kb;
            out[4] += pages_in(b, mid0, mid1) * kb;
        } else if (rank == 0 && !strstr(line, "-shm-")) {
            out[5] += pages_in(b, 0, hi - lo) * kb;
        }
    }
    if (f) fclose(f);
}

int main(int argc, char **argv)
{
    int rank, size, bytes = argc > 1 ? atoi(argv[1]) : 2048, reps = argc > 2 ? atoi(argv[2]) : 20;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *out = malloc((size_t)size * bytes), *in = malloc((size_t)size * bytes);
    for (int i = 0; i < size * bytes; i++)
        out[i] = (char)(rank + i);
    double t0 = MPI_Wtime();
    for (int r = 0; r < reps; r++)
        MPI_Alltoall(out, bytes, MPI_CHAR, in, bytes, MPI_CHAR, MPI_COMM_WORLD);
    double t = MPI_Wtime() - t0;
    for (int p = 0; p < size; p++)
        if (in[(size_t)p * bytes + 1] != (char)(p + rank * bytes + 1)) {
            fprintf(stderr, "rank %d: wrong data from %d\n", rank, p);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) printf("shmem_kb %ld time_s %.4f\n", shmem_kb(), t);
    if (getenv("MEM_SPLIT")) {
        double part[6], sum[6];
        mem_split(rank, part);
        MPI_Reduce(part, sum, 6, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0 && sum[0] + sum[1] + sum[2] + sum[3] + sum[4] + sum[5] > 0)
            printf("split_kb headers %.0f channels %.0f cells %.0f big_cells %.0f mid_cells %.0f "
                   "other %.0f\n",
                   sum[0], sum[1], sum[2], sum[3], sum[4], sum[5]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
    MPI_Finalize();
    return 0;
}

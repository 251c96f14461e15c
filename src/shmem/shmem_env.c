/*
 * shmem_env.c - setup and teardown of the SHMEM layer: starting tern if needed, mapping
 * the symmetric heaps of this node, finding the executable's globals, the queries
 * (my_pe, n_pes, shmem_ptr, accessibility) and the documented fatal path.
 *
 * Heaps: every PE creates one shared-memory segment of SHMEM_SYMMETRIC_SIZE bytes (through
 * util/shmseg.h, so its pages are taken from /dev/shm at shmem_init, not at first touch),
 * and maps the segment of every PE of its node that the shm transport reaches; once all
 * have mapped, the names are unlinked (as the shm transport does with its inboxes), so
 * even kill -9 leaves nothing in /dev/shm. PEs with no shm peer (TERN_TRANSPORTS without shm,
 * or one PE per node) take private anonymous memory instead.
 *
 * Globals: with PIE and ASLR, a global has a different address in every process but the
 * same offset from the executable's load base. dl_iterate_phdr gives the base and the
 * writable segments; a remote address is sent as that offset. Globals of other PEs are
 * always reached by messages (even on this node): their pages are private.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "shmem/shmem_impl.h"
#include "util/tunables.h"

struct osh_state osh;

void osh_fatal(const char *fn, int err, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "tern shmem [PE %d]: %s: %s: %s\n", core.initialized ? core.rank : -1, fn,
            tern_err_name(err), msg);
    fflush(stderr);
    if (core.initialized) boot_abort(&core.boot, 255, msg);
    _exit(255);
}

void osh_error(int err)
{
    if (osh.err == 0) osh.err = err;
}

int shmemx_error(void)
{
    int e = osh.err;
    osh.err = 0;
    return e;
}

void osh_loc_must(const char *fn, const void *addr, size_t len, struct osh_loc *l)
{
    if (osh_loc(addr, len, l) == 0) return;
    if (!osh.data_ok && osh.ndata > 0) {
        for (int i = 0; i < osh.ndata; i++)
            if ((uintptr_t)addr >= osh.data_lo[i] && (uintptr_t)addr < osh.data_hi[i])
                osh_fatal(fn, TERN_ERR_INVAL,
                          "%p is a global, but the PEs do not run the same executable, so "
                          "globals are not symmetric; use shmem_malloc",
                          addr);
    }
    osh_fatal(fn, TERN_ERR_INVAL,
              "address %p (%zu bytes) is not symmetric: not in the symmetric heap and not a "
              "global or static variable of the executable",
              addr, len);
}

/* ---- globals ----------------------------------------------------------------------- */

static int osh_phdr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    /* The first object is the executable itself. */
    osh.load_base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum && osh.ndata < 4; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_W)) continue;
        osh.data_lo[osh.ndata] = info->dlpi_addr + ph->p_vaddr;
        osh.data_hi[osh.ndata] = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        osh.ndata++;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_GNU_RELRO) continue;
        osh.relro_lo = info->dlpi_addr + ph->p_vaddr;
        osh.relro_hi = osh.relro_lo + ph->p_memsz;
    }
    return 1;
}

/* Find the executable's writable segments and check every PE has the same layout. */
static int osh_data_init(void)
{
    osh.ndata = 0;
    dl_iterate_phdr(osh_phdr_cb, NULL);
    /* A signature of the layout; min and max over PEs agree only if all are equal. */
    int64_t sig = (int64_t)osh.ndata;
    for (int i = 0; i < osh.ndata; i++)
        sig = sig * 1000003 + (int64_t)(osh.data_lo[i] - osh.load_base) * 31 +
              (int64_t)(osh.data_hi[i] - osh.load_base);
    int64_t v[2] = {sig, -sig}, r[2];
    int rc = tern_allreduce(v, r, 2, TERN_INT64, TERN_MIN, TERN_COMM_WORLD);
    if (rc) return rc;
    osh.data_ok = r[0] == -r[1];
    if (!osh.data_ok) osh.ndata = 0; /* not symmetric: osh_loc refuses them */
    return 0;
}

static int osh_agree(int rc);
static int osh_heap_direct(int pe);

/* The random part of this job's heap and globals segment names, drawn by PE 0. */
static uint64_t osh_nonce;

/*
 * Globals on this node: replace the executable's writable segment by a shared mapping of
 * a segment with the same contents, and map the segments of the other PEs of the node,
 * so a put into another PE's global is a memcpy and an atomic a CPU atomic, as on the
 * heap. Each process keeps its own copy (its relocations, its libc pointers): the others
 * only ever touch the symmetric variables a program names. The relro part is made
 * read-only again. Needs one writable segment and the same layout on every PE (checked);
 * off with TERN_SHMEM_SHARE_GLOBALS=0, and then globals of other PEs go by message.
 */
/* Copy whole pages of the data segment, padding and sanitizer redzones between globals
 * included: not through memcpy, which AddressSanitizer checks against those redzones. */
__attribute__((no_sanitize("address"))) static void osh_copy_pages(void *dst, const void *src,
                                                                   size_t len)
{
    volatile uint64_t *d = dst;
    const volatile uint64_t *s = src;
    for (size_t i = 0; i < len / 8; i++)
        d[i] = s[i];
}

static int osh_globals_share(int shared)
{
    long page = sysconf(_SC_PAGESIZE);
    int want = shared && util_tun.shmem_share_globals && osh.data_ok && osh.ndata == 1;
    int all = want, rc = 0;
    /* Every PE shares, or none does (a PE that does not would leave others' maps stale). */
    if (tern_allreduce(&want, &all, 1, TERN_INT32, TERN_MIN, TERN_COMM_WORLD) != 0 || !all)
        return 0;
    osh.data_pg_lo = osh.data_lo[0] & ~(uintptr_t)(page - 1);
    osh.data_len =
        ((osh.data_hi[0] + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1)) - osh.data_pg_lo;
    osh.data_base = calloc((size_t)osh.npes, sizeof *osh.data_base);
    if (osh.data_base == NULL) return TERN_ERR_NOMEM;
    rc = shmseg_create(&osh.data_seg, core.boot.kvsname, "data", osh.me, osh_nonce, osh.data_len,
                       "SHMEM globals segment");
    if (rc == 0) {
        /* Copy, then move the shared pages in place of the private ones: nothing runs in
         * between (shmem_init is called by the program's one thread). */
        void *tmp = osh.data_seg.base;
        osh_copy_pages(tmp, (const void *)osh.data_pg_lo, osh.data_len);
        void *at = mremap(tmp, osh.data_len, osh.data_len, MREMAP_MAYMOVE | MREMAP_FIXED,
                          (void *)osh.data_pg_lo);
        if (at == MAP_FAILED)
            osh_fatal("shmem_init", TERN_ERR_NOMEM, "cannot remap the data segment");
        osh.data_seg.base = NULL; /* ours stays mapped for good */
        if (osh.relro_hi > osh.relro_lo) {
            uintptr_t lo = osh.relro_lo & ~(uintptr_t)(page - 1);
            uintptr_t hi = osh.relro_hi & ~(uintptr_t)(page - 1);
            if (hi > lo) (void)mprotect((void *)lo, hi - lo, PROT_READ);
        }
        osh.data_base[osh.me] = (char *)osh.data_pg_lo;
    }
    rc = osh_agree(rc);
    for (int pe = 0; pe < osh.npes && rc == 0; pe++) {
        if (pe == osh.me || !osh_heap_direct(pe)) continue;
        struct shmseg seg;
        rc = shmseg_attach(&seg, core.boot.kvsname, "data", pe, osh_nonce, osh.data_len,
                           "SHMEM globals segment");
        if (rc) break;
        void *q = seg.base;
        osh.data_base[pe] = q;
    }
    rc = osh_agree(rc);
    shmseg_unlink(&osh.data_seg);
    return rc;
}

/* ---- heaps ------------------------------------------------------------------------- */

static int osh_agree(int rc)
{
    int v = rc, r;
    int rc2 = tern_allreduce(&v, &r, 1, TERN_INT32, TERN_MIN, TERN_COMM_WORLD);
    return rc2 ? rc2 : r;
}

static int osh_heap_direct(int pe)
{
    return pe == osh.me || core_peer_can_map(pe);
}

static int osh_heaps_map(void)
{
    int shared = 0;
    for (int pe = 0; pe < osh.npes; pe++)
        if (pe != osh.me && osh_heap_direct(pe)) shared = 1;
    /* One random part for the segment names of every PE, drawn by PE 0. */
    uint64_t nonce = osh.me == 0 ? shmseg_nonce() : 0;
    int rc = tern_bcast(&nonce, sizeof nonce, 0, TERN_COMM_WORLD);
    if (rc) return rc;
    osh_nonce = nonce;
    void *p = MAP_FAILED;
    if (!shared) {
        p = mmap(NULL, osh.heap_size, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            fprintf(stderr, "tern shmem [PE %d]: cannot map a %zu-byte heap: %s\n", osh.me,
                    osh.heap_size, strerror(errno));
            rc = TERN_ERR_NOMEM;
        }
    } else {
        rc = shmseg_create(&osh.heap_seg, core.boot.kvsname, "heap", osh.me, osh_nonce,
                           osh.heap_size, "SHMEM symmetric heap");
        if (rc == 0) p = osh.heap_seg.base;
    }
    if (p != MAP_FAILED) osh.heap = p;
    osh.base[osh.me] = osh.heap;
    rc = osh_agree(rc);
    for (int pe = 0; pe < osh.npes && rc == 0 && shared; pe++) {
        if (pe == osh.me || !osh_heap_direct(pe)) continue;
        struct shmseg seg;
        rc = shmseg_attach(&seg, core.boot.kvsname, "heap", pe, osh_nonce, osh.heap_size,
                           "SHMEM symmetric heap");
        if (rc) break;
        void *q = seg.base;
        osh.base[pe] = q;
    }
    rc = osh_agree(rc);
    /* Every PE has mapped every heap it needs: the names can go. */
    shmseg_unlink(&osh.heap_seg);
    if (rc == 0) rc = osh_globals_share(shared);
    return rc;
}

static void osh_heaps_unmap(void)
{
    shmseg_unlink(&osh.heap_seg);
    shmseg_unlink(&osh.data_seg);
    /* Other PEs' globals go; ours stay mapped (shared, same contents) for good. */
    for (int pe = 0; osh.data_base && pe < osh.npes; pe++)
        if (osh.data_base[pe] && pe != osh.me) munmap(osh.data_base[pe], osh.data_len);
    free(osh.data_base);
    osh.data_base = NULL;
    for (int pe = 0; osh.base && pe < osh.npes; pe++)
        if (osh.base[pe]) munmap(osh.base[pe], osh.heap_size);
    free(osh.base);
    osh.base = NULL;
    osh.heap = NULL;
}

/* Release everything; free_comms = 0 when tern itself is being finalized under us. */
static void osh_release(int free_comms)
{
    osh_teams_release(free_comms);
    osh_rma_release();
    osh_heaps_unmap();
    osh_heap_release(&osh.alloc);
    osh.up = 0;
}

/* tern_finalize / MPI_Finalize without shmem_finalize: drop our memory with the core. */
static void osh_atfini(void)
{
    if (osh.up) osh_release(0);
    osh.done = 1;
}

/* ---- setup --------------------------------------------------------------------------- */

void shmem_init(void)
{
    if (osh.up) return;
    if (osh.done) osh_fatal("shmem_init", TERN_ERR_FINALIZED, "shmem_finalize was called");
    int owns = 0;
    if (!core.initialized) {
        int rc = tern_init(NULL, NULL);
        if (rc) osh_fatal("shmem_init", rc, "cannot start tern (%s)", tern_strerror(rc));
        owns = 1;
    }
    /* SHMEM calls do not take tern's lock (their fast path is a plain store): with
     * another thread inside the core they would race with it. */
    if (core_mt)
        osh_fatal("shmem_init", TERN_ERR_UNSUPPORTED,
                  "SHMEM cannot be used with TERN_PROGRESS_THREAD=1 or TERN_THREAD_MULTIPLE yet");
    memset(&osh, 0, sizeof osh);
    osh.owns_core = owns;
    osh.me = core.rank;
    osh.npes = core.size;
    size_t sz = util_tun.shmem_symmetric_size;
    long page = sysconf(_SC_PAGESIZE);
    if (sz < 4096 || sz > ((size_t)1 << 44))
        osh_fatal("shmem_init", TERN_ERR_TUNABLE,
                  "SHMEM_SYMMETRIC_SIZE=%zu is out of range (4k .. 16t bytes)", sz);
    osh.heap_size = (sz + (size_t)page - 1) / (size_t)page * (size_t)page;
    osh.base = calloc((size_t)osh.npes, sizeof *osh.base);
    if (osh.base == NULL) osh_fatal("shmem_init", TERN_ERR_NOMEM, "out of memory");
    int rc = osh_rma_init();
    if (rc == 0) rc = core_atfini(osh_atfini);
    if (rc == 0) rc = osh_teams_init();
    if (rc == 0) rc = osh_data_init();
    if (rc == 0) rc = osh_heaps_map();
    if (rc == 0) rc = osh_heap_init(&osh.alloc, osh.heap_size);
    if (rc) osh_fatal("shmem_init", rc, "setup failed (%s)", tern_strerror(rc));
    osh.nfailed = (unsigned)core.nfailed;
    osh.nremote = osh.npes - 1;
    osh.up = 1;
    /* No PE may send a request before every PE can serve it. */
    rc = tern_barrier(SHMEM_TEAM_WORLD->comm);
    if (rc) osh_fatal("shmem_init", rc, "barrier failed (%s)", tern_strerror(rc));
}

int shmem_init_thread(int requested, int *provided)
{
    shmem_init();
    if (provided)
        *provided = requested > SHMEM_THREAD_SERIALIZED ? SHMEM_THREAD_SERIALIZED : requested;
    return 0;
}

void shmem_query_thread(int *provided)
{
    if (provided) *provided = SHMEM_THREAD_SERIALIZED;
}

void shmem_finalize(void)
{
    if (!osh.up) return;
    osh_quiet();
    int rc = tern_barrier(SHMEM_TEAM_WORLD->comm);
    if (rc) osh_error(rc);
    osh_release(1);
    osh.done = 1;
    if (osh.owns_core) (void)tern_finalize();
}

void shmem_global_exit(int status)
{
    fflush(stdout);
    fflush(stderr);
    tern_abort(status);
}

void start_pes(int npes)
{
    (void)npes;
    shmem_init();
}

int shmem_my_pe(void)
{
    return osh.up ? osh.me : -1;
}

int shmem_n_pes(void)
{
    return osh.up ? osh.npes : -1;
}

int _my_pe(void)
{
    return shmem_my_pe();
}

int _num_pes(void)
{
    return shmem_n_pes();
}

int my_pe(void)
{
    return shmem_my_pe();
}

int num_pes(void)
{
    return shmem_n_pes();
}

int shmem_pe_accessible(int pe)
{
    if (!osh.up || pe < 0 || pe >= osh.npes) return 0;
    return !core.peers[pe].failed;
}

int shmem_addr_accessible(const void *addr, int pe)
{
    struct osh_loc l;
    if (!shmem_pe_accessible(pe)) return 0;
    return osh_loc(addr, 1, &l) == 0;
}

void *shmem_ptr(const void *dest, int pe)
{
    struct osh_loc l;
    if (!osh.up || pe < 0 || pe >= osh.npes || osh_loc(dest, 0, &l) != 0) return NULL;
    return osh_direct(dest, &l, pe);
}

void shmem_info_get_version(int *major, int *minor)
{
    if (major) *major = SHMEM_MAJOR_VERSION;
    if (minor) *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
    if (name) snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

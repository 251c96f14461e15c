/*
 * mpi_name.c - the MPI name service inside one job: MPI_Publish_name, MPI_Lookup_name and
 * MPI_Unpublish_name.
 *
 * World rank 0 keeps the job's table of service names and the port names published under
 * them. A request (publish, look up, unpublish) is an active message to rank 0, answered
 * by one back (through the loopback when rank 0 asks itself); rank 0 answers from any
 * call that makes progress, as MPI_Cancel's receiver does. So the names need no launcher
 * support and work under any launcher (ternrun, Slurm's PMI, a singleton). They live as
 * long as the job, as ports do: a service of another job cannot be looked up (ports
 * across jobs are unsupported, mpi_port.c).
 *
 * Errors (the standard's classes): publishing a service that is published already is
 * MPI_ERR_SERVICE; looking up one that is not is MPI_ERR_NAME; unpublishing one that is
 * not published, or under another port name, is MPI_ERR_SERVICE. A service name or port
 * name longer than MPI_MAX_PORT_NAME - 1 characters is MPI_ERR_ARG. If rank 0 has died,
 * the call fails with MPI_ERR_PROC_FAILED.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "mpi/mpi_impl.h"

enum { NAME_AM_REQ = CORE_AM_MPI_NAME_REQ, NAME_AM_REP = CORE_AM_MPI_NAME_REP };
enum { NAME_PUBLISH = 1, NAME_LOOKUP = 2, NAME_UNPUBLISH = 3, NAME_DONE = 4 };
#define NAME_SERVER  0 /* the world rank that keeps the table */
#define NAME_MAX_LEN (MPI_MAX_PORT_NAME - 1)

/* Request and answer: the header, then the service name and the port name (no NULs). */
struct name_msg {
    uint32_t seq;
    uint8_t op;
    uint8_t rc; /* answer: 0 done, else NAME_E_* */
    uint16_t slen, plen;
    uint16_t pad;
};
enum { NAME_E_OK = 0, NAME_E_TAKEN, NAME_E_UNKNOWN };

struct name_entry {
    struct name_entry *next;
    char *service, *port;
};

static struct name_entry *name_table; /* at NAME_SERVER only */
static unsigned char *name_done;      /* at NAME_SERVER: who has reached MPI_Finalize */

static unsigned char *name_done_table(void)
{
    if (name_done == NULL) name_done = calloc((size_t)core.size, 1);
    return name_done;
}

/* The requests this process waits for: one per thread in a name call (each on its
 * stack; the list is touched under the core's critical section, which the handlers run
 * in). A lookup's answer is copied into the caller's buffer. */
struct name_wait {
    struct name_wait *next;
    uint32_t seq;
    int answered;
    uint8_t rc;
    char *port; /* a lookup's result, MPI_MAX_PORT_NAME bytes; NULL for the others */
};
static struct name_wait *name_waits;
static uint32_t name_seq;

static struct name_entry **name_find(const char *service, size_t slen)
{
    struct name_entry **pp = &name_table;
    for (; *pp; pp = &(*pp)->next)
        if (strlen((*pp)->service) == slen && memcmp((*pp)->service, service, slen) == 0) break;
    return pp;
}

static char *name_dup(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

/* At the server: carry out one request. Returns the answer's code; *port is the port
 * name of a lookup. */
static uint8_t name_serve(uint8_t op, const char *svc, size_t slen, const char *port, size_t plen,
                          const char **found)
{
    struct name_entry **pp = name_find(svc, slen), *e = *pp;
    *found = "";
    switch (op) {
    case NAME_PUBLISH: {
        if (e) return NAME_E_TAKEN;
        e = calloc(1, sizeof *e);
        if (e) e->service = name_dup(svc, slen);
        if (e && e->service) e->port = name_dup(port, plen);
        if (e == NULL || e->port == NULL) {
            if (e) free(e->service);
            free(e);
            return NAME_E_UNKNOWN; /* out of memory at the server: not published */
        }
        e->next = name_table;
        name_table = e;
        return NAME_E_OK;
    }
    case NAME_LOOKUP:
        if (e == NULL) return NAME_E_UNKNOWN;
        *found = e->port;
        return NAME_E_OK;
    default: /* NAME_UNPUBLISH */
        if (e == NULL || strlen(e->port) != plen || memcmp(e->port, port, plen) != 0)
            return NAME_E_UNKNOWN;
        *pp = e->next;
        free(e->service);
        free(e->port);
        free(e);
        return NAME_E_OK;
    }
}

static void name_am_req(int src, const void *p, size_t n)
{
    struct name_msg m;
    if (n < sizeof m) return;
    memcpy(&m, p, sizeof m);
    if (sizeof m + m.slen + m.plen != n) return;
    if (m.op == NAME_DONE) { /* no answer: the sender is finalizing */
        if (name_done_table() && src >= 0 && src < core.size) name_done[src] = 1;
        return;
    }
    const char *svc = (const char *)p + sizeof m, *port = svc + m.slen, *found;
    m.rc = name_serve(m.op, svc, m.slen, port, m.plen, &found);
    m.slen = 0;
    m.plen = (uint16_t)strlen(found);
    struct iovec v[2] = {{&m, sizeof m}, {(void *)found, m.plen}};
    (void)core_am_sendv(src, NAME_AM_REP, v, m.plen ? 2 : 1);
}

static void name_am_rep(int src, const void *p, size_t n)
{
    struct name_msg m;
    if (src != NAME_SERVER || n < sizeof m) return;
    memcpy(&m, p, sizeof m);
    if (sizeof m + m.plen != n || m.plen > NAME_MAX_LEN) return;
    for (struct name_wait *w = name_waits; w; w = w->next) {
        if (w->seq != m.seq || w->answered) continue;
        if (w->port) {
            memcpy(w->port, (const char *)p + sizeof m, m.plen);
            w->port[m.plen] = '\0';
        }
        w->rc = m.rc;
        w->answered = 1;
        return;
    }
}

/* Has every other process told the server it is finalizing (or died)? */
static int name_all_done(const void *arg)
{
    (void)arg;
    for (int r = 0; r < core.size; r++)
        if (r != NAME_SERVER && !(name_done && name_done[r]) && !core.peers[r].failed) return 0;
    return 1;
}

/*
 * Finalize ends in the launcher's fence, where nothing is progressed: the server must not
 * get there while another process still waits for an answer from it. Every other process
 * tells it, one active message each, that it is finalizing: its requests were all
 * answered before that (they block), and the message comes after them. The server waits,
 * progressing, until it has heard from every process that is alive. Nothing is traced
 * (no message on a communicator) and the others do not wait.
 */
void mpi_name_quiesce(void)
{
    if (core.size == 1) return;
    if (core.rank != NAME_SERVER) {
        struct name_msg m = {.op = NAME_DONE};
        struct iovec v = {&m, sizeof m};
        (void)core_am_sendv(NAME_SERVER, NAME_AM_REQ, &v, 1);
        return;
    }
    if (name_done_table() == NULL) return; /* nothing to count with: go on */
    (void)core_block(name_all_done, NULL); /* its error (launcher gone) is finalize's */
}

/* At finalize: what is still published goes with the job. */
static void name_fini(void)
{
    free(name_done);
    name_done = NULL;
    while (name_table) {
        struct name_entry *e = name_table;
        name_table = e->next;
        free(e->service);
        free(e->port);
        free(e);
    }
}

int mpi_name_init(void)
{
    return core_am_register(NAME_AM_REQ, name_am_req) ||
                   core_am_register(NAME_AM_REP, name_am_rep) || core_atfini(name_fini)
               ? MPI_ERR_INTERN
               : MPI_SUCCESS;
}

static int name_answered(const void *arg)
{
    const struct name_wait *w = arg;
    return w->answered || core.peers[NAME_SERVER].failed;
}

/* One request to the server; on success a lookup's port name is in found (which may be
 * the caller's buffer: it is written only on success). */
static int name_ask(const char *fn, uint8_t op, const char *service, const char *port,
                    int fail_class, char *found)
{
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (service == NULL || (op != NAME_LOOKUP && port == NULL))
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    size_t slen = strlen(service), plen = op == NAME_LOOKUP ? 0 : strlen(port);
    if (slen == 0 || slen > NAME_MAX_LEN || plen > NAME_MAX_LEN)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    char answer[MPI_MAX_PORT_NAME];
    struct name_wait w = {
        .next = name_waits, .seq = ++name_seq, .port = op == NAME_LOOKUP ? answer : NULL};
    struct name_msg m = {.seq = w.seq, .op = op, .slen = (uint16_t)slen, .plen = (uint16_t)plen};
    struct iovec v[3] = {{&m, sizeof m}, {(void *)service, slen}, {(void *)port, plen}};
    name_waits = &w;
    int rc = core_am_sendv(NAME_SERVER, NAME_AM_REQ, v, plen ? 3 : 2);
    if (rc == 0) rc = core_block(name_answered, &w);
    for (struct name_wait **pp = &name_waits; *pp; pp = &(*pp)->next)
        if (*pp == &w) {
            *pp = w.next;
            break;
        }
    if (rc == 0 && !w.answered) rc = TERN_ERR_PEER_FAILED; /* the server died */
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, mpi_from_tern(rc));
    if (w.rc != NAME_E_OK) return mpi_err(MPI_COMM_WORLD, fn, fail_class);
    if (found) memcpy(found, answer, strlen(answer) + 1);
    return MPI_SUCCESS;
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    CORE_CS_SCOPE();
    (void)info;
    return name_ask("MPI_Publish_name", NAME_PUBLISH, service_name, port_name, MPI_ERR_SERVICE,
                    NULL);
}
MPI_ALIAS(Publish_name)

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    CORE_CS_SCOPE();
    (void)info;
    if (port_name == NULL) return mpi_err(MPI_COMM_WORLD, "MPI_Lookup_name", MPI_ERR_ARG);
    return name_ask("MPI_Lookup_name", NAME_LOOKUP, service_name, NULL, MPI_ERR_NAME, port_name);
}
MPI_ALIAS(Lookup_name)

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    CORE_CS_SCOPE();
    (void)info;
    return name_ask("MPI_Unpublish_name", NAME_UNPUBLISH, service_name, port_name, MPI_ERR_SERVICE,
                    NULL);
}
MPI_ALIAS(Unpublish_name)

/*
 * mpi_port.c - MPI ports inside one job: MPI_Open_port, MPI_Close_port, MPI_Comm_accept
 * and MPI_Comm_connect join two groups of one job's processes (two disjoint
 * communicators, e.g. the two halves of a split) into an intercommunicator.
 *
 * A port name is "tern-port:<job>:<world rank>:<serial>" (the opener's world rank and its
 * count of ports). The connecting root sends its world rank to the port's owner on the
 * port communicator (a world-sized communicator on a context every process reserves at
 * start, CORE_CTX_PORTS, which no user message can reach), with the port's serial as tag;
 * the accepting root takes one such request per MPI_Comm_accept. Both groups then build
 * the intercommunicator as MPI_Intercomm_create does, with the port communicator as the
 * bridge between the roots. A port of another job (ports across jobs need a connection
 * between two jobs' processes, which tern does not make) or one this process did not open
 * is MPI_ERR_PORT. MPI_Comm_join works the same way between two processes of the job that
 * share a connected socket (below). The name service (MPI_Publish_name, ...) is
 * mpi_name.c; MPI_Comm_spawn stays unsupported (mpi_stubs.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/mpi_comm_impl.h"
#include "mpi/mpi_impl.h"

#define PORT_PREFIX   "tern-port:"
#define PORT_OPEN_MAX 64
/* Tags on the port communicator: a connect request, then the intercommunicator's set-up. */
#define PORT_TAG_REQ(serial)   ((int)(2 * ((serial)&0xfffffff)))
#define PORT_TAG_BUILD(serial) ((int)(2 * ((serial)&0xfffffff) + 1))

static unsigned port_serial;               /* ports this process opened */
static unsigned port_open[PORT_OPEN_MAX];  /* serials of the open ones; 0: a free slot */
static MPI_Comm port_comm = MPI_COMM_NULL; /* the bridge (CORE_CTX_PORTS) */
static char port_job[64];                  /* this job, as port names carry it */

/* The job's name in port names: the launcher's key-value space name (unique per job; it
 * also names the job's shared-memory segments), with ':' (the names' separator) as '_'. */
static const char *port_jobid(void)
{
    if (port_job[0] == '\0') {
        const char *k = core.boot.kvsname[0] ? core.boot.kvsname : "job";
        size_t n = 0;
        for (; k[n] != '\0' && n + 1 < sizeof port_job; n++)
            port_job[n] = k[n] == ':' ? '_' : k[n];
        port_job[n] = '\0';
    }
    return port_job;
}

/* The port communicator, made on first use (no agreement: every process reserved its
 * context at start). */
int mpi_port_bridge(MPI_Comm *out)
{
    if (port_comm == MPI_COMM_NULL) {
        struct tern_comm *tc = NULL;
        int *w = malloc((size_t)core.size * sizeof(int)), rc = MPI_ERR_NO_MEM;
        for (int i = 0; w != NULL && i < core.size; i++)
            w[i] = i;
        if (w) rc = mpi_from_tern(core_comm_make(CORE_CTX_PORTS, core.rank, core.size, w, &tc));
        free(w);
        if (rc == 0) rc = mpi_comm_wrap(tc, NULL, &port_comm);
        if (rc) return rc;
        mpi_comm_get(port_comm)->errh = MPI_ERRORS_RETURN;
    }
    *out = port_comm;
    return MPI_SUCCESS;
}

/* The world rank and serial of a name "<prefix><job>:<rank>:<serial>" (a port name, or a
 * join record); MPI_ERR_PORT when it is not one of this job's. */
static int port_parse_as(const char *prefix, const char *name, int *owner, unsigned *serial)
{
    if (name == NULL || strncmp(name, prefix, strlen(prefix)) != 0) return MPI_ERR_PORT;
    const char *job = name + strlen(prefix), *colon = strchr(job, ':');
    if (colon == NULL || (size_t)(colon - job) != strlen(port_jobid()) ||
        strncmp(job, port_jobid(), (size_t)(colon - job)) != 0)
        return MPI_ERR_PORT;
    int r, n = 0;
    unsigned s;
    if (sscanf(colon + 1, "%d:%u%n", &r, &s, &n) != 2 || colon[1 + n] != '\0' || r < 0 ||
        r >= core.size || s == 0)
        return MPI_ERR_PORT;
    *owner = r;
    *serial = s;
    return MPI_SUCCESS;
}

/* The owner (world rank) and serial a port name gives. */
static int port_parse(const char *name, int *owner, unsigned *serial)
{
    return port_parse_as(PORT_PREFIX, name, owner, serial);
}

static int port_slot(unsigned serial)
{
    for (int i = 0; i < PORT_OPEN_MAX; i++)
        if (port_open[i] == serial) return i;
    return -1;
}

int PMPI_Open_port(MPI_Info info, char *port_name)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Open_port";
    (void)info;
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (port_name == NULL) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    int i = port_slot(0);
    if (i < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_NO_MEM); /* PORT_OPEN_MAX open */
    port_open[i] = ++port_serial;
    snprintf(port_name, MPI_MAX_PORT_NAME, PORT_PREFIX "%s:%d:%u", port_jobid(), core.rank,
             port_open[i]);
    return MPI_SUCCESS;
}
MPI_ALIAS(Open_port)

int PMPI_Close_port(const char *port_name)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Close_port";
    int owner, i = -1;
    unsigned serial;
    if (port_parse(port_name, &owner, &serial) == MPI_SUCCESS && owner == core.rank)
        i = port_slot(serial);
    if (i < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_PORT);
    port_open[i] = 0;
    return MPI_SUCCESS;
}
MPI_ALIAS(Close_port)

/* Accept (accept = 1) or connect: the root finds the other root's world rank and tells
 * its group whether that worked; then both groups build the intercommunicator. */
static int port_join(const char *fn, const char *port_name, int root, MPI_Comm comm,
                     MPI_Comm *newcomm, int accept)
{
    COMM_CHECK(fn, comm, newcomm);
    if (c->inter) return mpi_err(comm, fn, MPI_ERR_COMM);
    if (root < 0 || root >= c->tc->size) return mpi_err(comm, fn, MPI_ERR_ROOT);
    MPI_Comm bridge;
    int rc = mpi_port_bridge(&bridge);
    if (rc) return mpi_err(comm, fn, rc);
    int got[2] = {MPI_SUCCESS, -1}; /* the root's verdict, the other root's world rank */
    unsigned serial = 0;
    if (c->tc->rank == root) {
        int owner;
        got[0] = port_parse(port_name, &owner, &serial);
        if (got[0] == MPI_SUCCESS && accept && (owner != core.rank || port_slot(serial) < 0))
            got[0] = MPI_ERR_PORT; /* only the process that opened a port accepts on it */
        if (got[0] == MPI_SUCCESS && accept)
            got[0] = PMPI_Recv(&got[1], 1, MPI_INT, MPI_ANY_SOURCE, PORT_TAG_REQ(serial), bridge,
                               MPI_STATUS_IGNORE);
        else if (got[0] == MPI_SUCCESS) {
            int me = core.rank;
            got[1] = owner;
            got[0] = PMPI_Send(&me, 1, MPI_INT, owner, PORT_TAG_REQ(serial), bridge);
        }
    }
    /* Every member learns the serial too: it makes the set-up's tag. */
    int tell[3] = {got[0], got[1], (int)serial};
    rc = PMPI_Bcast(tell, 3, MPI_INT, root, comm);
    if (rc == MPI_SUCCESS) rc = tell[0];
    if (rc == MPI_SUCCESS)
        rc = PMPI_Intercomm_create(comm, root, bridge, tell[1], PORT_TAG_BUILD((unsigned)tell[2]),
                                   newcomm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : mpi_err(comm, fn, rc);
}

int PMPI_Comm_accept(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                     MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    (void)info;
    return port_join("MPI_Comm_accept", port_name, root, comm, newcomm, 1);
}
MPI_ALIAS(Comm_accept)

int PMPI_Comm_connect(const char *port_name, MPI_Info info, int root, MPI_Comm comm,
                      MPI_Comm *newcomm)
{
    CORE_CS_SCOPE();
    (void)info;
    return port_join("MPI_Comm_connect", port_name, root, comm, newcomm, 0);
}
MPI_ALIAS(Comm_connect)

/* ---- MPI_Comm_join ------------------------------------------------------------------
 * Both ends of a connected socket call it. Each writes one fixed-size record (its job's
 * name, its world rank and how many joins it made) and reads the other's; two processes
 * of this job then build an intercommunicator of one process on each side over the port
 * communicator, with a tag made from the lower rank's count (so that joins between the
 * same two processes, one after the other, never take each other's set-up). A process of
 * another job, or anything that is not a tern process, is MPI_ERR_PORT (ports across
 * jobs are not supported); a socket that fails is MPI_ERR_OTHER. */
#define JOIN_REC    128
#define JOIN_TAG(n) ((int)(0x20000000u | ((n)&0xfffffffu))) /* above every port tag */
#define JOIN_PREFIX "tern-join:"

static unsigned join_count; /* joins this process made */

static int join_io(int fd, char *buf, int writing)
{
    size_t done = 0;
    while (done < JOIN_REC) {
        ssize_t n = writing ? write(fd, buf + done, JOIN_REC - done)
                            : read(fd, buf + done, JOIN_REC - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return MPI_ERR_OTHER;
        done += (size_t)n;
    }
    return MPI_SUCCESS;
}

int PMPI_Comm_join(int fd, MPI_Comm *intercomm)
{
    CORE_CS_SCOPE();
    static const char fn[] = "MPI_Comm_join";
    if (mpi_state()) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_OTHER);
    if (intercomm == NULL || fd < 0) return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_ARG);
    char mine[JOIN_REC] = {0}, theirs[JOIN_REC + 1] = {0};
    unsigned count = ++join_count;
    snprintf(mine, sizeof mine, JOIN_PREFIX "%s:%d:%u", port_jobid(), core.rank, count);
    /* Both write first: a record fits any socket buffer, so neither blocks the other. */
    int rc = join_io(fd, mine, 1);
    if (rc == MPI_SUCCESS) rc = join_io(fd, theirs, 0);
    if (rc) return mpi_err(MPI_COMM_WORLD, fn, rc);
    int peer;
    unsigned pcount;
    if (port_parse_as(JOIN_PREFIX, theirs, &peer, &pcount) != MPI_SUCCESS || peer == core.rank)
        return mpi_err(MPI_COMM_WORLD, fn, MPI_ERR_PORT);
    MPI_Comm bridge;
    rc = mpi_port_bridge(&bridge);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Intercomm_create(MPI_COMM_SELF, 0, bridge, peer,
                                   JOIN_TAG(core.rank < peer ? count : pcount), intercomm);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : mpi_err(MPI_COMM_WORLD, fn, rc);
}
MPI_ALIAS(Comm_join)

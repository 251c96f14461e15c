/*
 * hostfile.h - the hosts of a job: parsing --host lists and hostfiles into an
 * ordered list of (name, slots). Pure functions (no global state, no I/O besides
 * reading the named file), so the unit test can feed them any bytes.
 */
#ifndef TERNRUN_HOSTFILE_H
#define TERNRUN_HOSTFILE_H

#include <stddef.h>

#define RUN_HOST_NAME_MAX  255
#define RUN_HOST_SLOTS_MAX 65536

struct run_hostspec {
    char *name;
    int slots;
};

/* Hosts in order of first appearance; a name given again adds to its slots. */
struct run_hostlist {
    struct run_hostspec *v;
    int n, cap;
};

/*
 * Parse a --host / -H value: comma-separated "name" (one slot) or "name:N".
 * "a,a,b" is a:2,b:1. Returns 0, or -1 with a message in err.
 */
int run_hosts_parse_list(struct run_hostlist *hl, const char *text, char *err, size_t errcap);

/*
 * Parse hostfile text of `len` bytes: one host a line, "name", "name:N" or
 * "name slots=N"; '#' starts a comment; blank lines are skipped. `file` names the
 * text in messages, which read "file:line: what is wrong". Returns 0 or -1.
 */
int run_hosts_parse_text(struct run_hostlist *hl, const char *text, size_t len, const char *file,
                         char *err, size_t errcap);

/* Read and parse the hostfile at path (see run_hosts_parse_text). Returns 0 or -1. */
int run_hosts_parse_file(struct run_hostlist *hl, const char *path, char *err, size_t errcap);

/* Total slots over all hosts. */
long run_hosts_slots(const struct run_hostlist *hl);

void run_hosts_free(struct run_hostlist *hl);

#endif

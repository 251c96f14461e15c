/*
 * pmi_wire.h - the PMI-1 "simple" wire protocol: line reading, command parsing and
 * the PMI_process_mapping format. Shared by the client in libtern and the server in
 * ternrun, so both sides agree on one parser (which has its own unit tests).
 *
 * A message is one line of space-separated key=value words ending in '\n', such as
 * "cmd=put kvsname=k key=a value=b". Values contain no spaces or newlines.
 */
#ifndef TERN_BOOT_PMI_WIRE_H
#define TERN_BOOT_PMI_WIRE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define PMI_WIRE_MAX_LINE    4096
#define PMI_WIRE_MAX_PAIRS   32
#define PMI_WIRE_KVSNAME_MAX 256
#define PMI_WIRE_KEY_MAX     64
#define PMI_WIRE_VAL_MAX     1024

struct pmi_pair {
    const char *key;
    const char *val;
};

struct pmi_msg {
    int npairs;
    struct pmi_pair pairs[PMI_WIRE_MAX_PAIRS];
};

/* Buffered reader of '\n'-terminated lines from a stream socket. */
struct pmi_reader {
    size_t len;                      /* bytes held in buf */
    size_t skip;                     /* bytes of the previous line to drop */
    char buf[PMI_WIRE_MAX_LINE + 1]; /* +1 for the terminating NUL */
};

/*
 * Split `line` (NUL-terminated, without '\n') in place into key=value pairs.
 * Returns 0, or -1 if a word has no '=', a key is empty, or there are too many words.
 */
int pmi_wire_parse(char *line, struct pmi_msg *msg);

/* The value of `key` in msg, or NULL. */
const char *pmi_msg_get(const struct pmi_msg *msg, const char *key);

/* Value of `key` as an int; returns 0 or -1 if missing or not a number. */
int pmi_msg_get_int(const struct pmi_msg *msg, const char *key, int *out);

/*
 * Take the next complete line out of r (without its '\n', NUL-terminated).
 * Returns 1 and sets *line if one is buffered, 0 if more bytes are needed,
 * -1 if the buffered line exceeds PMI_WIRE_MAX_LINE.
 */
int pmi_reader_line(struct pmi_reader *r, char **line);

/*
 * Read what is available from fd into r. Returns bytes read (>0), 0 at end of
 * stream, -1 on error (errno set; EAGAIN for a non-blocking fd with nothing to read).
 */
ssize_t pmi_reader_fill(struct pmi_reader *r, int fd);

/*
 * Free text as one wire value: bytes other than printable ASCII, and ' ', '%', '=',
 * become %XX (so "MPI_Send: bad rank" travels as "MPI_Send:%20bad%20rank"). Launchers
 * that know nothing of this (Hydra) still parse the line; ternrun decodes it.
 * Writes at most cap bytes with the NUL, cutting only between escapes. Returns the length.
 */
size_t pmi_wire_escape(const char *in, char *out, size_t cap);
/* Decode %XX escapes in place (a malformed escape stays as it is). */
void pmi_wire_unescape(char *s);

/* FNV-1a hash of a key: the slot of the launcher's key table (tools/ternrun/pmi_server.c)
 * and of a rank's cache of keys taken in bulk (boot.c). */
uint64_t pmi_wire_hash(const char *key);

/* Write all of buf to fd, retrying on EINTR/short writes. Returns 0 or -1. */
int pmi_write_all(int fd, const char *buf, size_t len);

/*
 * Parse a PMI_process_mapping value "(vector,(start,count,ppn),...)" and fill
 * node_of[r] for r in 0..size-1 with the node index of rank r. A mapping that
 * describes fewer ranks than `size` repeats (cyclic placement); ranks beyond `size`
 * are ignored. Returns 0, or -1 if the text is malformed.
 */
int pmi_wire_parse_mapping(const char *text, int size, int *node_of);

/*
 * Bulk get, a ternrun extension (spoken only when init's reply said tern=1):
 *
 *   cmd=tern_getall kvsname=K prefix=P start=S
 *
 * asks for every key starting with P, in the order they were put, from position S of
 * that order (0 at first). The reply is one head line, then `count` entry lines:
 *
 *   cmd=tern_getall_result rc=0 count=N next=T
 *   cmd=tern_kv key=KEY value=VALUE          (N times)
 *
 * next=-1 when nothing is left, else the start of the next request. A reply carries
 * at most PMI_WIRE_BULK_BYTES of entry lines. Errors come as the head line with rc=-1
 * msg=WORD (an older server answers msg=unknown_command: the client gets keys one by
 * one then).
 */
#define PMI_WIRE_BULK_BYTES (16 * 1024)
/* Most bytes of keys and values a client takes in bulk in all: ternrun's whole store is
 * bounded by as much (RUN_KVS_MAX_BYTES), so a server sending more is broken. */
#define PMI_WIRE_BULK_TOTAL_MAX ((size_t)64 << 20)
/* Most entry lines in one reply: each is at least "cmd=tern_kv key=x value=\n". */
#define PMI_WIRE_BULK_MAX (PMI_WIRE_BULK_BYTES / 24)

/*
 * Check a parsed head line of a bulk reply: cmd=tern_getall_result, rc=0, count in
 * [0, PMI_WIRE_BULK_MAX], next -1 or above `start`. Returns 0 and fills *count and
 * *next, or -1.
 */
int pmi_wire_bulk_head(const struct pmi_msg *m, int start, int *count, int *next);

/*
 * Check a parsed entry line of a bulk reply: exactly cmd=tern_kv key=K value=V, K
 * non-empty, without '=', starting with `prefix` and at most PMI_WIRE_KEY_MAX bytes, V at most
 * PMI_WIRE_VAL_MAX. Returns 0 and points *key and *val into m's line, or -1.
 */
int pmi_wire_bulk_entry(const struct pmi_msg *m, const char *prefix, const char **key,
                        const char **val);

#endif

/*
 * output.c - --tag-output / -l: forward each rank's stdout and stderr to ternrun's
 * own, with every line prefixed by "[rank] ".
 *
 * Ranks write into pipes; ternrun is the only writer of the tagged stream, and it
 * emits only whole lines (each batch of lines in one write), so lines of different
 * ranks never interleave mid-line. A line longer than RUN_OUT_LINE_MAX is emitted in
 * pieces rather than buffered without bound; a last line without '\n' is completed
 * when its stream ends so the next rank's line starts on a fresh line.
 *
 * A proxy on another host forwards every rank's output this way, tagged or not,
 * and its "writes" become OUT frames to the root, which writes them out as they
 * come: whole lines still never interleave.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ternrun.h"

#define RUN_OUT_LINE_MAX (1u << 20)
#define RUN_OUT_CHUNK    65536

/* Set once writing to ternrun's stdout (1) or stderr (2) fails, e.g. EPIPE after
 * `ternrun ... | head`: the rest of that stream is dropped rather than retried. */
static int out_dest_dead[3];

/* Growable scratch buffer for the prefixed text of one write. */
static char *out_scratch;
static size_t out_scratch_cap;

/* Set in a proxy: output goes to the root as frames. */
static struct run_ctl_queue *out_sink;
static void (*out_sink_after)(void *);
static void *out_sink_arg;

void run_out_set_sink(struct run_ctl_queue *q, void (*after_send)(void *), void *arg)
{
    out_sink = q;
    out_sink_after = after_send;
    out_sink_arg = arg;
}

void run_out_write(int dest, const char *buf, size_t len)
{
    if (dest < 1 || dest > 2 || out_dest_dead[dest] || len == 0) return;
    if (out_sink) {
        if (run_ctl_send(out_sink, RUN_CTL_OUT, dest, 0, buf, len) != 0)
            out_dest_dead[dest] = 1;
        else if (out_sink_after)
            out_sink_after(out_sink_arg);
        return;
    }
    if (pmi_write_all(dest, buf, len) != 0) out_dest_dead[dest] = 1;
}

#define out_write run_out_write

static int out_reserve(size_t need)
{
    if (need <= out_scratch_cap) return 0;
    size_t cap = out_scratch_cap ? out_scratch_cap : 4096;
    while (cap < need)
        cap *= 2;
    char *p = realloc(out_scratch, cap);
    if (p == NULL) return -1;
    out_scratch = p;
    out_scratch_cap = cap;
    return 0;
}

/*
 * Emit the complete lines in s->buf with their prefixes, in one write, and keep the
 * incomplete tail. With `final`, the tail is emitted too, completed by a '\n'.
 */
static void out_emit(struct run_stream *s, int rank, int final)
{
    char prefix[24];
    int plen = s->tag ? snprintf(prefix, sizeof prefix, "[%d] ", rank) : 0;
    prefix[plen] = '\0';
    size_t nlines = 0;
    for (size_t i = 0; i < s->len; i++)
        if (s->buf[i] == '\n') nlines++;
    size_t done = 0, used = 0;
    if (out_reserve(s->len + (nlines + 1) * (size_t)plen + 1) != 0) {
        /* Out of memory: forward the bytes untagged rather than lose them. */
        out_write(s->dest, s->buf, s->len);
        s->len = 0;
        return;
    }
    while (done < s->len) {
        char *nl = memchr(s->buf + done, '\n', s->len - done);
        if (nl == NULL) break;
        size_t n = (size_t)(nl - (s->buf + done)) + 1;
        if (!s->midline) {
            memcpy(out_scratch + used, prefix, (size_t)plen);
            used += (size_t)plen;
        }
        memcpy(out_scratch + used, s->buf + done, n);
        used += n;
        done += n;
        s->midline = 0;
    }
    size_t tail = s->len - done;
    if (tail > 0 && (final || tail >= RUN_OUT_LINE_MAX)) {
        if (!s->midline) {
            memcpy(out_scratch + used, prefix, (size_t)plen);
            used += (size_t)plen;
        }
        memcpy(out_scratch + used, s->buf + done, tail);
        used += tail;
        done += tail;
        s->midline = 1;
    }
    if (final && s->midline && s->tag) { /* untagged bytes pass unchanged */
        out_scratch[used++] = '\n';
        s->midline = 0;
    }
    out_write(s->dest, out_scratch, used);
    memmove(s->buf, s->buf + done, s->len - done);
    s->len -= done;
}

void run_out_open(struct run_stream *s, int fd, int dest, int tag)
{
    s->fd = fd;
    s->dest = dest;
    s->tag = tag;
    s->midline = 0;
    s->buf = NULL;
    s->len = s->cap = 0;
}

/* Read one chunk. Returns 1 if the stream may have more, 0 at its end. */
static int out_read_once(struct run_stream *s, int rank)
{
    if (s->fd < 0) return 0;
    if (s->cap - s->len < RUN_OUT_CHUNK) {
        size_t cap = s->cap ? s->cap * 2 : RUN_OUT_CHUNK * 2;
        char *p = realloc(s->buf, cap);
        if (p == NULL) {
            out_emit(s, rank, 1);
            run_out_close(s, rank);
            return 0;
        }
        s->buf = p;
        s->cap = cap;
    }
    ssize_t n;
    do {
        n = read(s->fd, s->buf + s->len, RUN_OUT_CHUNK);
    } while (n < 0 && errno == EINTR);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (n <= 0) {
        run_out_close(s, rank);
        return 0;
    }
    s->len += (size_t)n;
    out_emit(s, rank, 0);
    /* Give the buffer back once a burst is over; the pipe holds at most 64 KiB. */
    if (s->len == 0 && s->cap > RUN_OUT_CHUNK * 2) {
        free(s->buf);
        s->buf = NULL;
        s->cap = 0;
    }
    return 1;
}

void run_out_readable(struct run_stream *s, int rank)
{
    out_read_once(s, rank);
}

void run_out_drain(struct run_stream *s, int rank)
{
    /* Bounded: a process the rank left behind may hold the pipe and keep writing. */
    for (int i = 0; i < 64 && out_read_once(s, rank); i++) {
    }
}

void run_out_close(struct run_stream *s, int rank)
{
    if (s->len > 0 || s->midline) out_emit(s, rank, 1);
    if (s->fd >= 0) close(s->fd);
    s->fd = -1;
    free(s->buf);
    s->buf = NULL;
    s->len = s->cap = 0;
}

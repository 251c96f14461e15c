/*
 * log.c - one formatted line per call, written with a single write() so lines from
 * different ranks do not interleave.
 */
#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

int util_log_rank = -1;

void util_log(const char *fmt, ...)
{
    char line[512];
    int n = snprintf(line, sizeof line, "tern[%d]: ", util_log_rank);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2) len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t rc = write(STDERR_FILENO, line, len);
    (void)rc;
}

/*
 * log.h - diagnostics on stderr, gated by TERN_DEBUG, each line prefixed with the rank.
 */
#ifndef TERN_UTIL_LOG_H
#define TERN_UTIL_LOG_H

#include "util/tunables.h"

/* Rank shown in messages; -1 until boot knows it. */
extern int util_log_rank;

void util_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define UTIL_DEBUG(level, ...)                                                                     \
    do {                                                                                           \
        if (__builtin_expect(util_tun.debug >= (level), 0)) util_log(__VA_ARGS__);                 \
    } while (0)

/* Errors the user must see even with TERN_DEBUG=0. */
#define UTIL_ERROR(...) util_log(__VA_ARGS__)

#endif

/*
 * mp_check.h - shared helpers of the multi-process tests in tests/mp: CHECK macros that
 * name the file, line and rank of a failure and end the whole job with a non-zero exit,
 * and the deterministic data patterns the tests fill buffers with and verify.
 *
 * Everything here is static so each test is a single translation unit.
 */
#ifndef TERN_TESTS_MP_CHECK_H
#define TERN_TESTS_MP_CHECK_H

#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tern.h"

/* World rank of this process once tern_init succeeded, -1 before. */
static int mp_rank = -1;
/* What the test is doing right now, printed with every failure ("size 4096 iter 2"). */
static char mp_where[256];

/*
 * Report a failure and end the job. tern_abort ends every rank at once so the others
 * do not sit blocked until the launcher's timeout; before init (or after finalize)
 * only this process can exit.
 */
static inline void mp_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((noreturn, format(printf, 3, 4)));
static inline void mp_fail(const char *file, int line, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "FAIL [rank %d pid %d] %s:%d: %s%s%s\n", mp_rank, (int)getpid(), file, line,
            msg, mp_where[0] ? " -- while: " : "", mp_where);
    fflush(stderr);
    fflush(stdout);
    if (tern_initialized()) tern_abort(1);
    _exit(1);
}

#define MP_FAIL(...) mp_fail(__FILE__, __LINE__, __VA_ARGS__)

/* Set the context printed with failures (printf format). */
#define MP_WHERE(...) snprintf(mp_where, sizeof mp_where, __VA_ARGS__)

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) MP_FAIL("CHECK(%s) failed", #cond);                                           \
    } while (0)

/* CHECK with an explanation: CHECKF(x == 3, "x is %d", x). */
#define CHECKF(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            char mp_msg_[768];                                                                     \
            snprintf(mp_msg_, sizeof mp_msg_, __VA_ARGS__);                                        \
            MP_FAIL("CHECK(%s) failed: %s", #cond, mp_msg_);                                       \
        }                                                                                          \
    } while (0)

/* A tern call that must return `expected` (a TERN_OK or TERN_ERR_* value). */
#define CHECK_ERR(expr, expected)                                                                  \
    do {                                                                                           \
        int mp_rc_ = (expr);                                                                       \
        int mp_ex_ = (expected);                                                                   \
        if (mp_rc_ != mp_ex_)                                                                      \
            MP_FAIL("%s returned %d (%s), expected %d (%s)", #expr, mp_rc_, tern_err_name(mp_rc_), \
                    mp_ex_, tern_err_name(mp_ex_));                                                \
    } while (0)

/* A tern call that must succeed. */
#define CHECK_OK(expr) CHECK_ERR(expr, TERN_OK)

/* A tern call that must return one of two errors (where tern.h leaves the choice open). */
#define CHECK_ERR2(expr, e1, e2)                                                                   \
    do {                                                                                           \
        int mp_rc_ = (expr);                                                                       \
        if (mp_rc_ != (e1) && mp_rc_ != (e2))                                                      \
            MP_FAIL("%s returned %d (%s), expected %s or %s", #expr, mp_rc_,                       \
                    tern_err_name(mp_rc_), tern_err_name(e1), tern_err_name(e2));                  \
    } while (0)

#define CHECK_EQ_INT(got, want)                                                                    \
    do {                                                                                           \
        long long mp_g_ = (long long)(got), mp_w_ = (long long)(want);                             \
        if (mp_g_ != mp_w_)                                                                        \
            MP_FAIL("%s == %s: got %lld, expected %lld", #got, #want, mp_g_, mp_w_);               \
    } while (0)

#define CHECK_EQ_SIZE(got, want)                                                                   \
    do {                                                                                           \
        size_t mp_g_ = (size_t)(got), mp_w_ = (size_t)(want);                                      \
        if (mp_g_ != mp_w_) MP_FAIL("%s == %s: got %zu, expected %zu", #got, #want, mp_g_, mp_w_); \
    } while (0)

static inline void mp_watchdog_fire(int sig)
{
    (void)sig;
    char msg[512];
    int n = snprintf(msg, sizeof msg,
                     "FAIL [rank %d pid %d] watchdog: still running after the "
                     "time limit (hang?) -- while: %s\n",
                     mp_rank, (int)getpid(), mp_where);
    if (n > 0) (void)!write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
    _exit(1);
}

/*
 * End this process with a message naming what it was doing if it still runs after
 * `seconds` (MP_WATCHDOG overrides; 0 disables). Shorter than the launcher's timeout, so
 * a hang says where it hung.
 */
static inline void mp_watchdog(int seconds)
{
    const char *v = getenv("MP_WATCHDOG");
    if (v && *v) seconds = atoi(v);
    if (seconds <= 0) return;
    signal(SIGALRM, mp_watchdog_fire);
    alarm((unsigned)seconds);
}

/* Initialise tern and remember the rank for failure messages. */
static inline void mp_init(int *argc, char ***argv)
{
    mp_watchdog(100);
    CHECK_OK(tern_init(argc, argv));
    mp_rank = tern_rank();
    CHECKF(mp_rank >= 0, "tern_rank() returned %d (%s)", mp_rank, tern_err_name(mp_rank));
    int size = tern_size();
    CHECKF(size >= 1 && mp_rank < size, "tern_size() returned %d with rank %d", size, mp_rank);
}

static inline void *mp_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) MP_FAIL("out of memory allocating %zu bytes", n);
    return p;
}

/* CLOCK_MONOTONIC seconds: comparable between processes of one machine (unlike a
 * timer whose origin may be per process). */
static inline double mp_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void mp_sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* ---- deterministic data ------------------------------------------------------------- */

static inline uint64_t mp_mix64(uint64_t x)
{
    /* splitmix64 finaliser: every input bit flips about half the output bits. */
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* A seed from up to four integers (size, iteration, rank, ...). */
static inline uint64_t mp_seed(uint64_t a, uint64_t b, uint64_t c, uint64_t d)
{
    return mp_mix64(mp_mix64(mp_mix64(mp_mix64(a) ^ b) ^ c) ^ d);
}

/*
 * The pattern: 8-byte word k of a buffer with seed s is w(s, k) below, stored little-end
 * first. It depends on the position, so a block copied to the wrong offset, a repeated
 * block or a block from an earlier message is caught. Cheap enough for 64 MiB.
 */
static inline uint64_t mp_word(uint64_t seed, uint64_t k)
{
    uint64_t x = (k + 1) * 0x9e3779b97f4a7c15ULL ^ seed;
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    return x ^ (x >> 32);
}

static inline uint8_t mp_pattern_byte(uint64_t seed, size_t i)
{
    return (uint8_t)(mp_word(seed, i / 8) >> (8 * (i % 8)));
}

static inline void mp_fill(void *buf, size_t len, uint64_t seed)
{
    uint8_t *p = buf;
    size_t nw = len / 8;
    for (size_t k = 0; k < nw; k++) {
        uint64_t w = mp_word(seed, k);
        memcpy(p + 8 * k, &w, 8);
    }
    for (size_t i = 8 * nw; i < len; i++)
        p[i] = mp_pattern_byte(seed, i);
}

/*
 * Index of the first byte of buf[0..len) that differs from the pattern, or len if all
 * match. (Byte order: the fill stores words in host order and so does this check.)
 */
static inline size_t mp_pattern_mismatch(const void *buf, size_t len, uint64_t seed)
{
    const uint8_t *p = buf;
    size_t nw = len / 8;
    for (size_t k = 0; k < nw; k++) {
        uint64_t w = mp_word(seed, k), g;
        memcpy(&g, p + 8 * k, 8);
        if (g != w) {
            for (size_t i = 8 * k;; i++)
                if (p[i] != (uint8_t)(w >> (8 * (i % 8)))) return i;
        }
    }
    for (size_t i = 8 * nw; i < len; i++)
        if (p[i] != mp_pattern_byte(seed, i)) return i;
    return len;
}

/* Fail unless buf[0..len) holds the pattern of `seed`; `what` names the message. */
#define CHECK_PATTERN(buf, len, seed, ...)                                                         \
    do {                                                                                           \
        const uint8_t *mp_b_ = (const uint8_t *)(buf);                                             \
        size_t mp_len_ = (len);                                                                    \
        uint64_t mp_s_ = (seed);                                                                   \
        size_t mp_i_ = mp_pattern_mismatch(mp_b_, mp_len_, mp_s_);                                 \
        if (mp_i_ != mp_len_) {                                                                    \
            char mp_what_[256];                                                                    \
            snprintf(mp_what_, sizeof mp_what_, __VA_ARGS__);                                      \
            size_t mp_bad_ = 1;                                                                    \
            while (mp_i_ + mp_bad_ < mp_len_ &&                                                    \
                   mp_b_[mp_i_ + mp_bad_] != mp_pattern_byte(mp_s_, mp_i_ + mp_bad_))              \
                mp_bad_++;                                                                         \
            MP_FAIL("%s: %zu-byte payload differs at byte %zu: expected 0x%02x, got 0x%02x "       \
                    "(%zu consecutive bad bytes from there)",                                      \
                    mp_what_, mp_len_, mp_i_, mp_pattern_byte(mp_s_, mp_i_), mp_b_[mp_i_],         \
                    mp_bad_);                                                                      \
        }                                                                                          \
    } while (0)

/* Guard bytes after a receive area: set before the receive, checked after. */
#define MP_GUARD_LEN  64
#define MP_GUARD_BYTE 0xc3

static inline void mp_guard_set(void *buf, size_t off)
{
    memset((uint8_t *)buf + off, MP_GUARD_BYTE, MP_GUARD_LEN);
}

#define CHECK_GUARD(buf, off, ...)                                                                 \
    do {                                                                                           \
        const uint8_t *mp_g_ = (const uint8_t *)(buf) + (off);                                     \
        for (size_t mp_j_ = 0; mp_j_ < MP_GUARD_LEN; mp_j_++)                                      \
            if (mp_g_[mp_j_] != MP_GUARD_BYTE) {                                                   \
                char mp_what_[256];                                                                \
                snprintf(mp_what_, sizeof mp_what_, __VA_ARGS__);                                  \
                MP_FAIL("%s: byte %zu past the end of the receive area (offset %zu) was "          \
                        "overwritten: 0x%02x, expected guard 0x%02x",                              \
                        mp_what_, mp_j_, (size_t)(off) + mp_j_, mp_g_[mp_j_], MP_GUARD_BYTE);      \
            }                                                                                      \
    } while (0)

/* Check a status of a completed receive. */
#define CHECK_STATUS(st, src, tg, nbytes)                                                          \
    do {                                                                                           \
        const tern_status_t *mp_st_ = &(st);                                                       \
        if (mp_st_->source != (src) || mp_st_->tag != (tg) || mp_st_->bytes != (size_t)(nbytes))   \
            MP_FAIL("status {source %d, tag %d, bytes %zu}, expected {source %d, tag %d, "         \
                    "bytes %zu}",                                                                  \
                    mp_st_->source, mp_st_->tag, mp_st_->bytes, (int)(src), (int)(tg),             \
                    (size_t)(nbytes));                                                             \
    } while (0)

/* A status with values no real operation reports, to see what a call wrote. */
static inline tern_status_t mp_status_poison(void)
{
    tern_status_t st;
    st.source = -12345;
    st.tag = -12345;
    st.error = -12345;
    st.bytes = (size_t)0xdeadbeef;
    return st;
}

static inline int mp_env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : def;
}

/* Most messages one mp_window has in flight each way. */
#define MP_WINDOW_MAX 64

/*
 * One window between a pair of ranks: `count` messages of n bytes from `from` to the
 * other (both ways at once when `both`; a rank paired with itself does both), message k in
 * slot k (`slot` bytes apart) of sbuf and rbuf, patterned with mp_seed(sender, n, round,
 * k). The receives are posted first, then the sends; every message is checked byte for
 * byte, with a guard after it.
 */
static inline void mp_window(uint8_t *sbuf, uint8_t *rbuf, size_t slot, int count, size_t n, int me,
                             int peer, int from, int both, int round, int tag)
{
    tern_request_t rq[2 * MP_WINDOW_MAX];
    tern_status_t st[2 * MP_WINDOW_MAX];
    int nr = 0;
    int recv = both || me != from || peer == me, send = both || me == from || peer == me;
    if (count > MP_WINDOW_MAX) MP_FAIL("mp_window: %d messages, at most %d", count, MP_WINDOW_MAX);
    if (recv)
        for (int k = 0; k < count; k++) {
            memset(rbuf + (size_t)k * slot, 0x5a, n);
            mp_guard_set(rbuf + (size_t)k * slot, n);
            CHECK_OK(tern_irecv(rbuf + (size_t)k * slot, n + MP_GUARD_LEN, peer, tag,
                                TERN_COMM_WORLD, &rq[nr++]));
        }
    if (send)
        for (int k = 0; k < count; k++) {
            mp_fill(sbuf + (size_t)k * slot, n,
                    mp_seed((uint64_t)me, n, (uint64_t)round, (uint64_t)k));
            CHECK_OK(tern_isend(sbuf + (size_t)k * slot, n, peer, tag, TERN_COMM_WORLD, &rq[nr++]));
        }
    CHECK_OK(tern_waitall((size_t)nr, rq, st));
    if (recv)
        for (int k = 0; k < count; k++) {
            CHECK_STATUS(st[k], peer, tag, n);
            CHECK_PATTERN(rbuf + (size_t)k * slot, n,
                          mp_seed((uint64_t)peer, n, (uint64_t)round, (uint64_t)k),
                          "round %d message %d of %zu bytes from rank %d", round, k, n, peer);
            CHECK_GUARD(rbuf + (size_t)k * slot, n, "message %d of %zu bytes", k, n);
        }
}

#endif

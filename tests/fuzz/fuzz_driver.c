/*
 * fuzz_driver.c - a stand-in for libFuzzer's main when the compiler has no
 * -fsanitize=fuzzer (GCC): replays every file of the corpus directories given, then
 * feeds mutated corpus inputs and random bytes to LLVMFuzzerTestOneInput until the
 * time is up. A crash (abort, sanitizer report) fails the run, as with libFuzzer;
 * the input is written to ./crash-standalone first.
 *
 *   fuzz_<name> [-max_total_time=SECONDS] [-seed=N] DIR...
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_MAX_INPUT 8192
#define MAX_CORPUS     1024

static uint8_t *corpus[MAX_CORPUS];
static size_t corpus_len[MAX_CORPUS];
static int ncorpus;
static uint8_t cur[FUZZ_MAX_INPUT];
static size_t cur_len;

static void on_crash(int sig)
{
    FILE *f = fopen("crash-standalone", "wb");
    if (f) {
        fwrite(cur, 1, cur_len, f);
        fclose(f);
    }
    static const char msg[] = "fuzz_driver: crash; input saved to ./crash-standalone\n";
    (void)!write(2, msg, sizeof msg - 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

static uint64_t rng_state;
static uint64_t rng(void)
{
    rng_state += 0x9e3779b97f4a7c15ull;
    uint64_t z = rng_state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void run(const uint8_t *data, size_t len)
{
    memcpy(cur, data, len);
    cur_len = len;
    LLVMFuzzerTestOneInput(cur, cur_len);
}

static void load_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d == NULL) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && ncorpus < MAX_CORPUS) {
        if (e->d_name[0] == '.') continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (f == NULL) continue;
        uint8_t *buf = malloc(FUZZ_MAX_INPUT);
        size_t n = buf ? fread(buf, 1, FUZZ_MAX_INPUT, f) : 0;
        fclose(f);
        if (buf == NULL) continue;
        corpus[ncorpus] = buf;
        corpus_len[ncorpus++] = n;
    }
    closedir(d);
}

/* One random edit of buf (length *len, capacity FUZZ_MAX_INPUT). */
static void mutate(uint8_t *buf, size_t *len)
{
    size_t n = *len;
    switch (rng() % 7) {
    case 0: /* flip a bit */
        if (n) buf[rng() % n] ^= (uint8_t)(1u << (rng() % 8));
        break;
    case 1: /* random byte */
        if (n) buf[rng() % n] = (uint8_t)rng();
        break;
    case 2: /* interesting value at a random place */
        if (n >= 4) {
            static const uint32_t vals[] = {
                0, 1, 0x7f, 0x80, 0xff, 0xffff, 0x7fffffff, 0x80000000u, 0xffffffffu, 32, 40, 4096};
            uint32_t v = vals[rng() % (sizeof vals / sizeof vals[0])];
            memcpy(buf + rng() % (n - 3), &v, 4);
        }
        break;
    case 3: /* truncate */
        if (n) *len = rng() % n;
        break;
    case 4: /* insert random bytes */
        if (n < FUZZ_MAX_INPUT) {
            size_t at = n ? rng() % (n + 1) : 0, k = 1 + rng() % 16;
            if (k > FUZZ_MAX_INPUT - n) k = FUZZ_MAX_INPUT - n;
            memmove(buf + at + k, buf + at, n - at);
            for (size_t i = 0; i < k; i++)
                buf[at + i] = (uint8_t)rng();
            *len = n + k;
        }
        break;
    case 5: /* splice another corpus entry at the end */
        if (ncorpus) {
            int j = (int)(rng() % (uint64_t)ncorpus);
            size_t k = corpus_len[j];
            if (k > FUZZ_MAX_INPUT - n) k = FUZZ_MAX_INPUT - n;
            memcpy(buf + n, corpus[j], k);
            *len = n + k;
        }
        break;
    default: /* duplicate a block */
        if (n && n < FUZZ_MAX_INPUT) {
            size_t from = rng() % n, k = 1 + rng() % (n - from);
            if (k > FUZZ_MAX_INPUT - n) k = FUZZ_MAX_INPUT - n;
            memcpy(buf + n, buf + from, k);
            *len = n + k;
        }
        break;
    }
}

int main(int argc, char **argv)
{
    double seconds = 10;
    rng_state = (uint64_t)time(NULL);
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "-max_total_time=", 16) == 0)
            seconds = atof(argv[i] + 16);
        else if (strncmp(argv[i], "-seed=", 6) == 0)
            rng_state = strtoull(argv[i] + 6, NULL, 10);
        else if (argv[i][0] != '-')
            load_dir(argv[i]);
    }
    signal(SIGABRT, on_crash);
    signal(SIGSEGV, on_crash);
    signal(SIGBUS, on_crash);
    fprintf(stderr, "fuzz_driver: %d corpus inputs, seed %llu, %.0f s\n", ncorpus,
            (unsigned long long)rng_state, seconds);
    for (int i = 0; i < ncorpus; i++)
        run(corpus[i], corpus_len[i]);

    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    static uint8_t buf[FUZZ_MAX_INPUT];
    unsigned long runs = 0;
    for (;;) {
        if ((runs & 1023) == 0) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9 >= seconds)
                break;
        }
        size_t len;
        if (ncorpus && rng() % 8 != 0) {
            int j = (int)(rng() % (uint64_t)ncorpus);
            len = corpus_len[j];
            memcpy(buf, corpus[j], len);
            int edits = 1 + (int)(rng() % 4);
            for (int e = 0; e < edits; e++)
                mutate(buf, &len);
        } else {
            len = rng() % 256;
            for (size_t i = 0; i < len; i++)
                buf[i] = (uint8_t)rng();
        }
        run(buf, len);
        runs++;
    }
    fprintf(stderr, "fuzz_driver: %lu runs, no crash\n", runs);
    for (int i = 0; i < ncorpus; i++)
        free(corpus[i]);
    return 0;
}

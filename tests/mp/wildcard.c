/*
 * wildcard.c - TERN_ANY_SOURCE, TERN_ANY_TAG, probe and iprobe.
 *
 *  1. Tag-selective receives out of arrival order: rank 1 sends tags 1, 2, 3 and rank 0
 *     receives 3, 1, 2 - once with the messages already there (unexpected path, waited
 *     for with iprobe) and once with the receives posted before the sends (expected
 *     path); for a small and a rendezvous size.
 *  2. Every other rank sends rank 0 one message (tag 10+rank, a size of its own; rank 1's
 *     is rendezvous); rank 0 receives them with ANY_SOURCE/ANY_TAG, posted before the
 *     sends (completed by waitall, then by waitany) and after they arrived; the status
 *     must name the right source, tag and size.
 *  3. Every other rank sends rank 0 several messages of distinct sizes and tags (one
 *     empty, one rendezvous); rank 0 probes in varied ways (probe/iprobe, wildcards or
 *     not), receives exactly the probed message into a buffer of exactly the probed
 *     size, and checks it is the one probed, in per-source order.
 */
#include "mp_check.h"

#define TAG_GO 100

static int me, np;

static uint64_t seed_of(int src, int tag, size_t size)
{
    return mp_seed((uint64_t)src, (uint64_t)tag, size, 0x3c4d);
}

static void go_to(int r)
{
    CHECK_OK(tern_send(NULL, 0, r, TAG_GO, TERN_COMM_WORLD));
}

static void wait_go(void)
{
    tern_status_t st;
    CHECK_OK(tern_recv(NULL, 0, 0, TAG_GO, TERN_COMM_WORLD, &st));
    CHECK_STATUS(st, 0, TAG_GO, 0);
}

/* Block (polling) until iprobe sees a message from src with tag; return its size. */
static size_t await_arrival(int src, int tag)
{
    tern_status_t st = mp_status_poison();
    int flag = 0;
    double t0 = mp_now();
    while (!flag) {
        CHECK_OK(tern_iprobe(src, tag, TERN_COMM_WORLD, &flag, &st));
        CHECKF(flag || mp_now() - t0 < 30, "no message from %d tag %d after 30 s", src, tag);
    }
    CHECKF(src == TERN_ANY_SOURCE || st.source == src, "iprobe(source %d) reported source %d", src,
           st.source);
    CHECKF(tag == TERN_ANY_TAG || st.tag == tag, "iprobe(tag %d) reported tag %d", tag, st.tag);
    return st.bytes;
}

/* ---- 1: tags 1, 2, 3 received as 3, 1, 2 -------------------------------------------- */

static void tag_selective(size_t size, int posted_first)
{
    MP_WHERE("tag-selective, size %zu, %s", size, posted_first ? "posted first" : "unexpected");
    if (me == 1) {
        uint8_t *b = mp_malloc(3 * size);
        tern_request_t r[3];
        if (posted_first) wait_go();
        for (int t = 1; t <= 3; t++) {
            mp_fill(b + (size_t)(t - 1) * size, size, seed_of(1, t, size));
            CHECK_OK(
                tern_isend(b + (size_t)(t - 1) * size, size, 0, t, TERN_COMM_WORLD, &r[t - 1]));
        }
        CHECK_OK(tern_waitall(3, r, NULL));
        free(b);
    } else if (me == 0) {
        static const int order[3] = {3, 1, 2};
        uint8_t *b = mp_malloc(3 * (size + MP_GUARD_LEN));
        tern_status_t st[3];
        tern_request_t r[3];
        for (int i = 0; i < 3; i++) {
            mp_guard_set(b + (size_t)i * (size + MP_GUARD_LEN), size);
            st[i] = mp_status_poison();
        }
        if (posted_first) {
            for (int i = 0; i < 3; i++)
                CHECK_OK(tern_irecv(b + (size_t)i * (size + MP_GUARD_LEN), size, 1, order[i],
                                    TERN_COMM_WORLD, &r[i]));
            go_to(1);
            /* Complete them in the posted order 3, 1, 2. */
            for (int i = 0; i < 3; i++)
                CHECK_OK(tern_wait(&r[i], &st[i]));
        } else {
            for (int t = 1; t <= 3; t++)
                CHECK_EQ_SIZE(await_arrival(1, t), size);
            for (int i = 0; i < 3; i++)
                CHECK_OK(tern_recv(b + (size_t)i * (size + MP_GUARD_LEN), size, 1, order[i],
                                   TERN_COMM_WORLD, &st[i]));
        }
        for (int i = 0; i < 3; i++) {
            uint8_t *p = b + (size_t)i * (size + MP_GUARD_LEN);
            CHECK_STATUS(st[i], 1, order[i], size);
            CHECK_PATTERN(p, size, seed_of(1, order[i], size),
                          "receive for tag %d got the wrong message", order[i]);
            CHECK_GUARD(p, size, "receive for tag %d", order[i]);
        }
        free(b);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
}

/* ---- 2: one message from every rank, received with ANY_SOURCE/ANY_TAG ----------------- */

static size_t any_size(int r)
{
    return r == 1 ? 70001 : (size_t)(17 * r);
}

#define ANY_CAP 80000

static void check_any(const uint8_t *buf, const tern_status_t *st, char *seen)
{
    CHECKF(st->source >= 1 && st->source < np, "status.source %d out of range", st->source);
    CHECKF(!seen[st->source], "a second message reported from source %d", st->source);
    seen[st->source] = 1;
    CHECK_STATUS(*st, st->source, 10 + st->source, any_size(st->source));
    CHECK_PATTERN(buf, st->bytes, seed_of(st->source, 10 + st->source, st->bytes),
                  "message reported from source %d", st->source);
}

static void any_source_any_tag(int mode)
{
    /* mode 0: posted first, waitall; 1: posted first, waitany; 2: unexpected, recv. */
    MP_WHERE("ANY_SOURCE/ANY_TAG mode %d", mode);
    if (me != 0) {
        size_t size = any_size(me);
        uint8_t *b = mp_malloc(size);
        mp_fill(b, size, seed_of(me, 10 + me, size));
        if (mode != 2) wait_go();
        tern_request_t r;
        CHECK_OK(tern_isend(b, size, 0, 10 + me, TERN_COMM_WORLD, &r));
        CHECK_OK(tern_wait(&r, NULL));
        free(b);
    } else {
        size_t n = (size_t)np - 1;
        uint8_t *b = mp_malloc(n * ANY_CAP + 1);
        tern_request_t *r = mp_malloc(n * sizeof *r);
        tern_status_t *st = mp_malloc(n * sizeof *st);
        char *seen = calloc((size_t)np, 1);
        if (mode != 2) {
            for (size_t i = 0; i < n; i++) {
                st[i] = mp_status_poison();
                CHECK_OK(tern_irecv(b + i * ANY_CAP, ANY_CAP, TERN_ANY_SOURCE, TERN_ANY_TAG,
                                    TERN_COMM_WORLD, &r[i]));
            }
            for (int q = 1; q < np; q++)
                go_to(q);
            if (mode == 0) {
                CHECK_OK(tern_waitall(n, r, st));
                for (size_t i = 0; i < n; i++) {
                    CHECK(r[i] == TERN_REQUEST_NULL);
                    CHECK_EQ_INT(st[i].error, TERN_OK);
                    check_any(b + i * ANY_CAP, &st[i], seen);
                }
            } else {
                for (size_t k = 0; k < n; k++) {
                    size_t idx = SIZE_MAX;
                    tern_status_t s1 = mp_status_poison();
                    CHECK_OK(tern_waitany(n, r, &idx, &s1));
                    CHECKF(idx < n, "waitany index %zu of %zu", idx, n);
                    CHECK(r[idx] == TERN_REQUEST_NULL);
                    check_any(b + idx * ANY_CAP, &s1, seen);
                }
                size_t idx = 0;
                CHECK_OK(tern_waitany(n, r, &idx, NULL));
                CHECKF(idx == SIZE_MAX, "waitany over finished requests gave index %zu", idx);
            }
        } else {
            for (int q = 1; q < np; q++)
                CHECK_EQ_SIZE(await_arrival(q, TERN_ANY_TAG), any_size(q));
            for (size_t i = 0; i < n; i++) {
                tern_status_t s1 = mp_status_poison();
                CHECK_OK(
                    tern_recv(b, ANY_CAP, TERN_ANY_SOURCE, TERN_ANY_TAG, TERN_COMM_WORLD, &s1));
                check_any(b, &s1, seen);
            }
        }
        free(seen);
        free(st);
        free(r);
        free(b);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
}

/* ---- 3: probe, then receive exactly the probed message -------------------------------- */

#define NPROBE 6

static size_t probe_size(int r, int k)
{
    if (k == 0) return 0;
    if (k == NPROBE - 1) return 50000 + (size_t)r;
    return 8 + (size_t)r * 1000 + (size_t)k * 13;
}

static int probe_tag(int r, int k)
{
    return 20 + (r * 7 + k) % 4;
}

static void probe_then_recv(void)
{
    MP_WHERE("probe then recv");
    if (me != 0) {
        uint8_t *b = mp_malloc(NPROBE * 51000);
        tern_request_t r[NPROBE];
        for (int k = 0; k < NPROBE; k++) {
            size_t size = probe_size(me, k);
            uint8_t *p = b + (size_t)k * 51000;
            if (size) {
                uint32_t hdr[2] = {(uint32_t)me, (uint32_t)k};
                memcpy(p, hdr, 8);
                mp_fill(p + 8, size - 8, seed_of(me, k, size));
            }
            CHECK_OK(tern_isend(p, size, 0, probe_tag(me, k), TERN_COMM_WORLD, &r[k]));
        }
        CHECK_OK(tern_waitall(NPROBE, r, NULL));
        free(b);
    } else {
        int flag = 1;
        tern_status_t st;
        /* Nobody sends tag 999. */
        CHECK_OK(tern_iprobe(TERN_ANY_SOURCE, 999, TERN_COMM_WORLD, &flag, &st));
        CHECK_EQ_INT(flag, 0);
        /* got[r * NPROBE + k]: message k of rank r was received. */
        char *got = calloc((size_t)np * NPROBE, 1);
        int left = (np - 1) * NPROBE;
        for (int round = 0; left > 0; round++, left--) {
            /* Pick a way of probing that is sure to find something. */
            int src = TERN_ANY_SOURCE, tag = TERN_ANY_TAG, how = round % 5;
            int s = 1 + round % (np - 1), first;
            for (;;) {
                for (first = 0; first < NPROBE && got[s * NPROBE + first]; first++) {
                }
                if (first < NPROBE) break;
                s = 1 + s % (np - 1);
            }
            if (how == 1 || how == 3) src = s;
            if (how == 2 || how == 3) tag = probe_tag(s, first);
            st = mp_status_poison();
            if (how == 4) {
                flag = 0;
                while (!flag)
                    CHECK_OK(tern_iprobe(src, tag, TERN_COMM_WORLD, &flag, &st));
            } else {
                CHECK_OK(tern_probe(src, tag, TERN_COMM_WORLD, &st));
            }
            MP_WHERE("probe round %d (src %d tag %d) reported source %d tag %d bytes %zu", round,
                     src, tag, st.source, st.tag, st.bytes);
            CHECKF(st.source >= 1 && st.source < np, "probe reported source %d", st.source);
            CHECK(src == TERN_ANY_SOURCE || st.source == src);
            CHECK(tag == TERN_ANY_TAG || st.tag == tag);
            int ps = st.source;
            /* Non-overtaking: the probed message is the first one of that source not yet
             * received (with that tag, when a tag was asked for). */
            int k = 0;
            while (k < NPROBE &&
                   (got[ps * NPROBE + k] || (tag != TERN_ANY_TAG && probe_tag(ps, k) != tag)))
                k++;
            CHECKF(k < NPROBE, "probe found a message from %d, which has none left", ps);
            CHECK_STATUS(st, ps, probe_tag(ps, k), probe_size(ps, k));
            /* Receive exactly that message, into exactly its size. */
            size_t size = st.bytes;
            uint8_t *b = mp_malloc(size + MP_GUARD_LEN);
            mp_guard_set(b, size);
            tern_status_t rs = mp_status_poison();
            CHECK_OK(tern_recv(size ? b : NULL, size, ps, st.tag, TERN_COMM_WORLD, &rs));
            CHECK_STATUS(rs, ps, st.tag, size);
            if (size) {
                uint32_t hdr[2];
                memcpy(hdr, b, 8);
                CHECKF(hdr[0] == (uint32_t)ps && hdr[1] == (uint32_t)k,
                       "received message %u of rank %u, probed message %d of rank %d", hdr[1],
                       hdr[0], k, ps);
                CHECK_PATTERN(b + 8, size - 8, seed_of(ps, k, size), "message %d of rank %d", k,
                              ps);
            }
            CHECK_GUARD(b, size, "probed receive");
            free(b);
            got[ps * NPROBE + k] = 1;
        }
        CHECK_OK(tern_iprobe(TERN_ANY_SOURCE, TERN_ANY_TAG, TERN_COMM_WORLD, &flag, &st));
        CHECKF(!flag, "message left over from %d tag %d", st.source, st.tag);
        free(got);
    }
    CHECK_OK(tern_barrier(TERN_COMM_WORLD));
}

int main(int argc, char **argv)
{
    mp_init(&argc, &argv);
    me = mp_rank;
    np = tern_size();
    if (np < 2) {
        printf("wildcard: needs at least 2 ranks\n");
        CHECK_OK(tern_finalize());
        return 0;
    }
    static const size_t sel_sizes[] = {16, 100000};
    for (int s = 0; s < 2; s++)
        for (int pf = 0; pf < 2; pf++)
            tag_selective(sel_sizes[s], pf);
    for (int mode = 0; mode < 3; mode++)
        any_source_any_tag(mode);
    probe_then_recv();
    MP_WHERE("finalize");
    CHECK_OK(tern_finalize());
    if (me == 0) printf("wildcard: %d ranks ok\n", np);
    return 0;
}

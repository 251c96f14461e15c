/*
 * test_match.c - the posted and unexpected queues: MPI matching order with specific
 * and wildcard sources and tags, removal from the middle, per-context separation.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "unit.h"

static core_req_t *post(struct core_match *m, int src, int tag)
{
    core_req_t *r = core_req_alloc(CORE_REQ_RECV);
    r->peer = src;
    r->tag = tag;
    core_match_post(m, r);
    return r;
}

static struct core_unexp *unexp(int src, int tag)
{
    struct core_unexp *u = calloc(1, sizeof *u);
    u->src = src;
    u->tag = tag;
    return u;
}

static void test_posted(void)
{
    struct core_match *m = core_match_get(10);
    core_req_t *a = post(m, 1, 5);
    core_req_t *b = post(m, TERN_ANY_SOURCE, 5);
    core_req_t *c = post(m, 2, TERN_ANY_TAG);
    core_req_t *d = post(m, TERN_ANY_SOURCE, TERN_ANY_TAG);
    /* A message from 2 tag 5 matches the first receive that accepts it: b. */
    CHECK(core_match_find_posted(m, 2, 5) == b);
    /* From 1 tag 5: a (posted first). */
    CHECK(core_match_find_posted(m, 1, 5) == a);
    /* From 3 tag 9: only d accepts. */
    CHECK(core_match_find_posted(m, 3, 9) == d);
    /* From 2 tag 7: c. */
    CHECK(core_match_find_posted(m, 2, 7) == c);
    CHECK(core_match_find_posted(m, 2, 7) == NULL);
    CHECK(m->posted_head == NULL && m->posted_tail == NULL);
    /* A different context never sees these receives. */
    core_req_t *e = post(m, 4, 4);
    CHECK(core_match_find_posted(core_match_get(12), 4, 4) == NULL);
    core_match_unpost(m, e);
    CHECK(m->posted_head == NULL);
    core_req_free(a), core_req_free(b), core_req_free(c), core_req_free(d), core_req_free(e);
}

static void test_unexpected(void)
{
    struct core_match *m = core_match_get(20);
    struct core_unexp *u1 = unexp(1, 1), *u2 = unexp(2, 2), *u3 = unexp(1, 3), *u4 = unexp(2, 1);
    core_match_append_unexp(m, u1);
    core_match_append_unexp(m, u2);
    core_match_append_unexp(m, u3);
    core_match_append_unexp(m, u4);
    /* Probe does not remove; receive does; arrival order decides among matches. */
    CHECK(core_match_find_unexp(m, TERN_ANY_SOURCE, 1, 0) == u1);
    CHECK(core_match_find_unexp(m, 1, TERN_ANY_TAG, 1) == u1);
    CHECK(core_match_find_unexp(m, 1, TERN_ANY_TAG, 1) == u3); /* next from source 1 */
    CHECK(core_match_find_unexp(m, TERN_ANY_SOURCE, 1, 1) == u4);
    CHECK(m->unexp_tail == u2); /* tail fixed after removing the last entry */
    struct core_unexp *u5 = unexp(3, 3);
    core_match_append_unexp(m, u5);
    CHECK(core_match_find_unexp(m, 3, 4, 1) == NULL);
    CHECK(core_match_find_unexp(m, TERN_ANY_SOURCE, TERN_ANY_TAG, 1) == u2);
    CHECK(core_match_find_unexp(m, TERN_ANY_SOURCE, TERN_ANY_TAG, 1) == u5);
    CHECK(m->unexp_head == NULL && m->unexp_tail == NULL);
    free(u1), free(u2), free(u3), free(u4), free(u5);
}

static void test_requests(void)
{
    /* Ids are stable and look-ups reject free or wrong-kind requests. */
    core_req_t *r[300];
    for (int i = 0; i < 300; i++)
        r[i] = core_req_alloc(i % 2 ? CORE_REQ_SEND : CORE_REQ_RECV);
    for (int i = 0; i < 300; i++) {
        r[i]->state = CORE_RS_WAIT_ACK;
        CHECK(core_req_lookup(r[i]->id, r[i]->kind) == r[i]);
        CHECK(core_req_lookup(r[i]->id,
                              r[i]->kind == CORE_REQ_SEND ? CORE_REQ_RECV : CORE_REQ_SEND) == NULL);
    }
    CHECK(core_req_lookup(0, CORE_REQ_SEND) == NULL);
    CHECK(core_req_lookup(1u << 30, CORE_REQ_SEND) == NULL);
    uint32_t id = r[7]->id;
    core_req_free(r[7]);
    CHECK(core_req_lookup(id, CORE_REQ_SEND) == NULL);
    for (int i = 0; i < 300; i++)
        if (i != 7) core_req_free(r[i]);
}

int main(void)
{
    test_posted();
    test_unexpected();
    test_requests();
    core_match_release_all();
    core_req_release_all();
    return unit_done("test_match");
}

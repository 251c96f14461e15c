/*
 * match.c - posted-receive and unexpected-message queues with MPI matching rules:
 * a message matches the first posted receive (in posting order) whose source and tag
 * accept it; a receive matches the first unexpected message (in arrival order). Frames
 * from one peer arrive in send order, so messages of one (source, context) never
 * overtake each other. One pair of queues per context id.
 */
#include <stdlib.h>

#include "core/core.h"

struct core_match *core_match_get(uint16_t ctx)
{
    struct core_match *m = core.match[ctx];
    if (m == NULL) {
        m = calloc(1, sizeof *m);
        core.match[ctx] = m;
    }
    return m;
}

void core_match_post(struct core_match *m, core_req_t *r)
{
    r->next = NULL;
    r->prev = m->posted_tail;
    if (m->posted_tail)
        m->posted_tail->next = r;
    else
        m->posted_head = r;
    m->posted_tail = r;
    r->state = CORE_RS_POSTED;
    if (r->peer >= 0 && core.peers) core.peers[r->peer].posted_from++;
}

void core_match_unpost(struct core_match *m, core_req_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        m->posted_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    else
        m->posted_tail = r->prev;
    r->next = r->prev = NULL;
    if (r->peer >= 0 && core.peers) core.peers[r->peer].posted_from--;
}

static int core_match_accepts(int want_src, int want_tag, int src, int tag)
{
    return (want_src == TERN_ANY_SOURCE || want_src == src) &&
           (want_tag == TERN_ANY_TAG || want_tag == tag);
}

core_req_t *core_match_find_posted(struct core_match *m, int src, int tag)
{
    for (core_req_t *r = m->posted_head; r; r = r->next) {
        if (core_match_accepts(r->peer, r->tag, src, tag)) {
            core_match_unpost(m, r);
            return r;
        }
    }
    return NULL;
}

/* The receive find_posted would return, left in the queue. */
core_req_t *core_match_peek_posted(struct core_match *m, int src, int tag)
{
    for (core_req_t *r = m->posted_head; r; r = r->next)
        if (core_match_accepts(r->peer, r->tag, src, tag)) return r;
    return NULL;
}

struct core_unexp *core_match_find_unexp(struct core_match *m, int src, int tag, int remove)
{
    struct core_unexp *prev = NULL;
    for (struct core_unexp *u = m->unexp_head; u; prev = u, u = u->next) {
        if (!core_match_accepts(src, tag, u->src, u->tag)) continue;
        if (remove) {
            if (prev)
                prev->next = u->next;
            else
                m->unexp_head = u->next;
            if (m->unexp_tail == u) m->unexp_tail = prev;
            u->next = NULL;
        }
        return u;
    }
    return NULL;
}

void core_match_append_unexp(struct core_match *m, struct core_unexp *u)
{
    u->next = NULL;
    if (m->unexp_tail)
        m->unexp_tail->next = u;
    else
        m->unexp_head = u;
    m->unexp_tail = u;
}

void core_match_release_all(void)
{
    for (int c = 0; c < CORE_CTX_MAX; c++) {
        struct core_match *m = core.match[c];
        if (m == NULL) continue;
        while (m->unexp_head) {
            struct core_unexp *u = m->unexp_head;
            m->unexp_head = u->next;
            free(u);
        }
        free(m);
        core.match[c] = NULL;
    }
}

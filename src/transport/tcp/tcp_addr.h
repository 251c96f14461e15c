/*
 * tcp_addr.h - interface selection of the TCP transport (tcp_addr.c), used by tcp.c: the
 * candidate addresses to listen on, best first, and the interface holding a local address.
 */
#ifndef TERN_TCP_ADDR_H
#define TERN_TCP_ADDR_H

#include <net/if.h>
#include <netinet/in.h>
#include <stddef.h>

struct boot;

struct tcp_cand {
    struct in_addr ip, mask;
    char name[IF_NAMESIZE];
    int rank; /* preference: 0 up and running, 1 up without carrier, 2 virtual */
};

/* tcp_addr.c */
int tcp_if_of(struct in_addr ip, char *name, size_t cap);
int tcp_candidates(const struct boot *b, struct tcp_cand *out, int max);

#endif

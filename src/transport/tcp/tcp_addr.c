/*
 * tcp_addr.c - the addresses the TCP transport listens on and publishes: which IPv4
 * interfaces are usable (TERN_TCP_IF, or every interface that is up, loopback alone for
 * a job on one node), in which order, and which of them are virtual bridges. The
 * connections made on them are in tcp.c, whose top comment describes the whole scheme.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>

#include "boot/boot.h"
#include "tern.h"
#include "transport/tcp/tcp_addr.h"
#include "util/tunables.h"
#include "util/log.h"
#include "util/tunables.h"

/*
 * Interfaces. Names of the virtual bridges and links that container and VM tooling puts
 * on hosts: the same private subnet (docker0's 172.17.0.1/16) often sits on every host,
 * so an address there may well be this host's own. They are used only when nothing else
 * reaches a peer.
 */
static int tcp_if_virtual(const char *name)
{
    static const char *const prefix[] = {"docker",  "virbr", "br-",         "veth",   "lxcbr",
                                         "lxdbr",   "cni",   "podman",      "vnet",   "vmnet",
                                         "flannel", "cali",  "kube-bridge", "vboxnet"};
    for (size_t i = 0; i < sizeof prefix / sizeof prefix[0]; i++)
        if (strncmp(name, prefix[i], strlen(prefix[i])) == 0) return 1;
    return 0;
}

/* The interface that holds local address ip, written to name (or "?"). Returns whether
 * that interface is a virtual bridge. */
int tcp_if_of(struct in_addr ip, char *name, size_t cap)
{
    struct ifaddrs *ifs;
    snprintf(name, cap, "?");
    if (getifaddrs(&ifs) != 0) return 0;
    int virt = 0;
    for (struct ifaddrs *i = ifs; i; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) continue;
        if (((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr != ip.s_addr) continue;
        snprintf(name, cap, "%s", i->ifa_name);
        virt = tcp_if_virtual(i->ifa_name);
        break;
    }
    freeifaddrs(ifs);
    return virt;
}

/*
 * The addresses to listen on and publish, best first (see the top of the file):
 * loopback alone when the whole job is on this node and TERN_TCP_IF is unset; the
 * interfaces TERN_TCP_IF names, in its order; else every IPv4 interface that is up,
 * not loopback, ordered running before carrier-less, and virtual bridges last.
 */
int tcp_candidates(const struct boot *b, struct tcp_cand *out, int max)
{
    const char *want = util_tun.tcp_if;
    int listed = want && *want;
    if (!listed && b->local_size == b->size) {
        out[0].ip.s_addr = htonl(INADDR_LOOPBACK);
        out[0].mask.s_addr = htonl(0xff000000u);
        snprintf(out[0].name, sizeof out[0].name, "lo");
        out[0].rank = 0;
        return 1;
    }
    struct ifaddrs *ifs;
    if (getifaddrs(&ifs) != 0) {
        UTIL_ERROR("tcp: getifaddrs: %s", strerror(errno));
        return TERN_ERR_TRANSPORT;
    }
    int n = 0;
    for (struct ifaddrs *i = ifs; i && n < max; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET) continue;
        if (listed) {
            if (!util_list_has(want, i->ifa_name)) continue;
        } else if ((i->ifa_flags & IFF_LOOPBACK) || !(i->ifa_flags & IFF_UP)) {
            continue;
        }
        struct tcp_cand *c = &out[n++];
        c->ip = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        c->mask.s_addr = i->ifa_netmask ? ((struct sockaddr_in *)i->ifa_netmask)->sin_addr.s_addr
                                        : htonl(0xffffffffu);
        snprintf(c->name, sizeof c->name, "%s", i->ifa_name);
        c->rank = listed                         ? 0
                  : tcp_if_virtual(i->ifa_name)  ? 2
                  : (i->ifa_flags & IFF_RUNNING) ? 0
                                                 : 1;
    }
    freeifaddrs(ifs);
    /* Stable sort by preference (TERN_TCP_IF: all 0, its order is the interfaces'). */
    for (int a = 1; a < n; a++)
        for (int k = a; k > 0 && out[k - 1].rank > out[k].rank; k--) {
            struct tcp_cand t = out[k];
            out[k] = out[k - 1];
            out[k - 1] = t;
        }
    if (n == 0) {
        if (listed)
            UTIL_ERROR("tcp: TERN_TCP_IF=%s names no interface with an IPv4 address", want);
        else
            UTIL_ERROR("tcp: no non-loopback IPv4 interface is up (set TERN_TCP_IF)");
        return TERN_ERR_TRANSPORT;
    }
    return n;
}

#!/usr/bin/env python3
"""mktree.py - write the fake sysfs trees of tests/topo (the ones checked in came from it).

    python3 tests/topo/mktree.py tests/topo

Each tree holds what src/util/topo.c reads: devices/system/cpu/{online,cpuN/topology,
cpuN/cache}, devices/system/node (when the machine has NUMA) and fs/cgroup's cpuset.

  2s2n-smt  2 sockets, one NUMA node and one L3 each, 8 cores with 2 threads (16 cpus),
            numbered as many 2-socket BIOSes do: cpu c is core c % 8, thread c // 8, and
            core k sits on socket k % 2 (so cpus 0 and 1 are on different sockets).
  cpuset    1 socket without NUMA information, 4 cores with 2 threads (cpu c and c + 4),
            two L3 groups (cores 0-1, cores 2-3), and a cgroup limited to cores 2 and 3
            (cpuset.cpus.effective = 2-3,6-7).
"""
import os
import sys


def cpulist(cpus):
    cpus = sorted(cpus)
    out, i = [], 0
    while i < len(cpus):
        j = i
        while j + 1 < len(cpus) and cpus[j + 1] == cpus[j] + 1:
            j += 1
        out.append(str(cpus[i]) if i == j else "%d-%d" % (cpus[i], cpus[j]))
        i = j + 1
    return ",".join(out)


def put(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def machine(root, ncpu, socket_of, core_of, l3_of, numa, cpuset=None):
    """core_of(c): a core key; l3_of(c): an L3 key; numa: write devices/system/node."""
    cpu = "devices/system/cpu"
    put(root, cpu + "/online", cpulist(range(ncpu)))
    for c in range(ncpu):
        sib = [d for d in range(ncpu) if core_of(d) == core_of(c)]
        l3 = [d for d in range(ncpu) if l3_of(d) == l3_of(c)]
        put(root, "%s/cpu%d/topology/physical_package_id" % (cpu, c), str(socket_of(c)))
        put(root, "%s/cpu%d/topology/core_cpus_list" % (cpu, c), cpulist(sib))
        put(root, "%s/cpu%d/topology/thread_siblings_list" % (cpu, c), cpulist(sib))
        caches = [(1, "Data", "32K", sib), (1, "Instruction", "32K", sib),
                  (2, "Unified", "1024K", sib), (3, "Unified", "32768K", l3)]
        for k, (level, kind, size, shared) in enumerate(caches):
            d = "%s/cpu%d/cache/index%d/" % (cpu, c, k)
            put(root, d + "level", str(level))
            put(root, d + "type", kind)
            put(root, d + "size", size)
            put(root, d + "shared_cpu_list", cpulist(shared))
    if numa:
        nodes = sorted({socket_of(c) for c in range(ncpu)})
        put(root, "devices/system/node/online", cpulist(nodes))
        for n in nodes:
            put(root, "devices/system/node/node%d/cpulist" % n,
                cpulist([c for c in range(ncpu) if socket_of(c) == n]))
    if cpuset is not None:
        put(root, "fs/cgroup/cpuset.cpus.effective", cpuset)


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    machine(os.path.join(top, "2s2n-smt"), 16, socket_of=lambda c: (c % 8) % 2,
            core_of=lambda c: c % 8, l3_of=lambda c: (c % 8) % 2, numa=True)
    machine(os.path.join(top, "cpuset"), 8, socket_of=lambda c: 0, core_of=lambda c: c % 4,
            l3_of=lambda c: (c % 4) // 2, numa=False, cpuset="2-3,6-7")


if __name__ == "__main__":
    main()

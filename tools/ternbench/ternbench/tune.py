"""tune.py - `ternbench tune`: measure this machine's collective crossovers and write a
tuning file that tern reads at start (TERN_TUNING=FILE).

For every collective with more than one algorithm, at each process count and size, the
collective is timed once per algorithm (forced with TERN_COLL_<OP>); the fastest wins,
except that the built-in table's own choice is kept unless another algorithm beats it by
more than --margin (timings on a shared machine are noisy: a rule must pay for itself).
Runs of sizes with the same winner become one rule; the file has rules for the process
counts measured only, and the built-in table answers for the others. Afterwards every
collective is timed again with the default table and with the new file, and the table
printed shows both ("before" and "after"), so a user sees what the file changed.

Rules match on the size that drives the choice (coll_select.c): the message for bcast,
the vector for reduce and allreduce, the whole buffer (p x block) for gather, scatter,
allgather and reduce_scatter, one block for alltoall. Collectives small enough for the
shared-memory region (TERN_COLL_SHM_MAX) do not consult the table on one node.
"""

import csv
import datetime
import io
import os
import socket
import subprocess
import sys

from .runner import Progress, parse_size, progress_mode

# driver op -> (TERN_COLL_ variable, tuning-file name, algorithms, size key is p x bytes)
KINDS = {
    "bcast": ("TERN_COLL_BCAST", "bcast",
              ["binomial", "scatter_ring", "scatter_recursive_doubling"], False),
    "reduce": ("TERN_COLL_REDUCE", "reduce", ["binomial", "rabenseifner"], False),
    "allreduce": ("TERN_COLL_ALLREDUCE", "allreduce",
                  ["recursive_doubling", "rabenseifner", "ring"], False),
    "gather": ("TERN_COLL_GATHER", "gather", ["binomial", "linear"], True),
    "scatter": ("TERN_COLL_SCATTER", "scatter", ["binomial", "linear"], True),
    "allgather": ("TERN_COLL_ALLGATHER", "allgather",
                  ["recursive_doubling", "bruck", "ring"], True),
    "alltoall": ("TERN_COLL_ALLTOALL", "alltoall", ["bruck", "pairwise"], False),
    "red_scat_blk": ("TERN_COLL_REDUCE_SCATTER", "reduce_scatter",
                     ["recursive_halving", "pairwise"], True),
}


def _measure(tree, p, op, sizes, env_extra, budget, transport, timeout=300):
    """{bytes: seconds} for one collective at p ranks (median of the trials)."""
    env = dict(os.environ)
    env.update(env_extra)
    if transport:
        env["TERN_TRANSPORTS"] = transport
    cmd = [tree.ternrun, "-n", str(p), tree.driver("tern_coll"), "--csv", "-o", op,
           "-s", ",".join(str(s) for s in sizes), "-t", "3", "-i", "200", "-B", str(budget)]
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout)
    if out.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(cmd), out.returncode,
                                                   out.stderr.strip()[-400:]))
    res = {}
    for row in csv.DictReader(io.StringIO(out.stdout)):
        if row.get("pattern") == op:
            res[int(row["bytes"])] = float(row["t_med_us"]) * 1e-6
    return res


def rules_for(kind_name, p, sizes, times, default, margin, whole):
    """Rules (lines) for one collective at one p. times: {alg: {bytes: s}}; default:
    {bytes: alg the built-in table picks}. Sizes in the driver's unit; whole: key = p*n."""
    win = []
    for n in sizes:
        cands = {a: t[n] for a, t in times.items() if n in t}
        if not cands:
            continue
        best = min(cands, key=cands.get)
        d = default.get(n)
        if d in cands and cands[d] <= cands[best] * (1 + margin):
            best = d
        win.append((n, best))
    lines = []
    for i, (n, a) in enumerate(win):
        if i + 1 < len(win) and win[i + 1][1] == a:
            continue
        key = n * p if whole else n
        bound = "any" if i + 1 == len(win) else "<=%d" % key
        lines.append("%-15s %-6d %-12s %s" % (kind_name, p, bound, a))
    return lines


def _default_algs(sim, kind_name, p, sizes, whole):
    """What the built-in table picks (asked of tern_collsim, which compiles the table)."""
    if sim is None:
        return {}
    import json
    op = {"reduce_scatter": "reduce_scatter_block"}.get(kind_name, kind_name)
    out = subprocess.run([sim, "--op", op, "--p", str(p), "--bytes",
                          ",".join(str(s) for s in sizes)], capture_output=True, text=True)
    res = {}
    for line in out.stdout.splitlines():
        r = json.loads(line)
        res[r["bytes"]] = r["alg"]
    return res


def tune(a, tree):
    from .simulate import SimError, find_sim
    try:
        sim = find_sim(tree.root)
    except SimError:
        sim = None
    nps = [int(x) for x in (a.np or "2,3,4").split(",")]
    sizes = [parse_size(x) for x in (a.sizes or "8,64,512,4K,32K,256K,1M").split(",")]
    ops = [o for o in (a.ops.split(",") if a.ops else KINDS) if o in KINDS]
    total = sum(len(KINDS[o][2]) for o in ops) * len(nps) + 2 * len(ops) * len(nps)
    prog = Progress(total, mode=progress_mode(a))
    lines = []
    for p in nps:
        for op in ops:
            var, kname, algs, whole = KINDS[op]
            times = {}
            for alg in algs:
                prog.set_label("%s p=%d %s" % (op, p, alg))
                times[alg] = _measure(tree, p, op, sizes, {var: alg}, a.budget, a.transport)
                prog.add()
            lines += rules_for(kname, p, sizes, times,
                               _default_algs(sim, kname, p, sizes, whole), a.margin, whole)
    head = ["# tern tuning file: written by `ternbench tune` on %s, %s" %
            (socket.gethostname(), datetime.datetime.now().isoformat(timespec="seconds")),
            "# transport: %s; process counts: %s; sizes: %s; margin %.0f%%" %
            (a.transport or "default", ",".join(map(str, nps)),
             ",".join(map(str, sizes)), 100 * a.margin),
            "# <collective> <procs> <bytes: any or <=N, the size that drives the choice> "
            "<algorithm>; first match wins; use with TERN_TUNING=<this file>"]
    with open(a.output, "w") as f:
        f.write("\n".join(head + lines) + "\n")
    # before and after
    rows = []
    for p in nps:
        for op in ops:
            prog.set_label("%s p=%d before/after" % (op, p))
            before = _measure(tree, p, op, sizes, {}, a.budget, a.transport)
            prog.add()
            after = _measure(tree, p, op, sizes, {"TERN_TUNING": os.path.abspath(a.output)},
                             a.budget, a.transport)
            prog.add()
            for n in sizes:
                if n in before and n in after:
                    rows.append((op, p, n, before[n], after[n]))
    prog.finish()
    print("ternbench tune: wrote %s (%d rules)" % (a.output, len(lines)))
    print("%-14s %3s %10s %12s %12s %8s" % ("collective", "p", "size", "before", "after",
                                            "speedup"))
    for op, p, n, b, t in rows:
        print("%-14s %3d %10d %10.2fus %10.2fus %7.2fx" % (op, p, n, b * 1e6, t * 1e6, b / t))
    return 0

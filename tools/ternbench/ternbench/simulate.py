"""simulate.py - `ternbench predict --simulate`: collectives at any p from tern's own
schedules.

Curves fitted at p = 2..4 say little about p = 65,536. Instead, tern_collsim (a driver
built from the library's own collective builders) produces every rank's schedule for the
process count asked and plays the messages through a LogGP-style model whose parameters
come from this machine's point-to-point measurements (a `ternbench run` directory):

    a   one-way small-message time  = Hockney t_s of the ping-pong      (= L + 2o)
    G   seconds per byte            = Hockney t_b of the ping-pong
    g   gap between small messages  = per-message time of the smallest streamed size
    o   CPU overhead per message    = min(g, a/2)   (a stream is paced by the ends' CPUs)
    L   wire latency                = a - 2o
    gamma, c  reduction and copy cost per byte, measured by tern_collsim itself

`--check` compares the simulation with the collectives the same run measured (p = 2..4
here, oversubscribed beyond the cores) and prints the relative error of each point, so a
prediction comes with the error of its model where it can be checked.
"""

import json
import os
import shutil
import subprocess

from . import models, report
from .runner import load, parse_size

# ternbench's collective names -> tern_collsim's
OPS = {"barrier": "barrier", "bcast": "bcast", "reduce": "reduce", "allreduce": "allreduce",
       "gather": "gather", "scatter": "scatter", "allgather": "allgather",
       "alltoall": "alltoall", "red_scat_blk": "reduce_scatter_block", "scan": "scan"}


class SimError(Exception):
    pass


def find_sim(tree_root=None):
    """The tern_collsim binary: beside the tern tree's drivers, else on PATH."""
    cands = []
    if tree_root:
        cands += [os.path.join(tree_root, d, "tern_collsim") for d in ("libexec/tern", "bench")]
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    p = shutil.which("tern_collsim")
    if p:
        return p
    raise SimError("tern_collsim not found (build the 'bench' target of a tern build tree)")


def loggp(an, impl="tern", mode=None):
    """LogGP parameters from one analysed run (report.analyse) for one implementation."""
    pp = [s for s in an["p2p"].values() if s["impl"] == impl and s["pattern"] == "pingpong"
          and (mode is None or s["mode"] == mode)]
    if not pp:
        raise SimError("the run has no ping-pong of %s to derive LogGP parameters from" % impl)
    h = pp[0]["hockney"]
    a, G = max(h["t_s"], 1e-9), max(h["t_b"], 1e-13)
    st = [s for s in an["p2p"].values() if s["impl"] == impl and s["pattern"] == "stream"]
    g = None
    if st:
        s = st[0]
        g = float(s["t"][0])  # per-message time of the smallest size streamed
    if not g or g <= 0:
        g = a / 2
    o = min(g, a / 2)
    return {"a": a, "G": G, "g": g, "o": o, "L": max(a - 2 * o, 0.0),
            "source": "%s %s ping-pong + stream" % (impl, pp[0]["mode"])}


def local_costs(sim):
    out = subprocess.run([sim, "--measure-local"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        raise SimError("tern_collsim --measure-local failed: " + out.stderr.strip())
    return json.loads(out.stdout)


def run_sim(sim, params, ops, ps, sizes, alg=None, timeout=600):
    """Simulate; returns a list of dicts (op, p, bytes, alg, time, messages, ...)."""
    cmd = [sim, "--op", ",".join(ops), "--p", ",".join(str(p) for p in ps),
           "--bytes", ",".join(str(n) for n in sizes)]
    for k in ("L", "o", "g", "G", "gamma", "c"):
        cmd += ["--" + k, repr(float(params[k]))]
    if alg:
        cmd += ["--alg", alg]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise SimError("tern_collsim failed: " + out.stderr.strip())
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def params_for(run_dir, sim, impl="tern", stat="med"):
    meta, rows = load(run_dir)
    an = report.analyse(rows, stat)
    prm = loggp(an, impl)
    prm.update(local_costs(sim))
    return meta, rows, prm


def measured_points(rows, impl="tern", stat="med"):
    """{(op, p, bytes): seconds} of the collectives a run measured."""
    col = "t_%s_us" % stat
    out = {}
    for r in rows:
        if r.get("job") == "coll" and r["impl"] == impl and r["pattern"] in OPS:
            out[(OPS[r["pattern"]], int(r["nprocs"]), int(r["bytes"]))] = r[col] * 1e-6
    return out


def simulate_cmd(a, tree_root=None):
    """`ternbench predict --simulate [--check]`."""
    sim = find_sim(tree_root)
    meta, rows, prm = params_for(a.out, sim, a.impl or "tern", a.stat)
    print("ternbench predict --simulate - tern's own schedules under LogGP parameters from %s"
          % os.path.abspath(a.out))
    print("  transport: %s; parameters (%s): L %s, o %s, g %s, G %s/B (%.0f MB/s), "
          "gamma %s/B, c %s/B" %
          (meta.get("transport", "?"), prm["source"], report.fmt_t(prm["L"]),
           report.fmt_t(prm["o"]), report.fmt_t(prm["g"]), "%.3g s" % prm["G"],
           1e-6 / prm["G"], "%.3g s" % prm["gamma"], "%.3g s" % prm["c"]))
    ops = [OPS.get(o, o) for o in (a.op.split(",") if a.op and a.op != "p2p" else OPS)]
    if a.check:
        pts = measured_points(rows, a.impl or "tern", a.stat)
        if not pts:
            raise SimError("the run measured no collectives of %s" % (a.impl or "tern"))
        keys = sorted(k for k in pts if k[0] in ops)
        ps = sorted({k[1] for k in keys})
        sizes = sorted({k[2] for k in keys})
        res = run_sim(sim, prm, sorted({k[0] for k in keys}), ps, sizes)
        print("\n%-22s %4s %10s %-28s %12s %12s %8s" %
              ("collective", "p", "size", "algorithm", "simulated", "measured", "error"))
        errs = []
        for r in res:
            k = (r["op"], r["p"], r["bytes"])
            if k not in pts:
                continue
            m = pts[k]
            e = (r["time"] - m) / m
            errs.append(abs(e))
            print("%-22s %4d %10s %-28s %12s %12s %+7.0f%%" %
                  (r["op"], r["p"], report.fmt_size(r["bytes"]), r["alg"],
                   report.fmt_t(r["time"]), report.fmt_t(m), 100 * e))
        if errs:
            errs.sort()
            print("\n|error|: median %.0f%%, 90th percentile %.0f%%, worst %.0f%% over %d points"
                  % (100 * errs[len(errs) // 2], 100 * errs[int(0.9 * (len(errs) - 1))],
                     100 * errs[-1], len(errs)))
            cores = os.cpu_count() or 0
            print("(measured runs with more ranks than this machine's %d cores are "
                  "oversubscribed: the model has no term for that)" % cores)
        return 0
    ps = [int(x) for x in a.p.split(",")]
    sizes = [parse_size(x) for x in a.sizes.split(",")]
    res = run_sim(sim, prm, ops, ps, sizes)
    print("\n%-22s %7s %10s %-28s %12s %12s %10s" %
          ("collective", "p", "size", "algorithm", "time", "messages", "per rank"))
    for r in res:
        print("%-22s %7d %10s %-28s %12s %12d %10.1f" %
              (r["op"], r["p"], report.fmt_size(r["bytes"]), r["alg"], report.fmt_t(r["time"]),
               r["messages"], r["messages"] / max(r["p"], 1)))
    return 0

#!/usr/bin/env python3
"""test_collsim.py - the collective simulator and the tuning file, against numbers worked
out by hand.

usage: test_collsim.py BUILD_DIR TERNBENCH_SRC

tern_collsim runs the library's own schedule builders; with gamma = c = 0 and g <= o each
round of a latency-bound algorithm costs exactly 2o + L, so:
  barrier (dissemination) at p = 8:          3 rounds          -> 3 (2o + L)
  allreduce (recursive doubling), p = 1024:  10 rounds         -> 10 (2o + L + 8G), p log p
  bcast (binomial) at p = 1000:              p - 1 messages
  bcast at p = 2 of n bytes:                 2o + L + nG
  allgather (ring) at p = 16, 64 KiB:        p (p - 1) messages
The tuning file is parsed by the library's coll_select.c (compiled into the simulator):
a rule picks its algorithm, a bad line is refused naming the line. simulate.loggp and
tune.rules_for are checked on synthetic inputs.
"""

import json
import os
import subprocess
import sys
import tempfile

build, src = sys.argv[1], sys.argv[2]
sys.path.insert(0, src)
SIM = os.path.join(build, "bench", "tern_collsim")
L, O, G = 5e-6, 1e-6, 1e-9
BASE = ["--L", str(L), "--o", str(O), "--g", str(O), "--G", str(G), "--gamma", "0", "--c", "0"]
fails = 0


def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        fails += 1


def sim(*args, ok=True):
    r = subprocess.run([SIM] + list(args) + BASE, capture_output=True, text=True, timeout=120)
    if ok and r.returncode != 0:
        print(r.stderr)
    return r, [json.loads(line) for line in r.stdout.splitlines() if line.strip()]


def close(a, b):
    return abs(a - b) <= 1e-12 + 1e-9 * abs(b)


_, rs = sim("--op", "barrier", "--p", "8", "--bytes", "0")
check(rs and close(rs[0]["time"], 3 * (2 * O + L)) and rs[0]["messages"] == 24,
      "barrier p=8: 3 rounds of 2o+L, 24 messages (%s)" % rs)
_, rs = sim("--op", "allreduce", "--p", "1024", "--bytes", "8")
check(rs and rs[0]["alg"] == "recursive_doubling" and close(rs[0]["time"], 10 * (2 * O + L + 8 * G))
      and rs[0]["messages"] == 1024 * 10, "allreduce p=1024 8 B: 10 rounds, p log p messages")
_, rs = sim("--op", "bcast", "--p", "1000,2", "--bytes", "8,1000")
by = {(r["p"], r["bytes"]): r for r in rs}
check(by[(1000, 8)]["messages"] == 999 and by[(1000, 8)]["alg"] == "binomial",
      "bcast p=1000: binomial, p-1 messages")
check(close(by[(2, 1000)]["time"], 2 * O + L + 1000 * G), "bcast p=2 1000 B: 2o + L + nG")
_, rs = sim("--op", "allgather", "--p", "16", "--bytes", "64k")
check(rs and rs[0]["alg"] == "ring" and rs[0]["messages"] == 16 * 15,
      "allgather p=16 64 KiB: ring, p(p-1) messages")
r, rs = sim("--op", "alltoall", "--p", "8192", "--bytes", "8", ok=False)
check(r.returncode == 0 and not rs and "p^2" in r.stderr,
      "alltoall at p=8192 is refused with a reason, not attempted")

with tempfile.TemporaryDirectory() as d:
    good = os.path.join(d, "good.tuning")
    with open(good, "w") as f:
        f.write("# comment\nallreduce 4 <=1m ring\nallreduce any any recursive_doubling\n"
                "bcast 2-8 <=64k scatter_ring  # trailing comment\n")
    _, rs = sim("--tuning", good, "--op", "allreduce,bcast", "--p", "4,16", "--bytes", "8,2m")
    by = {(r["op"], r["p"], r["bytes"]): r["alg"] for r in rs}
    check(by.get(("allreduce", 4, 8)) == "ring" and
          by.get(("allreduce", 4, 2 << 20)) == "recursive_doubling" and
          by.get(("allreduce", 16, 8)) == "recursive_doubling" and
          by.get(("bcast", 4, 8)) == "scatter_ring" and by.get(("bcast", 16, 8)) == "binomial",
          "tuning file rules pick the algorithms, the table answers the rest (%s)" % by)
    for text, why in (("allreduce 4 <=1x ring\n", "sizes are"),
                      ("allreduce 4 any ring\nbcast 4 any ring\n", "not an algorithm"),
                      ("allreduc 4 any ring\n", "unknown collective"),
                      ("allreduce 0-3 any ring\n", "process counts"),
                      ("allreduce 4 any\n", "expected")):
        bad = os.path.join(d, "bad.tuning")
        with open(bad, "w") as f:
            f.write(text)
        r, rs = sim("--tuning", bad, "--op", "allreduce", "--p", "4", "--bytes", "8", ok=False)
        line = text.count("\n")
        check(r.returncode != 0 and why in r.stderr and ("line %d" % line) in r.stderr,
              "bad tuning file refused: %r -> %s" % (text, r.stderr.strip().splitlines()[:1]))

from ternbench import simulate, tune  # noqa: E402

an = {"p2p": {"tern/pingpong/standard": {"impl": "tern", "pattern": "pingpong",
                                         "mode": "standard",
                                         "hockney": {"t_s": 10e-6, "t_b": 2e-10}},
              "tern/stream/standard": {"impl": "tern", "pattern": "stream", "mode": "standard",
                                       "t": [3e-6, 4e-6]}}}
p = simulate.loggp(an)
check(close(p["o"], 3e-6) and close(p["L"], 4e-6) and close(p["g"], 3e-6) and
      close(p["G"], 2e-10), "LogGP from Hockney + stream: o = min(g, a/2), L = a - 2o")

times = {"A": {8: 1.0, 1024: 1.0, 65536: 9.0}, "B": {8: 2.0, 1024: 1.04, 65536: 3.0}}
lines = tune.rules_for("allreduce", 4, [8, 1024, 65536], times, {}, 0.05, False)
check([ln.split() for ln in lines] == [["allreduce", "4", "<=1024", "A"],
                                       ["allreduce", "4", "any", "B"]], "rules: %s" % lines)
lines = tune.rules_for("allreduce", 4, [8, 1024, 65536], times, {1024: "B"}, 0.05, False)
check([ln.split() for ln in lines] == [["allreduce", "4", "<=8", "A"],
                                       ["allreduce", "4", "any", "B"]],
      "the table's choice stays within the margin: %s" % lines)
lines = tune.rules_for("gather", 4, [8, 1024], {"binomial": {8: 1, 1024: 5},
                                                "linear": {8: 2, 1024: 1}}, {}, 0.05, True)
check([ln.split() for ln in lines] == [["gather", "4", "<=32", "binomial"],
                                       ["gather", "4", "any", "linear"]],
      "whole-buffer collectives key on p x bytes: %s" % lines)

# compare's summaries: the worst ratio per setting and the doubling check
from ternbench import compare  # noqa: E402


def row(impl, pat, n, t):
    return {"impl": impl, "job": "p2p", "pattern": pat, "mode": "standard", "nprocs": 2,
            "bytes": n, "t_med_us": t}


rows = [row("tern-mpi", "pingpong", 8, 1.0), row("tern-mpi", "pingpong", 16, 1.1),
        row("tern-mpi", "pingpong", 32, 2.5), row("openmpi", "pingpong", 8, 1.5),
        row("openmpi", "pingpong", 16, 0.99), row("openmpi", "pingpong", 32, 3.0)]
w = compare.worst(rows, ["tern-mpi", "openmpi"])
check(len(w) == 1 and w[0]["pattern"] == "pingpong" and w[0]["at_bytes"] == 16 and
      close(w[0]["worst_ratio"], 0.99 / 1.1), "worst ratio per setting: %s" % w)
d = compare.doubling(rows)
check([(c["pattern"], c["bytes"]) for c in d] == [("pingpong", 16)],
      "doubling 16 -> 32 B more than doubles the time: %s" % d)

print("%d failure(s)" % fails)
sys.exit(1 if fails else 0)

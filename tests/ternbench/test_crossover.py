"""ternbench crossover: the parser, the per-class summary and the crossover points on
hand-made `tern-adapt` lines with known answers; then a real 2-rank run over shm at two
adaptive sizes whose report is read back: both receivers timed both ways (eager copies and
pulls) of each class, every cost positive, the way chosen one of tern's, the times there;
without TERN_ADAPT_REPORT the driver prints no such line; bad options give exit 2.

usage: test_crossover.py <build dir> <tools/ternbench dir> <scratch dir>
"""
import json
import os
import shutil
import subprocess
import sys

from tbcheck import check, done

build, pkg, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, pkg)
from ternbench import crossover  # noqa: E402

tb = os.path.join(build, "bin", "ternbench")
out = os.path.join(scratch, "ternbench-crossover")
shutil.rmtree(out, ignore_errors=True)


# ---- pure functions on known input ----------------------------------------------------
def eager(rank, lo, hi, way, out_=0.1, pull=0.3):
    return ("tern-adapt rank=%d peer=%d kind=eager lo=%d hi=%d eager_in=0.2000 out=%.4f "
            "out_n=5 nt_in=-1.0000 nt_out=-1.0000 nt_n=0 pull=%.4f pull_n=7 way=%s"
            % (rank, 1 - rank, lo, hi, out_, pull, way))


lines = [
    "some other output",
    eager(0, 4097, 8192, "eager", 0.1, 0.5),
    eager(1, 4097, 8192, "eager", 0.3, 0.7),
    eager(0, 8193, 16384, "rndv"),
    eager(1, 8193, 16384, "rndv"),
    eager(1, 16385, 32768, "eager"),
    "tern-adapt rank=1 peer=0 kind=rv lo=1048577 hi=0 pull=0.0500 pull_n=4 stream=-1.0000 "
    "stream_n=0 way=pull",
    "tern-adapt rank=1 peer=0 kind=eager lo=4097 hi=8192 way=eager",  # costs missing
    "tern-adapt rank=1 peer=0 kind=eager lo=x hi=8192 eager_in=1 out=1 nt_in=1 nt_out=1 "
    "pull=1 way=eager",  # lo does not parse
    "tern-adapt rank=1 peer=0 kind=rv lo=1 hi=2 pull=1 stream=1 way=eager",  # not an rv way
    "tern-adapt rank=1 peer=0 kind=other lo=1 hi=2 way=eager",
]
recs = crossover.parse_adapt(lines)
check(len(recs) == 6, "6 of the lines are records: %d" % len(recs))
rv = [r for r in recs if r["kind"] == "rv"]
check(len(rv) == 1 and rv[0]["pull"] == 0.05 and rv[0]["stream"] is None and rv[0]["hi"] == 0,
      "the rv line: pull 0.05, stream not timed (None), no upper bound: %s" % rv)
check(recs[0]["nt_in"] is None and recs[0]["eager_in"] == 0.2 and recs[0]["rank"] == 0,
      "-1 reads as not timed, the rest as numbers: %s" % recs[0])
rows = crossover.summarize(recs)
check([(r["kind"], r["lo"]) for r in rows] ==
      [("eager", 4097), ("eager", 8193), ("eager", 16385), ("rv", 1048577)],
      "classes ascending, eager before rv: %s" % [(r["kind"], r["lo"]) for r in rows])
first = rows[0]
check(abs(first["out"] - 0.2) < 1e-9 and abs(first["pull"] - 0.6) < 1e-9,
      "the median of two receivers' costs: out 0.2, pull 0.6: %s" % first)
check(first["nt_out"] is None, "a cost nobody timed stays None")
check(first["ways"] == {"eager": 2, "nt": 0, "rndv": 0, "fixed": 0} and first["chosen"] == "eager",
      "way counts and the majority: %s" % first["ways"])
check(crossover.crossovers(rows) == [(4097, "eager"), (8193, "rndv"), (16385, "eager")],
      "every change of way, not only the first: %s" % crossover.crossovers(rows))
check(crossover.crossovers(rows, "rv") == [(1048577, "pull")], "rv crossovers")
check(crossover.crossovers([], "eager") == [] and crossover.crossovers_text([], "eager") is None,
      "no classes: no crossovers")
md = "\n".join(crossover.table_md("pingpong", rows, {6000: [1.0, 3.0]}))
check("rndv from 8193 B" in md and "| 6000 | 2.000 |" in md,
      "the markdown names the crossover and the median time:\n%s" % md)

# ---- a real run: 2 ranks on shm, one size in each of two adaptive classes ----------------
r = subprocess.run([tb, "crossover", "--tern-prefix", build, "--out", out, "--rounds", "1",
                    "--seconds", "0.02", "--sizes", "6000,24000", "--patterns", "pingpong"],
                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                   timeout=240)
print(r.stdout[-3000:])
check(r.returncode == 0, "ternbench crossover exits 0: %d" % r.returncode)
try:
    with open(os.path.join(out, "crossover.json")) as f:
        res = json.load(f)
except (OSError, ValueError) as e:
    res = None
    check(False, "crossover.json parses: %s" % e)
if res:
    pp = res["patterns"]["pingpong"]
    by_lo = {c["lo"]: c for c in pp["classes"] if c["kind"] == "eager"}
    check(sorted(by_lo) == [4097, 16385], "the two classes of 6000 and 24000 B were timed: %s"
          % sorted(by_lo))
    for lo, c in sorted(by_lo.items()):
        # In a ping-pong both ranks receive, and each period's burst sends the other way,
        # so every receiver timed its copies out and its pulls.
        check(c["n"] == 2, "class %d: both receivers reported: %d" % (lo, c["n"]))
        check(c["chosen"] in ("eager", "nt", "rndv"), "class %d: a way chosen, both timed: %s"
              % (lo, c["chosen"]))
        check(sum(c["ways"].values()) == c["n"], "class %d: each receiver chose one way" % lo)
        for k in ("out", "pull"):
            check(c[k] is not None and 0 < c[k] < 100,
                  "class %d: %s timed, a cost in ns per byte: %s" % (lo, k, c[k]))
        # The sender's own copy cost arrives in its eager frames once it has timed one (1 of
        # 4 copies, or a burst's): in about 1 short run in 20 a class ends without it.
        check(c["eager_in"] is None or 0 < c["eager_in"] < 100,
              "class %d: the sender's copy cost, where known, in ns per byte: %s"
              % (lo, c["eager_in"]))
    check(pp["crossovers"]["eager"] and pp["crossovers"]["eager"][0][0] == 4097,
          "the crossovers start at the first class: %s" % pp["crossovers"])
    times = pp["times_us"]
    check(sorted(times) == ["24000", "6000"] and all(v and min(v) > 0 for v in times.values()),
          "a time per message at each size: %s" % times)
    with open(os.path.join(out, "crossover.md")) as f:
        text = f.read()
    check("## pingpong" in text and "Crossovers: " in text and "4097 B-8 KiB" in text,
          "crossover.md has the pattern, its classes and its crossovers")

# Without TERN_ADAPT_REPORT the same driver prints no tern-adapt line.
drv = os.path.join(out, "bin", "mpi_pingpong.tern")
env = dict(os.environ, TERN_TRANSPORTS="self,shm")
env.pop("TERN_ADAPT_REPORT", None)
r = subprocess.run([os.path.join(build, "bin", "ternrun"), "-n", "2", drv, "--only", "pingpong",
                    "-s", "6000", "-i", "300", "-t", "1"], stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, universal_newlines=True, env=env, timeout=120)
check(r.returncode == 0 and "6000" in r.stdout, "the driver runs: %s" % r.stdout[-500:])
check("tern-adapt" not in r.stdout, "no tern-adapt line unless asked for")

for bad in (["--patterns", "nope"], ["--rounds", "0"], ["--sizes", "x"]):
    r = subprocess.run([tb, "crossover", "--tern-prefix", build, "--out", out + "-bad"] + bad,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=60)
    check(r.returncode == 2, "%s: exit 2, got %d: %s" % (bad, r.returncode, r.stdout[-300:]))

done("ok")

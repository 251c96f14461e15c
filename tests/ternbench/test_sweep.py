"""ternbench sweep: the smoke run (--quick, tern alone on shm, plus a library that is missing
and must be named and skipped) writes every output and they parse with the right structure;
the size list, the worst-ratio table and the doubling check are checked on hand-made points
with known answers; bad options give exit 2. Structure, not speed.

usage: test_sweep.py <build dir> <tools/ternbench dir> <scratch dir>
"""
import csv
import json
import os
import shutil
import subprocess
import sys

from tbcheck import check, done

build, pkg, scratch = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, pkg)
from ternbench import sweep  # noqa: E402

tb = os.path.join(build, "bin", "ternbench")
out = os.path.join(scratch, "ternbench-sweep")
shutil.rmtree(out, ignore_errors=True)


# ---- pure functions on known input ----------------------------------------------------
s = sweep.netpipe_sizes(0, 64 << 20)
check(s[:9] == [0, 1, 2, 4, 5, 7, 8, 11, 13], "netpipe sizes start 0,1,2,4,5,7,8,11,13: %s"
      % s[:9])
check(s[-2:] == [(64 << 20) - 3, 64 << 20], "netpipe sizes end 64M-3, 64M: %s" % s[-2:])
# 0, 1, 2, then 2^2 .. 2^26 with +-3 each (1 = 4-3 once; 64M+3 is past the top)
check(len(s) == 3 + 25 * 3 - 2, "0 B-64 MiB is %d sizes, want 76" % len(s))
check(sweep.parse_sizes("8,1K,1M") == [8, 1024, 1 << 20], "a size list is taken as is")
check(sweep.parse_sizes("1K-4K") == [1024, 1027, 2045, 2048, 2051, 4093, 4096],
      "a range 1K-4K: %s" % sweep.parse_sizes("1K-4K"))
for bad in ("5-1", "x", "1-2G"):
    try:
        sweep.parse_sizes(bad)
        check(False, "--sizes %s must be refused" % bad)
    except sweep.SweepError:
        pass


def pt(lib, n, t, pat="pingpong", tr="shm", tmin=None):
    return {"load": 0, "transport": tr, "pattern": pat, "lib": lib, "bytes": n, "trials": 3,
            "t_min_us": t if tmin is None else tmin, "t_med_us": t, "MBps_max": 0.0,
            "MBps_med": 0.0}


pts = [pt("tern", 8, 1.0), pt("ompi4", 8, 2.0), pt("mpich4", 8, 0.5),
       pt("tern", 16, 1.0), pt("ompi4", 16, 4.0), pt("mpich4", 16, 1.25),
       pt("tern", 32, 3.0, tmin=2.5), pt("ompi4", 32, 3.0),
       pt("tern", 8, 10.0, tr="tcp"), pt("ompi4", 8, 5.0, tr="tcp")]
w = {(x["pattern"], x["transport"]): x for x in sweep.worst_table(pts)}
ws = w.get(("pingpong", "shm"), {})
check(ws.get("worst_ratio") == 2.0 and ws.get("at_bytes") == 8 and
      ws.get("best_other") == "mpich4", "worst ratio shm: tern 1.0 / mpich4 0.5 at 8 B: %s" % ws)
check(ws.get("sizes_behind") == 1 and ws.get("sizes") == 3, "shm: behind at 1 of 3 sizes")
check(abs(ws.get("geomean_ratio", 0) - (2.0 * 0.8 * 1.0) ** (1 / 3)) < 1e-9, "geomean")
check(w.get(("pingpong", "tcp"), {}).get("worst_ratio") == 2.0, "worst ratio tcp 2.0")
g = {(x["pattern"], x["transport"]): x["libs"] for x in sweep.geomean_table(pts)}
gs = g.get(("pingpong", "shm"), {})
check(abs(gs.get("ompi4", {}).get("geomean_ratio", 0) - (0.5 * 0.25 * 1.0) ** (1 / 3)) < 1e-9
      and gs["ompi4"]["sizes_behind"] == 0 and gs["ompi4"]["sizes"] == 3,
      "geomean per library: tern / ompi4 over 8, 16, 32 B: %s" % gs)
check(abs(gs.get("mpich4", {}).get("geomean_ratio", 0) - (2.0 * 0.8) ** 0.5) < 1e-9 and
      gs["mpich4"]["sizes_behind"] == 1 and gs["mpich4"]["sizes"] == 2,
      "geomean per library: tern / mpich4 over the 2 sizes both measured: %s" % gs)
check(g.get(("pingpong", "tcp"), {}).get("ompi4", {}).get("geomean_ratio") == 2.0,
      "geomean per library, tcp: 2.0")
d = sweep.doubling(pts)
check([(c["transport"], c["bytes"]) for c in d] == [("shm", 16)],
      "doubling: 16 -> 32 B triples tern's time (median and min), 8 -> 16 does not: %s" % d)

# the phase-matched statistic: only samples whose probe is within PHASE_TOL of the probes'
# lower quartile (here 0.080: the 8 samples' probes sorted, the second). Not the fastest:
# tern's round 4 ran on one core's two hardware threads (0.037), and the 0.08 launches are
# the fast phase all the same.
def smp(lib, rnd, t, probe, n=8):
    return {"load": 0, "transport": "shm", "round": rnd, "lib": lib, "pattern": "pingpong",
            "bytes": n, "iters": 100, "t_us": t, "t_min_us": t, "MBps": 0.0, "probe_us": probe}


sms = [smp("tern", 1, 0.16, 0.080), smp("tern", 2, 0.45, 0.230), smp("tern", 3, 0.17, 0.090),
       smp("tern", 4, 0.15, 0.037),
       smp("ompi4", 1, 0.19, 0.085), smp("ompi4", 2, 0.50, 0.240), smp("ompi4", 3, 0.52, 0.250),
       smp("mpich4", 1, 0.70, 0.240), smp("mpich4", 2, 0.10, None)]
ap = {x["lib"]: x for x in sweep.aggregate(sms)}
check(ap["tern"]["fast_trials"] == 3 and abs(ap["tern"]["t_fast_us"] - 0.16) < 1e-9,
      "tern: 3 fast-phase launches (probe 0.080, 0.090, 0.037 <= 1.3 x 0.080), median 0.16: %s"
      % ap["tern"])
check(ap["ompi4"]["fast_trials"] == 1 and ap["ompi4"]["t_fast_us"] == 0.19,
      "ompi4: its one fast-phase launch: %s" % ap["ompi4"])
check(ap["mpich4"]["fast_trials"] == 0 and ap["mpich4"]["t_fast_us"] == 0.0,
      "mpich4: slow or unprobed launches only -> no phase-matched time: %s" % ap["mpich4"])
check(abs(ap["tern"]["t_med_us"] - 0.165) < 1e-9, "the median still takes every launch")
wf = sweep.worst_table(list(ap.values()), "fast")
check(len(wf) == 1 and abs(wf[0]["worst_ratio"] - 0.16 / 0.19) < 1e-9 and
      wf[0]["best_other"] == "ompi4", "phase-matched: tern 0.16 / ompi4 0.19 (mpich4's "
      "0.10, unprobed, and 0.70, slow phase, are not compared): %s" % wf)
wm = sweep.worst_table(list(ap.values()), "med")
check(wm and wm[0]["best_other"] == "mpich4", "the median table still compares mpich4")
pc = sweep.phase_counts(sms)
check(pc == {(0, "shm", "tern"): [3, 4], (0, "shm", "ompi4"): [1, 3],
             (0, "shm", "mpich4"): [0, 1]}, "fast-phase / probed launches: %s" % pc)
# probe-matched: each of tern's samples against the other's within PROBE_MATCH (1.15x) of
# its probe. ompi4: 0.16/0.19 (0.080~0.085), 0.45/median(0.50, 0.52) (0.230~0.240, 0.250),
# 0.17/0.19 (0.090~0.085); tern's 0.037 matches nothing -> median ratio 0.45/0.51. mpich4:
# only 0.45/0.70 (0.230~0.240; its unprobed 0.10 is never compared). The table takes the
# library tern trails most: ompi4.
mr = sweep.matched_ratio([s for s in sms if s["lib"] == "tern"],
                         [s for s in sms if s["lib"] == "ompi4"])
check(mr and abs(mr[0] - 0.45 / 0.51) < 1e-9 and sorted(mr[1]) == [0.16, 0.17, 0.45],
      "probe-matched tern / ompi4: %s" % (mr,))
check(sweep.matched_ratio([smp("tern", 1, 0.1, 0.037)], [smp("ompi4", 1, 0.2, 0.080)]) is None,
      "probes 2x apart are not matched")
mt = sweep.matched_table(sms + [smp("tern", 1, 0.9, 0.080, n=16), smp("mpich4", 1, 0.3, 0.088,
                                                                      n=16)])
check(len(mt) == 1 and mt[0]["at_bytes"] == 16 and abs(mt[0]["worst_ratio"] - 3.0) < 1e-9 and
      mt[0]["best_other"] == "mpich4" and mt[0]["sizes"] == 2 and mt[0]["sizes_behind"] == 1,
      "probe-matched table: 8 B 0.88 (ompi4), 16 B 3.0 behind mpich4: %s" % mt)
check(abs(mt[0]["geomean_ratio"] - (0.45 / 0.51 * 3.0) ** 0.5) < 1e-9, "probe-matched geomean")
check(sweep.parse_probe("# point_probe_us: 0.0812") == 0.0812 and
      sweep.parse_probe("# point_probe_us: x") is None, "the driver's probe lines parse")

# ---- the smoke run ----------------------------------------------------------------------
cmd = [tb, "sweep", "--quick", "--libs", "tern,ompi5", "--ompi5", os.path.join(scratch, "none"),
       "--transports", "shm", "--no-progress", "--out", out]
r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                   universal_newlines=True, timeout=100)
print("$ %s -> %d\n%s" % (" ".join(cmd), r.returncode, r.stdout))
if r.returncode != 0:
    sys.exit("ternbench sweep --quick failed")
for f in ("samples.csv", "sweep.csv", "worst.csv", "sweep.json", "summary.md",
          "plots/pingpong-shm.png", "plots/stream-shm.png", "plots/bibw-shm.png"):
    check(os.path.isfile(os.path.join(out, f)) and os.path.getsize(os.path.join(out, f)) > 0,
          "%s written" % f)
for p in ("pingpong", "stream", "bibw"):
    with open(os.path.join(out, "plots", "%s-shm.png" % p), "rb") as f:
        check(f.read(8) == b"\x89PNG\r\n\x1a\n", "%s-shm.png is a PNG" % p)

sizes = [0, 1, 8, 1024, 65536]
with open(os.path.join(out, "sweep.csv")) as f:
    rd = csv.DictReader(f)
    check(rd.fieldnames == sweep.POINT_COLUMNS, "sweep.csv columns %s" % rd.fieldnames)
    rows = list(rd)
check(len(rows) == 3 * len(sizes), "sweep.csv: %d points, want 15" % len(rows))
got = {(x["pattern"], int(x["bytes"])) for x in rows}
check(got == {(p, n) for p in ("pingpong", "stream", "bibw") for n in sizes},
      "every pattern at every size")
for x in rows:
    check(x["lib"] == "tern" and x["transport"] == "shm" and x["load"] == "0",
          "row is tern/shm/load 0: %s" % x)
    check(int(x["trials"]) == 2, "2 rounds -> 2 samples per point")
    check(0 < float(x["t_min_us"]) <= float(x["t_med_us"]), "0 < min <= median: %s" % x)
    n = int(x["bytes"])
    # the CSV keeps 4 decimals of us: 0.3276 us may be 0.32765, hence 1e-3 relative
    check(n == 0 or abs(float(x["MBps_med"]) - n / float(x["t_med_us"])) <=
          0.01 + 1e-3 * n / float(x["t_med_us"]), "MBps_med = bytes / median")

with open(os.path.join(out, "samples.csv")) as f:
    sm = list(csv.DictReader(f))
# The driver probed the host's phase before each point (with two CPUs to probe between):
# each sample carries the "# point_probe_us:" line just before its row in the raw file. A
# probe gives up after 3 ms (a machine too busy to run both ranks at once); the test runs
# alone (PROCESSORS 2), so most points must have one.
if len(os.sched_getaffinity(0)) >= 2:
    probed = 0
    for rnd in ("1", "2"):
        want, pending = {}, None
        with open(os.path.join(out, "raw", "tern-shm-load0-r%s.out" % rnd)) as f:
            for ln in f:
                if ln.startswith("# point_probe_us: "):
                    pending = "%.4f" % float(ln.split(":")[1])
                elif not ln.startswith(("#", "lib,")) and \
                        ln.count(",") == len(sweep.runner.CSV_COLUMNS) - 1:
                    v = ln.split(",")
                    want[(v[1], v[4])] = pending or ""
                    pending = None
        got = {(x["pattern"], x["bytes"]): x["probe_us"] for x in sm if x["round"] == rnd}
        check(got == want, "round %s: each sample's probe_us is its point's probe line: %s vs "
              "%s" % (rnd, got, want))
        probed += sum(1 for v in got.values() if v)
    check(probed >= 15, "at least half the 30 samples were probed (%d)" % probed)
    check(sum(int(x["fast_trials"]) for x in rows) >= 8,
          "the lower quartile's samples and those near it are fast-phase ones")
check(len(sm) == 2 * 15 and {x["round"] for x in sm} == {"1", "2"},
      "samples.csv: 15 points x 2 rounds")
for x in rows:  # the point is the median / min of its samples
    mine = [x2 for x2 in sm if (x2["pattern"], x2["bytes"]) == (x["pattern"], x["bytes"])]
    ts = sorted(float(x2["t_us"]) for x2 in mine)
    check(abs(float(x["t_med_us"]) - (ts[0] + ts[1]) / 2) < 1e-3, "median of 2 samples")
    check(abs(float(x["t_min_us"]) - min(float(x2["t_min_us"]) for x2 in mine)) < 1e-3, "min")

with open(os.path.join(out, "sweep.json")) as f:
    js = json.load(f)
meta = js["meta"]
check(meta["sizes"] == sizes and meta["rounds"] == 2, "meta: sizes and rounds")
check(meta.get("settle_s") == 0.0, "meta: --quick settles 0 s: %s" % meta.get("settle_s"))
check(list(meta["libraries"]) == ["tern"], "meta: tern measured: %s" % list(meta["libraries"]))
check("TERN_TRANSPORTS=self,shm" in meta["libraries"]["tern"]["shm"], "tern's shm command")
check("ompi5" in meta["skipped"] and "none" in meta["skipped"]["ompi5"],
      "the missing ompi5 is named and skipped: %s" % meta["skipped"])
check("skipping ompi5" in r.stdout, "the skip is said on stderr")
check(meta["failures"] == [] and meta["seconds"] > 0, "no failed launch; duration kept")
check(len(js["points"]) == 15 and js["worst"] == [] and isinstance(js["doubling"], list),
      "sweep.json points; no other library -> no worst ratio")
check(js.get("worst_probe_matched") == [] and js.get("probe_match") == sweep.PROBE_MATCH,
      "sweep.json: the probe-matched table, empty with tern alone")
with open(os.path.join(out, "worst.csv")) as f:
    check(next(csv.reader(f)) == sweep.WORST_COLUMNS, "worst.csv header")
with open(os.path.join(out, "summary.md")) as f:
    md = f.read()
check("## Worst ratio" in md and "## Doubling check" in md and "plots/bibw-shm.png" in md,
      "summary.md sections")

# ---- --from: the same points again from raw/ alone -----------------------------------------
rf = subprocess.run([tb, "sweep", "--from", out, "--out", out + "-from", "--no-plots"],
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                    timeout=60)
check(rf.returncode == 0, "sweep --from exit 0: %s" % rf.stdout[-300:])
if rf.returncode == 0:
    with open(os.path.join(out + "-from", "sweep.csv")) as f:
        again = list(csv.DictReader(f))
    check(again == rows, "sweep --from gives the same sweep.csv")

# ---- bad options: a named error, exit 2 ---------------------------------------------------
for bad in (["--libs", "tern,nosuchmpi"], ["--sizes", "9-3"], ["--transports", "ib"],
            ["--load", "x"], ["--settle", "-1"], ["--from", os.path.join(scratch, "none")]):
    rb = subprocess.run([tb, "sweep", "--no-progress", "--out", out + "-bad"] + bad,
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        universal_newlines=True, timeout=60)
    check(rb.returncode == 2 and "ternbench:" in rb.stdout,
          "%s -> exit 2 with a message (got %d: %s)" % (bad, rb.returncode, rb.stdout[-200:]))

done("ternbench sweep: all checks passed")

"""ternbench end to end: a tiny run with 2 ranks (point-to-point 0 B .. 64 KiB, every
collective at 8 B .. 16 KiB), the report, predict; then the numbers are read back from
report.md, results.csv and models.json and checked for sanity: positive, monotone where
physics says so, the report's tables agreeing with the models it came from, the HTML
self-contained with real PNGs.

usage: test_e2e.py <build dir> <scratch dir>
"""
import base64
import csv
import json
import os
import re
import shutil
import subprocess
import sys

from tbcheck import check, done

build, scratch = sys.argv[1], sys.argv[2]
tb = os.path.join(build, "bin", "ternbench")
out = os.path.join(scratch, "ternbench-e2e")
shutil.rmtree(out, ignore_errors=True)


def run(*args):
    r = subprocess.run([tb] + list(args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=240)
    print("$ ternbench %s -> %d" % (" ".join(args), r.returncode))
    if r.returncode != 0:
        print(r.stdout)
        sys.exit("ternbench %s failed" % args[0])
    return r.stdout


run("run", "--quick", "--np", "2,3", "--max-size", "64K", "--coll-sizes", "8,1K,16K",
    "--no-progress", "--out", out)
rep = run("report", "--out", out)
pred = run("predict", "--out", out, "--p", "64,1024", "--sizes", "8,1M")

# ---- results.csv: every measurement positive and ordered --------------------------
with open(os.path.join(out, "results.csv")) as f:
    rows = list(csv.DictReader(f))
check(len(rows) > 40, "results.csv has %d rows" % len(rows))
for r in rows:
    tmin, tmed, tmax = float(r["t_min_us"]), float(r["t_med_us"]), float(r["t_max_us"])
    check(0 < tmin <= tmed <= tmax, "row %s %s %s: min<=med<=max, positive" %
          (r["pattern"], r["nprocs"], r["bytes"]))
    check(float(r["t_mad_us"]) >= 0, "MAD non-negative")
pp = {int(r["bytes"]): float(r["t_min_us"]) for r in rows
      if r["pattern"] == "pingpong" and r["mode"] == "standard"}
check(sorted(pp) == sorted(set(pp)) and 0 in pp and 65536 in pp, "ping-pong sizes 0..64K")
# Moving 64 KiB cannot be faster than moving 8 bytes, and its bandwidth must be higher.
check(pp[65536] > pp[8], "pingpong time grows with size (%s vs %s)" % (pp[65536], pp[8]))
check(65536 / pp[65536] > 8 / pp[8], "bandwidth grows with size")
for pat in ("stream", "bibw"):
    check(any(r["pattern"] == pat for r in rows), "%s measured" % pat)
check(any(r["mode"] == "sync" for r in rows), "synchronous sends measured")
ops = {r["pattern"] for r in rows if r["job"] == "coll"}
for op in ("barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
           "alltoall", "red_scat_blk", "scan", "reduce_noop", "allreduce_noop"):
    check(op in ops, "collective %s measured" % op)
for op in ("bcast", "allgather", "alltoall"):
    t = {int(r["bytes"]): float(r["t_min_us"]) for r in rows
         if r["pattern"] == op and r["nprocs"] == "2"}
    check(t[16384] > t[8], "%s: 16 KiB slower than 8 B" % op)

# ---- metadata -----------------------------------------------------------------------
meta = json.load(open(os.path.join(out, "meta.json")))
for k in ("host", "cpu", "date", "command", "library_versions", "load_before", "jobs"):
    check(k in meta and meta[k], "meta.json has %s" % k)
check("tern" in meta["library_versions"].get("tern", ""), "library version recorded")
check(all(j["status"] == "ok" for j in meta["jobs"]), "every job ok")
res = json.load(open(os.path.join(out, "results.json")))
check(len(res["rows"]) == len(rows) and res["meta"]["host"] == meta["host"],
      "results.json = results.csv + metadata")

# ---- models.json and the report agree ---------------------------------------------
mod = json.load(open(os.path.join(out, "models.json")))
h = mod["p2p"]["tern/pingpong/standard"]["hockney"]
check(h["t_s"] > 0 and h["t_b"] > 0, "Hockney t_s, t_b positive")
check(0 <= h["r2"] <= 1, "R2 in [0,1]")
check(abs(h["bw_as"] * h["t_b"] - 1) < 1e-9 and abs(h["n_half"] - h["t_s"] / h["t_b"]) <
      1e-6 * h["n_half"], "derived quantities consistent")
md = open(os.path.join(out, "report.md")).read()
m = re.search(r"^\| tern \| pingpong \| standard \| ([\d.]+) us \| ([\d.]+) ns/B \| "
              r"([\d.]+) [GM]B/s \| .* \| ([\d.]+) \| [\d.]+% / [\d.]+% \|$", md, re.M)
check(m is not None, "report.md has the tern ping-pong Hockney row")
if m:
    ts_us, tb_ns, bw, r2 = (float(x) for x in m.groups())
    check(ts_us > 0 and tb_ns > 0 and bw > 0, "report numbers positive")
    check(abs(ts_us - h["t_s"] * 1e6) <= 0.01 * ts_us + 0.001, "report t_s = model t_s")
    check(abs(tb_ns - h["t_b"] * 1e9) <= 1e-4 + 1e-3 * tb_ns, "report t_b = model t_b")
    check(abs(r2 - h["r2"]) < 1e-3, "report R2 = model R2")
for sec in ("Piecewise", "six classic patterns", "T(n, p) = t_s(p) + t_b(p) n",
            "Aggregated bandwidth", "t_c"):
    check(sec in md, "report.md has section %s" % sec)
# two process counts: the class cannot be told, and the report must say so
check("undetermined" in md, "two process counts are reported as undetermined")
for key in ("tern/reduce", "tern/allreduce"):
    check(key in mod["t_c"] and "2" in mod["t_c"][key], "t_c computed for %s" % key)
agg = mod["aggregate"]["tern/bcast"]
check(agg["peak_bw"] > 0 and agg["peak_at"][1] in (2, 3), "aggregated bandwidth of bcast")

# ---- HTML: self-contained, real PNGs ---------------------------------------------------
page = open(os.path.join(out, "report.html")).read()
imgs = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)
check(len(imgs) >= 3, "HTML embeds the plots (%d)" % len(imgs))
for b in imgs:
    check(base64.b64decode(b)[:8] == b"\x89PNG\r\n\x1a\n", "embedded image is a PNG")
check("src='http" not in page and "<link" not in page, "HTML needs no other file")
check(os.path.getsize(os.path.join(out, "models.csv")) > 0, "models.csv written")

# ---- predict ------------------------------------------------------------------------------
check(pred.count("CAVEAT") >= 1, "predict prints the caveat")
check(re.search(r"tern\s+allreduce\s+1024\s+1 MiB", pred) is not None,
      "predict evaluates p=1024")

done("all checks passed")

"""crossover.py - `ternbench crossover`: the protocol crossovers tern measured while it ran.

tern does not fix where eager sending stops and rendezvous starts on shared memory: per
size class, the receiver times the ways a middle-sized message can travel (the sender's
copy into shared memory and its own copy out; the same two written around the caches; its
single-copy pull) and tells the sender which to use (src/core/adapt.h). Large rendezvous
messages are pulled or streamed through the sender's cells as their timings advise. The
crossover therefore moves with the machine, its load and the host's phase.

This runs the MPI ping-pong driver (bench/mpi_pingpong.c, built with terncc) for each
pattern over sizes in those classes with TERN_ADAPT_REPORT=1, reads the `tern-adapt` lines
each rank prints at finalize (what each way cost it, ns per byte, and the way it chose),
and prints per pattern and class the median cost of each way over the launches, the way
most receivers chose (k of n), the time per message at each size, and the crossovers: the
classes where the way chosen changes (it need not change once: a stream may pull 16-32 KiB
and send 32-64 KiB eagerly). Writes crossover.md, crossover.json and the raw output into
--out.
"""

import json
import os
import statistics
import sys
import time

from . import runner
from . import sweep as sweep_mod
from . import tree as tree_mod

PATTERNS = ("pingpong", "stream", "bibw")
# One size in each adaptive class of the defaults (TERN_SHM_ADAPT_MIN 4k: (4,8], (8,16],
# (16,32] KiB, streams up to (32,64]) and each large rendezvous class from 1 MiB.
DEFAULT_SIZES = "6000,12000,24000,48000,1536K,3M,6M,12M"
ADAPT_PREFIX = "tern-adapt "
EAGER_COSTS = ("eager_in", "out", "nt_in", "nt_out", "pull")
RV_COSTS = ("pull", "stream")
# The ways a receiver reports; "fixed": it timed only one way, so the sender's fixed
# limits decided (a ping-pong above TERN_SHM_ADAPT_MAX is always pulled).
WAYS = {"eager": ("eager", "nt", "rndv", "fixed"), "rv": ("pull", "stream")}


def parse_adapt(lines):
    """The records of the `tern-adapt key=value ...` lines among lines (others ignored):
    dicts with int rank, peer, lo, hi, the costs as floats (None where not timed: -1) and
    the way; a line missing a key or with a value that does not parse is skipped."""
    recs = []
    for line in lines:
        line = line.strip()
        if not line.startswith(ADAPT_PREFIX):
            continue
        kv = {}
        for word in line[len(ADAPT_PREFIX):].split():
            k, sep, v = word.partition("=")
            if sep:
                kv[k] = v
        kind = kv.get("kind")
        if kind not in WAYS or kv.get("way") not in WAYS[kind]:
            continue
        try:
            rec = {"kind": kind, "way": kv["way"]}
            for k in ("rank", "peer", "lo", "hi"):
                rec[k] = int(kv[k])
            for k in EAGER_COSTS if kind == "eager" else RV_COSTS:
                x = float(kv[k])
                rec[k] = x if x >= 0 else None
        except (KeyError, ValueError):
            continue
        recs.append(rec)
    return recs


def summarize(recs):
    """Per (kind, lo, hi), ascending: the median of each cost over the records that timed
    it, and how many records chose each way."""
    groups = {}
    for r in recs:
        groups.setdefault((r["kind"], r["lo"], r["hi"]), []).append(r)
    out = []
    for (kind, lo, hi), rs in sorted(groups.items(), key=lambda g: (g[0][0] != "eager", g[0][1])):
        row = {"kind": kind, "lo": lo, "hi": hi, "n": len(rs),
               "ways": {w: sum(1 for r in rs if r["way"] == w) for w in WAYS[kind]}}
        for k in EAGER_COSTS if kind == "eager" else RV_COSTS:
            vals = [r[k] for r in rs if r[k] is not None]
            row[k] = statistics.median(vals) if vals else None
        row["chosen"] = max(WAYS[kind], key=lambda w: row["ways"][w])
        out.append(row)
    return out


def crossovers(rows, kind="eager"):
    """Where the way chosen changes, ascending: [(lo, way), ...], the first class's way
    first; one entry when every class of that kind went the same way, none when none was
    timed."""
    out = []
    for r in rows:
        if r["kind"] == kind and (not out or out[-1][1] != r["chosen"]):
            out.append((r["lo"], r["chosen"]))
    return out


def crossovers_text(rows, kind):
    """"eager from 4097 B, rndv from 16385 B" (the classes timed), or None."""
    xs = crossovers(rows, kind)
    if not xs:
        return None
    return ", ".join("%s from %s" % (way, sweep_mod.fmt_size(lo)) for lo, way in xs)


def _cost(x):
    return "-" if x is None else "%.3f" % x


def _range(lo, hi):
    return "%s-%s" % (sweep_mod.fmt_size(lo), sweep_mod.fmt_size(hi) if hi else "up")


def _ways(row):
    return ", ".join("%s %d" % (w, n) for w, n in row["ways"].items() if n)


def table_md(pattern, rows, times):
    """The markdown of one pattern: the class table, the times, the crossover line."""
    out = ["## %s" % pattern, ""]
    eager = [r for r in rows if r["kind"] == "eager"]
    rv = [r for r in rows if r["kind"] == "rv"]
    if eager:
        out += ["Middle sizes (ns per byte, median over receivers and launches; eager = the "
                "sender's copy in + the receiver's copy out, nt = the same around the caches):",
                "",
                "| class | eager in | eager out | nt in | nt out | pull | chosen (receivers) |",
                "|---|---|---|---|---|---|---|"]
        for r in eager:
            out.append("| %s | %s | %s | %s | %s | %s | %s (%s) |" % (
                _range(r["lo"], r["hi"]), _cost(r["eager_in"]), _cost(r["out"]),
                _cost(r["nt_in"]), _cost(r["nt_out"]), _cost(r["pull"]), r["chosen"],
                _ways(r)))
        out += ["", "Crossovers: %s." % crossovers_text(rows, "eager"), ""]
    if rv:
        out += ["Large rendezvous (ns per byte):", "",
                "| class | pulled | streamed | chosen (receivers) |", "|---|---|---|---|"]
        for r in rv:
            out.append("| %s | %s | %s | %s (%s) |" % (
                _range(r["lo"], r["hi"]), _cost(r["pull"]), _cost(r["stream"]), r["chosen"],
                _ways(r)))
        out += ["", "Crossovers: %s." % crossovers_text(rows, "rv"), ""]
    if not rows:
        out += ["No class was timed (no message of an adaptive size reached a receiver).", ""]
    if times:
        out += ["| bytes | us per message (median of launches) |", "|---|---|"]
        for b in sorted(times):
            out.append("| %d | %.3f |" % (b, statistics.median(times[b])))
        out.append("")
    return out


def run(a, tree):
    """The whole `ternbench crossover`; returns the exit status."""
    try:
        sizes = sweep_mod.parse_sizes(a.sizes or DEFAULT_SIZES)
    except sweep_mod.SweepError as e:
        sys.stderr.write("ternbench: %s\n" % e)
        return 2
    patterns = sweep_mod._split(a.patterns) or ["pingpong", "stream"]
    bad = [p for p in patterns if p not in PATTERNS]
    if bad or a.rounds < 1 or a.seconds <= 0:
        sys.stderr.write("ternbench: %s\n" % (
            "unknown pattern %s (%s)" % (", ".join(bad), ",".join(PATTERNS)) if bad else
            "--rounds must be >= 1 and --seconds > 0"))
        return 2
    out_dir = a.out
    raw_dir = os.path.join(out_dir, "raw")
    os.makedirs(raw_dir, exist_ok=True)
    try:
        lib = sweep_mod.resolve("tern", tree, a)
        with open(os.path.join(raw_dir, "build.log"), "w") as log:
            sweep_mod.build(lib, tree.mpi_sources(), os.path.join(out_dir, "bin"), log)
    except (sweep_mod.SweepError, tree_mod.TreeError) as e:
        sys.stderr.write("ternbench: %s\n" % e)
        return 1
    lib.env["TERN_ADAPT_REPORT"] = "1"
    t0 = time.time()
    result, failures = {}, []
    for p in patterns:
        recs, times = [], {}
        for r in range(1, a.rounds + 1):
            argv = ["--csv", "--only", p, "-s", ",".join(str(s) for s in sizes), "-t", "1",
                    "-T", "%g" % a.seconds]
            raw = os.path.join(raw_dir, "%s-r%d.txt" % (p, r))
            rows, status = sweep_mod.launch(lib, a.transport, argv, a.timeout, raw)
            if status != "ok":
                failures.append("%s round %d: %s" % (p, r, status))
                continue
            for row in rows:
                try:
                    times.setdefault(int(row["bytes"]), []).append(float(row["t_med_us"]))
                except (KeyError, ValueError):
                    pass
            with open(raw) as f:
                recs += parse_adapt(f)
        result[p] = {"classes": summarize(recs), "times": times, "records": recs}
    meta = {"tool": "ternbench crossover", "cpu": runner._cpu_model(),
            "git": runner._git(tree.source) if tree.source else "",
            "load_after": runner._load(), "tern_tree": tree.describe(), "sizes": sizes,
            "patterns": patterns, "rounds": a.rounds, "seconds_per_trial": a.seconds,
            "transport": a.transport, "seconds": round(time.time() - t0, 1),
            "failures": failures,
            "units": "costs: ns per byte as each receiver timed them (TERN_ADAPT_REPORT)"}
    md = ["# ternbench crossover", "",
          "tern %s (%s) on %s over %s, %d launch(es) per pattern of %s; each receiver's "
          "timings at the end of its run (TERN_ADAPT_REPORT=1)." % (
              meta["tern_tree"].get("root", "?"), meta["git"] or "no git", meta["cpu"],
              a.transport, a.rounds,
              ", ".join(sweep_mod.fmt_size(s) for s in sizes)), ""]
    for p in patterns:
        md += table_md(p, result[p]["classes"], result[p]["times"])
    for f in failures:
        md.append("- failed: %s" % f)
    text = "\n".join(md) + "\n"
    with open(os.path.join(out_dir, "crossover.md"), "w") as f:
        f.write(text)
    with open(os.path.join(out_dir, "crossover.json"), "w") as f:
        json.dump({"meta": meta, "patterns": {
            p: {"classes": result[p]["classes"],
                "crossovers": {k: crossovers(result[p]["classes"], k) for k in WAYS},
                "times_us": {str(b): v for b, v in sorted(result[p]["times"].items())},
                "records": result[p]["records"]} for p in patterns}}, f, indent=1)
    sys.stdout.write(text)
    sys.stdout.write("ternbench: wrote %s (crossover.md, crossover.json, raw/)\n" % out_dir)
    return 1 if failures else 0


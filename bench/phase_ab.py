#!/usr/bin/env python3
"""phase_ab.py - A/B comparison of tern builds (and other MPIs) on a host with phases.

On a VM whose two vCPUs move between faster and slower placements, a launch runs either
fast or slow for most of its life, and medians over launches measure the host. This runs
many short launches of bench/mpi_pingpong.c per entry, alternated, with the driver's
--probe (a cache line bounced between the two ranks just before each point), and prints
per entry, pattern and size: the best launch, the median of all launches, the median of
the fast-phase launches with their count, and the median of the others (the slow phase).
Compare the fast column, and the slow one where a default must hold in both phases. The
libraries, the launches and the fast-phase rule are ternbench sweep's
(tools/ternbench/ternbench/sweep.py: resolve, build, launch, phase_fast, in_fast_phase).
Every figure of docs/PERFORMANCE.md's slot-ring section came from this script.

usage: bench/phase_ab.py [options] NAME=SPEC ...
  SPEC is a tern build directory (or install prefix), optionally followed by
  @VAR=VALUE,... to set tern tunables for that entry; or one of ompi4, mpich4 (Debian
  packages), ompi5, mpich5 (the pip virtualenvs ternbench sweep uses; $OMPI5_VENV,
  $MPICH5_VENV). NAME alone means NAME=NAME.
  e.g. bench/phase_ab.py --sizes 1024,2048 new=build old=../base/build@TERN_SHM_LINES=128 mpich4
options:
  --rounds R        launches per entry (default 20)
  --sizes LIST      message sizes (default 8,64,512,1024,2048,4096,8192)
  --patterns LIST   of pingpong,stream,bibw (default all three)
  --tcp             over tcp (tern: TERN_TRANSPORTS=self,tcp) instead of shared memory
  --load N          N busy processes beside every launch (a loaded machine), ended by pid
                    when the script ends; the probe then times the scheduler too, so the
                    fast-phase column says little
Prints numbers only; never fails on timing.
"""
import argparse
import os
import shutil
import signal
import statistics
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tools", "ternbench"))
from ternbench import sweep  # noqa: E402
from ternbench import tree as tree_mod  # noqa: E402
from ternbench import runner  # noqa: E402

VENVS = argparse.Namespace(
    ompi5=os.environ.get("OMPI5_VENV", os.path.expanduser("~/.cache/tern/venv-ompi5")),
    mpich5=os.environ.get("MPICH5_VENV", os.path.expanduser("~/.cache/tern/venv-mpich5")))


def entry_lib(label, spec, tmp):
    """The sweep Lib of one entry, its driver built into a directory of its own."""
    if spec in sweep.DEFAULT_LIBS and spec != sweep.BASE:
        lib = sweep.resolve(spec, None, VENVS)
    else:
        build, _, tun = spec.partition("@")
        try:
            lib = sweep.resolve(sweep.BASE, tree_mod.find(prefix=build), VENVS)
        except tree_mod.TreeError as e:
            raise sweep.SweepError(str(e))
        lib.env.update(kv.split("=", 1) for kv in tun.split(",") if "=" in kv)
    bindir = os.path.join(tmp, label)
    with open(os.path.join(tmp, label + ".build.log"), "w") as log:
        sweep.build(lib, os.path.join(ROOT, "bench"), bindir, log)
    return lib


def main():
    ap = argparse.ArgumentParser(add_help=False)
    ap.add_argument("-h", "--help", action="store_true")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--sizes", default="8,64,512,1024,2048,4096,8192")
    ap.add_argument("--patterns", default="pingpong,stream,bibw")
    ap.add_argument("--tcp", action="store_true")
    ap.add_argument("--load", type=int, default=0)
    ap.add_argument("entries", nargs="*")
    a = ap.parse_args()
    if a.help or not a.entries:
        print(__doc__.strip())
        return 0 if a.help else 2
    transport = "tcp" if a.tcp else "shm"
    # A TERM (a timeout) unwinds through the finally below, so the busy processes end too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="phase_ab.")
    hogs = []
    try:
        try:
            entries = []
            for e in a.entries:
                label, _, spec = e.partition("=")
                entries.append((label, entry_lib(label, spec or label, tmp)))
        except sweep.SweepError as e:
            sys.stderr.write("phase_ab.py: %s\n" % e)
            return 2
        argv = ["--sizes", a.sizes, "--only", a.patterns, "-t", "3", "-T", "0.01", "--csv",
                "--probe"]
        samples = []
        hogs = runner.busy(a.load)
        for r in range(a.rounds):
            k = r % len(entries)
            for label, lib in entries[k:] + entries[:k]:
                raw = os.path.join(tmp, "%s-r%d.out" % (label, r + 1))
                rows, status = sweep.launch(lib, transport, argv, 120, raw)
                if status != "ok":
                    print("# %s round %d: %s" % (label, r + 1, status))
                samples += [{"load": a.load, "lib": label, "pattern": x["pattern"],
                             "bytes": int(x["bytes"]), "t_us": float(x["t_min_us"]),
                             "probe_us": x["probe_us"]} for x in rows]
        best = sweep.phase_fast(samples)
        if a.load not in best:
            print("phase_ab.py: no probed results (did every launch fail?)")
            return 1
        probes = sorted(s["probe_us"] for s in samples if s["probe_us"])
        print("# %d busy processes beside" % a.load)
        print("# %d launches per entry; probes: min %.3f, lower quartile %.3f, median %.3f us; "
              "fast phase: probe <= %.3f" % (a.rounds, probes[0], best[a.load],
                                              statistics.median(probes),
                                              sweep.PHASE_TOL * best[a.load]))
        labels = [label for label, _ in entries]
        by = {}
        for s in samples:
            by.setdefault((s["lib"], s["pattern"], s["bytes"]), []).append(s)
        print("%-9s %9s " % ("pattern", "bytes") + " ".join("%35s" % n for n in labels))
        print("%-9s %9s " % ("", "") + " ".join("%35s" % "best / median / fast [n] / slow"
                                                for _ in labels))
        for pat, size in sorted({(p, n) for _, p, n in by}):
            cells = []
            for label in labels:
                ss = by.get((label, pat, size), [])
                if not ss:
                    cells.append("%35s" % "-")
                    continue
                ts = [s["t_us"] for s in ss]
                fs, sl = [], []
                for s in ss:
                    (fs if sweep.in_fast_phase(s, best) else sl).append(s["t_us"])
                fast = "%.3f" % statistics.median(fs) if fs else "-"
                slow = "%.3f" % statistics.median(sl) if sl else "-"
                cells.append("%7.3f %7.3f %7s [%2d] %7s" % (min(ts), statistics.median(ts), fast,
                                                            len(fs), slow))
            print("%-9s %9d " % (pat, size) + " ".join(cells))
    finally:
        for h in hogs:
            h.kill()
            h.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

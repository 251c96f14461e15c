#!/usr/bin/env python3
"""phase_ab.py - A/B comparison of tern builds (and other MPIs) on a host with phases.

On a VM whose two vCPUs move between faster and slower placements, a launch runs either
fast or slow for most of its life, and medians over launches measure the host. This runs
many short launches of bench/mpi_pingpong.c per library, alternated, with the driver's
--probe (a cache line bounced between the two ranks just before each point), and prints
per library, pattern and size: the best launch, the median of all launches, and the
median of the fast-phase launches (probe at most 1.3x the lower quartile of all probes)
with their count. Compare the last column. Every figure of docs/PERFORMANCE.md's
slot-ring section came from this script.

usage: bench/phase_ab.py [options] NAME=SPEC ...
  SPEC is a tern build directory (its bin/terncc builds the driver; run over shared
  memory with ternrun, or tcp with --tcp), optionally followed by @VAR=VALUE,... to set
  tern tunables for that entry; or one of ompi4, mpich4 (Debian packages).
  e.g. bench/phase_ab.py --sizes 1024,2048 new=build old=../base/build@TERN_SHM_LINES=128 mpich4
options:
  --rounds R        launches per entry (default 20)
  --sizes LIST      message sizes (default 8,64,512,1024,2048,4096,8192)
  --patterns LIST   of pingpong,stream,bibw (default all three)
  --tcp             tern over tcp (TERN_TRANSPORTS=self,tcp) instead of shared memory
  --load N          N busy loops beside every launch (a loaded machine; as bench/load.sh),
                    ended by pid when the script ends
Prints numbers only; never fails on timing.
"""
import argparse
import collections
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER = os.path.join(ROOT, "bench", "mpi_pingpong.c")
OMPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def build_entry(name, spec, tmp, tcp):
    """(argv, env) that runs the driver for one entry, building it first."""
    exe = os.path.join(tmp, name)
    if spec in ("ompi4", "mpich4"):
        cc = "mpicc.openmpi" if spec == "ompi4" else "mpicc.mpich"
        if not shutil.which(cc):
            sys.exit("phase_ab.py: %s not installed (%s missing)" % (spec, cc))
        subprocess.run([cc, "-O2", "-I", os.path.dirname(DRIVER), DRIVER, "-o", exe], check=True)
        if spec == "ompi4":
            btl = "tcp,self --mca btl_tcp_if_include lo" if tcp else "vader,self"
            run = ("mpirun.openmpi --oversubscribe --mca pml ob1 --mca btl %s -n 2" % btl).split()
            return run + [exe], dict(OMPI_ENV)
        env = {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self"} if tcp else {}
        return ["mpiexec.mpich", "-n", "2", exe], env
    build, _, tun = spec.partition("@")
    build = os.path.abspath(build)
    terncc = os.path.join(build, "bin", "terncc")
    if not os.access(terncc, os.X_OK):
        sys.exit("phase_ab.py: %s has no bin/terncc (build that tree first)" % build)
    subprocess.run([terncc, "-O2", "-I", os.path.dirname(DRIVER), DRIVER, "-o", exe], check=True)
    env = {"TERN_TRANSPORTS": "self,tcp" if tcp else "self,shm"}
    for kv in filter(None, tun.split(",")):
        k, _, v = kv.partition("=")
        env[k] = v
    return [os.path.join(build, "bin", "ternrun"), "-n", "2", exe], env


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
    # A TERM (a timeout) unwinds through the finally below, so the busy loops end too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tmp = tempfile.mkdtemp(prefix="phase_ab.")
    busy = []
    try:
        runs = []
        for e in a.entries:
            name, _, spec = e.partition("=")
            runs.append((name, build_entry(name, spec or name, tmp, a.tcp)))
        opts = ["--sizes", a.sizes, "--only", a.patterns, "-t", "3", "-T", "0.01", "--csv",
                "--probe"]
        rows = collections.defaultdict(list)  # (name, pattern, bytes) -> [(probe, us)]
        busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(a.load)]
        for r in range(a.rounds):
            k = r % len(runs)
            for name, (argv, env) in runs[k:] + runs[:k]:
                try:
                    out = subprocess.run(argv + opts, env={**os.environ, **env}, timeout=600,
                                         capture_output=True, text=True).stdout
                except subprocess.TimeoutExpired:
                    print("# %s: a launch timed out" % name)
                    continue
                probe = None
                for ln in out.splitlines():
                    if ln.startswith("# point_probe_us:"):
                        probe = float(ln.split(":")[1])
                        continue
                    f = ln.split(",")
                    if len(f) > 8 and f[1] in ("pingpong", "stream", "bibw") and f[4].isdigit():
                        rows[(name, f[1], int(f[4]))].append((probe, float(f[7])))
        probes = sorted(p for v in rows.values() for p, _ in v if p)
        if not probes:
            print("phase_ab.py: no results (did every launch fail?)")
            return 1
        lim = 1.3 * probes[len(probes) // 4]
        print("# %d busy loops beside" % a.load)
        print("# %d launches per entry; probes: min %.3f, lower quartile %.3f, median %.3f us; "
              "fast phase: probe <= %.3f" % (a.rounds, probes[0], probes[len(probes) // 4],
                                              statistics.median(probes), lim))
        names = [n for n, _ in runs]
        print("%-9s %9s " % ("pattern", "bytes") + " ".join("%27s" % n for n in names))
        print("%-9s %9s " % ("", "") + " ".join("%27s" % "best / median / fast [n]" for _ in names))
        for pat, size in sorted({(k[1], k[2]) for k in rows}):
            cells = []
            for n in names:
                v = rows.get((n, pat, size), [])
                if not v:
                    cells.append("%27s" % "-")
                    continue
                ts = [t for _, t in v]
                fs = [t for p, t in v if p is not None and p <= lim]
                fast = "%.3f" % statistics.median(fs) if fs else "-"
                cells.append("%7.3f %7.3f %7s [%2d]" % (min(ts), statistics.median(ts), fast, len(fs)))
            print("%-9s %9d " % (pat, size) + " ".join(cells))
    finally:
        for b in busy:
            b.kill()
            b.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

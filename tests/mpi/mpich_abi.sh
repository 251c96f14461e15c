#!/bin/sh
# mpich_abi.sh BUILD_DIR SRC_DIR [all] - programs built with MPICH's mpicc (Debian's
# mpicc.mpich: DT_NEEDED libmpich.so.12) run on tern through `ternrun --mpi-abi mpich`,
# with no rebuild: abi_mpich.c (tern is the library loaded; statuses, constants, handles,
# error classes across the binary interface) at 1, 2 and 3 ranks, then test programs of
# tests.list built the same way -- a chosen few, or with `all` every plain line (no tern
# variables, no fatal=), as openmpi.sh runs them on Open MPI.
# Exit 77 (skip) without MPICH's compiler.
set -eu
. "$2/abi_lib.sh"
abi_skip_sanitized "mpicc.mpich, the mpi4py wheel's python"
build=$1
src=$2
mode=${3:-quick}
command -v mpicc.mpich >/dev/null 2>&1 || {
  echo "MPICH's compiler (mpicc.mpich, Debian package mpich) not installed: skipped"
  exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# MPICH's own header makes GCC warn on MPI_STATUSES_IGNORE (-Wstringop-overflow): not ours.
cc() { mpicc.mpich -Wall -Wextra -Werror -Wno-stringop-overflow "$@" </dev/null; }
run() { timeout 120 "$build/bin/ternrun" --mpi-abi mpich --timeout 100 "$@" </dev/null; }

cc "$src/abi_mpich.c" -o "$tmp/abi_mpich"
abi_check_needed "$tmp/abi_mpich" libmpich.so.12
for np in 1 2 3; do
  echo "== MPICH-built abi_mpich on $np"
  run -n "$np" "$tmp/abi_mpich"
done

abi_run_list MPICH "p2p 3
types 2
coll 3
comm 3
topo 4
rma 2
mprobe 2
errors 2"
echo "mpich_abi: ok"

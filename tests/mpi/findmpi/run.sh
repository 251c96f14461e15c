#!/bin/sh
# run.sh BUILD_DIR PROJECT_DIR CMAKE GENERATOR [SANITIZE] - configure the findmpi project with
# MPI_C_COMPILER=terncc, build it, check that it picked tern's MPI, run it with ternrun.
set -eu
build=$1 proj=$2 cmake=$3 gen=$4 san=${5:-}
flags=""
[ "$san" = address ] && flags="-fsanitize=address,undefined"
[ "$san" = thread ] && flags="-fsanitize=thread"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$cmake" -S "$proj" -B "$tmp" -G "$gen" -DMPI_C_COMPILER="$build/bin/terncc" \
  -DMPIEXEC_EXECUTABLE="$build/bin/ternrun" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$tmp/configure.log" 2>&1 || {
  cat "$tmp/configure.log"
  exit 1
}
grep "MPI_C_LIBRARIES" "$tmp/configure.log"
grep -q "tern_mpi" "$tmp/configure.log" || { echo "FindMPI did not pick libtern_mpi"; cat "$tmp/configure.log"; exit 1; }
"$cmake" --build "$tmp"
"$build/bin/ternrun" -n 3 "$tmp/user_prog"
echo "findmpi: ok"

#!/bin/sh
# run.sh BUILD_DIR PROJECT_DIR CMAKE GENERATOR [SANITIZE] - configure the findmpi project with
# MPI_C_COMPILER=terncc, build it, check that it picked tern's MPI, run it with ternrun;
# then again with no hint but tern's mpi-names directory first on PATH (ahead of any
# system mpicc), run by the mpiexec FindMPI found there.
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
# Only PATH: FindMPI must take mpicc and mpiexec from libexec/tern/mpi-names.
names=$build/libexec/tern/mpi-names
PATH="$names:$PATH" "$cmake" -S "$proj" -B "$tmp/path" -G "$gen" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$tmp/path.log" 2>&1 || {
  cat "$tmp/path.log"
  exit 1
}
grep "MPI_C_LIBRARIES\|MPIEXEC_EXECUTABLE" "$tmp/path.log"
grep -q "MPI_C_LIBRARIES=.*tern_mpi" "$tmp/path.log" || { echo "FindMPI on PATH did not pick libtern_mpi"; cat "$tmp/path.log"; exit 1; }
grep -q "MPI_C_COMPILER=$names/mpicc " "$tmp/path.log" || { echo "FindMPI on PATH did not pick mpi-names/mpicc"; exit 1; }
grep -q "MPIEXEC_EXECUTABLE=$names/mpiexec$" "$tmp/path.log" || { echo "FindMPI on PATH did not pick mpi-names/mpiexec"; exit 1; }
"$cmake" --build "$tmp/path"
"$names/mpiexec" -n 2 "$tmp/path/user_prog"
echo "findmpi: ok"

#!/bin/sh
# oshcc_test.sh BUILD_DIR SRC_DIR - tern-oshcc builds a program that uses MPI and SHMEM
# together, and it runs on shared memory and over tcp, with MPI or SHMEM started first.
set -eu
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$build/bin/tern-oshcc" -show | grep -q -- "-ltern_mpi" || { echo "tern-oshcc does not link libtern_mpi"; exit 1; }
"$build/bin/tern-oshcc" -Wall -Werror -o "$tmp/mix" "$src/tests/shmem/mpi_mix.c"
"$build/bin/ternrun" -n 2 "$tmp/mix"
TERN_TRANSPORTS=self,tcp "$build/bin/ternrun" -n 3 "$tmp/mix"
# shmem_init first: MPI_Init joins the core SHMEM started (one library, one core).
"$build/bin/ternrun" -n 3 "$tmp/mix" shmem_first

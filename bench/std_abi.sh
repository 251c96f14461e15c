#!/usr/bin/env bash
# bench/std_abi.sh - what the MPI 5.0 standard ABI costs: bench/mpi_pingpong.c built twice,
# with terncc and with MPICH 5's mpicc_abi (-DMPI_ABI, libmpi_abi.so.1), both run on tern
# (the second through `ternrun --mpi-abi standard`, i.e. tern's libmpi_abi.so.1 in front of
# libtern), and the mpicc_abi build run on MPICH 5 itself (its mpiexec), interleaved ROUNDS
# times in one run; prints each run's small-message latency and the ratios. Numbers, not
# verdicts: it never fails on timing.
# usage: bench/std_abi.sh [BUILD_DIR] (default <repo>/build); env ROUNDS (3), SIZE (8),
#   TERN_MPICH5_VENV (the venv holding PyPI's mpich 5 wheel; default
#   ~/.cache/tern/venv-mpich5, where `scripts/deps.sh --bench` puts it)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-8}
VENV=${TERN_MPICH5_VENV:-$HOME/.cache/tern/venv-mpich5}
[ -x "$VENV/bin/mpicc_abi" ] || { echo "no mpicc_abi in $VENV/bin (scripts/deps.sh --bench)"; exit 0; }
. "$ROOT/bench/abi_latency.sh"
ABI=standard CC_ABI=$VENV/bin/mpicc_abi RUN_MPI=$VENV/bin/mpiexec LAB_ABI=tern-std-abi \
  LAB_MPI=mpich5-abi TXT_ABI="mpicc_abi build on tern" TXT_MPI="mpicc_abi build on MPICH 5" \
  abi_latency

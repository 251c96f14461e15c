#!/usr/bin/env bash
# bench/mpich_abi.sh - what the MPICH ABI costs: bench/mpi_pingpong.c built twice, with
# terncc and with MPICH's mpicc.mpich, both run on tern (the second through
# `ternrun --mpi-abi mpich`), and the MPICH build run on MPICH itself (mpiexec.mpich),
# interleaved ROUNDS times in one run; prints each run's small-message latency and the
# ratios. Numbers, not verdicts: it never fails on timing.
# usage: bench/mpich_abi.sh [BUILD_DIR] (default <repo>/build); env ROUNDS (3), SIZE (8)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
ROUNDS=${ROUNDS:-3}
SIZE=${SIZE:-8}
command -v mpicc.mpich >/dev/null || { echo "mpicc.mpich not installed"; exit 0; }
. "$ROOT/bench/abi_latency.sh"
ABI=mpich CC_ABI=mpicc.mpich RUN_MPI=mpiexec.mpich LAB_ABI=tern-mpich-abi LAB_MPI=mpich \
  TXT_ABI="mpicc.mpich build on tern" TXT_MPI="mpicc.mpich build on MPICH" abi_latency

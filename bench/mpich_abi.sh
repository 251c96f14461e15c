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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BUILD/bin/terncc" -std=gnu11 -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$tmp/pp.tern"
mpicc.mpich -std=gnu11 -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$tmp/pp.mpich"
args=(--sizes "$SIZE" --only pingpong --csv --trials 15 --iters 2000)
lat() { "$@" "${args[@]}" | awk -F, '$1 !~ /^(#|lib)/ && NF > 3 {print}' | tail -1; }
declare -A sum
for r in $(seq "$ROUNDS"); do
  for v in tern abi mpich; do
    case $v in
      tern) line=$(lat "$BUILD/bin/ternrun" -n 2 "$tmp/pp.tern" --label tern-terncc) ;;
      abi) line=$(lat "$BUILD/bin/ternrun" --mpi-abi mpich -n 2 "$tmp/pp.mpich" --label tern-mpich-abi) ;;
      mpich) line=$(lat mpiexec.mpich -n 2 "$tmp/pp.mpich" --label mpich) ;;
    esac
    echo "round $r $v: $line"
    us=$(printf '%s\n' "$line" | awk -F, '{print $8}') # t_min_us: the least disturbed trial
    sum[$v]=$(awk -v a="${sum[$v]:-0}" -v b="${us:-0}" 'BEGIN{print a+b}')
  done
done
awk -v t="${sum[tern]}" -v a="${sum[abi]}" -v m="${sum[mpich]}" -v n="$ROUNDS" -v s="$SIZE" 'BEGIN{
  printf "mean over %d rounds of the best-trial %s-byte one-way latency (loaded unless idle):\n", n, s
  printf "  terncc build on tern        %.3f us\n", t/n
  printf "  mpicc.mpich build on tern   %.3f us  (ABI/terncc = %.3f)\n", a/n, a/t
  printf "  mpicc.mpich build on MPICH  %.3f us  (tern-ABI/MPICH = %.3f)\n", m/n, a/m }'

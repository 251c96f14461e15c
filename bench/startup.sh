#!/usr/bin/env bash
# startup.sh - job start-up against the number of ranks on one node (issue 17): tern
# with the PMI keys in bulk (TERN_PMI_BULK=1, the default), tern key by key
# (TERN_PMI_BULK=0, what every rank did before), optionally a second tern build, and
# Open MPI (mpirun.openmpi --oversubscribe), all in the same run.
#
#   bench/startup.sh [--no-build]   env: BUILD_DIR (default build), NPS ("32 128 256"),
#                                        REPS (runs per cell, default 3; medians shown),
#                                        BASE_BUILD (another tern build tree, run as
#                                        "base"), OMPI=0 (leave Open MPI out: at 256
#                                        ranks it takes over a minute a run here)
# Columns (bench/mpi_startup.c, the slowest rank, ms): launch (launcher start -> main),
# init (MPI_Init), total (the launcher's whole run, finalize included), cpu (user + system
# seconds of the launcher and all ranks: on a loaded machine the steadier figure); for
# tern also the PMI requests a rank sends up to the end of init (the most of any rank) and
# in all. Writes bench/results/<stamp>-startup.csv (lib,p,rep,launch_ms,init_ms,total_ms,
# req_rank,req_all,cpu_s).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
nps=${NPS:-32 128 256}
reps=${REPS:-3}
mkdir -p bench/results "$build/bench-mpi"
stamp=$(date +%Y-%m-%d-%H%M%S)
csv=bench/results/$stamp-startup.csv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" != "--no-build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$build" -j2 ternrun tern_mpi_names >/dev/null || exit 1
fi
"$build/bin/terncc" -O2 bench/mpi_startup.c -o "$tmp/startup.tern" || exit 1
libs="bulk bykey"
if [ -n "${BASE_BUILD:-}" ]; then
  "$BASE_BUILD/bin/terncc" -O2 bench/mpi_startup.c -o "$tmp/startup.base" || exit 1
  libs="$libs base"
fi
if [ "${OMPI:-1}" != 0 ] && command -v mpicc.openmpi >/dev/null &&
  mpicc.openmpi -O2 bench/mpi_startup.c -o "$tmp/startup.ompi" 2>/dev/null; then
  libs="$libs openmpi"
fi

echo "lib,p,rep,launch_ms,init_ms,total_ms,req_rank,req_all,cpu_s" >"$csv"
command -v /usr/bin/time >/dev/null || { echo "startup.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
# run LIB P REP: one job; appends a csv row (empty cells for what it cannot tell).
run() {
  local lib=$1 p=$2 rep=$3 out="$tmp/out" err="$tmp/err" t0 t1 rc
  local cpu="/usr/bin/time -o $tmp/cpu -f %U+%S"
  t0=$(date +%s.%N)
  case $lib in
  bulk | bykey)
    local bulk=1
    [ "$lib" = bykey ] && bulk=0
    STARTUP_T0=$t0 TERN_PMI_BULK=$bulk TERN_DEBUG=1 $cpu timeout 600 "$build/bin/ternrun" -n "$p" \
      "$tmp/startup.tern" >"$out" 2>"$err"
    ;;
  base)
    STARTUP_T0=$t0 $cpu timeout 600 "$BASE_BUILD/bin/ternrun" -n "$p" "$tmp/startup.base" \
      >"$out" 2>"$err"
    ;;
  openmpi)
    STARTUP_T0=$t0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 $cpu timeout 900 \
      mpirun.openmpi --oversubscribe --mca btl self,vader -x STARTUP_T0 -n "$p" \
      "$tmp/startup.ompi" >"$out" 2>"$err"
    ;;
  esac
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc != 0 ]; then
    echo "startup.sh: $lib at $p ranks exited $rc: $(head -c 300 "$err")" >&2
    # Open MPI 4.1 at 256 ranks here sometimes ends "exiting improperly" after a clean
    # MPI_Finalize: its start-up figures still stand (total and cpu then include that).
    grep -q '^init ' "$out" || return
    echo "startup.sh: ($lib printed its figures: kept)" >&2
  fi
  local reqs
  reqs=$(sed -n 's/.*after \([0-9]*\) PMI requests.*/\1/p' "$err" |
    awk '{ s += $1; if ($1 > m) m = $1 } END { if (NR) printf "%d,%d", m, s; else printf "," }')
  local cpus
  cpus=$(tail -1 "$tmp/cpu" | bc 2>/dev/null || echo "")
  awk -v lib="$lib" -v p="$p" -v rep="$rep" -v t0="$t0" -v t1="$t1" -v reqs="$reqs" -v cpus="$cpus" \
    '$1 == "launch" { l = $2 } $1 == "init" { i = $2 }
     END { printf "%s,%d,%d,%.1f,%.1f,%.1f,%s,%s\n", lib, p, rep, l / 1e3, i / 1e3, (t1 - t0) * 1e3, reqs, cpus }' \
    "$out" >>"$csv"
}

for p in $nps; do
  for rep in $(seq 1 "$reps"); do
    for lib in $libs; do
      # Open MPI at many ranks takes a minute or more a run: once is enough to compare.
      [ "$lib" = openmpi ] && [ "$p" -ge 256 ] && [ "$rep" -gt 1 ] && continue
      run "$lib" "$p" "$rep"
    done
  done
done

echo "startup (ms, median of the runs; slowest rank; load at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
python3 - "$csv" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def med(lib, p, col):
    v = [float(r[col]) for r in rows if r["lib"] == lib and int(r["p"]) == p and r[col] != ""]
    return statistics.median(v) if v else None
libs = [l for l in ["bulk", "bykey", "base", "openmpi"] if any(r["lib"] == l for r in rows)]
ps = sorted({int(r["p"]) for r in rows})
print(f"{'p':>4} {'lib':>8} {'launch':>9} {'init':>9} {'total':>9} {'cpu s':>7} {'req/rank':>9} {'req all':>9}")
for p in ps:
    for lib in libs:
        c = [med(lib, p, k) for k in ("launch_ms", "init_ms", "total_ms", "req_rank", "req_all", "cpu_s")]
        if c[2] is None: continue
        f = lambda x, d=1: "-" if x is None else f"{x:.{d}f}"
        print(f"{p:>4} {lib:>8} {f(c[0]):>9} {f(c[1]):>9} {f(c[2]):>9} {f(c[5],2):>7} {f(c[3],0):>9} {f(c[4],0):>9}")
    for col in ("init_ms", "total_ms", "cpu_s"):
        b = med("bulk", p, col)
        for lib in libs[1:]:
            o = med(lib, p, col)
            if b and o: print(f"{'':>4} {col.split('_')[0]} {lib}/bulk = {o / b:.2f}")
PY
echo "csv: $csv"

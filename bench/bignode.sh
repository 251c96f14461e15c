#!/usr/bin/env bash
# bignode.sh - many ranks on one node (issue 17): time per phase against the number of
# ranks, tern vs Open MPI (mpirun.openmpi --oversubscribe) in the same run.
#
#   bench/bignode.sh [--no-build]     env: BUILD_DIR (default build), NPS ("64 128 256"),
#                                          ITERS (barrier/allreduce calls, default 200),
#                                          BIGNODE_FORCE=1 (skip the memory guard below),
#                                          BASE_BUILD (a second tern build tree, e.g. main's,
#                                          run as "base" in the same run), LOAD (N busy
#                                          loops beside the runs: a loaded machine on demand)
# Phases (bench/mpi_bignode.c, the slowest rank): launch (launcher start -> main), init
# (MPI_Init: PMI exchange and transport set-up), comm_split, comm_dup, barrier and 8-byte
# allreduce (per call), 2 KiB-per-peer alltoall (per call), shmem_kB (the node's Shmem
# after the all-to-alls less before the launch, in kB, not us: other jobs' segments count
# too, so read it on a quiet machine), finalize (the slowest rank entering MPI_Finalize ->
# the launcher's exit), total (the launcher's whole run).
# Prints one table per rank count with ratio = openmpi / tern (> 1: tern faster or
# smaller), writes bench/results/<stamp>-bignode.csv (lib,p,phase,us) and a text plot of
# time against p; with python3-matplotlib, also <stamp>-bignode.png (memory and the
# collectives' times against p).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
nps=${NPS:-64 128 256}
iters=${ITERS:-200}
mkdir -p bench/results "$build/bench-mpi"
stamp=$(date +%Y-%m-%d-%H%M%S)
csv=bench/results/$stamp-bignode.csv
txt=bench/results/$stamp-bignode.txt
tmp=$(mktemp -d)

loadpids=()
stop_load() {
  for p in "${loadpids[@]}"; do kill "$p" 2>/dev/null; done
  loadpids=()
}
trap 'stop_load; rm -rf "$tmp"' EXIT

if [ "${1:-}" != "--no-build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$build" -j2 ternrun tern_mpi_names >/dev/null || exit 1
fi
"$build/bin/terncc" -O2 bench/mpi_bignode.c -o "$build/bench-mpi/mpi_bignode.tern" || exit 1
base=${BASE_BUILD:-}
libs="tern"
if [ -n "$base" ]; then
  [ -x "$base/bin/terncc" ] && [ -x "$base/bin/ternrun" ] ||
    { echo "bignode.sh: BASE_BUILD=$base has no bin/terncc and bin/ternrun" >&2; exit 1; }
  "$base/bin/terncc" -O2 bench/mpi_bignode.c -o "$tmp/mpi_bignode.base" || exit 1
  libs="tern base"
fi
have_ompi=0
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
  mpicc.openmpi -O2 bench/mpi_bignode.c -o "$build/bench-mpi/mpi_bignode.openmpi" && have_ompi=1
fi
[ $have_ompi = 1 ] && libs="$libs openmpi"

# Memory guard: the shm transport touches at most one page of slots per talking pair (two
# after a full lap) and each process's send pool (TERN_SHM_CELLS x 8 KiB + TERN_SHM_BIG_CELLS
# x 64 KiB, 1.5 MiB by default); before the pool (per-pair 520 KiB channels) a 256-rank
# run on this 23 GB machine set off the OOM killer, which took other jobs with it. A rank
# count whose worst case exceeds half of MemAvailable is skipped for tern
# (BIGNODE_FORCE=1 runs it anyway).
tern_fits() {
  local np=$1 avail_kb
  [ "${BIGNODE_FORCE:-0}" = 1 ] && return 0
  avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
  [ -n "$avail_kb" ] || return 0
  [ $((np * (np - 1) * 8 + np * 1536)) -le $((avail_kb / 2)) ]
}

run() { # lib np -> phase lines in $tmp/lib.np
  local lib=$1 np=$2 out=$tmp/$1.$2 t0 t1
  if [ "$lib" != openmpi ] && ! tern_fits "$np"; then
    echo "NOTE: tern -n $np skipped: its worst-case shm (slots per pair, a pool per process) exceeds half of MemAvailable (BIGNODE_FORCE=1 to run)" >&2
    : >"$out"
    return
  fi
  export BIGNODE_SHMEM0
  BIGNODE_SHMEM0=$(awk '/^Shmem:/ { print $2 }' /proc/meminfo)
  t0=$(date +%s.%N)
  case $lib in
  tern) BIGNODE_T0=$t0 timeout 900 "$build/bin/ternrun" -n "$np" -x BIGNODE_T0 -x BIGNODE_SHMEM0 \
          --timeout 880 "$build/bench-mpi/mpi_bignode.tern" "$iters" >"$out.raw" 2>"$out.err" ;;
  base) BIGNODE_T0=$t0 timeout 900 "$base/bin/ternrun" -n "$np" -x BIGNODE_T0 -x BIGNODE_SHMEM0 \
          --timeout 880 "$tmp/mpi_bignode.base" "$iters" >"$out.raw" 2>"$out.err" ;;
  openmpi) BIGNODE_T0=$t0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 900 \
          mpirun.openmpi --oversubscribe --mca btl self,vader -x BIGNODE_T0 -x BIGNODE_SHMEM0 \
          -n "$np" "$build/bench-mpi/mpi_bignode.openmpi" "$iters" >"$out.raw" 2>"$out.err" ;;
  esac
  local rc=$?
  t1=$(date +%s.%N)
  if [ $rc != 0 ]; then
    # Open MPI 4.1 at 256 ranks here runs every phase, then its launcher reports a rank
    # "exiting improperly" after MPI_Finalize: keep the phases it printed (all of them,
    # up to fini_start), say so, and leave finalize/total out.
    if grep -q '^fini_start ' "$out.raw"; then
      echo "NOTE: $lib -n $np exited $rc after every phase (finalize and total not counted): $(grep -m1 -i 'exit\|error' "$out.err")" >&2
      awk 'NF == 2 && $1 != "fini_start" { print }' "$out.raw" >"$out"
      return
    fi
    echo "NOTE: $lib -n $np exited $rc: $(tail -1 "$out.err")" >&2
    : >"$out"
    return
  fi
  awk -v t1="$t1" -v t0="$t0" '
    $1 == "fini_start" { printf "finalize %.2f\n", (t1 - $2) * 1e6; next }
    NF == 2 { print }
    END { printf "total %.2f\n", (t1 - t0) * 1e6 }' "$out.raw" >"$out"
}

# LOAD busy loops stand in for other jobs (a loaded machine on demand; started after the
# builds, stopped at exit).
for _ in $(seq 1 "${LOAD:-0}"); do
  sh -c 'while :; do :; done' &
  loadpids+=($!)
done

{
  echo "tern many-ranks comparison - $stamp - $(hostname)"
  echo "repo: $(git rev-parse --short HEAD 2>/dev/null); load at start: $(cut -d' ' -f1-3 /proc/loadavg)"
  echo "cpu: $(nproc) online CPUs (every run is oversubscribed); $iters barrier/allreduce calls"
  echo "busy loops beside the runs (LOAD): ${LOAD:-0}; libraries: $libs${base:+ (base: $base)}"
  echo "Times in microseconds, slowest rank (loops: per call). ratio = openmpi / tern (> 1: tern faster)."
  echo "lib,p,phase,us" >"$csv"
  for np in $nps; do
    for lib in $libs; do
      run "$lib" "$np"
    done
    for lib in $libs; do
      [ -f "$tmp/$lib.$np" ] && awk -v lib=$lib -v np=$np '{ printf "%s,%s,%s,%s\n", lib, np, $1, $2 }' \
        "$tmp/$lib.$np" >>"$csv"
    done
    echo
    echo "== $np ranks on $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg) =="
    touch "$tmp/openmpi.$np" "$tmp/base.$np"
    awk -v hasbase="${base:+1}" '
      FILENAME ~ /\/tern\./ { t[$1] = $2; order[++n] = $1; next }
      FILENAME ~ /\/base\./ { b[$1] = $2; next }
      { o[$1] = $2 }
      function ratio(x, y) { return (y > 0 && x != "") ? sprintf("%.2f", x / y) : "n/a" }
      END {
        printf "%-14s %14s %14s %8s", "phase", "tern", "openmpi", "ratio"
        if (hasbase) printf " %14s %8s", "base", "ratio"
        printf "\n"
        for (i = 1; i <= n; i++) {
          k = order[i]
          printf "%-14s %14s %14s %8s", k, t[k], (k in o ? o[k] : "n/a"), ratio(o[k], t[k])
          if (hasbase) printf " %14s %8s", (k in b ? b[k] : "n/a"), ratio(o[k], b[k])
          printf "\n"
        }
      }' "$tmp/tern.$np" "$tmp/base.$np" "$tmp/openmpi.$np"
  done

  # Time against p, one row per (phase, lib): a text plot on a log scale, so growth
  # linear in p climbs by the same step from 64 to 128 as from 128 to 256.
  echo
  echo "== time against p (log10 us; each # is 0.25 decade) =="
  awk -F, 'NR > 1 && $4 > 0 {
      key = $3 " " $1; v[key, $2] = $4; if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
      if (!($2 in ps)) { ps[$2] = 1; plist[++m] = $2 }
    }
    END {
      for (i = 1; i <= n; i++) {
        for (j = 1; j <= m; j++) {
          x = v[keys[i], plist[j]]; if (x == "") continue
          bar = ""; for (b = 0; b < int(log(x) / log(10) * 4 + 0.5); b++) bar = bar "#"
          printf "%-22s p=%-4s %12.1f %s\n", keys[i], plist[j], x, bar
        }
      }
    }' "$csv"
} | tee "$txt"

# A Python with matplotlib (python3-matplotlib; the first python3 on PATH may be another).
py=
for c in python3 /usr/bin/python3; do
  if command -v "$c" >/dev/null && "$c" -c 'import matplotlib' 2>/dev/null; then py=$c; break; fi
done
if [ -n "$py" ]; then
  "$py" - "$csv" "${csv%.csv}.png" <<'EOF'
import csv, sys
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rows = list(csv.DictReader(open(sys.argv[1])))
# Memory first, then the collectives, then the rest of the phases.
first = ["shmem_kB", "barrier", "allreduce_8B", "alltoall_2KiB"]
seen = {r["phase"] for r in rows}
phases = [p for p in first if p in seen] + sorted(seen - set(first))
ncol = min(len(phases), 4)
nrow = (len(phases) + ncol - 1) // ncol
fig, axes = plt.subplots(nrow, ncol, figsize=(3.2 * ncol, 2.8 * nrow), squeeze=False)
for ax in axes.flat[len(phases):]:
    ax.set_visible(False)
for ax, ph in zip(axes.flat, phases):
    for lib in ("tern", "base", "openmpi"):
        pts = sorted((int(r["p"]), float(r["us"])) for r in rows if r["phase"] == ph and r["lib"] == lib)
        pts = [(a, b) for a, b in pts if b > 0]
        if pts:
            ax.plot([a for a, _ in pts], [b for _, b in pts], marker="o", label=lib)
    ax.set_title("shared memory (kB)" if ph == "shmem_kB" else ph + " (us)")
    ax.set_xscale("log", base=2); ax.set_yscale("log"); ax.set_xlabel("ranks")
axes[0][0].legend(fontsize="small")
fig.tight_layout(); fig.savefig(sys.argv[2])
print("plot written to", sys.argv[2])
EOF
else
  echo "(python3-matplotlib not installed: plot the CSV with ternbench or matplotlib)"
fi
echo "written to $txt and $csv"

#!/usr/bin/env bash
# bind.sh - does binding ranks to cores pay? 2-rank 8-byte ping-pong on shared memory,
# bound (--bind-to core, ternrun's default when ranks fit on cores) against unbound
# (--bind-to none), for tern and, in the same run, Open MPI (mpirun --bind-to core/none).
#
#   bench/bind.sh [BUILD_DIR]        (default build/; ROUNDS=5, SIZE=8, ITERS=20000)
#
# Configurations run in interleaved rounds so that each sees the same machine load; the
# table gives the median over rounds of each run's best trial (t_min) and its median
# trial (t_med), and the bound/unbound ratio of each library.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${1:-$ROOT/build}
ROUNDS=${ROUNDS:-5}
SIZE=${SIZE:-8}
ITERS=${ITERS:-20000}
T=$B/bin/ternrun
PP=$B/bench/tern_pingpong
[ -x "$T" ] && [ -x "$PP" ] || { echo "bind.sh: build $B first (ninja -C $B bench)" >&2; exit 1; }
W=$(mktemp -d "${TMPDIR:-/tmp}/bind-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
ARGS=(-s "$SIZE" -i "$ITERS" -t 5 --only pingpong --csv)

have_ompi=0
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null &&
    mpicc.openmpi -std=gnu11 -O2 -o "$W/mpi_pingpong.openmpi" "$ROOT/bench/mpi_pingpong.c" \
        -I"$ROOT/bench" 2>/dev/null; then
    have_ompi=1
fi

run() { # name command...
    local name=$1
    shift
    "$@" 2>/dev/null | grep -v '^lib,' | grep -v '^#' | cut -d, -f8,9 >>"$W/$name" || true
}

for r in $(seq 1 "$ROUNDS"); do
    run tern-bound "$T" -n 2 --bind-to core "$PP" "${ARGS[@]}"
    run tern-unbound "$T" -n 2 --bind-to none "$PP" "${ARGS[@]}"
    if [ $have_ompi = 1 ]; then
        run ompi-bound mpirun.openmpi --allow-run-as-root --oversubscribe --mca btl self,vader \
            --bind-to core -n 2 "$W/mpi_pingpong.openmpi" "${ARGS[@]}"
        run ompi-unbound mpirun.openmpi --allow-run-as-root --oversubscribe --mca btl self,vader \
            --bind-to none -n 2 "$W/mpi_pingpong.openmpi" "${ARGS[@]}"
    fi
    echo "round $r of $ROUNDS done" >&2
done

median() { sort -g | awk '{v[NR]=$1} END {if (NR) print (NR%2 ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2); else print "n/a"}'; }
echo "# $SIZE-byte one-way latency, 2 ranks on shm, $ROUNDS interleaved rounds; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-14s %12s %12s\n" config t_min_us t_med_us
for c in tern-bound tern-unbound ompi-bound ompi-unbound; do
    [ -s "$W/$c" ] || continue
    tmin=$(cut -d, -f1 "$W/$c" | median)
    tmed=$(cut -d, -f2 "$W/$c" | median)
    printf "%-14s %12s %12s\n" "$c" "$tmin" "$tmed"
    eval "min_${c//-/_}=$tmin med_${c//-/_}=$tmed"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "n/a"}'; }
echo "tern bound/unbound: t_min $(ratio "$min_tern_bound" "$min_tern_unbound"), t_med $(ratio "$med_tern_bound" "$med_tern_unbound")"
if [ $have_ompi = 1 ]; then
    echo "ompi bound/unbound: t_min $(ratio "$min_ompi_bound" "$min_ompi_unbound"), t_med $(ratio "$med_ompi_bound" "$med_ompi_unbound")"
    echo "tern/ompi bound: t_min $(ratio "$min_tern_bound" "$min_ompi_bound"); unbound: t_min $(ratio "$min_tern_unbound" "$min_ompi_unbound")"
fi

#!/usr/bin/env bash
# bench/acc_bw.sh - large MPI_Accumulate bandwidth (bench/mpi_acc_bw.c: MPI_SUM of BYTES
# into rank 0 by every other rank, MPI_Win_create and MPI_Win_allocate windows, rank 0
# in MPI_Barrier), and MPICH's rma/large_acc_flush_local pattern when its source is
# given, on tern, MPICH (mpicc.mpich + mpiexec.mpich) and Open MPI (mpicc.openmpi +
# mpirun.openmpi), one after the other in one run, at 2 and 3 ranks. Prints each line
# and the ratios tern / other of the same run. Numbers, not verdicts: never fails on timing.
# usage: bench/acc_bw.sh [BUILD_DIR] (default <repo>/build); env BYTES (1048576),
#   ITERS (200), TYPE (char|int|double), NPS ("2 3"), LAFL (path of MPICH's
#   large_acc_flush_local.c, optional), LOOP (its rounds, 500)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
BYTES=${BYTES:-1048576}
ITERS=${ITERS:-200}
TYPE=${TYPE:-char}
NPS=${NPS:-2 3}
LOOP=${LOOP:-500}
TMP=$(mktemp -d /tmp/tern-accbw.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
declare -A CC RUN
CC[tern]="$BUILD/bin/terncc"
RUN[tern]="$BUILD/bin/ternrun -n"
if command -v mpicc.mpich >/dev/null; then
    CC[mpich]=mpicc.mpich
    RUN[mpich]="mpiexec.mpich -n"
fi
if command -v mpicc.openmpi >/dev/null; then
    CC[ompi]=mpicc.openmpi
    RUN[ompi]="mpirun.openmpi --allow-run-as-root --oversubscribe -n"
fi
impls="tern"
for m in mpich ompi; do [ -n "${CC[$m]:-}" ] && impls="$impls $m"; done
for m in $impls; do
    ${CC[$m]} -O2 "$ROOT/bench/mpi_acc_bw.c" -o "$TMP/accbw_$m" || { echo "$m: build failed"; exit 1; }
done
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"
declare -A R
for np in $NPS; do
    for m in $impls; do
        while read -r _ kind ty _ _ _ mbs; do
            R[$m.$kind.$np]=$mbs
            printf '%-6s %-9s %s ranks=%s bytes=%s MB/s %s\n' "$m" "$kind" "$ty" "$np" "$BYTES" "$mbs"
        done < <(timeout 600 ${RUN[$m]} "$np" "$TMP/accbw_$m" "$BYTES" "$ITERS" "$TYPE" 2>/dev/null |
            grep '^acc_bw')
    done
done
for np in $NPS; do
    for kind in create allocate; do
        for m in $impls; do
            [ "$m" = tern ] && continue
            t=${R[tern.$kind.$np]:-} o=${R[$m.$kind.$np]:-}
            [ -n "$t" ] && [ -n "$o" ] &&
                awk -v t="$t" -v o="$o" -v k="$kind" -v n="$np" -v m="$m" \
                    'BEGIN { printf "ratio tern/%s %s ranks=%s: %.2f\n", m, k, n, t / o }'
        done
    done
done
[ -n "${LAFL:-}" ] || exit 0
# MPICH's test, its MTest calls replaced by plain MPI, LOOP rounds, 3 ranks: seconds.
sed -e 's/#include "mpitest.h"//' -e 's/MTest_Init(&argc, &argv)/MPI_Init(\&argc, \&argv)/' \
    -e 's/MTest_Finalize(0);/MPI_Finalize();/' -e "s/^#define LOOP 500/#define LOOP $LOOP/" \
    "$LAFL" >"$TMP/lafl.c"
for m in $impls; do
    ${CC[$m]} -O2 "$TMP/lafl.c" -o "$TMP/lafl_$m" || continue
    s=$(date +%s.%N)
    timeout 1200 ${RUN[$m]} 3 "$TMP/lafl_$m" >/dev/null 2>&1
    rc=$?
    e=$(date +%s.%N)
    awk -v m="$m" -v s="$s" -v e="$e" -v rc="$rc" -v l="$LOOP" \
        'BEGIN { printf "large_acc_flush_local %-6s loop=%s %.1f s (exit %s)\n", m, l, e - s, rc }'
done
echo "# load: $(cut -d' ' -f1-3 /proc/loadavg)"

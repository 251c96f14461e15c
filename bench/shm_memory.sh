#!/usr/bin/env bash
# bench/shm_memory.sh - shared memory in use after a 2 KiB all-to-all repeated 20 times,
# tern against Open MPI (--oversubscribe) in the same run (issue 17).
#
# For each rank count, /proc/meminfo's Shmem is read just before the job and by rank 0
# after the exchanges (every rank still alive); the table shows the difference in MB.
# Other jobs on the machine move Shmem too: each cell is the median of TRIALS runs.
#
# usage: bench/shm_memory.sh [ranks ...]          (default: 8 32)
# environment:
#   BUILD_DIR   tern build dir with bin/terncc and bin/ternrun (default <repo>/build)
#   BASE_DIR    a second tern build dir to compare with (e.g. before a change), optional
#   TRIALS      runs per cell (default 3)
#   BYTES, REPS message size per pair and repetitions (default 2048, 20)
#   SPLIT=1     also print, for each tern run, where its bytes are: pages that exist in
#               the parts of every rank's transport segment (headers and lists,
#               channels, small / big / mid cells) and rank 0's other tern segments, kB
#               (mincore, so other jobs on the machine do not count)
set -u
export LC_ALL=C
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
BASE_DIR=${BASE_DIR:-}
TRIALS=${TRIALS:-3}
BYTES=${BYTES:-2048}
REPS=${REPS:-20}
RANKS=("$@")
[ -n "${SPLIT:-}" ] && export MEM_SPLIT=1
[ ${#RANKS[@]} -eq 0 ] && RANKS=(8 32)
TMP=$(mktemp -d /tmp/shm_memory.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
SRC=$ROOT/bench/shm_alltoall_mem.c
# Open MPI refuses to start as root without these (containers).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

libs=()
"$BUILD_DIR/bin/terncc" -O2 "$SRC" -o "$TMP/tern" && libs+=(tern)
if [ -n "$BASE_DIR" ] && "$BASE_DIR/bin/terncc" -O2 "$SRC" -o "$TMP/base"; then libs+=(base); fi
if command -v mpicc.openmpi >/dev/null && mpicc.openmpi -O2 "$SRC" -o "$TMP/openmpi"; then
    libs+=(openmpi)
fi

shmem_kb() { awk '/^Shmem:/ {print $2}' /proc/meminfo; }

run_one() { # lib n -> prints "MB seconds" or "n/a"
    local lib=$1 n=$2 out before
    before=$(shmem_kb)
    case $lib in
    tern) out=$(timeout 600 "$BUILD_DIR/bin/ternrun" -n "$n" "$TMP/tern" "$BYTES" "$REPS" 2>/dev/null) ;;
    base) out=$(timeout 600 "$BASE_DIR/bin/ternrun" -n "$n" "$TMP/base" "$BYTES" "$REPS" 2>/dev/null) ;;
    openmpi) out=$(timeout 600 mpirun.openmpi --oversubscribe -n "$n" "$TMP/openmpi" "$BYTES" \
        "$REPS" 2>/dev/null) ;;
    esac
    local kb t
    [ -n "${SPLIT:-}" ] && echo "$out" | sed -n "s/^split_kb /$lib $n: /p" >>"$TMP/split"
    kb=$(echo "$out" | awk '/^shmem_kb/ {print $2}')
    t=$(echo "$out" | awk '/^shmem_kb/ {print $4}')
    if [ -z "$kb" ]; then echo "n/a"; else echo "$(awk -v a="$kb" -v b="$before" 'BEGIN {printf "%.1f", (a - b) / 1024}') $t"; fi
}

median() { sort -g | awk '{v[NR] = $1} END {if (NR == 0) print "n/a"; else print v[int((NR + 1) / 2)]}'; }

printf '%-6s' ranks
for lib in "${libs[@]}"; do printf ' %14s %10s' "$lib MB" "$lib s"; done
echo
for n in "${RANKS[@]}"; do
    printf '%-6s' "$n"
    for lib in "${libs[@]}"; do
        : >"$TMP/mb"
        : >"$TMP/t"
        for _ in $(seq "$TRIALS"); do
            r=$(run_one "$lib" "$n")
            [ "$r" = n/a ] && continue
            echo "${r% *}" >>"$TMP/mb"
            echo "${r#* }" >>"$TMP/t"
        done
        printf ' %14s %10s' "$(median <"$TMP/mb")" "$(median <"$TMP/t")"
    done
    echo
done
echo "(Shmem after the exchanges minus Shmem before the job, MB, median of $TRIALS; loaded machine)"
if [ -s "$TMP/split" ]; then
    echo "where the bytes are (kB):"
    cat "$TMP/split"
fi

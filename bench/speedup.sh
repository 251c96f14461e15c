#!/bin/sh
# bench/speedup.sh - speedup tables of the conversation examples: gauss_jordan
# (examples/gauss_jordan) and sor (examples/sor) at 1, 2 and 4 processes and several
# sizes. Each cell is the best of REPS runs of the parallel phase (the time the program
# prints, without the serial check), and the speedup is t(1) / t(n).
#
#   bench/speedup.sh
#
# Environment: BUILD_DIR (default build-bench), NPS (default "1 2 4"), GJ_SIZES (default
# "500 1000 1500"), SOR_SIZES (default "128 256 512"), REPS (default 3), SOR_HALO (p2p or
# conv, default p2p), RUN_TIMEOUT seconds per run (default 600).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
NPS=${NPS:-"1 2 4"}
GJ_SIZES=${GJ_SIZES:-"500 1000 1500"}
SOR_SIZES=${SOR_SIZES:-"128 256 512"}
REPS=${REPS:-3}
SOR_HALO=${SOR_HALO:-p2p}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" --target gauss_jordan sor ternrun >/dev/null

# best_time <np> <program> <args...>: the smallest of REPS parallel times, in seconds.
best_time() {
    np=$1
    shift
    best=""
    i=0
    while [ $i -lt "$REPS" ]; do
        t=$(timeout "$RUN_TIMEOUT" "$BUILD_DIR/bin/ternrun" -n "$np" "$@" 2>/dev/null |
            sed -n 's/.* in \([0-9.]*\) s.*/\1/p; s/.*processes: \([0-9.]*\) s.*/\1/p' | head -1)
        if [ -n "$t" ] && { [ -z "$best" ] || awk "BEGIN { exit !($t < $best) }"; }; then
            best=$t
        fi
        i=$((i + 1))
    done
    echo "${best:-n/a}"
}

table() { # table <title> <sizes> <program> <extra args...>
    title=$1
    sizes=$2
    prog=$3
    shift 3
    printf '\n%s\n%8s' "$title" "size"
    for np in $NPS; do printf ' %16s' "$np proc"; done
    printf '\n'
    for n in $sizes; do
        printf '%8s' "$n"
        t1=""
        for np in $NPS; do
            t=$(best_time "$np" "$BUILD_DIR/bin/$prog" "$n" 0 "$@")
            [ -z "$t1" ] && t1=$t
            if [ "$t" = n/a ] || [ "$t1" = n/a ]; then
                printf ' %16s' n/a
            else
                printf ' %8.3fs %5.2fx' "$t" "$(awk "BEGIN { print $t1 / $t }")"
            fi
        done
        printf '\n'
    done
}

echo "# speedup of the conversation examples, $(date -u +%Y-%m-%dT%H:%MZ), $(hostname), $(nproc) cores"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg) (other engineers share this machine;"
echo "#   more processes than cores are oversubscribed and time-share)"
table "gauss_jordan: n x n system, seconds (best of $REPS) and speedup over 1 process" \
    "$GJ_SIZES" gauss_jordan
table "sor: P x P grid to tol 1e-8, halo $SOR_HALO, seconds (best of $REPS) and speedup" \
    "$SOR_SIZES" sor "halo=$SOR_HALO"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

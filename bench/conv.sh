#!/bin/sh
# bench/conv.sh - the conversation benchmarks (bench/tern_conv.c): loopback, fcfs,
# broadcast, random and the p2p reference, 16 B .. 64 KiB, as MB/s tables, at each
# process count of NPS.
#
#   bench/conv.sh                         # build (Release, build-bench/) and run
#   BASE_BUILD=/path/to/other/build bench/conv.sh
#                                         # also run that build's tern_conv, interleaved
#                                         # pattern by pattern, and print base/new ratios
#
# Under load (a shared machine) the median of the trials is the steadier figure; the
# best is shown in parentheses. Every run's CSV lands in bench/results/.
# Environment: BUILD_DIR (default build-bench), NPS (default "2 4"), TRIALS (default 5),
# PATTERNS (default all), RUN_TIMEOUT seconds per run (default 600).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
NPS=${NPS:-"2 4"}
TRIALS=${TRIALS:-5}
PATTERNS=${PATTERNS:-"loopback fcfs broadcast random p2p"}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
BASE_BUILD=${BASE_BUILD:-}

cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$BUILD_DIR" --target tern_conv ternrun >/dev/null

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "# tern conversations benchmark, $(date -u +%Y-%m-%dT%H:%MZ), $(hostname), $(nproc) cores"
echo "# load before: $(cut -d' ' -f1-3 /proc/loadavg) (other engineers share this machine:"
echo "#   numbers from one run compare with each other, not across runs)"
for np in $NPS; do
    for p in $PATTERNS; do
        timeout "$RUN_TIMEOUT" "$BUILD_DIR/bin/ternrun" -n "$np" "$BUILD_DIR/bench/tern_conv" \
            -t "$TRIALS" --csv "$p" | grep -v '^lib,' >>"$out/new.csv" ||
            echo "# NOTE: $p at $np processes failed or timed out" >&2
        if [ -n "$BASE_BUILD" ]; then
            timeout "$RUN_TIMEOUT" "$BASE_BUILD/bin/ternrun" -n "$np" \
                "$BASE_BUILD/bench/tern_conv" -t "$TRIALS" --csv "$p" | grep -v '^lib,' \
                >>"$out/base.csv" || echo "# NOTE: base $p at $np processes failed" >&2
        fi
    done
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$ROOT/bench/results"
stamp=$(date -u +%Y%m%d-%H%M)-$(hostname)
cp "$out/new.csv" "$ROOT/bench/results/conv-$stamp.csv"
[ -n "$BASE_BUILD" ] && cp "$out/base.csv" "$ROOT/bench/results/conv-$stamp-base.csv"
echo "# CSV: bench/results/conv-$stamp.csv"

# CSV: lib,pattern,mode,nprocs,bytes,iters,trials,t_min_us,t_med_us,MBps_max,MBps_med
if [ -z "$BASE_BUILD" ]; then
    awk -F, '{ k = $2 " " $4; if (k != last) { printf "\n%s, %s processes: MB/s (1e6 B/s), best / median of %s trials\n%8s %10s %10s\n", substr($2, 6), $4, $7, "bytes", "best", "median"; last = k }
               printf "%8s %10.1f %10.1f\n", $5, $10, $11 }' "$out/new.csv"
else
    awk -F, 'NR == FNR { b[$2 " " $4 " " $5] = $10; bm[$2 " " $4 " " $5] = $11; next }
             { k = $2 " " $4; if (k != last) { printf "\n%s, %s processes: MB/s (1e6 B/s), median (best) of %s trials; ratio of medians\n%8s %18s %18s %7s\n", substr($2, 6), $4, $7, "bytes", "before", "after", "ratio"; last = k }
               kk = $2 " " $4 " " $5
               printf "%8s %9.1f (%6.1f) %9.1f (%6.1f) %6.2fx\n", $5, bm[kk], b[kk], $11, $10, (bm[kk] > 0 ? $11 / bm[kk] : 0) }' \
        "$out/base.csv" "$out/new.csv"
fi

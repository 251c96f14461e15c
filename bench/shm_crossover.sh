#!/bin/bash
# shm_crossover.sh - measure on this machine the message size from which the single-copy
# rendezvous (one process_vm_readv) beats eager through a cell (two copies), the value
# for TERN_SHM_EAGER_MAX.
#
# usage: bench/shm_crossover.sh [BUILD_DIR]   (default <repo>/build; needs bench/tern_pingpong)
#
# Runs tern_pingpong (native API, 2 ranks) twice over the same sizes, 1 KiB steps from 2 to
# 16 KiB and then powers of two to 64 KiB, once with every message eager
# (TERN_SHM_EAGER_MAX=64k) and once with every message by rendezvous (TERN_SHM_EAGER_MAX=0,
# TERN_SHM_STREAM_EAGER_MAX=0), and prints both, ping-pong and streaming, with their
# ratio. The crossover is the first size from which the rendezvous ping-pong is faster at
# that size and the next; the script prints it as a TERN_SHM_EAGER_MAX line. (Streams are
# governed by TERN_SHM_STREAM_EAGER_MAX: the core sends eagerly while a rendezvous is in
# flight, so a stream's column says what that buys.) As root it runs the benchmark under
# `chrt -f 20` so that other work on a busy machine does not land inside a timing;
# ROUNDS (default 2) runs alternate the two settings and the best time of each is kept.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
PP=$BUILD/bench/tern_pingpong
RUN=$BUILD/bin/ternrun
ROUNDS=${ROUNDS:-2}
for f in "$PP" "$RUN"; do
    [ -x "$f" ] || { echo "shm_crossover.sh: $f missing (build with cmake/ninja first)" >&2; exit 1; }
done
CHRT=()
if [ "$(id -u)" = 0 ] && command -v chrt >/dev/null; then CHRT=(chrt -f 20); fi

SIZES=""
for k in $(seq 2 16); do SIZES+="$((k * 1024)),"; done
SIZES+="24576,32768,49152,65536"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for r in $(seq 1 "$ROUNDS"); do
    for mode in eager rndv; do
        if [ $mode = eager ]; then env=(TERN_SHM_EAGER_MAX=64k); else
            env=(TERN_SHM_EAGER_MAX=0 TERN_SHM_STREAM_EAGER_MAX=0); fi
        env "${env[@]}" TERN_TRANSPORTS=self,shm "${CHRT[@]}" timeout 300 "$RUN" -n 2 "$PP" \
            --sizes "$SIZES" -t 7 -i 300 --csv 2>/dev/null |
            awk -F, -v m=$mode '$2=="pingpong"||$2=="stream"{print m","$2","$5","$8}' >>"$TMP/all"
    done
done

awk -F, '
{ k = $1 SUBSEP $2 SUBSEP $3; if (!(k in t) || $4 < t[k]) t[k] = $4; if (!($3 in seen)) { seen[$3] = 1; sz[n++] = $3 } }
END {
    printf "%8s  %12s %12s %6s  %12s %12s %6s\n", "bytes", "pp eager us", "pp rndv us", "ratio", "st eager us", "st rndv us", "ratio"
    cross = ""
    for (i = 0; i < n; i++) {
        s = sz[i]
        pe = t["eager" SUBSEP "pingpong" SUBSEP s]; pr = t["rndv" SUBSEP "pingpong" SUBSEP s]
        se = t["eager" SUBSEP "stream" SUBSEP s];   sr = t["rndv" SUBSEP "stream" SUBSEP s]
        printf "%8d  %12.3f %12.3f %6.2f  %12.3f %12.3f %6.2f\n", s, pe, pr, pr / pe, se, sr, sr / se
        win[i] = pr < pe
    }
    for (i = 0; i < n; i++)
        if (win[i] && (i + 1 == n || win[i + 1])) { cross = i; break }
    if (cross == "") print "# rendezvous never won: TERN_SHM_EAGER_MAX=64k"
    else if (cross == 0) print "# rendezvous won from the smallest size: TERN_SHM_EAGER_MAX=" sz[0] - 1
    else printf "# crossover between %d and %d bytes: TERN_SHM_EAGER_MAX=%dk\n", sz[cross - 1], sz[cross], sz[cross - 1] / 1024
}' "$TMP/all"

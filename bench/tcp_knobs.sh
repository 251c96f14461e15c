#!/bin/bash
# tcp_knobs.sh - rotated same-run A/B of tern's tcp settings over loopback.
# Each round runs bench/mpi_pingpong.c (built with terncc) once per variant, the variants
# in turn, so every variant sees the same load; prints, per variant, pattern and size,
# the best t_min over the rounds (us; ping-pong one-way, stream/bibw per message) and its
# ratio to the first variant (> 1: the variant is slower).
# usage: bench/tcp_knobs.sh [BUILD]   (default build)
# env: VARIANTS ("|"-separated lists of VAR=value; "-" is the defaults; default
#      "-|TERN_TCP_SNDBUF=1m TERN_TCP_RCVBUF=1m|TERN_TCP_SNDBUF=16m TERN_TCP_RCVBUF=16m"),
#      SIZES (default 8,1024,1048576,4194304), PATTERNS (pingpong,stream,bibw),
#      ROUNDS (3), TRIALS (3), ITERS (1000), BUDGET (8M).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
VARIANTS=${VARIANTS:-"-|TERN_TCP_SNDBUF=1m TERN_TCP_RCVBUF=1m|TERN_TCP_SNDBUF=16m TERN_TCP_RCVBUF=16m"}
SIZES=${SIZES:-8,1024,1048576,4194304}
PATTERNS=${PATTERNS:-pingpong,stream,bibw}
ROUNDS=${ROUNDS:-3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
"$B/bin/terncc" -O2 -Ibench bench/mpi_pingpong.c -o "$TMP/pp" || exit 1
IFS='|' read -r -a vs <<<"$VARIANTS"
echo "# tcp knobs $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg), $ROUNDS rounds"
for r in $(seq "$ROUNDS"); do
    for i in "${!vs[@]}"; do
        v=${vs[$i]}
        xs=()
        envs=()
        [ "$v" = - ] || for k in $v; do
            xs+=(-x "${k%%=*}")
            envs+=("$k")
        done
        env "${envs[@]}" timeout 300 "$B/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,tcp "${xs[@]}" \
            "$TMP/pp" -s "$SIZES" -t "${TRIALS:-3}" -i "${ITERS:-1000}" -b "${BUDGET:-8M}" \
            --only "$PATTERNS" --csv 2>/dev/null |
            awk -F, -v i="$i" '$5 ~ /^[0-9]+$/ { print i "," $2 "," $5 "," $8 }' >>"$TMP/all.csv"
    done
done
echo "# load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-9s %9s  %-44s %10s %7s\n" pattern bytes variant t_min "x first"
awk -F, -v vs="$VARIANTS" '
    BEGIN { nv = split(vs, name, "|") }
    { k = $2 "," $3; if (!((k, $1) in m) || $4 < m[k, $1]) m[k, $1] = $4; keys[k] = 1 }
    END {
        for (k in keys) {
            split(k, a, ",")
            for (i = 0; i < nv; i++) if ((k, i) in m)
                printf "%-9s %9s  %-44s %10.2f %7.2f\n", a[1], a[2], name[i + 1], m[k, i], m[k, i] / m[k, 0]
        }
    }' "$TMP/all.csv" | sort -k1,1 -k2,2n -s

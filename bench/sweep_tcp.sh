#!/usr/bin/env bash
# sweep_tcp.sh - every size over loopback TCP, same run: 0 B to 64 MiB at 2^k and 2^k+-3
# (NetPIPE style), ping-pong, streaming and bidirectional, bench/mpi_pingpong.c built with
# terncc (tern forced onto tcp: TERN_TRANSPORTS=self,tcp), with mpicc.openmpi (tcp BTL:
# --mca btl tcp,self --mca pml ob1) and with mpicc.mpich (its network path:
# MPIR_CVAR_NOLOCAL=1, and UCX_TLS=tcp,self for a ch4:ucx build, which otherwise takes
# shared memory through UCX). For each pattern it prints tern's time, each MPI's, the
# ratio best-other/tern (> 1: tern ahead), marks the sizes where tern loses, and the
# sizes where doubling the message more than doubles tern's time.
#
# usage: bench/sweep_tcp.sh [BUILD]   (default build; it must hold bin/terncc, bin/ternrun)
# env: PATTERNS (default pingpong,stream,bibw), MAX (default 64M), TRIALS (3),
#      ITERS (1000, per trial for small sizes), BUDGET (16M bytes per trial for large ones),
#      SIZES=LIST (exactly these sizes, e.g. 8,64K, instead of the sweep),
#      BASE_LIB=DIR (also run tern against another build's lib/, e.g. before a change:
#      column "base", and base/tern), LIBS (default tern,ompi,mpich), LOAD=N (start N busy loops beside the runs, killed
#      by pid at the end), TERN_ENV="VAR=value ..." (extra environment for tern's runs).
# Writes bench/results/<stamp>-sweep-tcp.txt (the tables) and .csv (every row).
set -uo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
PATTERNS=${PATTERNS:-pingpong,stream,bibw}
MAX=${MAX:-64M}
TRIALS=${TRIALS:-3}
ITERS=${ITERS:-1000}
BUDGET=${BUDGET:-16M}
LIBS=${LIBS:-tern,ompi,mpich}
LOAD=${LOAD:-0}
. bench/load.sh
TMP=$(mktemp -d)
cleanup() {
    load_stop
    rm -rf "$TMP"
}
trap cleanup EXIT
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p bench/results
stamp=$(date +%Y-%m-%d-%H%M%S)
out=bench/results/$stamp-sweep-tcp
have() { command -v "$1" >/dev/null 2>&1; }

"$B/bin/terncc" -O2 -Ibench bench/mpi_pingpong.c -o "$TMP/pp.tern" || exit 1
have mpicc.openmpi && mpicc.openmpi -std=gnu11 -O2 -Ibench bench/mpi_pingpong.c -o "$TMP/pp.ompi"
have mpicc.mpich && mpicc.mpich -std=gnu11 -O2 -Ibench bench/mpi_pingpong.c -o "$TMP/pp.mpich"

load_start "$LOAD"

SZ=(-m 0 -M "$MAX" -p)
[ -n "${SIZES:-}" ] && SZ=(-s "$SIZES")
ARGS=("${SZ[@]}" -t "$TRIALS" -i "$ITERS" -b "$BUDGET" --only "$PATTERNS" --csv)
run() { # lib, then the command: rows "lib,pattern,...,bytes,...,t_min_us,..." into the csv
    local lib=$1
    shift
    timeout 1800 "$@" "${ARGS[@]}" 2>/dev/null | awk -F, -v l="$lib" '$5 ~ /^[0-9]+$/ { $1 = l; print }' OFS=, \
        >>"$TMP/all.csv"
}
case ",$LIBS," in *,tern,*)
    # shellcheck disable=SC2086
    run tern env ${TERN_ENV:-} "$B/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,tcp "$TMP/pp.tern" ;;
esac
if [ -n "${BASE_LIB:-}" ]; then
    # shellcheck disable=SC2086
    run base env ${TERN_ENV:-} LD_LIBRARY_PATH="$BASE_LIB" "$B/bin/ternrun" -n 2 -x LD_LIBRARY_PATH \
        -x TERN_TRANSPORTS=self,tcp "$TMP/pp.tern"
fi
case ",$LIBS," in *,ompi,*)
    [ -x "$TMP/pp.ompi" ] && run ompi mpirun.openmpi -n 2 --mca btl tcp,self --mca pml ob1 \
        --mca btl_tcp_if_include lo "$TMP/pp.ompi" ;;
esac
case ",$LIBS," in *,mpich,*)
    [ -x "$TMP/pp.mpich" ] && run mpich mpiexec.mpich -n 2 -genv MPIR_CVAR_NOLOCAL 1 \
        -genv UCX_TLS tcp,self "$TMP/pp.mpich" ;;
esac
cp "$TMP/all.csv" "$out.csv"

{
    echo "# tcp sweep $stamp, load $(cut -d' ' -f1-3 /proc/loadavg), busy loops beside: $LOAD"
    echo "# t_min us (ping-pong: one-way; stream/bibw: per message); x = best other / tern (> 1: tern ahead)"
    awk -F, '
        { k = $2 SUBSEP $5; t[$1, k] = $8; if (!($5 in seen)) { seen[$5] = 1; sz[++ns] = $5 }
          pat[$2] = 1 }
        END {
            for (i = 1; i <= ns; i++) for (j = i + 1; j <= ns; j++) if (sz[j] + 0 < sz[i] + 0) { x = sz[i]; sz[i] = sz[j]; sz[j] = x }
            for (p in pat) {
                printf "\n## %s\n%10s %11s %11s %11s %7s %11s %9s\n", p, "bytes", "tern", "ompi", "mpich", "x", "base", "base/tern"
                worst = 1e9; prev = ""
                for (i = 1; i <= ns; i++) {
                    b = sz[i]; k = p SUBSEP b; tt = t["tern", k]; if (tt == "") continue
                    best = ""
                    if (t["ompi", k] != "") best = t["ompi", k]
                    if (t["mpich", k] != "" && (best == "" || t["mpich", k] < best)) best = t["mpich", k]
                    x = best == "" || tt == 0 ? "" : best / tt
                    mark = x != "" && x < 1 ? "  LOSS" : ""
                    if (x != "" && x < worst) { worst = x; wb = b }
                    # doubling check against the power of two below (b = 2^k exactly)
                    if (b > 1 && and(b, b - 1) == 0 && t["tern", p SUBSEP (b / 2)] > 0 &&
                        tt > 2 * t["tern", p SUBSEP (b / 2)] * 1.05) mark = mark "  >2x from " b / 2
                    printf "%10d %11.3f %11s %11s %7s %11s %9s%s\n", b, tt,
                        t["ompi", k] == "" ? "n/a" : sprintf("%.3f", t["ompi", k]),
                        t["mpich", k] == "" ? "n/a" : sprintf("%.3f", t["mpich", k]),
                        x == "" ? "n/a" : sprintf("%.2f", x),
                        t["base", k] == "" ? "-" : sprintf("%.3f", t["base", k]),
                        t["base", k] == "" ? "-" : sprintf("%.2f", t["base", k] / tt), mark
                }
                if (worst < 1e9) printf "worst ratio %s: %.2f at %d B\n", p, worst, wb
            }
        }' "$out.csv"
} | tee "$out.txt"
echo "written to $out.txt and $out.csv"

#!/bin/bash
# shm_midload.sh - MPI ping-pong and streaming over shared memory at a few sizes, tern
# (one or more builds) against Open MPI 4.1 and MPICH 4, interleaved in one run, with
# LOAD busy processes beside the benchmark (a loaded machine) or none.
#
# usage: bench/shm_midload.sh [BUILD_DIR[@VAR=VALUE,...]...]   (default <repo>/build; each
#        needs bin/terncc; @... runs that tern with those environment variables, so one
#        build can be compared with itself under other tunables)
# environment:
#   LOAD=N      busy loops running beside every launch (default 0; the sweep's --load N)
#   ROUNDS=R    launches per library (default 5); the order of the libraries rotates
#   SIZES=LIST  message sizes (default 512 B-16 KiB at 2^k and 2^k+-3, plus 8 B, 1 MiB, 16 MiB)
#   LIBS=LIST   of ompi4,mpich4 (default both; those not installed are skipped)
#   TRIALS=T    trials per size in one launch (default 5); a launch reports its best
#   SECONDS_PER=S  each trial's iterations fitted to about S seconds (default 0.02)
#
# Prints, per pattern and size, the median over rounds of each launch's best trial (one-way
# us per message for ping-pong, us per message for a stream), the best over rounds in
# brackets, and every other library's median divided by the first tern build's (above 1:
# tern is faster). The load average before and after is printed too: below ~3 on this
# 2-core machine counts as quiet. Timing never makes the script fail.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LOAD=${LOAD:-0}
ROUNDS=${ROUNDS:-5}
TRIALS=${TRIALS:-5}
SECONDS_PER=${SECONDS_PER:-0.02}
LIBS=${LIBS:-ompi4,mpich4}
if [ -z "${SIZES:-}" ]; then
    SIZES=8
    for k in 9 10 11 12 13 14; do
        s=$((1 << k))
        SIZES+=",$((s - 3)),$s,$((s + 3))"
    done
    SIZES+=",16384,1048576,16777216"
fi
[ $# -gt 0 ] || set -- "$ROOT/build"

. "$ROOT/bench/load.sh"
TMP=$(mktemp -d)
cleanup() {
    load_stop
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

names=() cmds=()
i=0
for arg in "$@"; do
    b=${arg%%@*}
    tenv=""
    [ "$b" = "$arg" ] || tenv=${arg#*@}
    if [ ! -x "$b/bin/terncc" ]; then
        echo "shm_midload.sh: $b/bin/terncc missing (build that tree first)" >&2
        exit 1
    fi
    i=$((i + 1))
    "$b/bin/terncc" -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$TMP/tern$i" || exit 1
    names+=("tern$i")
    cmds+=("env TERN_TRANSPORTS=self,shm ${tenv//,/ } $b/bin/ternrun -n 2 $TMP/tern$i")
    echo "# tern$i = $b ($(git -C "$b/.." rev-parse --short HEAD 2>/dev/null)) $tenv"
done
if [[ ,$LIBS, == *,ompi4,* ]] && command -v mpicc.openmpi >/dev/null; then
    mpicc.openmpi -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$TMP/ompi4" && {
        names+=(ompi4)
        cmds+=("env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun.openmpi \
--oversubscribe --mca pml ob1 --mca btl vader,self -n 2 $TMP/ompi4")
    }
fi
if [[ ,$LIBS, == *,mpich4,* ]] && command -v mpicc.mpich >/dev/null; then
    mpicc.mpich -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$TMP/mpich4" && {
        names+=(mpich4)
        cmds+=("mpiexec.mpich -n 2 $TMP/mpich4")
    }
fi

load_start "$LOAD"
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); busy loops beside: $LOAD"
n=${#names[@]}
for r in $(seq 0 $((ROUNDS - 1))); do
    for j in $(seq 0 $((n - 1))); do
        k=$(((j + r) % n))
        # shellcheck disable=SC2086
        timeout 600 ${cmds[$k]} --sizes "$SIZES" -t "$TRIALS" -T "$SECONDS_PER" --csv 2>/dev/null |
            awk -F, -v lib="${names[$k]}" '$2=="pingpong"||$2=="stream"{print lib","$2","$5","$8}' \
                >>"$TMP/all"
    done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds"

awk -F, -v libs="${names[*]}" '
function med(key,   m, a, i, j, t) {
    m = cnt[key]; for (i = 1; i <= m; i++) a[i] = v[key, i]
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
{ key = $1 SUBSEP $2 SUBSEP $3; v[key, ++cnt[key]] = $4
  if (!(key in best) || $4 < best[key]) best[key] = $4
  if (!(($2 SUBSEP $3) in seen)) { seen[$2 SUBSEP $3] = 1; order[++no] = $2 SUBSEP $3 } }
END {
    nl = split(libs, L, " ")
    for (p = 1; p <= 2; p++) {
        pat = p == 1 ? "pingpong" : "stream"
        printf "\n%s (us, median of rounds [best])\n%9s", pat, "bytes"
        for (i = 1; i <= nl; i++) printf " %18s", L[i]
        for (i = 2; i <= nl; i++) printf " %8s", L[i] "/" L[1]
        printf "\n"
        for (o = 1; o <= no; o++) {
            split(order[o], ps, SUBSEP); if (ps[1] != pat) continue
            printf "%9d", ps[2]
            for (i = 1; i <= nl; i++) {
                key = L[i] SUBSEP pat SUBSEP ps[2]
                if (cnt[key]) { m[i] = med(key); printf " %9.3f [%6.3f]", m[i], best[key] } else { m[i] = 0; printf " %18s", "-" }
            }
            for (i = 2; i <= nl; i++) printf " %8.2f", (m[1] > 0 ? m[i] / m[1] : 0)
            printf "\n"
        }
    }
}' "$TMP/all"

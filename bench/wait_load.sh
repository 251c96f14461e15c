#!/bin/bash
# wait_load.sh - what a blocked call's wait policy costs, with and without busy loops
# beside the job: MPI ping-pong (and optionally streams) over shm and/or tcp, one or more
# tern builds or tunable settings against Open MPI 4.1 and MPICH 4, interleaved in one run.
#
# usage: bench/wait_load.sh [BUILD_DIR[@VAR=VALUE,...]...]   (default <repo>/build; each
#        needs bin/terncc; @... runs that tern with those environment variables, so one
#        build can be compared with itself under other wait tunables)
# environment:
#   TRS=LIST     transports (default "shm tcp"); tcp: tern TERN_TRANSPORTS=self,tcp, Open MPI
#                --mca btl tcp,self, MPICH MPIR_CVAR_NOLOCAL=1 UCX_TLS=tcp,self (as ternbench)
#   LOADS=LIST   busy loops beside the runs, one block each per round (default "2 0")
#   ROUNDS=R     rounds (default 3); in each, every load block runs every library, the
#                order of the libraries rotating from round to round
#   SIZES=LIST   message sizes (default 8,2048,65536,1048576)
#   ONLY=LIST    patterns of mpi_pingpong --only (default pingpong)
#   LIBS=LIST    of ompi4,mpich4 (default both; those not installed are skipped)
#   TRIALS=T     trials per size in one launch (default 5); a launch reports its best
#   SECONDS_PER=S  each trial's iterations fitted to about S seconds (default 0.02)
#   RAW=FILE     also keep every launch's rows (lib,setting,bytes,us) in FILE
#
# Prints, per transport, load, pattern and size, the median over rounds of each launch's
# best trial (one-way us for ping-pong, us per message for streams) and every other
# column's median divided by the first tern's (above 1: that tern is faster), with the
# load average before and after. Timing never makes the script fail.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TRS=${TRS:-shm tcp}
LOADS=${LOADS:-2 0}
ROUNDS=${ROUNDS:-3}
TRIALS=${TRIALS:-5}
SECONDS_PER=${SECONDS_PER:-0.02}
SIZES=${SIZES:-8,2048,65536,1048576}
ONLY=${ONLY:-pingpong}
LIBS=${LIBS:-ompi4,mpich4}
[ $# -gt 0 ] || set -- "$ROOT/build"
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

. "$ROOT/bench/load.sh"
TMP=$(mktemp -d)
cleanup() {
    load_stop
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# names[i] and a command per transport: shmcmd[i], tcpcmd[i]
names=() shmcmd=() tcpcmd=()
i=0
for arg in "$@"; do
    b=${arg%%@*}
    tenv=""
    [ "$b" = "$arg" ] || tenv=${arg#*@}
    if [ ! -x "$b/bin/terncc" ]; then
        echo "wait_load.sh: $b/bin/terncc missing (build that tree first)" >&2
        exit 1
    fi
    i=$((i + 1))
    "$b/bin/terncc" -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$TMP/tern$i" || exit 1
    names+=("tern$i")
    shmcmd+=("env TERN_TRANSPORTS=self,shm ${tenv//,/ } $b/bin/ternrun -n 2 $TMP/tern$i")
    tcpcmd+=("env TERN_TRANSPORTS=self,tcp ${tenv//,/ } $b/bin/ternrun -n 2 $TMP/tern$i")
    echo "# tern$i = $b ($(git -C "$b/.." rev-parse --short HEAD 2>/dev/null)) $tenv"
done
if [[ ,$LIBS, == *,ompi4,* ]] && command -v mpicc.openmpi >/dev/null; then
    mpicc.openmpi -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$TMP/ompi4" && {
        names+=(ompi4)
        o="mpirun.openmpi --oversubscribe --mca pml ob1 -n 2"
        shmcmd+=("$o --mca btl vader,self $TMP/ompi4")
        tcpcmd+=("$o --mca btl tcp,self --mca btl_tcp_if_include lo $TMP/ompi4")
    }
fi
if [[ ,$LIBS, == *,mpich4,* ]] && command -v mpicc.mpich >/dev/null; then
    mpicc.mpich -O2 -I "$ROOT/bench" "$ROOT/bench/mpi_pingpong.c" -o "$TMP/mpich4" && {
        names+=(mpich4)
        shmcmd+=("mpiexec.mpich -n 2 $TMP/mpich4")
        tcpcmd+=("mpiexec.mpich -n 2 -genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self $TMP/mpich4")
    }
fi

echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; loads: $LOADS"
n=${#names[@]}
for r in $(seq 0 $((ROUNDS - 1))); do
    for ld in $LOADS; do
        load_start "$ld"
        for tr in $TRS; do
            for j in $(seq 0 $((n - 1))); do
                k=$(((j + r) % n))
                if [ "$tr" = tcp ]; then c=${tcpcmd[$k]}; else c=${shmcmd[$k]}; fi
                # shellcheck disable=SC2086
                timeout 300 $c --sizes "$SIZES" --only "$ONLY" -t "$TRIALS" -T "$SECONDS_PER" \
                    --csv 2>/dev/null |
                    awk -F, -v lib="${names[$k]}" -v tr="$tr" -v ld="$ld" \
                        '$2=="pingpong"||$2=="stream"||$2=="bibw"{print lib","tr" load "ld" "$2","$5","$8}' \
                        >>"$TMP/all"
            done
        done
        load_stop
    done
done
echo "# load average after: $(cut -d' ' -f1-3 /proc/loadavg); $ROUNDS rounds"
[ -z "${RAW:-}" ] || cp "$TMP/all" "$RAW"

awk -F, -v libs="${names[*]}" '
function med(key,   m, a, i, j, t) {
    m = cnt[key]; for (i = 1; i <= m; i++) a[i] = v[key, i]
    for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
    return m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
}
{ key = $1 SUBSEP $2 SUBSEP $3; v[key, ++cnt[key]] = $4
  if (!($2 in sseen)) { sseen[$2] = 1; sorder[++ns] = $2 }
  if (!(($2 SUBSEP $3) in seen)) { seen[$2 SUBSEP $3] = 1; order[++no] = $2 SUBSEP $3 } }
END {
    nl = split(libs, L, " ")
    for (s = 1; s <= ns; s++) {
        printf "\n%s (us, median of rounds)\n%9s", sorder[s], "bytes"
        for (i = 1; i <= nl; i++) printf " %9s", L[i]
        for (i = 2; i <= nl; i++) printf " %8s", L[i] "/" L[1]
        printf "\n"
        for (o = 1; o <= no; o++) {
            split(order[o], ps, SUBSEP); if (ps[1] != sorder[s]) continue
            printf "%9d", ps[2]
            for (i = 1; i <= nl; i++) {
                key = L[i] SUBSEP ps[1] SUBSEP ps[2]
                if (cnt[key]) { m[i] = med(key); printf " %9.3f", m[i] } else { m[i] = 0; printf " %9s", "-" }
            }
            for (i = 2; i <= nl; i++) printf " %8.2f", (m[1] > 0 ? m[i] / m[1] : 0)
            printf "\n"
        }
    }
}' "$TMP/all"

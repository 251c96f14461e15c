#!/bin/sh
# bench/advice.sh - is `ternbench advise` right? For each program of examples/advice:
# trace its "before" form (ternrun --trace DIR), ask `ternbench advise` what the advised
# change would save, then time the before and after forms without tracing and print the
# predicted saving next to the measured one. The models are fitted at the process count
# the programs run with (collectives at NP, and ping-pong/stream with NP processes
# started: `ternbench run --np NP --p2p-np NP`), so a cost of running NP ranks on this
# machine (oversubscription) is in both sides of the prediction. The forms are timed
# interleaved (before, after, before, ...) and the fastest of TRIALS runs counts: on a
# shared machine the load only ever adds time, and the minimum is the figure it disturbs
# least; the spread (median minus minimum, the larger of the two forms) is printed so
# that a saving smaller than it can be seen as not measured.
#
#   bench/advice.sh                       # build (build/), fit models (a quick ternbench run), go
#   MODELS=DIR/models.json bench/advice.sh   # use models fitted before (ternbench report)
#
# Environment: BUILD_DIR (default build), NP (ranks, default 3), TRIALS (timed runs of
# each form, interleaved; the fastest counts, default 7), ITERS (default 1000), COMPUTE_US
# (computation between iterations, default 50), PROGRAMS (default "gather_bcast
# reduce_bcast sendloop smallmsgs overlap"), WORK (kept directory for traces, advice and
# models; default a temporary one). Timings on a shared machine are loaded numbers: the
# ratio predicted/measured within one run is what to read.
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build}
NP=${NP:-3}
TRIALS=${TRIALS:-7}
ITERS=${ITERS:-1000}
COMPUTE_US=${COMPUTE_US:-50}
PROGRAMS=${PROGRAMS:-"gather_bcast reduce_bcast sendloop smallmsgs overlap"}
PY=${PYTHON:-/usr/bin/python3}
[ -x "$PY" ] || PY=python3

[ -f "$BUILD_DIR/CMakeCache.txt" ] ||
    cmake -S "$ROOT" -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
# ternbench's drivers only when the models are to be fitted here
cmake --build "$BUILD_DIR" --target ternrun advice_gather_bcast advice_sendloop \
    advice_smallmsgs advice_overlap advice_reduce_bcast $([ -n "${MODELS:-}" ] || echo ternbench) >/dev/null

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
    reduce_bcast) echo "collective Allreduce" ;;
    sendloop) echo "alltoallv Alltoallv" ;;
    smallmsgs) echo "batching small" ;;
    overlap) echo "overlap blocking" ;;
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
        echo "# fitting this machine's models: ternbench run --quick --np $NP --p2p-np $NP --with tern-mpi (a few minutes)"
        # collectives at the sizes the programs use (64 B, 4 KiB, the broadcast of p
        # gathered 4 KiB blocks: 8 and 12 KiB, 64 KiB) and around them; tern's MPI drivers
        # too (tern-mpi): advise prices a trace of MPI calls with them
        $TB --tern-prefix "$BUILD_DIR" run --quick --np "$NP" --p2p-np "$NP" \
            --with tern-mpi --coll-sizes 8,64,1K,4K,8K,12K,16K,64K,128K --out "$WORK/models" \
            >"$WORK/models.log" 2>&1
        # the fastest trial of each point, as the timings below take the fastest run
        $TB report --out "$WORK/models" --stat min --no-plots >>"$WORK/models.log" 2>&1
        MODELS=$WORK/models/models.json
    fi
    echo "# models: $MODELS"
fi

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
minimum() { sort -g | head -n 1; }
seconds() { sed -n 's/^RESULT .* seconds=\([0-9.]*\).*/\1/p'; }

printf "\n%-13s %-34s %4s %10s %10s %10s %10s %10s %8s %7s\n" program advice rank before_s \
    after_s measured_s spread_s predicted_s pred/meas error
for prog in $PROGRAMS; do
    exe=$BUILD_DIR/bin/advice_$prog
    args="-i $ITERS -c $COMPUTE_US"
    set -- $(expect "$prog")
    kind=$1 word=$2
    pred="n/a" arank="-" title="(no trace)"
    if [ "$tracing" = 1 ]; then
        rm -rf "$WORK/trace-$prog"
        # shellcheck disable=SC2086
        # every entry stamped when it happened (TERN_TRACE_ADJACENT_NS=0): a send after
        # computation would otherwise count that computation in it (docs/TRACING.md), and
        # the phases before and after it would look joined
        TERN_TRACE_ADJACENT_NS=0 "$TERNRUN" -n "$NP" --trace "$WORK/trace-$prog" "$exe" --before $args \
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
# every item of the advised kind (one per occurrence group): their savings add up
hits = [a for a in j["advice"] + j.get("rejected", [])
        if a["kind"] == sys.argv[2] and sys.argv[3] in a["title"]]
if not hits:
    print("n/a - (not advised)")
else:
    ranks = [a["rank"] for a in hits if a["rank"]]
    print("%.6f %s %s" % (sum(a["saving"] for a in hits), min(ranks) if ranks else "no",
                          hits[0]["title"].replace(" ", "_")))
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
    tb=$(minimum <"$WORK/$prog.before")
    ta=$(minimum <"$WORK/$prog.after")
    mb=$(median <"$WORK/$prog.before")
    ma=$(median <"$WORK/$prog.after")
    awk -v p="$prog" -v t="$title" -v r="$arank" -v b="$tb" -v a="$ta" -v pr="$pred" \
        -v mb="$mb" -v ma="$ma" 'BEGIN {
        m = b - a
        sp = mb - b; if (ma - a > sp) sp = ma - a
        ratio = (pr != "n/a" && m != 0) ? sprintf("%.2f", pr / m) : "n/a"
        err = (pr != "n/a" && m != 0) ? sprintf("%+.0f%%", 100 * (pr - m) / m) : "n/a"
        printf "%-13s %-34s %4s %10.5f %10.5f %10.5f %10.5f %10s %8s %7s\n", p, substr(t, 1, 34), r, b, a, m, sp, pr, ratio, err }'
done
echo
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# before_s/after_s: fastest of $TRIALS interleaved runs (the slowest rank's loop time);"
echo "# measured_s = before - after; spread_s: median minus fastest, the larger of the two forms"
echo "# (a measured saving below it is noise); predicted_s: ternbench advise's saving for the"
echo "# traced before run; error = (predicted - measured) / measured;"
echo "# rank: the advice's place in advise's list (1 = largest predicted saving; no: considered"
echo "# and rejected, the models predict no saving)."
[ "$tracing" = 1 ] && echo "# advice and traces: $WORK (kept when WORK is set)"
exit 0

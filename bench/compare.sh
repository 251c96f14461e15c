#!/usr/bin/env bash
# bench/compare.sh - tern against Open MPI and MPICH on this machine, in one run.
#
# Builds what it needs (tern benchmarks with CMake in a Release build dir, the MPI
# twins with each MPI's own mpicc), runs the same benchmark patterns on every
# library that is installed, times job startup with hyperfine, prints a table with
# ratios and writes everything to bench/results/<date>-<host>.txt (plus the raw
# CSV and hyperfine JSON next to it). A library that is missing or fails is named
# in the output and its cells read n/a; the script still runs everything else.
#
# Timing never makes this script fail: it reports numbers, not verdicts.
#
# usage: bench/compare.sh [--quick] [--perturb] [--pin] [--no-build] [-h]
#   --quick     fewer trials and smaller per-trial budgets (a smoke test, noisier)
#   --perturb   also measure sizes 2^k +- 3 in the ping-pong runs
#   --pin       bind rank r of every library to core r mod ncpu (Open MPI and MPICH
#               with their own --bind-to/-bind-to core, tern with taskset), so
#               placement by the scheduler is out of the comparison; the default
#               is each launcher as it comes (Open MPI binds, MPICH and ternrun don't)
#   --no-build  use the binaries already in the build dir
# environment:
#   BUILD_DIR   tern build dir (default <repo>/build-bench, configured Release)
#   RUN_TIMEOUT seconds allowed per benchmark run (default 600)
#   MPICH_RING_TIMEOUT seconds for MPICH's oversubscribed ring (default 120)
#   SKIP_LIBS   libraries to leave out, e.g. "mpich" or "tern,openmpi"

set -u
export LC_ALL=C

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD_DIR=${BUILD_DIR:-$ROOT/build-bench}
RUN_TIMEOUT=${RUN_TIMEOUT:-600}
MPICH_RING_TIMEOUT=${MPICH_RING_TIMEOUT:-120}
SKIP_LIBS=${SKIP_LIBS:-}
QUICK=0
PERTURB=0
PIN=0
DO_BUILD=1

for arg in "$@"; do
    case $arg in
    --quick) QUICK=1 ;;
    --perturb) PERTURB=1 ;;
    --pin) PIN=1 ;;
    --no-build) DO_BUILD=0 ;;
    -h | --help)
        sed -n '2,/^$/s/^# \{0,1\}//p' "$0"
        exit 0
        ;;
    *)
        echo "compare.sh: unknown argument '$arg' (try --help)" >&2
        exit 2
        ;;
    esac
done

HOST=$(hostname -s 2>/dev/null || hostname)
STAMP=$(date +%Y-%m-%d-%H%M%S)
RESULTS_DIR=$ROOT/bench/results
RESULT=$RESULTS_DIR/$STAMP-$HOST.txt
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-compare.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$RESULTS_DIR"
BENCH_BIN=$BUILD_DIR/bench
MPI_BIN=$BUILD_DIR/bench-mpi
mkdir -p "$MPI_BIN"
ALL_CSV=$WORK/all.csv
STATUS=$WORK/status.txt
: >"$ALL_CSV"
: >"$STATUS"

# Benchmark parameters, identical for every library.
if [ "$QUICK" = 1 ]; then
    PP_ARGS=(-t 3 -b 64M -i 5000)
    RING_ARGS=(-t 3 -T 0.3)
    HF_RUNS=(--min-runs 5)
    ROUNDS=2
    CL_ARGS=(-t 3 -i 50000 -b 256M)
else
    PP_ARGS=(-t 5)
    RING_ARGS=(-t 5 -T 1.0)
    HF_RUNS=(--min-runs 20)
    ROUNDS=5
    CL_ARGS=(-t 5)
fi
[ "$PERTURB" = 1 ] && PP_ARGS+=(-p)

say() { printf '%s\n' "$*" | tee -a "$WORK/log.txt"; }
note() { say "  $*"; printf '%s\n' "$*" >>"$STATUS"; }

# Open MPI refuses to run as root without these; harmless otherwise.
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
# Open MPI's shared-memory path (vader), as its users get it on one node.
OMPI_RUN=(mpirun.openmpi --mca btl self,vader)
MPICH_RUN=(mpiexec.mpich)
# ternrun has no binding option: with --pin each rank binds itself before exec.
TERN_PIN=()
if [ "$PIN" = 1 ]; then
    OMPI_RUN+=(--bind-to core:overload-allowed)
    MPICH_RUN+=(-bind-to core)
    TERN_PIN=(sh -c 'exec taskset -c $((TERN_LOCAL_RANK % $(nproc))) "$@"' tern-pin)
fi

# Other work on the machine distorts every number; record it so a noisy run shows.
busy_report() {
    printf 'load average %s; busiest other processes (%%cpu pid command):' \
        "$(cut -d' ' -f1-3 /proc/loadavg)"
    ps -eo pcpu=,pid=,comm= --sort=-pcpu 2>/dev/null |
        awk -v me=$$ '$2 != me && $1 + 0 >= 5 {printf " %s%% %s %s;", $1, $2, $3; if (++n == 3) exit}
                      END {if (!n) printf " none above 5%%"}'
    echo
}
LOAD_BEFORE=$(busy_report)

# ---- 1. build ---------------------------------------------------------------------

say "== tern compare: $STAMP on $HOST =="
say "-- build (log: kept in the results file on failure)"
HAVE_TERN=0
HAVE_RAW=0
if [ "$DO_BUILD" = 1 ]; then
    gen=()
    [ ! -f "$BUILD_DIR/CMakeCache.txt" ] && command -v ninja >/dev/null && gen=(-G Ninja)
    # Configure every time (cheap), so a configure that failed earlier is retried.
    cmake -S "$ROOT" -B "$BUILD_DIR" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DTERN_SANITIZE= -DBUILD_TESTING=OFF >"$WORK/build.log" 2>&1 ||
        note "cmake configure failed (tail of log below)"
    # One target at a time, so a library that does not build yet still leaves
    # the raw benchmark and the MPI side to measure.
    for t in cacheline_pingpong tern ternrun tern_pingpong tern_ring tern_initfini; do
        if ! cmake --build "$BUILD_DIR" --target "$t" >>"$WORK/build.log" 2>&1; then
            note "build of target '$t' failed"
        fi
    done
fi
# The raw floor does not need CMake at all.
if [ ! -x "$BENCH_BIN/cacheline_pingpong" ]; then
    mkdir -p "$BENCH_BIN"
    ${CC:-cc} -std=gnu11 -O2 -o "$BENCH_BIN/cacheline_pingpong" "$ROOT/bench/cacheline_pingpong.c" \
        >>"$WORK/build.log" 2>&1 || note "cacheline_pingpong does not compile"
fi
[ -x "$BENCH_BIN/cacheline_pingpong" ] && HAVE_RAW=1
TERNRUN=$BUILD_DIR/bin/ternrun
if [[ " ${SKIP_LIBS//,/ } " == *" tern "* ]]; then
    note "tern: skipped (SKIP_LIBS) - its columns read n/a"
elif [ -x "$TERNRUN" ] && [ -x "$BENCH_BIN/tern_pingpong" ] && [ -x "$BENCH_BIN/tern_ring" ] &&
    [ -x "$BENCH_BIN/tern_initfini" ]; then
    HAVE_TERN=1
else
    note "tern: ternrun or the tern benchmarks are not built; tern columns will read n/a"
fi

declare -A HAVE_MPI MPI_VERSION
for m in openmpi mpich; do
    HAVE_MPI[$m]=0
    case $m in
    openmpi) runner=mpirun.openmpi ;;
    mpich) runner=mpiexec.mpich ;;
    esac
    if [[ " ${SKIP_LIBS//,/ } " == *" $m "* ]]; then
        note "$m: skipped (SKIP_LIBS) - its columns read n/a"
        continue
    fi
    if ! command -v "mpicc.$m" >/dev/null || ! command -v "$runner" >/dev/null; then
        note "$m: not installed (mpicc.$m / $runner not found) - its columns read n/a"
        continue
    fi
    ok=1
    for p in mpi_pingpong mpi_ring mpi_initfini; do
        if [ "$DO_BUILD" = 1 ] || [ ! -x "$MPI_BIN/$p.$m" ]; then
            "mpicc.$m" -std=gnu11 -O2 -o "$MPI_BIN/$p.$m" "$ROOT/bench/$p.c" \
                >>"$WORK/build.log" 2>&1 || {
                note "$m: $p.c does not compile with mpicc.$m"
                ok=0
            }
        fi
    done
    HAVE_MPI[$m]=$ok
done
[ "${HAVE_MPI[openmpi]}" = 1 ] && MPI_VERSION[openmpi]=$(mpirun.openmpi --version 2>/dev/null | head -1)
[ "${HAVE_MPI[mpich]}" = 1 ] &&
    MPI_VERSION[mpich]=$(mpiexec.mpich --version 2>/dev/null | awk '/Version:/{print "MPICH (Hydra) " $2; exit}')

# ---- 2. run -------------------------------------------------------------------------

# run_csv NAME TIMEOUT CMD...: run one benchmark, keep its CSV rows, record the outcome.
# CSV_OUT (default all.csv) and RENAME_LIB (new value of the lib column) may be set.
run_csv() {
    local name=$1 limit=$2
    shift 2
    local t0 t1 rc
    t0=$(date +%s.%N)
    timeout -k 10 "$limit" "$@" >"$WORK/$name.out" 2>"$WORK/$name.err"
    rc=$?
    t1=$(date +%s.%N)
    grep -v '^lib,' "$WORK/$name.out" | grep ',' |
        if [ -n "${RENAME_LIB:-}" ]; then sed "s/^[^,]*,/$RENAME_LIB,/"; else cat; fi \
            >>"${CSV_OUT:-$ALL_CSV}"
    local dt
    dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
    if [ "$rc" = 0 ]; then
        say "  $name: ok (${dt} s)"
    elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        note "$name: TIMED OUT after ${limit} s (rows finished before that are kept)"
    else
        note "$name: FAILED, exit code $rc, after ${dt} s; stderr tail:"
        tail -n 5 "$WORK/$name.err" | sed 's/^/      /' | tee -a "$STATUS"
    fi
}

say "-- benchmarks"
if [ "$HAVE_RAW" = 1 ]; then
    run_csv raw-cacheline "$RUN_TIMEOUT" "$BENCH_BIN/cacheline_pingpong" --csv "${CL_ARGS[@]}"
fi
if [ "$HAVE_TERN" = 1 ]; then
    run_csv tern-pingpong "$RUN_TIMEOUT" "$TERNRUN" -n 2 "${TERN_PIN[@]}" "$BENCH_BIN/tern_pingpong" --csv \
        --label tern "${PP_ARGS[@]}"
    run_csv tern-pingpong-sync "$RUN_TIMEOUT" "$TERNRUN" -n 2 "${TERN_PIN[@]}" "$BENCH_BIN/tern_pingpong" --csv \
        --label tern --sync "${PP_ARGS[@]}"
    run_csv tern-ring4 "$RUN_TIMEOUT" "$TERNRUN" -n 4 "${TERN_PIN[@]}" "$BENCH_BIN/tern_ring" --csv --label tern \
        "${RING_ARGS[@]}"
fi
if [ "${HAVE_MPI[openmpi]}" = 1 ]; then
    run_csv openmpi-pingpong "$RUN_TIMEOUT" "${OMPI_RUN[@]}" -n 2 "$MPI_BIN/mpi_pingpong.openmpi" \
        --csv --label openmpi "${PP_ARGS[@]}"
    run_csv openmpi-pingpong-sync "$RUN_TIMEOUT" "${OMPI_RUN[@]}" -n 2 \
        "$MPI_BIN/mpi_pingpong.openmpi" --csv --label openmpi --sync "${PP_ARGS[@]}"
    run_csv openmpi-ring4 "$RUN_TIMEOUT" "${OMPI_RUN[@]}" -n 4 --oversubscribe \
        "$MPI_BIN/mpi_ring.openmpi" --csv --label openmpi "${RING_ARGS[@]}"
fi
if [ "${HAVE_MPI[mpich]}" = 1 ]; then
    run_csv mpich-pingpong "$RUN_TIMEOUT" "${MPICH_RUN[@]}" -n 2 "$MPI_BIN/mpi_pingpong.mpich" \
        --csv --label mpich "${PP_ARGS[@]}"
    run_csv mpich-pingpong-sync "$RUN_TIMEOUT" "${MPICH_RUN[@]}" -n 2 "$MPI_BIN/mpi_pingpong.mpich" \
        --csv --label mpich --sync "${PP_ARGS[@]}"
    # MPICH busy-polls, so 4 ranks on 2 cores cost a scheduler slice per hop; the
    # ring's own time limit per trial (-T) and this timeout bound the run.
    run_csv mpich-ring4 "$MPICH_RING_TIMEOUT" "${MPICH_RUN[@]}" -n 4 "$MPI_BIN/mpi_ring.mpich" \
        --csv --label mpich "${RING_ARGS[@]}"
fi

# The floor measured again at the end: on a VM the host may move the vCPUs between
# runs, which changes every latency; a large drift here says so.
if [ "$HAVE_RAW" = 1 ]; then
    RENAME_LIB=raw-end run_csv raw-cacheline-end "$RUN_TIMEOUT" "$BENCH_BIN/cacheline_pingpong" \
        --csv --only cacheline "${CL_ARGS[@]}"
fi

# On a VM the host moves vCPUs around, and the distance between the two cores
# (same core's SMT sibling, same L3, other L3) changes latency and bandwidth by
# several times between minutes. So the key numbers are also measured in
# interleaved rounds (raw, tern, openmpi, mpich, raw, tern, ...): every library sees
# the same conditions, and the spread over rounds shows how stable they were.
say "-- interleaved rounds ($ROUNDS rounds: 8 B latency, ping-pong bandwidth 1-64 MiB, memcpy, ring)"
ROUNDS_CSV=$WORK/rounds.csv
: >"$ROUNDS_CSV"
ROUND_ARGS=(--csv --only pingpong --sizes 8,1M,4M,16M,64M -t 3)
ROUND_RING_ARGS=(--csv -t 3 -T 0.3)
for round in $(seq 1 "$ROUNDS"); do
    export CSV_OUT=$ROUNDS_CSV
    [ "$HAVE_RAW" = 1 ] && run_csv "round$round-raw" 60 "$BENCH_BIN/cacheline_pingpong" --csv \
        -t 3 -i 50000 -b 256M
    [ "$HAVE_TERN" = 1 ] && run_csv "round$round-tern" 120 "$TERNRUN" -n 2 \
        "${TERN_PIN[@]}" "$BENCH_BIN/tern_pingpong" --label tern "${ROUND_ARGS[@]}"
    [ "${HAVE_MPI[openmpi]}" = 1 ] && run_csv "round$round-openmpi" 120 "${OMPI_RUN[@]}" -n 2 \
        "$MPI_BIN/mpi_pingpong.openmpi" --label openmpi "${ROUND_ARGS[@]}"
    [ "${HAVE_MPI[mpich]}" = 1 ] && run_csv "round$round-mpich" 120 "${MPICH_RUN[@]}" -n 2 \
        "$MPI_BIN/mpi_pingpong.mpich" --label mpich "${ROUND_ARGS[@]}"
    [ "$HAVE_TERN" = 1 ] && run_csv "round$round-tern-ring4" 60 "$TERNRUN" -n 4 \
        "${TERN_PIN[@]}" "$BENCH_BIN/tern_ring" --label tern "${ROUND_RING_ARGS[@]}"
    [ "${HAVE_MPI[openmpi]}" = 1 ] && run_csv "round$round-openmpi-ring4" 60 "${OMPI_RUN[@]}" \
        -n 4 --oversubscribe "$MPI_BIN/mpi_ring.openmpi" --label openmpi "${ROUND_RING_ARGS[@]}"
    [ "${HAVE_MPI[mpich]}" = 1 ] && run_csv "round$round-mpich-ring4" 60 "${MPICH_RUN[@]}" -n 4 \
        "$MPI_BIN/mpi_ring.mpich" --label mpich "${ROUND_RING_ARGS[@]}"
    unset CSV_OUT
done

# ---- 3. startup ---------------------------------------------------------------------

say "-- startup (hyperfine: init + finalize, 2 ranks)"
STARTUP_CSV=$WORK/startup.csv
: >"$STARTUP_CSV"
hf_cmds=()
add_startup() { # NAME CMD...: added only if one run of it succeeds
    local name=$1
    shift
    if timeout -k 5 60 "$@" >"$WORK/startup-$name.out" 2>&1; then
        hf_cmds+=(-n "$name" "$*")
    else
        note "startup $name: '$*' failed, not timed; output tail:"
        tail -n 5 "$WORK/startup-$name.out" | sed 's/^/      /' | tee -a "$STATUS"
    fi
}
[ "$HAVE_TERN" = 1 ] && add_startup tern "$TERNRUN" -n 2 "$BENCH_BIN/tern_initfini"
[ "${HAVE_MPI[openmpi]}" = 1 ] && add_startup openmpi "${OMPI_RUN[@]}" -n 2 \
    "$MPI_BIN/mpi_initfini.openmpi"
[ "${HAVE_MPI[mpich]}" = 1 ] && add_startup mpich "${MPICH_RUN[@]}" -n 2 "$MPI_BIN/mpi_initfini.mpich"
HF_JSON=$RESULTS_DIR/$STAMP-$HOST-startup.json
if [ ${#hf_cmds[@]} -eq 0 ]; then
    note "startup: nothing to time"
elif ! command -v hyperfine >/dev/null; then
    note "startup: hyperfine not installed, startup not timed"
else
    if hyperfine -N --warmup 3 "${HF_RUNS[@]}" --style basic --export-json "$HF_JSON" \
        --export-csv "$WORK/hyperfine.csv" "${hf_cmds[@]}" >"$WORK/hyperfine.txt" 2>&1; then
        say "  hyperfine: ok (JSON: ${HF_JSON#"$ROOT"/})"
        # command,mean,stddev,median,user,system,min,max (seconds) -> name,mean_ms,sd_ms
        awk -F, 'NR>1{printf "%s,%.3f,%.3f,%.3f\n", $1, $2*1e3, $3*1e3, $7*1e3}' \
            "$WORK/hyperfine.csv" >"$STARTUP_CSV"
    else
        note "startup: hyperfine failed; its output tail:"
        tail -n 5 "$WORK/hyperfine.txt" | sed 's/^/      /' | tee -a "$STATUS"
    fi
fi

LOAD_AFTER=$(busy_report)

# ---- 4. report ----------------------------------------------------------------------

table() {
    awk -F, -v nrounds="$ROUNDS" -v ompi_v="${MPI_VERSION[openmpi]:-}" -v mpich_v="${MPI_VERSION[mpich]:-}" '
    FILENAME == ARGV[1] { k = $1 "|" $2 "|" $3 "|" $4 "|" $5; T[k] = $8; BW[k] = $10; next }
    FILENAME == ARGV[2] { S[$1] = $2; SD[$1] = $3; next }
    FILENAME == ARGV[3] { k = $1 "|" $2 "|" $3 "|" $5; RV[k, ++RN[k]] = $8 + 0; next }
    # Best (which = "min") or median of the per-round best times of one measurement.
    function rstat(k, which, n, i, j, a, x) {
        n = RN[k]
        if (!n) return ""
        for (i = 1; i <= n; i++) {
            x = RV[k, i]
            for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]
            a[j + 1] = x
        }
        if (which == "min") return a[1]
        return (n % 2) ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    # The same, as GB/s for a message of b bytes.
    function rbw(k, which, b, x) { x = rstat(k, which); return x == "" ? "" : b / (x * 1e3) }
    function t(lib, pat, mode, np, b) { return T[lib "|" pat "|" mode "|" np "|" b] }
    function bw(lib, pat, mode, np, b, k) {
        k = lib "|" pat "|" mode "|" np "|" b
        return (k in BW) ? BW[k] / 1000 : ""
    }
    # "-" marks a cell that does not apply (no reference for that row): left blank.
    function v(x, f) { return x == "-" ? "" : x == "" ? "n/a" : sprintf(f, x) }
    function r(a, b) {
        if (a == "-" || b == "-") return ""
        return (a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b)
    }
    # Time rows: ratio = other / tern (>1: tern is faster).
    function trow(label, a, o, m, x) {
        printf "%-38s %9s %9s %9s %9s   %7s %7s %7s\n", label, v(a, "%.3f"), v(o, "%.3f"),
            v(m, "%.3f"), v(x, "%.3f"), r(o, a), r(m, a), r(x, a)
    }
    # Bandwidth rows: ratio = tern / other (>1: tern moves more bytes per second).
    function brow(label, a, o, m, x) {
        printf "%-38s %9s %9s %9s %9s   %7s %7s %7s\n", label, v(a, "%.2f"), v(o, "%.2f"),
            v(m, "%.2f"), v(x, "%.2f"), r(a, o), r(a, m), r(a, x)
    }
    function head(title, unit, ref, rdesc) {
        printf "\n%s\n", title
        printf "%-38s %9s %9s %9s %9s   %7s %7s %7s\n", unit, "tern", "openmpi", "mpich", ref,
            rdesc "ompi", rdesc "mpich", ref == "" ? "" : rdesc ref
    }
    END {
        printf "Open MPI: %s (btl self,vader)   MPICH: %s\n", ompi_v == "" ? "n/a" : ompi_v,
            mpich_v == "" ? "n/a" : mpich_v
        print "All values are the best trial (t_min); medians are in the CSV below."
        print "Every ratio is oriented so that > 1 means tern is better:"
        print "  time rows: other/tern       bandwidth rows: tern/other"

        head("LATENCY - one-way time per 8-byte message, 2 ranks (us); ref = raw 64-byte cache-line ping-pong",
             "", "cacheln", "x/")
        cl = t("raw", "cacheline", "pinned", 2, 64)
        clu = t("raw", "cacheline", "unpinned", 2, 64)
        trow("ping-pong 8 B, standard send", t("tern", "pingpong", "standard", 2, 8),
             t("openmpi", "pingpong", "standard", 2, 8), t("mpich", "pingpong", "standard", 2, 8), cl)
        trow("ping-pong 8 B, synchronous send", t("tern", "pingpong", "sync", 2, 8),
             t("openmpi", "pingpong", "sync", 2, 8), t("mpich", "pingpong", "sync", 2, 8), cl)
        trow("ping-pong 0 B, standard send", t("tern", "pingpong", "standard", 2, 0),
             t("openmpi", "pingpong", "standard", 2, 0), t("mpich", "pingpong", "standard", 2, 0), cl)
        trow("streaming 8 B, time per message", t("tern", "stream", "standard", 2, 8),
             t("openmpi", "stream", "standard", 2, 8), t("mpich", "stream", "standard", 2, 8), "-")
        printf "  (raw cache line: pinned %s us, unpinned %s us; again at the end: pinned %s, unpinned %s)\n",
            v(cl, "%.3f"), v(clu, "%.3f"), v(t("raw-end", "cacheline", "pinned", 2, 64), "%.3f"),
            v(t("raw-end", "cacheline", "unpinned", 2, 64), "%.3f")


        split("1048576 4194304 16777216 67108864", sz, " ")
        split("1 4 16 64", mib, " ")
        for (pi = 1; pi <= 2; pi++) {
            pat = pi == 1 ? "pingpong" : "stream"
            for (mi = 1; mi <= 2; mi++) {
                mode = mi == 1 ? "standard" : "sync"
                head("BANDWIDTH - " pat ", " mode " sends, 2 ranks (GB/s = 1e9 B/s); ref = memcpy in one process",
                     "", "memcpy", "t/")
                for (i = 1; i <= 4; i++)
                    brow(sprintf("%s %s MiB", pat, mib[i]), bw("tern", pat, mode, 2, sz[i]),
                         bw("openmpi", pat, mode, 2, sz[i]), bw("mpich", pat, mode, 2, sz[i]),
                         bw("raw", "memcpy", "-", 1, sz[i]))
            }
        }

        head("RING - 8-byte token, 4 ranks on 2 cores (oversubscribed), time per hop (us)", "",
             "", "x/")
        trow("ring 4 ranks, standard send", t("tern", "ring", "standard", 4, 8),
             t("openmpi", "ring", "standard", 4, 8), t("mpich", "ring", "standard", 4, 8), "-")

        head(sprintf("INTERLEAVED ROUNDS - %d rounds of raw, tern, openmpi, mpich; standard sends (us, GB/s)", nrounds),
             "", "ref", "vs.")
        for (q = 1; q <= 2; q++) {
            which = q == 1 ? "med" : "min"
            tag = q == 1 ? "median" : "best"
            trow("8 B one-way (us), " tag, rstat("tern|pingpong|standard|8", which),
                 rstat("openmpi|pingpong|standard|8", which), rstat("mpich|pingpong|standard|8", which),
                 rstat("raw|cacheline|pinned|64", which))
            for (i = 1; i <= 4; i++)
                brow(sprintf("%s MiB (GB/s), %s", mib[i], tag),
                     rbw("tern|pingpong|standard|" sz[i], which, sz[i]),
                     rbw("openmpi|pingpong|standard|" sz[i], which, sz[i]),
                     rbw("mpich|pingpong|standard|" sz[i], which, sz[i]),
                     rbw("raw|memcpy|-|" sz[i], which, sz[i]))
            trow("ring 4 ranks, per hop (us), " tag, rstat("tern|ring|standard|8", which),
                 rstat("openmpi|ring|standard|8", which), rstat("mpich|ring|standard|8", which), "-")
        }
        print "  (median = median over rounds of the best trial of each round; best = best round."
        print "   ref: raw cache line pinned for latency, memcpy in the same rounds for bandwidth)"

        head("STARTUP - launcher + init + finalize, 2 ranks, hyperfine mean (ms)", "", "", "x/")
        trow("run -n 2 of init+finalize", S["tern"], S["openmpi"], S["mpich"], "-")
        printf "  (stddev ms: tern %s, openmpi %s, mpich %s)\n", v(SD["tern"], "%.2f"),
            v(SD["openmpi"], "%.2f"), v(SD["mpich"], "%.2f")
    }' "$ALL_CSV" "$STARTUP_CSV" "$ROUNDS_CSV"
}

{
    echo "tern compare - $STAMP - host $HOST"
    echo "repo: $ROOT ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'no commit yet'))"
    echo "kernel: $(uname -srm)"
    echo "cpu: $(awk -F': ' '/model name/{print $2; exit}' /proc/cpuinfo), $(nproc) online CPUs"
    echo "compiler: $(${CC:-cc} --version 2>/dev/null | head -1)"
    echo "tern build: $BUILD_DIR ($(awk -F= '/^CMAKE_BUILD_TYPE:/{print $2}' "$BUILD_DIR/CMakeCache.txt" 2>/dev/null))"
    echo "options: quick=$QUICK perturb=$PERTURB pin=$PIN; pingpong args: ${PP_ARGS[*]}; ring args: ${RING_ARGS[*]}"
    echo "machine before: $LOAD_BEFORE"
    echo "machine after:  $LOAD_AFTER"
    echo "launch: ternrun -n N ${TERN_PIN[*]:+[sh -c taskset -c rank%ncpu]} | ${OMPI_RUN[*]} -n N [--oversubscribe] | ${MPICH_RUN[*]} -n N"
    if [ -s "$STATUS" ]; then
        echo
        echo "NOTES (missing libraries, failures, timeouts):"
        sed 's/^/  /' "$STATUS"
    fi
    table
} >"$WORK/report.txt"

{
    cat "$WORK/report.txt"
    echo
    echo "== all measurements (CSV; t in us per operation, MBps = 1e6 B/s) =="
    echo "lib,pattern,mode,nprocs,bytes,iters,trials,t_min_us,t_med_us,MBps_max,MBps_med"
    cat "$ALL_CSV"
    echo
    echo "== interleaved rounds (CSV, one block of rows per round and library, in run order) =="
    cat "$ROUNDS_CSV"
    if [ -s "$WORK/hyperfine.txt" ]; then
        echo
        echo "== hyperfine =="
        cat "$WORK/hyperfine.txt"
    fi
    if grep -q 'failed' "$STATUS" 2>/dev/null && [ -s "$WORK/build.log" ]; then
        echo
        echo "== build log (tail) =="
        tail -n 40 "$WORK/build.log"
    fi
} >"$RESULT"
cp "$ALL_CSV" "${RESULT%.txt}.csv"
cp "$ROUNDS_CSV" "${RESULT%.txt}-rounds.csv"

echo
cat "$WORK/report.txt"
echo
echo "results: ${RESULT#"$ROOT"/} (and .csv, -rounds.csv, -startup.json)"
exit 0

#!/usr/bin/env bash
# osu.sh BUILD_DIR OMB_DIR - the OSU Micro-Benchmarks (OMB 7.x: MPI and OpenSHMEM parts) on
# tern, unmodified, as a user builds them: `./configure CC=tern-oshcc CXX=terncxx` (the
# SHMEM wrapper links libtern_mpi too, so OMB's configure finds MPI and OpenSHMEM in one
# compiler and builds both parts), `make`, then every program runs once with short options
# under BUILD_DIR/bin/ternrun. A program passes when it exits 0; where OMB has data
# validation (`-c`) it is on, and a "FAIL" or "validation failed" line fails the program.
#
# OMB_DIR is an unpacked OMB source tree (the tarball from the OSU page, or a copy of it);
# nothing of it is part of tern. It is built in a temporary copy and left as it was
# (KEEP=1 keeps the copy). Packages: make; autoconf automake libtool to regenerate the
# build system (used when present).
#
# Environment:
#   TRANSPORTS   TERN_TRANSPORTS for the runs (default: tern's default, shm on one node;
#                e.g. self,tcp)
#   PARTS        which parts to run: "mpi openshmem" (default), or one of them
#   MATCH        regex on program names: run only these
#   BUILD_ONLY=1 build and list the programs, run nothing (what CI can check quickly)
#   TERN_TIMEOUT seconds per program (default 240)
# Programs OMB itself runs on more than one node only (osu_bw_fan_in/out refuse a single
# node) are listed as SKIP with OMB's reason. Exit status: 0 when everything built and every
# program that ran passed, 1 otherwise, 77 when a tool or the source is missing.
set -uo pipefail
BUILD=$(cd "${1:?usage: osu.sh BUILD_DIR OMB_DIR}" && pwd)
SRC=$(cd "${2:?usage: osu.sh BUILD_DIR OMB_DIR}" && pwd)
PARTS=${PARTS:-"mpi openshmem"}
MATCH=${MATCH:-.}
TMO=${TERN_TIMEOUT:-240}
for t in make "$BUILD/bin/tern-oshcc" "$BUILD/bin/terncxx" "$BUILD/bin/ternrun"; do
    command -v "$t" >/dev/null || {
        echo "osu.sh: $t not found (apt-get install -y make; build tern)" >&2
        exit 77
    }
done
[ -f "$SRC/configure" ] && [ -d "$SRC/c/mpi" ] || {
    echo "osu.sh: $SRC is not an OMB source tree (no configure, no c/mpi)" >&2
    exit 77
}

WORK=$(mktemp -d "${TMPDIR:-/tmp}/tern-osu.XXXXXX")
[ -n "${KEEP:-}" ] || trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC/." "$WORK/"
# Regenerate the build system with this machine's autotools when they are there: a tree
# whose ltmain.sh and aclocal.m4 come from two libtool versions (some copies of OMB on
# the web) fails to link otherwise. Without them the shipped configure is used.
if command -v autoreconf >/dev/null && command -v libtoolize >/dev/null; then
    (cd "$WORK" && autoreconf -fi >"$WORK/autoreconf.out" 2>&1) || {
        echo "osu.sh: autoreconf -fi failed:" >&2
        tail -n 20 "$WORK/autoreconf.out" >&2
        exit 1
    }
fi
(cd "$WORK" && ./configure CC="$BUILD/bin/tern-oshcc" CXX="$BUILD/bin/terncxx" >"$WORK/configure.out" 2>&1) || {
    echo "osu.sh: configure failed; the end of its log:" >&2
    tail -n 20 "$WORK/config.log" >&2
    exit 1
}
if ! make -C "$WORK" -j"${JOBS:-2}" >"$WORK/make.out" 2>&1; then
    echo "osu.sh: make failed; the end of its output:" >&2
    tail -n 30 "$WORK/make.out" >&2
    exit 1
fi

fail=0
programs=()
for part in $PARTS; do
    case $part in
    mpi) dir=$WORK/c/mpi ;;
    openshmem) dir=$WORK/c/openshmem ;;
    *) echo "osu.sh: unknown part $part (mpi, openshmem)" >&2; exit 2 ;;
    esac
    [ -d "$dir" ] || { echo "osu.sh: $part was not configured (no $dir)" >&2; fail=1; continue; }
    # Every program the configured Makefiles of this part name must have been built (make
    # itself prints each directory's $(PROGRAMS), as configure chose them).
    while IFS= read -r mk; do
        d=$(dirname "$mk")
        # A directory configure left out (make never entered it: no object files), e.g. the
        # persistent collectives, which OMB builds only where MPI_Session_init exists.
        if [ -z "$(find "$d" -maxdepth 1 -name '*.o' -print -quit)" ]; then
            [ -f "$d/Makefile.am" ] && grep -q '_PROGRAMS' "$d/Makefile.am" &&
                printf '%-30s %-10s %s\n' "${d#$WORK/}/" "$part" "LEFT-OUT by OMB's configure"
            continue
        fi
        for p in $(make -s -C "$d" -f Makefile -f <(printf 'tern-print-programs:\n\t@echo $(PROGRAMS)\n') \
            tern-print-programs 2>/dev/null); do
            if [ -x "$d/$p" ]; then
                programs+=("$part:$d/$p")
            else
                printf '%-30s %-10s %s\n' "$p" "$part" "NOT-BUILT"
                fail=1
            fi
        done
    done < <(find "$dir" -name Makefile | sort)
done
echo "osu.sh: ${#programs[@]} programs built"
[ "${BUILD_ONLY:-0}" = 1 ] && {
    for e in "${programs[@]}"; do basename "${e#*:}"; done | sort | tr '\n' ' '
    echo
    exit $fail
}

[ -n "${TRANSPORTS:-}" ] && export TERN_TRANSPORTS=$TRANSPORTS
export SHMEM_SYMMETRIC_SIZE=${SHMEM_SYMMETRIC_SIZE:-256m}
printf '%-30s %-10s %-3s %-6s %8s\n' program part np result seconds
for e in "${programs[@]}"; do
    part=${e%%:*}
    f=${e#*:}
    n=$(basename "$f")
    [[ $n =~ $MATCH ]] || continue
    np=2
    args="-i 20 -x 2"
    case $f in
    *osu_bw_fan_in | *osu_bw_fan_out)
        printf '%-30s %-10s %-3s %-6s %s\n' "$n" "$part" - SKIP "(OMB runs it across nodes only)"
        continue ;;
    *osu_latency_mt* | *osu_latency_mp*) args="$args -m 1:4096" ;;
    *congestion* | *osu_mbw_mr | *osu_multi_lat) np=4; args="$args -m 1:65536" ;;
    */pt2pt/*) args="$args -m 1:1048576 -c" ;;
    *osu_cas_latency | *osu_acc_latency) args="$args -c" ;;
    # osu_fop_latency -c races in OMB itself (rank 0 goes on with fetch-and-ops on rank 1's
    # window after the barrier that lets rank 1 check it; docs/MPI.md), so not validated;
    # the other one-sided programs have no -c.
    */one-sided/*) args="$args -m 1:1048576" ;;
    */startup/*) np=3; args="" ;;
    *osu_barrier | *osu_ibarrier | *osu_barrier_persistent) np=3 ;; # no sizes, no validation
    */collective/*) np=3; args="$args -m 1:65536 -c" ;;
    */openshmem/*)
        case $n in
        osu_oshm_barrier | osu_oshm_broadcast | osu_oshm_collect | osu_oshm_fcollect | osu_oshm_reduce)
            np=3; args="" ;;
        *) args="heap" ;; # point-to-point and atomics: the symmetric heap (or "global")
        esac ;;
    esac
    start=$(date +%s.%N)
    out=$(timeout "$TMO" "$BUILD/bin/ternrun" -n "$np" --timeout $((TMO - 10)) "$f" $args </dev/null 2>&1)
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    result=PASS
    if [ $rc -ne 0 ] || printf '%s\n' "$out" | grep -qiE '^# *FAIL|^FAILED|validation fail|failed validation|[[:space:]]fail(ed)?[[:space:]]*$'; then
        result=FAIL
        fail=1
    fi
    printf '%-30s %-10s %-3s %-6s %8.1f\n' "$n" "$part" "$np" "$result" "$secs"
    [ "$result" = FAIL ] && printf '%s\n' "$out" | tail -n 8 | sed 's/^/    | /'
done
exit $fail

#!/usr/bin/env bash
# mpich-testsuite.sh BUILD_DIR [DIR ...] - run MPICH's own test suite (test/mpi of the
# MPICH source) against tern, unmodified: every program is built with BUILD_DIR/bin/terncc
# and run with BUILD_DIR/bin/ternrun, one testlist line at a time, and judged the way
# MPICH's runtests judges it (exit 0 and a " No Errors" line; resultTest=TestStatus /
# TestErrFatal lines must exit non-zero). Prints one line per test, a summary table per
# directory and the list of failures. Not part of ctest: it needs the MPICH source.
#
# The MPICH source is an oracle only; none of it is part of tern. It comes from:
#   $MPICH_SRC                      an mpich-*.tar.* (e.g. Debian's mpich_4.0.2.orig.tar.xz,
#                                   or one made from a git checkout of a 4.x tag: copy
#                                   confdb/ and maint/version.m4 into test/mpi, run
#                                   autoreconf -fi there and in test/mpi/dtpools, write an
#                                   empty include/mtest_mpix.h (MPICH's autogen generates it),
#                                   and tar MPICH-VERSION/test/mpi)
#   otherwise                       `apt-get source --download-only mpich` into
#                                   $TERN_SUITE_CACHE (default ~/.cache/tern-mpich); needs a
#                                   deb-src entry, which this script adds (as root) in
#                                   /etc/apt/sources.list.d/tern-src.sources if none exists.
# Other settings:
#   TERN_SUITE_WORK     scratch dir (default BUILD_DIR/mpich-testsuite); re-used when the
#                       same tarball was unpacked and configured there before
#   TERN_SUITE_TIMEOUT  seconds per test (default 120; a testlist timeLimit= replaces it,
#                       as in MPICH's runtests)
#   TERN_SUITE_FILTER   regex on "dir/name np": run only matching lines
# DIRs default to the directories in tern's MPI scope:
#   attr basic coll comm datatype errhan group init pt2pt rma topo
# Exit status: 0 when nothing failed (SKIP and UNSUP allowed), 1 otherwise.
set -euo pipefail

usage() {
    echo "usage: $0 BUILD_DIR [DIR ...]   (see the comment at the top)" >&2
    exit 2
}
[ $# -ge 1 ] || usage
build=$(cd "$1" && pwd) || usage
shift
terncc=$build/bin/terncc
ternrun=$build/bin/ternrun
[ -x "$terncc" ] && [ -x "$ternrun" ] || {
    echo "no $terncc / $ternrun: build tern first" >&2
    exit 2
}
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=(attr basic coll comm datatype errhan group init pt2pt rma topo)
work=${TERN_SUITE_WORK:-$build/mpich-testsuite}
timeout_s=${TERN_SUITE_TIMEOUT:-120}
filter=${TERN_SUITE_FILTER:-}
mkdir -p "$work"

# --- 1. the MPICH source -------------------------------------------------------------------
tarball=${MPICH_SRC:-}
if [ -z "$tarball" ]; then
    cache=${TERN_SUITE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tern-mpich}
    mkdir -p "$cache"
    tarball=$(ls "$cache"/mpich_*.orig.tar.* 2>/dev/null | head -n 1 || true)
    if [ -z "$tarball" ]; then
        if ! grep -rqs '^\(Types: .*deb-src\|deb-src \)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
            if [ "$(id -u)" -ne 0 ]; then
                echo "no deb-src entry for apt and not root: set MPICH_SRC=/path/to/mpich-*.tar.*" >&2
                exit 2
            fi
            echo "adding /etc/apt/sources.list.d/tern-src.sources (deb-src, bookworm main) for apt-get source"
            printf '%s\n' 'Types: deb-src' 'URIs: http://deb.debian.org/debian' \
                'Suites: bookworm bookworm-updates' 'Components: main' \
                'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
                >/etc/apt/sources.list.d/tern-src.sources
            apt-get update -qq
        fi
        (cd "$cache" && apt-get source --download-only mpich)
        tarball=$(ls "$cache"/mpich_*.orig.tar.* | head -n 1)
    fi
fi
[ -f "$tarball" ] || {
    echo "MPICH source $tarball not found" >&2
    exit 2
}

# --- 2. unpack test/mpi and configure it with terncc ----------------------------------------
# --enable-strictmpi: the tests use no MPICH extension (MPIX_, non-standard type/op pairs).
conf_args=(--with-mpi=/nonexistent --disable-fortran --disable-cxx --disable-romio
    --disable-spawn --enable-rma --disable-perftest --disable-ft-tests --enable-threads=multiple
    --enable-strictmpi)
stamp="$tarball $(stat -c %s "$tarball") $terncc ${conf_args[*]}"
src=$work/test/mpi
if [ "$(cat "$work/.configured" 2>/dev/null || true)" != "$stamp" ]; then
    echo "unpacking test/mpi of $tarball into $work"
    rm -rf "$work/test" "$work/.configured"
    tar xf "$tarball" -C "$work" --strip-components=1 --wildcards '*/test/mpi/*' 
    echo "configuring it with CC=$terncc (log: $work/configure.log)"
    (cd "$src" && ./configure CC="$terncc" MPICC="$terncc" "${conf_args[@]}") \
        >"$work/configure.log" 2>&1 || {
        echo "configure failed: see $work/configure.log" >&2
        exit 1
    }
    echo "$stamp" >"$work/.configured"
fi
# MPICH's test helpers (util: mtest; dtpools: the datatype pools of the *_dtp tests).
# Always re-made: a change in tern's mpi.h must rebuild them and everything else.
rm -f "$src"/util/*.o "$src"/util/*.lo "$src"/util/*.la
make -C "$src/util" -j2 >"$work/util.log" 2>&1 || echo "MPICH util (mtest) did not build: see $work/util.log"
make -C "$src/dtpools" -j2 >"$work/dtpools.log" 2>&1 || echo "MPICH dtpools did not build: see $work/dtpools.log"

# --- 3. what tern does not run, and why -----------------------------------------------------
# name or dir/name -> reason: programs outside tern's scope (docs/MPI.md, "Not supported");
# everything else in a scope directory runs.
declare -A skip=(
    # MPI 4 and MPICH extensions
    [init/session]="MPI-4 sessions" [init/session_mult_init]="MPI-4 sessions"
    [init/session_psets]="MPI-4 sessions" [init/session_self]="MPI-4 sessions"
    [pt2pt/multi_psend_derived]="MPI-4 partitioned communication"
    # out of tern's scope: dynamic processes, memory
    [pt2pt/large_message]="needs > 6 GB per process"
    # erroneous: builds a struct from a datatype handle it freed just before, which works
    # only where the next new type reuses that handle value (tern's handles carry a
    # generation, so a stale one is MPI_ERR_TYPE)
    [datatype/indexed_misc]="uses a freed datatype handle"
    [datatype/indexed_misc_oldapi]="uses a freed datatype handle"
    # MPI_LB / MPI_UB: removed in MPI 3.0, not in tern's mpi.h
    [datatype/lbub_oldapi]="MPI_LB/MPI_UB (removed in MPI 3.0)"
    [datatype/typename_oldapi]="MPI_LB/MPI_UB (removed in MPI 3.0)"
    [datatype/struct_no_real_types]="MPI_LB/MPI_UB (removed in MPI 3.0)"
)
# Whole-program patterns: a program whose source calls one of these is skipped with the
# given reason (checked on the test's main source file).
skip_patterns=(
    'MPI_Session_|MPI-4 sessions'
    'MPI_Psend_init|MPI_Precv_init|MPI-4 partitioned communication'
    'MPI_Comm_spawn|dynamic processes (not supported)'
    'MPI_T_|MPI_T tool interface (not supported)'
    'MPI_File_|MPI I/O (not supported)'
    'MPIX_|MPICH extensions (MPIX_)'
    'MPI_[A-Za-z_]+_c\(|MPI-4 large-count (_c) functions'
    'MPI_Comm_create_from_group|MPI-4 functions'
)
# Programs that match a pattern above only inside #if defined(...) of a name tern's mpi.h
# does not define: they run (the guarded part compiles away).
declare -A run_anyway=(
    [comm/cmsplit_type]="MPIX_COMM_TYPE_NEIGHBORHOOD is under #if defined()"
)
skip_reason() { # dir name -> prints a reason or nothing
    local d=$1 n=$2 f p pat reason
    if [ -n "${skip[$d/$n]:-}" ]; then
        echo "${skip[$d/$n]}"
        return
    fi
    [ -z "${run_anyway[$d/$n]:-}" ] || return 0
    f=$src/$d/$n.c
    [ -f "$f" ] || return 0
    for p in "${skip_patterns[@]}"; do
        pat=${p%|*}
        reason=${p##*|}
        if grep -Eq "($pat)" "$f"; then
            echo "$reason"
            return
        fi
    done
}

# --- 4. build and run ---------------------------------------------------------------------
logs=$work/logs
rm -rf "$logs"
mkdir -p "$logs"
declare -A npass nfail ntime nbuild nskip nunsup built
unsups=()
failures=()

run_dir() {
    local d=$1 list line name np rest kv key val args envs tl reason rt log rc out t0 t1
    npass[$d]=0 nfail[$d]=0 ntime[$d]=0 nbuild[$d]=0 nskip[$d]=0 nunsup[$d]=0
    list=$src/$d/testlist
    [ -f "$list" ] || {
        echo "($d: no testlist)"
        return
    }
    while read -r line; do
        line=${line%%#*}
        read -r name np rest <<<"$line" || true
        [ -n "${name:-}" ] || continue
        name=${name#@*@} # @largetest@ etc. left by configure (empty)
        if [ -z "${np:-}" ]; then # a sub-directory line
            [ -d "$src/$d/$name" ] && echo "($d/$name: sub-directory, not run)"
            continue
        fi
        [ -z "$filter" ] || [[ "$d/$name $np" =~ $filter ]] || continue
        args=() envs=() tl=$timeout_s rt="" reason=""
        for kv in $rest; do
            key=${kv%%=*} val=${kv#*=}
            case $key in
            arg) args+=("$val") ;;
            env) envs+=("$val") ;;
            timeLimit) tl=$val ;; # as in MPICH's runtests: the job's limit
            resultTest) rt=$val ;;
            # strict=false: not in the MPI version MPICH's configure knew (in 4.0.2 only
            # the persistent collectives, MPI 4.0); MPICH extensions are caught by MPIX_ below
            strict) ;;
            mpiversion) reason="needs MPI $val" ;;
            mem) awk -v m="$val" 'BEGIN{exit !(m > 4)}' && reason="needs $val GB of memory" ;;
            esac
        done
        local label="$d/$name $np${args:+ ${args[*]}}${envs:+ ${envs[*]}}"
        [ -n "$reason" ] || reason=$(skip_reason "$d" "$name")
        if [ -n "$reason" ]; then
            echo "SKIP    $label  ($reason)"
            nskip[$d]=$((nskip[$d] + 1))
            continue
        fi
        if [ -z "${built[$d/$name]:-}" ]; then
            if make -C "$src/$d" "$name" >"$logs/$d.$name.build" 2>&1; then
                built[$d/$name]=ok
            else
                built[$d/$name]=fail
            fi
        fi
        if [ "${built[$d/$name]}" = fail ]; then
            echo "BUILD   $label  ($(grep -m1 -E 'error|undefined reference' "$logs/$d.$name.build" | sed 's/^.*\(error\|undefined reference\)/\1/' | cut -c1-90))"
            nbuild[$d]=$((nbuild[$d] + 1))
            failures+=("build-fail $label: $logs/$d.$name.build")
            continue
        fi
        log=$logs/$d.$name.$np.$((npass[$d] + nfail[$d] + ntime[$d])).out
        t0=$(date +%s.%N)
        rc=0
        # ternrun ends the job at the limit (exit 124, with a report of where each rank
        # is blocked); timeout(1) is only a safety net.
        (cd "$src/$d" && env "${envs[@]}" timeout -k 5 $((tl + 30)) "$ternrun" --timeout "$tl" \
            -n "$np" "./$name" "${args[@]}" </dev/null >"$log" 2>&1) || rc=$?
        t1=$(date +%s.%N)
        local secs
        secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
        if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ -z "$rt" ]; then
            echo "TIMEOUT $label  (${tl}s)"
            ntime[$d]=$((ntime[$d] + 1))
            failures+=("timeout $label: $log")
            continue
        fi
        if [ -n "$rt" ]; then # TestStatus / TestErrFatal: the program must fail
            [ $rc -ne 0 ] && out=pass || out=fail
        else
            [ $rc -eq 0 ] && grep -Eq '^\s*No [Ee]rrors\s*$' "$log" && out=pass || out=fail
        fi
        # Stopped by a call tern reports as not supported (docs/MPI.md): out of scope,
        # counted apart from failures. MPICH's helpers make inter-communicators for
        # many tests (MTestGetIntracomm merges one, MTestGetComm hands some out).
        local unsup=""
        if [ $out = fail ] && grep -a -q MPI_ERR_UNSUPPORTED_OPERATION "$log"; then
            # the function, when tern's message names it (errors fatal), else unnamed
            unsup=$(grep -a -o -m1 'MPI_[A-Za-z_]*: MPI_ERR_UNSUPPORTED_OPERATION' "$log" | cut -d: -f1 || true)
            [ -n "$unsup" ] || unsup="(returned)"
        fi
        if [ -n "$unsup" ]; then
            echo "UNSUP   $label  (stopped at $unsup, not supported)"
            nunsup[$d]=$((nunsup[$d] + 1))
            unsups+=("$unsup")
            continue
        fi
        if [ $out = pass ]; then
            echo "PASS    $label  (${secs}s)"
            npass[$d]=$((npass[$d] + 1))
        else
            echo "FAIL    $label  (exit $rc, ${secs}s): $(grep -v -E '^\s*$' "$log" | head -n 1 | cut -c1-100)"
            nfail[$d]=$((nfail[$d] + 1))
            failures+=("fail $label: $log")
        fi
    done <"$list"
}

for d in "${dirs[@]}"; do
    echo "== $d"
    run_dir "$d"
done

# --- 5. summary ---------------------------------------------------------------------------
echo
printf '%-10s %6s %6s %8s %11s %6s %6s\n' dir pass fail timeout build-fail unsup skip
tp=0 tf=0 tt=0 tb=0 tu=0 ts=0
for d in "${dirs[@]}"; do
    printf '%-10s %6d %6d %8d %11d %6d %6d\n' "$d" "${npass[$d]}" "${nfail[$d]}" "${ntime[$d]}" \
        "${nbuild[$d]}" "${nunsup[$d]}" "${nskip[$d]}"
    tp=$((tp + npass[$d])) tf=$((tf + nfail[$d])) tt=$((tt + ntime[$d]))
    tb=$((tb + nbuild[$d])) tu=$((tu + nunsup[$d])) ts=$((ts + nskip[$d]))
done
printf '%-10s %6d %6d %8d %11d %6d %6d\n' total $tp $tf $tt $tb $tu $ts
echo "(unsup: the test ran into a call tern does not support, docs/MPI.md; skip: not run)"
if [ ${#unsups[@]} -gt 0 ]; then
    echo "unsupported calls met: $(printf '%s\n' "${unsups[@]}" | sort | uniq -c | sort -rn | awk '{printf "%s %s x%d", (NR>1?",":""), $2, $1}')"
fi
if [ ${#failures[@]} -gt 0 ]; then
    echo
    echo "failures (logs under $logs):"
    printf '  %s\n' "${failures[@]}"
fi
echo "mpich-testsuite: $tp passed, $((tf + tt + tb)) failed, $((tu + ts)) skipped"
[ $((tf + tt + tb)) -eq 0 ]

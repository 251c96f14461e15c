#!/bin/sh
# trace_overhead.sh - what tern's tracer costs (docs/TRACING.md): MPI ping-pong one-way
# latency at 8 B and 64 KiB (2 ranks), an 8-byte MPI_Allreduce at 2 and 4 ranks, and two
# applications at 2 ranks (examples/sor, P=SOR_P, solved to convergence; examples/
# gauss_jordan, n=GJ_N: a pivot search and broadcast per column), with tracing off and on
# in a build with the tracer, and off in a build without it (cmake -DTERN_TRACING=OFF)
# when given. The configurations alternate (off, on, off, on, ...) REPEAT times each, so a
# change of the machine's load falls on both. The micro-benchmarks run many short trials
# (200 x 300 ping-pongs) and keep the fastest: on a loaded machine that is a trial neither
# rank was preempted in, the cost of the code rather than of the scheduler. Each line is
# the median over repeats of a run's fastest trial (the applications: their whole time),
# and the ratio on/off is taken of those medians and, beside it, of the minima. On a
# loaded machine compare only the ratios of one run.
#
#   bench/trace_overhead.sh BUILD [BUILD_WITHOUT_TRACER]     (REPEAT=5, SOR_P=256, GJ_N=500)
#
# ONLY="pingpong8 allreduce8.p2 ..." runs only those of the six (names as printed).
#
# BEFORE_LIB=DIR also runs BUILD's programs with the libtern.so in DIR (a copy of an older
# build's lib/; the programs' RUNPATH gives way to LD_LIBRARY_PATH), off and on, in the same
# alternation: "before" and "after" of a change to the tracer, measured in one run.
set -eu
build=${1:?usage: trace_overhead.sh BUILD [BUILD_WITHOUT_TRACER]}
plain=${2:-}
repeat=${REPEAT:-5}
sor_p=${SOR_P:-256}
gj_n=${GJ_N:-500}
only=" ${ONLY:-pingpong8 pingpong64k allreduce8.p2 allreduce8.p4 sor.p2 gj.p2} "
tdir=$(mktemp -d "${TMPDIR:-/tmp}/tern-trace-bench.XXXXXX")
out=$(mktemp "${TMPDIR:-/tmp}/tern-trace-bench-out.XXXXXX")
trap 'rm -rf "$tdir" "$out"' EXIT

echo "# trace_overhead: $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"

# one BUILD LABEL on|off: append "label bench value" lines
one() {
    b=$1 label=$2 mode=$3 lib=${4:-}
    if [ "$mode" = on ]; then set -- env TERN_TRACE="$tdir"; else set -- env -u TERN_TRACE; fi
    [ -n "$lib" ] && set -- "$@" LD_LIBRARY_PATH="$lib"
    pp= pl= a2= a4= sor= gj=
    case $only in *" pingpong8 "*) pp=$("$@" "$b/bin/ternrun" -n 2 "$b/bench/mpi_pingpong" -s 8 -t 200 -i 300 --only pingpong \
        --csv | awk -F, '$2 == "pingpong" { print $8 }') ;; esac
    rm -f "$tdir"/tern-trace.*
    case $only in *" pingpong64k "*) pl=$("$@" "$b/bin/ternrun" -n 2 "$b/bench/mpi_pingpong" -s 65536 -t 50 -i 40 -b 2M \
        --only pingpong --csv | awk -F, '$2 == "pingpong" { print $8 }') ;; esac
    rm -f "$tdir"/tern-trace.*
    case $only in *" allreduce8.p2 "*) a2=$("$@" "$b/bin/ternrun" -n 2 "$b/bench/mpi_coll" -o allreduce -s 8 -t 100 -i 300 --csv |
        awk -F, '$2 == "allreduce" { print $8 }') ;; esac
    rm -f "$tdir"/tern-trace.*
    case $only in *" allreduce8.p4 "*) a4=$("$@" "$b/bin/ternrun" -n 4 "$b/bench/mpi_coll" -o allreduce -s 8 -t 50 -i 200 --csv |
        awk -F, '$2 == "allreduce" { print $8 }') ;; esac
    rm -f "$tdir"/tern-trace.*
    case $only in *" sor.p2 "*) sor=$("$@" "$b/bin/ternrun" -n 2 "$b/bin/sor" "$sor_p" 0 |
        sed -n 's/.* in \([0-9.]*\) s .*/\1/p') ;; esac
    rm -f "$tdir"/tern-trace.*
    case $only in *" gj.p2 "*) gj=$("$@" "$b/bin/ternrun" -n 2 "$b/bin/gauss_jordan" "$gj_n" 0 |
        sed -n 's/.*processes: \([0-9.]*\) s .*/\1/p') ;; esac
    rm -f "$tdir"/tern-trace.*
    {
        echo "$label pingpong8 $pp"
        echo "$label pingpong64k $pl"
        echo "$label allreduce8.p2 $a2"
        echo "$label allreduce8.p4 $a4"
        echo "$label sor.p2 $sor"
        echo "$label gj.p2 $gj"
    } >>"$out"
}

i=0
while [ $i -lt "$repeat" ]; do
    [ -n "$plain" ] && one "$plain" no-tracer off
    if [ -n "${BEFORE_LIB:-}" ]; then
        one "$build" before-off off "$BEFORE_LIB"
        one "$build" before-on on "$BEFORE_LIB"
    fi
    one "$build" off off
    one "$build" on on
    i=$((i + 1))
done

awk '
NF >= 3 { v[$1 " " $2] = v[$1 " " $2] " " $3 }
END {
    split("pingpong8 pingpong64k allreduce8.p2 allreduce8.p4 sor.p2 gj.p2", benches, " ")
    split("no-tracer before-off before-on off on", labels, " ")
    printf "%-14s %-10s %12s %12s\n", "bench", "build/run", "median", "min"
    for (b = 1; b <= 6; b++) {
        for (l = 1; l <= 5; l++) {
            k = labels[l] " " benches[b]
            if (!(k in v)) continue
            n = split(v[k], x, " ")
            for (i = 2; i <= n; i++) { t = x[i]; j = i - 1; while (j > 0 && x[j] > t) { x[j+1] = x[j]; j-- } x[j+1] = t }
            med[k] = (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
            mn[k] = x[1]
            printf "%-14s %-10s %12.4f %12.4f\n", benches[b], labels[l], med[k], mn[k]
        }
        on = "on " benches[b]; off = "off " benches[b]; no = "no-tracer " benches[b]
        if ((off in med) && med[off] > 0 && mn[off] > 0)
            printf "%-14s on/off     %12.3f %12.3f\n", benches[b], med[on] / med[off], mn[on] / mn[off]
        bon = "before-on " benches[b]; boff = "before-off " benches[b]
        if ((boff in med) && med[boff] > 0 && mn[boff] > 0)
            printf "%-14s before     %12.3f %12.3f\n", benches[b], med[bon] / med[boff], mn[bon] / mn[boff]
        if ((no in med) && med[no] > 0 && mn[no] > 0)
            printf "%-14s off/none   %12.3f %12.3f\n", benches[b], med[off] / med[no], mn[off] / mn[no]
    }
    print "# pingpong: one-way us; allreduce: us per call; sor, gj: seconds of the whole solve"
}' "$out"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"

#!/bin/sh
# trace_overhead.sh - what tern's tracer costs (docs/TRACING.md): an 8-byte MPI ping-pong
# (one-way latency) and an 8-byte MPI_Allreduce at 2 ranks, with tracing off and on in a
# build with the tracer, and off in a build without it (cmake -DTERN_TRACING=OFF) when
# given. The configurations alternate, REPEAT times each; each line is the median over
# repeats of the fastest trial. On a loaded machine compare only the ratios of one run.
#
#   bench/trace_overhead.sh BUILD [BUILD_WITHOUT_TRACER]     (REPEAT=5 by default)
set -eu
build=${1:?usage: trace_overhead.sh BUILD [BUILD_WITHOUT_TRACER]}
plain=${2:-}
repeat=${REPEAT:-5}
tdir=$(mktemp -d "${TMPDIR:-/tmp}/tern-trace-bench.XXXXXX")
out=$(mktemp "${TMPDIR:-/tmp}/tern-trace-bench-out.XXXXXX")
trap 'rm -rf "$tdir" "$out"' EXIT

# one BUILD LABEL on|off: append "label bench value" lines
one() {
    b=$1 label=$2 mode=$3
    if [ "$mode" = on ]; then set -- env TERN_TRACE="$tdir"; else set -- env -u TERN_TRACE; fi
    pp=$("$@" "$b/bin/ternrun" -n 2 "$b/bench/mpi_pingpong" -s 8 -t 5 -i 20000 --only pingpong \
         --csv | awk -F, '$2 == "pingpong" { print $8 }')
    ar=$("$@" "$b/bin/ternrun" -n 2 "$b/bench/mpi_coll" -o allreduce -s 8 -t 5 -i 5000 --csv |
         awk -F, '$2 == "allreduce" { print $8 }')
    echo "$label pingpong $pp" >>"$out"
    echo "$label allreduce $ar" >>"$out"
    rm -f "$tdir"/tern-trace.*
}

i=0
while [ $i -lt "$repeat" ]; do
    [ -n "$plain" ] && one "$plain" no-tracer off
    one "$build" off off
    one "$build" on on
    i=$((i + 1))
done

awk '
{ v[$1 " " $2] = v[$1 " " $2] " " $3 }
END {
    split("pingpong allreduce", benches, " ")
    split("no-tracer off on", labels, " ")
    printf "%-10s %-10s %12s\n", "bench", "build/run", "median us"
    for (b = 1; b <= 2; b++) {
        for (l = 1; l <= 3; l++) {
            k = labels[l] " " benches[b]
            if (!(k in v)) continue
            n = split(v[k], x, " ")
            # median by insertion sort
            for (i = 2; i <= n; i++) { t = x[i]; j = i - 1; while (j > 0 && x[j] > t) { x[j+1] = x[j]; j-- } x[j+1] = t }
            med[k] = (n % 2) ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
            printf "%-10s %-10s %12.4f\n", benches[b], labels[l], med[k]
        }
        on = "on " benches[b]; off = "off " benches[b]; no = "no-tracer " benches[b]
        if ((off in med) && med[off] > 0) printf "%-10s on/off     %12.3f\n", benches[b], med[on] / med[off]
        if ((no in med) && med[no] > 0) printf "%-10s off/none   %12.3f\n", benches[b], med[off] / med[no]
    }
}' "$out"

#!/usr/bin/env bash
# compare_threads.sh [BUILD] - what thread safety costs one thread, and what the progress
# thread buys, in one run with Open MPI and MPICH alongside.
#
#  1. 8-byte ping-pong on one node (shared memory), rounds interleaved so that load from
#     other work hits every configuration alike: tern native and tern MPI at the default
#     level, at THREAD_MULTIPLE (BENCH_THREAD_MULTIPLE=1: every call takes the lock), with
#     TERN_PROGRESS_THREAD=1; Open MPI (vader) and MPICH at both levels. BASE_LIB=dir adds
#     "base" rows: the same tern binaries run against another build's lib/ (e.g. the
#     library before a change; BASE_BENCH=dir gives that build's bench/ binaries).
#     TCP=1 adds the same 8-byte MPI ping-pong over loopback TCP (tern with
#     TERN_TRANSPORTS=self,tcp, Open MPI's tcp BTL) at both levels ("tcp" rows, with
#     BASE_LIB "base" rows too): the threaded wait must keep tcp's spin-then-sleep policy.
#  2. Overlap over TCP: bench/tern_overlap with and without the progress thread.
# Prints the best t_min and the median of the per-round medians (microseconds).
set -euo pipefail
cd "$(dirname "$0")/.."
B=${1:-build}
ROUNDS=${ROUNDS:-5}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cmake --build "$B" --target tern_pingpong tern_overlap ternrun tern_mpi >/dev/null
"$B/bin/terncc" -O2 -Ibench bench/mpi_pingpong.c -o "$TMP/pp.tern"
have() { command -v "$1" >/dev/null 2>&1; }
have mpicc.openmpi && mpicc.openmpi -std=gnu11 -O2 -Ibench bench/mpi_pingpong.c -o "$TMP/pp.ompi"
have mpicc.mpich && mpicc.mpich -std=gnu11 -O2 -Ibench bench/mpi_pingpong.c -o "$TMP/pp.mpich"

PP=(-s 8 -t 5 --only pingpong)
TR=("$B/bin/ternrun" -n 2)
run() { # label, then the command
    local label=$1
    shift
    "$@" 2>/dev/null | awk -v l="$label" '$1 == 8 { print l "|" $3 "|" $4 }' >>"$TMP/pp.txt" || true
}
echo "# load average $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine distorts these)"
for r in $(seq "$ROUNDS"); do
    if [ -n "${BASE_LIB:-}" ]; then
        bb=${BASE_BENCH:-$B/bench}
        run "base   tern native" env LD_LIBRARY_PATH="$BASE_LIB" "${TR[@]}" "$bb/tern_pingpong" "${PP[@]}"
        run "base   tern MPI" env LD_LIBRARY_PATH="$BASE_LIB" "${TR[@]}" "$bb/mpi_pingpong" "${PP[@]}"
    fi
    run "tern native" "${TR[@]}" "$B/bench/tern_pingpong" "${PP[@]}"
    run "tern native MULTIPLE" env BENCH_THREAD_MULTIPLE=1 "${TR[@]}" "$B/bench/tern_pingpong" "${PP[@]}"
    run "tern native progress-thread" env TERN_PROGRESS_THREAD=1 "${TR[@]}" "$B/bench/tern_pingpong" "${PP[@]}"
    run "tern MPI" "${TR[@]}" "$TMP/pp.tern" "${PP[@]}"
    run "tern MPI MULTIPLE" env BENCH_THREAD_MULTIPLE=1 "${TR[@]}" "$TMP/pp.tern" "${PP[@]}"
    if [ -x "$TMP/pp.ompi" ]; then
        run "Open MPI" mpirun.openmpi --mca btl self,vader -n 2 "$TMP/pp.ompi" "${PP[@]}"
        run "Open MPI MULTIPLE" mpirun.openmpi --mca btl self,vader -x BENCH_THREAD_MULTIPLE=1 -n 2 "$TMP/pp.ompi" "${PP[@]}"
    fi
    if [ "${TCP:-0}" = 1 ]; then
        TT=(-x TERN_TRANSPORTS=self,tcp)
        if [ -n "${BASE_LIB:-}" ]; then
            run "base   tern MPI tcp" env LD_LIBRARY_PATH="$BASE_LIB" "${TR[@]}" -x LD_LIBRARY_PATH "${TT[@]}" "$TMP/pp.tern" "${PP[@]}"
            run "base   tern MPI MULTIPLE tcp" env BENCH_THREAD_MULTIPLE=1 LD_LIBRARY_PATH="$BASE_LIB" "${TR[@]}" -x LD_LIBRARY_PATH "${TT[@]}" "$TMP/pp.tern" "${PP[@]}"
        fi
        run "tern MPI tcp" "${TR[@]}" "${TT[@]}" "$TMP/pp.tern" "${PP[@]}"
        run "tern MPI MULTIPLE tcp" env BENCH_THREAD_MULTIPLE=1 "${TR[@]}" "${TT[@]}" "$TMP/pp.tern" "${PP[@]}"
        if [ -x "$TMP/pp.ompi" ]; then
            OT=(--mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include lo)
            run "Open MPI tcp" mpirun.openmpi "${OT[@]}" -n 2 "$TMP/pp.ompi" "${PP[@]}"
            run "Open MPI MULTIPLE tcp" mpirun.openmpi "${OT[@]}" -x BENCH_THREAD_MULTIPLE=1 -n 2 "$TMP/pp.ompi" "${PP[@]}"
        fi
    fi
    if [ -x "$TMP/pp.mpich" ]; then
        run "MPICH" mpiexec.mpich -n 2 "$TMP/pp.mpich" "${PP[@]}"
        run "MPICH MULTIPLE" mpiexec.mpich -genv BENCH_THREAD_MULTIPLE 1 -n 2 "$TMP/pp.mpich" "${PP[@]}"
    fi
done
echo "# 8-byte ping-pong, shared memory (tcp rows: loopback TCP), $ROUNDS rounds: one-way latency in us"
printf '%-32s %10s %12s\n' config best_t_min median_t_med
awk -F'|' '{ n[$1]++; if (!($1 in mn) || $2 < mn[$1]) mn[$1] = $2; v[$1, n[$1]] = $3 }
    END { for (k in n) { m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i];
            for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
            printf "%-32s %10.3f %12.3f\n", k, mn[k], a[int((m + 1) / 2)] } }' "$TMP/pp.txt" | sort

echo "# overlap over TCP (16 MiB, rank 0 computes C ms between irecv and wait)"
for pt in 0 1; do
    "$B/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,tcp -x TERN_PROGRESS_THREAD=$pt \
        "$B/bench/tern_overlap" -t 7 0 20 50 100
done

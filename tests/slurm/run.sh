#!/bin/sh
# run.sh - tern jobs under Slurm: start a one-node cluster (munged, slurmctld, slurmd)
# from tests/slurm/slurm.conf.in in a temporary directory, run tern programs with
# `srun --mpi=pmi2`, check them, and stop the daemons again.
#
#   sh tests/slurm/run.sh BINDIR      (BINDIR holds mp_pingpong and mp_stress)
#
# Slurm and munge are installed (Debian: slurm-wlm, munge) only when running as root
# with CI=true; elsewhere a missing Slurm is a SKIP (exit 77) with the reason, and so
# is a machine where the daemons cannot start or the node never comes up (a container
# without the privileges, say): tern has not run yet then.
#
# The daemons run in the foreground as children of this script, their pids written to
# $D/pids; they are stopped whatever happens. The script has its own time limit,
# TERN_SLURM_TIMEOUT seconds (default 240, below ctest's 300), kept by a supervisor
# outside its process tree (this script run as `run.sh --supervise PID DIR DEADLINE`): at
# the deadline it sends SIGTERM (whose trap stops the daemons), 15 s later SIGKILL, and
# when the script is gone without having cleaned up (SIGKILL from ctest or anyone) it
# kills what the script started itself (kill_started below): never anything by name.
set -u

# kill_started DIR [PID]: SIGTERM, then SIGKILL, to the pids in DIR/pids, their
# descendants (children collected before their parents die), and the processes whose
# environment names this run's SLURM_CONF=DIR/slurm.conf (slurmstepd and the job's tasks,
# which Slurm detaches from slurmd): every one started by this run, none by name.
# The calling shell and PID (the script, for the supervisor) are spared.
kill_started() {
    all=""
    if [ -s "$1/pids" ]; then
        for p in $(cat "$1/pids"); do
            all="$all $(descendants "$p") $p"
        done
    fi
    for p in $(grep -l -z -x -F "SLURM_CONF=$1/slurm.conf" /proc/[0-9]*/environ 2>/dev/null |
               sed 's|^/proc/\([0-9]*\)/environ$|\1|'); do
        [ "$p" = $$ ] || [ "$p" = "${2:-}" ] || all="$all $p"
    done
    for p in $all; do kill "$p" 2>/dev/null; done
    n=0
    while [ $n -lt 20 ]; do
        alive=""
        for p in $all; do kill -0 "$p" 2>/dev/null && alive="$alive $p"; done
        [ -z "$alive" ] && return 0
        sleep 0.1
        n=$((n + 1))
    done
    for p in $all; do kill -9 "$p" 2>/dev/null; done
    return 0
}
descendants() {
    for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
        descendants "$c"
        echo "$c"
    done
}

if [ "${1:-}" = --supervise ]; then
    script=$2 dir=$3 deadline=$4
    echo $$ >"$dir/supervisor.pid"
    termed=0
    while kill -0 "$script" 2>/dev/null && [ -d "$dir" ]; do
        now=$(date +%s)
        if [ $termed = 0 ] && [ "$now" -ge "$deadline" ]; then
            echo "FAIL: run.sh timed out (TERN_SLURM_TIMEOUT)" >"$dir/timed_out"
            kill -TERM "$script" 2>/dev/null
            termed=1
        elif [ $termed = 1 ] && [ "$now" -ge $((deadline + 15)) ]; then
            kill -KILL "$script" 2>/dev/null
        fi
        sleep 1
    done
    # The script cleans up after itself and removes DIR; if DIR is still here it was
    # killed before it could: stop what it started.
    if [ -d "$dir" ]; then
        kill_started "$dir" "$script"
        rm -rf "$dir"
    fi
    exit 0
fi

BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)
TIMEOUT=${TERN_SLURM_TIMEOUT:-240}

skip() {
    echo "SKIP: $*"
    exit 77
}

have_slurm() {
    command -v srun >/dev/null 2>&1 && command -v slurmctld >/dev/null 2>&1 &&
        command -v slurmd >/dev/null 2>&1 && command -v munged >/dev/null 2>&1
}
if ! have_slurm; then
    [ "$(id -u)" = 0 ] || skip "Slurm is not installed (and installing it needs root)"
    [ "${CI:-}" = true ] || skip "Slurm is not installed (installed only with CI=true: apt-get install slurm-wlm munge)"
    command -v apt-get >/dev/null 2>&1 || skip "Slurm is not installed and there is no apt-get"
    echo "installing slurm-wlm and munge"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1 ||
        { apt-get update -q >/dev/null 2>&1 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >/dev/null 2>&1; } ||
        skip "apt-get install slurm-wlm munge failed"
    have_slurm || skip "slurm-wlm installed but srun/slurmctld/slurmd/munged not found"
fi
[ "$(id -u)" = 0 ] || skip "the test cluster runs its daemons as root"

D=$(mktemp -d /tmp/tern-slurm.XXXXXX) || exit 1
chmod 700 "$D"
mkdir -p "$D/state" "$D/spool"
HOST=$(hostname -s)
# Ports of our own, so a Slurm already on the machine is not disturbed.
BASE=$((20000 + $$ % 20000))
export SLURM_CONF="$D/slurm.conf"
sed -e "s|@DIR@|$D|g" -e "s|@HOST@|$HOST|g" -e "s|@CTLDPORT@|$BASE|g" \
    -e "s|@DPORT@|$((BASE + 1))|g" "$HERE/slurm.conf.in" >"$SLURM_CONF"

# The supervisor: a session of its own, and not our descendant (the subshell that starts
# it exits at once), so that neither a kill of our process group nor ctest's timeout,
# which kills the test's whole process tree, reaches it.
(setsid sh "$HERE/run.sh" --supervise $$ "$D" $(($(date +%s) + TIMEOUT)) </dev/null \
    >/dev/null 2>&1 &)

stop_daemons() {
    kill_started "$D"
    [ -s "$D/timed_out" ] && cat "$D/timed_out" >&2
    [ -s "$D/supervisor.pid" ] && kill "$(cat "$D/supervisor.pid")" 2>/dev/null
    rm -rf "$D"
}
trap stop_daemons EXIT
trap 'exit 1' INT TERM

# run CMD...: CMD in the background, its pid in $D/pids (stopped on exit), waited for
# with `wait`, which a signal interrupts so that the traps run at once.
run() {
    "$@" &
    echo $! >>"$D/pids"
    wait $!
}
# start NAME CMD...: a daemon in the foreground as our child, its pid in $D/pids.
start() {
    name=$1
    shift
    "$@" >"$D/$name.out" 2>&1 &
    echo $! >>"$D/pids"
    eval "${name}_pid=$!"
}

fail() {
    echo "FAIL: $*" >&2
    for f in "$D"/out "$D"/err "$D"/slurmctld.log "$D"/slurmd.log; do
        [ -s "$f" ] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }
    done
    exit 1
}

dd if=/dev/urandom of="$D/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$D/munge.key"
start munged munged --foreground --force --key-file="$D/munge.key" --socket="$D/munge.sock" \
    --pid-file="$D/munged.pid" --log-file="$D/munged.log" --seed-file="$D/munged.seed"
i=0
until [ -S "$D/munge.sock" ]; do
    kill -0 "$munged_pid" 2>/dev/null ||
        skip "munged does not start here: $(tail -n 1 "$D/munged.out")"
    i=$((i + 1))
    [ $i -lt 100 ] || skip "munged did not open its socket within 10 s"
    sleep 0.1
done
start slurmctld slurmctld -D -f "$SLURM_CONF"
start slurmd slurmd -D -f "$SLURM_CONF" -N "$HOST"

# Wait (at most 30 s) for the node to be ready; a daemon that cannot run here (it died,
# or the node never comes up) is a SKIP with its last words: tern has not run yet.
i=0
until sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; do
    for d in slurmctld slurmd; do
        eval "p=\$${d}_pid"
        kill -0 "$p" 2>/dev/null ||
            skip "$d does not start here:" \
                "$(tail -n 2 "$D/$d.out" "$D/$d.log" 2>/dev/null | tr '\n' ' ')"
    done
    i=$((i + 1))
    [ $i -lt 150 ] || skip "the Slurm node never became idle: $(sinfo -h -N -o '%T %E' 2>&1)"
    sleep 0.2
done
srun --mpi=list 2>&1 | grep -q pmi2 || fail "srun has no pmi2 plugin: $(srun --mpi=list 2>&1)"

# 3 ranks on 2 CPUs; each program checks rank, size and every message itself.
run srun --mpi=pmi2 -N 1 -n 3 --overcommit -t 2 "$BIN/mp_stress" >"$D/out" 2>"$D/err" ||
    fail "srun --mpi=pmi2 -n 3 mp_stress failed"
n=$(grep -c '^stress: rank [0-2] sent' "$D/out" "$D/err" | awk -F: '{s += $NF} END {print s}')
[ "$n" = 3 ] || fail "wanted 3 reports from mp_stress, got $n"
run env TERN_DEBUG=1 srun --mpi=pmi2 -N 1 -n 3 --overcommit -t 2 "$BIN/mp_pingpong" \
    >"$D/out" 2>"$D/err" ||
    fail "srun --mpi=pmi2 -n 3 mp_pingpong failed"
grep -q 'transport shm serves 2 peer' "$D/err" || fail "ranks on one node did not use shm"
# Slurm's pmi2 plugin also answers PMI-1 commands, PMI_process_mapping included.
grep -m1 'process mapping' "$D/err" || echo "(no PMI_process_mapping: nodes found by host name)"
echo "ok: tern under Slurm (srun --mpi=pmi2)"
exit 0

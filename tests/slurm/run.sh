#!/bin/sh
# run.sh - tern jobs under Slurm: start a one-node cluster (munged, slurmctld, slurmd)
# from tests/slurm/slurm.conf.in in a temporary directory, run tern programs with
# `srun --mpi=pmi2`, check them, and stop the daemons again.
#
#   sh tests/slurm/run.sh BINDIR      (BINDIR holds mp_pingpong and mp_stress)
#
# Slurm and munge are installed (Debian: slurm-wlm, munge) only when running as root
# with CI=true; elsewhere a missing Slurm is a SKIP (exit 77) with the reason.
set -u
BIN=$1
HERE=$(cd "$(dirname "$0")" && pwd)

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

stop_daemons() {
    for f in slurmd slurmctld munged; do
        [ -s "$D/$f.pid" ] && kill "$(cat "$D/$f.pid")" 2>/dev/null
    done
    sleep 0.5
    for f in slurmd slurmctld munged; do
        [ -s "$D/$f.pid" ] && kill -9 "$(cat "$D/$f.pid")" 2>/dev/null
    done
    rm -rf "$D"
}
trap stop_daemons EXIT
trap 'exit 1' INT TERM

fail() {
    echo "FAIL: $*" >&2
    for f in "$D"/out "$D"/err "$D"/slurmctld.log "$D"/slurmd.log; do
        [ -s "$f" ] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }
    done
    exit 1
}

dd if=/dev/urandom of="$D/munge.key" bs=1024 count=1 2>/dev/null
chmod 400 "$D/munge.key"
munged --force --key-file="$D/munge.key" --socket="$D/munge.sock" --pid-file="$D/munged.pid" \
    --log-file="$D/munged.log" --seed-file="$D/munged.seed" >"$D/munged.out" 2>&1 ||
    skip "munged does not start here: $(tail -n 1 "$D/munged.out")"
slurmctld -f "$SLURM_CONF" >"$D/ctld.out" 2>&1 || fail "slurmctld did not start"
slurmd -f "$SLURM_CONF" -N "$HOST" >"$D/d.out" 2>&1 || fail "slurmd did not start"

# Wait (at most 30 s) for the node to be ready.
i=0
until sinfo -h -N -o '%T' 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; do
    i=$((i + 1))
    [ $i -lt 150 ] || fail "the node never became idle: $(sinfo -h -N -o '%T %E' 2>&1)"
    sleep 0.2
done
srun --mpi=list 2>&1 | grep -q pmi2 || fail "srun has no pmi2 plugin: $(srun --mpi=list 2>&1)"

# 3 ranks on 2 CPUs; each program checks rank, size and every message itself.
srun --mpi=pmi2 -N 1 -n 3 --overcommit -t 2 "$BIN/mp_stress" >"$D/out" 2>"$D/err" ||
    fail "srun --mpi=pmi2 -n 3 mp_stress failed"
n=$(grep -c '^stress: rank [0-2] sent' "$D/out" "$D/err" | awk -F: '{s += $NF} END {print s}')
[ "$n" = 3 ] || fail "wanted 3 reports from mp_stress, got $n"
TERN_DEBUG=1 srun --mpi=pmi2 -N 1 -n 3 --overcommit -t 2 "$BIN/mp_pingpong" >"$D/out" 2>"$D/err" ||
    fail "srun --mpi=pmi2 -n 3 mp_pingpong failed"
grep -q 'transport shm serves 2 peer' "$D/err" || fail "ranks on one node did not use shm"
# Slurm's pmi2 plugin also answers PMI-1 commands, PMI_process_mapping included.
grep -m1 'process mapping' "$D/err" || echo "(no PMI_process_mapping: nodes found by host name)"
echo "ok: tern under Slurm (srun --mpi=pmi2)"
exit 0

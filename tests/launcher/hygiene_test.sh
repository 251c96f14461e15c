#!/bin/sh
# hygiene_test.sh - ending a job of real tern ranks leaves nothing behind (one host; the
# netns cases of tests/multihost do the same across hosts).
#
#   sh hygiene_test.sh CASE TERNRUN DIAG_BLOCK
#
# The ranks are tern processes blocked in a receive (diag_block deadlock: asleep on the
# shm futex or in epoll for tcp), which is where a hung job's ranks are.
# signals   SIGINT, SIGTERM, SIGHUP of ternrun, on shm and on tcp: exit 128+sig, one line,
#           every rank gone, no /dev/shm/tern-* entry and no new socket file.
# rootkill  SIGKILL of ternrun: every rank exits on its own within a second, through the
#           parent-death signal, and again with the parent-death signal cancelled
#           (DIAG_NO_PDEATHSIG=1), through the library noticing its PMI socket closed.
# tolerated after a tolerated failure (diag_block tolerate: rank 1 died, the others wait
#           forever), SIGINT, SIGTERM, SIGHUP and --timeout still end the job within a
#           second (the exit code stays the first failure's, 128+SIGKILL).
# session   each rank leads a session of its own (TERN_RANK_SESSION, the default), so the
#           kernel's autogroup gives it a CPU share of its own; SIGTSTP of ternrun stops
#           ternrun and every rank, SIGCONT continues them all, SIGTERM of a stopped job
#           still ends it within a second; TERN_RANK_SESSION=0 keeps ranks in ternrun's
#           session.
set -u
CASE=$1
T=$2
BIN=$3
D=$(mktemp -d "${TMPDIR:-/tmp}/ternrun-hygiene.XXXXXX") || exit 1
pids=
tp=
cleanup() {
    for p in $pids $tp; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$D"
}
trap cleanup EXIT

fail() {
    echo "FAIL [$CASE]: $*" >&2
    for f in "$D"/out "$D"/err; do
        [ -s "$f" ] && { echo "--- $f" >&2; head -c 4000 "$f" >&2; }
    done
    exit 1
}

# stat_field PID N: field N of /proc/PID/stat (3 state, 6 session), counted after comm.
stat_field() { sed 's/^.*) //' /proc/$1/stat 2>/dev/null | cut -d' ' -f$(($2 - 2)); }
# states_within MS STATE PID...: every PID is in STATE (T, or S/R for "running") within MS.
states_within() {
    ms=$1 want=$2
    shift 2
    t0=$(now_ms)
    for p in "$@"; do
        while :; do
            s=$(stat_field $p 3)
            case "$want:$s" in T:T | S:S | S:R | S:D) break ;; esac
            [ $(($(now_ms) - t0)) -lt $ms ] || fail "pid $p is in state '$s', wanted $want"
            sleep 0.01
        done
    done
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }
alive() { [ -n "$1" ] && kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' /proc/$1/status 2>/dev/null; }
. "$(dirname "$0")/../shm_left.sh" # shm_list, shm_left
# Socket files (bound Unix sockets) anywhere a job could make one.
sock_list() { find /tmp /dev/shm /run "${TMPDIR:-/tmp}" -xdev -type s 2>/dev/null | sort -u; }

# start NRANKS [VAR=value...]: a deadlocked job in the background; sets tp and pids.
start() {
    n=$1
    shift
    env "$@" "$T" -n $n "$BIN" deadlock >"$D/out" 2>"$D/err" &
    tp=$!
    i=0
    while [ "$(grep -c '^diag-blocking' "$D/out" 2>/dev/null)" != "$n" ]; do
        i=$((i + 1))
        [ $i -lt 400 ] || fail "ranks did not start"
        sleep 0.05
    done
    sleep 0.3 # into their receives, past spinning: asleep
    # ternrun's children but its janitor (ternrun-clean), which outlives it on purpose.
    pids=
    for p in $(cat /proc/$tp/task/*/children 2>/dev/null); do
        [ "$(cat /proc/$p/comm 2>/dev/null)" = ternrun-clean ] || pids="$pids $p"
    done
    [ "$(echo $pids | wc -w)" = "$n" ] || fail "found ranks '$pids', wanted $n"
}

# gone_within MS: every rank in $pids is gone within MS milliseconds; prints the time.
gone_within() {
    t0=$(now_ms)
    while :; do
        left=""
        for p in $pids; do alive $p && left="$left $p"; done
        [ -z "$left" ] && break
        [ $(($(now_ms) - t0)) -lt $1 ] || fail "ranks$left still alive $1 ms later"
        sleep 0.01
    done
    echo "$CASE: ranks gone $(($(now_ms) - t0)) ms after $2"
}

nothing_left() {
    shm_left >"$D/shm_after"
    new=$(comm -13 "$D/shm_before" "$D/shm_after")
    sock_list >"$D/sock_after"
    new="$new$(comm -13 "$D/sock_before" "$D/sock_after")"
    if [ -n "$new" ]; then
        # Other jobs on the machine (not under this ctest) hold a segment for a moment
        # during their start-up; a leftover stays.
        sleep 1
        shm_left >"$D/shm_after"
        new=$(comm -13 "$D/shm_before" "$D/shm_after")
        [ -z "$new" ] || fail "left behind in /dev/shm: $new"
        sock_list >"$D/sock_after"
        new=$(comm -13 "$D/sock_before" "$D/sock_after")
    fi
    [ -z "$new" ] || fail "socket files left behind: $new"
}

shm_list >"$D/shm_before"
sock_list >"$D/sock_before"

case "$CASE" in
signals)
    sigs="INT TERM HUP"
    # Under nohup SIGHUP is ignored, and ternrun keeps ignoring it on purpose.
    ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
    [ $((0x${ign:-0} & 1)) = 0 ] || sigs="INT TERM"
    for tr in self,shm self,tcp; do
        for sig in $sigs; do
            start 3 TERN_TRANSPORTS=$tr
            kill -$sig $tp
            wait $tp
            rc=$?
            tp=
            case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
            [ "$rc" = $want ] || fail "SIG$sig ($tr): exit code $rc, wanted $want"
            [ "$(grep -c '^ternrun: ' "$D/err")" = 1 ] || fail "SIG$sig ($tr): not one 'ternrun:' line"
            grep -q "^ternrun: received SIG$sig; ending the job$" "$D/err" || fail "SIG$sig: no line"
            gone_within 1000 "SIG$sig to ternrun ($tr)"
            nothing_left
        done
    done
    ;;
session)
    for tr in self,shm self,tcp; do
        start 3 TERN_TRANSPORTS=$tr
        for p in $pids; do
            [ "$(stat_field $p 6)" = "$p" ] || fail "$tr: rank $p is in session $(stat_field $p 6), not its own"
        done
        kill -TSTP $tp
        states_within 1000 T $tp $pids
        kill -CONT $tp
        states_within 1000 S $tp $pids
        echo "$CASE: $tr: ranks in sessions of their own, stopped and continued with ternrun"
        kill -TSTP $tp
        states_within 1000 T $tp $pids
        kill -TERM $tp
        kill -CONT $tp # as a shell's kill does after a signal to a stopped job
        wait $tp
        rc=$?
        tp=
        [ "$rc" = 143 ] || fail "SIGTERM of a stopped job ($tr): exit code $rc, wanted 143"
        gone_within 1000 "SIGTERM to a stopped job ($tr)"
        nothing_left
        start 2 TERN_TRANSPORTS=$tr TERN_RANK_SESSION=0
        for p in $pids; do
            [ "$(stat_field $p 6)" = "$(stat_field $tp 6)" ] || fail "$tr: TERN_RANK_SESSION=0: rank $p in session $(stat_field $p 6), ternrun in $(stat_field $tp 6)"
        done
        kill -TERM $tp
        wait $tp
        tp=
        gone_within 1000 "SIGTERM ($tr, TERN_RANK_SESSION=0)"
    done
    ;;
rootkill)
    for tr in self,shm self,tcp; do
        for nopd in 0 1; do
            start 3 TERN_TRANSPORTS=$tr DIAG_NO_PDEATHSIG=$nopd
            kill -9 $tp
            wait $tp 2>/dev/null
            tp=
            # The bound is the issue's one second plus slack for a loaded machine.
            gone_within 1500 "SIGKILL of ternrun ($tr, parent-death signal $([ $nopd = 1 ] && echo cancelled || echo set))"
            nothing_left
        done
    done
    ;;
tolerated)
    sigs="INT TERM HUP"
    ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
    [ $((0x${ign:-0} & 1)) = 0 ] || sigs="INT TERM"
    for tr in self,shm self,tcp; do
        for how in $sigs timeout; do
            to=
            [ $how = timeout ] && to="--timeout 4"
            # The last job's err would satisfy the wait below if read before this job's
            # shell truncates it (seen under ASan, whose slow start let the signal come
            # before the failure): start from no file.
            rm -f "$D/err"
            env TERN_TRANSPORTS=$tr "$T" $to -n 3 "$BIN" tolerate >"$D/out" 2>"$D/err" &
            tp=$!
            i=0
            until grep -q 'rank 1 .*killed by signal 9' "$D/err" 2>/dev/null; do
                i=$((i + 1))
                [ $i -lt 400 ] || fail "$tr: rank 1's death was not reported"
                sleep 0.05
            done
            pids=$(cat /proc/$tp/task/*/children 2>/dev/null)
            t0=$(now_ms)
            if [ $how = timeout ]; then
                # The report takes up to 3 s after the 4 s; then the job must end at once.
                bound=9000
            else
                sleep 0.3
                kill -$how $tp
                bound=1000
            fi
            while alive $tp; do
                [ $(($(now_ms) - t0)) -lt $bound ] || fail "$how ($tr): ternrun still running $bound ms later"
                sleep 0.01
            done
            wait $tp
            rc=$?
            tp=
            [ "$rc" = 137 ] || fail "$how ($tr): exit code $rc, wanted 137 (the first failure's)"
            if [ $how = timeout ]; then
                grep -q '^ternrun: job timed out after 4 s; ending it$' "$D/err" || fail "$tr: no timeout line"
            else
                grep -q "^ternrun: received SIG$how; ending the job$" "$D/err" || fail "SIG$how ($tr): no line"
            fi
            gone_within 1000 "$how after a tolerated failure ($tr)"
            nothing_left
        done
    done
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok [$CASE]"

#!/bin/sh
# report_test.sh - the hang report of ternrun (tools/ternrun/report.c, src/core/diag.c).
#
#   sh report_test.sh CASE TERNRUN DIAG_BLOCK
#
# timeout  a deadlocked job (ranks 0 and 1 receive from each other, rank 2 waits in an
#          allreduce) under --timeout: exit 124, the one "timed out" line, and for every
#          rank its blocked-in line (operation, peer, tag, communicator, bytes) and a stack
#          naming the test's own functions and main; then nothing is left running.
# tcp      the same deadlock over tcp.
# usr1     kill -USR1 of ternrun while rank 0 waits for rank 1 and rank 1 runs its own
#          code: the report comes, the job goes on and completes with exit 0.
set -u
CASE=$1
T=$2
BIN=$3
D=$(mktemp -d "${TMPDIR:-/tmp}/ternrun-report.XXXXXX") || exit 1
tp=
cleanup() {
    [ -n "$tp" ] && kill -9 "$tp" 2>/dev/null
    rm -rf "$D"
}
trap cleanup EXIT

fail() {
    echo "FAIL [$CASE]: $*" >&2
    for f in "$D"/out "$D"/err; do
        [ -s "$f" ] && { echo "--- $f" >&2; head -c 6000 "$f" >&2; }
    done
    exit 1
}

has() { grep -Eq "$1" "$D/err" || fail "the report lacks /$1/"; }

# The block of rank $1 names function $2 in its stack, above main.
stack_has() {
    sed -n "/^\[$1\]   #/p" "$D/err" >"$D/stack$1"
    grep -Eq "^\[$1\]   #[0-9 ]+ $2 at .*diag_block\.c:[0-9]+" "$D/stack$1" ||
        fail "rank $1's stack does not name $2 with file and line"
    grep -Eq "^\[$1\]   #[0-9 ]+ main at .*diag_block\.c:[0-9]+" "$D/stack$1" ||
        fail "rank $1's stack does not name main"
}

deadlock() {
    start=$(date +%s)
    env "$@" "$T" -n 3 --timeout 3 "$BIN" deadlock >"$D/out" 2>"$D/err"
    rc=$?
    took=$(($(date +%s) - start))
    [ "$rc" = 124 ] || fail "exit code $rc, wanted 124"
    [ $took -lt 20 ] || fail "the timed-out job took $took s to end"
    n=$(grep -c '^ternrun: ' "$D/err")
    [ "$n" = 1 ] || fail "$n 'ternrun:' lines, wanted the one about the timeout"
    has '^ternrun: job timed out after 3 s; ending it$'
    has '^tern report: 3 rank\(s\), the job timed out$'
    has '^\[0\] pid [0-9]+ on [^:]+: blocked [0-9.]+ s in a receive from rank 1, tag 10, communicator world, up to 16 bytes$'
    has '^\[1\] pid [0-9]+ on [^:]+: blocked [0-9.]+ s in a receive from rank 0, tag 11, communicator world, up to 16 bytes$'
    has '^\[2\] pid [0-9]+ on [^:]+: blocked [0-9.]+ s in allreduce on communicator world \(3 ranks\)$'
    # The allreduce shows whom it waits for.
    has '^\[2\]   pending: receive from rank [01], collective tag [0-9]+, communicator world \(collective\), 8 bytes$'
    stack_has 0 diag_wait_for_partner
    stack_has 1 diag_wait_for_partner
    stack_has 2 diag_wait_in_allreduce
    grep -Eq '^\[0\]   #[0-9 ]+ tern_recv ' "$D/err" || fail "rank 0's stack lacks tern_recv"
    # The report comes before the job is ended.
    [ "$(grep -n 'tern report' "$D/err" | cut -d: -f1)" -lt "$(grep -n '^ternrun: ' "$D/err" | cut -d: -f1)" ] ||
        fail "the report came after the job was ended"
}

case "$CASE" in
timeout)
    # Messages, not the collectives' shared region (coll_shm.c), so that rank 2's
    # allreduce has a pending receive to show (over tcp the region is never used).
    deadlock TERN_COLL_SHM_MAX=0
    ;;
tcp)
    deadlock TERN_TRANSPORTS=self,tcp
    ;;
usr1)
    "$T" -n 2 --timeout 60 "$BIN" wait "$D/go" >"$D/out" 2>"$D/err" &
    tp=$!
    i=0
    while [ "$(grep -c '^diag-blocking' "$D/out" 2>/dev/null)" != 2 ]; do
        i=$((i + 1))
        [ $i -lt 400 ] || fail "ranks did not start"
        sleep 0.05
    done
    sleep 0.5 # rank 0 is in its receive by now (it printed before calling it)
    kill -USR1 $tp
    i=0
    while ! grep -q '^\[1\]   #' "$D/err" 2>/dev/null; do
        i=$((i + 1))
        [ $i -lt 200 ] || fail "no report 10 s after SIGUSR1"
        sleep 0.05
    done
    sleep 0.2
    kill -0 $tp 2>/dev/null || fail "the job ended after SIGUSR1"
    grep -q '^diag-done' "$D/out" && fail "the job finished before it was allowed to"
    touch "$D/go"
    wait $tp
    rc=$?
    tp=
    [ "$rc" = 0 ] || fail "exit code $rc after the report, wanted 0"
    [ "$(grep -c '^diag-done' "$D/out")" = 2 ] || fail "the ranks did not complete"
    grep -q '^ternrun: ' "$D/err" && fail "a 'ternrun:' line in a job that went well"
    has '^tern report: 2 rank\(s\), asked by SIGUSR1; the job goes on$'
    has '^\[0\] pid [0-9]+ on [^:]+: blocked [0-9.]+ s in a receive from rank 1, tag 12, communicator world, up to 16 bytes$'
    has '^\[1\] pid [0-9]+ on [^:]+: not in a tern call \(running its own code\)$'
    stack_has 0 diag_wait_for_partner
    stack_has 1 diag_poll_for_file
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok [$CASE]"

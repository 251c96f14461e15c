#!/bin/sh
# hier_fail_test.sh - hierarchical collectives (TERN_COLL_HIER=1) when a rank dies, across
# "hosts" started here by the launch agent `env TERNHOST={host}` (shm inside a host, tcp
# over loopback between hosts; no privileges needed). Layouts 2+1+1 (the victim alone on
# its host) and 2+2 (the victim shares a host): the survivors must hear of the death
# within the bound and never hang, whether it comes before, during or after their lazy
# build of the node and leader communicators (mp_hier_fail, delays 0 .. 20 ms), and in
# the middle of a hierarchical collective (mp_peer_fail). Checks that the hierarchical
# path was really taken (the debug line).
#
#   sh hier_fail_test.sh TERNRUN BINDIR
set -u
T=$1
BIN=$2
AG='env TERNHOST={host}'
D=$(mktemp -d "${TMPDIR:-/tmp}/ternrun-hierfail.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT

fail() {
    echo "FAIL: $*" >&2
    for f in "$D"/out "$D"/err; do
        [ -s "$f" ] && { echo "--- $f" >&2; tail -c 3000 "$f" >&2; }
    done
    exit 1
}
run() {
    TERN_COLL_HIER=1 TERN_DEBUG=1 "$T" --launch-agent "$AG" -x TERN_TCP_IF=lo \
        -x TERN_COLL_HIER -x TERN_DEBUG --timeout 60 "$@" >"$D/out" 2>"$D/err"
    rc=$?
}
check() { # expected-rc what
    [ "$rc" = "$1" ] || fail "exit code $rc, wanted $1 ($2)"
    grep '^FAIL' "$D/out" "$D/err" && fail "a survivor's check failed ($2)"
    n=$(grep -c '^mp-done rank' "$D/out")
    [ "$n" = 3 ] || fail "$n survivors finished, wanted 3 ($2)"
    grep -q 'coll: hierarchical collectives on a communicator of 4' "$D/err" ||
        fail "the hierarchical path was not taken ($2)"
    echo "ok: $2:" $(sed -n 's/^rank \([0-9]\): .*after \([0-9.]*\) s.*/r\1=\2s/p' "$D/out")
}

for hosts in fakeA:2,fakeB:1,fakeC:1 fakeA:2,fakeB:2; do
    for delay in 0 2000 20000; do
        MP_FAIL_DELAY_US=$delay run -H $hosts -x MP_FAIL_DELAY_US "$BIN/mp_hier_fail"
        check 137 "mp_hier_fail, kill after $delay us, $hosts"
    done
    MP_FAIL_HOW=exit run -H $hosts -x MP_FAIL_HOW "$BIN/mp_hier_fail"
    check 3 "mp_hier_fail, exit, $hosts"
    for how in kill:137 exit:3; do
        MP_FAIL_HOW=${how%%:*} run -H $hosts -x MP_FAIL_HOW "$BIN/mp_peer_fail"
        check ${how#*:} "mp_peer_fail, ${how%%:*}, $hosts"
    done
done
echo "hier_fail: all passed"

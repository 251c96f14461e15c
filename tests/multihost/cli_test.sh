#!/bin/sh
# cli_test.sh - ternrun's multi-host command line and failure reporting, without a
# network: the launch agent `env TERNHOST={host}` starts each "remote" proxy on this
# machine, so everything but the transport between hosts is exercised.
#
#   sh cli_test.sh TERNRUN MP_PINGPONG
set -u
T=$1
PP=$2
AG='env TERNHOST={host}'
D=$(mktemp -d "${TMPDIR:-/tmp}/ternrun-cli.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT

fail() {
    echo "FAIL: $*" >&2
    for f in "$D"/out "$D"/err; do
        [ -s "$f" ] && { echo "--- $f" >&2; tail -c 3000 "$f" >&2; }
    done
    exit 1
}
run() {
    "$T" "$@" >"$D/out" 2>"$D/err"
    rc=$?
}
expect_rc() { [ "$rc" = "$1" ] || fail "exit code $rc, wanted $1 ($2)"; }
one_line() {
    n=$(grep -c '^ternrun: ' "$D/err")
    [ "$n" = 1 ] || fail "$n 'ternrun:' lines on stderr, wanted exactly 1"
    grep -Eq "$1" "$D/err" || fail "stderr lacks /$1/"
}

# Hostfile errors name file:line and exit 2.
printf 'h1 slots=2\n# fine\nh2 slots=two\n' >"$D/hf"
run --hostfile "$D/hf" true
expect_rc 2 "bad hostfile"
one_line "^ternrun: $D/hf:3: slots= needs a number"
printf 'h1:2\nh$(x)\n' >"$D/hf"
run --hostfile "$D/hf" true
expect_rc 2 "bad host name"
one_line "^ternrun: $D/hf:2: character '\\$' is not allowed"
run --hostfile "$D/nonexistent" true
expect_rc 2 "missing hostfile"
run -H a:2,,b true
expect_rc 2 "empty host in --host"
run -H a:2 -n 3 true
expect_rc 2 "more ranks than slots"
one_line "3 processes but the hosts have only 2 slots"

# Both hostfile forms; -n defaults to the slots; placement by blocks; local ranks.
printf 'fakeA slots=2   # two\nfakeB:1\n\nlocalhost\n' >"$D/hf"
run --hostfile "$D/hf" --launch-agent "$AG" --tag-output \
    sh -c 'echo "$PMI_RANK/$PMI_SIZE $TERN_LOCAL_RANK/$TERN_LOCAL_SIZE ${TERNHOST:-here}"'
expect_rc 0 "hostfile job"
for want in '[0] 0/4 0/2 fakeA' '[1] 1/4 1/2 fakeA' '[2] 2/4 0/1 fakeB' '[3] 3/4 0/1 here'; do
    grep -qxF "$want" "$D/out" || fail "no line '$want'"
done

# -x reaches the ranks of other hosts (through the channel, not the agent's command).
run -H fakeA:1 --launch-agent "$AG" -x TERN_CLI_X=with\ space --env TERN_CLI_Y=y \
    sh -c 'echo "x=$TERN_CLI_X y=$TERN_CLI_Y"'
expect_rc 0 "-x to a remote rank"
grep -qx 'x=with space y=y' "$D/out" || fail "-x/--env did not reach the remote rank"

# The proxy's command line carries nothing of the job.
"$T" -H fakeA:1 --launch-agent "$AG" sh -c 'cat /proc/$PPID/cmdline | tr "\0" " "; echo' \
    >"$D/out" 2>"$D/err"
grep -qx '.*ternrun --proxy ' "$D/out" || fail "proxy command line is not just 'ternrun --proxy'"

# Real traffic: 2 fake hosts x 2 (shm inside, tcp over loopback across).
run -H fakeA:2,fakeB:2 --launch-agent "$AG" -x TERN_TCP_IF=lo --timeout 60 "$PP"
expect_rc 0 "pingpong over 2 fake hosts"

# A rank on a remote host fails: one line naming rank, pid and host.
run -H fakeA:1,fakeB:2 --launch-agent "$AG" sh -c '[ "$PMI_RANK" = 2 ] && exit 3; exec sleep 30'
expect_rc 3 "remote rank exits 3"
one_line '^ternrun: rank 2 \(pid [0-9]+ on fakeB\) exited with code 3$'

# The program is missing on the remote host.
run -H fakeA:1 --launch-agent "$AG" tern-no-such-program
expect_rc 127 "program missing on the remote host"
one_line "^ternrun: cannot find 'tern-no-such-program' on host fakeA"

# The launch agent fails, or is missing.
run -H fakeA:1 --launch-agent 'false {host}' true
expect_rc 1 "agent fails"
one_line '^ternrun: lost the proxy on host fakeA \(its launch agent, pid [0-9]+, exited with code 1\)'
run -H fakeA:1 --launch-agent 'tern-no-such-agent {host}' true
expect_rc 1 "agent missing"
grep -q "cannot run the launch agent 'tern-no-such-agent'" "$D/err" || fail "no reason for the agent"

# A proxy killed mid-job ends the job.
run -H fakeA:1,fakeB:1 --launch-agent "$AG" sh -c \
    '[ "$PMI_RANK" = 1 ] && kill -9 $PPID; exec sleep 30'
expect_rc 1 "proxy killed"
one_line '^ternrun: lost the proxy on host fakeB \(its launch agent, pid [0-9]+, was killed by SIGKILL\)'
echo "ok"

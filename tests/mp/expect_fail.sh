#!/bin/sh
# expect_fail.sh - run a job that must fail, and check how it failed.
#
#   expect_fail.sh EXPECTED_EXIT MAX_SECONDS command [args...]
#
# Passes if the command (ternrun ...) exits with EXPECTED_EXIT (e.g. 3 for a rank that
# called exit(3), 137 for a rank killed by SIGKILL), within MAX_SECONDS, and leaves no
# /dev/shm/tern-* entry that was not there before. Entries of jobs whose ternrun still
# runs (other jobs on the machine) are not counted, and a new entry gets a second to
# vanish in case some other process is mid-job.
#
# With EXPECT_DONE=K in the environment, the job's output must also hold K lines
# "mp-done rank R" (the ranks that must get to the end, e.g. the survivors of a peer
# failure: their own failures would not change ternrun's exit code, the first failure's).
# With EXPECT_LINE=REGEX, stderr must hold exactly one line starting "ternrun: " (the
# one line that says why the job ended) and it must match REGEX (extended).
set -u
expected=$1
limit=$2
shift 2

. "$(dirname "$0")/../shm_left.sh" # shm_list, shm_left

before=$(mktemp)
after=$(mktemp)
trap 'rm -f "$before" "$after"' EXIT
shm_list >"$before"

out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$before" "$after" "$out" "$err"' EXIT
start=$(date +%s.%N)
"$@" >"$out" 2>"$err"
code=$?
cat "$out"
cat "$err" >&2
end=$(date +%s.%N)
elapsed=$(awk "BEGIN{printf \"%.2f\", $end - $start}")

fail=0
echo "expect_fail: '$*' exited with $code after ${elapsed} s (expected $expected within $limit s)"
if [ "$code" -ne "$expected" ]; then
    echo "FAIL: exit code $code, expected $expected"
    fail=1
fi
if awk "BEGIN{exit !($elapsed >= $limit)}"; then
    echo "FAIL: the job took ${elapsed} s, more than $limit s (hang?)"
    fail=1
fi

if [ -n "${EXPECT_DONE:-}" ]; then
    done_lines=$(grep -c '^mp-done rank' "$out")
    if [ "$done_lines" -ne "$EXPECT_DONE" ]; then
        echo "FAIL: $done_lines ranks got to the end, expected $EXPECT_DONE"
        fail=1
    fi
fi

if [ -n "${EXPECT_LINE:-}" ]; then
    n=$(grep -c '^ternrun: ' "$err")
    if [ "$n" -ne 1 ]; then
        echo "FAIL: $n lines start with 'ternrun: ', expected exactly one"
        fail=1
    elif ! grep -Eq "$EXPECT_LINE" "$err"; then
        echo "FAIL: ternrun's line does not match /$EXPECT_LINE/:"
        grep '^ternrun: ' "$err"
        fail=1
    fi
fi

shm_left >"$after"
new=$(comm -13 "$before" "$after")
if [ -n "$new" ]; then
    sleep 1
    shm_left >"$after"
    new=$(comm -13 "$before" "$after")
fi
if [ -n "$new" ]; then
    echo "FAIL: left behind in /dev/shm:"
    echo "$new" | sed 's/^/    /'
    ls -l /dev/shm | grep ' tern-' || true
    fail=1
fi
[ $fail -eq 0 ] && echo "expect_fail: ok"
exit $fail

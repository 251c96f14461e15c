#!/bin/sh
# admission.sh TERNRUN NPROCS PROGRAM - run tcp/admission over TCP and check that the job
# succeeded, that rank 0 made its attacks, and that rank 1 logged a refusal for each.
ternrun=$1 np=$2 prog=$3
out=$(mktemp) err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
TERN_TRANSPORTS=self,tcp TERN_TCP_HANDSHAKE_TIMEOUT=2 "$ternrun" -n "$np" --timeout 60 "$prog" >"$out" 2>"$err"
rc=$?
cat "$out"
cat "$err" >&2
if [ $rc -ne 0 ]; then
    echo "admission.sh: the job failed (exit $rc)" >&2
    exit 1
fi
attacks=$(sed -n 's/^ATTACKS \([0-9]*\)$/\1/p' "$out")
refused=$(grep -c '^tern\[1\]: tcp: refused connection from ' "$err")
echo "admission.sh: $attacks attacks, $refused refusals logged by rank 1"
if [ -z "$attacks" ] || [ "$attacks" -lt 14 ] || [ "$refused" -ne "$attacks" ]; then
    echo "admission.sh: expected one logged refusal per attack (at least 14)" >&2
    exit 1
fi
if grep -q 'malformed frame\|failed' "$err"; then
    echo "admission.sh: an admitted connection was disturbed" >&2
    exit 1
fi
exit 0

#!/bin/sh
# cc.sh TERNRUN PROG - the congestion control of tcp connections (TERN_TCP_CC).
#
# PROG (mp_order: ordered messages checked by the receiver) runs over loopback tcp with
# TERN_DEBUG=1. With the default (auto) every rank must put its loopback connection on
# reno, or already be on it when reno is the system's default; with TERN_TCP_CC=""
# nobody may change it; with a name the kernel does not have, each rank must say it
# cannot use it, keep the default, and the job must still succeed.
ternrun=$1 prog=$2
err=$(mktemp)
trap 'rm -f "$err"' EXIT
fail() {
    echo "cc.sh: $*" >&2
    cat "$err" >&2
    exit 1
}
run() { # extra environment ...
    env TERN_TRANSPORTS=self,tcp TERN_DEBUG=1 "$@" "$ternrun" -n 2 --timeout 60 "$prog" \
        >/dev/null 2>"$err"
}
sysdef=$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null)
[ -n "$sysdef" ] || { echo "cc.sh: no /proc/sys/net/ipv4/tcp_congestion_control; skipped"; exit 77; }

run || fail "the job failed with TERN_TCP_CC=auto"
n=$(grep -c '^tern\[[01]\]: tcp: congestion control reno instead of' "$err")
if [ "$sysdef" = reno ]; then
    [ "$n" -eq 0 ] || fail "reno is the default, yet a rank changed it"
else
    [ "$n" -eq 2 ] || fail "auto: $n of 2 ranks put their loopback connection on reno (default $sysdef)"
fi
echo "auto: loopback connections on reno (system default $sysdef)"

run TERN_TCP_CC= || fail "the job failed with TERN_TCP_CC empty"
! grep -q 'congestion control' "$err" || fail "TERN_TCP_CC empty, yet a rank changed it"
echo "empty: the system default kept"

run TERN_TCP_CC=no-such-cc || fail "the job failed with an unknown congestion control"
n=$(grep -c "^tern\[[01]\]: tcp: cannot use congestion control 'no-such-cc' (TERN_TCP_CC)" "$err")
[ "$n" -eq 2 ] || fail "an unknown name: $n of 2 ranks said so"
echo "unknown name: refused and said by both ranks, the job ran on the default"
exit 0

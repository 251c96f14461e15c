#!/bin/sh
# netns_test.sh - ternrun across "hosts" that are network namespaces on this machine.
#
#   sh netns_test.sh CASE TERNRUN BINDIR
#
# Three namespaces (names unique to this run) stand for three hosts: A holds a bridge
# named tern0 with 10.231.0.1/24, B and C each a veth named tern0 (10.231.0.2, .3)
# whose other end is a port of A's bridge. Every address exists only inside these
# namespaces. The launch agent is `ip netns exec {host}`, so every host is remote:
# the root ternrun forks no rank and talks to one proxy per namespace over the
# agent's stdin/stdout; the ranks bind to their namespace's tern0.
#
# A fourth namespace, E, is a host like B and C (10.231.0.4).
# Cases: hier (hierarchical collectives on 2-4 hosts of 2-4 ranks), pingpong (2 hosts x
# 2: shm within a host, tcp across), ofi (the same over libfabric's tcp provider, when
# the build has ofi), stress (3 hosts,
# uneven), kill (a rank on B dies of SIGKILL: one line naming rank and host, exit 137,
# nothing left), sigterm (ternrun gets SIGTERM: every rank on every host ends),
# netem (5 ms delay on one link, when the kernel has sch_netem), ifsel (no TERN_TCP_IF:
# decoy interfaces that come first in B and C - a docker0 bridge with the same
# 172.17.0.1/16 on both and an eth1 on a subnet of its own - must not be chosen).
# Exit 77 (ctest SKIP_RETURN_CODE) when namespaces cannot be created here.
set -u
CASE=$1
T=$2
BIN=$3

if [ "$(id -u)" != 0 ]; then
    echo "SKIP: network namespaces need root (uid $(id -u))"
    exit 77
fi
if ! command -v ip >/dev/null 2>&1; then
    echo "SKIP: the ip command (iproute2) is not installed"
    exit 77
fi

A=ternA$$
B=ternB$$
C=ternC$$
E=ternE$$
P=ternP$$
D=$(mktemp -d "${TMPDIR:-/tmp}/ternrun-netns.XXXXXX") || exit 1
cleanup() {
    for ns in $A $B $C $E $P; do
        if ip netns list 2>/dev/null | grep -q "^$ns\b"; then
            for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
            ip netns del "$ns" 2>/dev/null
        fi
    done
    rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# ctest's timeout kills the whole process tree with SIGKILL, and no trap runs: a watcher
# outside that tree (a session of its own, parent gone) deletes this run's namespaces,
# and only those, should the script vanish without having removed $D.
(setsid sh -c 'while kill -0 "$1" 2>/dev/null && [ -d "$2" ]; do sleep 1; done
    [ -d "$2" ] || exit 0
    for ns in $3; do
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p"; done
        ip netns del "$ns"
    done
    rm -rf "$2"' netns-watch $$ "$D" "$A $B $C $E $P" </dev/null >/dev/null 2>&1 &)

fail() {
    echo "FAIL [$CASE]: $*" >&2
    for f in "$D"/out "$D"/err; do
        [ -s "$f" ] && { echo "--- $f" >&2; tail -c 4000 "$f" >&2; }
    done
    exit 1
}

# Probe, with a namespace of this run's own name, for everything the cases build: a
# namespace, a veth pair and a bridge. A machine that cannot (a container without the
# privilege, a kernel without veth or bridge) skips with the reason instead of failing.
if ! err=$(ip netns add $P 2>&1); then
    echo "SKIP: cannot create a network namespace: $err"
    exit 77
fi
if ! err=$(ip -n $P link add name v0 type veth peer name v1 2>&1 &&
           ip -n $P link add name b0 type bridge 2>&1); then
    ip netns del $P 2>/dev/null
    echo "SKIP: cannot create veth pairs and bridges in a network namespace: $err"
    exit 77
fi
ip netns del $P 2>/dev/null
if ! err=$(ip netns add $A 2>&1); then
    echo "SKIP: cannot create a network namespace: $err"
    exit 77
fi
ip netns add $B && ip netns add $C && ip netns add $E || fail "ip netns add failed"
for ns in $A $B $C $E; do ip -n $ns link set lo up || fail "lo up in $ns"; done
if [ "$CASE" = ifsel ]; then
    # Decoys, created before tern0 so they come first in every interface list: docker0
    # (a bridge with a port, so it is up and running, 172.17.0.1/16 on both hosts as
    # Docker does it) and eth1 (a veth to nowhere, a subnet per host, routes to no peer).
    i=2
    for ns in $B $C; do
        ip -n $ns link add name docker0 type bridge || fail "cannot create docker0 in $ns"
        ip -n $ns link add name vethd0 type veth peer name vethd1 || fail "veth in $ns"
        ip -n $ns link set vethd0 master docker0
        ip -n $ns addr add 172.17.0.1/16 dev docker0
        ip -n $ns link add name eth1 type veth peer name eth1p || fail "eth1 in $ns"
        ip -n $ns addr add 10.88.$i.1/24 dev eth1
        for l in docker0 vethd0 vethd1 eth1 eth1p; do ip -n $ns link set $l up; done
        i=$((i + 1))
    done
fi
ip -n $A link add name tern0 type bridge || fail "cannot create a bridge in $A"
ip -n $A addr add 10.231.0.1/24 dev tern0
ip -n $A link set tern0 up
i=2
for ns in $B $C $E; do
    ip link add name tern0 netns $ns type veth peer name p$i netns $A ||
        fail "cannot create a veth pair between $ns and $A"
    ip -n $A link set p$i master tern0
    ip -n $A link set p$i up
    ip -n $ns addr add 10.231.0.$i/24 dev tern0
    ip -n $ns link set tern0 up
    i=$((i + 1))
done
. "$(dirname "$0")/../shm_left.sh" # shm_list, shm_left
shm_list >"$D/shm_before"

# run ARGS...: ternrun across the namespaces; sets $rc. IFSEL (default -x TERN_TCP_IF=tern0)
# chooses the interface.
run() {
    "$T" --launch-agent 'ip netns exec {host}' ${IFSEL--x TERN_TCP_IF=tern0} "$@" >"$D/out" \
        2>"$D/err"
    rc=$?
}

expect_rc() { [ "$rc" = "$1" ] || fail "exit code $rc, wanted $1 ($2)"; }

# Nothing of the job may be left: no process in any namespace, no shm segment.
no_leftovers() {
    i=0
    while :; do
        left=""
        for ns in $A $B $C $E; do
            p=$(ip netns pids $ns 2>/dev/null)
            [ -n "$p" ] && left="$left $ns:$(echo $p)"
        done
        [ -z "$left" ] && break
        i=$((i + 1))
        [ $i -lt 30 ] || fail "processes left in the namespaces:$left"
        sleep 0.1
    done
    shm_left >"$D/shm_after"
    new=$(comm -13 "$D/shm_before" "$D/shm_after")
    if [ -n "$new" ]; then
        # Other jobs on the machine (not under this ctest) hold a segment for a moment
        # during their start-up; a leftover stays.
        sleep 1
        shm_left >"$D/shm_after"
        new=$(comm -13 "$D/shm_before" "$D/shm_after")
    fi
    [ -z "$new" ] || fail "left behind in /dev/shm: $new"
}

case "$CASE" in
pingpong)
    # 2 hosts x 2 ranks: PMI_process_mapping (vector,(0,2,2)); shm inside, tcp across.
    TERN_DEBUG=1 run -H $A:2,$B:2 --timeout 90 "$BIN/mp_pingpong"
    expect_rc 0 "pingpong on $A:2,$B:2"
    grep -q 'process mapping (vector,(0,2,2))' "$D/err" || fail "ranks did not see (vector,(0,2,2))"
    grep -q 'transport shm serves 1 peer' "$D/err" || fail "no shm between ranks of one host"
    grep -q 'transport tcp serves 2 peer' "$D/err" || fail "no tcp between hosts"
    grep -q 'listening on 10\.231\.0\.' "$D/err" || fail "tcp did not listen on the namespace's tern0"
    grep -q '^pingpong: 4 ranks' "$D/out" "$D/err" || fail "pingpong did not report"
    no_leftovers
    ;;
ofi)
    # The fabric transport across hosts (issue 16): ofi named, over libfabric's tcp
    # provider on the namespaces' tern0; shm still serves the ranks of one host. The
    # pingpong case above is the default rule: ofi is in the list but declines a software
    # provider, so tcp takes the peers on the other host.
    TERN_DEBUG=1 run -H $A:2,$B:2 -x TERN_TRANSPORTS=self,shm,ofi -x FI_PROVIDER=tcp \
        -x FI_TCP_IFACE=tern0 --timeout 90 "$BIN/mp_pingpong"
    expect_rc 0 "pingpong over ofi on $A:2,$B:2"
    grep -q 'transport shm serves 1 peer' "$D/err" || fail "no shm between ranks of one host"
    grep -q 'transport ofi serves 2 peer' "$D/err" || fail "no ofi between hosts"
    grep -q 'ofi: provider tcp;ofi_rxm, fabric 10\.231\.0\.' "$D/err" ||
        fail "ofi did not take the namespace's tern0"
    grep -q '^pingpong: 4 ranks' "$D/out" "$D/err" || fail "pingpong did not report"
    no_leftovers
    ;;
hier)
    # 2 to 4 hosts of 2 to 4 ranks: the hierarchical collectives (shared memory inside a
    # host, one leader per host between hosts) on the world, on a split (even ranks: 2
    # per host with 4 per host) and its duplicate, every result checked exactly.
    for hosts in "$A:4,$B:4" "$A:2,$B:3,$C:2" "$A:2,$B:2,$C:2,$E:2"; do
        TERN_COLL_HIER=1 TERN_DEBUG=1 run -H $hosts --timeout 120 "$BIN/mp_coll_hier"
        expect_rc 0 "coll_hier on $hosts"
        grep -q '^coll_hier: ok' "$D/out" "$D/err" || fail "coll_hier did not report on $hosts"
        grep -q 'hierarchical collectives on a communicator of' "$D/err" ||
            fail "the hierarchical path was not taken on $hosts"
        no_leftovers
    done
    # TERN_COLL_HIER=0: the flat schedules, the same checks.
    TERN_COLL_HIER=0 TERN_DEBUG=1 run -H $A:2,$B:2 --timeout 120 "$BIN/mp_coll_hier"
    expect_rc 0 "coll_hier with TERN_COLL_HIER=0"
    grep -q '^coll_hier: ok' "$D/out" "$D/err" || fail "coll_hier did not report (flat)"
    if grep -q 'hierarchical collectives on a communicator of' "$D/err"; then
        fail "TERN_COLL_HIER=0 still took the hierarchical path"
    fi
    no_leftovers
    ;;
stress)
    # Three hosts, uneven: (vector,(0,1,1),(1,1,2),(2,1,1)), with tagged output.
    TERN_DEBUG=1 run -H $A,$B:2,$C --tag-output --timeout 90 "$BIN/mp_stress"
    expect_rc 0 "stress on $A,$B:2,$C"
    grep -q 'process mapping (vector,(0,1,1),(1,1,2),(2,1,1))' "$D/err" ||
        fail "ranks did not see the uneven mapping"
    for r in 0 1 2 3; do
        grep -q "^\[$r\] stress: rank $r sent" "$D/out" "$D/err" ||
            grep -q "^\[$r\] stress: rank $r sent" "$D/err" || fail "no tagged report from rank $r"
    done
    no_leftovers
    ;;
kill)
    # The last rank (on B) raises SIGKILL mid-communication.
    run -H $A:2,$B:2 --timeout 60 "$BIN/mp_kill"
    expect_rc 137 "a rank on $B killed"
    n=$(grep -c '^ternrun: ' "$D/err")
    [ "$n" = 1 ] || fail "$n 'ternrun:' lines on stderr, wanted exactly 1"
    grep -Eq "^ternrun: rank 3 \(pid [0-9]+ on $B\) killed by signal 9 \(SIGKILL\)$" "$D/err" ||
        fail "the line does not name rank 3 on $B and SIGKILL"
    no_leftovers
    ;;
sigterm)
    # Every rank waits; ternrun is asked to stop. 128+15, and nothing left anywhere.
    "$T" --launch-agent 'ip netns exec {host}' -H $A,$B,$C sh -c 'echo up; exec sleep 600' \
        >"$D/out" 2>"$D/err" &
    pid=$!
    i=0
    while [ "$(grep -c '^up' "$D/out" 2>/dev/null)" != 3 ]; do
        i=$((i + 1))
        [ $i -lt 200 ] || { kill -9 $pid; fail "ranks did not start"; }
        sleep 0.05
    done
    kill -TERM $pid
    wait $pid
    rc=$?
    expect_rc 143 "SIGTERM to ternrun"
    grep -q '^ternrun: received SIGTERM; ending the job$' "$D/err" || fail "no line about SIGTERM"
    no_leftovers
    ;;
soak)
    # The soak (tests/mp/stress.c, MP_SOAK_SECONDS; MP_SOAK_LONG=S in the environment
    # for longer) on B:2,C:2, so half of all traffic crosses the link, degraded as far as
    # this kernel allows: netem delay, jitter, reordering and 1% loss when it has
    # sch_netem; else 1% random loss by nftables, and the output says what is missing.
    # Never pretended: the drop counters must show packets were really lost.
    secs=${MP_SOAK_LONG:-40}
    lossy=""
    for ns in $B $C; do
        if err=$(ip netns exec $ns tc qdisc add dev tern0 root netem delay 5ms 1ms reorder 25% 50% loss 1% 2>&1); then
            echo "soak: netem on $ns's tern0: 5 ms +- 1 ms delay, 25% reordered, 1% lost"
        else
            echo "soak: netem unavailable on $ns ($err): this kernel lacks sch_netem; no delay or reordering"
            if command -v nft >/dev/null 2>&1 &&
                ip netns exec $ns nft add table inet soak 2>/dev/null &&
                ip netns exec $ns nft add chain inet soak out '{ type filter hook output priority 0; }' &&
                ip netns exec $ns nft add rule inet soak out oifname tern0 numgen random mod 100 '<' 1 counter drop; then
                echo "soak: 1% of the packets $ns sends on tern0 are dropped (nftables numgen random)"
                lossy="$lossy $ns"
            else
                echo "soak: nftables unavailable too: no loss on $ns's link"
            fi
        fi
    done
    run -H $B:2,$C:2 -x MP_SOAK_SECONDS=$secs --timeout $((secs + 200)) "$BIN/mp_stress"
    cat "$D/out"
    expect_rc 0 "the soak on $B:2,$C:2"
    grep -q '^soak: [0-9]* rounds in .*0 lost, duplicated, reordered or corrupted; fds flat' "$D/out" ||
        fail "no soak summary"
    for ns in $lossy; do
        dropped=$(ip netns exec $ns nft list chain inet soak out | sed -n 's/.*counter packets \([0-9]*\).*/\1/p')
        echo "soak: $ns dropped ${dropped:-?} packets"
        [ "${dropped:-0}" -gt 0 ] || fail "no packet was dropped on $ns: the loss was not real"
    done
    no_leftovers
    ;;
signals | rootkill)
    # Tern ranks blocked in receives on three hosts (diag_block deadlock). signals:
    # SIGINT, SIGTERM, SIGHUP of ternrun end every rank and proxy on every host (exit
    # 128+sig, one line). rootkill: ternrun dies by SIGKILL; every proxy and rank exits on
    # its own within a second (the bound allows 1.5 s for a loaded machine), once with
    # the agent `ip netns exec`, which hands the proxy its parent-death signal, and once
    # through a shell that forks it (as sshd would): then the proxy learns it from its
    # channel closing.
    printf '#!/bin/sh\nip netns exec "$@"\nexit $?\n' >"$D/agent.sh"
    chmod +x "$D/agent.sh"
    if [ "$CASE" = signals ]; then sigs="INT TERM HUP"; else sigs="KILL KILL_FORKED"; fi
    for sig in $sigs; do
        agent='ip netns exec {host}'
        [ $sig = KILL_FORKED ] && { agent="$D/agent.sh {host}"; sig=KILL; }
        "$T" --launch-agent "$agent" -x TERN_TCP_IF=tern0 -H $A,$B:2,$C \
            "$BIN/diag_block" deadlock >"$D/out" 2>"$D/err" &
        pid=$!
        i=0
        while [ "$(grep -c '^diag-blocking' "$D/out" 2>/dev/null)" != 4 ]; do
            i=$((i + 1))
            [ $i -lt 400 ] || { kill -9 $pid; fail "ranks did not start"; }
            sleep 0.05
        done
        sleep 0.3
        t0=$(($(date +%s%N) / 1000000))
        kill -$sig $pid
        wait $pid
        rc=$?
        while :; do
            left=""
            for ns in $A $B $C; do
                p=$(ip netns pids $ns 2>/dev/null)
                [ -n "$p" ] && left="$left $ns:$(echo $p)"
            done
            [ -z "$left" ] && break
            [ $(($(date +%s%N) / 1000000 - t0)) -lt 1500 ] || fail "SIG$sig: still running 1.5 s later:$left"
            sleep 0.01
        done
        echo "SIG$sig (agent $agent): every proxy and rank gone $(($(date +%s%N) / 1000000 - t0)) ms after the signal"
        if [ $sig != KILL ]; then
            case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
            expect_rc $want "SIG$sig to ternrun"
            [ "$(grep -c '^ternrun: ' "$D/err")" = 1 ] || fail "SIG$sig: not one 'ternrun:' line"
            grep -q "^ternrun: received SIG$sig; ending the job$" "$D/err" || fail "SIG$sig: no line"
        fi
        no_leftovers
    done
    ;;
peer_fail)
    # A rank dies in a job across hosts whose ranks all said tern_tolerate_failures: the
    # job goes on. The victim (rank 3) shares host B with rank 2 (shm: its proxy tells
    # it) or is alone on C (every survivor is on another host: tcp connection loss, and
    # the root's news through the proxies). Every way to die; detection times printed.
    for hosts in "$A:2,$B:2" "$A:2,$B,$C"; do
        for how in kill:137 segv:139 exit:3 leave:0; do
            MP_FAIL_HOW=${how%%:*} run -H $hosts -x MP_FAIL_HOW --timeout 60 "$BIN/mp_peer_fail"
            expect_rc ${how#*:} "rank 3 ${how%%:*} on $hosts"
            grep '^FAIL' "$D/out" "$D/err" && fail "a survivor's check failed (${how%%:*}, $hosts)"
            n=$(grep -c '^mp-done rank' "$D/out")
            [ "$n" = 3 ] || fail "$n survivors finished, wanted 3 (${how%%:*}, $hosts)"
            echo "detection ($hosts, ${how%%:*}):" $(sed -n 's/^rank \([0-9]\): told of the failure after \([0-9.]*\) s.*/r\1=\2s/p' "$D/out")
            case ${how#*:} in
            0) ;;
            *) [ "$(grep -c '^ternrun: ' "$D/err")" = 1 ] || fail "not one 'ternrun:' line"
               grep -Eq "^ternrun: rank 3 \(pid [0-9]+ on tern[BC][0-9]+\) " "$D/err" ||
                   fail "the line does not name rank 3 and its host" ;;
            esac
            no_leftovers
        done
    done
    ;;
report)
    # A deadlock across hosts under --timeout: each proxy gathers its ranks' reports
    # (stacks symbolised on their host) and the root prints them all, then exit 124.
    run -H $A,$B,$C --timeout 4 "$BIN/diag_block" deadlock
    expect_rc 124 "a deadlocked job across hosts"
    grep -q '^ternrun: job timed out after 4 s; ending it$' "$D/err" || fail "no timeout line"
    grep -Eq "^\[0\] pid [0-9]+ on $A: blocked [0-9.]+ s in a receive from rank 1, tag 10, communicator world, up to 16 bytes$" "$D/err" ||
        fail "no blocked-in line for rank 0 on $A"
    grep -Eq "^\[1\] pid [0-9]+ on $B: blocked [0-9.]+ s in a receive from rank 0, tag 11, communicator world, up to 16 bytes$" "$D/err" ||
        fail "no blocked-in line for rank 1 on $B"
    grep -Eq "^\[2\] pid [0-9]+ on $C: blocked [0-9.]+ s in allreduce on communicator world \(3 ranks\)$" "$D/err" ||
        fail "no blocked-in line for rank 2 on $C"
    for r in 0 1; do
        grep -Eq "^\[$r\]   #[0-9 ]+ diag_wait_for_partner at .*diag_block\.c:[0-9]+" "$D/err" ||
            fail "rank $r's stack does not name diag_wait_for_partner"
    done
    grep -Eq "^\[2\]   #[0-9 ]+ main at .*diag_block\.c:[0-9]+" "$D/err" || fail "rank 2's stack lacks main"
    no_leftovers
    ;;
netem)
    # 5 ms each way on C's link; the job must still complete correctly.
    if err=$(ip netns exec $C tc qdisc add dev tern0 root netem delay 5ms 2>&1); then
        echo "netem: 5 ms delay on $C's tern0"
    else
        echo "netem unavailable ($err): this kernel lacks sch_netem (CONFIG_NET_SCH_NETEM)"
        # Still impair the link: a token bucket at 100 Mbit/s queues packets (delay under
        # load) and makes senders meet full socket buffers (partial writes).
        if err=$(ip netns exec $C tc qdisc add dev tern0 root tbf rate 100mbit burst 64kb \
            latency 20ms 2>&1); then
            echo "instead: tbf 100 Mbit/s on $C's tern0"
        else
            echo "tbf unavailable too ($err): running without an impaired link"
        fi
    fi
    TERN_DEBUG=1 run -H $B:2,$C:2 --timeout 90 "$BIN/mp_stress"
    expect_rc 0 "stress on $B:2,$C:2 with a delayed link"
    grep -q 'process mapping (vector,(0,2,2))' "$D/err" || fail "ranks did not see (vector,(0,2,2))"
    no_leftovers
    ;;
ifsel)
    # Two hosts with decoys, no TERN_TCP_IF: every connection goes over tern0.
    IFSEL= TERN_DEBUG=1 run -H $B:2,$C:2 --timeout 90 "$BIN/mp_pingpong"
    expect_rc 0 "pingpong across $B:2,$C:2 with decoy interfaces"
    n=$(grep -c 'tcp: rank [01] reached at 10\.231\.0\.2:[0-9]* via tern0$' "$D/err")
    [ "$n" = 4 ] || fail "$n of 4 connections from $C to $B went over tern0"
    ! grep -q 'reached at .* via \(docker0\|eth1\)' "$D/err" || fail "a decoy interface was used"
    ! grep -q 'tcp: rank [0-9]* at ' "$D/err" || fail "a decoy address was tried before tern0"
    no_leftovers
    # One host, tcp forced: loopback only, decoys or not.
    IFSEL= TERN_DEBUG=1 run -H $B:2 -x TERN_TRANSPORTS=self,tcp --timeout 60 "$BIN/mp_order"
    expect_rc 0 "order on $B:2 over tcp"
    grep -q 'tcp: listening on 127\.0\.0\.1:' "$D/err" || fail "a one-host job did not use loopback"
    ! grep -q 'tcp: listening on [^1]' "$D/err" || fail "a one-host job listened beyond loopback"
    no_leftovers
    # TERN_TCP_IF overrides, even with an interface that reaches nobody: a clear error.
    IFSEL= run -H $B:1,$C:1 -x TERN_TCP_IF=eth1 --timeout 60 "$BIN/mp_order"
    [ "$rc" != 0 ] || fail "a job confined to eth1 (no route between hosts) succeeded"
    grep -q 'tcp: cannot connect to rank 0 (0 of its 1 addresses tried, last none routable)' \
        "$D/err" || fail "no error naming the unreachable rank"
    no_leftovers
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok [$CASE]"
exit 0

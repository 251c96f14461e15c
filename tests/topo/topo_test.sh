#!/bin/sh
# topo_test.sh - ternrun binds real ranks where it says it does, one case per ctest test.
#
#   sh topo_test.sh CASE TERNRUN TOPO_RANK TREES_DIR
#
# topo_rank prints "rank R cpus LIST" from its /proc/self/status after tern_init, so what
# is checked is the mask the rank really runs with (ternrun's binding, and no second one
# from the library). Cases needing two CPUs, or taskset, exit 77 where they are missing.

set -u
CASE=$1
T=$2
RANK=$3
TREES=$4

D=$(mktemp -d "${TMPDIR:-/tmp}/topo-test.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT

fail() {
    echo "FAIL [$CASE]: $*" >&2
    for f in "$D"/out "$D"/err; do
        [ -s "$f" ] && { echo "--- $f" >&2; head -c 4000 "$f" >&2; }
    done
    exit 1
}

# run ARGS...: ternrun with a timeout, output in $D/out and $D/err, status in $rc.
run() {
    "$T" --timeout 30 "$@" >"$D/out" 2>"$D/err"
    rc=$?
}

expect_rc() {
    [ "$rc" = "$1" ] || fail "$2: exit $rc, want $1"
}

# The CPUs of rank $1 in $D/out.
cpus_of() {
    sed -n "s/^rank $1 cpus //p" "$D/out"
}

# Expand a CPU list (0-2,5) into one number a line.
expand() {
    echo "$1" | tr ',' '\n' | while IFS=- read -r a b; do
        [ -n "$a" ] || continue
        seq "$a" "${b:-$a}"
    done
}

MINE=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
NMINE=$(expand "$MINE" | wc -l)
need_two() {
    [ "$NMINE" -ge 2 ] || { echo "this process may use one CPU ($MINE): skipped"; exit 77; }
}

# Bindings of -n 2 with the given options, as "cpus-of-0 cpus-of-1".
pair() {
    run -n 2 "$@" "$RANK"
    expect_rc 0 "ternrun -n 2 $*"
    echo "$(cpus_of 0) $(cpus_of 1)"
}

case "$CASE" in
bind_core)
    need_two
    # TERN_BIND=0 keeps the library from binding itself: the masks seen are ternrun's.
    export TERN_BIND=0
    run -n 2 --bind-to core --report-bindings "$RANK"
    expect_rc 0 "--bind-to core"
    c0=$(cpus_of 0)
    c1=$(cpus_of 1)
    [ -n "$c0" ] && [ -n "$c1" ] || fail "a rank printed no mask"
    [ "$c0" != "$c1" ] || fail "both ranks on cpus $c0"
    for c in "$c0" "$c1"; do
        # A core here has one or more hardware threads; every one must be ours.
        for cpu in $(expand "$c"); do
            expand "$MINE" | grep -qx "$cpu" || fail "cpu $cpu is not in this process's $MINE"
        done
    done
    for r in 0 1; do
        grep -q "^ternrun: rank $r (pid [0-9]* on .*) bound to core [0-9]* (cpus $(cpus_of $r))" \
            "$D/err" || fail "no --report-bindings line for rank $r with cpus $(cpus_of $r)"
    done
    ;;

dialects)
    need_two
    ref=$(pair --bind-to core --map-by core)
    [ "$ref" != "$(echo "$ref" | cut -d' ' -f1) $(echo "$ref" | cut -d' ' -f1)" ] ||
        fail "reference binding puts both ranks on one core: $ref"
    # Open MPI 4/5, Open MPI 1.x, Hydra, qualifiers, the environment, the default.
    for opts in "-bind-to core" "--bind-to-core" "-bind-to core -map-by core" \
        "--bind-to core:overload-allowed" "--bind-to cores --map-by slot" \
        "--map-by core:PE=1 --bind-to core" "--bind-to=core" "-bind-to core:1" ""; do
        # shellcheck disable=SC2086 # the options are words
        got=$(pair $opts)
        [ "$got" = "$ref" ] || fail "'$opts' binds to '$got', '--bind-to core' to '$ref'"
    done
    got=$(TERN_BIND_TO=core pair)
    [ "$got" = "$ref" ] || fail "TERN_BIND_TO=core binds to '$got', not '$ref'"
    # numa and socket dialects agree with each other (this machine's whole node or socket).
    n1=$(pair --bind-to numa)
    n2=$(pair -bind-to numanode)
    [ "$n1" = "$n2" ] || fail "--bind-to numa '$n1' but -bind-to numanode '$n2'"
    s1=$(pair --bind-to socket --map-by socket)
    s2=$(pair -bind-to package -map-by package)
    s3=$(pair --bind-to-socket --map-by socket)
    [ "$s1" = "$s2" ] && [ "$s1" = "$s3" ] || fail "socket spellings differ: '$s1' '$s2' '$s3'"
    ;;

none)
    for how in "--bind-to none" "-bind-to none" "--bind-to-none" "env TERN_BIND=0" \
        "env TERN_BIND_TO=none"; do
        case "$how" in
        env*) (export "${how#env }" && run -n 2 "$RANK" && exit $rc); rc=$? ;;
        # shellcheck disable=SC2086 # the options are words
        *) run -n 2 $how "$RANK" ;;
        esac
        expect_rc 0 "$how"
        for r in 0 1; do
            [ "$(cpus_of $r)" = "$MINE" ] || fail "$how: rank $r runs on '$(cpus_of $r)', not unbound ($MINE)"
        done
    done
    ;;

oversub)
    n=$((NMINE + 1))
    run -n $n --bind-to core "$RANK"
    expect_rc 0 "--bind-to core with $n ranks on $NMINE cpus"
    grep -q "^ternrun: $n ranks on this host but $NMINE cores allowed: the ranks are left unbound" \
        "$D/err" || fail "no clear message about $n ranks on $NMINE cores"
    for r in $(seq 0 $((n - 1))); do
        [ "$(cpus_of $r)" = "$MINE" ] || fail "rank $r bound to '$(cpus_of $r)' while oversubscribed"
    done
    # The default binding steps aside without a word.
    run -n $n "$RANK"
    expect_rc 0 "default binding with $n ranks"
    [ ! -s "$D/err" ] || fail "the default binding printed something when oversubscribed"
    [ "$(cpus_of 0)" = "$MINE" ] || fail "rank 0 bound by default while oversubscribed"
    ;;

smt)
    # Ranks that share cores' hardware threads keep the pause between spin polls
    # (core_wait_smt_shared, read at start from cpu 0's thread_siblings_list): in the
    # fake tree cpu 0's core has 2 threads, so this machine's 2 CPUs are one core there
    # and 2 ranks share it; in this machine's own tree its count decides.
    need_two
    TERN_TOPO_SYSFS="$TREES/2s2n-smt" TERN_DEBUG=2 "$T" --timeout 30 -n 2 --bind-to none \
        "$RANK" >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "2 ranks on the fake SMT tree"
    for r in 0 1; do
        grep -q "^tern\[$r\]: waits: .*, smt shared 1$" "$D/err" ||
            fail "rank $r did not find its core shared (fake tree, 2 threads a core)"
    done
    threads=$(expand "$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list 2>/dev/null)" | wc -l)
    want=0
    [ "$threads" -ge 2 ] && [ 2 -gt $((NMINE / threads)) ] && want=1
    TERN_DEBUG=2 "$T" --timeout 30 -n 2 --bind-to none "$RANK" >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "2 ranks on this machine"
    grep -q "^tern\[0\]: waits: .*, smt shared $want$" "$D/err" ||
        fail "rank 0 should say smt shared $want ($threads threads a core, $NMINE cpus)"
    ;;

waitcount)
    # The wait policy's "more ranks than cores" (core.c, core_count_cpus): ranks that
    # ternrun bound one to a core see one CPU each, yet are not oversubscribed (the CPUs
    # of their parent count too); two ranks on one allowed CPU are.
    need_two
    command -v taskset >/dev/null || { echo "no taskset: skipped"; exit 77; }
    export TERN_DEBUG=1
    run -n 2 --bind-to core "$RANK"
    expect_rc 0 "two ranks bound to cores"
    [ "$(cpus_of 0)" != "$(cpus_of 1)" ] || fail "the two ranks share cpus '$(cpus_of 0)'"
    grep -q "up: rank 0 of 2, 2 on this node" "$D/err" || fail "no start-up line (TERN_DEBUG=1)"
    if grep -q "(oversubscribed)" "$D/err"; then
        fail "two ranks bound to their own cores were taken for oversubscribed"
    fi
    last=$(expand "$MINE" | tail -n 1)
    taskset -c "$last" "$T" --timeout 30 -n 2 "$RANK" >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "two ranks under taskset -c $last"
    grep -q "up: rank 0 of 2, 2 on this node (oversubscribed)" "$D/err" ||
        fail "two ranks on one allowed cpu not taken for oversubscribed"
    ;;

restricted)
    command -v taskset >/dev/null || { echo "no taskset: skipped"; exit 77; }
    last=$(expand "$MINE" | tail -n 1)
    taskset -c "$last" "$T" --timeout 30 -n 1 --bind-to core --report-bindings "$RANK" \
        >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "one rank under taskset -c $last"
    [ "$(cpus_of 0)" = "$last" ] || fail "rank 0 on '$(cpus_of 0)', outside taskset's cpu $last"
    grep -q "bound to core [0-9]* (cpus $last)" "$D/err" || fail "report does not say cpu $last"
    taskset -c "$last" "$T" --timeout 30 -n 2 --bind-to core "$RANK" >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "two ranks --bind-to core on one allowed cpu"
    grep -q "2 ranks on this host but 1 cores allowed" "$D/err" || fail "no oversubscription note"
    for r in 0 1; do
        [ "$(cpus_of $r)" = "$last" ] || fail "rank $r escaped taskset: '$(cpus_of $r)'"
    done
    ;;

bad_values)
    for opts in "--bind-to cor|^ternrun: --bind-to: 'cor' is not a binding" "--bind-to core:x|'core:x'" \
        "--map-by diagonal|'diagonal' is not a mapping" "--map-by core:PE=0|PE=n" \
        "-bind-to none:2|'none:2'" "--cpus-per-proc 0|PE=n"; do
        o=${opts%%|*}
        msg=${opts#*|}
        # shellcheck disable=SC2086
        "$T" -n 1 $o touch "$D/ran" >"$D/out" 2>"$D/err"
        rc=$?
        expect_rc 2 "$o"
        grep -q -- "$msg" "$D/err" || fail "'$o': no message naming the value"
        [ ! -e "$D/ran" ] || fail "'$o': the program ran"
    done
    "$T" -n 1 --bind-to >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 2 "--bind-to without a value"
    TERN_BIND_TO=sideways "$T" -n 1 touch "$D/ran" >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 2 "TERN_BIND_TO=sideways"
    grep -q "^ternrun: TERN_BIND_TO: 'sideways' is not a binding" "$D/err" ||
        fail "no message naming TERN_BIND_TO"
    TERN_MAP_BY=diagonal "$T" -n 1 touch "$D/ran" >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 2 "TERN_MAP_BY=diagonal"
    grep -q "^ternrun: TERN_MAP_BY: 'diagonal' is not a mapping" "$D/err" ||
        fail "no message naming TERN_MAP_BY"
    [ ! -e "$D/ran" ] || fail "the program ran with a bad TERN_BIND_TO/TERN_MAP_BY"
    ;;

info)
    run --info
    expect_rc 0 "--info"
    grep -q '^Topology (read from /sys):' "$D/out" || fail "no topology section"
    grep -Eq '^  sockets: [1-9][0-9]*, NUMA nodes: [1-9][0-9]*, L3 groups: [1-9][0-9]*, cores: [1-9][0-9]*, hardware threads: [1-9]' \
        "$D/out" || fail "no counts"
    grep -q "^  allowed: cpus $MINE " "$D/out" || fail "allowed set is not this process's $MINE"
    grep -q '^  binding of [0-9]* rank(s) (--bind-to auto --map-by core): ' "$D/out" ||
        fail "no binding line"
    TERN_TOPO_SYSFS="$TREES/2s2n-smt" "$T" --info -n 2 --bind-to numa --map-by numa >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "--info on the fake 2-socket machine"
    grep -q '^  sockets: 2, NUMA nodes: 2, L3 groups: 2, cores: 8, hardware threads: 16$' \
        "$D/out" || fail "fake machine counted wrong"
    grep -q '^  numa 1 (kernel node 1) in socket 1: cores 4-7, L3 groups 1-1, cpus 1,3,5,7,9,11,13,15$' \
        "$D/out" || fail "fake NUMA node 1 described wrong"
    grep -q '^  binding of 2 rank(s) (--bind-to numa --map-by numa): numa$' "$D/out" ||
        fail "no binding line for --bind-to numa"
    ;;

fake_numa)
    # The fake machine puts cpu 0 on NUMA node 0 and cpu 1 on node 1: ranks bound there
    # must compute those nodes and place their inboxes (mbind) accordingly. This kernel
    # may have node 0 only: then rank 1's mbind is refused and it says so.
    expand "$MINE" | grep -qx 0 && expand "$MINE" | grep -qx 1 ||
        { echo "cpus 0 and 1 are not both usable ($MINE): skipped"; exit 77; }
    TERN_TOPO_SYSFS="$TREES/2s2n-smt" TERN_DEBUG=1 "$T" --timeout 30 -n 2 --bind-to core \
        --map-by socket --report-bindings "$RANK" >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "fake 2-NUMA machine"
    [ "$(cpus_of 0)" = 0 ] && [ "$(cpus_of 1)" = 1 ] ||
        fail "ranks on '$(cpus_of 0)' and '$(cpus_of 1)', want 0 and 1 (one per socket)"
    grep -q 'rank 1 (.*) bound to core 4 (cpus 1)' "$D/err" || fail "rank 1 not on logical core 4"
    grep -q '^tern\[0\]: /tern-.*-shm-0-.* placed on NUMA node 0$' "$D/err" ||
        fail "rank 0's inbox not placed on node 0"
    grep -Eq '^tern\[1\]: (/tern-.*-shm-1-.* placed on NUMA node 1|cannot place /tern-.*-shm-1-.* on NUMA node 1: )' \
        "$D/err" || fail "rank 1 did not place its inbox on node 1"
    # TERN_SHM_PLACE=0: no placement at all.
    TERN_SHM_PLACE=0 TERN_TOPO_SYSFS="$TREES/2s2n-smt" TERN_DEBUG=1 "$T" --timeout 30 -n 2 \
        --bind-to core "$RANK" >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "TERN_SHM_PLACE=0"
    ! grep -q 'NUMA node' "$D/err" || fail "TERN_SHM_PLACE=0 still placed"
    ;;

proxy)
    # A host reached through a launch agent: its proxy binds its ranks from its own
    # topology, with the root's policy (env as the agent: the "host" is this machine).
    need_two
    export TERN_BIND=0
    run -H fakeA:2 --launch-agent 'env TERNHOST={host}' --bind-to hwthread --report-bindings \
        "$RANK"
    expect_rc 0 "two ranks on a proxy"
    c0=$(cpus_of 0)
    c1=$(cpus_of 1)
    [ -n "$c0" ] && [ "$c0" != "$c1" ] && [ "$c0" != "$MINE" ] ||
        fail "ranks of the proxy on '$c0' and '$c1'"
    grep -q "^ternrun: rank 1 (pid [0-9]* on fakeA) bound to hwthread [0-9]* (cpus $c1)" "$D/err" ||
        fail "no report line from the proxy for rank 1"
    ;;

tcp_only)
    # The default leaves alone a rank with no shm peer (it waits in the kernel on tcp);
    # an explicit binding still binds it. (ternrun tells its ranks TERN_BIND=0, so the
    # masks seen are its own decisions.)
    need_two
    (export TERN_TRANSPORTS=self,tcp && run -n 2 --report-bindings "$RANK" && exit $rc)
    rc=$?
    expect_rc 0 "2 ranks over tcp"
    [ "$(cpus_of 0)" = "$MINE" ] && [ "$(cpus_of 1)" = "$MINE" ] || fail "tcp-only ranks bound"
    grep -q "rank 1 (.*) not bound by default: TERN_TRANSPORTS leaves out shm" "$D/err" ||
        fail "no reason given for the unbound tcp rank"
    run -n 1 "$RANK"
    expect_rc 0 "one rank"
    [ "$(cpus_of 0)" = "$MINE" ] || fail "a rank alone on its host bound by default"
    (export TERN_TRANSPORTS=self,tcp && run -n 2 --bind-to core "$RANK" && exit $rc)
    rc=$?
    expect_rc 0 "2 ranks over tcp, --bind-to core"
    [ "$(cpus_of 0)" != "$MINE" ] && [ "$(cpus_of 0)" != "$(cpus_of 1)" ] ||
        fail "--bind-to core did not bind tcp ranks"
    ;;

selfbind)
    # Under a launcher that does not bind (MPICH's Hydra by default) the library binds
    # itself with the same rules (TERN_BIND, TERN_BIND_TO), by local rank.
    need_two
    command -v mpiexec.mpich >/dev/null || { echo "no mpiexec.mpich: skipped"; exit 77; }
    hydra() { timeout 30 mpiexec.mpich -n 2 "$RANK" >"$D/out" 2>"$D/err"; rc=$?; }
    hydra
    expect_rc 0 "2 ranks under mpiexec.mpich"
    c0=$(cpus_of 0)
    c1=$(cpus_of 1)
    [ -n "$c0" ] && [ "$c0" != "$c1" ] && [ "$c0" != "$MINE" ] && [ "$c1" != "$MINE" ] ||
        fail "self-bound ranks on '$c0' and '$c1' (want one core each of $MINE)"
    (export TERN_BIND_TO=none && hydra && exit $rc)
    rc=$?
    expect_rc 0 "TERN_BIND_TO=none under mpiexec.mpich"
    [ "$(cpus_of 0)" = "$MINE" ] && [ "$(cpus_of 1)" = "$MINE" ] || fail "TERN_BIND_TO=none bound"
    (export TERN_BIND_TO=bogus && hydra && exit $rc)
    rc=$?
    [ "$rc" != 0 ] || fail "TERN_BIND_TO=bogus: the ranks ran"
    grep -q "TERN_BIND_TO.*'bogus'" "$D/err" || fail "no message naming TERN_BIND_TO=bogus"
    ;;

*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
exit 0

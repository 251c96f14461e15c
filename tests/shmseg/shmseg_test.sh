#!/bin/sh
# shmseg_test.sh - tests of the shared-segment helper (src/util/shmseg.c) through jobs of
# shmseg_job.c.
#
#   sh shmseg_test.sh CASE TERNRUN JOB [TRIALS]
#
# names      every segment a job makes (inboxes, collectives region, MPI window, SHMEM
#            heap and globals) is named tern-<job>-<kind>-<rank>-<16 hex digits>, one job
#            prefix for all, and nothing is left in /dev/shm.
# precreate  files planted under the guessable names MPI windows once had do not stop
#            MPI_Win_allocate_shared (needs no private /dev/shm).
# nospace    on a /dev/shm too small for the job (the transport's inboxes, a shared
#            window, the SHMEM heap) the job ends with the message naming /dev/shm, never
#            with a rank killed by SIGBUS (exit 135). The inbox case does not depend on
#            timing: its receiver waits while the sender's eager frames take every big
#            cell (16, each touched 36 KiB deep: more than the 512 KiB there is); on 1 MiB
#            a fast receiver kept the cells few enough to fit, so the job succeeded once
#            on a loaded machine.
# startkill  ternrun killed (SIGTERM, SIGINT, SIGKILL in turn) at a random moment of the
#            start of a job that makes every kind of segment: nothing of the job stays
#            in /dev/shm once its processes are gone. TRIALS trials (default 20).
#
# Every case but precreate runs in a new mount namespace with a private tmpfs on
# /dev/shm (so other jobs on the machine cannot disturb the counts); where that is not
# permitted it exits 77 (skipped) and says why.
set -u
CASE=$1
T=$2
JOB=$3
TRIALS=${4:-20}
D=$(mktemp -d "${TMPDIR:-/tmp}/shmseg-test.XXXXXX") || exit 1
trap 'rm -rf "$D"' EXIT

fail() {
    echo "FAIL [$CASE]: $*" >&2
    for f in "$D"/out "$D"/err; do
        [ -s "$f" ] && { echo "--- $f" >&2; head -c 4000 "$f" >&2; }
    done
    exit 1
}

# In a private mount namespace (and, with -p, a private pid namespace) with a tmpfs of
# $1 on /dev/shm, run the rest of the command line. Root uses unshare -m; others try a
# user namespace (unshare -r -m).
PRIV=
find_priv() {
    command -v unshare >/dev/null 2>&1 || { echo "SKIP [$CASE]: no unshare(1)"; exit 77; }
    for u in "unshare -m" "unshare -r -m"; do
        if $u $1 sh -c 'mount -t tmpfs -o size=1m tmpfs /dev/shm' >/dev/null 2>&1; then
            PRIV="$u $1"
            return
        fi
    done
    echo "SKIP [$CASE]: cannot mount a private tmpfs on /dev/shm (unshare -m / -r -m not permitted here)"
    exit 77
}

# run_small SIZE VAR=value... -- ternrun args: the job on a private /dev/shm of SIZE.
run_small() {
    size=$1
    shift
    $PRIV sh -c 'mount -t tmpfs -o size="$0" tmpfs /dev/shm || exit 99; exec env "$@"' "$size" \
        "$@" >"$D/out" 2>"$D/err"
}

case "$CASE" in
names)
    find_priv ""
    run_small 256m SHMSEG_WATCH=1 SHMEM_SYMMETRIC_SIZE=8m "$T" -n 3 "$JOB" all 65536
    rc=$?
    [ $rc = 0 ] || fail "job exit code $rc"
    grep -q '^shmseg_job all ok$' "$D/out" || fail "the job did not finish"
    sed -n 's/^seg //p' "$D/out" >"$D/names"
    [ -s "$D/names" ] || fail "no segment was seen"
    pat='^tern-[A-Za-z0-9]+-(shm|coll|win|heap|data)-[0-9]+-[0-9a-f]{16}$'
    bad=$(grep -Ev "$pat" "$D/names")
    [ -z "$bad" ] || fail "segment names without the job's prefix, kind, rank and nonce: $bad"
    [ "$(cut -d- -f2 "$D/names" | sort -u | wc -l)" = 1 ] || fail "more than one job prefix: $(cat "$D/names")"
    for k in shm coll win heap data; do
        grep -q "^tern-[A-Za-z0-9]*-$k-" "$D/names" || fail "no $k segment among: $(cat "$D/names")"
    done
    echo "names: $(wc -l <"$D/names") segments, all tern-<job>-<kind>-<rank>-<nonce>"
    ;;
precreate)
    "$T" -n 3 "$JOB" precreate 8192 >"$D/out" 2>"$D/err"
    rc=$?
    ls /dev/shm/tern-win-* >/dev/null 2>&1 && { rm -f /dev/shm/tern-win-*; fail "planted files left"; }
    [ $rc = 0 ] || fail "job exit code $rc with planted tern-win-<pid>-<seq> files"
    grep -q '^shmseg_job precreate ok$' "$D/out" || fail "the job did not finish"
    ;;
nospace)
    find_priv ""
    # name | /dev/shm size | nprocs | environment... -- the job's arguments
    for c in "inbox 512k 2 TERN_SHM_CMA=0 -- stream" \
        "window 24m 2 -- window 33554432" \
        "heap 24m 2 SHMEM_SYMMETRIC_SIZE=64m -- heap 33554432"; do
        set -- $c
        what=$1 size=$2 n=$3
        shift 3
        envs=
        while [ "$1" != -- ]; do
            envs="$envs $1"
            shift
        done
        shift
        run_small $size $envs "$T" --timeout 60 -n $n "$JOB" "$@"
        rc=$?
        [ $rc != 0 ] || fail "$what: the job succeeded on a $size /dev/shm"
        [ $rc != 135 ] || fail "$what: exit code 135 (SIGBUS)"
        grep -q SIGBUS "$D/err" && fail "$what: a rank died of SIGBUS"
        grep -q "no space in /dev/shm for the .* needs [0-9]* bytes" "$D/err" ||
            fail "$what: no message naming /dev/shm and the size (exit code $rc)"
        echo "nospace $what: exit code $rc, $(grep -m1 'no space in /dev/shm' "$D/err")"
    done
    ;;
startkill)
    find_priv "-p -f --mount-proc"
    # One namespace for all trials; the script below runs as its pid 1.
    $PRIV sh -c '
        T=$1 JOB=$2 N=$3 D=$4
        mount -t tmpfs -o size=1g tmpfs /dev/shm || exit 99
        export SHMEM_SYMMETRIC_SIZE=8m
        now_ms() { echo $(($(date +%s%N) / 1000000)); }
        # The kill comes at a random moment of a whole run: measure one first.
        t0=$(now_ms)
        "$T" -n 4 "$JOB" all 65536 >"$D/out.first" 2>&1 || { cat "$D/out.first"; exit 1; }
        span=$(($(now_ms) - t0))
        echo "startkill: an undisturbed run takes $span ms"
        # Processes of the job still running (ternrun, its ranks, its janitor).
        others() {
            n=0
            for c in /proc/[0-9]*/comm; do
                case "$(cat "$c" 2>/dev/null)" in ternrun | ternrun-clean | shmseg_job)
                    st=$(sed "s/.*) //" "${c%comm}stat" 2>/dev/null | cut -c1)
                    [ -n "$st" ] && [ "$st" != Z ] && n=$((n + 1)) ;;
                esac
            done
            echo $n
        }
        # A trial counts once the kill landed (the job did not finish first); at most
        # 4 N attempts.
        bad=0 i=0 tries=0
        while [ $i -lt $N ] && [ $tries -lt $((4 * N)) ]; do
            tries=$((tries + 1))
            case $((tries % 3)) in 0) sig=TERM ;; 1) sig=INT ;; 2) sig=KILL ;; esac
            ms=$(( $(od -An -N2 -tu2 /dev/urandom) % (span * 3 / 4 + 1) ))
            "$T" -n 4 "$JOB" all 65536 >"$D/out.$i" 2>&1 &
            tp=$!
            sleep $(printf "%d.%03d" $((ms / 1000)) $((ms % 1000)))
            kill -$sig $tp 2>/dev/null
            wait $tp 2>/dev/null
            rc=$?
            t=0
            while [ "$(others)" != 0 ]; do
                t=$((t + 1))
                [ $t -lt 300 ] || { echo "trial $i: processes still alive 30 s later"; ps -ef; exit 1; }
                sleep 0.1
            done
            left=$(ls /dev/shm | grep -c "^tern-")
            if [ "$left" != 0 ]; then
                echo "trial $i (SIG$sig after $ms ms, exit code $rc): left in /dev/shm: $(ls /dev/shm | tr "\n" " ")"
                bad=$((bad + 1))
                rm -f /dev/shm/tern-*
            fi
            [ $rc = 0 ] || i=$((i + 1))
        done
        [ $i = $N ] || { echo "only $i of $tries kills landed before the job ended"; exit 1; }
        echo "startkill: $bad of $N trials left segments ($tries runs)"
        [ $bad = 0 ]
    ' sh "$T" "$JOB" "$TRIALS" "$D" >"$D/out" 2>"$D/err"
    rc=$?
    cat "$D/out"
    [ $rc = 0 ] || fail "exit code $rc"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "ok [$CASE]"

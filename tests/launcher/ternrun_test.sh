#!/bin/sh
# ternrun_test.sh - behaviour tests of the ternrun launcher, one case per ctest test.
#
#   sh ternrun_test.sh CASE TERNRUN [PMI_CLIENT_TEST] [TUNABLES_DEF]
#
# Every case asserts what a user would see (exit code, the one failure line, output,
# timing, processes left behind) and fails with a message naming what was wrong.
# Ranks that must be checked for leftovers run `sleep $S`, a duration unique to this
# run of the script, so its stray processes (and no other test's, as ctest runs cases
# in parallel) can be found in /proc and are cleaned up on failure.

set -u
CASE=$1
T=$2
CLIENT=${3:-}
TUNDEF=${4:-}

S=9$$
export S
D=$(mktemp -d "${TMPDIR:-/tmp}/ternrun-test.XXXXXX") || exit 1
cleanup() {
    for s in $(stray_pids $S); do kill -9 "$s" 2>/dev/null; done
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

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# Pids of live processes running "sleep <pattern>..." (ignores zombies).
stray_pids() {
    for p in /proc/[0-9]*; do
        c=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || continue
        case "$c" in
        "sleep $1 "*) alive "${p#/proc/}" && echo "${p#/proc/}" ;;
        esac
    done
}

# A process counts as alive if it exists and is not a zombie (a container's init
# may be slow to reap the orphans of a SIGKILLed ternrun).
alive() {
    st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
    st=${st##*) }
    [ "${st%% *}" != Z ]
}

no_strays() {
    # Give the kernel a moment to finish SIGKILLs already sent.
    i=0
    while [ -n "$(stray_pids "$1")" ] && [ $i -lt 20 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ -z "$(stray_pids "$1")" ] || fail "processes left behind: sleep $1 ($(stray_pids "$1"))"
}

# run ARGS...: run ternrun, record exit code in $rc and time in $ms.
run() {
    t0=$(now_ms)
    "$T" "$@" >"$D/out" 2>"$D/err"
    rc=$?
    ms=$(($(now_ms) - t0))
}

expect_rc() { [ "$rc" = "$1" ] || fail "exit code $rc, wanted $1 (ternrun $2)"; }

# Exactly one line from ternrun itself on stderr, matching the pattern (grep -E).
one_line() {
    n=$(grep -c '^ternrun: ' "$D/err")
    [ "$n" = 1 ] || fail "$n 'ternrun:' lines on stderr, wanted exactly 1"
    grep -Eq "$1" "$D/err" || fail "stderr lacks /$1/"
}

# Wait until the files exist (ranks wrote their pids); at most 5 s.
wait_files() {
    i=0
    for f in "$@"; do
        while [ ! -s "$f" ]; do
            sleep 0.02
            i=$((i + 1))
            [ $i -lt 250 ] || fail "rank did not start ($f missing)"
        done
    done
}

case "$CASE" in
success)
    for n in 1 2 8; do
        run -n $n true
        expect_rc 0 "-n $n true"
        [ ! -s "$D/err" ] || fail "stderr not empty for -n $n true"
    done
    run -np 3 --oversubscribe --bind-to none --allow-run-as-root -- true
    expect_rc 0 "-np 3 with ignored options"
    run -n 2 sh -c 'exit 0'
    expect_rc 0 "sh exit 0"
    ;;

fast)
    # Startup is part of performance: 20 two-rank jobs well under 4 s on any CI box
    # (a sleep or a polling loop in ternrun would show up here).
    t0=$(now_ms)
    i=0
    while [ $i -lt 20 ]; do
        "$T" -n 2 true || fail "-n 2 true failed"
        i=$((i + 1))
    done
    total=$(($(now_ms) - t0))
    [ $total -lt 4000 ] || fail "20 jobs of -n 2 true took $total ms"
    echo "20 jobs in $total ms"
    ;;

exit_code)
    # The issue's case: rank 1 exits 3, the others would sleep 30 s.
    run -n 4 sh -c 'if [ "$PMI_RANK" = 1 ]; then exit 3; fi; sleep $S'
    expect_rc 3 "rank 1 exits 3"
    [ $ms -lt 10000 ] || fail "took $ms ms"
    one_line '^ternrun: rank 1 \(pid [0-9]+ on [^)]+\) exited with code 3$'
    no_strays $S
    # Same, with the shell staying between ternrun and sleep (sleep is a grandchild).
    run -n 3 sh -c 'if [ "$PMI_RANK" = 2 ]; then sleep 0.2; exit 4; fi; sleep $S; true'
    expect_rc 4 "rank 2 exits 4"
    [ $ms -lt 10000 ] || fail "took $ms ms"
    one_line '^ternrun: rank 2 \(pid [0-9]+ on [^)]+\) exited with code 4$'
    no_strays $S
    ;;

first_failure)
    # Rank 1 fails first; rank 2 would fail later with another code; rank 0 ignores
    # SIGTERM so only the SIGKILL after --kill-grace ends it.
    # Rank 1 fails only once rank 0 ignores SIGTERM (under load the trap could come late).
    R0=$D/r0 && export R0
    run -n 3 --kill-grace 0.5 sh -c '
        case $PMI_RANK in
        0) trap "" TERM; : >"$R0"; sleep $S ;;
        1) while [ ! -e "$R0" ]; do sleep 0.01; done; exit 5 ;;
        2) sleep 0.3; exit 9 ;;
        esac'
    expect_rc 5 "first failure exit 5"
    one_line '^ternrun: rank 1 \(pid [0-9]+ on [^)]+\) exited with code 5$'
    [ $ms -ge 400 ] || fail "SIGKILL came before the grace period ($ms ms)"
    [ $ms -lt 5000 ] || fail "a rank ignoring SIGTERM kept the job alive $ms ms"
    no_strays $S
    ;;

killed)
    run -n 3 sh -c 'if [ "$PMI_RANK" = 2 ]; then kill -9 $$; fi; sleep $S'
    expect_rc 137 "rank killed by SIGKILL"
    one_line '^ternrun: rank 2 \(pid [0-9]+ on [^)]+\) killed by signal 9 \(SIGKILL\)$'
    no_strays $S
    run -n 1 sh -c 'kill -SEGV $$'
    expect_rc 139 "rank killed by SIGSEGV"
    one_line 'killed by signal 11 \(SIGSEGV\)'
    ;;

timeout)
    run --timeout 1 -n 2 sleep $S
    expect_rc 124 "--timeout 1"
    [ $ms -ge 900 ] && [ $ms -lt 5000 ] || fail "--timeout 1 ended after $ms ms"
    one_line 'timed out'
    no_strays $S
    export MPIEXEC_TIMEOUT=0.5
    run -n 2 sleep $S
    unset MPIEXEC_TIMEOUT
    expect_rc 124 "MPIEXEC_TIMEOUT=0.5"
    [ $ms -lt 5000 ] || fail "MPIEXEC_TIMEOUT ended after $ms ms"
    no_strays $S
    run --timeout 5 -n 2 true
    expect_rc 0 "a job that ends before its timeout"
    [ $ms -lt 2000 ] || fail "a short job waited for its timeout ($ms ms)"
    ;;

tag_output)
    for opt in -l --tag-output; do
        run -n 3 $opt sh -c 'echo out$PMI_RANK; echo err$PMI_RANK >&2; printf partial$PMI_RANK'
        expect_rc 0 "$opt"
        for r in 0 1 2; do
            grep -qx "\[$r\] out$r" "$D/out" || fail "$opt: no '[$r] out$r' on stdout"
            grep -qx "\[$r\] partial$r" "$D/out" || fail "$opt: partial last line of $r lost"
            grep -qx "\[$r\] err$r" "$D/err" || fail "$opt: no '[$r] err$r' on stderr"
        done
        [ "$(wc -l <"$D/out")" = 6 ] || fail "$opt: $(wc -l <"$D/out") stdout lines, wanted 6"
        [ "$(wc -l <"$D/err")" = 3 ] || fail "$opt: $(wc -l <"$D/err") stderr lines, wanted 3"
    done
    # Lines written in three pieces by 4 ranks at once must come out whole.
    run -n 4 -l sh -c '
        x=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx
        i=0
        while [ $i -lt 1500 ]; do
            printf "%s:" $PMI_RANK; printf "%s:" $i; printf "%s\n" $x
            i=$((i + 1))
        done'
    expect_rc 0 "-l with many lines"
    awk -v x=xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx '
        { if ($0 !~ /^\[[0-3]\] [0-3]:[0-9]+:x+$/) { print "bad line: " $0; exit 1 }
          r = substr($1, 2, 1); split($2, f, ":")
          if (f[1] != r || f[2] != next_i[r] + 0 || f[3] != x) { print "bad line: " $0; exit 1 }
          next_i[r]++ }
        END { for (r = 0; r < 4; r++) if (next_i[r] != 1500) { print "rank " r ": " next_i[r]; exit 1 } }
    ' "$D/out" >"$D/awk" || fail "tagged output mangled: $(cat "$D/awk")"
    # Without tagging, ranks write straight to ternrun's stdout.
    run -n 2 sh -c 'echo plain'
    [ "$(cat "$D/out")" = "plain
plain" ] || fail "untagged output changed"
    ;;

env)
    export TERNTEST_EXPORTED=from-parent
    run -n 2 -x TERNTEST_X=x-value -x TERNTEST_EXPORTED --env TERNTEST_ENV=env-value \
        --env=TERNTEST_EQ=a=b -genv TERNTEST_GENV "two words" -l \
        sh -c 'echo "$TERNTEST_X|$TERNTEST_EXPORTED|$TERNTEST_ENV|$TERNTEST_EQ|$TERNTEST_GENV|$PMI_RANK|$PMI_SIZE|$TERN_LOCAL_RANK|$TERN_LOCAL_SIZE"'
    expect_rc 0 "env options"
    for r in 0 1; do
        grep -qx "\[$r\] x-value|from-parent|env-value|a=b|two words|$r|2|$r|2" "$D/out" ||
            fail "rank $r environment wrong"
    done
    run -n 1 --env NOEQUALS true
    expect_rc 2 "--env without ="
    ;;

stdin)
    t0=$(now_ms)
    printf 'line one\nline two\n' | "$T" -n 3 -l cat >"$D/out" 2>"$D/err"
    rc=$?
    expect_rc 0 "cat with stdin"
    [ "$(cat "$D/out")" = "[0] line one
[0] line two" ] || fail "stdin did not reach rank 0 only"
    # The others must not even share it (they would race rank 0 for the input).
    echo data | "$T" -n 3 -l sh -c 'readlink /proc/$$/fd/0' >"$D/out" 2>"$D/err"
    for r in 1 2; do
        grep -qx "\[$r\] /dev/null" "$D/out" || fail "rank $r stdin is not /dev/null"
    done
    grep -qx "\[0\] /dev/null" "$D/out" && fail "rank 0 stdin is /dev/null"
    ;;

bad_option)
    run --no-such-option -n 2 true
    expect_rc 2 "--no-such-option"
    grep -q -- "--no-such-option" "$D/err" || fail "message does not name the option"
    for args in "-n 0 true" "-n abc true" "-n" "--timeout -1 true" "--timeout x true" \
        "--kill-grace x true" "-x =v true"; do
        # shellcheck disable=SC2086
        run $args
        expect_rc 2 "$args"
        [ -s "$D/err" ] || fail "no message for '$args'"
    done
    run -n 2
    expect_rc 2 "no program"
    grep -q "no program" "$D/err" || fail "no message for a missing program"
    run --help
    expect_rc 0 "--help"
    grep -q "usage: ternrun" "$D/out" || fail "--help prints no usage"
    run --version
    expect_rc 0 "--version"
    grep -Eq '^ternrun \(tern\) [0-9]+\.[0-9]+\.[0-9]+$' "$D/out" || fail "--version output"
    ;;

not_found)
    run -n 2 ternrun-no-such-program-xyz
    expect_rc 127 "missing program"
    grep -q "ternrun-no-such-program-xyz" "$D/err" || fail "message does not name the program"
    [ $ms -lt 2000 ] || fail "took $ms ms"
    run -n 2 "$D/nonexistent"
    expect_rc 127 "missing path"
    printf 'not executable\n' >"$D/noexec"
    chmod 644 "$D/noexec"
    run -n 2 "$D/noexec"
    expect_rc 126 "file without x bit"
    grep -q "noexec" "$D/err" || fail "message does not name the file"
    run -n 2 "$D"
    expect_rc 126 "a directory"
    # Found and executable, but exec fails (its interpreter is missing).
    printf '#!/nonexistent/interpreter\n' >"$D/badinterp"
    chmod 755 "$D/badinterp"
    run -n 2 "$D/badinterp"
    expect_rc 127 "missing interpreter"
    one_line "rank [01] \\(pid [0-9]+ on [^)]+\\) could not execute '.*badinterp': No such file"
    # A script without #! runs under sh, as with execvp.
    printf 'exit 6\n' >"$D/script"
    chmod 755 "$D/script"
    run -n 1 "$D/script"
    expect_rc 6 "script without #!"
    ;;

signal)
    sigs="INT TERM HUP"
    # Under nohup SIGHUP is ignored, and ternrun keeps ignoring it on purpose.
    ign=$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status)
    [ $((0x${ign:-0} & 1)) = 0 ] || sigs="INT TERM"
    for sig in $sigs; do
        rm -f "$D"/p*
        "$T" -n 3 sh -c 'echo $$ >'"$D"'/p$PMI_RANK; if [ $PMI_RANK = 2 ]; then trap "" TERM; fi; exec sleep $S' \
            >"$D/out" 2>"$D/err" &
        tp=$!
        wait_files "$D/p0" "$D/p1" "$D/p2"
        t0=$(now_ms)
        kill -$sig $tp
        wait $tp
        rc=$?
        ms=$(($(now_ms) - t0))
        case $sig in INT) want=130 ;; TERM) want=143 ;; HUP) want=129 ;; esac
        expect_rc $want "SIG$sig to ternrun"
        [ $ms -lt 5000 ] || fail "SIG$sig: took $ms ms"
        one_line "received SIG$sig"
        for r in 0 1 2; do
            ! alive "$(cat "$D/p$r")" || fail "SIG$sig: rank $r still alive"
        done
        no_strays $S
    done
    ;;

pdeathsig)
    "$T" -n 2 sh -c 'echo $$ >'"$D"'/p$PMI_RANK; exec sleep $S' >"$D/out" 2>"$D/err" &
    tp=$!
    wait_files "$D/p0" "$D/p1"
    # ternrun holds only Unix sockets: nothing on any network port.
    for l in /proc/$tp/fd/*; do
        ino=$(readlink "$l" 2>/dev/null | sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p')
        [ -n "$ino" ] || continue
        for f in /proc/net/tcp /proc/net/tcp6 /proc/net/udp /proc/net/udp6; do
            [ -r $f ] || continue
            ! awk '{print $10}' $f | grep -qx "$ino" || fail "ternrun has an inet socket"
        done
    done
    kill -9 $tp
    wait $tp 2>/dev/null
    i=0
    while { alive "$(cat "$D/p0")" || alive "$(cat "$D/p1")"; } && [ $i -lt 20 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    ! alive "$(cat "$D/p0")" && ! alive "$(cat "$D/p1")" || fail "ranks survived SIGKILL of ternrun by 2 s"
    ;;

info)
    run --info
    expect_rc 0 "--info"
    [ -r "$TUNDEF" ] || fail "tunables.def not found at '$TUNDEF'"
    names=$(sed -n 's/^TERN_TUNABLE([a-z_0-9]*, *\(TERN_[A-Z_0-9]*\),.*/\1/p' "$TUNDEF")
    [ -n "$names" ] || fail "no tunables parsed from $TUNDEF"
    for n in $names; do
        grep -q "$n" "$D/out" || fail "--info does not list $n"
    done
    grep -Eq 'cross-memory attach.*: (permitted|NOT permitted)' "$D/out" || fail "no CMA verdict"
    grep -q 'cores: [0-9]' "$D/out" || fail "no core count"
    grep -q '/dev/shm: .*free' "$D/out" || fail "no /dev/shm line"
    grep -q 'ptrace_scope' "$D/out" || fail "no ptrace_scope line"
    grep -Eq '^ternrun \(tern\) [0-9]' "$D/out" || fail "no version"
    ;;

pmi)
    for n in 1 3 8; do
        run -n $n "$CLIENT" normal
        expect_rc 0 "pmi_client_test normal with -n $n"
        [ ! -s "$D/err" ] || fail "stderr not empty with -n $n"
    done
    ;;

pmi_malformed)
    for mode in malformed toolong binary; do
        run --timeout 20 -n 3 "$CLIENT" $mode
        expect_rc 0 "pmi_client_test $mode"
        grep -q "closing its PMI connection" "$D/err" || fail "$mode: no warning about the close"
    done
    ;;

pmi_kvsfull)
    run --timeout 50 -n 2 "$CLIENT" kvsfull
    expect_rc 0 "pmi_client_test kvsfull"
    grep -q '^kvs full after [0-9]* puts$' "$D/out" || fail "no kvs_full answer"
    ;;

pmi_noread)
    run --timeout 50 -n 3 "$CLIENT" noread
    expect_rc 0 "pmi_client_test noread"
    grep -q '^ternrun: rank 1 .* does not read its PMI replies; closing its PMI connection$' \
        "$D/err" || fail "the dropped client was not named"
    ;;

pmi_deadlock)
    run --timeout 20 -n 3 "$CLIENT" deadlock
    [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "exit code $rc for a barrier that can never complete"
    [ $ms -lt 5000 ] || fail "took $ms ms to notice"
    one_line 'barrier.*rank 1 '
    ;;

pmi_abort)
    run --timeout 20 -n 3 "$CLIENT" abort
    expect_rc 7 "abort exitcode=7"
    one_line '^ternrun: rank 1 \(pid [0-9]+ on [^)]+\) called abort with code 7: test_abort$'
    ;;

shm_cleanup)
    run --timeout 20 -n 2 "$CLIENT" shmleak
    expect_rc 137 "rank 0 killed during startup"
    kvs=$(sed -n 's/^kvsname=//p' "$D/out")
    [ -n "$kvs" ] || fail "client printed no kvsname"
    ls /dev/shm/tern-"$kvs"-* >/dev/null 2>&1 && fail "left in /dev/shm: $(ls /dev/shm/tern-"$kvs"-*)"
    ;;

*)
    fail "unknown case"
    ;;
esac
exit 0

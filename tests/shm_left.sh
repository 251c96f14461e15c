# shm_left.sh - sourced by the tests that check what a job leaves in /dev/shm
# (tests/mp/expect_fail.sh, tests/launcher/hygiene_test.sh, tests/multihost/netns_test.sh).
#
# shm_list: every tern segment in /dev/shm, sorted.
shm_list() { ls -1 /dev/shm 2>/dev/null | grep '^tern-' | sort; }
# shm_left: what shm_list shows, less the segments of jobs whose ternrun still runs (the
# name is tern-tern<ternrun pid>x...): another job on the machine, not one the test left.
shm_left() {
    shm_list | while read -r f; do
        p=${f#tern-tern}
        p=${p%%x*}
        case $p in '' | *[!0-9]*) ;; *) kill -0 "$p" 2>/dev/null && continue ;; esac
        echo "$f"
    done
}

# bench/load.sh - sourced by the bench scripts that run "with the machine loaded": starts
# N busy loops beside a benchmark and ends them (by pid) when the script exits.
#
#   . "$(dirname "$0")/load.sh"
#   load_start "$LOAD"      # N busy processes; their pids in load_pids
#   ...                     # load_stop runs from the caller's EXIT trap (call it there)
load_pids=()

# load_start N: start N busy loops in the background.
load_start() {
    local i
    for ((i = 0; i < ${1:-0}; i++)); do
        sh -c 'while :; do :; done' &
        load_pids+=($!)
    done
}

# load_stop: end the busy loops load_start started (and only those).
load_stop() {
    local p
    for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null; done
    load_pids=()
}

#!/bin/sh
# check_layers.sh - the layering rule "capabilities, not identity": outside src/transport
# and src/core, no file includes a transport header or names a transport's ops table
# (tl_self_ops, tl_shm_ops, ..., tl_registry); and no header of the core lets
# transport.h through to the layers above (only core_tl.h, for the core's own .c files,
# includes it, and nothing outside src/core includes core_tl.h). Layers above ask the
# core what a peer's transport can do (core_peer_caps() and friends).
#
# Usage: check_layers.sh SRCDIR      check the tree; exit 1 and name each violation
#        check_layers.sh --selftest  plant violations in a scratch tree, expect each caught
set -u

check() {
    src=$1
    bad=0
    for f in $(find "$src" -name '*.[ch]' | sort); do
        rel=${f#"$src"/}
        case $rel in
        transport/*) continue ;;
        core/*.c | core/core_tl.h)
            continue ;;
        core/*)
            # A core header seen by the layers above.
            if grep -Hn '#[[:space:]]*include[[:space:]]*"\(transport/\|core/core_tl\.h\)' "$f"; then
                echo "$rel: a core header for every layer includes a transport header" >&2
                bad=1
            fi
            continue ;;
        esac
        if grep -Hn '#[[:space:]]*include[[:space:]]*"\(transport/\|core/core_tl\.h\)' "$f"; then
            echo "$rel: includes a transport header (ask the core: core_peer_caps)" >&2
            bad=1
        fi
        if grep -HnE '\btl_[a-z0-9_]*ops\b|\btl_registry\b' "$f"; then
            echo "$rel: names a transport's ops table (compare capabilities, not identity)" >&2
            bad=1
        fi
    done
    return $bad
}

selftest() {
    tmp=$(mktemp -d) || exit 1
    trap 'rm -rf "$tmp"' EXIT
    mkdir -p "$tmp/core" "$tmp/transport" "$tmp/mpi"
    printf '#include "transport/transport.h"\n' >"$tmp/core/core_tl.h"
    printf '#include "core/core_tl.h"\nint x(void) { return tl_self_ops.size; }\n' >"$tmp/core/core.c"
    printf '#include "core/core.h"\n' >"$tmp/mpi/ok.c"
    check "$tmp" >/dev/null 2>&1 || { echo "selftest: a clean tree was refused" >&2; exit 1; }
    for bad in '#include "transport/transport.h"' '#include "core/core_tl.h"' \
        'int y(void) { return core.peers[1].tl == &tl_shm_ops; }' 'const void *z = tl_registry;'; do
        printf '%s\n' "$bad" >"$tmp/mpi/bad.c"
        if check "$tmp" >/dev/null 2>&1; then
            echo "selftest: not caught: $bad" >&2
            exit 1
        fi
    done
    rm "$tmp/mpi/bad.c"
    printf '#include "transport/transport.h"\n' >"$tmp/core/core.h"
    if check "$tmp" >/dev/null 2>&1; then
        echo "selftest: not caught: core.h including transport.h" >&2
        exit 1
    fi
    echo "check_layers: selftest passed"
}

if [ "${1:-}" = --selftest ]; then
    selftest
    exit 0
fi
[ $# -eq 1 ] || { echo "usage: $0 SRCDIR | --selftest" >&2; exit 2; }
if check "$1"; then
    echo "check_layers: no layer above the core sees a transport"
    exit 0
fi
exit 1

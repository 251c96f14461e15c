#!/usr/bin/env bash
# ofi_startup.sh - job start-up and tear-down at growing rank counts on this host
# (oversubscribed), every peer through the network path: tern over ofi (libfabric's tcp
# provider) against tern's own tcp. Prints wall seconds of `ternrun -n N tern_initfini`
# (best of REPEAT, default 3) and the ofi-tcp difference per rank, which docs/FABRIC.md
# extrapolates. usage: bench/ofi_startup.sh [N ...]  (default 8 16 32 64)
# env: BUILD_DIR (default build-bench), REPEAT; OFI_LIB (default: the libfabric the MPICH
# wheel bundles in $HOME/.cache/tern/venv-mpich5, when present; empty: no such column) adds a column
# with TERN_OFI_LIBRARY=$OFI_LIB - a libfabric build without Debian's built-in PSM and
# verbs initialisation (FABRIC.md, start-up).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-bench}
rep=${REPEAT:-3}
ofilib=${OFI_LIB-${MPICH5_VENV:-$HOME/.cache/tern/venv-mpich5}/lib/mpich/libfabric.so.1}
[ -n "$ofilib" ] && [ ! -e "$ofilib" ] && ofilib=""
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target ternrun tern_initfini >/dev/null
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(8 16 32 64)
best() { # best wall seconds of $rep runs of the command
  local b="" t0 t1 s
  for _ in $(seq "$rep"); do
    t0=$(date +%s.%N)
    timeout 600 "$@" >/dev/null 2>&1 || { echo fail; return; }
    t1=$(date +%s.%N)
    s=$(echo "$t1 - $t0" | bc)
    if [ -z "$b" ] || [ "$(echo "$s < $b" | bc)" = 1 ]; then b=$s; fi
  done
  echo "$b"
}
echo "ranks  tern-ofi(s)  tern-tcp(s)  (ofi-tcp)/rank(ms)  ofi-lib(s)   load $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "$ofilib" ] && echo "ofi-lib: TERN_OFI_LIBRARY=$ofilib"
for n in "${counts[@]}"; do
  o=$(best "$build/bin/ternrun" -n "$n" --timeout 300 -x TERN_TRANSPORTS=self,ofi -x FI_PROVIDER=tcp \
        "$build/bench/tern_initfini")
  t=$(best "$build/bin/ternrun" -n "$n" --timeout 300 -x TERN_TRANSPORTS=self,tcp \
        "$build/bench/tern_initfini")
  l=n/a
  [ -n "$ofilib" ] &&
    l=$(best "$build/bin/ternrun" -n "$n" --timeout 300 -x TERN_TRANSPORTS=self,ofi -x FI_PROVIDER=tcp \
          -x TERN_OFI_LIBRARY="$ofilib" "$build/bench/tern_initfini")
  d=n/a
  [ "$o" != fail ] && [ "$t" != fail ] && d=$(echo "scale=2; ($o - $t) * 1000 / $n" | bc)
  printf "%5d  %11s  %11s  %18s  %10s\n" "$n" "$o" "$t" "$d" "$l"
done

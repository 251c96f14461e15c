#!/usr/bin/env bash
# ofi_startup.sh - job start-up and tear-down at growing rank counts on this host
# (oversubscribed), every peer through the network path: tern over ofi (libfabric's tcp
# provider) against tern's own tcp. Prints wall seconds of `ternrun -n N tern_initfini`
# (best of REPEAT, default 3) and the ofi-tcp difference per rank, which docs/FABRIC.md
# extrapolates. usage: bench/ofi_startup.sh [N ...]  (default 8 16 32 64)
# env: BUILD_DIR (default build-bench), REPEAT.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-bench}
rep=${REPEAT:-3}
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
echo "ranks  tern-ofi(s)  tern-tcp(s)  (ofi-tcp)/rank(ms)   load $(cut -d' ' -f1-3 /proc/loadavg)"
for n in "${counts[@]}"; do
  o=$(best "$build/bin/ternrun" -n "$n" --timeout 300 -x TERN_TRANSPORTS=self,ofi -x FI_PROVIDER=tcp \
        "$build/bench/tern_initfini")
  t=$(best "$build/bin/ternrun" -n "$n" --timeout 300 -x TERN_TRANSPORTS=self,tcp \
        "$build/bench/tern_initfini")
  d=n/a
  [ "$o" != fail ] && [ "$t" != fail ] && d=$(echo "scale=2; ($o - $t) * 1000 / $n" | bc)
  printf "%5d  %11s  %11s  %18s\n" "$n" "$o" "$t" "$d"
done

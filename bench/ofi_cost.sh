#!/usr/bin/env bash
# ofi_cost.sh - what one ping-pong round trip costs over libfabric's tcp provider, in
# numbers that do not depend on the machine's load: system calls per round trip and rank
# (strace -f -c, the difference of a run of N and one of 3N iterations, so start-up and
# libfabric's provider initialisation cancel out), with the calls that make them up.
# Two ranks on this host, TERN_TRANSPORTS=self,ofi FI_PROVIDER=tcp (tcp;ofi_rxm), and tern's
# own tcp transport as the reference.
#
# usage: bench/ofi_cost.sh [SIZES] [CONFIG ...]
#   SIZES   comma-separated bytes (default 8,4096,32768,65536)
#   CONFIG  "VAR=VALUE[,VAR=VALUE...]" settings of one ofi column (default: the defaults,
#           TERN_OFI_PASSTHRU=0); the column "tcp" is always added
# env: BUILD_DIR (default build), ITERS (N above, default 1000; sizes above 64 KiB use
#      N=32 iterations through the byte budget)
# Needs strace; prints "skipped: ..." and exits 0 without it.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
iters=${ITERS:-1000}
sizes=${1:-8,4096,32768,65536}
shift || true
configs=("$@")
[ ${#configs[@]} -eq 0 ] && configs=("" "TERN_OFI_PASSTHRU=0")
command -v strace >/dev/null || { echo "skipped: strace not installed"; exit 0; }
[ -x "$build/bin/ternrun" ] && [ -x "$build/bench/tern_pingpong" ] ||
  { echo "build $build first (ternrun, tern_pingpong)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# count TRANSPORT CONFIG SIZE N: strace -c summary of one run into $tmp/c.N
count() {
  local t=$1 cfg=$2 size=$3 n=$4 xs=() it
  IFS=, read -ra kv <<< "$cfg"
  for v in "${kv[@]}"; do [ -n "$v" ] && xs+=(-x "$v"); done
  if [ "$size" -gt 65536 ]; then it=(-b $((size * n / iters * 32))); else it=(-i "$n"); fi
  timeout 900 strace -f -c -o "$tmp/c.$n" "$build/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,"$t" \
    -x FI_PROVIDER=tcp "${xs[@]}" "$build/bench/tern_pingpong" -s "$size" -t 1 "${it[@]}" \
    --only pingpong --csv > /dev/null 2>&1
}

# one TRANSPORT CONFIG SIZE: "total | call=count ..." per round trip and rank
one() {
  local n1=$iters n3=$((3 * iters)) rts
  count "$1" "$2" "$3" $n1 && count "$1" "$2" "$3" $n3 || { echo "run failed"; return; }
  # tern_pingpong warms up with a tenth of the iterations more; two ranks.
  if [ "$3" -gt 65536 ]; then rts=$((2 * 32)); else rts=$((n3 - n1)); fi
  awk -v rts="$rts" 'FNR == 1 { f++ }
    $NF ~ /^[a-z_0-9]+$/ && $NF != "total" && $4 ~ /^[0-9]+$/ { c[f, $NF] = $4; k[$NF] = 1 }
    END { tot = 0; s = ""
          for (x in k) { d = (c[2, x] - c[1, x]) / (rts * 1.1) / 2
                         if (d >= 0.05) { s = s sprintf(" %s=%.1f", x, d); tot += d } }
          printf "%6.1f |%s\n", tot, s }' "$tmp/c.$n1" "$tmp/c.$n3"
}

echo "# system calls per round trip and rank (strace -c, runs of $iters and $((3 * iters)) iterations)"
echo "# $(date -u +%Y-%m-%dT%H:%MZ), load: $(cut -d' ' -f1-3 /proc/loadavg)"
for size in ${sizes//,/ }; do
  printf '%-10s %-34s %s\n' "$size" "tcp" "$(one tcp "" "$size")"
  for cfg in "${configs[@]}"; do
    printf '%-10s %-34s %s\n' "$size" "ofi ${cfg:-(defaults)}" "$(one ofi "$cfg" "$size")"
  done
done

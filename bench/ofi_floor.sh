#!/usr/bin/env bash
# ofi_floor.sh - what the libfabric provider itself costs, beside tern over it, same run:
# libfabric's own fi_pingpong (libfabric-bin; an RDM ping-pong that busy-polls its
# completion queue, nothing above the provider) over FI_PROVIDER=tcp, with the system's
# libfabric (1.17: tcp;ofi_rxm) and with the one the MPICH 5 wheel bundles (a newer tcp
# provider that is RDM itself), against tern over each and tern's own tcp transport.
# Two processes on this host, loopback. A provider whose own ping-pong is slower than
# tern-tcp caps every library above it: no code in tern's ofi transport can get under it.
#
# usage: bench/ofi_floor.sh [SIZES]    (default 8,4096,65536,1048576)
# env: BUILD_DIR (default build), MPICH5_VENV (default $HOME/.cache/tern/venv-mpich5),
#      ITERS (fi_pingpong iterations; default 20000, 2000 from 64 KiB), REPEAT (rounds, 3)
# Prints one-way us per size and implementation (the best of the rounds) and the ratios to
# tern-tcp (> 1: slower than tern-tcp). Timing never fails the script.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
venv=${MPICH5_VENV:-$HOME/.cache/tern/venv-mpich5}
wheel=$venv/lib/mpich
sizes=${1:-8,4096,65536,1048576}
rounds=${REPEAT:-3}
command -v fi_pingpong >/dev/null || { echo "skipped: fi_pingpong missing (apt-get install -y libfabric-bin)"; exit 0; }
[ -x "$build/bin/ternrun" ] && [ -x "$build/bench/tern_pingpong" ] ||
  { echo "build $build first (ternrun, tern_pingpong)"; exit 1; }
tmp=$(mktemp -d)
server=
cleanup() { [ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
port=$((47600 + $$ % 300))

# fipp LIBDIR SIZE: fi_pingpong one-way us (LIBDIR empty: the system's libfabric)
fipp() {
  local ld=$1 n=$2 it=${ITERS:-20000}
  [ "$n" -ge 65536 ] && it=${ITERS:-2000}
  port=$((port + 1))
  LD_LIBRARY_PATH=$ld FI_PROVIDER=tcp timeout 120 fi_pingpong -p tcp -e rdm -I "$it" -S "$n" \
    -B "$port" > "$tmp/srv" 2>&1 &
  server=$!
  sleep 0.3
  LD_LIBRARY_PATH=$ld FI_PROVIDER=tcp timeout 120 fi_pingpong -p tcp -e rdm -I "$it" -S "$n" \
    -P "$port" 127.0.0.1 2>/dev/null | awk 'NR == 2 { print $7 }'
  wait "$server" 2>/dev/null
  server=
}

# ternpp ENV... : tern_pingpong one-way t_min for every size, "size us" lines
ternpp() {
  timeout 300 "$build/bin/ternrun" -n 2 "$@" "$build/bench/tern_pingpong" -s "$sizes" -t 3 \
    --only pingpong --csv 2>/dev/null | awk -F, '$5 ~ /^[0-9]+$/ { print $5, $8 }'
}

echo "# ofi floor - $(date -u +%FT%TZ) - $(hostname); load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq "$rounds"); do
  ternpp -x TERN_TRANSPORTS=self,tcp | sed 's/^/tcp /' >> "$tmp/all"
  ternpp -x TERN_TRANSPORTS=self,ofi -x FI_PROVIDER=tcp | sed 's/^/ofi /' >> "$tmp/all"
  for n in ${sizes//,/ }; do echo "fi $n $(fipp "" "$n")" >> "$tmp/all"; done
  if [ -e "$wheel/libfabric.so.1" ]; then
    ternpp -x TERN_TRANSPORTS=self,ofi -x FI_PROVIDER=tcp -x TERN_OFI_LIBRARY="$wheel/libfabric.so.1" |
      sed 's/^/ofi2 /' >> "$tmp/all"
    for n in ${sizes//,/ }; do echo "fi2 $n $(fipp "$wheel" "$n")" >> "$tmp/all"; done
  fi
done
awk -v sizes="$sizes" '
  NF == 3 && $3 != "" { k = $1 SUBSEP $2; if (!(k in b) || $3 < b[k]) b[k] = $3 }
  function v(i, n) { return ((i, n) in b) ? sprintf("%.2f", b[i, n]) : "n/a" }
  function r(i, n) { return ((i, n) in b) && b["tcp", n] > 0 ? sprintf("%.2f", b[i, n] / b["tcp", n]) : "n/a" }
  END {
    print "one-way us, best of the rounds; /tcp: the time over tern-tcp'"'"'s (> 1 slower)"
    print "fi-pp: fi_pingpong (provider alone); 1.17 = system libfabric (tcp;ofi_rxm), wheel = MPICH 5 wheel'"'"'s"
    printf "%-9s %9s %11s %10s %12s %10s %9s %9s %9s %9s\n", "bytes", "tern-tcp", "fi-pp 1.17",
           "tern-ofi", "fi-pp wheel", "tern-ofi2", "fi/tcp", "ofi/tcp", "fi2/tcp", "ofi2/tcp"
    n = split(sizes, s, ",")
    for (i = 1; i <= n; i++) {
      z = s[i]
      printf "%-9s %9s %11s %10s %12s %10s %9s %9s %9s %9s\n", z, v("tcp", z), v("fi", z),
             v("ofi", z), v("fi2", z), v("ofi2", z), r("fi", z), r("ofi", z), r("fi2", z), r("ofi2", z)
    }
  }' "$tmp/all"

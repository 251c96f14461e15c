#!/usr/bin/env bash
# compare_ofi.sh - point-to-point over libfabric's tcp provider (tcp;ofi_rxm), same run,
# two ranks on this host forced through the network path:
#   tern ofi     TERN_TRANSPORTS=self,ofi FI_PROVIDER=tcp
#   tern tcp     TERN_TRANSPORTS=self,tcp (tern's own transport: the "within 10%" bar)
#   Open MPI     --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "tcp;ofi_rxm"
#   MPICH 5      ch4:ofi from the `mpich` wheel (MPIR_CVAR_CH4_NETMOD=ofi
#                MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=tcp), in the venv MPICH5_VENV
#                (default $HOME/.cache/tern/venv-mpich5: python3 -m venv DIR && DIR/bin/pip install mpich)
#   tern ofi2    the same with TERN_OFI_LIBRARY=$OFI_LIB (default: the libfabric the MPICH
#                wheel bundles, a newer build whose tcp provider is RDM itself, no ofi_rxm);
#                OFI_LIB= (empty) leaves the column out
#   tern ofi2    or, with OFI_LIB= (empty) and OFI_BEFORE="VAR=VALUE ...", tern ofi with those
#                settings (an earlier default: a before/after pair in the same run)
# Prints one-way time (us) from 0 B to 64 KiB and bandwidth (GB/s) from 64 KiB to 64 MiB,
# with ratios (> 1: tern ofi better); writes bench/results/<stamp>-ofi.txt.
# env: OFI_X="VAR=VALUE ..." extra variables for the tern ofi runs (e.g. the settings of an
# earlier default: OFI_X="TERN_OFI_PASSTHRU=0 TERN_OFI_FRAME=65408" is the 1ddbedb transport),
# LAT_SIZES, BW_SIZES (comma lists of bytes: the latency and bandwidth points; e.g. powers
# of 4), BUILD_DIR (default build-bench), REPEAT=N rounds (default 1), TRIALS (default 3),
# ITERS (iterations per trial for small messages, default 2000: the MPIs busy-poll, and
# on a loaded machine a round trip of theirs takes a millisecond).
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-bench}
venv=${MPICH5_VENV:-$HOME/.cache/tern/venv-mpich5}
trials=${TRIALS:-3}
ofilib=${OFI_LIB-$venv/lib/mpich/libfabric.so.1}
[ -n "$ofilib" ] && [ ! -e "$ofilib" ] && ofilib=
iters=${ITERS:-2000}
ofix=()
for v in ${OFI_X:-}; do ofix+=(-x "$v"); done
before=()
for v in ${OFI_BEFORE:-}; do before+=(-x "$v"); done
mkdir -p bench/results "$build/bench-mpi"
stamp=$(date +%Y-%m-%d-%H%M%S)
out=bench/results/$stamp-ofi.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lat=${LAT_SIZES:-0,8,64,512,4096,65536}
bw=${BW_SIZES:-65536,262144,1048576,4194304,16777216,67108864}

if [ "${1:-}" != "--no-build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target ternrun tern_pingpong >/dev/null
  command -v mpicc.openmpi >/dev/null &&
    mpicc.openmpi -O2 -I bench bench/mpi_pingpong.c -o "$build/bench-mpi/mpi_pingpong.openmpi"
  [ -x "$venv/bin/mpicc" ] &&
    "$venv/bin/mpicc" -O2 -I bench bench/mpi_pingpong.c -o "$build/bench-mpi/mpi_pingpong.mpich5"
fi

# one NAME SIZES: every implementation at those sizes, CSV in $tmp/NAME.<impl>.csv
one() {
  local name=$1 sizes=$2 args=(-s "$2" -t "$trials" -i "$iters" --only pingpong --csv)
  timeout 900 "$build/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,ofi -x FI_PROVIDER=tcp \
    "${ofix[@]}" "$build/bench/tern_pingpong" "${args[@]}" > "$tmp/$name.ofi.csv" 2>/dev/null
  if [ -n "$ofilib" ]; then
    timeout 900 "$build/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,ofi -x FI_PROVIDER=tcp \
      -x TERN_OFI_LIBRARY="$ofilib" "${ofix[@]}" "$build/bench/tern_pingpong" "${args[@]}" \
      > "$tmp/$name.ofi2.csv" 2>/dev/null
  elif [ ${#before[@]} -gt 0 ]; then
    timeout 900 "$build/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,ofi -x FI_PROVIDER=tcp \
      "${before[@]}" "$build/bench/tern_pingpong" "${args[@]}" > "$tmp/$name.ofi2.csv" 2>/dev/null
  fi
  timeout 900 "$build/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,tcp \
    "$build/bench/tern_pingpong" "${args[@]}" > "$tmp/$name.tcp.csv" 2>/dev/null
  if [ -x "$build/bench-mpi/mpi_pingpong.openmpi" ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 900 mpirun.openmpi \
      --oversubscribe -n 2 --mca pml cm --mca mtl ofi --mca mtl_ofi_provider_include "tcp;ofi_rxm" \
      "$build/bench-mpi/mpi_pingpong.openmpi" "${args[@]}" > "$tmp/$name.ompi.csv" 2>/dev/null
  fi
  if [ -x "$build/bench-mpi/mpi_pingpong.mpich5" ]; then
    MPIR_CVAR_CH4_NETMOD=ofi MPIR_CVAR_NOLOCAL=1 FI_PROVIDER=tcp timeout 900 \
      "$venv/bin/mpiexec" -n 2 "$build/bench-mpi/mpi_pingpong.mpich5" "${args[@]}" \
      > "$tmp/$name.mpich.csv" 2>/dev/null
  fi
}

# table KIND SIZES NAME: KIND lat (us, ratios other/ofi) or bw (GB/s, ratios ofi/other)
table() {
  awk -F, -v kind="$1" -v sizes="$2" '
    $5 ~ /^[0-9]+$/ { f = FILENAME; sub(/.*\./, "", f); sub(/\.csv$/, "", f)
                      impl = FILENAME; sub(/\.csv$/, "", impl); sub(/.*\./, "", impl)
                      v[impl, $5] = kind == "lat" ? $8 : $10 / 1000 }
    function show(x) { return x == "" ? "n/a" : sprintf(kind == "lat" ? "%.2f" : "%.3f", x) }
    function ratio(a, b) { if (a == "" || b == "" || a == 0 || b == 0) return "n/a"
                           return sprintf("%.2f", kind == "lat" ? b / a : a / b) }
    END {
      printf "%-10s %10s %10s %10s %10s %10s %8s %8s %9s %8s\n", "bytes", "tern-ofi", "tern-ofi2",
             "tern-tcp", "openmpi", "mpich5", "x/tcp", "x/ompi", "x/mpich", "x2/tcp"
      n = split(sizes, s, ",")
      for (i = 1; i <= n; i++) {
        b = s[i]
        printf "%-10s %10s %10s %10s %10s %10s %8s %8s %9s %8s   (%s)\n", b, show(v["ofi", b]),
               show(v["ofi2", b]), show(v["tcp", b]), show(v["ompi", b]), show(v["mpich", b]),
               ratio(v["ofi", b], v["tcp", b]), ratio(v["ofi", b], v["ompi", b]),
               ratio(v["ofi", b], v["mpich", b]), ratio(v["ofi2", b], v["tcp", b]),
               kind == "lat" ? "us one-way" : "GB/s"
      }
    }' "$tmp/$3".*.csv
}

rounds=${REPEAT:-1}
: > "$out"
for round in $(seq "$rounds"); do
  one lat "$lat"
  one bw "$bw"
  {
    echo "tern ofi comparison (provider tcp;ofi_rxm) - $stamp - $(hostname); load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "latency: one-way us, ratio other/tern-ofi; bandwidth: GB/s, ratio tern-ofi/other; > 1: tern ofi better"
    if [ -z "$ofilib" ] && [ -n "${OFI_BEFORE:-}" ]; then
      echo "tern-ofi2: tern-ofi with $OFI_BEFORE (before); x2/tcp: tern-ofi2 against tern-tcp"
    else
      echo "tern-ofi2: TERN_OFI_LIBRARY=${ofilib:-(none)}; x2/tcp: tern-ofi2 against tern-tcp"
    fi
    [ -n "${OFI_X:-}" ] && echo "tern-ofi, tern-ofi2 with: $OFI_X"
    table lat "$lat" lat
    table bw "$bw" bw
  } | tee -a "$out"
done
echo "written: $out"

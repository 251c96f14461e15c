#!/usr/bin/env bash
# compare_tcp.sh - point-to-point over TCP on loopback, same run: tern forced onto tcp
# (TERN_TRANSPORTS=self,tcp), Open MPI's tcp BTL (--mca btl tcp,self --mca pml ob1)
# and raw TCP (NetPIPE's NPtcp, best of its default and 4 MiB socket buffers).
# Prints one-way time (us) for 8 B and bandwidth (GB/s) from 64 KiB to 64 MiB with
# ratios; writes bench/results/<stamp>-tcp.txt.   env: BUILD_DIR (default build-bench),
# REPEAT=N (default 1): N rounds, each table printed, then the per-column medians (values
# and ratios, each ratio the median of the rounds' ratios) - for a loaded machine.
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-bench}
mkdir -p bench/results "$build/bench-mpi"
stamp=$(date +%Y-%m-%d-%H%M%S)
out=bench/results/$stamp-tcp.txt
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; [ -n "${np_pid:-}" ] && kill "$np_pid" 2>/dev/null' EXIT
sizes=8,65536,262144,1048576,4194304,16777216,67108864

if [ "${1:-}" != "--no-build" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" --target ternrun tern_pingpong >/dev/null
  command -v mpicc.openmpi >/dev/null &&
    mpicc.openmpi -O2 -I bench bench/mpi_pingpong.c -o "$build/bench-mpi/mpi_pingpong.openmpi"
fi

rounds=${REPEAT:-1}
: > "$out"
for round in $(seq "$rounds"); do
  # tern and Open MPI: the same ping-pong program family, CSV rows "...,bytes,...,MBps_max,..."
  timeout 600 "$build/bin/ternrun" -n 2 -x TERN_TRANSPORTS=self,tcp "$build/bench/tern_pingpong" \
    -s "$sizes" -t 3 --only pingpong --csv > "$tmp/tern.csv" 2>/dev/null
  if [ -x "$build/bench-mpi/mpi_pingpong.openmpi" ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 600 mpirun.openmpi -n 2 \
      --mca btl tcp,self --mca pml ob1 --mca btl_tcp_if_include lo \
      "$build/bench-mpi/mpi_pingpong.openmpi" -s "$sizes" -t 3 --only pingpong --csv \
      > "$tmp/ompi.csv" 2>/dev/null
  fi
  # NPtcp: receiver in the background, transmitter here; its output file has
  # "bytes Mbps seconds-one-way" per line.
  for buf in 0 4194304; do
    opt=(); [ "$buf" != 0 ] && opt=(-b "$buf")
    NPtcp -p 0 -l 8 -u 67108864 "${opt[@]}" >/dev/null 2>&1 & np_pid=$!
    sleep 0.3
    timeout 300 NPtcp -h 127.0.0.1 -p 0 -l 8 -u 67108864 "${opt[@]}" -o "$tmp/np.$buf" >/dev/null 2>&1
    wait "$np_pid" 2>/dev/null; np_pid=
  done

  {
    echo "tern tcp comparison - $stamp - $(hostname); load $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "one-way us for 8 B (ratio other/tern), GB/s above (ratio tern/other); > 1: tern better"
    awk -F, -v sizes="$sizes" '
      function best_np(b,   v) { v = np0[b]; if (np4[b] > v) v = np4[b]; return v }
      FILENAME ~ /tern.csv/ && $5 ~ /^[0-9]+$/ { t[$5] = $8; bw[$5] = $10 / 1000 }
      FILENAME ~ /ompi.csv/ && $5 ~ /^[0-9]+$/ { ot[$5] = $8; obw[$5] = $10 / 1000 }
      FILENAME ~ /np\.0$/ { split($0, f, " "); np0[f[1]] = f[2] / 8000; npt0[f[1]] = f[3] * 1e6 }
      FILENAME ~ /np\.4194304$/ { split($0, f, " "); np4[f[1]] = f[2] / 8000; npt4[f[1]] = f[3] * 1e6 }
      END {
        printf "%-10s %10s %10s %10s %9s %9s\n", "bytes", "tern", "openmpi", "raw tcp", "x/ompi", "x/raw"
        n = split(sizes, s, ",")
        for (i = 1; i <= n; i++) {
          b = s[i]
          if (b == 8) {
            r = npt0[b]; if (npt4[b] != "" && (r == "" || npt4[b] < r)) r = npt4[b]
            printf "%-10s %10.2f %10s %10s %9s %9s   (us)\n", b, t[b], ot[b] == "" ? "n/a" : sprintf("%.2f", ot[b]),
                   r == "" ? "n/a" : sprintf("%.2f", r), ot[b] == "" ? "n/a" : sprintf("%.2f", ot[b] / t[b]),
                   r == "" ? "n/a" : sprintf("%.2f", r / t[b])
          } else {
            r = best_np(b)
            printf "%-10s %10.2f %10s %10s %9s %9s   (GB/s)\n", b, bw[b], obw[b] == "" ? "n/a" : sprintf("%.2f", obw[b]),
                   r == "" ? "n/a" : sprintf("%.2f", r), obw[b] == "" ? "n/a" : sprintf("%.2f", bw[b] / obw[b]),
                   r == "" || r == 0 ? "n/a" : sprintf("%.2f", bw[b] / r)
          }
        }
      }' "$tmp/tern.csv" "$tmp/ompi.csv" "$tmp/np.0" "$tmp/np.4194304" 2>/dev/null
  } > "$tmp/table.$round"
    cat "$tmp/table.$round" | tee -a "$out"
done
if [ "$rounds" -gt 1 ]; then
  {
    echo "MEDIANS of $rounds rounds (each value and each ratio the median over the rounds)"
    printf "%-10s %10s %10s %10s %9s %9s\n" "bytes" "tern" "openmpi" "raw tcp" "x/ompi" "x/raw"
    for b in ${sizes//,/ }; do
      grep -h "^$b " "$tmp"/table.* | awk -v b="$b" '
        function med(col,   n, i, j, t, a) { n = 0
          for (i = 1; i <= NR; i++) if (v[i, col] != "n/a") a[++n] = v[i, col]
          for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
          if (n == 0) return "n/a"
          return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
        { for (c = 2; c <= 6; c++) v[NR, c] = $c; unit = $7 }
        END { printf "%-10s %10.2f %10s %10s %9s %9s   %s\n", b, med(2), med(3), med(4), med(5), med(6), unit }'
    done
  } | tee -a "$out"
fi
echo "written to $out"

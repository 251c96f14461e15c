#!/usr/bin/env bash
# hier_netns.sh - hierarchical vs flat collectives across "nodes" that are network
# namespaces on this machine (issue 17): barrier, bcast, reduce and allreduce at 8 B ..
# 1 MiB on NODES namespaces x PER ranks (default 2 x 4), with the hierarchical path
# (TERN_COLL_HIER=1; off by default) and the flat schedules (TERN_COLL_HIER=0) in the same
# run, alternating, REPS times each. Needs root (ip netns); prints the median of the
# runs per cell and ratio = flat / hierarchical (> 1: hierarchical faster).
#   bench/hier_netns.sh       env: BUILD_DIR (default build), NODES (2), PER (4),
#                                  REPS (3), SCALE (iterations scale for tern_coll, 0.2),
#                                  SIZES (e.g. 1K,4K,16K,64K: instead of the short table,
#                                  tern_coll --csv at these sizes for OPS, default
#                                  bcast,allreduce; the median of t_med per cell)
set -uo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
nodes=${NODES:-2}
per=${PER:-4}
reps=${REPS:-3}
scale=${SCALE:-0.2}
[ "$(id -u)" = 0 ] || { echo "hier_netns.sh: network namespaces need root" >&2; exit 77; }
[ -x "$build/bench/tern_coll" ] && [ -x "$build/bin/ternrun" ] ||
  { echo "hier_netns.sh: build tern_coll and ternrun in $build first" >&2; exit 1; }

tag=bnh$$
hub=${tag}h
tmp=$(mktemp -d)
hosts=()
cleanup() {
  for ns in "${hosts[@]}" $hub; do
    for p in $(ip netns pids "$ns" 2>/dev/null); do kill -9 "$p" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  done
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A hub namespace with a bridge; each node a namespace with a veth into it.
ip netns add $hub || exit 1
ip -n $hub link set lo up
ip -n $hub link add name tern0 type bridge && ip -n $hub link set tern0 up || exit 1
for i in $(seq 1 "$nodes"); do
  ns=${tag}n$i
  hosts+=("$ns")
  ip netns add "$ns" && ip -n "$ns" link set lo up || exit 1
  ip link add name tern0 netns "$ns" type veth peer name p$i netns $hub || exit 1
  ip -n $hub link set p$i master tern0 && ip -n $hub link set p$i up
  ip -n "$ns" addr add 10.232.0.$((i + 1))/24 dev tern0 && ip -n "$ns" link set tern0 up
done
spec=$(printf "%s:$per," "${hosts[@]}")
spec=${spec%,}

{
  echo "tern hierarchical vs flat collectives - $(date +%Y-%m-%d-%H%M%S) - $nodes netns nodes x $per ranks"
  echo "repo: $(git rev-parse --short HEAD 2>/dev/null); load at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs"
  echo "Mean us per call, slowest rank, median of $reps runs each (alternating). ratio = flat / hier (> 1: hierarchical faster)."
  for r in $(seq 1 "$reps"); do
    for h in 1 0; do
      if [ -n "${SIZES:-}" ]; then
        set -- --csv -s "$SIZES" -o "${OPS:-bcast,allreduce}" -t 3
      else
        set -- "$scale"
      fi
      timeout 600 "$build/bin/ternrun" --launch-agent 'ip netns exec {host}' -x TERN_TCP_IF=tern0 \
        -x TERN_COLL_HIER=$h -H "$spec" --timeout 580 "$build/bench/tern_coll" "$@" \
        >"$tmp/$h.$r" 2>"$tmp/$h.$r.err" || echo "NOTE: run $r TERN_COLL_HIER=$h failed: $(tail -1 "$tmp/$h.$r.err")"
    done
  done
  echo
  if [ -n "${SIZES:-}" ]; then
    # CSV rows: lib,pattern,mode,nprocs,bytes,iters,trials,t_min_us,t_med_us,...
    awk -F, '
      $1 == "lib" || /^#/ || NF < 9 { next }
      { split(FILENAME, f, "/"); split(f[length(f)], hr, "."); h = hr[1]; key = $2 " " $5
        if (!(key in seen)) { seen[key] = 1; keys[++n] = key }
        c = ++cnt[h, key]; v[h, key, c] = $9 + 0 }
      function med(h, key,   m, i, j, t, a) {
        m = cnt[h, key]; if (m == 0) return ""
        for (i = 1; i <= m; i++) a[i] = v[h, key, i]
        for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
        return a[int((m + 1) / 2)]
      }
      END {
        printf "%-10s %-8s %12s %12s %8s\n", "op", "bytes", "hier", "flat", "ratio"
        for (i = 1; i <= n; i++) {
          split(keys[i], kk, " "); a = med(1, keys[i]); b = med(0, keys[i])
          r = (a != "" && b != "" && a > 0) ? sprintf("%.2f", b / a) : "n/a"
          printf "%-10s %-8s %12s %12s %8s\n", kk[1], kk[2], a, b, r
        }
      }' "$tmp"/1.? "$tmp"/0.?
    exit 0
  fi
  awk -v reps="$reps" '
    /^#/ || /^op/ { next }
    { split(FILENAME, f, "/"); split(f[length(f)], hr, "."); h = hr[1]
      if ($1 != "barrier" && $1 != "bcast" && $1 != "reduce" && $1 != "allreduce") next
      if (!($1 in seen)) { seen[$1] = 1; ops[++n] = $1 }
      for (k = 2; k <= 5; k++) { c = ++cnt[h, $1, k]; v[h, $1, k, c] = $k } }
    function med(h, o, k,   m, i, j, t, a) {
      m = cnt[h, o, k]; if (m == 0) return ""
      for (i = 1; i <= m; i++) a[i] = v[h, o, k, i] + 0
      for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
      return a[int((m + 1) / 2)]
    }
    END {
      split("8B 1KiB 64KiB 1MiB", sz, " ")
      printf "%-10s %-6s %12s %12s %8s\n", "op", "size", "hier", "flat", "ratio"
      for (i = 1; i <= n; i++) for (k = 2; k <= 5; k++) {
        o = ops[i]; if (o == "barrier" && k > 2) continue
        a = med(1, o, k); b = med(0, o, k)
        r = (a != "" && b != "" && a > 0) ? sprintf("%.2f", b / a) : "n/a"
        printf "%-10s %-6s %12s %12s %8s\n", o, sz[k - 1], a, b, r
      }
    }' "$tmp"/1.* "$tmp"/0.*
}

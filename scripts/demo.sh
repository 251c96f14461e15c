#!/usr/bin/env bash
# demo.sh - build tern and run the main job: 4 processes on shared memory passing a
# token around a ring, then a ping-pong of every power-of-two size up to 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
build/bin/ternrun -n 4 build/bin/hello
build/bin/ternrun -n 2 build/bench/tern_pingpong

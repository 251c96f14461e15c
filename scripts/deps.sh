#!/usr/bin/env bash
# deps.sh - install the Debian packages tern needs (only those missing).
#   scripts/deps.sh          build and test: compiler, CMake, Ninja, pkg-config, coreutils
#   scripts/deps.sh --bench  also what bench/compare.sh compares against: Open MPI, MPICH,
#                            hyperfine, NetPIPE
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config coreutils procps gawk sed grep)
if [ "${1:-}" = "--bench" ]; then
  pkgs+=(openmpi-bin libopenmpi-dev mpich libmpich-dev hyperfine netpipe-openmpi netpipe-tcp)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "deps.sh: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"

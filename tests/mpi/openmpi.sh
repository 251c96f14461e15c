#!/bin/sh
# openmpi.sh SRC_DIR - build the MPI test programs with Open MPI's mpicc and run the
# plain lines of tests.list (no tern variables, no fatal=; on= does not count) with its
# mpirun. Passing there shows the tests check MPI semantics, not tern's behaviour.
# Exit 77 (skip) without Open MPI.
set -eu
src=$1
command -v mpicc.openmpi >/dev/null 2>&1 && command -v mpirun.openmpi >/dev/null 2>&1 || {
  echo "Open MPI (mpicc.openmpi, mpirun.openmpi) not installed: skipped"
  exit 77
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed 's/#.*//' "$src/tests.list" | while read -r name np rest; do
  [ -n "${name:-}" ] || continue
  # on=TRANSPORTS chooses tern's transports: the line is still plain.
  rest=$(printf ' %s ' "$rest" | sed 's/ on=[^ ]*//g')
  case "$rest" in *=*) continue ;; esac # tern variables, args, fatal: tern only
  if [ ! -x "$tmp/$name" ]; then
    mpicc.openmpi -Wall -Wextra -Werror "$src/$name.c" -o "$tmp/$name" </dev/null
  fi
  echo "== Open MPI: $name on $np"
  # osc: Debian's default one-sided component (rdma) cannot make windows over vader/tcp;
  # pt2pt (active messages) and sm (shared memory) can.
  OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_osc=pt2pt,sm \
    timeout 120 mpirun.openmpi --allow-run-as-root --oversubscribe -n "$np" "$tmp/$name" </dev/null
done
echo "openmpi: ok"

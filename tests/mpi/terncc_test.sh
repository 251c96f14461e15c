#!/bin/sh
# terncc_test.sh BUILD_DIR SRC_DIR - the build-tree wrappers: every -show* form answers,
# mpi.h compiles warning-free as C and C++, and a program built by terncc runs.
set -eu
build=$1 src=$2
cc=$build/bin/terncc cxx=$build/bin/terncxx
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for opt in -show -showme -showme:compile -showme:link -compile_info -link_info; do
  out=$("$cc" $opt)
  [ -n "$out" ] || { echo "terncc $opt printed nothing"; exit 1; }
  echo "terncc $opt: $out"
done
"$cc" -showme:compile | grep -q -- "-I" || { echo "no -I in -showme:compile"; exit 1; }
"$cc" -showme:link | grep -q -- "-ltern_mpi" || { echo "no -ltern_mpi in -showme:link"; exit 1; }
# Open MPI's -showme:compile/-showme:link print flags only; MPICH's -compile_info/-link_info
# and -showme alone print the compiler first.
"$cc" -showme:compile | grep -q "^-I" || { echo "-showme:compile must print flags only"; exit 1; }
"$cc" -showme:link | grep -q "^-" || { echo "-showme:link must print flags only"; exit 1; }
for opt in -compile_info -link_info -showme; do
  TERN_CC=gcc "$cc" $opt | grep -q "^gcc -" || { echo "terncc $opt must print the compiler first"; exit 1; }
done
# The opt-in mpi-names directory: mpicc/mpicxx/mpiexec/mpirun are the wrappers and ternrun.
names=$build/libexec/tern/mpi-names
"$names/mpicc" -showme:compile | grep -q "^-I" || { echo "mpi-names/mpicc is not terncc"; exit 1; }
"$names/mpicxx" -show | grep -q "^c++ " || { echo "mpi-names/mpicxx does not use c++"; exit 1; }
"$cc" -show -c x.c | grep -q -- "-ltern_mpi" && { echo "-c must not link"; exit 1; }
TERN_CC=gcc "$cc" -show x.c | grep -q "^gcc " || { echo "TERN_CC not honoured"; exit 1; }
"$cxx" -show | grep -q "^c++ " || { echo "terncxx does not use c++"; exit 1; }
cat >"$tmp/h.c" <<'EOT'
#include <mpi.h>
static MPI_Comm world = MPI_COMM_WORLD; /* predefined handles are constants */
static const MPI_Datatype types[] = {MPI_INT, MPI_DOUBLE, MPI_2INT};
int main(int argc, char **argv)
{
    int r = -1;
    MPI_Init(&argc, &argv);
    switch (world) {
    case MPI_COMM_WORLD: MPI_Comm_rank(world, &r); break;
    default: break;
    }
    MPI_Finalize();
    return r < 0 || types[0] != MPI_INT;
}
EOT
cp "$tmp/h.c" "$tmp/h.cpp"
"$cc" -std=c11 -Wall -Wextra -Wshadow -pedantic -Werror "$tmp/h.c" -o "$tmp/h"
"$cxx" -Wall -Wextra -Wshadow -pedantic -Werror "$tmp/h.cpp" -o "$tmp/hxx"
"$build/bin/ternrun" -n 2 "$tmp/h"
"$build/bin/ternrun" -n 2 "$tmp/hxx"
# Profiling interface: a program's own MPI_Send wins over the library's weak one and
# reaches the library through PMPI_Send.
cat >"$tmp/prof.c" <<'EOT'
#include <mpi.h>
#include <stdio.h>
static int sends;
int MPI_Send(const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm)
{
    sends++;
    return PMPI_Send(buf, count, dt, dest, tag, comm);
}
int main(int argc, char **argv)
{
    int me, x = 7, y = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Sendrecv(&x, 1, MPI_INT, me, 0, &y, 1, MPI_INT, me, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&x, 1, MPI_INT, me, 1, MPI_COMM_WORLD);
    MPI_Recv(&y, 1, MPI_INT, me, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Finalize();
    if (sends != 1 || y != 7) { fprintf(stderr, "profiling: %d sends intercepted\n", sends); return 1; }
    return 0;
}
EOT
"$cc" -Wall -Wextra -Werror "$tmp/prof.c" -o "$tmp/prof"
"$build/bin/ternrun" -n 2 "$tmp/prof"
"$cc" -Wall -Wextra -Werror "$src/p2p.c" -o "$tmp/p2p"
"$build/bin/ternrun" -n 2 "$tmp/p2p"
"$names/mpicc" -Wall -Wextra -Werror "$src/p2p.c" -o "$tmp/p2p_names"
"$names/mpirun" -n 2 "$tmp/p2p_names"
echo "terncc: ok"

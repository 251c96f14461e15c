#!/bin/sh
# install_test.sh BUILD_DIR SRC_DIR CMAKE [SANITIZE] - the installed MPI: mpi.h only under
# include/tern-mpi, terncc/terncxx relocatable, libtern_mpi shared and static, and
# find_package(tern) giving tern::mpi to a CMake consumer.
set -eu
build=$1 src=$2 cmake=$3 san=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
for f in include/tern-mpi/mpi.h bin/terncc bin/terncxx bin/ternrun lib/libtern_mpi.so \
         lib/libtern_mpi.a lib/cmake/tern/ternConfig.cmake; do
  [ -e "$prefix/$f" ] || { echo "missing $f after install"; exit 1; }
done
[ ! -e "$prefix/include/mpi.h" ] || { echo "mpi.h installed where it shadows other MPIs"; exit 1; }
flags=""
[ "$san" = address ] && flags="-fsanitize=address,undefined"
[ "$san" = thread ] && flags="-fsanitize=thread"
# Moved prefix: terncc finds its own tree.
mv "$prefix" "$tmp/moved"
prefix=$tmp/moved
"$prefix/bin/terncc" $flags -Wall -Wextra -Werror "$src/comm.c" -o "$tmp/comm"
"$prefix/bin/terncc" -showme:compile | grep -q "$prefix/include/tern-mpi" || { echo "bad -showme:compile"; exit 1; }
"$prefix/bin/terncc" -showme:link | grep -q "^-L$prefix/lib " || { echo "bad -showme:link"; exit 1; }
"$prefix/bin/ternrun" -n 3 "$tmp/comm"
# The opt-in mpi-names links resolve to the moved tree.
names=$prefix/libexec/tern/mpi-names
for n in mpicc mpicxx mpiexec mpirun; do
  [ -x "$names/$n" ] || { echo "missing libexec/tern/mpi-names/$n"; exit 1; }
done
"$names/mpicc" -showme:compile | grep -q "^-I$prefix/include/tern-mpi" || { echo "mpi-names/mpicc: bad prefix"; exit 1; }
"$names/mpicc" $flags -Wall -Wextra -Werror "$src/comm.c" -o "$tmp/comm2"
"$names/mpiexec" -n 2 "$tmp/comm2"
# A CMake consumer.
mkdir "$tmp/consumer"
cat >"$tmp/consumer/CMakeLists.txt" <<EOT
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(tern REQUIRED)
add_executable(prog $src/types.c)
target_compile_options(prog PRIVATE $flags)
target_link_options(prog PRIVATE $flags)
target_link_libraries(prog PRIVATE tern::mpi)
EOT
"$cmake" -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
"$cmake" --build "$tmp/consumer/build" >/dev/null
"$prefix/bin/ternrun" -n 2 "$tmp/consumer/build/prog"
echo "install: ok"

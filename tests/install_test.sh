#!/usr/bin/env bash
# install_test.sh BUILD_DIR SOURCE_DIR [CFLAGS] - `cmake --install` into a fresh prefix, then
# build the README example against it with pkg-config alone and run it with the
# installed ternrun: proves the installed headers, libraries, launcher and tern.pc.
set -euo pipefail
build=$1 src=$2 cflags=${3:-} # CFLAGS: the sanitizer flags of an instrumented build
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
for f in include/tern.h include/shmem.h include/tern-mpi/shmem.h bin/ternrun bin/tern-oshcc \
         lib/pkgconfig/tern.pc; do
  [ -e "$prefix/$f" ] || { echo "missing $f after install"; exit 1; }
done
ls "$prefix"/lib/libtern.so "$prefix"/lib/libtern.a >/dev/null
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc $cflags "$src/examples/hello.c" -o "$prefix/hello" $(pkg-config --cflags --libs tern) -Wl,-rpath,"$prefix/lib"
out=$("$prefix/bin/ternrun" -n 3 "$prefix/hello")
echo "$out"
[ "$out" = "tern: 3 ranks, token came back as 3 (expected 3)" ]
# find_package(tern) from the prefix: a program on the static archive (which names
# libfabric when tern has the ofi transport) configures, links and runs.
mkdir -p "$prefix/consumer"
cat >"$prefix/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.16)
project(consumer C)
find_package(tern REQUIRED)
add_executable(hello_static hello.c)
target_link_libraries(hello_static tern::tern_static)
CM
cp "$src/examples/hello.c" "$prefix/consumer/"
cmake -S "$prefix/consumer" -B "$prefix/consumer/b" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$cflags" >/dev/null
cmake --build "$prefix/consumer/b" >/dev/null
out=$("$prefix/bin/ternrun" -n 2 "$prefix/consumer/b/hello_static")
echo "$out"
[ "$out" = "tern: 2 ranks, token came back as 2 (expected 2)" ]

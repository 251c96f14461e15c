#!/bin/sh
# exports_test.sh shared|static LIBRARY INCLUDE_DIR CC - symbol hygiene of the installed
# libraries. Lists the names LIBRARY makes global (shared: its dynamic exports, nm -D;
# static: the archive's global defined symbols, nm -g) and fails on any name that is not
# public API: the prefixes tern_, MPI_, PMPI_, shmem_, pshmem_, or a name that
# include/tern.h, mpi.h or shmem.h declare (their text without comments, so a word in a
# comment allows nothing). Sanitizer builds add their own reserved __asan/__ubsan/__tsan
# names, which are allowed.
set -eu
mode=$1 lib=$2 inc=$3 cc=$4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

case $mode in
  shared) nm -D --defined-only "$lib" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' ;;
  static) nm -g --defined-only "$lib" | awk 'NF == 3 { print $3 }' ;;
  *) echo "exports_test.sh: mode must be shared or static" >&2; exit 2 ;;
esac | sort -u >"$tmp/names"

# Every identifier of the public headers, comments removed (-fpreprocessed -dD: no
# includes expanded, no macros replaced) and #include lines dropped.
for h in tern.h mpi.h shmem.h; do
  "$cc" -fpreprocessed -dD -E -x c "$inc/$h"
done | grep -v '^[[:space:]]*#[[:space:]]*include' |
  grep -o '[A-Za-z_][A-Za-z0-9_]*' | sort -u >"$tmp/declared"

n=$(wc -l <"$tmp/names")
[ "$n" -gt 100 ] || { echo "only $n names read from $lib: nm failed?"; exit 1; }
grep -Ev '^(tern_|MPI_|PMPI_|shmem_|pshmem_)' "$tmp/names" |
  grep -Ev '^_{2,3}(asan|ubsan|tsan|sanitizer|odr_asan|sancov)' |
  comm -23 - "$tmp/declared" >"$tmp/bad" || true
if [ -s "$tmp/bad" ]; then
  echo "$lib ($mode) makes $(wc -l <"$tmp/bad") internal name(s) global:"
  head -50 "$tmp/bad"
  exit 1
fi
echo "$lib ($mode): $n global names, all public API"

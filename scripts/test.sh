#!/usr/bin/env bash
# test.sh - build tern and run the whole test suite twice: a normal optimised build
# and an AddressSanitizer+UBSan build; then a ThreadSanitizer build of only what the
# threaded tests need, running only them (ctest -L threads); then the fuzz targets under
# libFuzzer (clang). This is the README's test command and all of CI.
#
# scripts/test.sh --quick: the day-to-day subset - the optimised build only, running the
# unit tests and the multi-process tests on shm (ctest labels unit and shm, soaks left
# out); no sanitizers, no fuzzers.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
case "${1:-}" in
  --quick) quick=1 ;;
  "") ;;
  *) echo "usage: scripts/test.sh [--quick]" >&2; exit 2 ;;
esac
scripts/deps.sh
jobs=$(nproc)
status=0
if [ $quick = 1 ]; then
  dir=build-test-release
  echo "=== release build ==="
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON >/dev/null
  cmake --build "$dir" -j "$jobs"
  echo "=== quick tests (labels unit, shm; no soak) ==="
  (cd "$dir" && ctest -j "$jobs" -L '^(unit|shm)$' -LE '^soak$' --timeout 300 \
     --output-on-failure) || status=1
  leftover=$(ls /dev/shm | grep '^tern-' || true)
  if [ -n "$leftover" ]; then
    echo "test.sh: shared-memory segments left behind: $leftover"
    status=1
  fi
  exit $status
fi
for kind in release asan; do
  dir=build-test-$kind
  extra=()
  [ "$kind" = asan ] && extra=(-DTERN_SANITIZE=address)
  echo "=== $kind build ==="
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON "${extra[@]}" >/dev/null
  cmake --build "$dir" -j "$jobs"
  echo "=== $kind tests ==="
  # ASan's leak checker and the shm tests both want real memory; nothing else to tune.
  (cd "$dir" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest -j "$jobs" --timeout 300 --output-on-failure) || status=1
done
# TSan: the programs named threads* in tests/mp and tests/mpi (label "threads").
echo "=== tsan build (threaded tests only) ==="
dir=build-test-tsan
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON \
  -DTERN_SANITIZE=thread >/dev/null
threaded=$(cd "$dir" && ninja -t targets all | sed -n 's/^\(mpi\?_threads[a-z_]*\): phony$/\1/p')
cmake --build "$dir" -j "$jobs" --target ternrun $threaded
echo "=== tsan tests ==="
(cd "$dir" && TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1 \
   ctest -j "$jobs" -L threads --timeout 300 --output-on-failure) || status=1
# Portability: the whole tree compiles for aarch64 (clang -fsyntax-only, a few seconds).
echo "=== aarch64 compile check ==="
scripts/cross-check.sh || status=1
# The fuzz stage: clang + libFuzzer + ASan/UBSan, every target for a bounded time from
# the corpus in tests/fuzz/corpus (the two builds above only replayed it briefly).
if command -v clang >/dev/null; then
  echo "=== fuzz (libFuzzer) ==="
  CC=clang cmake -S . -B build-test-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON \
    -DTERN_SANITIZE=address -DTERN_FUZZ=ON >/dev/null
  cmake --build build-test-fuzz --target fuzz -j "$jobs"
  (cd build-test-fuzz && ctest -L fuzz -j "$jobs" --timeout 300 --output-on-failure) || status=1
else
  echo "test.sh: clang missing (scripts/deps.sh installs it): no libFuzzer stage"; status=1
fi
leftover=$(ls /dev/shm | grep '^tern-' || true)
if [ -n "$leftover" ]; then
  echo "test.sh: shared-memory segments left behind: $leftover"
  status=1
fi
exit $status

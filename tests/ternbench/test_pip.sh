#!/usr/bin/env bash
# test_pip.sh PYTHON SOURCE_DIR BUILD_DIR SCRATCH - ternbench as a pip package: a virtualenv
# (with the distribution's packages, for numpy and the offline setuptools/wheel), `pip
# install --no-index --no-build-isolation` of a copy of tools/ternbench (pip builds in
# place; the source tree stays clean), then `python3 -m ternbench --help`, a command's
# --help, the console script, and `where` finding the build tree by $TERN_BUILD_DIR only.
# Exit 77 (skipped) only when the interpreter has no venv/ensurepip or pip.
set -euo pipefail
py=$1 src=$2 build=$3 scratch=$4
mkdir -p "$scratch"
work=$(mktemp -d "$scratch/ternbench-pip-XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! "$py" -c 'import venv, ensurepip' 2>/dev/null; then
  echo "SKIP: $py has no venv/ensurepip (apt-get install python3-venv)"; exit 77
fi
"$py" -m venv --system-site-packages "$work/venv"
vpy=$work/venv/bin/python3
if ! "$vpy" -m pip --version >/dev/null 2>&1; then
  echo "SKIP: the virtualenv has no pip (apt-get install python3-pip python3-venv)"; exit 77
fi
cp -r "$src/tools/ternbench" "$work/src"
rm -rf "$work/src/build" "$work/src"/*.egg-info
"$vpy" -m pip install -q --no-index --no-build-isolation "$work/src"
cd "$work" # nothing of the source tree on sys.path: the installed package must answer
unset TERN_PREFIX TERN_BUILD_DIR
fail=0
expect() { # expect WHAT COMMAND...: the command succeeds; its output is kept in $out
  if ! out=$("${@:2}" 2>&1); then echo "FAIL: $1"; echo "$out"; fail=1; return 1; fi
}
expect "the package comes from the venv" "$vpy" -c 'import ternbench, sys; print(ternbench.__file__)'
case $out in "$work/venv/"*) ;; *) echo "FAIL: ternbench imported from $out"; fail=1 ;; esac
expect "python3 -m ternbench --help" "$vpy" -m ternbench --help &&
  { grep -q "usage: ternbench" <<<"$out" && grep -q 'TERN_BUILD_DIR' <<<"$out" ||
    { echo "FAIL: --help lacks the usage or the search order"; fail=1; }; }
expect "python3 -m ternbench run --help" "$vpy" -m ternbench run --help &&
  { grep -q -- "--tern-prefix DIR" <<<"$out" && grep -q -- "--quick" <<<"$out" ||
    { echo "FAIL: run --help lacks its options"; fail=1; }; }
expect "console script compare --help" "$work/venv/bin/ternbench" compare --help &&
  { grep -q -- "--no-native" <<<"$out" || { echo "FAIL: compare --help"; fail=1; }; }
# No tern anywhere (the venv's bin/ has no ternrun): a named error, exit 2.
set +e
out=$(PATH=$work/venv/bin:/usr/bin:/bin "$vpy" -m ternbench where 2>&1); rc=$?
set -e
[ $rc -eq 2 ] && grep -q "no tern tree found" <<<"$out" ||
  { echo "FAIL: where without a tree: rc $rc: $out"; fail=1; }
expect "where with TERN_BUILD_DIR" env TERN_BUILD_DIR="$build" PATH=/usr/bin:/bin \
  "$work/venv/bin/ternbench" where &&
  { grep -q "found by:      \$TERN_BUILD_DIR $build" <<<"$out" &&
    grep -q "$build/bench/tern_pingpong" <<<"$out" ||
    { echo "FAIL: where did not use TERN_BUILD_DIR: $out"; fail=1; }; }
[ $fail -eq 0 ] && echo ok
exit $fail

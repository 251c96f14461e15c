# abi_lib.sh - sourced by mpich_abi.sh and std_abi.sh: what running programs built against
# another MPI's binary interface on tern has in common. The caller sets build, src, mode,
# tmp and defines cc (its compiler, flags included) and run (ternrun with its --mpi-abi).

# A sanitized libtern cannot be loaded by a program built elsewhere without the sanitizer's
# runtime first: the release build runs these tests.
abi_skip_sanitized() {
  if [ -n "${TERN_TEST_SANITIZED:-}" ]; then
    echo "skipped: this libtern is built with -fsanitize=$TERN_TEST_SANITIZED; a program built"
    echo "elsewhere ($1) cannot load it without that sanitizer's runtime first (the release"
    echo "build runs this test)"
    exit 77
  fi
}

# abi_check_needed PROGRAM LIBRARY: the compiler linked the interface's library.
abi_check_needed() {
  readelf -d "$1" | grep -q "NEEDED.*$(printf '%s' "$2" | sed 's/\./\\./g')" || {
    echo "FAIL: $(basename "$1") does not need $2"
    exit 1
  }
}

# abi_run_list LABEL "QUICK LINES": build and run tests.list programs (every plain line with
# `all`, else the quick lines given), count passes, failures and programs that do not build
# against the interface; print them, exit 1 on a failure (or, when not `all`, a program of
# the quick list that does not build).
abi_run_list() {
  label=$1
  if [ "$mode" = all ]; then
    sed 's/#.*//' "$src/tests.list" >"$tmp/lines"
  else
    printf '%s\n' "$2" >"$tmp/lines"
  fi
  pass=0
  fail=0
  nobuild=0
  failed=""
  while read -r name np rest; do
    [ -n "${name:-}" ] || continue
    rest=$(printf ' %s ' "${rest:-}" | sed 's/ on=[^ ]*//g; s/ label=[^ ]*//g')
    case "$rest" in *=*) continue ;; esac # tern variables, args, fatal: tern only
    if [ ! -x "$tmp/$name" ] && [ ! -e "$tmp/$name.nobuild" ]; then
      cc -Wno-error "$src/$name.c" -o "$tmp/$name" 2>"$tmp/$name.cc" || : >"$tmp/$name.nobuild"
    fi
    if [ -e "$tmp/$name.nobuild" ]; then
      echo "== $name: does not build ($(grep -m1 error "$tmp/$name.cc" || true))"
      nobuild=$((nobuild + 1))
      continue
    fi
    echo "== $label-built $name on $np"
    if run -n "$np" "$tmp/$name" >"$tmp/out" 2>&1; then
      pass=$((pass + 1))
    else
      tail -5 "$tmp/out"
      fail=$((fail + 1))
      failed="$failed $name/$np"
    fi
  done <"$tmp/lines"
  echo "$label: $pass passed, $fail failed${failed:+ ($failed )}, $nobuild did not build"
  [ "$fail" -eq 0 ] || exit 1
  [ "$mode" = all ] || [ "$nobuild" -eq 0 ] || exit 1
}

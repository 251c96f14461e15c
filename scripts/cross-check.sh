#!/usr/bin/env bash
# cross-check.sh - portability check: every C file of the library (src/) and the tools
# (tools/) must compile for aarch64, the other architecture tern is meant for. The
# project's own compile commands (CMake's compile_commands.json, from a configure in
# build-cross: the same include directories, definitions, -std=gnu11 and -W flags) are
# replayed with clang for aarch64-linux-gnu against the Debian cross headers
# (libc6-dev-arm64-cross, linux-libc-dev-arm64-cross; scripts/deps.sh installs them),
# parse and type-check only (-fsyntax-only), warnings as errors. It catches x86-only
# builtins and instructions outside src/util/cpu.h. Exit status 1 when a file fails.
set -uo pipefail
cd "$(dirname "$0")/.."
target=aarch64-linux-gnu
sysroot=/usr/$target
if ! command -v clang >/dev/null || [ ! -f "$sysroot/include/stdio.h" ]; then
  echo "cross-check.sh: needs clang and the $target headers (scripts/deps.sh)" >&2
  exit 1
fi
dir=build-cross
CC=clang cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTERN_WERROR=ON \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >/dev/null || exit 1
# One line per C file of src/ or tools/: the directory to run in, then the arguments
# (separated by the unit separator, 0x1f), with the output and dependency options dropped.
python3 - "$dir/compile_commands.json" "$PWD" > "$dir/cross.cmds" <<'PY' || exit 1
import json, shlex, sys
root = sys.argv[2] + "/"
seen = set()
for e in json.load(open(sys.argv[1])):
    f = e["file"]
    rel = f[len(root):] if f.startswith(root) else f
    if not rel.endswith(".c") or not rel.startswith(("src/", "tools/")) or rel in seen:
        continue
    seen.add(rel)
    args = e.get("arguments") or shlex.split(e["command"])
    out, skip = [], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-fsanitize"):
            continue
        out.append(a)
    print("\x1f".join([e["directory"]] + out))
PY
flags=(--target=$target -isystem "$sysroot/include" -fsyntax-only)
status=0
n=0
while IFS= read -r line; do
  IFS=$'\x1f' read -r -a parts <<< "$line"
  n=$((n + 1))
  (cd "${parts[0]}" && clang "${flags[@]}" "${parts[@]:1}") ||
    { echo "cross-check.sh: ${parts[-1]} fails for $target"; status=1; }
done < "$dir/cross.cmds"
[ $n -gt 0 ] || { echo "cross-check.sh: no compile commands found" >&2; exit 1; }
[ $status -eq 0 ] && echo "cross-check.sh: $n files compile for $target"
exit $status

#!/usr/bin/env bash
# Runs clang-tidy with the project's .clang-tidy over the library's translation units (the .cpp
# files of nn/, parallel/, iterators/ and ui/ in a build's compile_commands.json; not the tests,
# benchmarks, samples or CUDA kernels), one clang-tidy per core. Prints the findings and exits
# non-zero on any warning. Needs Debian 12's clang-tidy 14 (scripts/install-deps.sh) and a
# configured build (CMake writes compile_commands.json).
#
#   scripts/check-tidy.sh [build-dir]     (default: build)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-build}" 2>/dev/null && pwd)" || {
  echo "check-tidy: no build directory ${1:-build}; configure one with cmake first" >&2
  exit 1
}

command -v clang-tidy >/dev/null 2>&1 || {
  echo "check-tidy: clang-tidy not found; run scripts/install-deps.sh" >&2
  exit 1
}
[[ -f "$build/compile_commands.json" ]] || {
  echo "check-tidy: $build/compile_commands.json not found (configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
  exit 1
}

# CMake writes one "file": "<absolute path>" line per entry.
mapfile -t units < <(sed -n 's/^ *"file": "\(.*\)",\{0,1\}$/\1/p' "$build/compile_commands.json" |
  grep -E "^$root/(nn|parallel|iterators|ui)/.*\.cpp$" | sort -u)
if [[ ${#units[@]} -eq 0 ]]; then
  echo "check-tidy: no library sources of $root in $build/compile_commands.json" >&2
  exit 1
fi

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
# Each unit's findings go to a log of their own (parallel output would interleave); a unit with a
# warning exits non-zero (--warnings-as-errors), which xargs reports as its own failure.
status=0
printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  'clang-tidy --quiet -p "$1" --warnings-as-errors="*" "$2" >"$3/$(echo "$2" | tr / _).log" 2>&1' \
  sh "$build" {} "$logs" || status=$?

failed=0
for log in "$logs"/*.log; do
  if grep -qE '(warning|error):' "$log"; then
    grep -vE '^[0-9]+ (warning|error)s? (generated|treated as errors)\.?$' "$log"
    failed=$((failed + 1))
  fi
done
if [[ $status -ne 0 || $failed -ne 0 ]]; then
  echo "check-tidy: findings in $failed of ${#units[@]} translation units" >&2
  exit 1
fi
echo "check-tidy: ${#units[@]} translation units clean"

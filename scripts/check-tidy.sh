#!/usr/bin/env bash
# Runs clang-tidy with the project's .clang-tidy over the library's translation units (the .cpp
# files of nn/, parallel/, iterators/ and ui/ in a build's compile_commands.json; not the tests,
# benchmarks, samples or CUDA kernels), one clang-tidy per core. Prints the findings and exits
# non-zero on any warning. Needs Debian 12's clang-tidy 14 (scripts/install-deps.sh) and a
# configured build (CMake writes compile_commands.json).
#
# A unit found clean is remembered by a key over everything its verdict depends on (tidy's version
# and configuration, the compile command, every file the compiler read for it: scripts/tidy_keys.py),
# and skipped while that key stays the same, as a compiler cache skips a compile. The keys read the
# dependency files a build writes, so a built tree gets the most from it. DL4CPP_TIDY_CACHE names the
# cache folder (default ~/.cache/dl4cpp/clang-tidy); DL4CPP_TIDY_CACHE=off checks every unit.
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

cache="${DL4CPP_TIDY_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dl4cpp/clang-tidy}"
# "<key> <absolute path>" per library unit; "-" for a unit that cannot be keyed.
mapfile -t keyed < <(python3 "$root/scripts/tidy_keys.py" "$build" "$root" | sort -k2 -u)
if [[ ${#keyed[@]} -eq 0 ]]; then
  echo "check-tidy: no library sources of $root in $build/compile_commands.json" >&2
  exit 1
fi

logs="$(mktemp -d)"
trap 'rm -rf "$logs"' EXIT
units=()
cached=0
for line in "${keyed[@]}"; do
  key="${line%% *}" unit="${line#* }"
  if [[ "$cache" != off && "$key" != - && -e "$cache/$key" ]]; then
    cached=$((cached + 1))
    continue
  fi
  units+=("$unit")
  echo "$key" >"$logs/$(echo "$unit" | tr / _).key"
done
# Each unit's findings go to a log of their own (parallel output would interleave), and its exit
# status to a file beside it: a unit with a warning exits non-zero (--warnings-as-errors). A clean
# unit is recorded in the cache as soon as it is checked, so a run cut short (CI's budget) keeps
# what it finished.
((${#units[@]} == 0)) || printf '%s\n' "${units[@]}" | xargs -P "$(nproc)" -I{} sh -c \
  'log="$3/$(echo "$2" | tr / _)"; clang-tidy --quiet -p "$1" --warnings-as-errors="*" "$2" \
     >"$log.log" 2>&1; rc=$?; echo $rc >"$log.rc"; key="$(cat "$log.key")"
   if [ "$4" != off ] && [ $rc = 0 ] && [ "$key" != - ] && ! grep -qE "(warning|error):" "$log.log"
   then mkdir -p "$4" && touch "$4/$key"; fi' sh "$build" {} "$logs" "$cache"

failed=0
for unit in "${units[@]}"; do
  log="$logs/$(echo "$unit" | tr / _)"
  if [[ "$(cat "$log.rc" 2>/dev/null)" != 0 ]] || grep -qE '(warning|error):' "$log.log"; then
    grep -vE '^[0-9]+ (warning|error)s? (generated|treated as errors)\.?$' "$log.log" ||
      echo "check-tidy: clang-tidy failed on $unit without a finding"
    failed=$((failed + 1))
  fi
done
if [[ $failed -ne 0 ]]; then
  echo "check-tidy: findings in $failed of ${#units[@]} translation units checked" \
    "($cached more clean in the cache)" >&2
  exit 1
fi
echo "check-tidy: ${#keyed[@]} translation units clean (${#units[@]} checked, $cached from the cache at $cache)"

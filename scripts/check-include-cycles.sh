#!/usr/bin/env bash
# Checks that the source tree's folders form a stack: no include cycle between folders, from the
# compile commands (scripts/include_cycles.py says exactly how includes are resolved and what a
# folder is: a top-level folder, or one of nn/'s subfolders, its own subfolders included). Prints
# each cycle with one example include per arrow and exits non-zero when there is one.
#
#   scripts/check-include-cycles.sh [BUILD_DIR]
#
# BUILD_DIR: a configured build folder whose compile_commands.json to read (CMake writes it at
# configure time). Without one, the script configures a scratch folder with the tests, samples
# and benchmarks on, so that every translation unit is seen (about ten seconds, nothing is built).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [[ $# -ge 1 ]]; then
  build="$1"
  if [[ ! -f "$build/compile_commands.json" ]]; then
    echo "check-include-cycles: no compile_commands.json in $build (configure it first)" >&2
    exit 2
  fi
else
  build="$(mktemp -d "${TMPDIR:-/tmp}/dl4cpp-include-graph.XXXXXX")"
  trap 'rm -rf "$build"' EXIT
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DDL4CPP_BUILD_TESTS=ON \
    -DDL4CPP_BUILD_SAMPLES=ON -DDL4CPP_BUILD_BENCH=ON >"$build/configure.log" 2>&1 || {
    cat "$build/configure.log" >&2
    exit 2
  }
fi
exec python3 scripts/include_cycles.py "$build"

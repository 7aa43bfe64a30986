#!/usr/bin/env bash
# Installs the library built in BUILD_DIR (default: build/) into a temporary prefix, then builds
# test/install/ (a separate CMake project using find_package(dl4cpp)) against it and runs it.
#
#   scripts/check-install.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

build="${1:-build}"
if [[ ! -f "$build/CMakeCache.txt" ]]; then
  echo "error: $build is not a configured dl4cpp build directory (run scripts/test.sh first)" >&2
  exit 1
fi
jobs="$(nproc)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/dl4cpp-check-install.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
prefix="$tmp/prefix"
consumer_build="$tmp/consumer-build"

# The install step needs the library itself; build it in case only other targets were built.
cmake --build "$build" -j"$jobs" --target dl4cpp
cmake --install "$build" --prefix "$prefix"

build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")"
cmake -S test/install -B "$consumer_build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE="${build_type:-Release}"
cmake --build "$consumer_build" -j"$jobs"

output="$("$consumer_build/dl4cpp_consumer")"
echo "$output"
if [[ -z "$output" ]]; then
  echo "error: the installed-package consumer printed nothing" >&2
  exit 1
fi
echo "check-install: OK (find_package(dl4cpp) from $prefix)"

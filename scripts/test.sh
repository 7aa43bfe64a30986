#!/usr/bin/env bash
# The README "test" command: installs the dependencies, fetches MNIST, builds everything (Release,
# tests on, in build/), runs every test with CTest, then checks that the installed package works
# from an outside CMake project (scripts/check-install.sh). Exits non-zero on any failure.
#
#   scripts/test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs="$(nproc)"

scripts/install-deps.sh
scripts/get-mnist.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDL4CPP_BUILD_TESTS=ON
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

scripts/check-install.sh
echo "test: all tests passed"

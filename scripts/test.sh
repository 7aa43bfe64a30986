#!/usr/bin/env bash
# The README "test" command: installs the dependencies, fetches MNIST, builds everything (Release,
# tests on, in build/), runs every test with CTest at every CPU ISA level this machine has (native
# first, then capped with DL4CPP_MAX_CPU_ISA, so the AVX2 and baseline paths run on AVX-512
# machines too), then checks that the installed package works from an outside CMake project
# (scripts/check-install.sh). Exits non-zero on any failure.
#
# CTest runs one test at a time: every test process's OpenMP team already spans all the cores, and
# two teams on the same cores spin against each other at every barrier, which turns a 0.15 s
# gradient check into minutes (docs/getting-started.md, "Threads and cores").
#
#   scripts/test.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs="$(nproc)"

scripts/install-deps.sh
scripts/get-mnist.sh

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDL4CPP_BUILD_TESTS=ON
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure
for level in $(scripts/cpu-isa-levels.sh --below-native); do
  echo "test: the suite again at DL4CPP_MAX_CPU_ISA=$level"
  DL4CPP_MAX_CPU_ISA="$level" ctest --test-dir build --output-on-failure
done

scripts/check-install.sh
echo "test: all tests passed"

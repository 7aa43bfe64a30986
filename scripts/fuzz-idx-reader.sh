#!/usr/bin/env bash
# Fuzzes the IDX reader (IdxReader::readImages / readLabels on raw and gzip files) with libFuzzer
# under AddressSanitizer + UBSan for the given number of seconds (default 120).
#
#   scripts/fuzz-idx-reader.sh [seconds]
#
# Builds test/fuzz/idx_reader_fuzz with clang in build-fuzz/ (as scripts/fuzz-model-loader.sh
# does, only that target), seeds build-fuzz/idx-corpus with the committed corpus
# (test/data/idx-reader-corpus/) and runs. A crash (sanitizer report, an exception that is not a
# dl4cpp::Error, a hang past 10 s or more than 2 GB resident) stops the run and leaves the input
# in build-fuzz/idx-crashes/; after fixing it, add the file to test/data/idx-reader-corpus/ as
# found-crash-<what> so the ordinary test suite replays it for ever.
# Environment: DL4CPP_JOBS (build parallelism, default nproc).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds="${1:-120}"
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [seconds]" >&2; exit 2; }
jobs="${DL4CPP_JOBS:-$(nproc)}"
build=build-fuzz

command -v clang++ >/dev/null 2>&1 || {
  echo "error: clang++ not found (Debian: apt-get install clang libclang-rt-dev libomp-dev)" >&2
  exit 1
}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDL4CPP_BUILD_FUZZ=ON -DDL4CPP_SANITIZE=address -DDL4CPP_WITH_CUDA=OFF \
  -DDL4CPP_BUILD_TESTS=OFF -DDL4CPP_BUILD_SAMPLES=OFF -DDL4CPP_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j"$jobs" --target idx_reader_fuzz

mkdir -p "$build/idx-corpus" "$build/idx-crashes"
cp -n test/data/idx-reader-corpus/* "$build/idx-corpus/"

# halt_on_error: UBSan findings are crashes too. A 64 KiB gzip input may legitimately inflate to
# 66 MB (1032:1), so 2 GB resident is far beyond any correct execution.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1"
export OMP_NUM_THREADS=1
"$build/test/fuzz/idx_reader_fuzz" -max_total_time="$seconds" -max_len=65536 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/idx-crashes/" "$build/idx-corpus"

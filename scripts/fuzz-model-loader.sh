#!/usr/bin/env bash
# Fuzzes the model-file reader (ModelSerializer::restoreFromBytes) with libFuzzer under
# AddressSanitizer + UBSan for the given number of seconds (default 120).
#
#   scripts/fuzz-model-loader.sh [seconds]
#
# Builds test/fuzz/model_loader_fuzz with clang in build-fuzz/ (its own build directory, only that
# target: the normal build and CI never compile it), seeds build-fuzz/corpus with the committed
# valid model files and corpus (test/data/model-v1.dl4cpp, test/data/model-loader-corpus/), and
# runs. The corpus grows across runs. A crash (sanitizer report, or an exception that is not a
# dl4cpp::Error) stops the run and leaves the input in build-fuzz/crashes/; after fixing it, add
# the file to test/data/model-loader-corpus/ so the ordinary test suite replays it for ever.
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
cmake --build "$build" -j"$jobs" --target model_loader_fuzz

mkdir -p "$build/corpus" "$build/crashes"
cp -n test/data/model-v1.dl4cpp test/data/model-loader-corpus/* "$build/corpus/"

# halt_on_error: UBSan findings are crashes too. One thread for oneDNN/OpenMP: the loader does no
# math, and fewer threads mean more executions.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="detect_leaks=1"
export OMP_NUM_THREADS=1
# -max_len: 256 KiB holds the corpus's deepest nesting (100,000 levels, 200 KB; 16,000 levels,
# 32 KB, was already deep enough to overflow the stack under ASan). -rss_limit_mb: an input that
# makes the loader hold more than 2 GiB is a finding too.
"$build/test/fuzz/model_loader_fuzz" -max_total_time="$seconds" -max_len=262144 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$build/crashes/" "$build/corpus"

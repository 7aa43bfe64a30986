#!/usr/bin/env bash
# Runs one libFuzzer target of test/fuzz under AddressSanitizer + UBSan for the given number of
# seconds (default 120):
#
#   scripts/fuzz.sh model_loader_fuzz [seconds]     the model-file reader (restoreFromBytes)
#   scripts/fuzz.sh idx_reader_fuzz [seconds]       the IDX reader, raw and gzip files
#   scripts/fuzz.sh server_request_fuzz [seconds]   the HTTP servers' handling of client bytes
#                                                   (inference server and training page)
#   scripts/fuzz.sh image_decoder_fuzz [seconds]    the PNG and JPEG decoders (ImageDecoder)
#   scripts/fuzz.sh onnx_import_fuzz [seconds]      the ONNX importer (importModelFromBytes; needs
#                                                   libonnx-dev)
#
# Builds the target with clang in build-fuzz/ (its own build directory, only that target: the
# normal build and CI never compile it), seeds build-fuzz/corpus/<target> with the target's
# committed corpus, and runs. The corpus grows across runs. A crash (sanitizer report, or a broken
# contract: see the target's *FuzzInput.h) stops the run and leaves the input in
# build-fuzz/crashes/<target>/; after fixing it, add the file to the committed corpus so the
# ordinary test suite replays it for ever.
# Environment: DL4CPP_JOBS (build parallelism, default nproc).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

target="${1:-}"
seconds="${2:-120}"
case "$target" in
  # 256 KiB holds the model corpus's deepest nesting (100,000 levels, 200 KB; 16,000 levels, 32 KB,
  # already overflowed the stack under ASan before the parser bounded nesting).
  model_loader_fuzz) seeds=(test/data/model-v1.dl4cpp test/data/model-loader-corpus/*) max_len=262144 ;;
  idx_reader_fuzz) seeds=(test/data/idx-reader-corpus/*) max_len=65536 ;;
  server_request_fuzz) seeds=(test/data/server-request-corpus/*) max_len=65536 ;;
  image_decoder_fuzz) seeds=(test/data/image-decoder-corpus/*) max_len=65536 ;;
  # The seeds are small models of every imported operator (exported by dl4cpp and written with
  # ONNX's helper, test/nn/onnx/OnnxImportCorpusTest.cpp); LeNet-sized files are not needed.
  onnx_import_fuzz) seeds=(test/data/onnx-import-corpus/*) max_len=65536 ;;
  *) echo "usage: $0 model_loader_fuzz|idx_reader_fuzz|server_request_fuzz|image_decoder_fuzz|onnx_import_fuzz [seconds]" >&2; exit 2 ;;
esac
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 $target [seconds]" >&2; exit 2; }
jobs="${DL4CPP_JOBS:-$(nproc)}"
build=build-fuzz

command -v clang++ >/dev/null 2>&1 || {
  echo "error: clang++ not found (Debian: apt-get install clang libclang-rt-dev libomp-dev)" >&2
  exit 1
}
launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)

# Samples on: the server's code is built with them (only the targets asked for are compiled).
cmake -S . -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DDL4CPP_BUILD_FUZZ=ON -DDL4CPP_SANITIZE=address -DDL4CPP_WITH_CUDA=OFF \
  -DDL4CPP_BUILD_TESTS=OFF -DDL4CPP_BUILD_SAMPLES=ON -DDL4CPP_BUILD_BENCH=OFF "${launcher[@]}" >/dev/null
cmake --build "$build" -j"$jobs" --target "$target"

corpus="$build/corpus/$target"
crashes="$build/crashes/$target"
mkdir -p "$corpus" "$crashes"
cp -n "${seeds[@]}" "$corpus/"

# halt_on_error: UBSan findings are crashes too. -rss_limit_mb: an input that makes the code hold
# more than 2 GiB is a finding too (a 64 KiB gzip input may rightly inflate to 66 MB, 1032:1). One thread for oneDNN/OpenMP: the code fuzzed does
# little math, and fewer threads mean more executions.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export OMP_NUM_THREADS=1
"$build/test/fuzz/$target" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus"

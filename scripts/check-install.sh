#!/usr/bin/env bash
# Installs the library built in BUILD_DIR (default: build/) into a temporary prefix, checks that
# every installed header compiles on its own with the headers of oneDNN, CUDA and the library's
# private dependencies (zlib, libpng, libjpeg, cpp-httplib, ...) made unreachable (a directory of
# same-named headers that #error, searched first), then builds test/install/ (a separate CMake
# project using find_package(dl4cpp), and its "ui" component when the build has dl4cpp_ui) the
# same way and runs its programs (the DataVec one trains a network from an image folder).
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

# The install step needs the libraries themselves; build them in case only other targets were built.
targets=(dl4cpp)
if grep -q '^DL4CPP_BUILD_UI:BOOL=ON' "$build/CMakeCache.txt"; then targets+=(dl4cpp_ui); fi
# ONNX export (DL4CPP_WITH_ONNX): configured when ONNX was found.
if [[ -d "$build/CMakeFiles/dl4cpp_onnx.dir" ]]; then targets+=(dl4cpp_onnx dl4cpp-onnx); fi
cmake --build "$build" -j"$jobs" --target "${targets[@]}"
cmake --install "$build" --prefix "$prefix"
# The HTTP connection layer (ui/http) is internal to dl4cpp_ui: its headers reach httplib.h.
if [[ -e "$prefix/include/dl4cpp/ui/http" ]]; then
  echo "error: the internal headers of ui/http were installed" >&2
  exit 1
fi

# Headers a user of the installed package must never need.
poison="$tmp/poison"
for header in dnnl.hpp dnnl.h oneapi/dnnl/dnnl.hpp oneapi/dnnl/dnnl.h cuda.h cuda_runtime.h \
  cuda_runtime_api.h cublas_v2.h nccl.h nlohmann/json.hpp concurrentqueue.h \
  blockingconcurrentqueue.h concurrentqueue/moodycamel/concurrentqueue.h zlib.h \
  png.h pngconf.h jpeglib.h jerror.h jconfig.h jmorecfg.h httplib.h mpi.h onnx/onnx_pb.h \
  onnx/checker.h google/protobuf/message.h; do
  mkdir -p "$(dirname "$poison/$header")"
  echo "#error \"$header reached from an installed dl4cpp header\"" >"$poison/$header"
done
headers=()
while IFS= read -r -d '' h; do headers+=("${h#"$prefix/include/"}"); done \
  < <(find "$prefix/include/dl4cpp" -name '*.h' -print0)
compile_alone() {
  echo "#include <$1>" | g++ -std=c++20 -fsyntax-only -I"$poison" -I"$prefix/include" -I"$prefix/include/dl4cpp" -x c++ - ||
    { echo "error: installed header $1 does not compile on its own" >&2; return 1; }
}
export -f compile_alone
export poison prefix
printf '%s\0' "${headers[@]}" | xargs -0 -P "$jobs" -I{} bash -c 'compile_alone "$1"' _ {}
echo "check-install: ${#headers[@]} installed headers compile alone, without oneDNN or CUDA headers"

build_type="$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")"
cmake -S test/install -B "$consumer_build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE="${build_type:-Release}" -DCMAKE_CXX_FLAGS="-I$poison"
cmake --build "$consumer_build" -j"$jobs"

output="$("$consumer_build/dl4cpp_consumer")"
echo "$output"
if [[ -z "$output" ]]; then
  echo "error: the installed-package consumer printed nothing" >&2
  exit 1
fi
"$consumer_build/dl4cpp_datavec_consumer"
if [[ -x "$consumer_build/dl4cpp_ui_consumer" ]]; then
  "$consumer_build/dl4cpp_ui_consumer"
elif [[ " ${targets[*]} " == *" dl4cpp_ui "* ]]; then
  echo "error: the build has dl4cpp_ui but the consumer found no ui component" >&2
  exit 1
fi
if [[ -x "$consumer_build/dl4cpp_onnx_consumer" ]]; then
  "$consumer_build/dl4cpp_onnx_consumer"
  [[ -x "$prefix/bin/dl4cpp-onnx" ]] || { echo "error: dl4cpp-onnx was not installed" >&2; exit 1; }
elif [[ " ${targets[*]} " == *" dl4cpp_onnx "* ]]; then
  echo "error: the build has dl4cpp_onnx but the consumer found no onnx component" >&2
  exit 1
fi
echo "check-install: OK (find_package(dl4cpp) from $prefix)"

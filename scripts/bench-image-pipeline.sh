#!/usr/bin/env bash
# The image-pipeline benchmark of docs/data.md: images per second read, decoded, augmented and
# batched, against the number of decode threads, for
#   - 28x28 grey PNGs: Debian's Fashion-MNIST training set as PNG folders (make-fashion-png.sh);
#   - 224x224 RGB JPEGs cut from python3-sklearn's two photographs (bench_make_jpeg_folders).
#
#   scripts/bench-image-pipeline.sh [REPEATS]   (default 3)
#
# Needs scripts/install-deps.sh; builds the benchmarks in build/ (Release). Writes
# bench/results/image-pipeline-{png,jpeg}-<level>-<machine>.json (scripts/bench-result-path.sh;
# BENCH_MACHINE names the machine).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

repeats="${1:-3}"
data="${DL4CPP_DATA_DIR:-$HOME/.dl4cpp/data}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DDL4CPP_BUILD_BENCH=ON >/dev/null
cmake --build build -j"$(nproc)" --target bench_image_pipeline bench_make_jpeg_folders \
  image_folders_from_idx

scripts/make-fashion-png.sh "$data/fashion-png"
if [[ ! -f "$data/bench-jpeg/.complete" ]]; then
  rm -rf "$data/bench-jpeg"
  build/bench/bench_make_jpeg_folders --out "$data/bench-jpeg" --per-photo 1000
  touch "$data/bench-jpeg/.complete"
fi

png_json="$(scripts/bench-result-path.sh image-pipeline-png)"
jpeg_json="$(scripts/bench-result-path.sh image-pipeline-jpeg)"
mkdir -p bench/results
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
build/bench/bench_image_pipeline --data-dir "$data/fashion-png/train" --repeats "$repeats" \
  --json "$png_json"
build/bench/bench_image_pipeline --data-dir "$data/bench-jpeg" --height 224 --width 224 \
  --channels 3 --batch 32 --repeats "$repeats" --json "$jpeg_json"
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

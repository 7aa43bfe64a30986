#!/usr/bin/env bash
# Writes Debian's Fashion-MNIST (dataset-fashion-mnist) as PNG folders named by class, the layout
# the image-folder sample reads:
#   OUT/train/<class>/<index>.png   60,000 images
#   OUT/test/<class>/<index>.png    10,000 images
# with the classes T-shirt_top, Trouser, Pullover, Dress, Coat, Sandal, Shirt, Sneaker, Bag and
# Ankle_boot.
#
#   scripts/make-fashion-png.sh [OUT]   (default $DL4CPP_DATA_DIR/fashion-png or
#                                        ~/.dl4cpp/data/fashion-png)
#
# Needs scripts/install-deps.sh; builds samples/image_folders_from_idx in build/ (Release) when it
# is not there. A finished tree holds OUT/.complete and is not written again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

out="${1:-${DL4CPP_DATA_DIR:-$HOME/.dl4cpp/data}/fashion-png}"
source_dir=/usr/share/datasets/fashion-mnist
classes="T-shirt_top,Trouser,Pullover,Dress,Coat,Sandal,Shirt,Sneaker,Bag,Ankle_boot"

if [[ -f "$out/.complete" ]]; then
  echo "make-fashion-png: $out is complete"
  exit 0
fi
if [[ ! -f "$source_dir/train-images-idx3-ubyte.gz" ]]; then
  echo "error: $source_dir not found: install dataset-fashion-mnist (scripts/install-deps.sh)" >&2
  exit 1
fi

build_dir="${BUILD_DIR:-build}"
tool="$build_dir/samples/image_folders_from_idx"
if [[ ! -x "$tool" ]]; then
  cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build_dir" -j"$(nproc)" --target image_folders_from_idx
fi

rm -rf "$out"
for split in train:train t10k:test; do
  "$tool" --images "$source_dir/${split%%:*}-images-idx3-ubyte.gz" \
          --labels "$source_dir/${split%%:*}-labels-idx1-ubyte.gz" \
          --out "$out/${split##*:}" --classes "$classes"
done
touch "$out/.complete"

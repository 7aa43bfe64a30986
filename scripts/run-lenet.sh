#!/usr/bin/env bash
# The README "run" command: installs the dependencies, builds the samples (Release, in build/),
# fetches MNIST and trains LeNet on it. Arguments are passed to the sample, e.g.
#
#   scripts/run-lenet.sh --epochs 2
#
# Runs samples/parallel_lenet_mnist (the DL4J ParallelWrapper tutorial) when it is built,
# samples/lenet_mnist (a single model) otherwise.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-deps.sh

jobs="$(nproc)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
targets=(lenet_mnist)
# Captured first: `... | grep -q` under pipefail can fail when grep exits before cmake is done.
build_targets="$(cmake --build build --target help)"
if grep -q parallel_lenet_mnist <<<"$build_targets"; then
  targets+=(parallel_lenet_mnist)
fi
cmake --build build -j"$jobs" --target "${targets[@]}"

scripts/get-mnist.sh

if [[ -x build/samples/parallel_lenet_mnist ]]; then
  sample=build/samples/parallel_lenet_mnist
else
  sample=build/samples/lenet_mnist
fi
echo "run-lenet: $sample $*"
exec "$sample" "$@"

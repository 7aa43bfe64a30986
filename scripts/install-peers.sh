#!/usr/bin/env bash
# Installs what the peer benchmark needs beyond scripts/install-deps.sh (Debian 12): libtorch
# (Debian's libtorch-dev, 1.13) with the OpenMP build of OpenBLAS as its BLAS, and matplotlib for
# scripts/plot-bench.py. Not part of install-deps.sh: libtorch is large, and neither the library
# nor its tests need it.
#
#   scripts/install-peers.sh
#
# Debian's libtorch calls BLAS through libblas.so.3, which the alternatives system points at one
# implementation. libtorch-dev alone brings the reference BLAS (LeNet trained about 2.4x slower
# with it in an earlier measurement), so this script selects OpenBLAS-openmp explicitly and prints
# the selection: torch::set_num_threads sets the OpenMP team size, which the OpenMP build of
# OpenBLAS obeys (the pthread build would run its own thread pool beside libtorch's).
#
# Idempotent: installs only missing packages; the alternatives are set on every run.
set -euo pipefail

packages=(libtorch-dev libopenblas0-openmp python3-matplotlib)

missing=()
for pkg in "${packages[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "installed" ]] || missing+=("$pkg")
done

if [[ "$(id -u)" -eq 0 ]]; then
  as_root=()
elif command -v sudo >/dev/null 2>&1; then
  as_root=(sudo)
else
  echo "error: install-peers needs root (packages, BLAS alternatives); run $0 as root or install sudo" >&2
  exit 1
fi

if [[ ${#missing[@]} -gt 0 ]]; then
  command -v apt-get >/dev/null 2>&1 || {
    echo "error: apt-get not found; install these Debian packages by hand: ${missing[*]}" >&2
    exit 1
  }
  echo "install-peers: installing ${missing[*]}"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
else
  echo "install-peers: all packages already installed"
fi

# Point libblas.so.3 and liblapack.so.3 at OpenBLAS-openmp.
multiarch="$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)"
for lib in libblas.so.3 liblapack.so.3; do
  name="$lib-$multiarch"
  target="/usr/lib/$multiarch/openblas-openmp/$lib"
  if [[ ! -e "$target" ]]; then
    echo "error: $target is missing: libopenblas0-openmp did not install $lib" >&2
    exit 1
  fi
  "${as_root[@]}" update-alternatives --set "$name" "$target" >/dev/null
  selected="$(update-alternatives --query "$name" | sed -n 's/^Value: //p')"
  if [[ "$selected" != "$target" ]]; then
    echo "error: $name points at '$selected', not $target" >&2
    exit 1
  fi
  echo "install-peers: $name -> $selected (OpenBLAS, OpenMP build)"
done
echo "install-peers: done"

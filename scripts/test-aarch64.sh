#!/usr/bin/env bash
# Cross-builds dl4cpp for aarch64 (Debian's cross toolchain and arm64 multiarch packages;
# cmake/aarch64-linux-gnu.toolchain.cmake) in build-aarch64/, and runs the unit tests under
# qemu-user. Installs what it needs first (Debian 12; idempotent: no apt-get at all when
# everything is there). Exits non-zero on any failure, and when the tests overrun their time bound.
#
#   scripts/test-aarch64.sh
#
# Environment: DL4CPP_JOBS (build and test parallelism, default nproc),
# DL4CPP_AARCH64_TEST_TIMEOUT (seconds for the whole ctest run, default 1200).
#
# It builds everything a native build does (library, tests, samples, benchmarks; CUDA off), so
# that code compiling only on x86 shows here (bench_fma_peak, x86 intrinsics, is x86-64 only).
#
# Under qemu it runs a representative subset: the tests where the platform can show (kernels,
# layers, gradient checks, parsers, model files, the parallel engine), not those that only take
# time emulated (listed below with why). .ci/run bounds this script.
#
# Emulated binaries run as CTest runs them (CMAKE_CROSSCOMPILING_EMULATOR, no -L): the arm64 loader
# of libc6:arm64 must go with its libc. qemu-aarch64 -L /usr/aarch64-linux-gnu pairs the cross
# toolchain's older loader with the newer libc and hangs at the first thread created.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs="${DL4CPP_JOBS:-$(nproc)}"
test_timeout="${DL4CPP_AARCH64_TEST_TIMEOUT:-1200}"
build=build-aarch64

# Tests left to native runs, by name (joined into one ctest -E regex):
excluded=(
  # Real data, too slow emulated: training on MNIST, whole-data-set reads and comparisons.
  'real MNIST' 'Fashion-MNIST' 'whole training set'
  # The samples' and benchmarks' CTest entries train on real MNIST too, as does the training page's
  # browser test.
  '^sample\.' '^bench\.' '^ui\.'
  # qemu-user 7.2 keeps ~280 KiB for every thread that exits (400 threads started and joined: +111
  # MiB resident under qemu, +0.1 MiB natively), which this check of resident size would count.
  'repeated fit\(\) grows neither the thread count nor memory'
  # What runs the same code on every platform and only takes time emulated: the HTTP servers'
  # protocol and timeout tests (sockets and clocks; each waits out timeouts that qemu stretches),
  # the allocation count of a LeNet epoch, and whole zoo models (their layers are tested here
  # one by one). The kernels, layers, gradient checks, parsers, model files and the parallel
  # engine, where the platform shows, still run.
  '^InferenceServer: ' '^UIServer: ' '^BoundedHttpServer: '
  'steady-state fit\(\) of LeNet' '^Zoo: one training step'
)
exclude="$(IFS='|'; echo "${excluded[*]}")"

step_start=$SECONDS
step() {
  echo "test-aarch64: $1 took $((SECONDS - step_start)) s"
  step_start=$SECONDS
}

# --- 1. Install -----------------------------------------------------------------------------------
host_packages=(
  cmake g++-aarch64-linux-gnu qemu-user                    # cross compiler, emulator
  doctest-dev nlohmann-json3-dev libconcurrentqueue-dev   # header-only: the host's packages serve
)
arm64_packages=(
  libdnnl2 libfmt-dev zlib1g-dev                          # the library (oneDNN's headers: below)
  libcpp-httplib-dev libpng-dev                           # the inference server, tested with the rest
  libjpeg62-turbo-dev                                     # the library's JPEG decoding (PNG: above)
)
wanted=("${host_packages[@]}")
for pkg in "${arm64_packages[@]}"; do wanted+=("$pkg:arm64"); done

missing=()
for pkg in "${wanted[@]}"; do
  status="$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)"
  [[ "$status" == "installed" ]] || missing+=("$pkg")
done
if [[ ${#missing[@]} -gt 0 ]]; then
  if [[ "$(id -u)" -eq 0 ]]; then
    as_root=()
  elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    echo "error: installing ${missing[*]} needs root; run $0 as root or install sudo" >&2
    exit 1
  fi
  echo "test-aarch64: installing ${missing[*]}"
  if ! dpkg --print-foreign-architectures | grep -qx arm64; then
    "${as_root[@]}" dpkg --add-architecture arm64
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y --no-install-recommends "${missing[@]}"
fi

# Debian 12's libdnnl-dev cannot be installed for two architectures at once: its dnnl_config.h
# differs between them (DNNL_GPU_RUNTIME is OCL on amd64, NONE on arm64), so dpkg refuses
# libdnnl-dev:arm64 beside the host's libdnnl-dev. The arm64 package is unpacked into the build
# folder instead, its library link pointed at the installed libdnnl2:arm64.
onednn_version="$(dpkg-query -W -f='${Version}' libdnnl2:arm64)"
onednn_dev="$build/libdnnl-dev-arm64"
if [[ "$(cat "$onednn_dev/version" 2>/dev/null)" != "$onednn_version" ]]; then
  rm -rf "$onednn_dev"
  mkdir -p "$onednn_dev"
  (cd "$onednn_dev" && apt-get download "libdnnl-dev:arm64=$onednn_version")
  dpkg-deb -x "$onednn_dev"/libdnnl-dev_*_arm64.deb "$onednn_dev"
  for lib in /usr/lib/aarch64-linux-gnu/libdnnl.so.*; do
    ln -sf "$lib" "$onednn_dev/usr/lib/aarch64-linux-gnu/"
  done
  echo "$onednn_version" >"$onednn_dev/version"
fi
step "install"

# --- 2. Configure ---------------------------------------------------------------------------------
# ccache when there is one (CMakeLists.txt picks it up; -U drops a launcher that a previous
# configure recorded). MPI off: FindMPI would find this host's x86 Open MPI; the MPI transport
# (test/cluster) runs natively, and here its stub and InProcessCluster's tests run instead.
cmake -S . -B "$build" -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.toolchain.cmake \
  -DCMAKE_BUILD_TYPE=Release -DDL4CPP_WITH_CUDA=OFF -DDL4CPP_WITH_MPI=OFF -DDL4CPP_BUILD_TESTS=ON \
  -DDL4CPP_BUILD_SAMPLES=ON -DDL4CPP_BUILD_BENCH=ON \
  -Ddnnl_DIR="$(pwd)/$onednn_dev/usr/lib/aarch64-linux-gnu/cmake/dnnl" \
  -UCMAKE_CXX_COMPILER_LAUNCHER
step "configure"

# --- 3. Build (the test list is read by running the new executable under qemu) ---------------------
cmake --build "$build" -j"$jobs"
step "build"

# --- 4. Test under qemu ---------------------------------------------------------------------------
registered="$(ctest --test-dir "$build" -N | sed -n 's/^Total Tests: //p')"
selected="$(ctest --test-dir "$build" -N -E "$exclude" | sed -n 's/^Total Tests: //p')"
echo "test-aarch64: running $selected of $registered tests under qemu-aarch64" \
     "($((registered - selected)) left to native runs: -E '$exclude')"
log="$build/ctest-aarch64.log"
# In the background, so that a TERM (an outer `timeout` bounding this script) reaches the tests:
# `timeout` runs ctest and the emulated tests in a process group of their own.
# One OpenMP thread per test (OMP_THREAD_LIMIT: dl4cpp's omp_set_num_threads would override
# OMP_NUM_THREADS), so that $jobs tests side by side do not oversubscribe the cores: teams on
# shared cores spin against each other at every barrier (docs/getting-started.md, "Threads and
# cores"). The multi-thread paths are tested by the native runs.
OMP_THREAD_LIMIT=1 timeout "$test_timeout" ctest --test-dir "$build" --output-on-failure \
  -j"$jobs" -E "$exclude" -O "$log" &
tests=$!
trap 'kill -TERM -- "-$tests" 2>/dev/null; exit 143' TERM INT
set +e
wait "$tests"
rc=$?
set -e
trap - TERM INT
step "ctest"
if [[ $rc -eq 124 ]]; then
  echo "test-aarch64: FAILED: the tests overran ${test_timeout} s (log: $log)" >&2
  exit 1
elif [[ $rc -ne 0 ]]; then
  echo "test-aarch64: FAILED (ctest exit status $rc; log: $log)" >&2
  exit 1
fi
skipped="$(grep -c '(Skipped)$' "$log" || true)"

# Every DL4CPP_MAX_CPU_ISA value is accepted here and leaves the level at baseline.
for level in avx512 avx2 baseline; do
  DL4CPP_MAX_CPU_ISA="$level" ctest --test-dir "$build" --output-on-failure -R '^CpuIsa: '
done
step "ctest at each DL4CPP_MAX_CPU_ISA"
echo "test-aarch64: $selected tests ran under qemu-aarch64: $((selected - skipped)) passed," \
     "$skipped skipped (listed above)"

#!/usr/bin/env bash
# Builds the test executable under AddressSanitizer(+UBSan) and ThreadSanitizer (the `asan` and
# `tsan` presets of CMakePresets.json: RelWithDebInfo, samples and benchmarks off, CUDA and MPI off
# (so the MPI stub's test runs here; the MPI build's checks are test/cluster's, under mpirun),
# only the dl4cpp_tests target, in build-asan/ and build-tsan/; the tsan preset compiles only the
# test folders it runs, DL4CPP_TEST_FOLDERS) and runs the tests under each (below).
# Exits non-zero on any sanitizer report or test failure.
#
#   scripts/test-sanitizers.sh [asan] [tsan]     (default: both, ASan first)
#
# What runs:
#   asan  every suite (parallel, iterators, nn/..., including LeNet on real MNIST): about 11 s
#         under ASan on a 2-core machine (LeNet ~8 s of it), so all of it is checked for memory
#         errors, leaks (LSan) and undefined behaviour (UBSan).
#         Set DL4CPP_ASAN_SUITES=parallel,iterators to run only the concurrent suites.
#   tsan  -ts=parallel,iterators,ui: the suites with threads of dl4cpp's own (ParallelWrapper's
#         WorkerPool, ParallelInference's workers and its concurrent callers,
#         AsyncDataSetIterator's producer, the HTTP layer's poller and answering threads), with OMP_THREAD_LIMIT=1 and the
#         suppressions in test/sanitizers/tsan.supp (which says why). OMP_THREAD_LIMIT=1 keeps
#         libgomp (uninstrumented; its barriers are invisible to TSan, so OpenMP teams produce
#         100+ false reports per run) from starting any thread; dl4cpp's std::threads still run
#         concurrently. OMP_NUM_THREADS=1 would not do: dl4cpp's omp_set_num_threads() overrides
#         it (CpuBackend::bindToCurrentThread clamps to OMP_THREAD_LIMIT, so oneDNN plans for one
#         thread too). The nn/ suites have no threads of their own and are not run under TSan.
# Environment: DL4CPP_JOBS (build parallelism, default nproc), DL4CPP_ASAN_SUITES (above).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"

jobs="${DL4CPP_JOBS:-$(nproc)}"
sanitizers=("$@")
[[ ${#sanitizers[@]} -gt 0 ]] || sanitizers=(asan tsan)
for s in "${sanitizers[@]}"; do
  [[ "$s" == asan || "$s" == tsan ]] || { echo "usage: $0 [asan] [tsan]" >&2; exit 2; }
done

scripts/install-deps.sh
scripts/get-mnist.sh

# A sanitizer report is a failure even if it somehow did not change the exit status.
report_pattern='ERROR: AddressSanitizer|ERROR: LeakSanitizer|WARNING: ThreadSanitizer|ThreadSanitizer: reported|runtime error:'

failed=()
run_preset() {
  local preset="$1"
  shift
  local dir="build-$preset" log="build-$preset/sanitizer-run.log" start rc
  echo "=== $preset: configure + build (dl4cpp_tests) ==="
  start=$SECONDS
  cmake --preset "$preset"
  cmake --build --preset "$preset" -j"$jobs"
  echo "=== $preset: built in $((SECONDS - start)) s; running: $* ==="
  start=$SECONDS
  set +e
  (cd "$dir/test" && "$@") 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  echo "=== $preset: ran in $((SECONDS - start)) s, exit status $rc (log: $log) ==="
  if [[ $rc -ne 0 ]]; then
    failed+=("$preset (exit status $rc)")
  elif grep -Eq "$report_pattern" "$log"; then
    failed+=("$preset (sanitizer report in $log)")
  fi
}

for s in "${sanitizers[@]}"; do
  case "$s" in
    asan)
      suites=()
      [[ -n "${DL4CPP_ASAN_SUITES:-}" ]] && suites=("-ts=$DL4CPP_ASAN_SUITES")
      ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:strict_init_order=1:detect_stack_use_after_return=1" \
      UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1" \
        run_preset asan ./dl4cpp_tests "${suites[@]}"
      ;;
    tsan)
      OMP_THREAD_LIMIT=1 \
      TSAN_OPTIONS="suppressions=$root/test/sanitizers/tsan.supp:halt_on_error=1:second_deadlock_stack=1:print_suppressions=0" \
        run_preset tsan ./dl4cpp_tests -ts=parallel,iterators,ui
      ;;
  esac
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test-sanitizers: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test-sanitizers: ${sanitizers[*]}: all tests passed, no sanitizer reports"

#pragma once
// Loops over the OpenMP threads that open no parallel region when it would have one thread:
// libgomp mallocs and frees a team for every region that runs on one thread (a model bound to one
// core, or a call from inside another region), and a training step must not allocate. Where a
// region has more than one thread, libgomp reuses its team and allocates nothing.
#include <omp.h>

#include <cstdint>
#include <exception>

namespace dl4cpp::cpu {

// Sets the calling thread's OpenMP thread count to `numThreads` (0: its current count), never above
// OMP_THREAD_LIMIT, which omp_set_num_threads and the default count ignore: oneDNN partitions work
// for omp_get_max_threads() threads, and in a team capped below that its kernels wait at their
// barriers for threads that never come, or (aarch64's sgemm) leave the missing threads' part of
// the output unwritten.
inline void setThreadsWithinLimit(int numThreads) {
  const int wanted = numThreads > 0 ? numThreads : omp_get_max_threads();
  const int allowed = wanted < omp_get_thread_limit() ? wanted : omp_get_thread_limit();
  if (allowed != omp_get_max_threads()) omp_set_num_threads(allowed);
}

// A parallel region opened here would run on the calling thread alone.
inline bool singleThreaded() { return omp_in_parallel() || omp_get_max_threads() == 1; }

// body(begin, end) over contiguous parts of [0, n), one per OpenMP thread and in thread order (as
// `omp for schedule(static)` would split it), or body(0, n) on the calling thread when
// singleThreaded(). Pointers the body's loop uses are best passed on as function arguments: read
// through the lambda's captures, GCC must assume the loop's stores may change them and stops
// vectorising.
template <typename Body>
void parallelRanges(int64_t n, const Body& body) {
  if (singleThreaded()) {
    body(int64_t{0}, n);
    return;
  }
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    body(n * t / threads, n * (t + 1) / threads);
  }
}

// body(i) for every i in [0, n), split as parallelRanges.
template <typename Body>
void parallelFor(int64_t n, const Body& body) {
  parallelRanges(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) body(i);
  });
}

// body(i, thread) for every i in [0, n), split as parallelFor, where thread indexes the caller's
// per-thread scratch (0 when the loop runs on the calling thread alone: inside another region or
// on one thread). The first exception a body throws (sgemm's oneDNN fallback) is rethrown after
// the loop: none may leave a parallel region.
template <typename Body>
void parallelForOnThreads(int64_t n, const Body& body) {
  const bool single = singleThreaded();
  std::exception_ptr failure;
  parallelFor(n, [&](int64_t i) {
    try {
      body(i, single ? 0 : omp_get_thread_num());
    } catch (...) {
#pragma omp critical(dl4cpp_parallel_for_failure)
      failure = std::current_exception();
    }
  });
  if (failure) std::rethrow_exception(failure);
}

// op(i) for every i in [0, n) of an element-wise loop, split as parallelRanges. Each range gets
// its own copy of `op`, so the pointers it captured are locals of the loop: read through a shared
// closure, GCC must assume the loop's stores may change them, and stops vectorising.
template <typename Op>
void elementLoop(Op op, int64_t begin, int64_t end) {
#pragma omp simd
  for (int64_t i = begin; i < end; ++i) op(i);
}
template <typename Op>
void parallelElements(int64_t n, Op op) {
  parallelRanges(n, [&op](int64_t begin, int64_t end) { elementLoop(op, begin, end); });
}

// The sum of term(i) over [0, n) in double: each range's sum in index order, the ranges' sums
// added as OpenMP's reduction does (so, as before, the last bits depend on the thread count).
template <typename Term>
double sumRange(Term term, int64_t begin, int64_t end) {
  double sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t i = begin; i < end; ++i) sum += term(i);
  return sum;
}
template <typename Term>
double parallelSum(int64_t n, Term term) {
  if (singleThreaded()) return sumRange(term, 0, n);
  double sum = 0;
#pragma omp parallel reduction(+ : sum)
  {
    const int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    sum += sumRange(term, n * t / threads, n * (t + 1) / threads);
  }
  return sum;
}

}  // namespace dl4cpp::cpu

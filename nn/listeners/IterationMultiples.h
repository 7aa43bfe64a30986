#pragma once
// IterationMultiples: says which reports of a listener reach a multiple of n iterations. A single
// model reports every iteration (1, 2, 3, ...); ParallelWrapper reports once per averaging round,
// k iterations at a time (3, 6, 9, ...), so "every n iterations" means every report that crosses
// a multiple of n: with k = 3 and n = 5, the reports at 6, 12, 15, 21, ...
#include <cstdint>

namespace dl4cpp {

class IterationMultiples {
 public:
  // n >= 1 (the caller validates it and names itself in the error).
  explicit IterationMultiples(int64_t n) : n_(n) {}

  // Whether a multiple of n lies in (previous report, iteration]. When the count went backwards
  // (a new fit() that restarted it) the rule is iteration % n == 0.
  bool reached(int64_t iteration) {
    const bool crossed = iteration > last_ ? iteration / n_ != last_ / n_ : iteration % n_ == 0;
    last_ = iteration;
    return crossed;
  }

 private:
  int64_t n_;
  int64_t last_ = 0;  // iteration of the previous report
};

}  // namespace dl4cpp

#pragma once
// Random: the seeded generator behind weight initialisation. Its own algorithms (xoshiro256**,
// Box-Muller), not <random>'s distributions, so a seed gives the same weights with every
// standard library.
#include <cstdint>

namespace dl4cpp {

class Random {
 public:
  explicit Random(uint64_t seed);
  // A seed derived from `seed` and `salt` (a splitmix64 step of their mix): neighbouring salts
  // give unrelated streams.
  static uint64_t deriveSeed(uint64_t seed, uint64_t salt);
  uint64_t nextU64();
  // Uniform in [0, 1).
  double nextDouble();
  // Uniform in [lo, hi).
  double uniform(double lo, double hi) { return lo + (hi - lo) * nextDouble(); }
  // Standard normal.
  double gaussian();

 private:
  uint64_t s_[4]{};
  bool hasSpare_ = false;
  double spare_ = 0;
};

}  // namespace dl4cpp

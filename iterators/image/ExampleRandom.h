#pragma once
// ExampleRandom: the random draws of one example's augmentation. Its stream is a function of
// (seed, epoch, example) alone, so an epoch's augmented batches are the same for the same seed
// whichever decode thread handles an example, and in whatever order the threads run.
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "nn/backend/CounterRandom.h"

namespace dl4cpp {

class ExampleRandom {
 public:
  ExampleRandom(uint64_t seed, uint64_t epoch, uint64_t example)
      : state_(mixBits(mixBits(mixBits(seed) ^ epoch) ^ example)) {}

  // The next 64 uniform bits (splitmix64).
  uint64_t nextBits() {
    state_ += 0x9e3779b97f4a7c15ULL;
    return mixBits(state_);
  }
  // Uniform in [0, 1), with 53 bits.
  double nextDouble() { return static_cast<double>(nextBits() >> 11) * 0x1.0p-53; }
  // Uniform in [low, high).
  double uniform(double low, double high) { return low + (high - low) * nextDouble(); }
  // True with probability p.
  bool bernoulli(double p) { return nextDouble() < p; }
  // Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; the bias is below 2^-32 for the
  // small n of image sizes).
  int below(int n) {
    return static_cast<int>(((nextBits() >> 32) * static_cast<uint64_t>(n)) >> 32);
  }
  // Uniform index in [0, n), n > 0, for collections of any size (the modulo's bias is below
  // n / 2^64).
  uint64_t index(uint64_t n) { return nextBits() % n; }

 private:
  uint64_t state_;
};

// Fisher-Yates shuffle drawing from `random`: the same draws give the same order on every platform
// (std::shuffle's use of the generator is implementation-defined).
template <typename T>
void shuffleInPlace(std::vector<T>& values, ExampleRandom& random) {
  for (size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[random.index(i)]);
}

}  // namespace dl4cpp

#include "nn/tensor/Random.h"

#include <cmath>
#include <numbers>

namespace dl4cpp {

namespace {
uint64_t splitmix64(uint64_t& x) {
  uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Random::Random(uint64_t seed) {
  for (auto& s : s_) s = splitmix64(seed);
}

uint64_t Random::deriveSeed(uint64_t seed, uint64_t salt) {
  uint64_t x = splitmix64(seed) ^ salt;
  return splitmix64(x);
}

uint64_t Random::nextU64() {
  const uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Random::nextDouble() { return static_cast<double>(nextU64() >> 11) * 0x1.0p-53; }

double Random::gaussian() {
  if (hasSpare_) {
    hasSpare_ = false;
    return spare_;
  }
  double u1 = nextDouble();
  while (u1 <= 0.0) u1 = nextDouble();
  const double u2 = nextDouble();
  const double r = std::sqrt(-2.0 * std::log(u1));
  spare_ = r * std::sin(2.0 * std::numbers::pi * u2);
  hasSpare_ = true;
  return r * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace dl4cpp

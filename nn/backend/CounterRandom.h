#pragma once
// Counter-based random draws: value i of stream `seed` is a hash of (seed, i), computed alone, so
// any thread (or GPU thread) can draw any element and a seed gives the same numbers on every
// device and with every thread count. Used for dropout masks, where a sequential generator would
// tie the mask to the order elements are visited.
#include <cstdint>

#include "nn/backend/HostDevice.h"

namespace dl4cpp {

// splitmix64's finaliser: a bijection of 64-bit values with full avalanche.
DL4CPP_HOST_DEVICE inline uint64_t mixBits(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// 24 uniform bits of element i of stream `seed`, as an integer in [0, 2^24).
DL4CPP_HOST_DEVICE inline uint32_t counterDraw24(uint64_t seed, uint64_t i) {
  return static_cast<uint32_t>(mixBits(seed + (i + 1) * 0x9e3779b97f4a7c15ULL) >> 40);
}

// The draw threshold for "kept with probability p": an element is kept when its draw is below it.
inline uint32_t keepThreshold24(float retainProbability) {
  const double t = static_cast<double>(retainProbability) * double(1u << 24);
  return t >= double(1u << 24) ? (1u << 24) : static_cast<uint32_t>(t);
}

// Inverted dropout's mask value of element i: 1 / p when kept, else 0.
DL4CPP_HOST_DEVICE inline float dropoutMaskValue(uint64_t seed, uint64_t i, uint32_t threshold,
                                                 float inverseRetain) {
  return counterDraw24(seed, i) < threshold ? inverseRetain : 0.0f;
}

}  // namespace dl4cpp

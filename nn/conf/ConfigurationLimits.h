#pragma once
// The largest sizes a configuration may have. NeuralNetConfiguration's list builder enforces them
// (and so fromJson(), which builds through it, for every configuration read from a file), so that
// every product a configuration forms (h * w * c, nIn * nOut, nOut * nIn * kernel area, parameter
// totals) is exact in int64_t, whatever a caller or a file says. They are not memory limits: a
// configuration within them may still need more memory than the machine has, which tensor
// allocation reports as AllocationError.
#include <cstdint>
#include <initializer_list>
#include <optional>

namespace dl4cpp::limits {

// One extent: kernel, stride, padding and dilation sizes, an image's height, width and channels,
// a layer's nOut. 2^20 is far above any network dl4cpp can train.
inline constexpr int64_t kMaxExtent = int64_t{1} << 20;
// Values per example (a flat input's size, a dense layer's nIn, height * width * channels of any
// layer's input or output) and parameters of one layer or the whole network. 2^40 float32 values
// are 4 TiB, beyond any one machine's memory, and 2^40 * kMaxExtent still fits int64_t.
inline constexpr int64_t kMaxValuesPerExample = int64_t{1} << 40;
inline constexpr int64_t kMaxParameters = int64_t{1} << 40;
// Vertices of a ComputationGraph (inputs, layers and other vertices) and inputs of one vertex: the
// graph builder's checks and topological sort are linear in them, and the limits keep a graph
// read from an untrusted file from asking for more work than a real graph ever needs.
inline constexpr int64_t kMaxGraphVertices = int64_t{1} << 16;
inline constexpr int64_t kMaxVertexInputs = int64_t{1} << 12;

// The product of non-negative `factors`, or nullopt when it exceeds `limit` (no intermediate
// result overflows).
inline std::optional<int64_t> boundedProduct(std::initializer_list<int64_t> factors,
                                             int64_t limit) {
  int64_t product = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(product, f, &product) || product > limit) return std::nullopt;
  return product;
}

}  // namespace dl4cpp::limits

#pragma once
// MPI counts elements in int: a buffer of more than INT_MAX elements (8 GiB of floats, a model of
// two billion parameters) goes through MPI in consecutive pieces of at most INT_MAX elements.
#include <algorithm>
#include <cstddef>

namespace dl4cpp::parallel {

// Calls f(offset, count) for consecutive pieces covering [0, n), each of 1 .. limit elements, in
// order; not at all when n == 0. limit must be > 0.
template <class F>
void forEachCountChunk(std::size_t n, std::size_t limit, F&& f) {
  for (std::size_t offset = 0; offset < n;) {
    const std::size_t count = std::min(limit, n - offset);
    f(offset, count);
    offset += count;
  }
}

}  // namespace dl4cpp::parallel

#pragma once
// The CPU backend's cache of oneDNN primitives, keyed by op and shape. An entry holds the
// primitive and the memory objects bound to it; executing again only swaps data handles, so a
// training step with shapes seen before creates and allocates nothing.
#include <array>
#include <cstdint>
#include <cstring>
#include <oneapi/dnnl/dnnl.hpp>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nn/core/Error.h"

namespace dl4cpp::cpu {

// An op's name as the first value of its key: a 64-bit FNV-1a hash of the name the op's CPU file
// gives it ("conv_forward", "lrn_inference", ...), so a new op picks a name of its own where it is
// implemented instead of a value in a list here.
constexpr int64_t primitiveOpId(std::string_view op) {
  uint64_t h = 1469598103934665603ull;
  for (char c : op) {
    h ^= static_cast<uint8_t>(c);
    h *= 1099511628211ull;
  }
  return static_cast<int64_t>(h);
}

// Fixed-size POD key: the op and up to 23 integers describing shapes and geometry.
struct PrimitiveKey {
  std::array<int64_t, 24> v{};
  int n = 0;

  PrimitiveKey() = default;
  // A key that starts with the op's name (primitiveOpId).
  explicit PrimitiveKey(std::string_view op) { add(primitiveOpId(op)); }

  PrimitiveKey& add(int64_t x) {
    if (n == static_cast<int>(v.size()))
      throw BackendError("PrimitiveKey: more than 24 values; enlarge the key for this op");
    v[static_cast<size_t>(n++)] = x;
    return *this;
  }
  bool operator==(const PrimitiveKey& o) const {
    return n == o.n &&
           std::memcmp(v.data(), o.v.data(), sizeof(int64_t) * static_cast<size_t>(n)) == 0;
  }
};

struct PrimitiveKeyHash {
  size_t operator()(const PrimitiveKey& k) const {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the used values
    for (int i = 0; i < k.n; ++i) {
      h ^= static_cast<uint64_t>(k.v[static_cast<size_t>(i)]);
      h *= 1099511628211ull;
    }
    return static_cast<size_t>(h);
  }
};

// One argument of a cached primitive. `user` wraps the caller's buffer in its plain layout (the
// data handle is set on every call). When the primitive chose another layout (format_tag::any),
// `internal` holds the data in that layout and `reorder` converts: user -> internal before an
// input is read, internal -> user after an output is written.
// Internal buffers live only for the duration of one execute(), so they are not owned by the
// entry: they are carved out of the backend's scratch arena at `scratchOffset`.
struct CachedArg {
  int id = 0;
  bool output = false;
  dnnl::memory user;
  dnnl::memory internal;
  dnnl::primitive reorder;
  size_t scratchOffset = 0;
};

struct CachedPrimitive {
  dnnl::primitive primitive;
  std::vector<CachedArg> args;  // in the order execute() receives their pointers
  size_t scratchBytes = 0;      // arena bytes the internal buffers need together
  size_t workspaceBytes = 0;    // max pooling: bytes of arg-max scratch the caller must provide
};

class PrimitiveCache {
 public:
  // Returns the entry for `key`, building it with `make()` the first time. A template, not a
  // std::function: wrapping the caller's lambda would allocate on every op call.
  template <typename Make>
  CachedPrimitive& get(const PrimitiveKey& key, Make&& make) {
    auto it = entries_.find(key);
    if (it != entries_.end()) return it->second;
    return entries_.emplace(key, make()).first->second;
  }
  CachedPrimitive* find(const PrimitiveKey& key) {
    auto it = entries_.find(key);
    return it == entries_.end() ? nullptr : &it->second;
  }
  size_t size() const { return entries_.size(); }

 private:
  std::unordered_map<PrimitiveKey, CachedPrimitive, PrimitiveKeyHash> entries_;
};

}  // namespace dl4cpp::cpu

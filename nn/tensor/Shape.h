#pragma once
// Shape: the dimensions of a dense, row-major (C order) tensor. Fixed capacity so that building
// and comparing shapes never touches the heap (shapes are created in the training loop).
#include <array>
#include <cstdint>
#include <initializer_list>
#include <string>

#include "nn/core/Error.h"

namespace dl4cpp {

class Shape {
 public:
  static constexpr int kMaxRank = 6;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) {
    if (dims.size() > kMaxRank)
      throw ShapeError("Shape: rank " + std::to_string(dims.size()) + " exceeds the maximum of 6");
    for (int64_t d : dims) push(d);
  }

  int rank() const { return rank_; }
  int64_t operator[](int i) const { return dims_[static_cast<size_t>(i)]; }
  int64_t& operator[](int i) { return dims_[static_cast<size_t>(i)]; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }

  int64_t numel() const {
    int64_t n = 1;
    for (int i = 0; i < rank_; ++i) n *= dims_[static_cast<size_t>(i)];
    return n;
  }

  void push(int64_t d) {
    if (rank_ == kMaxRank) throw ShapeError("Shape: rank exceeds the maximum of 6");
    if (d < 0) throw ShapeError("Shape: negative dimension " + std::to_string(d));
    dims_[static_cast<size_t>(rank_++)] = d;
  }

  // This shape with dimension 0 replaced (the batch dimension, by convention).
  Shape withBatch(int64_t n) const {
    Shape s = *this;
    s[0] = n;
    return s;
  }

  bool operator==(const Shape& o) const {
    if (rank_ != o.rank_) return false;
    for (int i = 0; i < rank_; ++i)
      if (dims_[static_cast<size_t>(i)] != o.dims_[static_cast<size_t>(i)]) return false;
    return true;
  }
  bool operator!=(const Shape& o) const { return !(*this == o); }

  // "[128, 1, 28, 28]"
  std::string toString() const {
    std::string s = "[";
    for (int i = 0; i < rank_; ++i) {
      if (i) s += ", ";
      s += std::to_string(dims_[static_cast<size_t>(i)]);
    }
    return s + "]";
  }

 private:
  std::array<int64_t, kMaxRank> dims_{};
  int rank_ = 0;
};

}  // namespace dl4cpp

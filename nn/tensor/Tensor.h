#pragma once
// Tensor: the one tensor type of dl4cpp. Dense float32, row-major, on one Device.
//
// A Tensor is a handle: copying it shares the storage (like a DL4J INDArray reference); views
// made by view()/reshape()/rows() share it too. clone() makes an independent copy. Only
// contiguous views exist, so every tensor is (pointer, shape) and every op can treat it as a flat
// array; this is what lets a network keep all its parameters in one flat buffer and hand layers
// views into it.
#include <cstdint>
#include <memory>
#include <vector>

#include "nn/tensor/Device.h"
#include "nn/tensor/Shape.h"

namespace dl4cpp {

// Owns one allocation on one device, made and given back through nn/backend/Devices.h (host memory
// is 64-byte aligned for AVX-512 loads; GPU memory comes from that device's caching allocator).
class Storage {
 public:
  Storage(int64_t numel, Device device);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  float* data() const { return data_; }
  int64_t numel() const { return numel_; }
  Device device() const { return device_; }

 private:
  float* data_ = nullptr;
  int64_t numel_ = 0;
  Device device_;
};

class Tensor {
 public:
  Tensor() = default;  // empty: no storage, rank 0
  // A new zero-filled tensor.
  explicit Tensor(const Shape& shape, Device device = Device::cpu());
  // A new host tensor holding `values` (values.size() must equal shape.numel()).
  static Tensor fromVector(const Shape& shape, const std::vector<float>& values);

  bool empty() const { return storage_ == nullptr; }
  const Shape& shape() const { return shape_; }
  int rank() const { return shape_.rank(); }
  int64_t dim(int i) const { return shape_[i]; }
  // Elements; 0 for an empty tensor (whose rank-0 shape would otherwise count 1).
  int64_t numel() const { return storage_ ? shape_.numel() : 0; }
  Device device() const { return storage_ ? storage_->device() : Device::cpu(); }

  float* data() { return storage_ ? storage_->data() + offset_ : nullptr; }
  const float* data() const { return storage_ ? storage_->data() + offset_ : nullptr; }

  // A view of `shape.numel()` elements starting `offset` elements into this tensor.
  Tensor view(int64_t offset, const Shape& shape) const;
  // The same elements with another shape (numel must match).
  Tensor reshape(const Shape& shape) const;
  // Rows [begin, end) along dimension 0, as a view.
  Tensor rows(int64_t begin, int64_t end) const;
  // An independent copy on the same device.
  Tensor clone() const;
  // An independent copy on `device` (host <-> GPU, GPU <-> GPU).
  Tensor to(Device device) const;
  // Copies src's elements into this tensor (shapes must have equal numel; the two may live on
  // different devices).
  void copyFrom(const Tensor& src);
  void fill(float value);

  // Whether the elements are in host memory, so that data() may be read and written directly.
  bool onHost() const;
  // This tensor (sharing its storage) when onHost(), otherwise a copy in host memory: for code
  // that only needs to read the elements on the host.
  Tensor toHost() const;

  // Host access, for tests and small utilities (GPU tensors are copied to the host; slow).
  std::vector<float> toVector() const;
  float at(int64_t flatIndex) const;

  // True when both tensors have the same shape and every element differs by at most `tol`.
  bool allClose(const Tensor& other, float tol) const;

 private:
  std::shared_ptr<Storage> storage_;
  int64_t offset_ = 0;
  Shape shape_;
};

}  // namespace dl4cpp

#include "nn/tensor/Tensor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <new>

#include "nn/tensor/DeviceMemory.h"

namespace dl4cpp {

namespace {
// The storage for a tensor of `shape`, or AllocationError naming the shape, the bytes and the
// reason: shapes come from configurations and data files, so no std::bad_alloc may escape.
// (Messages are formatted only on failure: allocating here would count against the training
// step's no-allocation guarantee.)
std::shared_ptr<Storage> allocateStorage(const Shape& shape, Device device) {
  auto fail = [&](const std::string& size, const std::string& why) {
    return AllocationError(
        fmt::format("cannot allocate a float32 tensor of shape {} ({}) on {}: {}", shape.toString(),
                    size, device.toString(), why));
  };
  constexpr int64_t kMaxNumel = PTRDIFF_MAX / sizeof(float);
  int64_t numel = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(numel, d, &numel) || numel > kMaxNumel)
      throw fail("more bytes than a pointer can address", "too large");
  const uint64_t bytes = static_cast<uint64_t>(numel) * sizeof(float);
  if (const auto why = devices::exceedsCapacity(device, bytes))
    throw fail(fmt::format("{} bytes", bytes), *why);
  try {
    return std::make_shared<Storage>(numel, device);
  } catch (const std::bad_alloc&) {  // from the host allocator or a device's caching allocator
    throw fail(fmt::format("{} bytes", bytes), "out of memory");
  }
}
}  // namespace

Storage::Storage(int64_t numel, Device device)
    : data_(devices::allocate(device, numel)), numel_(numel), device_(device) {}

Storage::~Storage() { devices::release(device_, data_); }

Tensor::Tensor(const Shape& shape, Device device)
    : storage_(allocateStorage(shape, device)), shape_(shape) {}

Tensor Tensor::fromVector(const Shape& shape, const std::vector<float>& values) {
  if (static_cast<int64_t>(values.size()) != shape.numel())
    throw ShapeError("Tensor::fromVector: " + std::to_string(values.size()) + " values for shape " +
                     shape.toString() + " (needs " + std::to_string(shape.numel()) + ")");
  Tensor t(shape);
  std::copy(values.begin(), values.end(), t.data());
  return t;
}

Tensor Tensor::view(int64_t offset, const Shape& shape) const {
  if (offset < 0 || offset + shape.numel() > numel())
    throw ShapeError("Tensor::view: elements [" + std::to_string(offset) + ", " +
                     std::to_string(offset + shape.numel()) + ") are outside a tensor of " +
                     std::to_string(numel()) + " elements");
  Tensor t;
  t.storage_ = storage_;
  t.offset_ = offset_ + offset;
  t.shape_ = shape;
  return t;
}

Tensor Tensor::reshape(const Shape& shape) const {
  if (shape.numel() != numel())
    throw ShapeError("Tensor::reshape: cannot view " + shape_.toString() + " as " +
                     shape.toString());
  return view(0, shape);
}

Tensor Tensor::rows(int64_t begin, int64_t end) const {
  if (rank() == 0 || begin < 0 || end < begin || end > shape_[0])
    throw ShapeError("Tensor::rows: [" + std::to_string(begin) + ", " + std::to_string(end) +
                     ") out of range for shape " + shape_.toString());
  const int64_t rowSize = shape_[0] == 0 ? 0 : numel() / shape_[0];
  return view(begin * rowSize, shape_.withBatch(end - begin));
}

Tensor Tensor::clone() const {
  if (empty()) return {};
  Tensor t(shape_, device());
  t.copyFrom(*this);
  return t;
}

Tensor Tensor::to(Device device) const {
  if (empty()) return {};
  Tensor t(shape_, device);
  t.copyFrom(*this);
  return t;
}

void Tensor::copyFrom(const Tensor& src) {
  if (src.numel() != numel())
    throw ShapeError("Tensor::copyFrom: source " + src.shape().toString() +
                     " does not fit destination " + shape_.toString());
  if (numel() == 0) return;
  devices::copy(data(), device(), src.data(), src.device(), numel());
}

void Tensor::fill(float value) { devices::fill(data(), device(), numel(), value); }

bool Tensor::onHost() const { return devices::isHostMemory(device()); }

Tensor Tensor::toHost() const { return onHost() ? *this : to(Device::cpu()); }

std::vector<float> Tensor::toVector() const {
  std::vector<float> values(static_cast<size_t>(numel()));
  devices::copy(values.data(), Device::cpu(), data(), device(), numel());
  return values;
}

float Tensor::at(int64_t flatIndex) const {
  if (flatIndex < 0 || flatIndex >= numel())
    throw ShapeError("Tensor::at: index " + std::to_string(flatIndex) + " out of range for " +
                     shape_.toString());
  float value = 0;
  devices::copy(&value, Device::cpu(), data() + flatIndex, device(), 1);
  return value;
}

bool Tensor::allClose(const Tensor& other, float tol) const {
  if (shape_ != other.shape_) return false;
  const Tensor hostA = toHost(), hostB = other.toHost();
  const float* a = hostA.data();
  const float* b = hostB.data();
  for (int64_t i = 0; i < numel(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= tol)) return false;
  return true;
}

}  // namespace dl4cpp

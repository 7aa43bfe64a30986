#include <dl4cpp/nn/tensor/Tensor.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <new>

namespace dl4cpp {

namespace {
constexpr std::align_val_t kHostAlignment{64};

void requireHost(const Tensor& t, const char* what) {
  if (!t.empty() && !t.device().isCpu())
    throw BackendError(std::string("Tensor::") + what + ": tensor lives on " +
                       t.device().toString() + "; copy it to the host first");
}
}  // namespace

Storage::Storage(int64_t numel, Device device) : numel_(numel), device_(device) {
  if (!device.isCpu())
    throw BackendError("Storage: " + device.toString() +
                       " memory is allocated by the CUDA backend, not by host Storage");
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(numel, 1)) * sizeof(float);
  data_ = static_cast<float*>(::operator new(bytes, kHostAlignment));
  std::memset(data_, 0, bytes);
}

Storage::~Storage() { ::operator delete(data_, kHostAlignment); }

Tensor::Tensor(const Shape& shape, Device device)
    : storage_(std::make_shared<Storage>(shape.numel(), device)), shape_(shape) {}

Tensor Tensor::fromVector(const Shape& shape, const std::vector<float>& values) {
  if (static_cast<int64_t>(values.size()) != shape.numel())
    throw ShapeError("Tensor::fromVector: " + std::to_string(values.size()) +
                     " values for shape " + shape.toString() + " (needs " +
                     std::to_string(shape.numel()) + ")");
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
  requireHost(*this, "clone");
  Tensor t(shape_, device());
  std::memcpy(t.data(), data(), static_cast<size_t>(numel()) * sizeof(float));
  return t;
}

void Tensor::copyFrom(const Tensor& src) {
  requireHost(*this, "copyFrom");
  requireHost(src, "copyFrom");
  if (src.numel() != numel())
    throw ShapeError("Tensor::copyFrom: source " + src.shape().toString() +
                     " does not fit destination " + shape_.toString());
  if (numel() > 0) std::memmove(data(), src.data(), static_cast<size_t>(numel()) * sizeof(float));
}

void Tensor::fill(float value) {
  requireHost(*this, "fill");
  std::fill_n(data(), numel(), value);
}

std::vector<float> Tensor::toVector() const {
  requireHost(*this, "toVector");
  return std::vector<float>(data(), data() + numel());
}

float Tensor::at(int64_t flatIndex) const {
  requireHost(*this, "at");
  if (flatIndex < 0 || flatIndex >= numel())
    throw ShapeError("Tensor::at: index " + std::to_string(flatIndex) + " out of range for " +
                     shape_.toString());
  return data()[flatIndex];
}

bool Tensor::allClose(const Tensor& other, float tol) const {
  if (shape_ != other.shape_) return false;
  const float* a = data();
  const float* b = other.data();
  for (int64_t i = 0; i < numel(); ++i)
    if (!(std::fabs(a[i] - b[i]) <= tol)) return false;
  return true;
}

}  // namespace dl4cpp

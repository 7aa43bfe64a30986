// The one place where a device kind is mapped to its memory, its copies and its averaging, and
// where devices are discovered (Backend.cpp maps it to its ops).
#include "nn/backend/Devices.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <new>

#include "nn/backend/cpu/WeightedMean.h"
#include "nn/backend/cuda/CudaBackendFactory.h"
#include "nn/backend/cuda/CudaMemory.h"
#include "nn/core/Error.h"
#include "nn/core/HostMemory.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

int cudaDeviceCount() { return cuda::deviceCount(); }

bool isVisible(const Device& device) {
  switch (device.type) {
    case DeviceType::CPU:
      return true;
    case DeviceType::CUDA:
      return device.index >= 0 && device.index < cudaDeviceCount();
  }
  return false;
}

std::vector<Device> defaultDevices() {
  const int count = cudaDeviceCount();
  std::vector<Device> devices;
  devices.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) devices.push_back(Device::cuda(i));
  if (devices.empty()) devices.push_back(Device::cpu());
  return devices;
}

namespace devices {

namespace {
constexpr std::align_val_t kHostAlignment{64};
}  // namespace

bool isHostMemory(Device device) { return device.type == DeviceType::CPU; }

bool runsOnHostCores(Device device) { return device.type == DeviceType::CPU; }

std::optional<std::string> exceedsCapacity(Device device, uint64_t bytes) {
  // An accelerator's allocator reports its own out-of-memory (std::bad_alloc), checked at once.
  if (!isHostMemory(device) || bytes <= hostMemoryBytes()) return std::nullopt;
  return fmt::format("more than this machine's {} bytes of RAM and swap", hostMemoryBytes());
}

float* allocate(Device device, int64_t numel) {
  switch (device.type) {
    case DeviceType::CPU: {
      const size_t bytes = static_cast<size_t>(std::max<int64_t>(numel, 1)) * sizeof(float);
      auto* p = static_cast<float*>(::operator new(bytes, kHostAlignment));
      std::memset(p, 0, bytes);
      return p;
    }
    case DeviceType::CUDA:
      return cuda::allocateDevice(device.index, numel);  // zeroed; throws without CUDA
  }
  throw BackendError("allocate: unknown device type");
}

void release(Device device, float* p) {
  switch (device.type) {
    case DeviceType::CPU:
      return ::operator delete(p, kHostAlignment);
    case DeviceType::CUDA:
      return cuda::releaseDevice(device.index, p);
  }
}

void copy(float* dst, Device dstDevice, const float* src, Device srcDevice, int64_t numel) {
  if (numel == 0) return;  // the pointers of empty tensors and vectors may be null
  if (isHostMemory(dstDevice) && isHostMemory(srcDevice))
    std::memmove(dst, src, static_cast<size_t>(numel) * sizeof(float));
  else
    cuda::copyFloats(dst, dstDevice, src, srcDevice, numel);
}

void fill(float* p, Device device, int64_t numel, float value) {
  switch (device.type) {
    case DeviceType::CPU:
      std::fill_n(p, numel, value);
      return;
    case DeviceType::CUDA:
      return cuda::fillFloats(p, device.index, numel, value);
  }
}

Device averagingDevice(Device own, const std::vector<Device>& inUse) {
  if (std::all_of(inUse.begin(), inUse.end(), isHostMemory)) return Device::cpu();
  if (!isHostMemory(own)) return own;
  return *std::find_if(inUse.rbegin(), inUse.rend(), [](Device d) { return !isHostMemory(d); });
}

void averageSlice(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                  std::vector<Tensor>& destinations, int64_t begin, int64_t end, Device on) {
  switch (on.type) {
    case DeviceType::CPU: {
      auto elsewhere = [](const Tensor& t) { return !isHostMemory(t.device()); };
      if (std::any_of(buffers.begin(), buffers.end(), elsewhere) ||
          std::any_of(destinations.begin(), destinations.end(), elsewhere))
        throw BackendError(
            "averageSlice: the host can only average buffers in host memory (see "
            "devices::averagingDevice)");
      return cpu::weightedMean(buffers, examples, destinations, begin, end);
    }
    case DeviceType::CUDA:
      return cuda::averageSlice(buffers, examples, destinations, begin, end, on.index);
  }
}

void partialSumSlice(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                     int64_t total, Tensor& destination, int64_t begin, int64_t end) {
  auto elsewhere = [](const Tensor& t) { return !isHostMemory(t.device()); };
  if (std::any_of(buffers.begin(), buffers.end(), elsewhere) || elsewhere(destination))
    throw BackendError("partialSumSlice: the buffers must be in host memory");
  cpu::weightedPartialSum(buffers, examples, total, destination, begin, end);
}

}  // namespace devices
}  // namespace dl4cpp

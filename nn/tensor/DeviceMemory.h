#pragma once
// DeviceMemory: the memory operations a Tensor needs on whatever device it lives on. Declared here,
// below the backends, so that tensors depend on no backend; each device's answer is given in
// nn/backend/Devices.cpp, as for the device queries of Device.h. The rest of what dl4cpp does with
// a device (cross-device averages, where ops run) is nn/backend/Devices.h, which includes this.
#include <cstdint>
#include <optional>
#include <string>

#include "nn/tensor/Device.h"

namespace dl4cpp::devices {

// Whether host code may read and write the device's memory through a plain pointer.
bool isHostMemory(Device device);

// Why `bytes` can never be allocated on `device`, checked before trying (host memory: more than
// RAM and swap, which would otherwise end in a kill rather than an error), or nothing.
std::optional<std::string> exceedsCapacity(Device device, uint64_t bytes);
// `numel` zero-initialised floats on `device` (host memory 64-byte aligned, for AVX-512 loads).
// Throws std::bad_alloc when out of memory, BackendError for a device this build cannot use.
float* allocate(Device device, int64_t numel);
// Gives back a block from allocate().
void release(Device device, float* p);
// Copies `numel` floats between any two devices (the ranges may overlap when both are the same
// host memory). Returns when the data has arrived, ordered after work queued on the devices.
void copy(float* dst, Device dstDevice, const float* src, Device srcDevice, int64_t numel);
// Sets `numel` floats on `device` to `value`.
void fill(float* p, Device device, int64_t numel, float value);

}  // namespace dl4cpp::devices

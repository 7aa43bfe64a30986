#pragma once
// Device memory as the rest of dl4cpp sees it: allocation through the per-device caching
// allocator, copies between any two devices, fills, and the cross-device weighted average used by
// ParallelWrapper. No CUDA header is needed to call these; a build without CUDA links versions
// (CudaStub.cpp) that throw BackendError, and no CUDA tensor can exist there anyway.
#include <cstdint>
#include <vector>

#include "nn/backend/cuda/CachingAllocator.h"
#include "nn/tensor/Device.h"

namespace dl4cpp {
class Tensor;
}

namespace dl4cpp::cuda {

// `numel` zero-initialised floats on CUDA device `device`, from that device's caching allocator.
float* allocateDevice(int device, int64_t numel);
// Gives a block from allocateDevice back to its device's cache.
void releaseDevice(int device, float* p);
// The caching allocator's counters for `device` (tests; monitoring).
AllocatorStats allocatorStats(int device);

// Copies `numel` floats between any two devices (host <-> device, device <-> device). Returns when
// the data has arrived, ordered after work queued on the devices' streams.
void copyFloats(float* dst, Device dstDevice, const float* src, Device srcDevice, int64_t numel);
// Sets `numel` floats of device memory to `value`.
void fillFloats(float* p, int device, int64_t numel, float value);

// ParallelWrapper's averaging on GPUs: writes the example-weighted mean of buffers[*][begin, end)
// into every destination, exactly as ParameterAverager::average does on the host (same weights,
// same summation order, no fused multiply-add). Buffers and destinations may live on any devices;
// the sum is formed on CUDA device `device`. Copies between GPUs go peer to peer where
// cudaDeviceCanAccessPeer allows, otherwise through pinned host memory.
void averageSlice(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                  std::vector<Tensor>& destinations, int64_t begin, int64_t end, int device);

}  // namespace dl4cpp::cuda

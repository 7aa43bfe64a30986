// Device memory for Tensor and ParallelWrapper: the per-device caching allocators, copies between
// any two devices, fills, and the cross-device weighted average.
//
// Ordering. These helpers run on the legacy default stream of the device concerned. The backend's
// streams are created blocking (not cudaStreamNonBlocking), so the legacy stream orders after all
// work already queued on them and before anything queued later: a Tensor copy issued between two
// ops sees the first op's result and is seen by the second, without any event bookkeeping.
// None of this runs in the steady-state training loop (MultiLayerNetwork stages batches through
// Backend::stageBatch on the backend's own streams).
#include <cuda_runtime.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "nn/backend/cuda/CachingAllocator.h"
#include "nn/backend/cuda/CudaBackendFactory.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/CudaMemory.h"
#include "nn/backend/cuda/DeviceGuard.h"
#include "nn/backend/cuda/Launch.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cuda {

namespace {

// RawMemory of CachingAllocator for one GPU.
struct DeviceMemory {
  int device = 0;

  void* allocate(size_t bytes) {
    DeviceGuard guard(device);
    void* p = nullptr;
    if (cudaMalloc(&p, bytes) != cudaSuccess) {
      cudaGetLastError();  // out of memory is not sticky: clear it, the allocator retries or throws
      return nullptr;
    }
    return p;
  }
  void release(void* p) {
    DeviceGuard guard(device);
    cudaFree(p);  // called while trimming or at shutdown: nothing useful to do with an error
  }
  void synchronize() {
    DeviceGuard guard(device);
    DL4CPP_CUDA_CHECK(cudaDeviceSynchronize());
  }
};

using DeviceAllocator = CachingAllocator<DeviceMemory>;

DeviceAllocator& allocatorFor(int device) {
  // Deliberately never destroyed: a tensor released during static destruction still finds them,
  // at process exit the CUDA runtime may already be unloading, and the driver reclaims device
  // memory anyway.
  static auto* mutex = new std::mutex();
  static auto* allocators = new std::vector<std::unique_ptr<DeviceAllocator>>();
  const int count = deviceCount();
  if (device < 0 || device >= count)
    throw BackendError("cuda:" + std::to_string(device) + " does not exist (this machine has " +
                       std::to_string(count) + " CUDA device(s))");
  std::lock_guard<std::mutex> lock(*mutex);
  if (allocators->size() < static_cast<size_t>(count))
    allocators->resize(static_cast<size_t>(count));
  auto& slot = (*allocators)[static_cast<size_t>(device)];
  if (!slot) slot = std::make_unique<DeviceAllocator>(DeviceMemory{device});
  return *slot;
}

__global__ void fillKernel(float* p, int64_t n, float value) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) p[i] = value;
}

// mean = w * src (first contributor) or mean += w * src, without fused multiply-add so that the
// result is bit-identical to ParameterAverager's host loop.
__global__ void weightedAccumulateKernel(float* mean, const float* src, int64_t n, float w,
                                         bool first) {
  DL4CPP_GRID_STRIDE_LOOP(i, n) {
    const float term = __fmul_rn(w, src[i]);
    mean[i] = first ? term : __fadd_rn(mean[i], term);
  }
}

void synchronizeDevice(Device d) {
  if (d.isCpu()) return;
  DeviceGuard guard(d.index);
  DL4CPP_CUDA_CHECK(cudaDeviceSynchronize());
}

// A pinned host buffer per thread for copies between GPUs without peer access (grown on demand).
float* pinnedStaging(int64_t numel) {
  struct Pinned {
    float* p = nullptr;
    int64_t numel = 0;
    ~Pinned() {
      if (p) cudaFreeHost(p);
    }
  };
  thread_local Pinned staging;
  if (staging.numel < numel) {
    if (staging.p) DL4CPP_CUDA_CHECK(cudaFreeHost(staging.p));
    staging.p = nullptr;
    staging.numel = 0;
    DL4CPP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&staging.p),
                                     static_cast<size_t>(numel) * sizeof(float)));
    staging.numel = numel;
  }
  return staging.p;
}

bool peerAccess(int from, int to) {
  int can = 0;
  DL4CPP_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
  if (!can) return false;
  DeviceGuard guard(from);
  const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
  if (status == cudaErrorPeerAccessAlreadyEnabled) {
    cudaGetLastError();  // expected after the first call: clear it
  } else {
    DL4CPP_CUDA_CHECK(status);
  }
  return true;
}

// Copies between two GPUs: peer to peer when the hardware allows, otherwise through pinned host
// memory. Synchronous: returns when dst holds the data.
void copyBetweenGpus(float* dst, int dstDevice, const float* src, int srcDevice, int64_t numel) {
  const size_t bytes = static_cast<size_t>(numel) * sizeof(float);
  if (peerAccess(dstDevice, srcDevice)) {
    DL4CPP_CUDA_CHECK(cudaMemcpyPeer(dst, dstDevice, src, srcDevice, bytes));
    synchronizeDevice(Device::cuda(dstDevice));
    return;
  }
  float* staging = pinnedStaging(numel);
  {
    DeviceGuard guard(srcDevice);
    DL4CPP_CUDA_CHECK(cudaMemcpy(staging, src, bytes, cudaMemcpyDeviceToHost));
  }
  DeviceGuard guard(dstDevice);
  DL4CPP_CUDA_CHECK(cudaMemcpy(dst, staging, bytes, cudaMemcpyHostToDevice));
  DL4CPP_CUDA_CHECK(cudaDeviceSynchronize());
}

}  // namespace

float* allocateDevice(int device, int64_t numel) {
  const size_t bytes = static_cast<size_t>(std::max<int64_t>(numel, 1)) * sizeof(float);
  void* p = nullptr;
  try {
    p = allocatorFor(device).allocate(bytes);
  } catch (const std::bad_alloc&) {
    throw CudaError("cuda:" + std::to_string(device) + " is out of memory allocating " +
                    std::to_string(bytes) + " bytes");
  }
  DeviceGuard guard(device);
  DL4CPP_CUDA_CHECK(cudaMemset(p, 0, bytes));  // Tensor's contract: new tensors are zero
  return static_cast<float*>(p);
}

void releaseDevice(int device, float* p) { allocatorFor(device).release(p); }

AllocatorStats allocatorStats(int device) { return allocatorFor(device).stats(); }

void copyFloats(float* dst, Device dstDevice, const float* src, Device srcDevice, int64_t numel) {
  if (numel <= 0) return;
  const size_t bytes = static_cast<size_t>(numel) * sizeof(float);
  if (dstDevice.isCpu() && srcDevice.isCpu()) {
    std::memmove(dst, src, bytes);
    return;
  }
  if (!dstDevice.isCpu() && !srcDevice.isCpu() && dstDevice != srcDevice) {
    synchronizeDevice(srcDevice);
    synchronizeDevice(dstDevice);
    copyBetweenGpus(dst, dstDevice.index, src, srcDevice.index, numel);
    return;
  }
  // One side is the host, or both are the same GPU: one copy on that GPU's legacy stream.
  const int gpu = dstDevice.isCpu() ? srcDevice.index : dstDevice.index;
  DeviceGuard guard(gpu);
  DL4CPP_CUDA_CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDefault));
  DL4CPP_CUDA_CHECK(cudaStreamSynchronize(0));  // "returns when the data has arrived"
}

void fillFloats(float* p, int device, int64_t numel, float value) {
  if (numel <= 0) return;
  DeviceGuard guard(device);
  fillKernel<<<blocksFor(numel), kThreadsPerBlock>>>(p, numel, value);
  DL4CPP_CUDA_CHECK_LAUNCH();
  DL4CPP_CUDA_CHECK(cudaStreamSynchronize(0));
}

void averageSlice(const std::vector<Tensor>& buffers, const std::vector<int64_t>& examples,
                  std::vector<Tensor>& destinations, int64_t begin, int64_t end, int device) {
  int64_t total = 0;
  for (int64_t n : examples) total += n;
  if (total == 0 || begin >= end) return;
  const int64_t n = end - begin;
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  // Every replica's queued work (the training phase) must be finished before its buffers are read.
  for (const Tensor& b : buffers) synchronizeDevice(b.device());
  for (const Tensor& d : destinations) synchronizeDevice(d.device());

  const Device here = Device::cuda(device);
  Tensor mean(Shape{n}, here);
  Tensor incoming(Shape{n}, here);  // a contributor's slice brought to this GPU
  DeviceGuard guard(device);
  bool first = true;
  for (size_t r = 0; r < buffers.size(); ++r) {  // replica order: a fixed summation order
    if (examples[r] == 0) continue;              // no examples, no vote
    const float w =
        static_cast<float>(static_cast<double>(examples[r]) / static_cast<double>(total));
    const Device from = buffers[r].device();
    const float* src = buffers[r].data() + begin;
    if (from != here) {
      copyFloats(incoming.data(), here, src, from, n);
      src = incoming.data();
    }
    weightedAccumulateKernel<<<blocksFor(n), kThreadsPerBlock>>>(mean.data(), src, n, w, first);
    DL4CPP_CUDA_CHECK_LAUNCH();
    first = false;
  }
  DL4CPP_CUDA_CHECK(cudaStreamSynchronize(0));
  for (Tensor& d : destinations) {
    float* dst = d.data() + begin;
    if (d.device() == here)
      DL4CPP_CUDA_CHECK(cudaMemcpy(dst, mean.data(), bytes, cudaMemcpyDeviceToDevice));
    else
      copyFloats(dst, d.device(), mean.data(), here, n);
  }
  DL4CPP_CUDA_CHECK(cudaStreamSynchronize(0));
}

}  // namespace dl4cpp::cuda

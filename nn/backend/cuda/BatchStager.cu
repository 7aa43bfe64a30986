#include <cstring>

#include "nn/backend/cuda/BatchStager.h"
#include "nn/backend/cuda/CudaCheck.h"
#include "nn/backend/cuda/DeviceGuard.h"

namespace dl4cpp::cuda {

BatchStager::BatchStager(int device, cudaStream_t computeStream)
    : device_(device), compute_(computeStream) {
  DeviceGuard guard(device_);
  DL4CPP_CUDA_CHECK(cudaStreamCreate(&copy_));  // blocking: see CudaMemory.cu on ordering
  for (int s = 0; s < kSets; ++s) {
    DL4CPP_CUDA_CHECK(cudaEventCreateWithFlags(&copied_[s], cudaEventDisableTiming));
    DL4CPP_CUDA_CHECK(cudaEventCreateWithFlags(&released_[s], cudaEventDisableTiming));
  }
}

BatchStager::~BatchStager() {
  // Destructors do not throw: the calls below can only fail if the device is already broken.
  DeviceGuard guard(device_);
  cudaStreamSynchronize(copy_);
  for (auto& set : pinned_)
    for (Pinned& p : set)
      if (p.p) cudaFreeHost(p.p);
  for (int s = 0; s < kSets; ++s) {
    cudaEventDestroy(copied_[s]);
    cudaEventDestroy(released_[s]);
  }
  cudaStreamDestroy(copy_);
}

Tensor BatchStager::stageOne(const Tensor& host, int s, int t) {
  const int64_t numel = host.numel();
  const size_t bytes = static_cast<size_t>(numel) * sizeof(float);
  Pinned& pinned = pinned_[static_cast<size_t>(s)][static_cast<size_t>(t)];
  if (pinned.numel < numel) {  // grows for new, larger batches only
    if (pinned.p) DL4CPP_CUDA_CHECK(cudaFreeHost(pinned.p));
    pinned.p = nullptr;
    pinned.numel = 0;
    DL4CPP_CUDA_CHECK(cudaMallocHost(reinterpret_cast<void**>(&pinned.p), bytes));
    pinned.numel = numel;
  }
  Tensor& buffer = onDevice_[static_cast<size_t>(s)][static_cast<size_t>(t)];
  if (buffer.numel() < numel) buffer = Tensor(Shape{numel}, Device::cuda(device_));
  std::memcpy(pinned.p, host.data(), bytes);
  DL4CPP_CUDA_CHECK(cudaMemcpyAsync(buffer.data(), pinned.p, bytes, cudaMemcpyHostToDevice, copy_));
  return buffer.view(0, host.shape());
}

void BatchStager::stage(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
                        Tensor& deviceLabels) {
  DeviceGuard guard(device_);
  const int s = set_;
  set_ = (set_ + 1) % kSets;
  const size_t si = static_cast<size_t>(s);
  // pinned_[s] was last read by the copy recorded in copied_[s]: wait for it on the host (it was
  // issued two batches ago, so this normally returns at once).
  DL4CPP_CUDA_CHECK(cudaEventSynchronize(copied_[si]));
  // device buffers of set s: their last reader was queued before released_[s] was recorded.
  if (releasedRecorded_[si]) DL4CPP_CUDA_CHECK(cudaStreamWaitEvent(copy_, released_[si], 0));
  deviceFeatures = features.empty() ? Tensor() : stageOne(features, s, 0);
  deviceLabels = labels.empty() ? Tensor() : stageOne(labels, s, 1);
  DL4CPP_CUDA_CHECK(cudaEventRecord(copied_[si], copy_));
  DL4CPP_CUDA_CHECK(cudaStreamWaitEvent(compute_, copied_[si], 0));
  // Everything queued on the compute stream so far belongs to batches before this one; the next
  // stage() into the other set must wait for it, the one after that (this set again) for this.
  const size_t other = static_cast<size_t>(set_);
  DL4CPP_CUDA_CHECK(cudaEventRecord(released_[other], compute_));
  releasedRecorded_[other] = true;
}

}  // namespace dl4cpp::cuda

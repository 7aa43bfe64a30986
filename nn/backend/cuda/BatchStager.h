#pragma once
// BatchStager: brings a minibatch's host tensors (features, labels) to one GPU for the compute
// stream without stalling it. Host data is copied into pinned memory, then to the device on a
// separate copy stream; the compute stream waits on an event, never the host. Two buffer sets
// alternate, so the copy of batch i+1 may run while batch i computes:
//
//   stage(i): pinned[s] is reused only after its previous copy finished (event copied[s]);
//             the copy into device[s] waits for `released[s]`, recorded on the compute stream at
//             stage(i-1), i.e. after everything queued for batches <= i-2 (the last reader of
//             device[s]) but before batch i-1's compute: that compute overlaps this copy.
//
// Internal header (CUDA types); used by CudaBackend only.
#include <cuda_runtime.h>

#include <array>
#include <cstdint>

#include "nn/tensor/Tensor.h"

namespace dl4cpp::cuda {

class BatchStager {
 public:
  // Stages for `computeStream` on CUDA device `device` (the caller keeps the stream alive).
  BatchStager(int device, cudaStream_t computeStream);
  ~BatchStager();
  BatchStager(const BatchStager&) = delete;
  BatchStager& operator=(const BatchStager&) = delete;

  // Device copies of `features` and `labels` (host tensors; either may be empty), valid for
  // work queued on the compute stream until the next-but-one call.
  void stage(const Tensor& features, const Tensor& labels, Tensor& deviceFeatures,
             Tensor& deviceLabels);

 private:
  static constexpr int kSets = 2;
  static constexpr int kTensors = 2;  // features, labels
  struct Pinned {
    float* p = nullptr;
    int64_t numel = 0;
  };
  // Copies `host` into set s, tensor t; returns the device view.
  Tensor stageOne(const Tensor& host, int s, int t);

  int device_;
  cudaStream_t compute_;
  cudaStream_t copy_ = nullptr;
  int set_ = 0;
  std::array<std::array<Pinned, kTensors>, kSets> pinned_{};
  std::array<std::array<Tensor, kTensors>, kSets> onDevice_{};
  std::array<cudaEvent_t, kSets> copied_{};
  std::array<cudaEvent_t, kSets> released_{};
  std::array<bool, kSets> releasedRecorded_{};
};

}  // namespace dl4cpp::cuda

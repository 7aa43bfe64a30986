#pragma once
// Batch normalisation on the CPU as plain loops over NCHW (or NC) data: each channel's sums in a
// fixed order (so results do not depend on the thread count), rows of the channel's H * W values
// vectorised for the CPU level that runs (BatchNormRows-inl.h), nothing allocated once the
// threads' buffers (row results, a fused ReLU's gradient) have grown to the largest layer's need.
// A fused ReLU runs the ReLU op's own kernels on each row, so a BN with RELU computes the bits of
// a BN followed by the activation op. oneDNN's primitive for the plain layout
// (ncsp_bnorm) is slower than these loops on the sample's network (`bench_lenet_breakdown --network
// batchnorm`); its fast kernels need the blocked layout, whose reorders would cost more than they
// save.
#include <cstdint>
#include <string_view>

#include "nn/backend/cpu/CpuAlgorithm.h"
#include "nn/backend/cpu/CpuIsa.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

// The order the loops visit the rows in, one table for every pass (`batch_norm` in
// DL4CPP_CPU_ALGORITHM): channel by channel, each channel's rows in turn (a channel's data stays
// in cache between its passes), or for rows shorter than kShortBatchNormRow values example by
// example, in memory order (a channel's rows lie C * H * W values apart, and a short row is too
// few cache lines for the hardware prefetcher to run ahead of). Both reduce each channel's row
// results in the same sequence, so they give the same bits.
enum class BatchNormOrder { EXAMPLE_ROWS, CHANNEL_ROWS };
constexpr int64_t kShortBatchNormRow = 256;
struct BatchNormAlgorithm {
  std::string_view name;
  BatchNormOrder order;
  CpuIsa minIsa;
  const char* takes;
  bool (*fits)(int64_t rowLength);
  CpuAlgorithmYield<int64_t> yield{};
};
inline constexpr BatchNormAlgorithm kBatchNormAlgorithms[] = {
    {"example_rows",
     BatchNormOrder::EXAMPLE_ROWS,
     CpuIsa::Baseline,
     "every shape (chosen for rows shorter than 256 values)",
     [](int64_t) { return true; },
     {CpuIsa::Baseline, [](int64_t length) { return length >= kShortBatchNormRow; }}},
    {"channel_rows", BatchNormOrder::CHANNEL_ROWS, CpuIsa::Baseline, "every shape",
     [](int64_t) { return true; }},
};
// The order for rows of `rowLength` values (H * W; 1 for (N, C) input).
inline BatchNormOrder selectBatchNormOrder(int64_t rowLength) {
  return selectCpuAlgorithm("batch_norm", kBatchNormAlgorithms, rowLength).order;
}

// The NormalizationOps.h contract of batchNormForwardTraining / Inference / Backward; `relu` for
// the RELU activation.
void batchNormForwardTraining(const Tensor& x, const Tensor& gamma, const Tensor& beta, float eps,
                              bool relu, Tensor& y, Tensor& batchMean, Tensor& batchVariance);
void batchNormForwardInference(const Tensor& x, const Tensor& gamma, const Tensor& beta,
                               const Tensor& mean, const Tensor& variance, float eps, bool relu,
                               Tensor& y);
// dx may be empty. With `relu`, the forward pass's output is made again from x by its own loops
// (the same bits) rather than read: reading it from memory costs more than the arithmetic.
void batchNormBackward(const Tensor& x, const Tensor& dy, const Tensor& gamma, const Tensor& beta,
                       const Tensor& batchMean, const Tensor& batchVariance, float eps, bool relu,
                       Tensor& dx, Tensor& dgamma, Tensor& dbeta);

}  // namespace dl4cpp::cpu

#pragma once
// Which kernel runs windowed pooling on the CPU: one ordered table for the forward and backward
// passes together (the forward pass's kernel decides the workspace's format, which the backward
// pass reads), shared by CpuPooling.cpp and the fused convolution + pooling step. Internal to
// nn/backend/cpu/.
#include <string_view>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/CpuAlgorithm.h"
#include "nn/backend/cpu/CpuIsa.h"
#include "nn/backend/cpu/pooling/MaxPooling.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {

enum class PoolingKernel { DIRECT_MAX, ONEDNN };
struct PoolingAlgorithm {
  std::string_view name;
  PoolingKernel kernel;
  CpuIsa minIsa;
  const char* takes;  // the shapes `fits` takes, in words
  bool (*fits)(PoolingKind kind, const WindowGeometry& g);
  // y = pool(x), recording what backward needs in `workspace` (grown as needed) when training;
  // null for oneDNN, which CpuPooling.cpp runs from its primitive cache.
  void (*forward)(const Tensor& x, Tensor& y, const WindowGeometry& g, bool training,
                  Tensor& workspace);
  // dx from dy and the training forward pass's workspace; null for oneDNN.
  void (*backward)(const Tensor& dy, Tensor& dx, const WindowGeometry& g, const Tensor& workspace);
  // Where the rule passes it over for a later entry (CpuAlgorithm.h); nowhere by default.
  CpuAlgorithmYield<PoolingKind, const WindowGeometry&> yield{};
};

// MAX pooling without padding on dl4cpp's loops (MaxPooling.h), which read and write NCHW where it
// lies: oneDNN's pooling on plain layouts reorders into its blocked layout and back inside every
// call. Their vector versions run at avx2 and avx512, the scalar loop below, with the same bits.
void directMaxPoolingForward(const Tensor& x, Tensor& y, const WindowGeometry& g, bool training,
                             Tensor& workspace);
void directMaxPoolingBackward(const Tensor& dy, Tensor& dx, const WindowGeometry& g,
                              const Tensor& workspace);
inline constexpr PoolingAlgorithm kPoolingAlgorithms[] = {
    {"direct_max", PoolingKernel::DIRECT_MAX, CpuIsa::Baseline,
     "MAX pooling without padding or dilation, windows of at most 256 positions",
     [](PoolingKind kind, const WindowGeometry& g) {
       return kind == PoolingKind::MAX && directMaxPoolingApplies(g);
     },
     directMaxPoolingForward, directMaxPoolingBackward},
    {"onednn", PoolingKernel::ONEDNN, CpuIsa::Baseline, "every pooling",
     [](PoolingKind, const WindowGeometry&) { return true; }, nullptr, nullptr},
};
inline const PoolingAlgorithm& selectPooling(PoolingKind kind, const WindowGeometry& g) {
  return selectCpuAlgorithm("pooling", kPoolingAlgorithms, kind, g);
}

}  // namespace dl4cpp::cpu

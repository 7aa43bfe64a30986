// The CPU transform family (ops/TransformOps.h): loops over host memory on the shared formulas of
// TransformMath.h. The ops move or combine a tensor once per layer or vertex, so they run on the
// calling thread, except the element-wise combination and its gradient, which split their
// elements among the threads (a residual network's additions cover whole activation maps).
#include <algorithm>
#include <cstring>
#include <vector>

#include "nn/backend/TransformMath.h"
#include "nn/backend/cpu/CpuBackend.h"
#include "nn/backend/cpu/ParallelFor.h"

namespace dl4cpp::cpu {

namespace {

class CpuTransform final : public TransformImpl {
 public:
  void embeddingForward(std::span<const int64_t> index, const Tensor& w, const Tensor& b,
                        Tensor& z) override {
    const int64_t n = z.dim(0), c = w.dim(1);
    const int64_t steps = n == 0 ? 0 : static_cast<int64_t>(index.size()) / n;
    const float* table = w.data();
    const float* bias = b.empty() ? nullptr : b.data();
    float* out = z.data();
    for (int64_t e = 0; e < n; ++e)
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = index[static_cast<size_t>(e * steps + t)];
        for (int64_t k = 0; k < c; ++k)
          out[(e * c + k) * steps + t] =
              row < 0 ? 0.0f : table[row * c + k] + (bias != nullptr ? bias[k] : 0.0f);
      }
  }

  void embeddingBackward(std::span<const int64_t> index, const Tensor& dz, Tensor& dw,
                         Tensor& db) override {
    const int64_t n = dz.dim(0), c = dw.dim(1);
    const int64_t steps = n == 0 ? 0 : static_cast<int64_t>(index.size()) / n;
    float* table = dw.data();
    std::fill(table, table + dw.numel(), 0.0f);
    float* bias = db.empty() ? nullptr : db.data();
    if (bias != nullptr) std::fill(bias, bias + db.numel(), 0.0f);
    const float* g = dz.data();
    for (int64_t e = 0; e < n; ++e)
      for (int64_t t = 0; t < steps; ++t) {
        const int64_t row = index[static_cast<size_t>(e * steps + t)];
        if (row < 0) continue;
        for (int64_t k = 0; k < c; ++k) {
          const float gk = g[(e * c + k) * steps + t];
          table[row * c + k] += gk;
          if (bias != nullptr) bias[k] += gk;
        }
      }
  }

  void copyBlocks(const Tensor& src, int64_t srcOffset, int64_t srcStride, Tensor& dst,
                  int64_t dstOffset, int64_t dstStride, int64_t block, int64_t count) override {
    if (block == 0) return;
    const float* from = src.data() + srcOffset;
    float* to = dst.data() + dstOffset;
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(to + i * dstStride, from + i * srcStride,
                  static_cast<size_t>(block) * sizeof(float));
  }

  void combineForward(CombineOp op, std::span<const Tensor> xs, Tensor& y) override {
    const std::vector<const float*>& inputs = pointers(xs);
    const auto count = static_cast<int>(inputs.size());
    const float* const* in = inputs.data();
    float* out = y.data();
    // y may be the first input (a gradient summed in place); if it is a later one, folding
    // whole arrays would overwrite it before it is read: then element by element.
    const bool laterAlias = std::find(inputs.begin() + 1, inputs.end(), out) != inputs.end();
    parallelRanges(y.numel(), [=](int64_t begin, int64_t end) {
      if (laterAlias) {
        for (int64_t i = begin; i < end; ++i) out[i] = combineElement(op, in, count, i);
      } else {
        combineRange(op, in, count, out, begin, end);
      }
    });
  }

  void combineBackward(CombineOp op, std::span<const Tensor> xs, const Tensor& y, const Tensor& dy,
                       std::span<Tensor> dxs) override {
    const std::vector<const float*>& inputs = pointers(xs);
    const auto count = static_cast<int>(inputs.size());
    const float* const* in = inputs.data();
    const float* out = y.data();
    const float* g = dy.data();
    for (int k = 0; k < count; ++k) {
      if (dxs[static_cast<size_t>(k)].empty()) continue;
      float* dx = dxs[static_cast<size_t>(k)].data();
      parallelRanges(y.numel(), [=](int64_t begin, int64_t end) {
        switch (op) {
          case CombineOp::ADD:
            std::copy(g + begin, g + end, dx + begin);
            break;
          case CombineOp::SUBTRACT:
          case CombineOp::AVERAGE: {
            const float factor = combineGradientElement(op, in, count, k, 0, 0.0f, 1.0f);
            for (int64_t i = begin; i < end; ++i) dx[i] = g[i] * factor;
            break;
          }
          default:
            for (int64_t i = begin; i < end; ++i)
              dx[i] = combineGradientElement(op, in, count, k, i, out[i], g[i]);
        }
      });
    }
  }

  void scaleShift(const Tensor& x, float scale, float shift, Tensor& y) override {
    const float* in = x.data();
    float* out = y.data();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = scale * in[i] + shift;
  }

  void l2NormalizeForward(const Tensor& x, double eps, Tensor& y) override {
    const int64_t n = x.rank() == 0 ? 0 : x.dim(0), size = n == 0 ? 0 : x.numel() / n;
    for (int64_t e = 0; e < n; ++e) {
      const float* xe = x.data() + e * size;
      float* ye = y.data() + e * size;
      const auto inverse = static_cast<float>(1.0 / l2Denominator(sumOfSquares(xe, size), eps));
      for (int64_t i = 0; i < size; ++i) ye[i] = xe[i] * inverse;
    }
  }

  void l2NormalizeBackward(const Tensor& x, double eps, const Tensor& dy, Tensor& dx) override {
    const int64_t n = x.rank() == 0 ? 0 : x.dim(0), size = n == 0 ? 0 : x.numel() / n;
    for (int64_t e = 0; e < n; ++e) {
      const float* xe = x.data() + e * size;
      const float* ge = dy.data() + e * size;
      float* de = dx.data() + e * size;
      double dot = 0;
      for (int64_t i = 0; i < size; ++i) dot += double(ge[i]) * xe[i];
      const double squares = sumOfSquares(xe, size);
      for (int64_t i = 0; i < size; ++i)
        de[i] = l2NormalizeGradient(squares, dot, eps, xe[i], ge[i]);
    }
  }

 private:
  // combineElement's fold over [begin, end) as loops over arrays the compiler vectorises: the same
  // operations in the same order, so the same values. out may be in[0].
  static void combineRange(CombineOp op, const float* const* in, int count, float* out,
                           int64_t begin, int64_t end) {
    // In blocks that stay in the L1 cache between the copy and the folds: one pass over memory.
    constexpr int64_t kBlock = 2048;
    for (int64_t b = begin; b < end; b += kBlock)
      combineBlock(op, in, count, out, b, std::min(end, b + kBlock));
  }
  static void combineBlock(CombineOp op, const float* const* in, int count, float* out,
                           int64_t begin, int64_t end) {
    if (in[0] != out) std::copy(in[0] + begin, in[0] + end, out + begin);
    for (int k = 1; k < count; ++k) {
      const float* x = in[k];
      switch (op) {
        case CombineOp::ADD:
        case CombineOp::AVERAGE:
          for (int64_t i = begin; i < end; ++i) out[i] += x[i];
          break;
        case CombineOp::SUBTRACT:
          for (int64_t i = begin; i < end; ++i) out[i] -= x[i];
          break;
        case CombineOp::PRODUCT:
          for (int64_t i = begin; i < end; ++i) out[i] *= x[i];
          break;
        case CombineOp::MAX:
          for (int64_t i = begin; i < end; ++i) out[i] = out[i] < x[i] ? x[i] : out[i];
          break;
      }
    }
    if (op == CombineOp::AVERAGE) {
      const float inverse = 1.0f / static_cast<float>(count);
      for (int64_t i = begin; i < end; ++i) out[i] *= inverse;
    }
  }

  // The inputs' data, in a vector kept between calls (no allocation per residual addition).
  const std::vector<const float*>& pointers(std::span<const Tensor> xs) {
    pointers_.clear();
    for (const Tensor& x : xs) pointers_.push_back(x.data());
    return pointers_;
  }

  static double sumOfSquares(const float* x, int64_t size) {
    double s = 0;
    for (int64_t i = 0; i < size; ++i) s += double(x[i]) * x[i];
    return s;
  }

  std::vector<const float*> pointers_;
};

}  // namespace

std::unique_ptr<TransformImpl> makeCpuTransform(CpuBackend& core) {
  (void)core;
  return std::make_unique<CpuTransform>();
}

}  // namespace dl4cpp::cpu

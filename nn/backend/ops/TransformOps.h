#pragma once
// The transform family: ops that gather, copy and combine whole tensors — table lookups
// (embeddings), strided block copies, the element-wise combination of several tensors, scaling
// with a shift, per-example L2 normalisation: what the embedding layers and the graph vertices run
// on. TransformImpl is what a device implements (cpu/CpuTransform.cpp, cuda/CudaTransform.cu);
// TransformOps is what layers and vertices call, through Backend. Index arrays are host memory.
#include <cstdint>
#include <span>

#include "nn/backend/ops/OpDispatch.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

// How combineForward joins its inputs (DL4J's ElementWiseVertex.Op): x0 + x1 + ..., x0 - x1
// (two inputs), x0 * x1 * ..., their mean, their maximum.
enum class CombineOp { ADD, SUBTRACT, PRODUCT, AVERAGE, MAX };

class TransformImpl {
 public:
  virtual ~TransformImpl() = default;
  // z (N, C, T) (or (N, C) for T = 1) = W[index[e T + t], :] + b at every example e and step t,
  // for W (rows, C) and b (C) or empty; 0 where the index is -1. index: N T entries, each -1 or a
  // row of W (the caller checks them).
  virtual void embeddingForward(std::span<const int64_t> index, const Tensor& w, const Tensor& b,
                                Tensor& z) = 0;
  // dw (rows, C) = for each row, the sum of dz[e, :, t] over the (e, t) whose index is that row;
  // db (C, when not empty) = the sum over every (e, t) with an index >= 0. Both overwritten; the
  // sums run in (e, t) order on every device.
  virtual void embeddingBackward(std::span<const int64_t> index, const Tensor& dz, Tensor& dw,
                                 Tensor& db) = 0;
  // For i in [0, count): dst[dstOffset + i dstStride, + block) = src[srcOffset + i srcStride, +
  // block): `count` blocks of `block` values (concatenation along features, subsets, stacking).
  // The ranges must lie within the tensors; with several blocks, each stride is at least `block`.
  virtual void copyBlocks(const Tensor& src, int64_t srcOffset, int64_t srcStride, Tensor& dst,
                          int64_t dstOffset, int64_t dstStride, int64_t block, int64_t count) = 0;
  // y = the inputs (equal element counts) joined by `op`, element by element, left to right. y
  // may alias an input (a gradient summed in place).
  virtual void combineForward(CombineOp op, std::span<const Tensor> xs, Tensor& y) = 0;
  // dxs[k] = the gradient reaching xs[k] from dy, the gradient of combineForward's y (overwritten;
  // an empty dxs[k] is skipped). PRODUCT multiplies the other inputs again (an input may hold
  // zeros); MAX gives the gradient to the first input holding the maximum.
  virtual void combineBackward(CombineOp op, std::span<const Tensor> xs, const Tensor& y,
                               const Tensor& dy, std::span<Tensor> dxs) = 0;
  // y = scale x + shift (y may alias x).
  virtual void scaleShift(const Tensor& x, float scale, float shift, Tensor& y) = 0;
  // y = x / max(||x_e||, eps) for each example e (dimension 0), the norm summed in double.
  virtual void l2NormalizeForward(const Tensor& x, double eps, Tensor& y) = 0;
  // dx = the gradient reaching x from dy: g / r - x (g . x) / r^3 with r = ||x_e|| > eps, g / eps
  // where the norm is clamped.
  virtual void l2NormalizeBackward(const Tensor& x, double eps, const Tensor& dy, Tensor& dx) = 0;
};

// The checks TransformOps makes before any device runs an op (ShapeError naming the op).
namespace detail {
void checkEmbedding(std::span<const int64_t> index, const Tensor& table, const Tensor& bias,
                    const Tensor& values, const char* op);
void checkBlocks(const Tensor& src, int64_t srcOffset, int64_t srcStride, const Tensor& dst,
                 int64_t dstOffset, int64_t dstStride, int64_t block, int64_t count);
void checkCombine(std::span<const Tensor> xs, const Tensor& y, const char* op);
void checkCombineGradients(std::span<const Tensor> xs, const Tensor& dy, std::span<Tensor> dxs);
void checkSameSize(const Tensor& x, const Tensor& y, const char* op);
}  // namespace detail

// Every op checks its arguments here, once for every device; the devices may assume them.
class TransformOps : protected OpFamily<TransformImpl> {
 public:
  void embeddingForward(std::span<const int64_t> index, const Tensor& w, const Tensor& b,
                        Tensor& z) {
    detail::checkEmbedding(index, w, b, z, "embeddingForward");
    run(OpPhase::FORWARD, [&] { impl().embeddingForward(index, w, b, z); });
  }
  void embeddingBackward(std::span<const int64_t> index, const Tensor& dz, Tensor& dw, Tensor& db) {
    detail::checkEmbedding(index, dw, db, dz, "embeddingBackward");
    run(OpPhase::BACKWARD_WEIGHTS, [&] { impl().embeddingBackward(index, dz, dw, db); });
  }
  void copyBlocks(const Tensor& src, int64_t srcOffset, int64_t srcStride, Tensor& dst,
                  int64_t dstOffset, int64_t dstStride, int64_t block, int64_t count) {
    detail::checkBlocks(src, srcOffset, srcStride, dst, dstOffset, dstStride, block, count);
    run(OpPhase::OTHER, [&] {
      impl().copyBlocks(src, srcOffset, srcStride, dst, dstOffset, dstStride, block, count);
    });
  }
  void combineForward(CombineOp op, std::span<const Tensor> xs, Tensor& y) {
    detail::checkCombine(xs, y, "combineForward");
    run(OpPhase::FORWARD, [&] { impl().combineForward(op, xs, y); });
  }
  void combineBackward(CombineOp op, std::span<const Tensor> xs, const Tensor& y, const Tensor& dy,
                       std::span<Tensor> dxs) {
    detail::checkCombine(xs, y, "combineBackward");
    detail::checkCombineGradients(xs, dy, dxs);
    run(OpPhase::BACKWARD_DATA, [&] { impl().combineBackward(op, xs, y, dy, dxs); });
  }
  void scaleShift(const Tensor& x, float scale, float shift, Tensor& y) {
    detail::checkSameSize(x, y, "scaleShift");
    run(OpPhase::OTHER, [&] { impl().scaleShift(x, scale, shift, y); });
  }
  void l2NormalizeForward(const Tensor& x, double eps, Tensor& y) {
    detail::checkSameSize(x, y, "l2NormalizeForward");
    run(OpPhase::FORWARD, [&] { impl().l2NormalizeForward(x, eps, y); });
  }
  void l2NormalizeBackward(const Tensor& x, double eps, const Tensor& dy, Tensor& dx) {
    detail::checkSameSize(x, dy, "l2NormalizeBackward");
    detail::checkSameSize(x, dx, "l2NormalizeBackward");
    run(OpPhase::BACKWARD_DATA, [&] { impl().l2NormalizeBackward(x, eps, dy, dx); });
  }
};

}  // namespace dl4cpp

#include "nn/backend/ops/TransformOps.h"

#include <string>

#include "nn/core/Error.h"

namespace dl4cpp::detail {

namespace {

std::string sizes(int64_t a, int64_t b) { return std::to_string(a) + " and " + std::to_string(b); }

}  // namespace

void checkEmbedding(std::span<const int64_t> index, const Tensor& table, const Tensor& bias,
                    const Tensor& values, const char* op) {
  const int64_t columns = table.rank() == 2 ? table.dim(1) : -1;
  if (values.rank() < 2 || values.dim(1) != columns || columns <= 0 ||
      values.numel() != static_cast<int64_t>(index.size()) * columns ||
      (!bias.empty() && bias.numel() != columns))
    throw ShapeError(std::string(op) + ": " + std::to_string(index.size()) + " indices, table " +
                     table.shape().toString() + ", bias " + bias.shape().toString() +
                     " and values " + values.shape().toString() + " do not fit together");
  for (int64_t i : index)
    if (i < -1 || i >= table.dim(0))
      throw ShapeError(std::string(op) + ": index " + std::to_string(i) + " outside a table of " +
                       std::to_string(table.dim(0)) + " rows");
}

void checkBlocks(const Tensor& src, int64_t srcOffset, int64_t srcStride, const Tensor& dst,
                 int64_t dstOffset, int64_t dstStride, int64_t block, int64_t count) {
  // Blocks one after another, not overlapping (stride >= block when there are several).
  auto fits = [&](const Tensor& t, int64_t offset, int64_t stride) {
    return count == 0 || block == 0 ||
           (offset >= 0 && (count == 1 || stride >= block) &&
            offset + (count - 1) * stride + block <= t.numel());
  };
  if (block < 0 || count < 0 || !fits(src, srcOffset, srcStride) ||
      !fits(dst, dstOffset, dstStride))
    throw ShapeError(
        "copyBlocks: " + std::to_string(count) + " blocks of " + std::to_string(block) +
        " from offset " + std::to_string(srcOffset) + " stride " + std::to_string(srcStride) +
        " of " + src.shape().toString() + " to offset " + std::to_string(dstOffset) + " stride " +
        std::to_string(dstStride) + " of " + dst.shape().toString() + " leave a tensor");
}

void checkCombine(std::span<const Tensor> xs, const Tensor& y, const char* op) {
  if (xs.empty()) throw ShapeError(std::string(op) + ": no inputs");
  for (const Tensor& x : xs)
    if (x.numel() != y.numel())
      throw ShapeError(std::string(op) + ": an input of " + x.shape().toString() +
                       " for an output of " + y.shape().toString());
}

void checkCombineGradients(std::span<const Tensor> xs, const Tensor& dy, std::span<Tensor> dxs) {
  if (dxs.size() != xs.size())
    throw ShapeError("combineBackward: " +
                     sizes(static_cast<int64_t>(dxs.size()), static_cast<int64_t>(xs.size())) +
                     " gradients and inputs");
  checkSameSize(xs[0], dy, "combineBackward");
  for (const Tensor& dx : dxs)
    if (!dx.empty()) checkSameSize(xs[0], dx, "combineBackward");
}

void checkSameSize(const Tensor& x, const Tensor& y, const char* op) {
  if (x.numel() != y.numel())
    throw ShapeError(std::string(op) + ": " + x.shape().toString() + " and " +
                     y.shape().toString() + " differ in size");
}

}  // namespace dl4cpp::detail

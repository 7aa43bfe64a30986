#pragma once
// What the Winograd kernel files (WinogradConvolution.cpp, WinogradWeightGradient.cpp,
// WinogradImageLanes.cpp) share at every level: each pass's plan, the weight transforms and the
// checks (WinogradPlan.cpp; the kernel files are compiled once per level, so what all levels use
// lives here).
#include <algorithm>
#include <cstdint>

#include "nn/backend/OpTypes.h"
#include "nn/backend/cpu/Activations.h"
#include "nn/backend/cpu/ParallelFor.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp::cpu {
namespace winograd {

// Tiles are padded to this many lanes (the widest level's vector) wherever a vector may run past
// the last tile of a row or item.
inline constexpr int64_t kMaxLanes = 16;
// Tiles per work item the planner aims at, so that an item's transformed input and products
// (positions x channels x tiles, both) stay within a core's L2 for 64 channels: 32 of F(4x4, 3x3)
// (36 positions each). The weight gradient's items hold V and dM and end in one reduction per
// position, input and output channel, which wants them as large as the same footprint allows: 96
// tiles.
inline constexpr int64_t kTargetTilesPerItem3x3 = 32;
inline constexpr int64_t kTargetGradientTilesPerItem3x3 = 96;

constexpr int64_t roundUp(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// The passes on Plan run F(4x4, 3x3) (2.25 multiplications per output and input channel where
// F(2x2, 3x3) would have 4, and fewer transformed values per output): tiles of 4x4 outputs from
// 6x6 patches. The transforms take vectors of consecutive tiles across tile rows, however narrow
// the rows: VGG's 14x14 planes have rows of 4 tiles. (5x5 convolutions run F(4x4, 5x5) with images
// in the lanes: LanePlan below.)
inline constexpr int kKernel = 3;
inline constexpr int kTile = 4;
inline constexpr int kPatch = kKernel + kTile - 1;

// Convolutions with 5x5 kernels run F(4x4, 5x5) with images in the lanes (LanePlan below), every
// pass; 3x3 ones run on Plan.
inline bool imagesInLanes(const WindowGeometry& g) { return g.kernelH == 5; }

// One pass's geometry: a forward convolution with a 3x3 window of
// `inChannels` planes of inH x inW into `outChannels` planes of outH x outW, the input padded by
// padTop rows and padLeft columns (the other sides read zeros wherever a tile reaches past the
// input). Each tile is tile() x tile() outputs from a patch() x patch() input patch.
struct Plan {
  int64_t images, inChannels, inH, inW, outChannels, outH, outW, padTop, padLeft;
  int64_t tilesH, tilesW;  // tiles per image
  int64_t tileRowsPerItem, itemsPerImage;
  int64_t imagesPerItem;  // the weight gradient's items of small images: whole images, several
  int64_t tileStride;     // floats from one channel's (or position's) tiles to the next in scratch
  int64_t paddedW;        // the zero-padded input rows an item transforms
  int64_t tile() const { return kTile; }
  int64_t patch() const { return kPatch; }
  // Transformed tiles have patch() x patch() positions; each position's products are one matrix
  // product.
  int64_t positions() const { return patch() * patch(); }
  int64_t paddedRows() const { return tile() * tileRowsPerItem + kKernel - 1; }
  // One channel's row transforms (Bᵀ along each padded row) are kept as patch() x tile planes, one
  // per patch column and padded row modulo the tile, of (tileRowsPerItem + ceil((kKernel - 1) /
  // tile)) rows of tilesW tiles; each plane has a vector's slack after it.
  int64_t rowTransformPlane() const {
    return (tileRowsPerItem + (kKernel - 1 + tile() - 1) / tile()) * tilesW + kMaxLanes;
  }
  int64_t rowTransformFloats() const { return tile() * patch() * rowTransformPlane(); }
  // Floats from one position's transformed tiles (or products) to the next: a cache line more than
  // the channels' tiles, since with power-of-two channel counts those are a multiple of 2 KB, and
  // the 16 or 36 positions one vector of tiles stores to would all fall in one or two sets of the
  // L1 cache.
  int64_t transformedPositionStride() const { return inChannels * tileStride + kMaxLanes; }
  int64_t productPositionStride() const { return outChannels * tileStride + kMaxLanes; }
  int64_t transformedFloats() const { return positions() * transformedPositionStride(); }
  int64_t productFloats() const { return positions() * productPositionStride(); }
  int64_t threadFloats() const {
    return 2 * paddedRows() * paddedW + rowTransformFloats() + transformedFloats() +
           productFloats();
  }
  int64_t weightFloats() const { return positions() * inChannels * outChannels; }

  // The weight gradient: its dM [position][out][tile] takes the products' place; the images'
  // groups of imagesPerItem are summed in chunks (sumInChunks), each chunk's part of dU
  // [position][out][in] and of the bias gradient (padded to whole vectors) on its own.
  int64_t groups() const { return (images + imagesPerItem - 1) / imagesPerItem; }
  int64_t paddedOutChannels() const { return roundUp(outChannels, kMaxLanes); }
  int64_t gradientPartFloats() const { return weightFloats() + paddedOutChannels(); }
};

// F(4x4, 5x5) with images in the lanes (WinogradImageLanes.cpp): the 5x5 passes. Each
// vector holds one tile of `lanes` consecutive images (a group), so that the transforms run on
// whole vectors whatever the image size: LeNet's 8x8 outputs are 2x2 tiles of 4x4, which as vectors
// of tiles along rows would fill an eighth of a 16-lane vector. Each tile is computed from the 8x8
// input patch around it, 64 positions: 4 multiplications per output and input channel where
// F(2x2, 5x5) has 9 and a direct convolution 25.
inline constexpr int64_t kLaneTile = 4, kLanePatch = 8, kLanePositions = kLanePatch * kLanePatch;
// Tiles per item: an item is one tile row of a group, in chunks of this many tiles whose
// transformed inputs V [position][in][tile][lane] and products M [position][out][tile][lane] stay
// in a core's L2 (LeNet's second convolution: 82 KB of V and 205 KB of M per tile at 16 lanes).
inline constexpr int64_t kLaneTilesPerChunk = 2;

struct LanePlan {
  int64_t lanes;  // images per group: the running level's vector width
  int64_t images, inChannels, inH, inW, outChannels, outH, outW, padTop, padLeft;
  int64_t tilesH, tilesW, tilesPerChunk;
  int64_t groups() const { return (images + lanes - 1) / lanes; }
  int64_t inImage() const { return inChannels * inH * inW; }
  int64_t outImage() const { return outChannels * outH * outW; }
  // Floats from one position's V (or M) to the next: a cache line more than its channels' tiles,
  // so that a tile's 64 positions do not fall in a few sets of the L1 cache.
  int64_t transformedStride() const { return inChannels * tilesPerChunk * lanes + kMaxLanes; }
  int64_t productStride() const { return outChannels * tilesPerChunk * lanes + kMaxLanes; }
  // Per thread: one input channel's patch of a tile (64 vectors), V and M of a chunk.
  int64_t threadFloats() const {
    return kLanePositions * (lanes + transformedStride() + productStride());
  }
  int64_t weightFloats() const { return kLanePositions * inChannels * outChannels; }
  // Backward data: each group's input gradient is summed with images in the lanes in rows of
  // adjointWidth() pixels, adjointRows() per channel: every tile's patch, and the input with its
  // padding on the top and left, the last pixels of a row rounded up to a vector.
  int64_t adjointRows() const {
    return std::max(kLaneTile * tilesH + kLanePatch - kLaneTile, padTop + inH);
  }
  int64_t adjointWidth() const {
    return std::max(kLaneTile * tilesW + kLanePatch - kLaneTile, padLeft + roundUp(inW, lanes));
  }
  // Per thread: a patch, dM (output channels) and dV (input channels) of a chunk, and the group's
  // input gradient.
  int64_t adjointThreadFloats() const {
    return threadFloats() + inChannels * adjointRows() * adjointWidth() * lanes;
  }
  // The weight gradient sums dU [position][in][out] with output channels in the lanes, padded to
  // whole vectors: per position, V (input channels x a chunk's tiles of each image) times dMᵀ
  // (the same tiles x output channels).
  int64_t paddedOutChannels() const { return roundUp(outChannels, lanes); }
  // dMᵀ [position][tile][image][out] of a chunk, a cache line more than its tiles apart (as V).
  int64_t gradientPositionStride() const {
    return tilesPerChunk * lanes * paddedOutChannels() + kMaxLanes;
  }
  // One image's dy rows of a tile row transposed to [pixel][out], in whole vectors of pixels.
  int64_t gradientRowFloats() const {
    return roundUp(kLaneTile * outW, lanes) * paddedOutChannels();
  }
  // Per thread: a patch, V and dMᵀ of a chunk, and one image's transposed dy rows.
  int64_t gradientThreadFloats() const {
    return kLanePositions * (lanes + transformedStride() + gradientPositionStride()) +
           gradientRowFloats();
  }
  // A chunk's part of dU and of the bias gradient (the images are summed in chunks of groups).
  int64_t gradientPartFloats() const {
    return (kLanePositions * inChannels + 1) * paddedOutChannels();
  }
};
LanePlan lanePlan(const Shape& x, const Shape& w, const WindowGeometry& g);

// Per thread: the item's padded input rows (two channels' worth), one channel's row transforms,
// its transformed tiles V [position][in][tile] and its products M [position][out][tile]. Before
// them, shared: the transformed weights U [position][in][out].
struct ItemScratch {
  float* padded;
  float* rowTransforms;
  float* transformed;
  float* products;
};

// The 3x3 passes' plans.
// Backward data at 3x3 runs as a forward pass over dy (O input channels, C outputs, padding
// kernel - 1 - p). The weight gradient's items are several whole images where those are small,
// larger with tiles in the lanes: each then ends in reductions of vectors of sums, one per
// (position, output, input channel), whatever its tile count.
Plan forwardPlan(const Shape& x, const Shape& w, const WindowGeometry& g);
Plan backwardDataPlan(const Shape& dx, const Shape& w, const WindowGeometry& g);
Plan gradientPlan(const Shape& x, const Shape& dw, const WindowGeometry& g);

// The weights a pass multiplies by: the forward pass's, the forward pass over dy's (backward data
// with tiles of dx: w turned by 180 degrees, input and output channels swapped), or the forward
// pass's transposed (its adjoint: backward data with the forward pass's tiles).
enum class WeightsFor { Forward, ForwardOverGradient, Adjoint };

// U = G g Gᵀ of every weight plane, into u[position][in][out]: g = w[out][in] (Forward), or
// w[in][out] turned by 180 degrees (ForwardOverGradient) or not (Adjoint).
void transformWeights(const Tensor& w, WeightsFor pass, float* u);
// The same for F(4x4, 5x5)'s 64 positions (the passes with images in the lanes): Forward or
// Adjoint.
void transformLaneWeights(const Tensor& w, WeightsFor pass, float* u);

// dW = Gᵀ dU G of every weight plane, from the chunks' summed part of dU (Plan's
// gradientPartFloats: [position][out][in]).
void weightsFromTransformed(const float* du, const Plan& p, Tensor& dw);
// The same for F(4x4, 5x5), from dU [position][in][padded out] (LanePlan's gradientPartFloats).
void laneWeightsFromTransformed(const float* du, const LanePlan& p, Tensor& dw);

// The weight gradients sum a batch's groups of images in at most kMaxChunks chunks of consecutive
// groups, each chunk's part (partFloats) on its own, the parts then added in chunk order: a split
// that depends on the batch (and the level's lanes) only, so that the result does not depend on
// the thread count.
inline constexpr int64_t kMaxChunks = 16;
struct Chunks {
  int64_t count, groupsPerChunk;
};
inline Chunks chunksOf(int64_t groups) {
  const int64_t perChunk = (groups + kMaxChunks - 1) / kMaxChunks;
  return {(groups + perChunk - 1) / perChunk, perChunk};
}
// sumGroup(group, thread, part) for every group into its chunk's part of `parts` (zeroed first, on
// the thread that adds into it, so that it is in that thread's cache), chunks in parallel; then the
// parts added in chunk order into the first.
template <class SumGroup>
void sumInChunks(int64_t groups, int64_t partFloats, float* parts, const SumGroup& sumGroup) {
  const Chunks chunks = chunksOf(groups);
  parallelForOnThreads(chunks.count, [&](int64_t chunk, int thread) {
    float* part = parts + chunk * partFloats;
    std::fill(part, part + partFloats, 0.0f);
    const int64_t last = std::min(groups, (chunk + 1) * chunks.groupsPerChunk);
    for (int64_t group = chunk * chunks.groupsPerChunk; group < last; ++group)
      sumGroup(group, thread, part);
  });
  parallelRanges(partFloats, [&](int64_t begin, int64_t end) {
    for (int64_t chunk = 1; chunk < chunks.count; ++chunk) {
      const float* part = parts + chunk * partFloats;
      for (int64_t i = begin; i < end; ++i) parts[i] += part[i];
    }
  });
}

// A BackendError naming `pass` unless the kernels run (winogradConvolutionSupported) and w is the
// window's kernel.
void checkSupported(const WindowGeometry& g, const Shape& w, const char* pass);

// The 5x5 passes with images in the lanes (WinogradImageLanes.cpp), each on the forward pass's
// LanePlan, `scratch` as the function before each sizes it. Forward alone (f on each item's output
// rows) or with MAX pooling (each group's output in a per-thread buffer, f and the pooling there,
// as winogradConvolutionMaxPoolingForward says); backward data as the forward pass's adjoint,
// groups in parallel; the weight gradient with the groups summed in chunks (sumInChunks).
int64_t laneForwardScratchFloats(const LanePlan& p, int threads);
void runLaneForward(const LanePlan& p, const Tensor& x, const Tensor& w, const float* bias,
                    float* y, float* scratch, const FusedActivation& f);
int64_t laneMaxPoolingForwardScratchFloats(const LanePlan& p, int threads);
void runLaneMaxPoolingForward(const LanePlan& p, const Tensor& x, const Tensor& w,
                              const float* bias, Tensor& pooled, const FusedActivation& f,
                              const WindowGeometry& poolG, uint8_t* argmax, float* scratch);
int64_t laneBackwardDataScratchFloats(const LanePlan& p, int threads);
void runLaneBackwardData(const LanePlan& p, const Tensor& dy, const Tensor& w, Tensor& dx,
                         float* scratch);
int64_t laneBackwardWeightsScratchFloats(const LanePlan& p, int threads);
void runLaneBackwardWeights(const LanePlan& p, const Tensor& x, const Tensor& dy, Tensor& dw,
                            Tensor& db, float* scratch);

}  // namespace winograd
}  // namespace dl4cpp::cpu

#pragma once
// The work plan WinogradConvolution.cpp's kernels share at every level (that file is compiled once
// per level, so what all levels use lives here).
#include <cstdint>

namespace dl4cpp::cpu {
namespace winograd {

// Transformed tiles have 4x4 positions; each position's products are one matrix product.
inline constexpr int64_t kPositions = 16;
// Tiles are padded to this many lanes (the widest level's vector) wherever a vector may run past
// the last tile of a row or item.
inline constexpr int64_t kMaxLanes = 16;
// Tiles per work item the planner aims at: an item's transformed input and products (16 positions
// x channels x tiles, both) then stay within a core's L2 for 64 channels.
inline constexpr int64_t kTargetTilesPerItem = 64;
inline constexpr int64_t kTargetGradientTilesPerItem = 192;

constexpr int64_t roundUp(int64_t n, int64_t to) { return (n + to - 1) / to * to; }

// One pass's geometry: a forward convolution of `inChannels` planes of inH x inW into
// `outChannels` planes of outH x outW, the input padded by padTop rows and padLeft columns (the
// other sides read zeros wherever a tile reaches past the input).
struct Plan {
  int64_t images, inChannels, inH, inW, outChannels, outH, outW, padTop, padLeft;
  int64_t tilesH, tilesW;  // tiles per image: 2x2 outputs each
  int64_t tileRowsPerItem, itemsPerImage;
  int64_t imagesPerItem;  // the weight gradient's items of small images: whole images, several
  int64_t tileStride;     // floats from one channel's (or position's) tiles to the next in scratch
  int64_t paddedW;        // the zero-padded input rows an item transforms: 2 tile rows + 2 of them
  int64_t paddedRows() const { return 2 * tileRowsPerItem + 2; }
  int64_t transformedFloats() const { return kPositions * inChannels * tileStride; }
  int64_t productFloats() const { return kPositions * outChannels * tileStride; }
  int64_t threadFloats() const {
    return 2 * paddedRows() * paddedW + transformedFloats() + productFloats();
  }
  int64_t weightFloats() const { return kPositions * inChannels * outChannels; }
};

// Per thread: the item's padded input rows (two channels' worth), its transformed tiles V
// [position][in][tile] and its products M [position][out][tile]. Before them, shared: the
// transformed weights U [position][in][out].
struct ItemScratch {
  float* padded;
  float* transformed;
  float* products;
};

}  // namespace winograd
}  // namespace dl4cpp::cpu

#pragma once
// Helpers for the model-file tests: small networks and data, and an independent reading of the
// file layout of docs/model-format.md (its own CRC32), so tests can find, corrupt and rebuild
// sections without trusting the code under test.
#include <dl4cpp/dl4cpp.h>

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "nn/util/ModelSerializer.h"

namespace testutil {

// A small convolutional network touching every layer type: 6x6x1 images -> conv 3x3 (2) ->
// max pool 2x2 -> dense 5 -> softmax 3.
inline dl4cpp::MultiLayerConfiguration smallConvNet(const dl4cpp::UpdaterParams& updater) {
  using namespace dl4cpp;
  return NeuralNetConfiguration::Builder()
      .seed(7)
      .l2(1e-3)
      .updater(updater)
      .list()
      .layer(
          ConvolutionLayer::Builder(3, 3).nOut(2).activation(Activation::RELU).name("conv").build())
      .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
      .layer(DenseLayer::Builder().nOut(5).activation(Activation::TANH).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::convolutionalFlat(6, 6, 1))
      .build();
}

// Minibatch `index` of a fixed sequence for smallConvNet (4 examples of 36 features, 3 classes).
inline dl4cpp::DataSet convBatch(int index) {
  using namespace dl4cpp;
  std::vector<float> f, l;
  for (int r = 0; r < 4; ++r) {
    for (int i = 0; i < 36; ++i)
      f.push_back(static_cast<float>(std::sin(0.37 * i + 1.9 * r + 0.71 * index)));
    for (int k = 0; k < 3; ++k) l.push_back(k == (r + index) % 3 ? 1.0f : 0.0f);
  }
  return DataSet(Tensor::fromVector(Shape{4, 36}, f), Tensor::fromVector(Shape{4, 3}, l));
}

inline std::vector<float> values(const dl4cpp::Tensor& t) { return t.toVector(); }

// Bitwise equality (distinguishes -0 from 0 and compares NaN payloads).
inline bool bitIdentical(const std::vector<float>& a, const std::vector<float>& b) {
  // An empty vector's data() may be null, which memcmp must not be given even for 0 bytes.
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// CRC-32 (IEEE 802.3, zlib's), bit by bit: slow and obviously right.
inline uint32_t referenceCrc32(const std::byte* data, size_t n) {
  uint32_t crc = 0xffffffffu;
  for (size_t i = 0; i < n; ++i) {
    crc ^= static_cast<uint8_t>(data[i]);
    for (int b = 0; b < 8; ++b) crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

inline uint64_t readLe(const std::vector<std::byte>& b, size_t at, int n) {
  uint64_t v = 0;
  for (int i = n; i-- > 0;) v = (v << 8) | static_cast<uint8_t>(b[at + static_cast<size_t>(i)]);
  return v;
}
inline void writeLe(std::vector<std::byte>& b, size_t at, uint64_t v, int n) {
  for (int i = 0; i < n; ++i)
    b[at + static_cast<size_t>(i)] = static_cast<std::byte>((v >> (8 * i)) & 0xff);
}

// Version-1 layout: 8-byte magic, u32 version, u32 section count, u32 header CRC (of the 16
// bytes before it); then per section: 4-byte tag, u64 length, u32 CRC of the payload, payload.
constexpr size_t kHeaderSize = 20;
constexpr size_t kSectionHeaderSize = 16;

struct Section {
  std::string tag;
  size_t offset = 0;  // of the section header
  size_t payloadOffset = 0;
  size_t length = 0;
  std::vector<std::byte> payload(const std::vector<std::byte>& file) const {
    return {file.begin() + static_cast<std::ptrdiff_t>(payloadOffset),
            file.begin() + static_cast<std::ptrdiff_t>(payloadOffset + length)};
  }
};

inline std::vector<Section> sections(const std::vector<std::byte>& file) {
  std::vector<Section> out;
  const uint64_t count = readLe(file, 12, 4);
  size_t at = kHeaderSize;
  for (uint64_t i = 0; i < count; ++i) {
    Section s;
    s.tag.assign(reinterpret_cast<const char*>(file.data() + at), 4);
    s.offset = at;
    s.payloadOffset = at + kSectionHeaderSize;
    s.length = static_cast<size_t>(readLe(file, at + 4, 8));
    out.push_back(s);
    at = s.payloadOffset + s.length;
  }
  return out;
}

// A file of format `version` from (tag, payload) pairs, with correct checksums.
inline std::vector<std::byte> assemble(
    const std::vector<std::pair<std::string, std::vector<std::byte>>>& parts,
    uint32_t version = dl4cpp::ModelSerializer::kFormatVersion) {
  std::vector<std::byte> file(kHeaderSize);
  const char magic[8] = {'D', 'L', '4', 'C', 'P', 'P', 'M', 0x1a};
  std::memcpy(file.data(), magic, 8);
  writeLe(file, 8, version, 4);
  writeLe(file, 12, parts.size(), 4);
  writeLe(file, 16, referenceCrc32(file.data(), 16), 4);
  for (const auto& [tag, payload] : parts) {
    const size_t at = file.size();
    file.resize(at + kSectionHeaderSize);
    std::memcpy(file.data() + at, tag.data(), 4);
    writeLe(file, at + 4, payload.size(), 8);
    writeLe(file, at + 12, referenceCrc32(payload.data(), payload.size()), 4);
    file.insert(file.end(), payload.begin(), payload.end());
  }
  return file;
}

// The (tag, payload) pairs of a file, to modify and assemble() again.
inline std::vector<std::pair<std::string, std::vector<std::byte>>> parts(
    const std::vector<std::byte>& file) {
  std::vector<std::pair<std::string, std::vector<std::byte>>> out;
  for (const Section& s : sections(file)) out.emplace_back(s.tag, s.payload(file));
  return out;
}

}  // namespace testutil

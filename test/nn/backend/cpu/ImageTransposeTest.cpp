// transposeImages (NCHW <-> NHWC for oneDNN's channels-last convolutions), AVX-512 and scalar,
// against a plain transpose: full 16x16 tiles, partial tiles on either side, one-element matrices.
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include <dl4cpp/nn/backend/cpu/ImageTranspose.h>

using namespace dl4cpp;

namespace {

void checkTranspose(int64_t images, int64_t rows, int64_t cols) {
  INFO("images=" << images << " rows=" << rows << " cols=" << cols);
  const auto n = static_cast<size_t>(images * rows * cols);
  std::vector<float> src(n), expected(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<float>(i) * 0.5f - 3.0f;
  for (int64_t m = 0; m < images; ++m)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        expected[static_cast<size_t>((m * cols + c) * rows + r)] = src[static_cast<size_t>((m * rows + r) * cols + c)];
  for (const bool avx512 : {true, false}) {
    INFO("allowAvx512=" << avx512);
    std::vector<float> dst(n, 123.0f);
    cpu::transposeImages(src.data(), dst.data(), images, rows, cols, avx512);
    CHECK(dst == expected);
  }
}

}  // namespace

TEST_SUITE("nn/backend/cpu") {
  TEST_CASE("ImageTranspose: NCHW <-> NHWC of LeNet's second convolution and partial tiles") {
    checkTranspose(3, 20, 144);  // its input to NHWC (C = 20: a full and a 4-row tile)
    checkTranspose(3, 64, 50);   // its output back to NCHW
    checkTranspose(2, 16, 16);
    checkTranspose(2, 17, 33);
    checkTranspose(1, 5, 3);
    checkTranspose(4, 1, 1);
    checkTranspose(1, 1, 40);
  }
}

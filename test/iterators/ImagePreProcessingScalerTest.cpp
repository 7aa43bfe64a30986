#include <doctest/doctest.h>

#include <limits>
#include <memory>
#include <vector>

#include "iterators/ImagePreProcessingScaler.h"
#include "iterators/ListDataSetIterator.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

TEST_SUITE("iterators") {
  TEST_CASE("ImagePreProcessingScaler: 8-bit pixels to [0, 1] by default, exactly x / 255") {
    ImagePreProcessingScaler scaler;
    CHECK(scaler.isFitted());
    CHECK(scaler.getMaxBits() == 8);
    const std::vector<float> pixels = {0, 1, 51, 127, 128, 254, 255, 300};
    DataSet batch(Tensor::fromVector(Shape{2, 1, 2, 2}, pixels),
                  Tensor::fromVector(Shape{2, 1}, {7, 8}));
    scaler.transform(batch);
    const std::vector<float> scaled = batch.features.toVector();
    for (size_t i = 0; i < pixels.size(); ++i) {
      CAPTURE(pixels[i]);
      CHECK(scaled[i] == pixels[i] / 255.0f);  // bit for bit: no multiplication by 1/255
    }
    CHECK(scaled[2] == doctest::Approx(0.2));
    CHECK(scaled[7] > 1);  // out of range in, out of range out: nothing is clipped
    CHECK(batch.labels.toVector() == std::vector<float>{7, 8});
  }

  TEST_CASE("ImagePreProcessingScaler: another range and bit depth, as by hand") {
    // 16 bits to [-1, 1]: x -> x / 65535 * 2 - 1.
    ImagePreProcessingScaler scaler(-1, 1, 16);
    DataSet batch(Tensor::fromVector(Shape{1, 4}, {0, 65535, 16383.75f, 49151.25f}), Tensor());
    scaler.transform(batch);
    const std::vector<float> v = batch.features.toVector();
    CHECK(v[0] == -1);
    CHECK(v[1] == 1);
    CHECK(v[2] == doctest::Approx(-0.5));
    CHECK(v[3] == doctest::Approx(0.5));
    // The same on a network input of any type, and as an iterator's pre-processor, after a fit()
    // that learns nothing.
    Tensor input = Tensor::fromVector(Shape{1, 2}, {0, 65535});
    scaler.transformInput(input, InputType::feedForward(2));
    CHECK(input.toVector() == std::vector<float>{-1, 1});
    CHECK_NOTHROW(scaler.requireInput(InputType::convolutional(3, 3, 7)));
    ListDataSetIterator it(DataSet(Tensor::fromVector(Shape{2, 1}, {0, 65535}), Tensor()), 1);
    auto shared = std::make_shared<ImagePreProcessingScaler>(-1, 1, 16);
    shared->fit(it);
    it.setPreProcessor(shared);
    CHECK(it.next().features.at(0) == -1);
    CHECK(it.next().features.at(0) == 1);
    CHECK(shared->clone()->isFitted());
  }

  TEST_CASE("ImagePreProcessingScaler: bad settings are ConfigErrors") {
    CHECK_THROWS_WITH_AS(ImagePreProcessingScaler(0, 1, 0),
                         "ImagePreProcessingScaler: maxBits must be in 1..24, got 0", ConfigError);
    CHECK_THROWS_AS(ImagePreProcessingScaler(0, 1, 25), ConfigError);
    CHECK_NOTHROW(ImagePreProcessingScaler(0, 1, 24));
    CHECK_THROWS_WITH_AS(ImagePreProcessingScaler(1, 1),
                         doctest::Contains("target range [1, 1] must have min < max"), ConfigError);
    CHECK_THROWS_AS(ImagePreProcessingScaler(0, std::numeric_limits<double>::quiet_NaN()),
                    ConfigError);
    CHECK_THROWS_AS(ImagePreProcessingScaler(-1e39, 0), ConfigError);     // not a float
    CHECK_THROWS_AS(ImagePreProcessingScaler(-2e38, 2e38), ConfigError);  // width overflows
  }
}

// NormalizerStandardize and NormalizerMinMaxScaler on (N, C, H, W) image batches: statistics per
// channel, checked against values computed by hand; and the checks of what they are given.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "iterators/ListDataSetIterator.h"
#include "iterators/NormalizerMinMaxScaler.h"
#include "iterators/NormalizerStandardize.h"
#include "nn/core/Error.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using testutil::VectorIterator;

namespace {

// 3 images of 2 channels, 1x2 pixels; labels the example index.
//   example 0: channel 0 [1, 2], channel 1 [10, 10]
//   example 1: channel 0 [3, 4], channel 1 [20, 20]
//   example 2: channel 0 [5, 6], channel 1 [30, 60]
DataSet images() {
  return DataSet(Tensor::fromVector(Shape{3, 2, 1, 2}, {1, 2, 10, 10, 3, 4, 20, 20, 5, 6, 30, 60}),
                 Tensor::fromVector(Shape{3, 1}, {0, 1, 2}));
}

// By hand: channel 0 holds 1..6, mean 3.5, variance (6.25 + 2.25 + 0.25) * 2 / 6 = 35 / 12;
// channel 1 holds 10, 10, 20, 20, 30, 60, mean 25, variance (225 * 2 + 25 * 3 + 1225) / 6 =
// 1750 / 6.
const double kMean0 = 3.5, kStd0 = std::sqrt(35.0 / 12), kMean1 = 25, kStd1 = std::sqrt(1750.0 / 6);

void checkClose(const std::vector<float>& actual, const std::vector<double>& expected) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("value " << i);
    CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(1e-6));
  }
}

std::vector<float> transformed(const DataNormalization& normalizer, DataSet batch) {
  normalizer.transform(batch);
  return batch.features.toVector();
}

// A fitted NormalizerStandardize with the given statistics.
NormalizerStandardize standardize(FeatureGrouping grouping, std::vector<double> mean,
                                  std::vector<double> std) {
  FeatureStatistics stats;
  stats.grouping = grouping;
  stats.mean = std::move(mean);
  stats.std = std::move(std);
  NormalizerStandardize normalizer;
  normalizer.setFeatureStats(stats);
  return normalizer;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("NormalizerStandardize: rank-4 batches get a mean and std per channel, as by hand") {
    ListDataSetIterator it(images(), 2);  // two batches: the statistics span them
    auto normalizer = std::make_shared<NormalizerStandardize>();
    normalizer->fit(it);
    CHECK(normalizer->getFeatureStats().grouping == FeatureGrouping::Channels);
    CHECK(normalizer->getFeatureStats().count == 3);
    REQUIRE(normalizer->getMean().size() == 2);
    CHECK(normalizer->getMean()[0] == doctest::Approx(kMean0));
    CHECK(normalizer->getMean()[1] == doctest::Approx(kMean1));
    CHECK(normalizer->getStd()[0] == doctest::Approx(kStd0));
    CHECK(normalizer->getStd()[1] == doctest::Approx(kStd1));

    it.setPreProcessor(normalizer);
    const DataSet first = it.next();
    CHECK(first.features.shape() == Shape{2, 2, 1, 2});
    checkClose(
        first.features.toVector(),
        {(1 - kMean0) / kStd0, (2 - kMean0) / kStd0, (10 - kMean1) / kStd1, (10 - kMean1) / kStd1,
         (3 - kMean0) / kStd0, (4 - kMean0) / kStd0, (20 - kMean1) / kStd1, (20 - kMean1) / kStd1});
    CHECK(first.labels.toVector() == std::vector<float>{0, 1});  // labels untouched

    // Other image sizes with the fitted channels: the statistics are per channel, not per pixel.
    checkClose(transformed(*normalizer,
                           DataSet(Tensor::fromVector(Shape{1, 2, 1, 3}, {3.5, 0, 7, 25, 0, 50}),
                                   Tensor())),
               {0, -kMean0 / kStd0, 3.5 / kStd0, 0, -kMean1 / kStd1, 25 / kStd1});
  }

  TEST_CASE("NormalizerMinMaxScaler: rank-4 batches get a min and max per channel, as by hand") {
    ListDataSetIterator it(images(), 2);
    NormalizerMinMaxScaler scaler(-1, 1);
    scaler.fit(it);
    CHECK(scaler.getMin() == std::vector<double>{1, 10});
    CHECK(scaler.getMax() == std::vector<double>{6, 60});
    // Channel 0: [1, 6] -> [-1, 1], x -> (x - 1) * 0.4 - 1; channel 1: [10, 60], x -> (x - 10) *
    // 0.04 - 1.
    checkClose(transformed(scaler, images()),
               {-1, -0.6, -1, -1, -0.2, 0.2, -0.6, -0.6, 0.6, 1, -0.2, 1});
  }

  TEST_CASE("Normalizers: the network input of a per-channel normalizer is an image input") {
    ListDataSetIterator it(images(), 3);
    NormalizerStandardize normalizer;
    normalizer.fit(it);
    CHECK_NOTHROW(normalizer.requireInput(InputType::convolutional(1, 2, 2)));
    CHECK_NOTHROW(normalizer.requireInput(InputType::convolutionalFlat(5, 5, 2)));
    CHECK_THROWS_WITH_AS(
        normalizer.requireInput(InputType::convolutional(1, 2, 3)),
        "NormalizerStandardize was fitted per channel on rank-4 (N, C, H, W) features with 2 "
        "channels; the network takes Convolutional(1x2x3) input (6 values)",
        DataMismatchError);
    CHECK_THROWS_AS(normalizer.requireInput(InputType::feedForward(4)), DataMismatchError);

    // Flat rows of a ConvolutionalFlat input are normalized channel by channel, as the rank-4
    // batch is.
    Tensor flat = images().features.reshape(Shape{3, 4}).clone();
    normalizer.transformInput(flat, InputType::convolutionalFlat(1, 2, 2));
    CHECK(flat.toVector() == transformed(normalizer, images()));
    Tensor wrong(Shape{1, 6});
    CHECK_THROWS_AS(normalizer.transformInput(wrong, InputType::convolutionalFlat(1, 2, 3)),
                    DataMismatchError);

    // A per-column normalizer takes any input of its column count.
    ListDataSetIterator columns(
        DataSet(Tensor::fromVector(Shape{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), Tensor()), 2);
    NormalizerMinMaxScaler scaler;
    scaler.fit(columns);
    CHECK_NOTHROW(scaler.requireInput(InputType::convolutional(1, 2, 2)));
    CHECK_NOTHROW(scaler.requireInput(InputType::feedForward(4)));
    CHECK_THROWS_WITH_AS(scaler.requireInput(InputType::feedForward(5)),
                         "NormalizerMinMaxScaler was fitted per column on features of 4 values "
                         "per example; the network takes FeedForward(5) input (5 values)",
                         DataMismatchError);
    CHECK_THROWS_AS(NormalizerStandardize().requireInput(InputType::feedForward(4)), ConfigError);
  }

  TEST_CASE("Normalizers: a batch of another rank or channel count than fitted names both") {
    ListDataSetIterator it(images(), 3);
    NormalizerStandardize perChannel;
    perChannel.fit(it);
    DataSet flat(Tensor(Shape{2, 4}), Tensor());
    CHECK_THROWS_WITH_AS(perChannel.transform(flat),
                         "NormalizerStandardize: the batch has rank-2 features [2, 4]; the "
                         "normalizer was fitted per channel on rank-4 (N, C, H, W) features with 2 "
                         "channels",
                         DataMismatchError);
    DataSet threeChannels(Tensor(Shape{1, 3, 1, 2}), Tensor());
    CHECK_THROWS_WITH_AS(perChannel.transform(threeChannels),
                         "NormalizerStandardize: the batch has 3 channels ([1, 3, 1, 2]), the "
                         "normalizer was fitted on 2",
                         DataMismatchError);

    ListDataSetIterator columns(
        DataSet(Tensor::fromVector(Shape{2, 4}, {1, 2, 3, 4, 5, 6, 7, 8}), Tensor()), 2);
    NormalizerMinMaxScaler perColumn;
    perColumn.fit(columns);
    DataSet image(Tensor(Shape{1, 1, 2, 2}), Tensor());  // 4 values too, but an image
    CHECK_THROWS_WITH_AS(perColumn.transform(image),
                         "NormalizerMinMaxScaler: the batch has rank-4 features [1, 1, 2, 2]; the "
                         "normalizer was fitted per column on features of 4 values per example",
                         DataMismatchError);
  }

  TEST_CASE("Normalizers: fitting on batches of mixed ranks or channel counts is refused") {
    VectorIterator mixedRanks(
        {DataSet(Tensor(Shape{1, 2, 1, 2}), Tensor()), DataSet(Tensor(Shape{1, 4}), Tensor())});
    NormalizerStandardize normalizer;
    CHECK_THROWS_WITH_AS(normalizer.fit(mixedRanks),
                         "NormalizerStandardize::fit: batch 1 has rank-2 features [1, 4] "
                         "(statistics per column), the first batch's were per channel",
                         DataMismatchError);
    VectorIterator mixedChannels({DataSet(Tensor(Shape{1, 2, 1, 2}), Tensor()),
                                  DataSet(Tensor(Shape{1, 1, 2, 2}), Tensor())});
    CHECK_THROWS_WITH_AS(normalizer.fit(mixedChannels),
                         "NormalizerStandardize::fit: batch 1 has 1 channels, the first had 2",
                         DataMismatchError);
    ListDataSetIterator noPixels(DataSet(Tensor(Shape{1, 2, 0, 2}), Tensor()), 1);
    CHECK_THROWS_WITH_AS(normalizer.fit(noPixels), doctest::Contains("without values"), DataError);
    ListDataSetIterator withInf(
        DataSet(Tensor::fromVector(Shape{1, 2, 1, 2},
                                   {1, 2, 3, std::numeric_limits<float>::infinity()}),
                Tensor()),
        1);
    CHECK_THROWS_WITH_AS(
        normalizer.fit(withInf),
        doctest::Contains("batch 0, row 0, channel 1, value 1 holds a non-finite value (inf)"),
        DataError);
    CHECK_FALSE(normalizer.isFitted());
  }

  TEST_CASE("Normalizers: setFeatureStats refuses statistics it cannot use, keeping the last") {
    NormalizerStandardize normalizer =
        standardize(FeatureGrouping::Channels, {1, 2}, {0.5, 0});  // std 0: only centred
    checkClose(
        transformed(normalizer, DataSet(Tensor::fromVector(Shape{1, 2, 1, 1}, {2, 5}), Tensor())),
        {2, 3});
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    const struct {
      std::vector<double> mean, std;
      const char* message;
    } refused[] = {
        {{}, {}, "the statistics hold no mean"},
        {{1, 2}, {1}, "the statistics hold 1 std values for 2 columns or channels"},
        {{nan}, {1}, "mean[0] = nan is not a finite float value"},
        {{0}, {inf}, "std[0] = inf is not a finite float value"},
        {{1e39}, {1}, "mean[0] = 1e+39 is not a finite float value"},
        {{0}, {-1}, "std[0] = -1 is negative"},
        // 1 / 1e-40 is beyond float's range: such a scale would turn every value into inf.
        {{0}, {1e-40}, "the statistics of column 0 give x -> x * inf + -0, which is not finite"},
    };
    for (const auto& r : refused) {
      CAPTURE(r.message);
      FeatureStatistics stats;
      stats.mean = r.mean;
      stats.std = r.std;
      CHECK_THROWS_WITH_AS(normalizer.setFeatureStats(stats), doctest::Contains(r.message),
                           DataError);
    }
    CHECK(normalizer.getMean() == std::vector<double>{1, 2});  // the last good statistics stay
    CHECK(normalizer.getFeatureStats().grouping == FeatureGrouping::Channels);

    NormalizerMinMaxScaler scaler;
    FeatureStatistics inverted;
    inverted.min = {0, 3};
    inverted.max = {1, 2};
    CHECK_THROWS_WITH_AS(scaler.setFeatureStats(inverted),
                         doctest::Contains("min[1] = 3 exceeds "
                                           "max[1] = 2"),
                         DataError);
    CHECK_FALSE(scaler.isFitted());
    // A target range whose width overflows float.
    CHECK_THROWS_AS(NormalizerMinMaxScaler(-3e38, 3e38), ConfigError);
  }

  TEST_CASE("NormalizerStandardize: fitting data whose std is too small to divide by is an error") {
    // Two values one denormal apart: std 7e-46, whose inverse overflows float. The fit once
    // succeeded and mapped every value of the column to inf or NaN.
    const float tiny = std::numeric_limits<float>::denorm_min();
    ListDataSetIterator it(DataSet(Tensor::fromVector(Shape{2, 2}, {0, 1, tiny, 2}), Tensor()), 2);
    NormalizerStandardize normalizer;
    CHECK_THROWS_WITH_AS(normalizer.fit(it), doctest::Contains("statistics of column 0 give"),
                         DataError);
    CHECK_FALSE(normalizer.isFitted());
  }
}

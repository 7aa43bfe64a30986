#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "ImageTransformTestUtil.h"
#include "iterators/image/transform/BrightnessContrastTransform.h"
#include "iterators/image/transform/FlipImageTransform.h"
#include "iterators/image/transform/PipelineImageTransform.h"
#include "iterators/image/transform/RandomCropTransform.h"
#include "iterators/image/transform/RotateImageTransform.h"
#include "iterators/image/transform/TranslateImageTransform.h"
#include "nn/core/Error.h"

using namespace dl4cpp;
using testutil::bitIdentical;
using testutil::numberedImage;
using testutil::transformed;

namespace {

using Step = PipelineImageTransform::Step;

std::shared_ptr<const ImageTransform> horizontalFlip() {
  return std::make_shared<FlipImageTransform>(FlipMode::Horizontal);
}

// A typical training pipeline: every step random, some of them not always run.
PipelineImageTransform typicalPipeline() {
  return PipelineImageTransform({{std::make_shared<FlipImageTransform>(), 0.5},
                                 {std::make_shared<RotateImageTransform>(15), 0.8},
                                 {std::make_shared<TranslateImageTransform>(2, 2), 1.0},
                                 {std::make_shared<BrightnessContrastTransform>(20, 0.2), 0.7}});
}

// A 3 x 12 x 10 image with samples that differ everywhere, in [0, 255].
Image textured() {
  Image image(3, 12, 10);
  for (size_t i = 0; i < image.pixels.size(); ++i)
    image.pixels[i] = static_cast<float>((i * 37) % 256);
  return image;
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("PipelineImageTransform: probability 0 leaves the image bit-identical, 1 always runs") {
    const Image image = textured();
    const PipelineImageTransform never(
        {{std::make_shared<BrightnessContrastTransform>(50, 0.5), 0.0},
         {std::make_shared<RotateImageTransform>(30), 0.0}});
    const PipelineImageTransform always({{horizontalFlip(), 1.0}});
    const Image flipped = transformed(FlipImageTransform(FlipMode::Horizontal), image, 0);
    for (uint64_t e = 0; e < 1000; ++e) {
      REQUIRE(bitIdentical(transformed(never, image, e), image));
      REQUIRE(bitIdentical(transformed(always, image, e), flipped));
    }
    CHECK(bitIdentical(transformed(PipelineImageTransform({}), image, 0), image));
  }

  TEST_CASE("PipelineImageTransform: over many examples a step runs a fraction p of the time") {
    const Image image = numberedImage(1, 2, 3);
    const Image flipped = transformed(FlipImageTransform(FlipMode::Horizontal), image, 0);
    for (double p : {0.1, 0.3, 0.5, 0.9}) {
      const PipelineImageTransform pipeline({{horizontalFlip(), p}});
      const int examples = 20000;
      int ran = 0;
      for (int e = 0; e < examples; ++e) {
        const Image out = transformed(pipeline, image, static_cast<uint64_t>(e));
        if (bitIdentical(out, flipped))
          ++ran;
        else
          REQUIRE(bitIdentical(out, image));
      }
      // Within 4 standard deviations of the binomial.
      const double sigma = std::sqrt(p * (1 - p) / examples);
      CHECK(std::abs(static_cast<double>(ran) / examples - p) < 4 * sigma);
    }
  }

  TEST_CASE("PipelineImageTransform: a step's draws do not depend on earlier steps' choices") {
    // An exact identity step that draws four values, run or not, and one that draws nothing: the
    // translation after it gets the same shift either way.
    const Image image = textured();
    const auto translate = std::make_shared<TranslateImageTransform>(3, 3);
    const auto identity = std::make_shared<RotateImageTransform>(0);
    const PipelineImageTransform ran({{identity, 1.0}, {translate, 1.0}});
    const PipelineImageTransform skipped({{identity, 0.0}, {translate, 1.0}});
    const PipelineImageTransform noDraws(
        {{std::make_shared<FlipImageTransform>(FlipMode::Both), 0.0}, {translate, 1.0}});
    for (uint64_t e = 0; e < 50; ++e) {
      const Image reference = transformed(ran, image, e);
      CHECK(bitIdentical(transformed(skipped, image, e), reference));
      CHECK(bitIdentical(transformed(noDraws, image, e), reference));
    }
  }

  TEST_CASE("PipelineImageTransform: shuffle runs the steps in either order, without it never") {
    const Image image = numberedImage(1, 3, 4);
    const auto shift =
        std::make_shared<TranslateImageTransform>(UniformRange{1, 1}, UniformRange{});
    const Image flipThenShift =
        transformed(TranslateImageTransform({1, 1}, {}),
                    transformed(FlipImageTransform(FlipMode::Horizontal), image, 0), 0);
    const Image shiftThenFlip =
        transformed(FlipImageTransform(FlipMode::Horizontal),
                    transformed(TranslateImageTransform({1, 1}, {}), image, 0), 0);
    REQUIRE_FALSE(bitIdentical(flipThenShift, shiftThenFlip));
    const PipelineImageTransform ordered({{horizontalFlip(), 1.0}, {shift, 1.0}});
    const PipelineImageTransform shuffled({{horizontalFlip(), 1.0}, {shift, 1.0}}, true);
    int flipFirst = 0;
    const int examples = 2000;
    for (int e = 0; e < examples; ++e) {
      REQUIRE(bitIdentical(transformed(ordered, image, static_cast<uint64_t>(e)), flipThenShift));
      const Image out = transformed(shuffled, image, static_cast<uint64_t>(e));
      if (bitIdentical(out, flipThenShift))
        ++flipFirst;
      else
        REQUIRE(bitIdentical(out, shiftThenFlip));
    }
    CHECK(flipFirst == doctest::Approx(examples / 2).epsilon(0.1));
  }

  TEST_CASE("PipelineImageTransform: the result is a function of (seed, epoch, example) alone") {
    const PipelineImageTransform pipeline = typicalPipeline();
    const Image image = textured();
    const Image reference = transformed(pipeline, image, 5, 42, 3);
    CHECK(bitIdentical(transformed(pipeline, image, 5, 42, 3), reference));
    CHECK_FALSE(bitIdentical(transformed(pipeline, image, 6, 42, 3), reference));
    CHECK_FALSE(bitIdentical(transformed(pipeline, image, 5, 42, 4), reference));
    CHECK_FALSE(bitIdentical(transformed(pipeline, image, 5, 43, 3), reference));
    // Different examples of one epoch differ (not only example 5 and 6).
    int distinct = 0;
    for (uint64_t e = 0; e < 20; ++e)
      if (!bitIdentical(transformed(pipeline, image, e, 42, 3), reference)) ++distinct;
    CHECK(distinct == 19);
  }

  TEST_CASE("PipelineImageTransform: threads in any order give the sequential results") {
    const PipelineImageTransform pipeline = typicalPipeline();
    const Image image = textured();
    const int examples = 400;
    std::vector<Image> sequential;
    for (int e = 0; e < examples; ++e)
      sequential.push_back(transformed(pipeline, image, static_cast<uint64_t>(e), 7, 2));

    std::vector<int> order(examples);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(123));
    std::vector<Image> parallel(examples);
    const int threads = 4;
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
      workers.emplace_back([&, t] {
        // Thread t takes every threads-th example of the shuffled order; one shared pipeline.
        for (size_t i = static_cast<size_t>(t); i < order.size(); i += threads)
          parallel[static_cast<size_t>(order[i])] =
              transformed(pipeline, image, static_cast<uint64_t>(order[i]), 7, 2);
      });
    for (std::thread& w : workers) w.join();
    for (int e = 0; e < examples; ++e) {
      INFO("example " << e);
      CHECK(bitIdentical(parallel[static_cast<size_t>(e)], sequential[static_cast<size_t>(e)]));
    }
  }

  TEST_CASE(
      "PipelineImageTransform: a step's error comes through, parameter errors name the step") {
    Image small = numberedImage(1, 2, 2);
    ExampleRandom random(1, 0, 0);
    const PipelineImageTransform crop({{std::make_shared<RandomCropTransform>(3, 3), 1.0}});
    CHECK_THROWS_AS(crop.transform(small, random), DataMismatchError);
    CHECK_THROWS_WITH_AS(PipelineImageTransform({{horizontalFlip(), 1.0}, {horizontalFlip(), 1.5}}),
                         doctest::Contains("step 1's probability = 1.5 must be in [0, 1]"),
                         ConfigError);
    CHECK_THROWS_WITH_AS(PipelineImageTransform({{horizontalFlip(), -0.1}}),
                         doctest::Contains("step 0's probability = -0.1"), ConfigError);
    CHECK_THROWS_WITH_AS(
        PipelineImageTransform({{horizontalFlip(), std::numeric_limits<double>::quiet_NaN()}}),
        doctest::Contains("probability = nan"), ConfigError);
    CHECK_THROWS_WITH_AS(PipelineImageTransform({{horizontalFlip(), 1.0}, {nullptr, 1.0}}),
                         doctest::Contains("step 1 has no transform"), ConfigError);
  }
}

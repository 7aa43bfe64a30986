// Threshold encoding (DL4J's SHARED_GRADIENTS messages): the round trip, the residual's
// accounting, the message formats and the threshold algorithms.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "nn/core/Error.h"
#include "parallel/ThresholdEncoding.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;

TEST_SUITE("parallel") {
  TEST_CASE("thresholdEncode: elements at or past tau travel as +-tau, the rest stays behind") {
    // 64 elements: a bitmap would take 4 words, so 3 elements go sparse.
    std::vector<float> values(64, 0.0f);
    const std::vector<float> head{0.5f, -0.25f, 1.25f, -0.75f, 0.0f, 0.125f};
    std::copy(head.begin(), head.end(), values.begin());
    std::vector<int32_t> message;
    const EncodingStats stats = thresholdEncode(values, 0.5f, message);
    CHECK(stats.encoded == 3);
    CHECK(stats.length == 64);
    CHECK_FALSE(stats.dense);
    CHECK(stats.bytes == static_cast<int64_t>((4 + 3) * sizeof(int32_t)));
    // Sparse body: +(i + 1) for +tau, -(i + 1) for -tau.
    CHECK(std::vector<int32_t>(message.begin() + 4, message.end()) ==
          std::vector<int32_t>{1, 3, -4});
    CHECK(std::vector<float>(values.begin(), values.begin() + 6) ==
          std::vector<float>{0.0f, -0.25f, 0.75f, -0.25f, 0.0f, 0.125f});
    std::vector<float> decoded(64, 0.0f);
    thresholdDecodeAdd(message, decoded);
    CHECK(std::vector<float>(decoded.begin(), decoded.begin() + 6) ==
          std::vector<float>{0.5f, 0.0f, 0.5f, -0.5f, 0.0f, 0.0f});
    CHECK(std::all_of(decoded.begin() + 6, decoded.end(), [](float d) { return d == 0.0f; }));
  }

  TEST_CASE("thresholdEncode: a dense vector goes as a bitmap, and decodes the same") {
    std::mt19937 rng(4);
    std::uniform_real_distribution<float> u(-1, 1);
    std::vector<float> values(1000);
    for (float& v : values) v = u(rng);
    std::vector<float> copy = values;
    std::vector<int32_t> message;
    const EncodingStats stats = thresholdEncode(values, 0.25f, message);
    CHECK(stats.dense);  // about 3/4 of the elements
    CHECK(message.size() == 4 + (1000 + 15) / 16);
    std::vector<float> decoded(1000, 0.0f);
    thresholdDecodeAdd(message, decoded);
    for (size_t i = 0; i < values.size(); ++i) {
      CHECK(decoded[i] + values[i] == doctest::Approx(copy[i]).epsilon(1e-6));
      CHECK((decoded[i] == 0.0f || std::fabs(decoded[i]) == 0.25f));
      CHECK(std::fabs(values[i]) < 0.75f);
    }
  }

  TEST_CASE("EncodingHandler: what was sent plus the residual is the sum of the updates") {
    // Updates in multiples of 1/64 and tau = 1/8: every sum is exact in float.
    std::mt19937 rng(9);
    std::uniform_int_distribution<int> step(-6, 6);
    const size_t n = 257;
    EncodingHandler handler(FixedThresholdAlgorithm(0.125), nullptr);
    std::vector<float> residual(n, 0.0f), sent(n, 0.0f), total(n, 0.0f), update(n);
    std::vector<int32_t> message;
    int64_t bytes = 0;
    for (int it = 0; it < 50; ++it) {
      for (size_t i = 0; i < n; ++i) {
        update[i] = static_cast<float>(step(rng)) / 64.0f;
        total[i] += update[i];
      }
      const EncodingStats stats = handler.encode(update.data(), residual, it, 0, message);
      bytes += stats.bytes;
      thresholdDecodeAdd(message, sent);
      for (size_t i = 0; i < n; ++i) {
        REQUIRE(sent[i] + residual[i] == total[i]);
        REQUIRE(std::fabs(residual[i]) < 0.125f + 6.0f / 64);
      }
    }
    CHECK(bytes > 0);
  }

  TEST_CASE("AdaptiveThresholdAlgorithm: tau falls when too sparse, rises when too dense") {
    AdaptiveThresholdAlgorithm a(1e-3, 1e-4, 1e-2, 0.5);
    CHECK(a.calculateThreshold(0, 0, std::nullopt, std::nullopt) == 1e-3);
    CHECK(a.calculateThreshold(1, 0, 1e-3, 1e-5) == doctest::Approx(5e-4));
    CHECK(a.calculateThreshold(1, 0, 1e-3, 0.5) == doctest::Approx(2e-3));
    CHECK(a.calculateThreshold(1, 0, 1e-3, 1e-3) == 1e-3);
    CHECK(AdaptiveThresholdAlgorithm::defaultDecayRate() == doctest::Approx(std::pow(0.5, 0.05)));
    CHECK_THROWS_AS(AdaptiveThresholdAlgorithm(1e-3, 1e-2, 1e-4), ConfigError);
    CHECK_THROWS_AS(AdaptiveThresholdAlgorithm(1e-3, 1e-4, 1e-2, 1.0), ConfigError);
    CHECK_THROWS_AS(FixedThresholdAlgorithm(0), ConfigError);

    // Driven by an encoder on dense random updates, tau climbs until the sparsity is in range.
    std::mt19937 rng(2);
    std::normal_distribution<float> g(0, 1e-2f);
    const size_t n = 4096;
    EncodingHandler handler(AdaptiveThresholdAlgorithm(1e-4, 1e-3, 1e-2, 0.8), nullptr);
    std::vector<float> residual(n, 0.0f), update(n);
    std::vector<int32_t> message;
    EncodingStats first, last;
    for (int it = 0; it < 200; ++it) {
      for (float& u : update) u = g(rng);
      last = handler.encode(update.data(), residual, it, 0, message);
      if (it == 0) first = last;
    }
    CHECK(first.sparsity() > 0.5);
    CHECK(first.dense);
    CHECK(last.threshold > 10 * first.threshold);
    CHECK(last.sparsity() <= 0.05);
    CHECK(last.bytes < first.bytes);
  }

  TEST_CASE("TargetSparsityThresholdAlgorithm: tau moves towards the target every step") {
    TargetSparsityThresholdAlgorithm a(1e-3, 1e-3, 0.5);
    CHECK(a.calculateThreshold(0, 0, std::nullopt, std::nullopt) == 1e-3);
    CHECK(a.calculateThreshold(1, 0, 1e-3, 1e-4) == doctest::Approx(5e-4));
    CHECK(a.calculateThreshold(1, 0, 1e-3, 2e-3) == doctest::Approx(2e-3));
    CHECK_THROWS_AS(TargetSparsityThresholdAlgorithm(1e-3, 0.1), ConfigError);
  }

  TEST_CASE("ResidualClippingPostProcessor: clips to a multiple of tau every n-th step") {
    ResidualClippingPostProcessor p(5.0, 5);
    std::vector<float> r{1.0f, -1.0f, 0.2f};
    p.processResidual(3, 0, 0.1, r);
    CHECK(r == std::vector<float>{1.0f, -1.0f, 0.2f});
    p.processResidual(5, 0, 0.1, r);
    CHECK(r[0] == doctest::Approx(0.5));
    CHECK(r[1] == doctest::Approx(-0.5));
    CHECK(r[2] == 0.2f);
  }

  TEST_CASE("thresholdDecodeAdd: malformed messages are DataFormatError") {
    std::vector<float> values(64, 0.0f), target(64, 0.0f), wrongLength(65, 0.0f);
    values[0] = 1.0f;
    values[2] = -1.0f;
    std::vector<int32_t> message;
    thresholdEncode(values, 0.5f, message);
    CHECK_THROWS_AS(thresholdDecodeAdd(message, wrongLength), DataFormatError);
    auto truncated = message;
    truncated.pop_back();
    CHECK_THROWS_AS(thresholdDecodeAdd(truncated, target), DataFormatError);
    auto outOfRange = message;
    outOfRange.back() = 100;
    CHECK_THROWS_AS(thresholdDecodeAdd(outOfRange, target), DataFormatError);
    CHECK_THROWS_AS(thresholdDecodeAdd(std::vector<int32_t>{1, 2}, target), DataFormatError);
  }
}

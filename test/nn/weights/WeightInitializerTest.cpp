#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "nn/weights/WeightInitializer.h"

using namespace dl4cpp;

namespace {
struct Moments {
  double mean = 0, sd = 0, min = 0, max = 0;
};
Moments moments(const Tensor& t) {
  Moments m;
  const float* p = t.data();
  m.min = m.max = p[0];
  for (int64_t i = 0; i < t.numel(); ++i) m.mean += p[i];
  m.mean /= static_cast<double>(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    m.sd += (p[i] - m.mean) * (p[i] - m.mean);
    m.min = std::min(m.min, static_cast<double>(p[i]));
    m.max = std::max(m.max, static_cast<double>(p[i]));
  }
  m.sd = std::sqrt(m.sd / static_cast<double>(t.numel()));
  return m;
}
}  // namespace

TEST_SUITE("nn/weights") {
  TEST_CASE("WeightInit: each scheme has DL4J's distribution (fanIn 200, fanOut 100)") {
    const double fanIn = 200, fanOut = 100;
    struct Case {
      WeightInitScheme scheme;
      double mean, sd;   // expected mean and standard deviation
      double low, high;  // uniform schemes: the bounds; 0, 0 for normal ones
    };
    const double xavierUniform = std::sqrt(6.0 / (fanIn + fanOut));
    const double reluUniform = std::sqrt(6.0 / fanIn);
    const double uniform = 1.0 / std::sqrt(fanIn);
    const double lecunUniform = 3.0 / std::sqrt(fanIn);  // DL4J's bound, not sqrt(3 / fanIn)
    const double fanInNormal = 1.0 / std::sqrt(fanIn);
    const Case cases[] = {
        {WeightInit::XAVIER, 0, std::sqrt(2.0 / (fanIn + fanOut)), 0, 0},
        {WeightInit::XAVIER_UNIFORM, 0, xavierUniform / std::sqrt(3.0), -xavierUniform,
         xavierUniform},
        {WeightInit::RELU, 0, std::sqrt(2.0 / fanIn), 0, 0},
        {WeightInit::RELU_UNIFORM, 0, reluUniform / std::sqrt(3.0), -reluUniform, reluUniform},
        {WeightInit::NORMAL, 0, fanInNormal, 0, 0},
        {WeightInit::UNIFORM, 0, uniform / std::sqrt(3.0), -uniform, uniform},
        {WeightInit::LECUN_NORMAL, 0, fanInNormal, 0, 0},
        {WeightInit::LECUN_UNIFORM, 0, lecunUniform / std::sqrt(3.0), -lecunUniform, lecunUniform},
        {WeightInit::XAVIER_FAN_IN, 0, fanInNormal, 0, 0},
        {NormalDistribution(0.5, 0.2), 0.5, 0.2, 0, 0},
        {UniformDistribution(-0.3, 0.1), -0.1, 0.4 / std::sqrt(12.0), -0.3, 0.1},
    };
    for (const Case& c : cases) {
      const std::string scheme = c.scheme.toString();
      INFO("scheme " << scheme);
      Tensor w(Shape{200000});
      Random random(7);
      initWeights(c.scheme, fanIn, fanOut, w, random);
      const Moments m = moments(w);
      CHECK(std::fabs(m.mean - c.mean) < 0.01 * c.sd);
      CHECK(m.sd == doctest::Approx(c.sd).epsilon(0.01));
      if (c.high > c.low) {
        CHECK(m.min >= c.low);
        CHECK(m.max <= c.high);
        CHECK(m.min < c.low + 0.001 * (c.high - c.low));  // the whole range is drawn
        CHECK(m.max > c.high - 0.001 * (c.high - c.low));
      }
    }
    Random random(1);
    Tensor ones(Shape{3});
    initWeights(WeightInit::ONES, fanIn, fanOut, ones, random);
    CHECK(ones.toVector() == std::vector<float>{1, 1, 1});
    Tensor zero = Tensor::fromVector({3}, {1, 2, 3});
    initWeights(WeightInit::ZERO, fanIn, fanOut, zero, random);
    CHECK(zero.toVector() == std::vector<float>{0, 0, 0});
  }

  TEST_CASE("Random: a seed fixes the sequence, different seeds differ") {
    Random a(42), b(42), c(43);
    for (int i = 0; i < 100; ++i) {
      const double x = a.gaussian();
      CHECK(x == b.gaussian());
      (void)c;
    }
    CHECK(Random(42).nextU64() != Random(43).nextU64());
  }
}

#include <dl4cpp/nn/weights/WeightInitializer.h>
#include <doctest/doctest.h>

#include <cmath>

using namespace dl4cpp;

namespace {
struct Moments {
  double mean = 0, sd = 0, maxAbs = 0;
};
Moments moments(const Tensor& t) {
  Moments m;
  const float* p = t.data();
  for (int64_t i = 0; i < t.numel(); ++i) m.mean += p[i];
  m.mean /= static_cast<double>(t.numel());
  for (int64_t i = 0; i < t.numel(); ++i) {
    m.sd += (p[i] - m.mean) * (p[i] - m.mean);
    m.maxAbs = std::max(m.maxAbs, std::fabs(static_cast<double>(p[i])));
  }
  m.sd = std::sqrt(m.sd / static_cast<double>(t.numel()));
  return m;
}
}  // namespace

TEST_SUITE("nn/weights") {
  TEST_CASE("WeightInit: each scheme has DL4J's distribution (fanIn 200, fanOut 100)") {
    const double fanIn = 200, fanOut = 100;
    struct Case {
      WeightInit scheme;
      double sd;     // expected standard deviation
      double bound;  // uniform schemes: the half-width; 0 for normal ones
    };
    const double xavierUniform = std::sqrt(6.0 / (fanIn + fanOut));
    const double reluUniform = std::sqrt(6.0 / fanIn);
    const double uniform = 1.0 / std::sqrt(fanIn);
    const Case cases[] = {
        {WeightInit::XAVIER, std::sqrt(2.0 / (fanIn + fanOut)), 0},
        {WeightInit::XAVIER_UNIFORM, xavierUniform / std::sqrt(3.0), xavierUniform},
        {WeightInit::RELU, std::sqrt(2.0 / fanIn), 0},
        {WeightInit::RELU_UNIFORM, reluUniform / std::sqrt(3.0), reluUniform},
        {WeightInit::NORMAL, 1.0 / std::sqrt(fanIn), 0},
        {WeightInit::UNIFORM, uniform / std::sqrt(3.0), uniform},
    };
    for (const Case& c : cases) {
      INFO("scheme " << toString(c.scheme));
      Tensor w(Shape{200000});
      Random random(7);
      initWeights(c.scheme, fanIn, fanOut, w, random);
      const Moments m = moments(w);
      CHECK(std::fabs(m.mean) < 0.01 * c.sd);
      CHECK(m.sd == doctest::Approx(c.sd).epsilon(0.01));
      if (c.bound > 0) CHECK(m.maxAbs <= c.bound);
    }
    Tensor zero = Tensor::fromVector({3}, {1, 2, 3});
    Random random(1);
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

#include <dl4cpp/nn/tensor/DeviceContext.h>
#include <dl4cpp/nn/tensor/Tensor.h>
#include <dl4cpp/nn/updaters/Updaters.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

using namespace dl4cpp;

// Every updater against the formulas of its DL4J counterpart. The backend computes in float32;
// the expectations below are computed in double, either by hand (numeric literals, with the
// arithmetic in comments) or by the formulas written out step by step in this file. Tolerance:
// 1e-6 relative (doctest::Approx(x).epsilon(1e-6), which is relative to max(|x|, 1)).
namespace {

constexpr double kTol = 1e-6;

// scale 1: |actual - expected| <= 1e-6 * (1 + max(|actual|, |expected|)); scale 0: purely
// relative, for small quantities such as Adam's second moment.
void checkClose(const Tensor& actual, const std::vector<double>& expected, const char* what,
                double scale = 1.0) {
  REQUIRE(actual.numel() == static_cast<int64_t>(expected.size()));
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO(what << "[" << i << "]");
    CHECK(static_cast<double>(actual.at(static_cast<int64_t>(i))) ==
          doctest::Approx(expected[i]).epsilon(kTol).scale(scale));
  }
}

Tensor floats(const std::vector<double>& v) {
  std::vector<float> f(v.begin(), v.end());
  return Tensor::fromVector(Shape{static_cast<int64_t>(f.size())}, f);
}

// One backend step with gradient `g` (a fresh tensor each step, as the network refills its
// gradient buffer every iteration).
void step(DeviceContext& ctx, const UpdaterParams& u, const RegularizationParams& r,
          int64_t iteration, Tensor& param, const std::vector<double>& g, Tensor& state) {
  Tensor grad = floats(g);
  ctx.backend().updaterStep(u, r, iteration, param, grad, state);
}
void step(DeviceContext& ctx, const UpdaterParams& u, double l2, int64_t iteration, Tensor& param,
          const std::vector<double>& g, Tensor& state) {
  step(ctx, u, RegularizationParams{.l2 = l2}, iteration, param, g, state);
}

// The state buffer as init() sets it up.
Tensor stateFor(const UpdaterParams& u, int64_t n) {
  Tensor s(Shape{n * u.stateSizePerParam()});
  s.fill(static_cast<float>(u.initialStateValue()));
  return s;
}

// Three gradients of three parameters, different every step (and of both signs).
const std::vector<double> kP0{0.5, -1.25, 2.0};
const std::vector<std::vector<double>> kGrads{
    {0.3, -0.7, 1.1}, {-0.2, 0.4, 0.9}, {0.6, 0.05, -1.5}};

}  // namespace

TEST_SUITE("nn/updaters") {
  TEST_CASE("Updaters: defaults and state sizes are DL4J's") {
    CHECK(Sgd().learningRate == 1e-3);
    CHECK(Sgd().kind == UpdaterKind::SGD);
    const Nesterovs n;
    CHECK(n.learningRate == 0.1);
    CHECK(n.momentum == 0.9);
    const Adam a;
    CHECK(a.learningRate == 1e-3);
    CHECK(a.beta1 == 0.9);
    CHECK(a.beta2 == 0.999);
    CHECK(a.epsilon == 1e-8);
    const RmsProp r;
    CHECK(r.learningRate == 0.1);
    CHECK(r.rmsDecay == 0.95);
    CHECK(r.epsilon == 1e-8);
    CHECK(NoOp().kind == UpdaterKind::NOOP);

    CHECK(Sgd(0.1).stateSizePerParam() == 0);
    CHECK(NoOp().stateSizePerParam() == 0);
    CHECK(Nesterovs().stateSizePerParam() == 1);
    CHECK(RmsProp().stateSizePerParam() == 1);
    CHECK(Adam().stateSizePerParam() == 2);
  }

  // ---------------------------------------------------------------------------------------------
  // Hand-computed sequences (p = 1, g = 1 every step unless noted).

  TEST_CASE("Sgd: hand-computed sequence") {
    DeviceContext ctx;
    Tensor p = floats({1.0});
    Tensor s = stateFor(Sgd(0.1), 1);
    // lr 0.1, g = 1, 2, 3:  p = 1 - 0.1 = 0.9;  0.9 - 0.2 = 0.7;  0.7 - 0.3 = 0.4
    step(ctx, Sgd(0.1), 0, 0, p, {1.0}, s);
    checkClose(p, {0.9}, "p");
    step(ctx, Sgd(0.1), 0, 1, p, {2.0}, s);
    checkClose(p, {0.7}, "p");
    step(ctx, Sgd(0.1), 0, 2, p, {3.0}, s);
    checkClose(p, {0.4}, "p");
  }

  TEST_CASE("Nesterovs: hand-computed sequence (lr 0.1, mu 0.9, p = 1, g = 1, 1, 1)") {
    DeviceContext ctx;
    const Nesterovs u(0.1, 0.9);
    Tensor p = floats({1.0});
    Tensor v = stateFor(u, 1);
    // step 1: v = 0.9*0 - 0.1*1 = -0.1;     p += 1.9*(-0.1) - 0.9*0 = -0.19       -> p = 0.81
    step(ctx, u, 0, 0, p, {1.0}, v);
    checkClose(v, {-0.1}, "v");
    checkClose(p, {0.81}, "p");
    // step 2: v = 0.9*(-0.1) - 0.1 = -0.19; p += 1.9*(-0.19) - 0.9*(-0.1)
    //                                            = -0.361 + 0.09 = -0.271       -> p = 0.539
    step(ctx, u, 0, 1, p, {1.0}, v);
    checkClose(v, {-0.19}, "v");
    checkClose(p, {0.539}, "p");
    // step 3: v = 0.9*(-0.19) - 0.1 = -0.271; p += 1.9*(-0.271) - 0.9*(-0.19)
    //                                            = -0.5149 + 0.171 = -0.3439    -> p = 0.1951
    step(ctx, u, 0, 2, p, {1.0}, v);
    checkClose(v, {-0.271}, "v");
    checkClose(p, {0.1951}, "p");
  }

  // Guards the precision of (1 - beta): computed in float from the rounded betas,
  // 1.0f - 0.999f = 0.00099998713 (1.3e-5 relative off), p after 3 steps would be 0.6999981.
  TEST_CASE("Adam: hand-computed sequence (lr 0.1, p = 1, g = 1, 1, 1)") {
    DeviceContext ctx;
    const Adam u(0.1);
    Tensor p = floats({1.0});
    Tensor s = stateFor(u, 1);  // [m | v]
    // With a constant gradient the bias-corrected step is lr * mhat / sqrt(vhat) = lr * 1 / 1,
    // less the epsilon term (about lr * 1e-8 / sqrt(v) < 4e-8 here).
    // step 1 (t=1): m = 0.1*1 = 0.1;  v = 0.001*1 = 0.001;
    //   alpha = 0.1 * sqrt(1 - 0.999) / (1 - 0.9) = 0.1 * 0.0316228 / 0.1 = 0.0316228
    //   p -= 0.0316228 * 0.1 / (0.0316228 + 1e-8) = 0.0999999684          -> p = 0.9000000316
    step(ctx, u, 0, 0, p, {1.0}, s);
    checkClose(s, {0.1, 0.001}, "m,v", 0.0);
    checkClose(p, {0.9000000316}, "p");
    // step 2 (t=2): m = 0.9*0.1 + 0.1 = 0.19;  v = 0.999*0.001 + 0.001 = 0.001999;
    //   alpha = 0.1 * sqrt(1 - 0.998001) / (1 - 0.81) = 0.1 * 0.0447102 / 0.19;
    //   update = alpha * 0.19 / sqrt(0.001999) = 0.1 (less ~2.2e-8)             -> p = 0.80000005
    step(ctx, u, 0, 1, p, {1.0}, s);
    checkClose(s, {0.19, 0.001999}, "m,v", 0.0);
    checkClose(p, {0.80000005}, "p");
    // step 3 (t=3): m = 0.9*0.19 + 0.1 = 0.271;  v = 0.999*0.001999 + 0.001 = 0.002997001;
    //   update = 0.1 (less ~1.8e-8)                                             -> p = 0.70000007
    step(ctx, u, 0, 2, p, {1.0}, s);
    checkClose(s, {0.271, 0.002997001}, "m,v", 0.0);
    checkClose(p, {0.70000007}, "p");
  }

  TEST_CASE("RmsProp: hand-computed sequence (lr 0.1, decay 0.95, p = 1, g = 1, 1, 1)") {
    DeviceContext ctx;
    const RmsProp u(0.1, 0.95, 1e-8);
    Tensor p = floats({1.0});
    Tensor s = stateFor(u, 1);
    // step 1: s = 0.05*1 = 0.05;  p -= 0.1 / sqrt(0.05) = 0.1 / 0.2236068 = 0.4472136
    //                                                                      -> p = 0.5527864
    step(ctx, u, 0, 0, p, {1.0}, s);
    checkClose(s, {0.05}, "s");
    checkClose(p, {0.5527864}, "p");
    // step 2: s = 0.95*0.05 + 0.05 = 0.0975;  p -= 0.1 / 0.3122499 = 0.3202563
    //                                                                      -> p = 0.2325301
    step(ctx, u, 0, 1, p, {1.0}, s);
    checkClose(s, {0.0975}, "s");
    checkClose(p, {0.2325301}, "p");
    // step 3: s = 0.95*0.0975 + 0.05 = 0.142625;  p -= 0.1 / 0.3776573 = 0.2647903
    //                                                                      -> p = -0.0322602
    step(ctx, u, 0, 2, p, {1.0}, s);
    checkClose(s, {0.142625}, "s");
    checkClose(p, {-0.0322602}, "p");
  }

  TEST_CASE("Nesterovs: hand-computed step with l2 (p = 2, g = 0.5, l2 = 0.1)") {
    DeviceContext ctx;
    const Nesterovs u(0.1, 0.9);
    Tensor p = floats({2.0});
    Tensor v = stateFor(u, 1);
    // g' = 0.5 + 0.1*2 = 0.7;  v = -0.1*0.7 = -0.07;  p += 1.9*(-0.07) = -0.133 -> p = 1.867
    step(ctx, u, 0.1, 0, p, {0.5}, v);
    checkClose(v, {-0.07}, "v");
    checkClose(p, {1.867}, "p");
    // g' = 0.5 + 0.1*1.867 = 0.6867;  v = 0.9*(-0.07) - 0.06867 = -0.13167;
    // p += 1.9*(-0.13167) - 0.9*(-0.07) = -0.250173 + 0.063 = -0.187173        -> p = 1.679827
    step(ctx, u, 0.1, 1, p, {0.5}, v);
    checkClose(v, {-0.13167}, "v");
    checkClose(p, {1.679827}, "p");
  }

  // ---------------------------------------------------------------------------------------------
  // Three parameters, three different gradients, with and without l2: the formulas written out
  // in double for each element.

  TEST_CASE("Sgd: three steps on three parameters, with and without l2") {
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const Sgd u(0.1);
      Tensor p = floats(kP0);
      Tensor s = stateFor(u, 3);
      std::vector<double> ref = kP0;
      for (int t = 0; t < 3; ++t) {
        step(ctx, u, l2, t, p, kGrads[t], s);
        for (size_t i = 0; i < 3; ++i) {
          const double g = kGrads[t][i] + l2 * ref[i];
          ref[i] -= 0.1 * g;
        }
        checkClose(p, ref, "p");
      }
    }
  }

  TEST_CASE("Nesterovs: three steps on three parameters, with and without l2, state = velocity") {
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const double lr = 0.05, mu = 0.8;
      const Nesterovs u(lr, mu);
      Tensor p = floats(kP0);
      Tensor s = stateFor(u, 3);
      REQUIRE(s.numel() == 3);
      std::vector<double> ref = kP0, vel(3, 0.0);
      for (int t = 0; t < 3; ++t) {
        step(ctx, u, l2, t, p, kGrads[t], s);
        for (size_t i = 0; i < 3; ++i) {
          const double g = kGrads[t][i] + l2 * ref[i];
          const double vPrev = vel[i];
          vel[i] = mu * vPrev - lr * g;
          ref[i] += (1 + mu) * vel[i] - mu * vPrev;
        }
        checkClose(p, ref, "p");
        checkClose(s, vel, "velocity");
      }
    }
  }

  TEST_CASE("Adam: three steps on three parameters, with and without l2, state = [m | v]") {
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const double lr = 0.01, b1 = 0.8, b2 = 0.95, eps = 1e-6;
      const Adam u(lr, b1, b2, eps);
      Tensor p = floats(kP0);
      Tensor s = stateFor(u, 3);
      REQUIRE(s.numel() == 6);
      std::vector<double> ref = kP0, m(3, 0.0), v(3, 0.0);
      for (int it = 0; it < 3; ++it) {
        step(ctx, u, l2, it, p, kGrads[it], s);
        const double t = it + 1;
        const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
        for (size_t i = 0; i < 3; ++i) {
          const double g = kGrads[it][i] + l2 * ref[i];
          m[i] = b1 * m[i] + (1 - b1) * g;
          v[i] = b2 * v[i] + (1 - b2) * g * g;
          ref[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
        }
        checkClose(p, ref, "p");
        std::vector<double> mv = m;
        mv.insert(mv.end(), v.begin(), v.end());
        checkClose(s, mv, "m,v");
      }
    }
  }

  TEST_CASE("RmsProp: three steps on three parameters, with and without l2, state = mean g^2") {
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const double lr = 0.01, decay = 0.9, eps = 1e-6;
      const RmsProp u(lr, decay, eps);
      Tensor p = floats(kP0);
      Tensor s = stateFor(u, 3);
      REQUIRE(s.numel() == 3);
      std::vector<double> ref = kP0, ms(3, 0.0);
      for (int t = 0; t < 3; ++t) {
        step(ctx, u, l2, t, p, kGrads[t], s);
        for (size_t i = 0; i < 3; ++i) {
          const double g = kGrads[t][i] + l2 * ref[i];
          ms[i] = decay * ms[i] + (1 - decay) * g * g;
          ref[i] -= lr * g / (std::sqrt(ms[i]) + eps);
        }
        checkClose(p, ref, "p");
        checkClose(s, ms, "s");
      }
    }
  }

  TEST_CASE("NoOp: parameters never change, with or without l2") {
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      Tensor p = floats(kP0);
      Tensor s = stateFor(NoOp(), 3);
      for (int t = 0; t < 3; ++t) {
        step(ctx, NoOp(), l2, t, p, kGrads[t], s);
        checkClose(p, kP0, "p");
      }
    }
  }

  TEST_CASE("updaterStep: l2 is added to the gradient in place before the update") {
    // The Backend contract: grad += l2 * param first. Sgd(0.1), l2 0.5, p = [2, -4], g = [1, 1]:
    // g' = [1 + 1, 1 - 2] = [2, -1];  p = [2 - 0.2, -4 + 0.1] = [1.8, -3.9]
    DeviceContext ctx;
    Tensor p = floats({2.0, -4.0});
    Tensor g = floats({1.0, 1.0});
    Tensor s = stateFor(Sgd(0.1), 2);
    ctx.backend().updaterStep(Sgd(0.1), RegularizationParams{.l2 = 0.5}, 0, p, g, s);
    checkClose(g, {2.0, -1.0}, "g");
    checkClose(p, {1.8, -3.9}, "p");
  }

  TEST_CASE("updaterStep: a long segment (vectorised and threaded loops) matches the formulas") {
    // 1037 elements: not a multiple of any SIMD width, so loop tails are exercised too.
    const int64_t n = 1037;
    std::vector<double> p0(n), g0(n);
    for (int64_t i = 0; i < n; ++i) {
      p0[i] = std::sin(0.1 * static_cast<double>(i));
      g0[i] = std::cos(0.37 * static_cast<double>(i)) + 0.01;
    }
    DeviceContext ctx;
    const double lr = 0.01, b1 = 0.9, b2 = 0.999, eps = 1e-8, l2 = 1e-3;
    const Adam u(lr, b1, b2, eps);
    Tensor p = floats(p0);
    Tensor s = stateFor(u, n);
    std::vector<double> ref = p0, m(n, 0.0), v(n, 0.0);
    for (int it = 0; it < 3; ++it) {
      std::vector<double> g = g0;
      for (auto& x : g) x *= (1.0 + 0.5 * it);
      step(ctx, u, l2, it, p, g, s);
      const double t = it + 1;
      const double alpha = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
      for (int64_t i = 0; i < n; ++i) {
        const double gi = g[i] + l2 * ref[i];
        m[i] = b1 * m[i] + (1 - b1) * gi;
        v[i] = b2 * v[i] + (1 - b2) * gi * gi;
        ref[i] -= alpha * m[i] / (std::sqrt(v[i]) + eps);
      }
    }
    int bad = 0;
    for (int64_t i = 0; i < n; ++i)
      if (!(static_cast<double>(p.at(i)) == doctest::Approx(ref[i]).epsilon(kTol))) ++bad;
    CHECK(bad == 0);
  }

  TEST_CASE("updaterStep: a view into a larger flat buffer touches only its own slice") {
    // The network hands updaterStep views (offset + shape) into its flat buffers.
    DeviceContext ctx;
    Tensor flat = floats({10, 1, 1, 1, 10});
    Tensor flatState(Shape{5});
    Tensor p = flat.view(1, Shape{3});
    Tensor s = flatState.view(1, Shape{3});
    const Nesterovs u(0.1, 0.9);
    step(ctx, u, 0, 0, p, {1, 1, 1}, s);
    // v = -0.1, p = 1 - 0.19 = 0.81 in the slice; the neighbours stay
    checkClose(flat, {10, 0.81, 0.81, 0.81, 10}, "flat");
    checkClose(flatState, {0, -0.1, -0.1, -0.1, 0}, "state");
  }
}

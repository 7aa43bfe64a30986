#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "nn/backend/DeviceContext.h"
#include "nn/tensor/Random.h"
#include "nn/tensor/Tensor.h"
#include "nn/updaters/Updaters.h"

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

// 64 examples of 6 features whose class is the largest of the first three.
DataSet argmaxData() {
  Random random(17);
  Tensor f(Shape{64, 6}), l(Shape{64, 3});
  for (int64_t i = 0; i < f.numel(); ++i) f.data()[i] = static_cast<float>(random.uniform(-1, 1));
  for (int64_t r = 0; r < 64; ++r) {
    const float* x = f.data() + r * 6;
    l.data()[r * 3 + (x[0] > x[1] ? (x[0] > x[2] ? 0 : 2) : (x[1] > x[2] ? 1 : 2))] = 1;
  }
  return {f, l};
}

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

  TEST_CASE("AdaGrad, AdaDelta, AdaMax, Nadam, AMSGrad: ND4J's defaults and state sizes") {
    const AdaGrad g;
    CHECK(g.kind == UpdaterKind::ADAGRAD);
    CHECK(g.learningRate == 0.1);
    CHECK(g.epsilon == 1e-6);
    CHECK(g.stateSizePerParam() == 1);
    CHECK(g.initialStateValue() == 1e-6);  // ND4J assigns its default epsilon to the history
    const AdaDelta d;
    CHECK(d.kind == UpdaterKind::ADADELTA);
    CHECK(d.rho == 0.95);
    CHECK(d.epsilon == 1e-6);
    CHECK(d.stateSizePerParam() == 2);
    CHECK_FALSE(d.hasLearningRate());
    for (const UpdaterParams& u :
         {UpdaterParams(AdaMax()), UpdaterParams(Nadam()), UpdaterParams(AMSGrad())}) {
      CAPTURE(static_cast<int>(u.kind));
      CHECK(u.learningRate == 1e-3);
      CHECK(u.beta1 == 0.9);
      CHECK(u.beta2 == 0.999);
      CHECK(u.epsilon == 1e-8);
      CHECK(u.hasLearningRate());
      CHECK(u.initialStateValue() == 0.0);
    }
    CHECK(AdaMax().stateSizePerParam() == 2);
    CHECK(Nadam().stateSizePerParam() == 2);
    CHECK(AMSGrad().stateSizePerParam() == 3);
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

  // ---------------------------------------------------------------------------------------------
  // The ND4J updaters added for issue 19: hand-computed first steps, then three steps on three
  // parameters with ND4J's formulas written out in double.

  TEST_CASE("AdaGrad: the history starts at 1e-6, as ND4J's (hand-computed first step)") {
    DeviceContext ctx;
    const AdaGrad u(0.1, 1e-6);
    Tensor p = floats({1.0});
    Tensor s = stateFor(u, 1);
    checkClose(s, {1e-6}, "h", 0.0);
    // h = 1e-6 + (1e-3)^2 = 2e-6;  p -= 0.1 * 1e-3 / (sqrt(2e-6) + 1e-6)
    //                                 = 1e-4 / 0.00141521356 = 0.0706607  -> p = 0.9293393
    // (from a zero history it would be 1e-4 / 0.001001 = 0.0999001.)
    step(ctx, u, 0, 0, p, {1e-3}, s);
    checkClose(s, {2e-6}, "h", 0.0);
    checkClose(p, {0.9293393}, "p");
  }

  TEST_CASE("AdaGrad: three steps on three parameters, with and without l2, state = history") {
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const double lr = 0.05, eps = 1e-6;
      const AdaGrad u(lr, eps);
      Tensor p = floats(kP0);
      Tensor s = stateFor(u, 3);
      std::vector<double> ref = kP0, h(3, 1e-6);
      for (int t = 0; t < 3; ++t) {
        step(ctx, u, l2, t, p, kGrads[t], s);
        for (size_t i = 0; i < 3; ++i) {
          const double g = kGrads[t][i] + l2 * ref[i];
          h[i] += g * g;
          ref[i] -= lr * g / (std::sqrt(h[i]) + eps);
        }
        checkClose(p, ref, "p");
        checkClose(s, h, "h", 0.0);
      }
    }
  }

  TEST_CASE("AdaDelta: hand-computed first step (rho 0.95, eps 1e-6, g = 1)") {
    DeviceContext ctx;
    const AdaDelta u;
    Tensor p = floats({1.0});
    Tensor s = stateFor(u, 1);  // [msg | msdx]
    // msg = 0.05;  d = 1 * sqrt(0 + 1e-6) / sqrt(0.05 + 1e-6) = 0.001 / 0.22360903 = 0.00447209
    // msdx = 0.05 * d^2 = 9.99980e-7;  p = 1 - 0.00447209 = 0.99552791
    step(ctx, u, 0, 0, p, {1.0}, s);
    checkClose(s, {0.05, 9.99980e-7}, "msg,msdx", 0.0);
    checkClose(p, {0.99552791}, "p");
  }

  TEST_CASE("AdaDelta: three steps on three parameters, with and without l2, state = [msg|msdx]") {
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const double rho = 0.9, eps = 1e-2;  // a large epsilon: steps of about 0.1 to check
      const AdaDelta u(rho, eps);
      Tensor p = floats(kP0);
      Tensor s = stateFor(u, 3);
      REQUIRE(s.numel() == 6);
      std::vector<double> ref = kP0, msg(3, 0.0), msdx(3, 0.0);
      for (int t = 0; t < 3; ++t) {
        step(ctx, u, l2, t, p, kGrads[t], s);
        for (size_t i = 0; i < 3; ++i) {
          const double g = kGrads[t][i] + l2 * ref[i];
          msg[i] = rho * msg[i] + (1 - rho) * g * g;
          const double d = g * std::sqrt(msdx[i] + eps) / std::sqrt(msg[i] + eps);
          msdx[i] = rho * msdx[i] + (1 - rho) * d * d;
          ref[i] -= d;
        }
        checkClose(p, ref, "p");
        std::vector<double> state = msg;
        state.insert(state.end(), msdx.begin(), msdx.end());
        checkClose(s, state, "msg,msdx", 0.0);
      }
    }
  }

  TEST_CASE("AdaMax: three steps, with and without l2, state = [m | u], both sides of the max") {
    // Element 0's gradient shrinks (b2 u wins the max from step 2), element 1's grows (|g| wins).
    const std::vector<std::vector<double>> grads{{1.0, -0.1}, {0.2, 0.5}, {-0.1, 1.5}};
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const double lr = 0.01, b1 = 0.8, b2 = 0.95;
      const AdaMax u(lr, b1, b2, 1e-8);
      Tensor p = floats({0.5, -1.25});
      Tensor s = stateFor(u, 2);
      std::vector<double> ref{0.5, -1.25}, m(2, 0.0), w(2, 0.0);
      for (int it = 0; it < 3; ++it) {
        step(ctx, u, l2, it, p, grads[it], s);
        const double alpha = lr / (1 - std::pow(b1, it + 1));
        for (size_t i = 0; i < 2; ++i) {
          const double g = grads[it][i] + l2 * ref[i];
          m[i] = b1 * m[i] + (1 - b1) * g;
          w[i] = std::max(b2 * w[i], std::fabs(g)) + 1e-32;
          ref[i] -= alpha * m[i] / w[i];
        }
        checkClose(p, ref, "p");
        checkClose(s, {m[0], m[1], w[0], w[1]}, "m,u", 0.0);
      }
    }
  }

  TEST_CASE("AdaMax: a zero gradient on a zero state leaves the parameter (no 0/0)") {
    DeviceContext ctx;
    Tensor p = floats({0.75});
    Tensor s = stateFor(AdaMax(), 1);
    step(ctx, AdaMax(), 0, 0, p, {0.0}, s);
    CHECK(p.at(0) == 0.75f);
    CHECK(s.at(1) > 0.0f);  // u = 1e-32
  }

  TEST_CASE("Nadam: hand-computed first step (lr 0.1, p = 1, g = 1)") {
    DeviceContext ctx;
    const Nadam u(0.1);
    Tensor p = floats({1.0});
    Tensor s = stateFor(u, 1);
    // m = 0.1;  v = 0.001;  step = 0.1 * (0.9 * 0.1 + 0.1) / (1 - 0.9) / (sqrt(0.001) + 1e-8)
    //                            = 0.19 / 0.0316227866 = 6.0083257  -> p = -5.0083257
    step(ctx, u, 0, 0, p, {1.0}, s);
    checkClose(s, {0.1, 0.001}, "m,v", 0.0);
    checkClose(p, {-5.0083257}, "p");
  }

  TEST_CASE("Nadam: three steps on three parameters, with and without l2, state = [m | v]") {
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const double lr = 0.01, b1 = 0.8, b2 = 0.95, eps = 1e-6;
      const Nadam u(lr, b1, b2, eps);
      Tensor p = floats(kP0);
      Tensor s = stateFor(u, 3);
      std::vector<double> ref = kP0, m(3, 0.0), v(3, 0.0);
      for (int it = 0; it < 3; ++it) {
        step(ctx, u, l2, it, p, kGrads[it], s);
        const double correction = 1 - std::pow(b1, it + 1);
        for (size_t i = 0; i < 3; ++i) {
          const double g = kGrads[it][i] + l2 * ref[i];
          m[i] = b1 * m[i] + (1 - b1) * g;
          v[i] = b2 * v[i] + (1 - b2) * g * g;
          ref[i] -= lr * ((b1 * m[i] + (1 - b1) * g) / correction) / (std::sqrt(v[i]) + eps);
        }
        checkClose(p, ref, "p");
        std::vector<double> mv = m;
        mv.insert(mv.end(), v.begin(), v.end());
        checkClose(s, mv, "m,v", 0.0);
      }
    }
  }

  TEST_CASE("AMSGrad: three steps, with and without l2, state = [m | v | vHat], vHat keeps max") {
    // Element 0's gradient shrinks, so v falls below its earlier maximum: vHat != v there.
    const std::vector<std::vector<double>> grads{{2.0, 0.3}, {0.1, 0.5}, {0.1, -0.9}};
    for (double l2 : {0.0, 0.05}) {
      CAPTURE(l2);
      DeviceContext ctx;
      const double lr = 0.01, b1 = 0.8, b2 = 0.95, eps = 1e-6;
      const AMSGrad u(lr, b1, b2, eps);
      Tensor p = floats({0.5, -1.25});
      Tensor s = stateFor(u, 2);
      REQUIRE(s.numel() == 6);
      std::vector<double> ref{0.5, -1.25}, m(2, 0.0), v(2, 0.0), vHat(2, 0.0);
      for (int it = 0; it < 3; ++it) {
        step(ctx, u, l2, it, p, grads[it], s);
        const double alpha = lr * std::sqrt(1 - std::pow(b2, it + 1)) / (1 - std::pow(b1, it + 1));
        for (size_t i = 0; i < 2; ++i) {
          const double g = grads[it][i] + l2 * ref[i];
          m[i] = b1 * m[i] + (1 - b1) * g;
          v[i] = b2 * v[i] + (1 - b2) * g * g;
          vHat[i] = std::max(vHat[i], v[i]);
          ref[i] -= alpha * m[i] / (std::sqrt(vHat[i]) + eps);
        }
        checkClose(p, ref, "p");
        checkClose(s, {m[0], m[1], v[0], v[1], vHat[0], vHat[1]}, "m,v,vHat", 0.0);
      }
      CHECK(vHat[0] > 1.05 * v[0]);  // the case that tells AMSGrad from Adam did happen
    }
  }

  // ---------------------------------------------------------------------------------------------
  // Regularisation inside updaterStep: l1 and l2 into the gradient, weight decay into the update.

  TEST_CASE("updaterStep: l1 adds l1 * sign(param) to the gradient, sign(0) = 0") {
    // Sgd(0.1), l1 0.5, p = [2, -4, 0], g = [1, 1, 1]: g' = [1.5, 0.5, 1];
    // p = [2 - 0.15, -4 - 0.05, 0 - 0.1] = [1.85, -4.05, -0.1]
    DeviceContext ctx;
    Tensor p = floats({2.0, -4.0, 0.0});
    Tensor g = floats({1.0, 1.0, 1.0});
    Tensor s = stateFor(Sgd(0.1), 3);
    ctx.backend().updaterStep(Sgd(0.1), RegularizationParams{.l1 = 0.5}, 0, p, g, s);
    checkClose(g, {1.5, 0.5, 1.0}, "g");
    checkClose(p, {1.85, -4.05, -0.1}, "p");
  }

  TEST_CASE("updaterStep: weight decay adds coeff * lr * param to the update, not the gradient") {
    // Sgd(0.1), p = [2, -4], g = [1, 1]. applyLR: update = 0.1 g + 0.5 * 0.1 p = [0.2, -0.1]
    // -> p = [1.8, -3.9]. Without: update = 0.1 g + 0.5 p = [1.1, -1.9] -> p = [0.9, -2.1].
    for (bool applyLR : {true, false}) {
      CAPTURE(applyLR);
      DeviceContext ctx;
      Tensor p = floats({2.0, -4.0});
      Tensor g = floats({1.0, 1.0});
      Tensor s = stateFor(Sgd(0.1), 2);
      ctx.backend().updaterStep(
          Sgd(0.1), RegularizationParams{.weightDecay = 0.5, .weightDecayApplyLR = applyLR}, 0, p,
          g, s);
      checkClose(g, {1.0, 1.0}, "g");  // decoupled: the gradient is left alone
      checkClose(p, applyLR ? std::vector<double>{1.8, -3.9} : std::vector<double>{0.9, -2.1}, "p");
    }
  }

  TEST_CASE("updaterStep: weight decay is outside Adam's normalisation, AdaDelta's lr is 1") {
    // Adam: p -= adamStep(g) + wd * lr * p_before; AdaDelta (no learning rate): + wd * p_before.
    const double wd = 0.2;
    for (const UpdaterParams& u :
         {UpdaterParams(Adam(0.01, 0.8, 0.95, 1e-6)), UpdaterParams(AdaDelta(0.9, 1e-2))}) {
      CAPTURE(static_cast<int>(u.kind));
      DeviceContext ctx;
      Tensor p = floats(kP0);
      Tensor s = stateFor(u, 3);
      Tensor pPlain = floats(kP0);
      Tensor sPlain = stateFor(u, 3);
      step(ctx, u, RegularizationParams{.weightDecay = wd}, 0, p, kGrads[0], s);
      step(ctx, u, RegularizationParams{}, 0, pPlain, kGrads[0], sPlain);
      const double lr = u.kind == UpdaterKind::ADAM ? 0.01 : 1.0;
      std::vector<double> expected(3);
      for (size_t i = 0; i < 3; ++i)
        expected[i] = static_cast<double>(pPlain.at(static_cast<int64_t>(i))) - wd * lr * kP0[i];
      checkClose(p, expected, "p");
      const std::vector<float> plainState = sPlain.toVector();
      checkClose(s, std::vector<double>(plainState.begin(), plainState.end()), "state", 0.0);
    }
  }

  TEST_CASE("updaterStep: l1, l2 and weight decay together over three Nesterovs steps") {
    DeviceContext ctx;
    const double lr = 0.05, mu = 0.8, l1 = 0.02, l2 = 0.05, wd = 0.1;
    const Nesterovs u(lr, mu);
    const RegularizationParams r{.l1 = l1, .l2 = l2, .weightDecay = wd};
    Tensor p = floats(kP0);
    Tensor s = stateFor(u, 3);
    std::vector<double> ref = kP0, vel(3, 0.0);
    for (int t = 0; t < 3; ++t) {
      step(ctx, u, r, t, p, kGrads[t], s);
      for (size_t i = 0; i < 3; ++i) {
        const double sign = ref[i] > 0 ? 1.0 : (ref[i] < 0 ? -1.0 : 0.0);
        const double g = kGrads[t][i] + l1 * sign + l2 * ref[i];
        const double vPrev = vel[i];
        vel[i] = mu * vPrev - lr * g;
        // Nesterovs' update is -((1 + mu) v' - mu v); weight decay adds wd * lr * p to it.
        ref[i] += (1 + mu) * vel[i] - mu * vPrev - wd * lr * ref[i];
      }
      checkClose(p, ref, "p");
      checkClose(s, vel, "velocity");
    }
  }

  TEST_CASE("updaterStep: NoOp changes no parameter whatever the regularisation") {
    DeviceContext ctx;
    Tensor p = floats(kP0);
    Tensor s = stateFor(NoOp(), 3);
    step(ctx, NoOp(), RegularizationParams{.l1 = 0.1, .l2 = 0.1, .weightDecay = 0.5}, 0, p,
         kGrads[0], s);
    checkClose(p, kP0, "p");
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

  TEST_CASE("every updater trains a small network: the loss falls") {
    const DataSet data = argmaxData();
    for (const UpdaterParams& u : std::vector<UpdaterParams>{
             Sgd(0.5), Nesterovs(0.1, 0.9), Adam(0.02), RmsProp(0.01), AdaGrad(0.1), AdaDelta(),
             AdaMax(0.02), Nadam(0.02), AMSGrad(0.02)}) {
      CAPTURE(static_cast<int>(u.kind));
      auto conf =
          NeuralNetConfiguration::Builder()
              .seed(5)
              .updater(u)
              .list()
              .layer(DenseLayer::Builder().nIn(6).nOut(12).activation(Activation::TANH).build())
              .layer(OutputLayer::Builder(LossFunction::MCXENT)
                         .nOut(3)
                         .activation(Activation::SOFTMAX)
                         .build())
              .build();
      MultiLayerNetwork model(conf, Device::cpu(), 1);
      model.init();
      const double before = model.score(data);
      for (int i = 0; i < 60; ++i) model.fit(data);
      const double after = model.score(data);
      MESSAGE("updater " << static_cast<int>(u.kind) << ": loss " << before << " -> " << after);
      CHECK(after < 0.8 * before);
    }
  }
}

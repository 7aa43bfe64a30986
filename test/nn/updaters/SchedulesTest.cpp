// Every schedule against values computed by hand from ND4J's formulas (the arithmetic beside each
// expectation), and every rule on their parameters.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <memory>

using namespace dl4cpp;

namespace {

constexpr ScheduleType kIteration = ScheduleType::ITERATION;
constexpr ScheduleType kEpoch = ScheduleType::EPOCH;

// The value at iteration i (epoch 0), of a Schedule built from `s` (so its parameters are checked).
double at(const Schedule& s, int64_t i) { return s.valueAt(i, 0); }

std::string problemOf(const Schedule::Variant& v) {
  try {
    std::visit([](const auto& s) { static_cast<void>(Schedule(s)); }, v);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(accepted)";
}

}  // namespace

TEST_SUITE("nn/updaters") {
  TEST_CASE("StepSchedule: initialValue * decayRate^floor(i / step)") {
    const Schedule s = StepSchedule(kIteration, 0.1, 0.5, 3);
    CHECK(at(s, 0) == doctest::Approx(0.1));
    CHECK(at(s, 2) == doctest::Approx(0.1));    // floor(2/3) = 0
    CHECK(at(s, 3) == doctest::Approx(0.05));   // floor(3/3) = 1
    CHECK(at(s, 7) == doctest::Approx(0.025));  // floor(7/3) = 2
    // A fractional step, as DL4J's double step allows: floor(4 / 2.5) = 1, floor(5 / 2.5) = 2.
    const Schedule fractional = StepSchedule(kIteration, 0.1, 0.5, 2.5);
    CHECK(at(fractional, 4) == doctest::Approx(0.05));
    CHECK(at(fractional, 5) == doctest::Approx(0.025));
    // By epoch, the iteration does not matter: floor(4/3) = 1.
    CHECK(Schedule(StepSchedule(kEpoch, 0.1, 0.5, 3)).valueAt(100, 4) == doctest::Approx(0.05));
    CHECK(s.scheduleType() == kIteration);
    CHECK(std::string(s.name()) == "StepSchedule");
  }

  TEST_CASE("ExponentialSchedule: initialValue * gamma^i") {
    CHECK(at(ExponentialSchedule(kIteration, 2.0, 0.5), 3) == doctest::Approx(0.25));  // 2 / 8
    // 0.1 * 0.9^2 = 0.081, by epoch.
    CHECK(Schedule(ExponentialSchedule(kEpoch, 0.1, 0.9)).valueAt(50, 2) == doctest::Approx(0.081));
  }

  TEST_CASE("InverseSchedule: initialValue / (1 + gamma i)^power") {
    const Schedule s = InverseSchedule(kIteration, 1.0, 0.5, 2);
    CHECK(at(s, 0) == doctest::Approx(1.0));
    CHECK(at(s, 2) == doctest::Approx(0.25));    // 1 / (1 + 1)^2
    CHECK(at(s, 6) == doctest::Approx(0.0625));  // 1 / (1 + 3)^2
  }

  TEST_CASE("PolySchedule: DL4J's initialValue * (1 + i / maxIter)^power, 0 from maxIter on") {
    const Schedule s = PolySchedule(kIteration, 0.8, 2, 4);
    CHECK(at(s, 0) == doctest::Approx(0.8));
    CHECK(at(s, 2) == doctest::Approx(1.8));  // 0.8 * 1.5^2
    CHECK(at(s, 4) == 0.0);
    CHECK(at(s, 10) == 0.0);
    // A negative power decays: 0.8 / 1.25 = 0.64.
    CHECK(at(PolySchedule(kIteration, 0.8, -1, 4), 1) == doctest::Approx(0.64));
  }

  TEST_CASE("SigmoidSchedule: initialValue / (1 + exp(-gamma (i - stepSize)))") {
    const Schedule s = SigmoidSchedule(kIteration, 1.0, 2.0, 3);
    CHECK(at(s, 3) == doctest::Approx(0.5));
    CHECK(at(s, 4) == doctest::Approx(0.8807970779778823));   // 1 / (1 + e^-2)
    CHECK(at(s, 2) == doctest::Approx(0.11920292202211755));  // 1 / (1 + e^2)
  }

  TEST_CASE("MapSchedule: the value at the largest position <= i (DL4J's Javadoc example)") {
    const Schedule s = MapSchedule::Builder(kEpoch).add(0, 1.0).add(10, 0.5).add(20, 0.2).build();
    for (const auto& [epoch, expected] :
         {std::pair{0, 1.0}, {9, 1.0}, {10, 0.5}, {19, 0.5}, {20, 0.2}, {500, 0.2}}) {
      CAPTURE(epoch);
      CHECK(s.valueAt(7, epoch) == expected);
    }
    CHECK(at(MapSchedule(kIteration, {{0, 0.3}}), 1000) == 0.3);
  }

  TEST_CASE("CycleSchedule: DL4J's one cycle, rising, falling, then annealing") {
    // stepSize = (10 - 2) / 2 = 4, increment = (1.0 - 0.1) / 4 = 0.225.
    const Schedule s = CycleSchedule(kIteration, 0.1, 1.0, 10, 2, 0.1);
    CHECK(at(s, 0) == doctest::Approx(0.1));
    CHECK(at(s, 2) == doctest::Approx(0.55));  // 0.1 + 2 * 0.225
    CHECK(at(s, 4) == doctest::Approx(1.0));   // 1.0 - 0 * 0.225
    CHECK(at(s, 6) == doctest::Approx(0.55));  // 1.0 - 2 * 0.225
    CHECK(at(s, 8) == doctest::Approx(0.1));   // 0.1 * 0.1^(2 - (10 - 8))
    CHECK(at(s, 9) == doctest::Approx(0.01));  // 0.1 * 0.1^(2 - (10 - 9))
    CHECK(at(s, 10) == doctest::Approx(0.1));  // the next cycle
    CHECK(at(s, 13) == doctest::Approx(0.775));
    // An odd cycleLength - annealingLength: stepSize = 7 / 2 = 3, and p = 6 takes DL4J's annealing
    // branch with exponent 2 - (9 - 6) = -1: 0.1 / 0.1.
    const Schedule odd = CycleSchedule(kIteration, 0.1, 1.0, 9, 2, 0.1);
    CHECK(at(odd, 6) == doctest::Approx(1.0));
    CHECK(at(odd, 7) == doctest::Approx(0.1));
    CHECK(at(odd, 8) == doctest::Approx(0.01));
    // DL4J's short form: a tenth of the maximum, annealing over Math.round(cycleLength / 10)
    // (half rounds up) by 0.1.
    const CycleSchedule shortForm(kIteration, 2.0, 25);
    CHECK(shortForm.initialLearningRate == doctest::Approx(0.2));
    CHECK(shortForm.maxLearningRate == 2.0);
    CHECK(shortForm.annealingLength == 3);
    CHECK(shortForm.annealingDecay == 0.1);
    CHECK(CycleSchedule(kIteration, 2.0, 14).annealingLength == 1);
  }

  TEST_CASE("CosineWarmupSchedule: linear warm-up from 0, then cosine from maxLR to minLR") {
    const Schedule s = CosineWarmupSchedule(1.0, 0.1, 4, 12);
    CHECK(at(s, 0) == 0.0);
    CHECK(at(s, 2) == doctest::Approx(0.5));                // 1.0 * 2 / 4
    CHECK(at(s, 4) == doctest::Approx(1.0));                // progress 0: 0.1 + 0.45 * 2
    CHECK(at(s, 6) == doctest::Approx(0.868198051533946));  // 0.1 + 0.45 (1 + cos(pi / 4))
    CHECK(at(s, 8) == doctest::Approx(0.55));               // progress 1/2: 0.1 + 0.45
    CHECK(at(s, 12) == doctest::Approx(0.1));
    CHECK(at(s, 100) == doctest::Approx(0.1));
    CHECK(s.scheduleType() == kIteration);
    CHECK(CosineWarmupSchedule(1.0, 4, 12).minLR == 0.0);
    // By epoch: 1.0 * 1 / 2 at epoch 1.
    CHECK(Schedule(CosineWarmupSchedule(kEpoch, 1.0, 0.0, 2, 6)).valueAt(99, 1) ==
          doctest::Approx(0.5));
    // A warm-up as long as the schedule: the ramp, then minLR.
    const Schedule allWarmUp = CosineWarmupSchedule(1.0, 0.2, 4, 4);
    CHECK(at(allWarmUp, 3) == doctest::Approx(0.75));
    CHECK(at(allWarmUp, 4) == doctest::Approx(0.2));
  }

  TEST_CASE("Schedules: bad parameters are ConfigErrors naming the schedule and the parameter") {
    const double nan = std::nan("");
    CHECK(problemOf(StepSchedule(kIteration, -0.1, 0.5, 3)) ==
          "StepSchedule: initialValue must be finite and >= 0, got -0.1");
    CHECK(problemOf(StepSchedule(kIteration, 0.1, 0, 3)) ==
          "StepSchedule: decayRate must be finite and > 0, got 0");
    CHECK(problemOf(StepSchedule(kIteration, 0.1, 0.5, 0)) ==
          "StepSchedule: step must be finite and > 0, got 0");
    CHECK(problemOf(ExponentialSchedule(kIteration, 0.1, -0.5)) ==
          "ExponentialSchedule: gamma must be finite and > 0, got -0.5");
    CHECK(problemOf(ExponentialSchedule(kIteration, nan, 0.5)) ==
          "ExponentialSchedule: initialValue must be finite and >= 0, got nan");
    CHECK(problemOf(InverseSchedule(kIteration, 0.1, -1, 2)) ==
          "InverseSchedule: gamma must be finite and >= 0, got -1");
    CHECK(problemOf(InverseSchedule(kIteration, 0.1, 1, std::numeric_limits<double>::infinity())) ==
          "InverseSchedule: power must be finite, got inf");
    CHECK(problemOf(PolySchedule(kIteration, 0.1, 2, 0)) ==
          "PolySchedule: maxIter must be >= 1, got 0");
    CHECK(problemOf(SigmoidSchedule(kIteration, 0.1, nan, 3)) ==
          "SigmoidSchedule: gamma must be finite, got nan");
    CHECK(problemOf(SigmoidSchedule(kIteration, 0.1, 1, -3)) ==
          "SigmoidSchedule: stepSize must be >= 0, got -3");
    CHECK(problemOf(MapSchedule(kIteration, {})) ==
          "MapSchedule: values must hold a value at position 0 (the initial value), got none");
    CHECK(problemOf(MapSchedule(kIteration, {{5, 0.1}})) ==
          "MapSchedule: values must hold a value at position 0 (the initial value), the first is "
          "at 5");
    CHECK(problemOf(MapSchedule(kIteration, {{-1, 0.1}, {0, 0.1}})) ==
          "MapSchedule: positions must be >= 0, got -1");
    CHECK(problemOf(MapSchedule(kIteration, {{0, 0.1}, {10, -0.5}})) ==
          "MapSchedule: each value must be finite and >= 0, got -0.5 at position 10");
    CHECK(problemOf(CycleSchedule(kIteration, 0.5, 0.1, 10, 2, 0.1)) ==
          "CycleSchedule: maxLearningRate must be finite and >= initialLearningRate (0.5), got "
          "0.1");
    CHECK(problemOf(CycleSchedule(kIteration, 0.1, 1.0, 1, 0, 0.1)) ==
          "CycleSchedule: cycleLength must be >= 2, got 1");
    CHECK(problemOf(CycleSchedule(kIteration, 0.1, 1.0, 10, 9, 0.1)) ==
          "CycleSchedule: annealingLength must be between 0 and cycleLength - 2 = 8, got 9");
    CHECK(problemOf(CycleSchedule(kIteration, 0.1, 1.0, 10, 2, 0)) ==
          "CycleSchedule: annealingDecay must be finite and > 0, got 0");
    CHECK(problemOf(CosineWarmupSchedule(1.0, 0.1, 20, 10)) ==
          "CosineWarmupSchedule: warmupSteps must be between 0 and totalSteps (10): the warm-up "
          "is part of the schedule, got 20");
    CHECK(problemOf(CosineWarmupSchedule(1.0, 2.0, 2, 10)) ==
          "CosineWarmupSchedule: minLR must be finite and between 0 and maxLR (1), got 2");
    CHECK(problemOf(CosineWarmupSchedule(1.0, 0.1, 0, 0)) ==
          "CosineWarmupSchedule: totalSteps must be >= 1, got 0");
    CHECK(problemOf(CosineWarmupSchedule(-1.0, 0.0, 2, 10)) ==
          "CosineWarmupSchedule: maxLR must be finite and >= 0, got -1");
    // Through an updater, the same error, before anything is built.
    CHECK_THROWS_WITH_AS(Sgd(StepSchedule(kIteration, 0.1, 0.5, 0)),
                         "StepSchedule: step must be finite and > 0, got 0", ConfigError);
  }

  TEST_CASE("Updaters take schedules for the learning rate, and Nesterovs for the momentum") {
    const Schedule lr = StepSchedule(kIteration, 0.2, 0.5, 10);
    const Schedule mu = MapSchedule(kIteration, {{0, 0.5}, {5, 0.9}});
    // The learning rate holds the schedule's first value; the other hyperparameters are as given.
    const Sgd sgd(lr);
    CHECK(sgd.kind == UpdaterKind::SGD);
    CHECK(sgd.learningRate == 0.2);
    REQUIRE(sgd.learningRateSchedule);
    CHECK(sgd.learningRateSchedule->valueAt(10, 0) == doctest::Approx(0.1));
    CHECK_FALSE(sgd.momentumSchedule);

    const Nesterovs both(lr, mu);
    CHECK(both.learningRate == 0.2);
    CHECK(both.momentum == 0.5);
    REQUIRE(both.momentumSchedule);
    const Nesterovs lrOnly(lr, 0.8);
    CHECK(lrOnly.momentum == 0.8);
    CHECK_FALSE(lrOnly.momentumSchedule);
    const Nesterovs muOnly(0.05, mu);
    CHECK(muOnly.learningRate == 0.05);
    CHECK_FALSE(muOnly.learningRateSchedule);
    CHECK(muOnly.momentumSchedule);

    const Adam adam(lr, 0.8, 0.99, 1e-6);
    CHECK(adam.kind == UpdaterKind::ADAM);
    CHECK(adam.beta1 == 0.8);
    CHECK(adam.beta2 == 0.99);
    CHECK(adam.epsilon == 1e-6);
    CHECK(adam.learningRate == 0.2);
    for (const UpdaterParams& u :
         {UpdaterParams(RmsProp(lr)), UpdaterParams(AdaGrad(lr)), UpdaterParams(AdaMax(lr)),
          UpdaterParams(Nadam(lr)), UpdaterParams(AMSGrad(lr))}) {
      CAPTURE(static_cast<int>(u.kind));
      CHECK(u.learningRate == 0.2);
      CHECK(u.learningRateSchedule);
    }
    CHECK(RmsProp(lr).rmsDecay == RmsProp().rmsDecay);
    CHECK(AdaGrad(lr).epsilon == AdaGrad().epsilon);

    // What a step at (iteration, epoch) uses.
    UpdaterParams step = both;
    setScheduledValues(step, 10, 0);
    CHECK(step.learningRate == doctest::Approx(0.1));
    CHECK(step.momentum == 0.9);
    UpdaterParams fixed = Nesterovs(0.3, 0.7);
    setScheduledValues(fixed, 10, 3);
    CHECK(fixed.learningRate == 0.3);
    CHECK(fixed.momentum == 0.7);
  }

  TEST_CASE("A schedule where the updater has no such value is a ConfigError naming the layer") {
    auto build = [](const UpdaterParams& u) {
      NeuralNetConfiguration::Builder()
          .updater(u)
          .list()
          .layer(OutputLayer::Builder(LossFunction::MSE).nIn(2).nOut(1).build())
          .build();
    };
    UpdaterParams adaDelta = AdaDelta();
    adaDelta.learningRateSchedule =
        std::make_shared<const Schedule>(StepSchedule(kIteration, 0.1, 0.5, 3));
    CHECK_THROWS_WITH_AS(build(adaDelta),
                         "layer 0 (OutputLayer): updater StepSchedule on the learning rate: this "
                         "updater has no learning rate",
                         ConfigError);
    UpdaterParams adam = Adam(0.01);
    adam.momentumSchedule = std::make_shared<const Schedule>(MapSchedule(kIteration, {{0, 0.9}}));
    CHECK_THROWS_WITH_AS(
        build(adam),
        "layer 0 (OutputLayer): updater MapSchedule on the momentum: only Nesterovs has a momentum",
        ConfigError);
  }
}

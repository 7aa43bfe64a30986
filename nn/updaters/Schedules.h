#pragma once
// Schedules (DL4J's org.nd4j.linalg.schedule): a hyperparameter's value as a function of the
// iteration or the epoch, set on an updater's learning rate or on Nesterovs' momentum:
//
//   .updater(Nesterovs(StepSchedule(ScheduleType::ITERATION, 0.1, 0.5, 1000), 0.9))
//   .updater(Adam(MapSchedule::Builder(ScheduleType::EPOCH).add(0, 1e-3).add(10, 1e-4).build()))
//
// Each schedule type is a plain set of parameters under DL4J's names, with DL4J's formula as
// valueAt() (i: the iteration or the epoch, as scheduleType says, both counted from 0; the formulas
// are also tabulated in docs/training.md). A Schedule holds any one of them once its parameters
// are checked: constructing it from bad parameters is a ConfigError naming the schedule type and
// the parameter.
//
// MultiLayerNetwork evaluates an updater's schedules before every updater step, at its iteration
// and epoch counts (DL4J's IUpdater.getLearningRate(iteration, epoch)); ParallelWrapper's workers
// step on the root model's counts. Model files keep the schedules (in the configuration) and the
// counts, so a restored model continues on its schedule.
#include <cstdint>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace dl4cpp {

// What a schedule's i counts (DL4J's ScheduleType).
enum class ScheduleType { ITERATION, EPOCH };

namespace detail {
// The iteration or the epoch, as `type` says.
constexpr int64_t schedulePosition(ScheduleType type, int64_t iteration, int64_t epoch) {
  return type == ScheduleType::ITERATION ? iteration : epoch;
}
}  // namespace detail

// Each type below lists its parameters, after scheduleType, through fields(schedule, visit):
// visit(name, member) per parameter, in DL4J's order and under DL4J's JSON names. problem()
// describes the first invalid parameter ("" when all are valid).

// value = initialValue * decayRate^floor(i / step)
struct StepSchedule {
  static constexpr const char* kName = "StepSchedule";
  ScheduleType scheduleType = ScheduleType::ITERATION;
  double initialValue = 0, decayRate = 0, step = 0;

  StepSchedule() = default;
  StepSchedule(ScheduleType type, double initialValue, double decayRate, double step)
      : scheduleType(type), initialValue(initialValue), decayRate(decayRate), step(step) {}
  double valueAt(int64_t iteration, int64_t epoch) const;
  std::string problem() const;
  template <typename Self, typename Visit>
  static void fields(Self& s, Visit&& visit) {
    visit("initialValue", s.initialValue);
    visit("decayRate", s.decayRate);
    visit("step", s.step);
  }
};

// value = initialValue * gamma^i
struct ExponentialSchedule {
  static constexpr const char* kName = "ExponentialSchedule";
  ScheduleType scheduleType = ScheduleType::ITERATION;
  double initialValue = 0, gamma = 0;

  ExponentialSchedule() = default;
  ExponentialSchedule(ScheduleType type, double initialValue, double gamma)
      : scheduleType(type), initialValue(initialValue), gamma(gamma) {}
  double valueAt(int64_t iteration, int64_t epoch) const;
  std::string problem() const;
  template <typename Self, typename Visit>
  static void fields(Self& s, Visit&& visit) {
    visit("initialValue", s.initialValue);
    visit("gamma", s.gamma);
  }
};

// value = initialValue / (1 + gamma * i)^power
struct InverseSchedule {
  static constexpr const char* kName = "InverseSchedule";
  ScheduleType scheduleType = ScheduleType::ITERATION;
  double initialValue = 0, gamma = 0, power = 0;

  InverseSchedule() = default;
  InverseSchedule(ScheduleType type, double initialValue, double gamma, double power)
      : scheduleType(type), initialValue(initialValue), gamma(gamma), power(power) {}
  double valueAt(int64_t iteration, int64_t epoch) const;
  std::string problem() const;
  template <typename Self, typename Visit>
  static void fields(Self& s, Visit&& visit) {
    visit("initialValue", s.initialValue);
    visit("gamma", s.gamma);
    visit("power", s.power);
  }
};

// value = initialValue * (1 + i / maxIter)^power for i < maxIter, 0 from maxIter on. This is what
// DL4J's PolySchedule computes; its Javadoc writes the exponent as -power. A value that decays
// towards maxIter takes a negative power.
struct PolySchedule {
  static constexpr const char* kName = "PolySchedule";
  ScheduleType scheduleType = ScheduleType::ITERATION;
  double initialValue = 0, power = 0;
  int64_t maxIter = 0;

  PolySchedule() = default;
  PolySchedule(ScheduleType type, double initialValue, double power, int64_t maxIter)
      : scheduleType(type), initialValue(initialValue), power(power), maxIter(maxIter) {}
  double valueAt(int64_t iteration, int64_t epoch) const;
  std::string problem() const;
  template <typename Self, typename Visit>
  static void fields(Self& s, Visit&& visit) {
    visit("initialValue", s.initialValue);
    visit("power", s.power);
    visit("maxIter", s.maxIter);
  }
};

// value = initialValue / (1 + exp(-gamma * (i - stepSize)))
struct SigmoidSchedule {
  static constexpr const char* kName = "SigmoidSchedule";
  ScheduleType scheduleType = ScheduleType::ITERATION;
  double initialValue = 0, gamma = 0;
  int64_t stepSize = 0;

  SigmoidSchedule() = default;
  SigmoidSchedule(ScheduleType type, double initialValue, double gamma, int64_t stepSize)
      : scheduleType(type), initialValue(initialValue), gamma(gamma), stepSize(stepSize) {}
  double valueAt(int64_t iteration, int64_t epoch) const;
  std::string problem() const;
  template <typename Self, typename Visit>
  static void fields(Self& s, Visit&& visit) {
    visit("initialValue", s.initialValue);
    visit("gamma", s.gamma);
    visit("stepSize", s.stepSize);
  }
};

// Piecewise constant (MATLAB's 'piecewise' drop): value = values[k] for the largest key k <= i.
// The map must hold a value at 0.
struct MapSchedule {
  static constexpr const char* kName = "MapSchedule";
  ScheduleType scheduleType = ScheduleType::ITERATION;
  std::map<int64_t, double> values;

  MapSchedule() = default;
  MapSchedule(ScheduleType type, std::map<int64_t, double> values)
      : scheduleType(type), values(std::move(values)) {}
  double valueAt(int64_t iteration, int64_t epoch) const;
  std::string problem() const;
  template <typename Self, typename Visit>
  static void fields(Self& s, Visit&& visit) {
    visit("values", s.values);
  }

  class Builder;
};

// DL4J's MapSchedule.Builder: add(position, value) per piece.
class MapSchedule::Builder {
 public:
  explicit Builder(ScheduleType type) : schedule_(type, {}) {}
  Builder& add(int64_t position, double value) {
    schedule_.values[position] = value;
    return *this;
  }
  MapSchedule build() const { return schedule_; }

 private:
  MapSchedule schedule_;
};

// DL4J's one-cycle schedule (Smith, arXiv:1803.09820). With stepSize = floor((cycleLength -
// annealingLength) / 2), increment = (maxLearningRate - initialLearningRate) / stepSize and
// p = i mod cycleLength:
//   p < stepSize:      initialLearningRate + increment * p
//   p < 2 stepSize:    maxLearningRate - increment * (p - stepSize)
//   otherwise:         initialLearningRate * annealingDecay^(annealingLength - (cycleLength - p))
// (When cycleLength - annealingLength is odd, p = 2 stepSize falls in the last branch with
// exponent -1, as in DL4J.)
struct CycleSchedule {
  static constexpr const char* kName = "CycleSchedule";
  ScheduleType scheduleType = ScheduleType::ITERATION;
  double initialLearningRate = 0, maxLearningRate = 0;
  int64_t cycleLength = 0, annealingLength = 0;
  double annealingDecay = 0;

  CycleSchedule() = default;
  CycleSchedule(ScheduleType type, double initialLearningRate, double maxLearningRate,
                int64_t cycleLength, int64_t annealingLength, double annealingDecay)
      : scheduleType(type),
        initialLearningRate(initialLearningRate),
        maxLearningRate(maxLearningRate),
        cycleLength(cycleLength),
        annealingLength(annealingLength),
        annealingDecay(annealingDecay) {}
  // DL4J's short form: from a tenth of maxLearningRate, annealing over the last tenth of the cycle
  // (rounded) by a factor 0.1 per step.
  CycleSchedule(ScheduleType type, double maxLearningRate, int64_t cycleLength);
  double valueAt(int64_t iteration, int64_t epoch) const;
  std::string problem() const;
  template <typename Self, typename Visit>
  static void fields(Self& s, Visit&& visit) {
    visit("initialLearningRate", s.initialLearningRate);
    visit("maxLearningRate", s.maxLearningRate);
    visit("cycleLength", s.cycleLength);
    visit("annealingLength", s.annealingLength);
    visit("annealingDecay", s.annealingDecay);
  }
};

// Cosine annealing after a linear warm-up (DL4J's CosineWarmupSchedule, which counts iterations;
// here scheduleType may also say epochs):
//   i < warmupSteps:   maxLR * i / warmupSteps          (0 at i = 0, as in DL4J)
//   i >= totalSteps:   minLR
//   otherwise:         minLR + 0.5 (maxLR - minLR) (1 + cos(pi (i - warmupSteps) /
//                                                          (totalSteps - warmupSteps)))
struct CosineWarmupSchedule {
  static constexpr const char* kName = "CosineWarmupSchedule";
  ScheduleType scheduleType = ScheduleType::ITERATION;
  double maxLR = 0, minLR = 0;
  int64_t warmupSteps = 0, totalSteps = 0;

  CosineWarmupSchedule() = default;
  CosineWarmupSchedule(ScheduleType type, double maxLR, double minLR, int64_t warmupSteps,
                       int64_t totalSteps)
      : scheduleType(type),
        maxLR(maxLR),
        minLR(minLR),
        warmupSteps(warmupSteps),
        totalSteps(totalSteps) {}
  // DL4J's constructors, by iteration (minLR 0 when not given).
  CosineWarmupSchedule(double maxLR, double minLR, int64_t warmupSteps, int64_t totalSteps)
      : CosineWarmupSchedule(ScheduleType::ITERATION, maxLR, minLR, warmupSteps, totalSteps) {}
  CosineWarmupSchedule(double maxLR, int64_t warmupSteps, int64_t totalSteps)
      : CosineWarmupSchedule(ScheduleType::ITERATION, maxLR, 0.0, warmupSteps, totalSteps) {}
  double valueAt(int64_t iteration, int64_t epoch) const;
  std::string problem() const;
  template <typename Self, typename Visit>
  static void fields(Self& s, Visit&& visit) {
    visit("maxLR", s.maxLR);
    visit("minLR", s.minLR);
    visit("warmupSteps", s.warmupSteps);
    visit("totalSteps", s.totalSteps);
  }
};

namespace detail {
using ScheduleVariant =
    std::variant<StepSchedule, ExponentialSchedule, InverseSchedule, PolySchedule, SigmoidSchedule,
                 MapSchedule, CycleSchedule, CosineWarmupSchedule>;
// One of the schedule types above.
template <typename S>
concept ScheduleParameters = std::is_constructible_v<ScheduleVariant, S>;
}  // namespace detail

// Any one schedule, with valid parameters (DL4J's ISchedule).
class Schedule {
 public:
  using Variant = detail::ScheduleVariant;

  // From any schedule type, implicitly as DL4J's ISchedule: Sgd(StepSchedule(...)). ConfigError
  // "<type>: <problem>" when its parameters are invalid.
  template <detail::ScheduleParameters S>
  // NOLINTNEXTLINE(google-explicit-constructor)
  Schedule(S schedule) : schedule_(std::move(schedule)) {
    check();
  }

  double valueAt(int64_t iteration, int64_t epoch) const {
    return std::visit([&](const auto& s) { return s.valueAt(iteration, epoch); }, schedule_);
  }
  ScheduleType scheduleType() const {
    return std::visit([](const auto& s) { return s.scheduleType; }, schedule_);
  }
  const char* name() const {
    return std::visit([](const auto& s) { return s.kName; }, schedule_);
  }
  const Variant& variant() const { return schedule_; }

 private:
  void check() const;
  Variant schedule_;
};

}  // namespace dl4cpp

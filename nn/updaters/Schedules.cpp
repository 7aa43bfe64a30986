// The formulas are those of ND4J's org.nd4j.linalg.schedule classes, each named beside its
// valueAt(), evaluated in double as Java does (an int divided by a double, Math.pow, Math.exp,
// Math.cos); ND4J's int positions are int64_t here.
#include "nn/updaters/Schedules.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>
#include <numbers>

#include "nn/core/Error.h"

namespace dl4cpp {

namespace {

// The first parameter that breaks its rule, as "<parameter> must be <rule>, got <value>".
class FirstProblem {
 public:
  template <typename T>
  FirstProblem& require(bool ok, const char* parameter, const std::string& rule, T value) {
    if (!ok && text_.empty()) text_ = fmt::format("{} must be {}, got {}", parameter, rule, value);
    return *this;
  }
  // A value the schedule scales: finite and >= 0 (a rate, or a momentum).
  FirstProblem& rate(const char* parameter, double value) {
    return require(std::isfinite(value) && value >= 0, parameter, "finite and >= 0", value);
  }
  FirstProblem& positive(const char* parameter, double value) {
    return require(std::isfinite(value) && value > 0, parameter, "finite and > 0", value);
  }
  FirstProblem& finite(const char* parameter, double value) {
    return require(std::isfinite(value), parameter, "finite", value);
  }
  std::string text() const { return text_; }

 private:
  std::string text_;
};

double position(ScheduleType type, int64_t iteration, int64_t epoch) {
  return static_cast<double>(detail::schedulePosition(type, iteration, epoch));
}

}  // namespace

// ND4J's StepSchedule.
double StepSchedule::valueAt(int64_t iteration, int64_t epoch) const {
  return initialValue *
         std::pow(decayRate, std::floor(position(scheduleType, iteration, epoch) / step));
}

std::string StepSchedule::problem() const {
  return FirstProblem()
      .rate("initialValue", initialValue)
      .positive("decayRate", decayRate)
      .positive("step", step)
      .text();
}

// ND4J's ExponentialSchedule.
double ExponentialSchedule::valueAt(int64_t iteration, int64_t epoch) const {
  return initialValue * std::pow(gamma, position(scheduleType, iteration, epoch));
}

std::string ExponentialSchedule::problem() const {
  return FirstProblem().rate("initialValue", initialValue).positive("gamma", gamma).text();
}

// ND4J's InverseSchedule.
double InverseSchedule::valueAt(int64_t iteration, int64_t epoch) const {
  return initialValue / std::pow(1 + gamma * position(scheduleType, iteration, epoch), power);
}

std::string InverseSchedule::problem() const {
  return FirstProblem()
      .rate("initialValue", initialValue)
      .rate("gamma", gamma)  // 1 + gamma i stays >= 1
      .finite("power", power)
      .text();
}

// ND4J's PolySchedule.
double PolySchedule::valueAt(int64_t iteration, int64_t epoch) const {
  const int64_t i = detail::schedulePosition(scheduleType, iteration, epoch);
  if (i >= maxIter) return 0;
  return initialValue * std::pow(1 + static_cast<double>(i) / static_cast<double>(maxIter), power);
}

std::string PolySchedule::problem() const {
  return FirstProblem()
      .rate("initialValue", initialValue)
      .finite("power", power)
      .require(maxIter >= 1, "maxIter", ">= 1", maxIter)
      .text();
}

// ND4J's SigmoidSchedule.
double SigmoidSchedule::valueAt(int64_t iteration, int64_t epoch) const {
  const int64_t i = detail::schedulePosition(scheduleType, iteration, epoch);
  return initialValue / (1.0 + std::exp(-gamma * static_cast<double>(i - stepSize)));
}

std::string SigmoidSchedule::problem() const {
  return FirstProblem()
      .rate("initialValue", initialValue)
      .finite("gamma", gamma)
      .require(stepSize >= 0, "stepSize", ">= 0", stepSize)
      .text();
}

// ND4J's MapSchedule: the value at the largest key <= i.
double MapSchedule::valueAt(int64_t iteration, int64_t epoch) const {
  auto after = values.upper_bound(detail::schedulePosition(scheduleType, iteration, epoch));
  // Before the first key only where a caller set a negative count.
  return after == values.begin() ? after->second : std::prev(after)->second;
}

std::string MapSchedule::problem() const {
  if (values.empty()) return "values must hold a value at position 0 (the initial value), got none";
  if (values.begin()->first < 0)
    return fmt::format("positions must be >= 0, got {}", values.begin()->first);
  if (values.begin()->first != 0)
    return fmt::format(
        "values must hold a value at position 0 (the initial value), the first is at {}",
        values.begin()->first);
  FirstProblem problem;
  for (const auto& [at, value] : values)
    problem.require(std::isfinite(value) && value >= 0, "each value", "finite and >= 0",
                    fmt::format("{} at position {}", value, at));
  return problem.text();
}

CycleSchedule::CycleSchedule(ScheduleType type, double maxLearningRate, int64_t cycleLength)
    // Java's Math.round: floor(x + 0.5).
    : CycleSchedule(type, maxLearningRate * 0.1, maxLearningRate, cycleLength,
                    static_cast<int64_t>(std::floor(static_cast<double>(cycleLength) * 0.1 + 0.5)),
                    0.1) {}

// ND4J's CycleSchedule.
double CycleSchedule::valueAt(int64_t iteration, int64_t epoch) const {
  const int64_t stepSize = (cycleLength - annealingLength) / 2;
  const double increment = (maxLearningRate - initialLearningRate) / static_cast<double>(stepSize);
  const int64_t p = detail::schedulePosition(scheduleType, iteration, epoch) % cycleLength;
  if (p < stepSize) return initialLearningRate + increment * static_cast<double>(p);
  if (p < 2 * stepSize) return maxLearningRate - increment * static_cast<double>(p - stepSize);
  return initialLearningRate *
         std::pow(annealingDecay, static_cast<double>(annealingLength - (cycleLength - p)));
}

std::string CycleSchedule::problem() const {
  return FirstProblem()
      .rate("initialLearningRate", initialLearningRate)
      .require(std::isfinite(maxLearningRate) && maxLearningRate >= initialLearningRate,
               "maxLearningRate",
               fmt::format("finite and >= initialLearningRate ({})", initialLearningRate),
               maxLearningRate)
      .require(cycleLength >= 2, "cycleLength", ">= 2", cycleLength)
      // The rise and the fall take stepSize = (cycleLength - annealingLength) / 2 >= 1 each.
      .require(annealingLength >= 0 && annealingLength <= cycleLength - 2, "annealingLength",
               fmt::format("between 0 and cycleLength - 2 = {}", cycleLength - 2), annealingLength)
      .positive("annealingDecay", annealingDecay)
      .text();
}

// ND4J's CosineWarmupSchedule.
double CosineWarmupSchedule::valueAt(int64_t iteration, int64_t epoch) const {
  const int64_t i = detail::schedulePosition(scheduleType, iteration, epoch);
  if (i < warmupSteps) return maxLR * (static_cast<double>(i) / static_cast<double>(warmupSteps));
  if (i >= totalSteps) return minLR;
  const double progress =
      static_cast<double>(i - warmupSteps) / static_cast<double>(totalSteps - warmupSteps);
  return minLR + 0.5 * (maxLR - minLR) * (1.0 + std::cos(std::numbers::pi * progress));
}

std::string CosineWarmupSchedule::problem() const {
  return FirstProblem()
      .rate("maxLR", maxLR)
      .require(std::isfinite(minLR) && minLR >= 0 && minLR <= maxLR, "minLR",
               fmt::format("finite and between 0 and maxLR ({})", maxLR), minLR)
      .require(totalSteps >= 1, "totalSteps", ">= 1", totalSteps)
      .require(warmupSteps >= 0 && warmupSteps <= totalSteps, "warmupSteps",
               fmt::format("between 0 and totalSteps ({}): the warm-up is part of the schedule",
                           totalSteps),
               warmupSteps)
      .text();
}

void Schedule::check() const {
  const std::string problem = std::visit([](const auto& s) { return s.problem(); }, schedule_);
  if (!problem.empty()) throw ConfigError(std::string(name()) + ": " + problem);
}

}  // namespace dl4cpp

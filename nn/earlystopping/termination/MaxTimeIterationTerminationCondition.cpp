#include "nn/earlystopping/termination/MaxTimeIterationTerminationCondition.h"

#include <fmt/format.h>

#include "nn/core/Error.h"

namespace dl4cpp {

namespace {
double seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}
}  // namespace

MaxTimeIterationTerminationCondition::MaxTimeIterationTerminationCondition(
    std::chrono::steady_clock::duration maxTime, Clock clock)
    : maxTime_(maxTime), clock_(clock ? std::move(clock) : Clock(std::chrono::steady_clock::now)) {
  if (maxTime.count() <= 0)
    throw ConfigError(fmt::format(
        "MaxTimeIterationTerminationCondition: maxTime must be > 0, got {} s", seconds(maxTime)));
  start_ = clock_();
}

void MaxTimeIterationTerminationCondition::initialize() { start_ = clock_(); }

bool MaxTimeIterationTerminationCondition::terminate(double lastMiniBatchScore) {
  (void)lastMiniBatchScore;
  elapsed_ = clock_() - start_;
  return elapsed_ >= maxTime_;
}

std::string MaxTimeIterationTerminationCondition::reason() const {
  return fmt::format(
      "MaxTimeIterationTerminationCondition: {:.3f} s elapsed, the limit is {:.3f} s",
      seconds(elapsed_), seconds(maxTime_));
}

}  // namespace dl4cpp

#pragma once
// MaxTimeIterationTerminationCondition: ends training at the first iteration that finishes
// maxTime or more after the run started (DL4J's). The clock starts at initialize(), which
// EarlyStoppingTrainer::fit() calls before the first epoch. Evaluation time counts too.
#include <chrono>
#include <functional>

#include "nn/earlystopping/termination/IterationTerminationCondition.h"

namespace dl4cpp {

class MaxTimeIterationTerminationCondition : public IterationTerminationCondition {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // Returns the current time; injectable so tests can drive time. Empty: steady_clock::now.
  using Clock = std::function<TimePoint()>;

  // maxTime > 0, else ConfigError.
  explicit MaxTimeIterationTerminationCondition(std::chrono::steady_clock::duration maxTime,
                                                Clock clock = {});

  void initialize() override;
  bool terminate(double lastMiniBatchScore) override;
  std::string reason() const override;

 private:
  std::chrono::steady_clock::duration maxTime_;
  Clock clock_;
  TimePoint start_{};
  std::chrono::steady_clock::duration elapsed_{};
};

}  // namespace dl4cpp

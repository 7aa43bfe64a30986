#pragma once
// Helpers for the early-stopping tests: a score calculator that returns scores from a script (so a
// test decides exactly which epoch is best and when patience runs out), a clock that advances a
// fixed step per reading, and a small model on the CPU.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <vector>

#include "parallel/ParallelTestUtil.h"

namespace testutil {

class ScriptedScore : public dl4cpp::ScoreCalculator {
 public:
  explicit ScriptedScore(std::vector<double> scores, bool minimize = true)
      : scores_(std::move(scores)), minimize_(minimize) {}
  double calculateScore(dl4cpp::Model& model) override {
    (void)model;
    REQUIRE_MESSAGE(calls < scores_.size(), "the run asked for more scores than scripted");
    return scores_[calls++];
  }
  bool minimizeScore() const override { return minimize_; }

  size_t calls = 0;

 private:
  std::vector<double> scores_;
  bool minimize_;
};

// Each reading is `step` later than the previous one.
inline dl4cpp::MaxTimeIterationTerminationCondition::Clock steppingClock(
    std::chrono::steady_clock::duration step) {
  auto now = std::make_shared<std::chrono::steady_clock::time_point>();
  return [now, step] { return *now += step; };
}

// testutil::smallNet (6 -> 10 -> 3) with `updater`, initialised, on one CPU thread.
inline dl4cpp::MultiLayerNetwork smallModel(const dl4cpp::UpdaterParams& updater) {
  dl4cpp::MultiLayerNetwork m(smallNet(updater), dl4cpp::Device::cpu(), 1);
  m.init();
  return m;
}

}  // namespace testutil

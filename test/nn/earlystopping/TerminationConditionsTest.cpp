#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <chrono>
#include <limits>

#include "nn/earlystopping/EarlyStoppingTestUtil.h"

using namespace dl4cpp;

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

TEST_SUITE("nn/earlystopping") {
  TEST_CASE("MaxEpochsTerminationCondition: fires after the last allowed epoch, scored or not") {
    MaxEpochsTerminationCondition c(3);
    c.initialize();
    CHECK_FALSE(c.terminate(0, 1.0, true));
    CHECK_FALSE(c.terminate(1, std::nullopt, true));
    CHECK(c.terminate(2, std::nullopt, true));
    CHECK(c.reason() == "MaxEpochsTerminationCondition: 3 epochs reached");
    CHECK_THROWS_WITH_AS(MaxEpochsTerminationCondition(0),
                         "MaxEpochsTerminationCondition: maxEpochs must be >= 1, got 0",
                         ConfigError);
  }

  TEST_CASE("ScoreImprovementEpochTerminationCondition: patience counted from the best epoch") {
    ScoreImprovementEpochTerminationCondition c(2);
    c.initialize();
    CHECK_FALSE(c.terminate(0, 1.0, true));   // first: the best
    CHECK_FALSE(c.terminate(1, 0.9, true));   // better
    CHECK_FALSE(c.terminate(2, 0.95, true));  // 1 epoch without improvement
    CHECK(c.terminate(3, 0.9, true));         // equal is no improvement: 2 epochs
    CHECK(c.reason() ==
          "ScoreImprovementEpochTerminationCondition: no improvement for 2 epochs (best score 0.9 "
          "at epoch 1)");

    // initialize() forgets the previous run; higher is better when not minimizing.
    c.initialize();
    CHECK_FALSE(c.terminate(0, 0.5, false));
    CHECK_FALSE(c.terminate(1, 0.4, false));
    CHECK_FALSE(c.terminate(2, 0.6, false));
    CHECK_FALSE(c.terminate(3, 0.6, false));
    CHECK(c.terminate(4, 0.59, false));
    CHECK(c.reason() ==
          "ScoreImprovementEpochTerminationCondition: no improvement for 2 epochs (best score 0.6 "
          "at epoch 2)");
  }

  TEST_CASE("ScoreImprovementEpochTerminationCondition: minImprovement, unscored epochs, NaN") {
    ScoreImprovementEpochTerminationCondition c(3, 0.05);
    c.initialize();
    CHECK_FALSE(c.terminate(0, 1.0, true));
    CHECK_FALSE(c.terminate(1, 0.96, true));  // better, but not by more than 0.05
    CHECK_FALSE(c.terminate(2, 0.94, true));  // 0.06 better than 1.0: the new best
    CHECK_FALSE(c.terminate(3, std::nullopt, true));
    CHECK_FALSE(c.terminate(4, std::nullopt, true));
    CHECK_FALSE(c.terminate(5, std::nullopt, true));  // unscored epochs never fire it
    CHECK(c.terminate(6, 0.90, true));
    CHECK(c.reason() ==
          "ScoreImprovementEpochTerminationCondition: no improvement greater than 0.05 for 4 "
          "epochs (best score 0.94 at epoch 2)");

    // A NaN first score is the best only until a number comes; NaN never improves.
    ScoreImprovementEpochTerminationCondition n(1);
    n.initialize();
    CHECK_FALSE(n.terminate(0, kNaN, true));
    CHECK_FALSE(n.terminate(1, 5.0, true));
    CHECK(n.terminate(2, kNaN, true));

    CHECK_THROWS_AS(ScoreImprovementEpochTerminationCondition(0), ConfigError);
    CHECK_THROWS_WITH_AS(ScoreImprovementEpochTerminationCondition(1, -0.1),
                         "ScoreImprovementEpochTerminationCondition: minImprovement must be "
                         "finite and >= 0, got -0.1",
                         ConfigError);
    CHECK_THROWS_AS(ScoreImprovementEpochTerminationCondition(1, kNaN), ConfigError);
  }

  TEST_CASE("BestScoreEpochTerminationCondition: fires once the score beats the target") {
    BestScoreEpochTerminationCondition c(0.5);
    CHECK_FALSE(c.terminate(0, 0.6, true));
    CHECK_FALSE(c.terminate(1, 0.5, true));
    CHECK_FALSE(c.terminate(2, std::nullopt, true));
    CHECK(c.terminate(3, 0.4, true));
    CHECK(c.reason() ==
          "BestScoreEpochTerminationCondition: score 0.4 at epoch 3 is better than the target 0.5");
    CHECK_FALSE(c.terminate(4, 0.4, false));
    CHECK(c.terminate(5, 0.6, false));
    CHECK_THROWS_AS(BestScoreEpochTerminationCondition{kNaN}, ConfigError);
  }

  TEST_CASE("MaxTimeIterationTerminationCondition: time counts from initialize()") {
    MaxTimeIterationTerminationCondition c(std::chrono::seconds(5),
                                           testutil::steppingClock(std::chrono::seconds(1)));
    c.initialize();
    for (int i = 1; i < 5; ++i) CHECK_FALSE(c.terminate(0.1));
    CHECK(c.terminate(0.1));  // 5 s after initialize()
    CHECK(c.reason() ==
          "MaxTimeIterationTerminationCondition: 5.000 s elapsed, the limit is 5.000 s");
    c.initialize();
    CHECK_FALSE(c.terminate(0.1));
    CHECK_THROWS_WITH_AS(MaxTimeIterationTerminationCondition(std::chrono::seconds(0)),
                         "MaxTimeIterationTerminationCondition: maxTime must be > 0, got 0 s",
                         ConfigError);
  }

  TEST_CASE("InvalidScoreIterationTerminationCondition: NaN and infinite scores") {
    InvalidScoreIterationTerminationCondition c;
    CHECK_FALSE(c.terminate(1e30));
    CHECK(c.terminate(kInf));
    CHECK(c.reason() == "InvalidScoreIterationTerminationCondition: score is inf");
    CHECK(c.terminate(kNaN));
    CHECK(c.reason() == "InvalidScoreIterationTerminationCondition: score is nan");
  }

  TEST_CASE("MaxScoreIterationTerminationCondition: a score above the maximum") {
    MaxScoreIterationTerminationCondition c(10);
    CHECK_FALSE(c.terminate(10));
    CHECK_FALSE(c.terminate(kNaN));  // InvalidScoreIterationTerminationCondition's business
    CHECK(c.terminate(10.5));
    CHECK(c.reason() == "MaxScoreIterationTerminationCondition: score 10.5 exceeds the maximum 10");
    CHECK_THROWS_AS(MaxScoreIterationTerminationCondition{kNaN}, ConfigError);
  }
}

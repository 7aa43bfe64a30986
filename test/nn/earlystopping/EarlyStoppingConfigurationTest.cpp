#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "nn/earlystopping/EarlyStoppingTestUtil.h"

using namespace dl4cpp;

namespace {
EarlyStoppingConfiguration::Builder valid() {
  EarlyStoppingConfiguration::Builder b;
  b.epochTerminationConditions({std::make_shared<MaxEpochsTerminationCondition>(2)})
      .scoreCalculator(std::make_shared<testutil::ScriptedScore>(std::vector<double>{}));
  return b;
}
}  // namespace

TEST_SUITE("nn/earlystopping") {
  TEST_CASE("EarlyStoppingConfiguration: defaults") {
    const EarlyStoppingConfiguration conf = valid().build();
    CHECK(conf.evaluateEveryNEpochs() == 1);
    CHECK_FALSE(conf.saveLastModel());
    CHECK(dynamic_cast<InMemoryModelSaver*>(&conf.modelSaver()) != nullptr);
    CHECK(conf.iterationTerminationConditions().empty());
    // Iteration conditions alone are a way to end training too.
    CHECK_NOTHROW(
        EarlyStoppingConfiguration::Builder()
            .iterationTerminationConditions(
                {std::make_shared<MaxTimeIterationTerminationCondition>(std::chrono::seconds(1))})
            .scoreCalculator(std::make_shared<testutil::ScriptedScore>(std::vector<double>{}))
            .build());
  }

  TEST_CASE("EarlyStoppingConfiguration: a bad configuration is a ConfigError naming the fault") {
    CHECK_THROWS_WITH_AS(valid().epochTerminationConditions({}).build(),
                         doctest::Contains("no termination condition"), ConfigError);
    CHECK_THROWS_WITH_AS(valid()
                             .epochTerminationConditions(
                                 {std::make_shared<MaxEpochsTerminationCondition>(2), nullptr})
                             .build(),
                         "EarlyStoppingConfiguration: epochTerminationConditions[1] is null",
                         ConfigError);
    CHECK_THROWS_WITH_AS(valid().iterationTerminationConditions({nullptr}).build(),
                         "EarlyStoppingConfiguration: iterationTerminationConditions[0] is null",
                         ConfigError);
    CHECK_THROWS_WITH_AS(valid().scoreCalculator(nullptr).build(),
                         doctest::Contains("the scoreCalculator is null"), ConfigError);
    CHECK_THROWS_WITH_AS(valid().modelSaver(nullptr).build(),
                         "EarlyStoppingConfiguration: the modelSaver is null", ConfigError);
    CHECK_THROWS_WITH_AS(valid().evaluateEveryNEpochs(0).build(),
                         "EarlyStoppingConfiguration: evaluateEveryNEpochs must be >= 1, got 0",
                         ConfigError);
  }
}

#include "ui/StatsJson.h"

#include <nlohmann/json.hpp>

namespace dl4cpp {

std::string statsJson(const StatsSnapshot& stats) {
  nlohmann::json iterations = nlohmann::json::array();
  for (const IterationRecord& r : stats.iterations)
    iterations.push_back({{"iteration", r.iteration},
                          {"epoch", r.epoch},
                          {"seconds", r.seconds},
                          {"score", r.score},
                          {"examples", r.examples},
                          {"examplesPerSecond", r.examplesPerSecond},
                          {"workerExamplesPerSecond", r.workerExamplesPerSecond},
                          {"learningRates", r.learningRates},
                          {"averagingShare", r.averagingShare},
                          {"barrierShare", r.barrierShare},
                          {"dataWaitShare", r.dataWaitShare}});
  nlohmann::json ratios = nlohmann::json::array();
  for (const UpdateRatioRecord& r : stats.updateRatios)
    ratios.push_back({{"iteration", r.iteration},
                      {"epoch", r.epoch},
                      {"seconds", r.seconds},
                      {"span", r.span},
                      {"ratios", r.ratios}});
  nlohmann::json validation = nlohmann::json::array();
  for (const ValidationRecord& r : stats.validation)
    validation.push_back(
        {{"iteration", r.iteration}, {"epoch", r.epoch}, {"accuracy", r.accuracy}});
  const nlohmann::json out = {{"revision", stats.revision},
                              {"layers", stats.layerNames},
                              {"iterations", std::move(iterations)},
                              {"updateRatios", std::move(ratios)},
                              {"validation", std::move(validation)}};
  // nlohmann writes non-finite numbers (kNoValue) as null. Layer names come from the user: replace
  // invalid UTF-8 rather than throw.
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace dl4cpp

#include "nn/listeners/ScoreIterationListener.h"

#include <fmt/format.h>

#include <string>

#include "nn/core/Error.h"

namespace dl4cpp {

ScoreIterationListener::ScoreIterationListener(int printIterations, std::ostream& out)
    : printIterations_(printIterations), out_(out), multiples_(printIterations) {
  if (printIterations < 1)
    throw ConfigError(fmt::format("ScoreIterationListener: printIterations must be >= 1, got {}",
                                  printIterations));
}

void ScoreIterationListener::iterationDone(const Model& model, const IterationInfo& info) {
  (void)model;
  if (!multiples_.reached(info.iteration)) return;
  // Shortest round-trip form, with ".0" on integral values as Java prints doubles ("3.0").
  std::string score = fmt::format("{}", info.score);
  if (score.find_first_of(".eEn") == std::string::npos) score += ".0";  // n: nan, inf
  out_ << fmt::format("Score at iteration {} is {}\n", info.iteration, score);
  out_.flush();
}

}  // namespace dl4cpp

#include <dl4cpp/nn/Error.h>
#include <dl4cpp/nn/listeners/ScoreIterationListener.h>
#include <fmt/format.h>

#include <string>

namespace dl4cpp {

ScoreIterationListener::ScoreIterationListener(int printIterations, std::ostream& out)
    : printIterations_(printIterations), out_(out) {
  if (printIterations < 1)
    throw ConfigError(fmt::format("ScoreIterationListener: printIterations must be >= 1, got {}",
                                  printIterations));
}

void ScoreIterationListener::iterationDone(const MultiLayerNetwork& model,
                                           const IterationInfo& info) {
  (void)model;
  // A multiple of printIterations lies in (lastIteration_, info.iteration]. For iterations that
  // advance by one this is exactly info.iteration % printIterations_ == 0, which is also the rule
  // when the count went backwards (a new fit() that restarted it).
  const int64_t it = info.iteration;
  const bool crossed = it > lastIteration_
                           ? it / printIterations_ != lastIteration_ / printIterations_
                           : it % printIterations_ == 0;
  lastIteration_ = info.iteration;
  if (!crossed) return;
  // Shortest round-trip form, with ".0" on integral values as Java prints doubles ("3.0").
  std::string score = fmt::format("{}", info.score);
  if (score.find_first_of(".eEn") == std::string::npos) score += ".0";  // n: nan, inf
  out_ << fmt::format("Score at iteration {} is {}\n", info.iteration, score);
  out_.flush();
}

}  // namespace dl4cpp

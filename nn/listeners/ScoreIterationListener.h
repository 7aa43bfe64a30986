#pragma once
// ScoreIterationListener: DL4J's listener that logs the score every n iterations, as
//
//   Score at iteration 10 is 0.5123456789
//
// one line per report, written to `out` (std::cout by default) and flushed. A line is written
// whenever IterationInfo::iteration reaches a multiple of printIterations; when iterations advance
// several at a time (ParallelWrapper reports once per averaging round) a line is written for each
// report that crosses a multiple, with the iteration and score of that report. The score is
// printed in the shortest form that round-trips, with ".0" on integral values ("3.0"), close to
// Java's Double.toString.
//
// Runs on the fit() thread like every listener; the stream must outlive the listener.
#include <iostream>

#include "nn/api/TrainingListener.h"
#include "nn/listeners/IterationMultiples.h"

namespace dl4cpp {

class ScoreIterationListener : public TrainingListener {
 public:
  // printIterations >= 1, else ConfigError.
  explicit ScoreIterationListener(int printIterations = 10, std::ostream& out = std::cout);

  void iterationDone(const Model& model, const IterationInfo& info) override;

  int printIterations() const { return printIterations_; }

 private:
  int printIterations_;
  std::ostream& out_;
  IterationMultiples multiples_;
};

}  // namespace dl4cpp

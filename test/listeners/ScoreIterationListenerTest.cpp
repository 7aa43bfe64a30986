#include <doctest/doctest.h>

#include <sstream>

#include "nn/core/Error.h"
#include "nn/listeners/ScoreIterationListener.h"

using namespace dl4cpp;

namespace {

// Listeners receive the model only by reference and must not use it; Model is
// incomplete here, so the tests pass a reference that is never dereferenced.
const Model& noModel() {
  alignas(64) static const char storage[64] = {};
  return *reinterpret_cast<const Model*>(storage);
}

IterationInfo at(int64_t iteration, double score) {
  IterationInfo info;
  info.iteration = iteration;
  info.score = score;
  return info;
}

}  // namespace

TEST_SUITE("listeners") {
  TEST_CASE("ScoreIterationListener: prints every n iterations in DL4J's wording") {
    std::ostringstream out;
    ScoreIterationListener listener(3, out);
    CHECK(listener.printIterations() == 3);
    for (int i = 1; i <= 7; ++i) listener.iterationDone(noModel(), at(i, 0.5 * i));
    CHECK(out.str() ==
          "Score at iteration 3 is 1.5\n"
          "Score at iteration 6 is 3.0\n");
  }

  TEST_CASE("ScoreIterationListener: iterations advancing in steps still report") {
    // ParallelWrapper reports once per averaging round: 3, 6, 9, 12, ... With n = 10 the
    // reports that cross 10 and 20 print.
    std::ostringstream out;
    ScoreIterationListener listener(10, out);
    for (int i = 3; i <= 24; i += 3) listener.iterationDone(noModel(), at(i, 0.25));
    CHECK(out.str() ==
          "Score at iteration 12 is 0.25\n"
          "Score at iteration 21 is 0.25\n");
  }

  TEST_CASE("ScoreIterationListener: a restarted iteration count and bad settings") {
    std::ostringstream out;
    ScoreIterationListener listener(2, out);
    listener.iterationDone(noModel(), at(4, 1.0));
    listener.iterationDone(noModel(), at(1, 2.0));  // a new fit(): back to %-rule
    listener.iterationDone(noModel(), at(2, 0.123456789));
    CHECK(out.str() ==
          "Score at iteration 4 is 1.0\n"
          "Score at iteration 2 is 0.123456789\n");
    CHECK_THROWS_AS(ScoreIterationListener(0, out), ConfigError);
  }
}

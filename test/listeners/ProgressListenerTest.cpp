#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "nn/core/Error.h"
#include "nn/listeners/ProgressListener.h"

using namespace dl4cpp;
using std::chrono::milliseconds;

namespace {

// See ScoreIterationListenerTest: a model reference that is never dereferenced.
const Model& noModel() {
  alignas(64) static const char storage[64] = {};
  return *reinterpret_cast<const Model*>(storage);
}

// A clock the test moves by hand.
struct FakeClock {
  ProgressListener::TimePoint now{};
  ProgressListener::Clock fn() {
    return [this] { return now; };
  }
  void set(milliseconds t) { now = ProgressListener::TimePoint{} + t; }
};

IterationInfo progress(int epoch, int64_t done, int64_t total, double score) {
  IterationInfo info;
  info.epoch = epoch;
  info.examplesInEpoch = done;
  info.examplesPerEpoch = total;
  info.score = score;
  return info;
}

std::vector<std::string> splitLines(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

TEST_SUITE("listeners") {
  TEST_CASE("ProgressListener: formatLine exact output") {
    // 28160/60000 = 46.9%: floor(0.469 * 20) = 9 '=' then '>', percent rounds to 47,
    // ETA = 31840 / 3512 = 9.07 s -> 0:09.
    CHECK(
        ProgressListener::formatLine(1, 28160, 60000, 3512, 0.214, 20) ==
        "epoch 1 [=========>          ]  47% 28160/60000  3512 samples/s  ETA 0:09  score 0.2140");
    // Done: full bar, no head, ETA 0:00.
    CHECK(
        ProgressListener::formatLine(2, 60000, 60000, 4000.4, 0.1, 20) ==
        "epoch 2 [====================] 100% 60000/60000  4000 samples/s  ETA 0:00  score 0.1000");
    // Nothing done, no rate yet: head only, unknown ETA.
    CHECK(ProgressListener::formatLine(1, 0, 60000, 0, 2.302585, 20) ==
          "epoch 1 [>                   ]   0% 0/60000  0 samples/s  ETA -:--  score 2.3026");
    // 99.6% is shown as 99% until the epoch is really done; 240 / 1000 s rounds to 0:00.
    CHECK(
        ProgressListener::formatLine(1, 59760, 60000, 1000, 0.5, 20) ==
        "epoch 1 [===================>]  99% 59760/60000  1000 samples/s  ETA 0:00  score 0.5000");
    // Long ETA and a narrow bar: 50/100 at 0.01 samples/s -> 5000 s = 1:23:20.
    CHECK(ProgressListener::formatLine(5, 50, 100, 0.01, 1.0, 4) ==
          "epoch 5 [==> ]  50% 50/100  0 samples/s  ETA 1:23:20  score 1.0000");
    // Unknown epoch size: count only.
    CHECK(ProgressListener::formatLine(3, 28160, -1, 3512.4, 0.5, 20) ==
          "epoch 3 28160 samples  3512 samples/s  score 0.5000");
  }

  TEST_CASE("ProgressListener: formatDuration") {
    CHECK(ProgressListener::formatDuration(0) == "0:00");
    CHECK(ProgressListener::formatDuration(9.4) == "0:09");
    CHECK(ProgressListener::formatDuration(725) == "12:05");
    CHECK(ProgressListener::formatDuration(3723) == "1:02:03");
    CHECK(ProgressListener::formatDuration(-1) == "-:--");
  }

  TEST_CASE("ProgressListener: line mode writes one line per 10% and no duplicate at the end") {
    std::ostringstream out;
    FakeClock clock;
    ProgressListener listener(out, std::nullopt, clock.fn());
    CHECK(listener.lineMode());  // not a terminal: lines by default
    clock.set(milliseconds(0));
    listener.onEpochStart(noModel(), 0);
    // 20 minibatches of 50 over 1000 examples, one every 0.5 s: 100 samples/s throughout.
    for (int i = 1; i <= 20; ++i) {
      clock.set(milliseconds(500 * i));
      listener.iterationDone(noModel(), progress(0, 50 * i, 1000, 1.0 / i));
    }
    clock.set(milliseconds(10100));
    listener.onEpochEnd(noModel(), 0);

    const std::string s = out.str();
    CHECK(s.find('\r') == std::string::npos);
    const auto lines = splitLines(s);
    REQUIRE(lines.size() == 10);
    // First line at 100/1000 (iteration 2, t = 1 s): ETA 900 / 100 = 9 s.
    CHECK(lines[0] ==
          "epoch 1 [==>                 ]  10% 100/1000  100 samples/s  ETA 0:09  score 0.5000");
    CHECK(lines[9] ==
          "epoch 1 [====================] 100% 1000/1000  100 samples/s  ETA 0:00  score 0.0500");
  }

  TEST_CASE("ProgressListener: line mode with unknown epoch size prints every 10 s") {
    std::ostringstream out;
    FakeClock clock;
    ProgressListener listener(out, true, clock.fn());
    clock.set(milliseconds(0));
    listener.onEpochStart(noModel(), 1);
    for (int t : {4, 8, 12, 16, 20}) {
      clock.set(milliseconds(1000 * t));
      listener.iterationDone(noModel(), progress(1, 100 * t, -1, 0.25));
    }
    clock.set(milliseconds(25000));
    listener.onEpochEnd(noModel(), 1);
    // Prints at 12 s (10 s after the epoch start passed), not at 16 s or 20 s (less than 10 s
    // after the last line), then the final state at epoch end: 2000 / 25 s = 80 samples/s.
    CHECK(out.str() ==
          "epoch 2 1200 samples  100 samples/s  score 0.2500\n"
          "epoch 2 2000 samples  80 samples/s  score 0.2500\n");
  }

  TEST_CASE("ProgressListener: terminal mode rewrites one line at most every 100 ms") {
    std::ostringstream out;
    FakeClock clock;
    ProgressListener listener(out, false, clock.fn());
    CHECK_FALSE(listener.lineMode());
    clock.set(milliseconds(0));
    listener.onEpochStart(noModel(), 0);
    // One minibatch of 100 every 50 ms: prints at 50 ms (first), 150 ms, 250 ms.
    for (int i = 1; i <= 6; ++i) {
      clock.set(milliseconds(50 * i));
      listener.iterationDone(noModel(), progress(0, 100 * i, 600, 0.5));
    }
    clock.set(milliseconds(300));
    listener.onEpochEnd(noModel(), 0);

    const std::string s = out.str();
    CHECK(std::count(s.begin(), s.end(), '\r') == 4);
    CHECK(std::count(s.begin(), s.end(), '\n') == 1);
    // The first update: 100 examples in 50 ms = 2000 samples/s, 500 left -> 0.25 s.
    CHECK(s.rfind("\repoch 1 [===>                ]  17% 100/600  2000 samples/s  ETA 0:00  score "
                  "0.5000\r",
                  0) == 0);
    const std::string last =
        "\repoch 1 [====================] 100% 600/600  2000 samples/s  ETA 0:00  score 0.5000\n";
    REQUIRE(s.size() >= last.size());
    CHECK(s.substr(s.size() - last.size()) == last);
  }

  TEST_CASE("ProgressListener: a shorter terminal line erases the longer one") {
    std::ostringstream out;
    FakeClock clock;
    ProgressListener listener(out, false, clock.fn());
    clock.set(milliseconds(0));
    listener.onEpochStart(noModel(), 0);
    clock.set(milliseconds(1));
    listener.iterationDone(noModel(), progress(0, 100, -1, 1.0));  // 100000 samples/s
    clock.set(milliseconds(1000));
    listener.iterationDone(noModel(), progress(0, 200, -1, 1.0));  // 200 samples/s
    CHECK(out.str() ==
          "\repoch 1 100 samples  100000 samples/s  score 1.0000"
          "\repoch 1 200 samples  200 samples/s  score 1.0000   ");
  }

  TEST_CASE("ProgressListener: epochs without onEpochStart and bad settings") {
    std::ostringstream out;
    FakeClock clock;
    ProgressListener listener(out, true, clock.fn());
    clock.set(milliseconds(1000));
    listener.iterationDone(noModel(), progress(0, 50, 100, 0.5));
    clock.set(milliseconds(2000));
    listener.iterationDone(noModel(), progress(1, 50, 100, 0.5));  // a new epoch, implicitly
    const auto lines = splitLines(out.str());
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].rfind("epoch 1 [", 0) == 0);
    CHECK(lines[1].rfind("epoch 2 [", 0) == 0);
    CHECK_THROWS_AS(ProgressListener(out, true, {}, 0), ConfigError);
  }
}

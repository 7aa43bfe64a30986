#pragma once
// ProgressListener: a progress bar for training, one per epoch:
//
//   epoch 1 [=========>          ]  47% 28160/60000  3512 samples/s  ETA 0:09  score 0.2140
//
// Epochs are shown 1-based (IterationInfo::epoch + 1). Progress is IterationInfo::examplesInEpoch
// out of examplesPerEpoch; when the iterator cannot say how many examples an epoch has
// (examplesPerEpoch <= 0) the bar, percentage and ETA are left out:
//
//   epoch 1 28160 samples  3512 samples/s  score 0.2140
//
// Samples/s is the epoch's average so far: examplesInEpoch over the time since onEpochStart
// (or since the first iteration of the epoch, if onEpochStart was not called). ETA is the rest of
// the epoch at that rate.
//
// Two modes:
//  - terminal: one line rewritten in place with '\r', at most every 100 ms, and a final line
//    ended by '\n' at onEpochEnd;
//  - lines: a new line each time progress passes another 10% of the epoch (every 10 s when the
//    epoch size is unknown), plus a final line at onEpochEnd unless the last line already showed
//    the end state. Readable in CI logs and files.
// By default terminal mode is used when `out` is std::cout, std::cerr or std::clog and that
// stream's file descriptor is a terminal (isatty); any other stream gets lines.
//
// Runs on the fit() thread like every listener; `out` must outlive the listener.
#include <chrono>
#include <cstdint>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include "nn/api/TrainingListener.h"

namespace dl4cpp {

class ProgressListener : public TrainingListener {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // Returns the current time; injectable so tests can drive time. Empty: steady_clock::now.
  using Clock = std::function<TimePoint()>;

  static constexpr int kDefaultBarWidth = 20;
  static constexpr std::chrono::milliseconds kTerminalInterval{100};
  static constexpr std::chrono::seconds kLineIntervalUnknownTotal{10};

  // lineMode: true forces line mode, false forces terminal mode, nullopt detects (see above).
  explicit ProgressListener(std::ostream& out = std::cerr, std::optional<bool> lineMode = {},
                            Clock clock = {}, int barWidth = kDefaultBarWidth);

  void onEpochStart(const Model& model, int epoch) override;
  void onEpochEnd(const Model& model, int epoch) override;
  void iterationDone(const Model& model, const IterationInfo& info) override;

  bool lineMode() const { return lineMode_; }

  // One progress line, without '\r' or '\n'. `epoch` is printed as given; total <= 0 means
  // unknown. The bar has barWidth cells: floor(done / total * barWidth) '=' then a '>' head
  // (none when full). The percentage is rounded but shows 100 only when done >= total. Samples/s
  // is rounded to an integer; ETA is (total - done) / samplesPerSec rounded to whole seconds, as
  // m:ss or h:mm:ss, or "-:--" when samplesPerSec is not positive; score has 4 decimals.
  static std::string formatLine(int epoch, int64_t done, int64_t total, double samplesPerSec,
                                double score, int barWidth = kDefaultBarWidth);
  // "0:09", "12:05", "1:02:03"; negative or non-finite seconds give "-:--".
  static std::string formatDuration(double seconds);

 private:
  void beginEpoch(int epoch);
  std::string currentLine(TimePoint now) const;
  void writeTerminal(const std::string& line, bool final);
  void writeLine(const std::string& line);

  std::ostream& out_;
  bool lineMode_;
  Clock clock_;
  int barWidth_;

  // State of the current epoch.
  bool inEpoch_ = false;
  int epoch_ = 0;
  TimePoint epochStart_{};
  std::optional<IterationInfo> last_;  // latest iteration of this epoch
  TimePoint lastPrint_{};
  bool printedAny_ = false;
  int64_t lastDecile_ = 0;        // line mode: tenths of the epoch already reported
  int64_t lastPrintedDone_ = -1;  // examplesInEpoch shown by the last line written
  size_t lastLen_ = 0;            // terminal mode: length of the line now on screen (0: none)
};

}  // namespace dl4cpp

#include "nn/listeners/ProgressListener.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include "nn/core/Error.h"

#ifdef _WIN32
#include <io.h>
#define DL4CPP_ISATTY _isatty
#define DL4CPP_FILENO _fileno
#else
#include <unistd.h>
#define DL4CPP_ISATTY isatty
#define DL4CPP_FILENO fileno
#endif

namespace dl4cpp {

namespace {

bool isTerminal(const std::ostream& out) {
  if (&out == &std::cout) return DL4CPP_ISATTY(DL4CPP_FILENO(stdout)) != 0;
  if (&out == &std::cerr || &out == &std::clog) return DL4CPP_ISATTY(DL4CPP_FILENO(stderr)) != 0;
  return false;
}

}  // namespace

ProgressListener::ProgressListener(std::ostream& out, std::optional<bool> lineMode, Clock clock,
                                   int barWidth)
    : out_(out),
      lineMode_(lineMode.has_value() ? *lineMode : !isTerminal(out)),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })),
      barWidth_(barWidth) {
  if (barWidth < 1)
    throw ConfigError(fmt::format("ProgressListener: barWidth must be >= 1, got {}", barWidth));
}

std::string ProgressListener::formatDuration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "-:--";
  const auto total = static_cast<int64_t>(std::llround(seconds));
  const int64_t h = total / 3600, m = (total / 60) % 60, s = total % 60;
  if (h > 0) return fmt::format("{}:{:02}:{:02}", h, m, s);
  return fmt::format("{}:{:02}", m, s);
}

std::string ProgressListener::formatLine(int epoch, int64_t done, int64_t total,
                                         double samplesPerSec, double score, int barWidth) {
  const double rate = std::isfinite(samplesPerSec) ? std::max(samplesPerSec, 0.0) : 0.0;
  if (total <= 0)
    return fmt::format("epoch {} {} samples  {:.0f} samples/s  score {:.4f}", epoch, done, rate,
                       score);

  const bool finished = done >= total;
  const double frac = std::clamp(static_cast<double>(done) / static_cast<double>(total), 0.0, 1.0);
  const int width = std::max(barWidth, 1);
  const int filled = std::min(width, static_cast<int>(std::floor(frac * width)));
  std::string bar(static_cast<size_t>(filled), '=');
  if (filled < width) {
    bar += '>';
    bar.append(static_cast<size_t>(width - filled - 1), ' ');
  }
  const int64_t percent = finished ? 100 : std::min<int64_t>(99, std::llround(frac * 100));
  const std::string eta =
      finished ? formatDuration(0)
               : (rate > 0 ? formatDuration(static_cast<double>(total - done) / rate) : "-:--");
  return fmt::format("epoch {} [{}] {:>3}% {}/{}  {:.0f} samples/s  ETA {}  score {:.4f}", epoch,
                     bar, percent, done, total, rate, eta, score);
}

void ProgressListener::beginEpoch(int epoch) {
  if (!lineMode_ && lastLen_ > 0) {  // a terminal line left unfinished by a previous epoch
    out_ << '\n';
    out_.flush();
  }
  inEpoch_ = true;
  epoch_ = epoch;
  epochStart_ = clock_();
  last_.reset();
  printedAny_ = false;
  lastDecile_ = 0;
  lastPrintedDone_ = -1;
  lastLen_ = 0;
}

void ProgressListener::onEpochStart(const Model& model, int epoch) {
  (void)model;
  beginEpoch(epoch);
}

std::string ProgressListener::currentLine(TimePoint now) const {
  const double secs = std::chrono::duration<double>(now - epochStart_).count();
  const double rate = secs > 0 ? static_cast<double>(last_->examplesInEpoch) / secs : 0.0;
  return formatLine(epoch_ + 1, last_->examplesInEpoch, last_->examplesPerEpoch, rate, last_->score,
                    barWidth_);
}

void ProgressListener::writeTerminal(const std::string& line, bool final) {
  std::string text = "\r" + line;
  if (line.size() < lastLen_) text.append(lastLen_ - line.size(), ' ');  // erase the old tail
  if (final) text += '\n';
  out_ << text;
  out_.flush();
  lastLen_ = final ? 0 : line.size();
}

void ProgressListener::writeLine(const std::string& line) {
  out_ << line << '\n';
  out_.flush();
}

void ProgressListener::iterationDone(const Model& model, const IterationInfo& info) {
  (void)model;
  if (!inEpoch_ || info.epoch != epoch_) beginEpoch(info.epoch);
  last_ = info;
  const TimePoint now = clock_();

  bool print;
  if (!lineMode_) {
    print = !printedAny_ || now - lastPrint_ >= kTerminalInterval;
  } else if (info.examplesPerEpoch > 0) {
    const int64_t decile = std::min<int64_t>(10, info.examplesInEpoch * 10 / info.examplesPerEpoch);
    print = decile > lastDecile_;
    if (print) lastDecile_ = decile;
  } else {
    print = printedAny_ ? now - lastPrint_ >= kLineIntervalUnknownTotal
                        : now - epochStart_ >= kLineIntervalUnknownTotal;
  }
  if (!print) return;

  const std::string line = currentLine(now);
  if (lineMode_)
    writeLine(line);
  else
    writeTerminal(line, false);
  printedAny_ = true;
  lastPrint_ = now;
  lastPrintedDone_ = info.examplesInEpoch;
}

void ProgressListener::onEpochEnd(const Model& model, int epoch) {
  (void)model;
  (void)epoch;
  if (inEpoch_ && last_) {
    const std::string line = currentLine(clock_());
    if (!lineMode_)
      writeTerminal(line, true);
    else if (lastPrintedDone_ != last_->examplesInEpoch)
      writeLine(line);
  }
  inEpoch_ = false;
  last_.reset();
  lastLen_ = 0;
}

}  // namespace dl4cpp

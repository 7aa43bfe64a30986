#pragma once
// StatsListener: records a training run into a StatsStorage (DL4J's StatsListener), for the live
// training page (ui/UIServer.h) and the HTML report (HtmlReport.h).
//
//   auto storage = std::make_shared<dl4cpp::StatsStorage>();
//   model.setListeners({std::make_shared<dl4cpp::StatsListener>(storage)});   // or a wrapper's
//
// At every call (an iteration of a single model, from fit(iterator) or fit(DataSet) alike; an
// averaging round of ParallelWrapper) it records an IterationRecord:
//  - score: IterationInfo::score;
//  - learningRates: model.getLearningRate(layer) times IterationInfo::learningRateScale, per layer,
//    as the model reports it at the call (its schedule at the count of iterations completed);
//  - examplesPerSecond: the round's examples over RoundTiming::wall for ParallelWrapper; for a
//    single model the iteration's examples over the time since the previous call (or since
//    onEpochStart); workerExamplesPerSecond: each worker's examples over its compute time;
//  - the averaging, barrier-wait and data-wait shares of RoundTiming::wall (ParallelWrapper).
//
// Every reportEvery iterations (when the iteration count reaches a multiple of reportEvery, also
// when a round steps across one) it records each layer's update:parameter ratio: mean |update| /
// mean |parameter| over the layer's parameters, DL4J's chart for choosing learning rates (around
// 1e-3 is healthy). The update is the parameters' change since a host copy taken at the call
// before the report: one iteration for a single model, one averaging round for ParallelWrapper
// (UpdateRatioRecord::span says how many iterations). The copy is taken when the next call is
// expected to report (iterations advancing as in the last call), so it costs one copy of the
// parameters per report; a report the copy did not precede (a round longer than the last)
// records no ratios.
//
// With writeReportAtEpochEnd(path) it also writes the HTML report (HtmlReport) at the end of every
// epoch, so when fit() returns the file shows the whole run, and a run that fails later still
// leaves the epochs before. The path is checked when it is set (checkOutputPath,
// nn/core/OutputPath.h: OutputPathError for a missing or unwritable folder, or a target that is
// not a regular file), so a bad path fails before training rather than after the first epoch.
//
// Runs on the fit() thread like every listener; the storage may be read from other threads.
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "nn/api/TrainingListener.h"
#include "nn/listeners/StatsStorage.h"

namespace dl4cpp {

class StatsListener : public TrainingListener {
 public:
  using TimePoint = std::chrono::steady_clock::time_point;
  // Returns the current time; injectable so tests can drive time. Empty: steady_clock::now.
  using Clock = std::function<TimePoint()>;

  static constexpr int kDefaultReportEvery = 10;

  // ConfigError for a null storage or reportEvery < 1.
  explicit StatsListener(std::shared_ptr<StatsStorage> storage,
                         int reportEvery = kDefaultReportEvery, Clock clock = {});

  void onEpochStart(const Model& model, int epoch) override;
  void iterationDone(const Model& model, const IterationInfo& info) override;
  // Writes the report when one was asked for (IoError when it cannot be written).
  void onEpochEnd(const Model& model, int epoch) override;

  // The HTML report's file, rewritten atomically at every epoch's end; empty: no report.
  void writeReportAtEpochEnd(std::filesystem::path path);

  const std::shared_ptr<StatsStorage>& storage() const { return storage_; }
  int reportEvery() const { return reportEvery_; }

  // The names the charts give a model's layers: the configured name, else "<index>: <type>".
  static std::vector<std::string> layerNames(const Model& model);

 private:
  // Seconds since training start, starting the clock at the first event.
  double secondsSinceStart(TimePoint now);
  bool reportBetween(int64_t from, int64_t to) const;
  void snapshotIfReportNext(const Model& model, int64_t iteration);
  std::vector<double> updateRatios(const Model& model) const;

  std::shared_ptr<StatsStorage> storage_;
  int reportEvery_;
  std::filesystem::path reportPath_;
  Clock clock_;
  std::optional<TimePoint> start_;
  TimePoint lastEvent_{};
  bool namesSet_ = false;
  int64_t lastIteration_ = -1;  // iteration count at the previous event; -1 before the first
  int64_t lastStep_ = 1;        // iterations the previous call advanced
  std::vector<float> paramsSnapshot_;
  int64_t snapshotIteration_ = -1;  // -1: no snapshot
};

}  // namespace dl4cpp

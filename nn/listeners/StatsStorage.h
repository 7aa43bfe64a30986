#pragma once
// StatsStorage: what StatsListener records about a training run (DL4J's InMemoryStatsStorage), kept
// in memory for the training page (ui/UIServer.h) and the report (HtmlReport.h).
//
// Three series:
//  - iterations: one record per listener call (an iteration of a single model, an averaging round
//    of ParallelWrapper): score, learning rates, throughput, time shares;
//  - update ratios: every reportEvery iterations, each layer's update:parameter ratio;
//  - validation: accuracy points added by whoever evaluates (addValidation).
//
// Thread safety: every method may be called from any thread; the listener adds on the fit()
// thread while a server thread takes snapshots. A snapshot is a copy, consistent across series.
//
// Bounded memory: each series keeps at most maxPoints records. When a series is full, every second
// record is dropped before the new one is added (the first and the newest are always kept), so the
// series still spans the whole run: the newest records are at full resolution and older ones are
// thinned by half each time the series fills up again. A run of any length therefore holds at
// most 3 * maxPoints records.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

namespace dl4cpp {

// Not a number: a value the record does not have (a layer without parameters has no learning
// rate; a single model has no averaging share).
inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

struct IterationRecord {
  int64_t iteration = 0;  // iterations completed (IterationInfo::iteration)
  int epoch = 0;          // 0-based
  double seconds = 0;     // wall time since the listener saw training start
  double score = 0;
  int64_t examples = 0;          // examples in this iteration / round
  double examplesPerSecond = 0;  // this iteration's / round's examples over its wall time
  std::vector<double> workerExamplesPerSecond;  // ParallelWrapper: one per worker; else empty
  std::vector<double> learningRates;            // one per layer; kNoValue without parameters
  // Shares of a ParallelWrapper round's wall time (RoundTiming), kNoValue for a single model.
  double averagingShare = kNoValue;
  double barrierShare = kNoValue;
  double dataWaitShare = kNoValue;
};

struct UpdateRatioRecord {
  int64_t iteration = 0;
  int epoch = 0;
  double seconds = 0;
  // Iterations the update spans: 1 for a single model, an averaging round's length for
  // ParallelWrapper (StatsListener.h).
  int64_t span = 1;
  // Per layer: mean |update| / mean |parameter|; kNoValue for a layer without parameters or with
  // all parameters zero.
  std::vector<double> ratios;
};

struct ValidationRecord {
  int64_t iteration = 0;
  int epoch = 0;
  double accuracy = 0;  // 0..1
};

struct StatsSnapshot {
  std::vector<std::string> layerNames;  // index i names the values at index i of per-layer vectors
  std::vector<IterationRecord> iterations;
  std::vector<UpdateRatioRecord> updateRatios;
  std::vector<ValidationRecord> validation;
  int64_t revision = 0;  // records added so far (also those dropped since); grows with every add
};

class StatsStorage {
 public:
  static constexpr size_t kDefaultMaxPoints = 1000;
  static constexpr size_t kMinMaxPoints = 4;

  // maxPoints: records kept per series (see above); ConfigError below kMinMaxPoints.
  explicit StatsStorage(size_t maxPoints = kDefaultMaxPoints);

  // The names the charts give the layers (StatsListener sets them from the model).
  void setLayerNames(std::vector<std::string> names);
  void addIteration(IterationRecord record);
  void addUpdateRatios(UpdateRatioRecord record);
  // A validation accuracy measured after `iteration` iterations (e.g. by an evaluating listener or
  // the caller between epochs). ConfigError unless accuracy is in [0, 1] and iteration >= 0.
  void addValidation(int64_t iteration, int epoch, double accuracy);

  StatsSnapshot snapshot() const;
  int64_t revision() const;
  size_t maxPoints() const { return maxPoints_; }

 private:
  template <typename Record>
  void append(std::vector<Record>& series, Record record);

  const size_t maxPoints_;
  mutable std::mutex mutex_;
  StatsSnapshot data_;
};

}  // namespace dl4cpp

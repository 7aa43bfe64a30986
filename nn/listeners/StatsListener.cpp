#include "nn/listeners/StatsListener.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "nn/api/Model.h"
#include "nn/core/Error.h"
#include "nn/core/OutputPath.h"
#include "nn/listeners/HtmlReport.h"
#include "nn/multilayer/MultiLayerNetwork.h"

namespace dl4cpp {

StatsListener::StatsListener(std::shared_ptr<StatsStorage> storage, int reportEvery, Clock clock)
    : storage_(std::move(storage)),
      reportEvery_(reportEvery),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {
  if (!storage_) throw ConfigError("StatsListener: the storage is null");
  if (reportEvery < 1)
    throw ConfigError(fmt::format("StatsListener: reportEvery must be >= 1, got {}", reportEvery));
}

std::vector<std::string> StatsListener::layerNames(const Model& model) {
  return model.layerNames();
}

void StatsListener::writeReportAtEpochEnd(std::filesystem::path path) {
  if (!path.empty()) checkOutputPath(path, "an HTML report");
  reportPath_ = std::move(path);
}

double StatsListener::secondsSinceStart(TimePoint now) {
  if (!start_) start_ = now;
  return std::chrono::duration<double>(now - *start_).count();
}

bool StatsListener::reportBetween(int64_t from, int64_t to) const {
  // A multiple of reportEvery_ in (from, to].
  return to > from && to / reportEvery_ != from / reportEvery_;
}

void StatsListener::onEpochEnd(const Model& model, int epoch) {
  (void)model;
  (void)epoch;
  if (!reportPath_.empty()) HtmlReport::write(*storage_, reportPath_);
}

void StatsListener::onEpochStart(const Model& model, int epoch) {
  (void)epoch;
  const TimePoint now = clock_();
  secondsSinceStart(now);
  lastEvent_ = now;
  storage_->setLayerNames(layerNames(model));
  namesSet_ = true;
  const int64_t iteration = model.getIterationCount();
  if (iteration != lastIteration_) {  // a new run, or a model the listener has not seen
    lastIteration_ = iteration;
    paramsSnapshot_.clear();
    snapshotIteration_ = -1;
  }
  snapshotIfReportNext(model, iteration);
}

void StatsListener::snapshotIfReportNext(const Model& model, int64_t iteration) {
  if (snapshotIteration_ == iteration || !reportBetween(iteration, iteration + lastStep_)) return;
  paramsSnapshot_ = model.params().toVector();
  snapshotIteration_ = iteration;
}

std::vector<double> StatsListener::updateRatios(const Model& model) const {
  const std::vector<float> params = model.params().toVector();
  std::vector<double> ratios;
  // Parameters lie in layer order, each layer's paramSpecs() side by side (a graph's layers in
  // topological order).
  size_t offset = 0;
  for (const int64_t layerParams : model.layerParamCounts()) {
    const auto count = static_cast<size_t>(layerParams);
    double update = 0, magnitude = 0;
    for (size_t i = offset; i < offset + count; ++i) {
      update += std::fabs(static_cast<double>(params[i]) - paramsSnapshot_[i]);
      magnitude += std::fabs(static_cast<double>(params[i]));
    }
    ratios.push_back(count > 0 && magnitude > 0 ? update / magnitude : kNoValue);
    offset += count;
  }
  if (offset != params.size() || params.size() != paramsSnapshot_.size())
    throw ConfigError(fmt::format(
        "StatsListener: the layers' parameter counts sum to {}, the model has {} (snapshot {})",
        offset, params.size(), paramsSnapshot_.size()));
  return ratios;
}

void StatsListener::iterationDone(const Model& model, const IterationInfo& info) {
  const TimePoint now = clock_();
  const bool firstEvent = !start_;
  const int64_t it = info.iteration;
  // A count that did not advance belongs to a new run (init() again): the step is one iteration
  // and an older snapshot is of another run.
  const int64_t previous = lastIteration_ >= 0 && lastIteration_ < it ? lastIteration_ : it - 1;
  if (snapshotIteration_ >= it) snapshotIteration_ = -1;

  IterationRecord record;
  record.iteration = it;
  record.epoch = info.epoch;
  record.seconds = secondsSinceStart(now);
  record.score = info.score;
  record.examples = info.examples;
  // A single model's first call with no onEpochStart before it has no start to measure from.
  const double wall = info.timing  ? info.timing->wall
                      : firstEvent ? 0
                                   : std::chrono::duration<double>(now - lastEvent_).count();
  record.examplesPerSecond = wall > 0 ? static_cast<double>(info.examples) / wall : kNoValue;
  for (const WorkerTiming& w : info.workers)
    record.workerExamplesPerSecond.push_back(w.samplesPerSecond());
  for (int layer = 0; layer < model.numLayers(); ++layer) {
    const std::optional<double> rate = model.getLearningRate(layer);
    record.learningRates.push_back(rate ? *rate * info.learningRateScale : kNoValue);
  }
  if (info.timing && info.timing->wall > 0) {
    record.averagingShare = info.timing->averaging / info.timing->wall;
    record.barrierShare = info.timing->barrierWait / info.timing->wall;
    record.dataWaitShare = info.timing->dataWait / info.timing->wall;
  }
  if (!namesSet_) {
    storage_->setLayerNames(layerNames(model));
    namesSet_ = true;
  }
  storage_->addIteration(std::move(record));

  if (reportBetween(previous, it) && snapshotIteration_ >= 0) {
    storage_->addUpdateRatios(UpdateRatioRecord{it, info.epoch, secondsSinceStart(now),
                                                it - snapshotIteration_, updateRatios(model)});
    paramsSnapshot_.clear();
    snapshotIteration_ = -1;
  }
  lastStep_ = it - previous;
  lastIteration_ = it;
  lastEvent_ = now;
  snapshotIfReportNext(model, it);
}

}  // namespace dl4cpp

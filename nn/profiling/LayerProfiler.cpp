#include "nn/profiling/LayerProfiler.h"

namespace dl4cpp {

namespace {
// The cells_ row of `layer` (kNetwork's is row 0), computed in 64 bits so that no int overflows.
size_t cellRow(int layer) { return static_cast<size_t>(int64_t{layer} - LayerProfiler::kNetwork); }
}  // namespace

std::string_view profilePhaseName(ProfilePhase phase) {
  switch (phase) {
    case ProfilePhase::FORWARD:
      return "forward";
    case ProfilePhase::ACTIVATION_FORWARD:
      return "activation forward";
    case ProfilePhase::LOSS:
      return "loss";
    case ProfilePhase::ACTIVATION_BACKWARD:
      return "activation backward";
    case ProfilePhase::BACKWARD_DATA:
      return "backward data";
    case ProfilePhase::BACKWARD_WEIGHTS:
      return "backward weights";
    case ProfilePhase::UPDATER:
      return "updater";
    case ProfilePhase::OTHER:
      return "other";
  }
  return "unknown";
}

void LayerProfiler::record(ProfilePhase phase, double seconds, double flops) {
  const size_t index = cellRow(current_);
  if (index >= cells_.size()) cells_.resize(index + 1);  // first iteration only
  PhaseTotals& t = cells_[index][static_cast<size_t>(phase)];
  t.seconds += seconds;
  t.flops += flops;
  ++t.calls;
}

PhaseTotals LayerProfiler::totals(int layer, ProfilePhase phase) const {
  const size_t index = cellRow(layer);
  if (layer < kNetwork || index >= cells_.size()) return {};
  return cells_[index][static_cast<size_t>(phase)];
}

double LayerProfiler::totalSeconds() const {
  double sum = 0;
  for (const LayerCells& layer : cells_)
    for (const PhaseTotals& t : layer) sum += t.seconds;
  return sum;
}

bool LayerProfiler::empty() const {
  for (const LayerCells& layer : cells_)
    for (const PhaseTotals& t : layer)
      if (t.calls > 0) return false;
  return iterations_ == 0;
}

void LayerProfiler::reset() {
  cells_.assign(1, LayerCells{});
  current_ = kNetwork;
  iterations_ = 0;
}

}  // namespace dl4cpp

#pragma once
// The flags the parallel samples share for long runs across hosts: an outer updater on the
// averaged change, what to do when a worker fails, checkpoints, and resuming from the newest one.
//   --outer-updater nesterovs:0.7:0.9 | sgd:1.0 | adam:0.001 | none (default)
//   --failure-policy fail-fast (default) | drop-worker
//   --threshold-algorithm none (default) | adaptive[:INITIAL:MIN:MAX] | fixed:TAU | target:S: with
//                         --mode shared-gradients, send threshold-encoded gradients
//   --checkpoint-dir DIR  [--checkpoint-every ITERATIONS (default: every epoch)]
//   --resume auto | no (default): auto continues from the newest checkpoint in --checkpoint-dir
//                                 when there is one, else starts afresh
// A job killed mid-run (a rank that died ends every rank's fit()) is relaunched with the same
// command line plus --resume auto and ends with the model the uninterrupted run would have.
#include <dl4cpp/dl4cpp.h>

#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "SampleSupport.h"

namespace samples {

inline std::map<std::string, std::string> withLongRunFlags(
    std::map<std::string, std::string> known) {
  known.emplace("outer-updater",
                "nesterovs:LR:MOMENTUM | sgd:LR | adam:LR | none: move the averaged model by this "
                "updater applied to its change in each round (DiLoCo: nesterovs:0.7:0.9; default "
                "none)");
  known.emplace("failure-policy",
                "fail-fast | drop-worker: a worker whose step throws ends the run, or is dropped "
                "and its round discarded (default fail-fast)");
  known.emplace("threshold-algorithm",
                "none | adaptive[:INITIAL:MIN_SPARSITY:MAX_SPARSITY] | fixed:TAU | "
                "target:SPARSITY: shared-gradients mode sends threshold-encoded gradients, tau "
                "chosen by DL4J's AdaptiveThresholdAlgorithm (DL4J's defaults, 1e-4:1e-4:1e-2, "
                "or these), a fixed tau, or TargetSparsityThresholdAlgorithm (default none: the "
                "gradients travel whole)");
  known.emplace("checkpoint-dir", "write checkpoints of the averaged model into this folder");
  known.emplace("checkpoint-every",
                "iterations between checkpoints (default 0: at the end of every epoch)");
  known.emplace("resume",
                "auto: continue from the newest checkpoint in --checkpoint-dir if there is one; "
                "no (default)");
  return known;
}

// "nesterovs:0.7:0.9" -> Nesterovs(0.7, 0.9); "none" -> nothing.
inline std::optional<dl4cpp::UpdaterParams> outerUpdaterFromOption(const std::string& spec) {
  if (spec == "none") return std::nullopt;
  std::vector<std::string> parts;
  std::stringstream in(spec);
  for (std::string part; std::getline(in, part, ':');) parts.push_back(part);
  auto number = [&](size_t i, double fallback) {
    if (i >= parts.size()) return fallback;
    try {
      size_t used = 0;
      const double v = std::stod(parts[i], &used);
      if (used == parts[i].size()) return v;
    } catch (const std::exception&) {
    }
    throw std::invalid_argument("--outer-updater: '" + parts[i] + "' is not a number");
  };
  const std::string& kind = parts.empty() ? spec : parts.front();
  if (kind == "nesterovs" && parts.size() <= 3)
    return dl4cpp::Nesterovs(number(1, 0.7), number(2, 0.9));
  if (kind == "sgd" && parts.size() <= 2) return dl4cpp::Sgd(number(1, 1.0));
  if (kind == "adam" && parts.size() <= 2) return dl4cpp::Adam(number(1, 1e-3));
  throw std::invalid_argument(
      "--outer-updater must be nesterovs[:LR[:MOMENTUM]], sgd[:LR], adam[:LR] or none, not '" +
      spec + "'");
}

// "adaptive" -> AdaptiveThresholdAlgorithm(); "adaptive:1e-3:1e-3:5e-2" ->
// AdaptiveThresholdAlgorithm(1e-3, 1e-3, 5e-2); "fixed:1e-3" -> FixedThresholdAlgorithm(1e-3);
// "target:1e-3" -> TargetSparsityThresholdAlgorithm(1e-4, 1e-3); "none" -> nothing.
inline std::unique_ptr<dl4cpp::parallel::ThresholdAlgorithm> thresholdAlgorithmFromOption(
    const std::string& spec) {
  using namespace dl4cpp::parallel;
  if (spec == "none") return nullptr;
  if (spec == "adaptive") return std::make_unique<AdaptiveThresholdAlgorithm>();
  if (spec.rfind("adaptive:", 0) == 0) {  // adaptive:INITIAL:MIN_SPARSITY:MAX_SPARSITY
    std::vector<double> v;
    std::stringstream in(spec.substr(9));
    for (std::string part; std::getline(in, part, ':');) {
      size_t used = 0;
      v.push_back(std::stod(part, &used));
      if (used != part.size()) throw std::invalid_argument("--threshold-algorithm: " + part);
    }
    if (v.size() != 3)
      throw std::invalid_argument(
          "--threshold-algorithm adaptive takes INITIAL:MIN_SPARSITY:MAX_SPARSITY, not '" + spec +
          "'");
    return std::make_unique<AdaptiveThresholdAlgorithm>(v[0], v[1], v[2]);
  }
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  double value = 0;
  try {
    size_t used = 0;
    const std::string number = colon == std::string::npos ? "" : spec.substr(colon + 1);
    value = std::stod(number, &used);
    if (used != number.size()) throw std::invalid_argument(number);
  } catch (const std::exception&) {
    throw std::invalid_argument(
        "--threshold-algorithm must be none, adaptive, fixed:TAU or "
        "target:SPARSITY, not '" +
        spec + "'");
  }
  if (kind == "fixed") return std::make_unique<FixedThresholdAlgorithm>(value);
  if (kind == "target") return std::make_unique<TargetSparsityThresholdAlgorithm>(1e-4, value);
  throw std::invalid_argument(
      "--threshold-algorithm must be none, adaptive, fixed:TAU or target:SPARSITY, not '" + spec +
      "'");
}

inline dl4cpp::parallel::FailurePolicy failurePolicyFromOption(const std::string& name) {
  if (name == "fail-fast") return dl4cpp::parallel::FailurePolicy::FAIL_FAST;
  if (name == "drop-worker") return dl4cpp::parallel::FailurePolicy::DROP_WORKER;
  throw std::invalid_argument("--failure-policy must be fail-fast or drop-worker, not " + name);
}

// Applies --outer-updater, --failure-policy, --threshold-algorithm, --checkpoint-dir and
// --checkpoint-every.
inline void applyLongRunFlags(const SampleOptions& options,
                              dl4cpp::parallel::ParallelWrapper::Builder& builder) {
  if (auto outer = outerUpdaterFromOption(options.getString("outer-updater", "none")))
    builder.outerUpdater(*outer);
  builder.failurePolicy(failurePolicyFromOption(options.getString("failure-policy", "fail-fast")));
  if (auto threshold =
          thresholdAlgorithmFromOption(options.getString("threshold-algorithm", "none")))
    builder.thresholdAlgorithm(*threshold);
  const std::string dir = options.getString("checkpoint-dir", "");
  const int64_t every = options.getInt("checkpoint-every", 0);
  if (every < 0) throw std::invalid_argument("--checkpoint-every must be >= 0");
  if (!dir.empty())
    builder.checkpointEvery(every > 0 ? dl4cpp::parallel::Checkpoint::iterations(every)
                                      : dl4cpp::parallel::Checkpoint::epochs(1),
                            dir, 3);
}

// --resume auto: the newest checkpoint in --checkpoint-dir, if any, as rank 0 sees it; every rank
// learns whether rank 0 resumes (the ranks must all resume() or all fit()). A collective on a
// cluster.
inline std::optional<std::filesystem::path> checkpointToResume(const SampleOptions& options,
                                                               dl4cpp::parallel::Cluster* cluster) {
  const std::string mode = options.getString("resume", "no");
  if (mode != "auto" && mode != "no")
    throw std::invalid_argument("--resume must be auto or no, not " + mode);
  const std::string dir = options.getString("checkpoint-dir", "");
  if (mode == "auto" && dir.empty())
    throw std::invalid_argument("--resume auto needs --checkpoint-dir");
  std::optional<std::filesystem::path> latest;
  if (mode == "auto" && (!cluster || cluster->rank() == 0))
    latest = dl4cpp::parallel::Checkpoints::latest(dir);
  if (cluster && cluster->size() > 1) {
    std::vector<double> found{latest ? 1.0 : 0.0};
    cluster->broadcast(std::span<double>(found), 0);
    // Other ranks only need to know that rank 0 resumes; they take its model at resume().
    if (found[0] != 0 && !latest) latest = std::filesystem::path();
  }
  return latest;
}

}  // namespace samples

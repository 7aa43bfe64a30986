#pragma once
// StatsJson: a StatsSnapshot as the JSON the training page serves at /stats.json:
//
//   {"revision": 42, "layers": ["0: ConvolutionLayer", ...],
//    "iterations": [{"iteration": 3, "epoch": 0, "seconds": 0.41, "score": 2.27, "examples": 384,
//                    "examplesPerSecond": 931.2, "workerExamplesPerSecond": [480.1, 472.9],
//                    "learningRates": [0.01, null, ...], "averagingShare": 0.02,
//                    "barrierShare": 0.05, "dataWaitShare": 0.0}, ...],
//    "updateRatios": [{"iteration": 12, "epoch": 0, "seconds": 1.2, "span": 3,
//                      "ratios": [0.0011, null, ...]}, ...],
//    "validation": [{"iteration": 469, "epoch": 0, "accuracy": 0.9712}, ...]}
//
// Values a record does not have (kNoValue) are null.
#include <string>

#include "nn/listeners/StatsStorage.h"

namespace dl4cpp {

std::string statsJson(const StatsSnapshot& stats);

}  // namespace dl4cpp

#pragma once
// TrainingListener: user code called during training (DL4J's TrainingListener). Listeners are
// always called on the thread that called fit(): by the model (a MultiLayerNetwork or a
// ComputationGraph, nn/api/Model.h) after each iteration, and by ParallelWrapper after each
// averaging round (with the averaged score). So a listener needs no
// locks, and an exception it throws ends fit() with that exception.
#include <cstdint>
#include <span>

namespace dl4cpp {

class Model;

// Where the wall time of one ParallelWrapper averaging round went (seconds). Worker figures are
// means over the workers.
struct RoundTiming {
  double wall = 0;         // the whole round, from dispatch to averaged model
  double compute = 0;      // a worker training (forward, backward, update)
  double barrierWait = 0;  // a worker idle, waiting for the slowest one
  double averaging = 0;    // averaging parameters / updater state / gradients
  double dataWait = 0;     // the coordinator blocked on the data pipeline (prefetch stall)
};

// One ParallelWrapper worker's part of an averaging round.
struct WorkerTiming {
  int64_t examples = 0;  // examples it trained in the round
  double compute = 0;    // seconds it spent training them
  double samplesPerSecond() const {
    return compute > 0 ? static_cast<double>(examples) / compute : 0;
  }
};

struct IterationInfo {
  int64_t iteration = 0;          // iterations (parameter updates) completed so far, 1-based
  int epoch = 0;                  // 0-based epoch
  double score = 0;               // loss of this iteration (or averaging round), incl. l2 term
  int64_t examples = 0;           // examples that went into this iteration / round
  int64_t examplesInEpoch = 0;    // examples trained so far in this epoch, this one included
  int64_t examplesPerEpoch = -1;  // examples in one epoch, or -1 when the iterator cannot say
  const RoundTiming* timing = nullptr;    // ParallelWrapper rounds only; null for a single model
  std::span<const WorkerTiming> workers;  // ParallelWrapper rounds: one per worker; else empty
  // ParallelWrapper rounds: the wrapper's learning-rate scaling (ParallelWrapper::Builder::
  // learningRateScaling) at the round's last iteration. The rate a worker stepped with is
  // model.getLearningRate(layer) times this; 1 for a single model, whose getLearningRate() already
  // includes its own learningRateScale().
  double learningRateScale = 1;
};

class TrainingListener {
 public:
  virtual ~TrainingListener() = default;
  virtual void onEpochStart(const Model& model, int epoch) {
    (void)model;
    (void)epoch;
  }
  virtual void onEpochEnd(const Model& model, int epoch) {
    (void)model;
    (void)epoch;
  }
  virtual void iterationDone(const Model& model, const IterationInfo& info) = 0;
};

}  // namespace dl4cpp

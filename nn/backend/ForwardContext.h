#pragma once
// What a forward pass tells each layer besides its input: the mode, and a random stream of its
// own. The stream's seed is derived from the network's seed, the replica's index (worker w of a
// ParallelWrapper is replica w; a lone network is replica 0), the iteration and the layer's index,
// so dropout-like layers draw the same numbers in every run with the same seed and the same
// worker count, whatever the thread timing, and a model resumed from a checkpoint draws what the
// uninterrupted run would have.
#include <cstdint>

#include "nn/tensor/Random.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

struct ForwardContext {
  // Training-mode behaviour (dropout active, batch statistics); false for inference.
  bool training = false;
  // The seed of this context's stream: a whole pass's, or one layer's within it (forLayer).
  uint64_t seed = 0;
  // Layers 0 .. frozenLayers - 1 are frozen (Layer::frozen): they run in inference mode, also in
  // a training pass (DL4J's FrozenLayer).
  int frozenLayers = 0;
  // The batch's features mask (N, T) on the host (DataSet::featuresMask), or null: which steps of
  // the sequences are real. Recurrent layers zero their output at padded steps and keep the mask
  // for their backward pass; other layers ignore it. The network keeps it alive for the pass.
  const Tensor* featuresMask = nullptr;
  // Recurrent state across passes (truncated BPTT, rnnTimeStep). NONE: every sequence starts from
  // a zero state and layers keep nothing. START: start from a zero state and keep the state after
  // the last step. CONTINUE: start from the state the layer kept in its last START or CONTINUE
  // pass (zero when it kept none) and keep the new one. Layers without state ignore it.
  enum class RecurrentStateMode { NONE, START, CONTINUE };
  RecurrentStateMode recurrentState = RecurrentStateMode::NONE;
  // Truncated BPTT's backward length: a recurrent layer back-propagates through the last
  // tbpttBackwardLength steps of its sequences only (0: all of them).
  int64_t tbpttBackwardLength = 0;
  // The time steps of the batch's sequences (0 when it holds none): what turns rows per time step
  // back into sequences (nn/conf/TimeStepPreProcessor.h).
  int64_t steps = 0;

  // A generator over this context's stream (each call starts it afresh).
  Random random() const { return Random(seed); }
  // Whether layer `layer` runs in training mode in this pass.
  bool trainingFor(int layer) const { return training && layer >= frozenLayers; }

  // The context of a forward pass of replica `replica` at iteration `iteration` of a network
  // seeded with `networkSeed` whose first `frozenLayers` layers are frozen.
  static ForwardContext pass(bool training, uint64_t networkSeed, int replica, int64_t iteration,
                             int frozenLayers = 0) {
    const uint64_t s = Random::deriveSeed(networkSeed, static_cast<uint64_t>(replica));
    return {training, Random::deriveSeed(s, static_cast<uint64_t>(iteration)), frozenLayers};
  }
  // The context layer `layer` gets within this pass.
  ForwardContext forLayer(int layer) const {
    return {trainingFor(layer),
            Random::deriveSeed(seed, static_cast<uint64_t>(layer)),
            frozenLayers,
            featuresMask,
            recurrentState,
            tbpttBackwardLength,
            steps};
  }
  // The seed of layer `layer`'s stream in pass(training, networkSeed, replica, iteration).
  static uint64_t streamSeed(uint64_t networkSeed, int replica, int64_t iteration, int layer) {
    return pass(false, networkSeed, replica, iteration).forLayer(layer).seed;
  }
};

}  // namespace dl4cpp

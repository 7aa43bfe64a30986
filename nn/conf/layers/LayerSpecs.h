#pragma once
// What a layer type declares about the memory its runtime needs: its learned parameters and its
// non-learned state. MultiLayerNetwork lays every layer's specs out in flat buffers (parameters,
// gradients and updater state; layer state) and hands each runtime layer views in spec order.
#include <optional>
#include <string>
#include <vector>

#include "nn/conf/WeightInitScheme.h"
#include "nn/tensor/Shape.h"

namespace dl4cpp {

// One learned parameter of a layer, in the order it occupies the flat parameter buffer.
struct ParamSpec {
  std::string name;  // "W", "b", as DL4J names them
  Shape shape;
  // Biases take the layer's bias updater and l2Bias; other parameters its updater and l2.
  bool isBias = false;
  // Initialisation: drawn from `weightInit` with these fans (DL4J's fans for the layer type), or,
  // without a scheme, every value set to `initValue`.
  std::optional<WeightInitScheme> weightInit;
  double fanIn = 0, fanOut = 0;
  float initValue = 0;
  // Whether the layer's l2 (or l2Bias) applies: false for parameters DL4J never regularises
  // (batch normalisation's gamma and beta).
  bool regularized = true;
  // Without a scheme and when not empty: the initial values themselves (shape.numel() of them),
  // for a parameter whose parts start differently (LSTM's bias: the forget gate's block at
  // forgetGateBiasInit, the others at biasInit).
  std::vector<float> initValues{};
};

// How the replicas of a ParallelWrapper combine one state segment when they average (and where a
// cluster all-reduces), each replica weighted by the examples it trained on since the last time.
enum class StateCombine {
  // The example-weighted mean of the replicas' values.
  WeightedMean,
  // A segment of shape (2, C): C means, then C variances (population, not unbiased). Combined as
  // the moments of the union of the replicas' data: mean = sum(n_w m_w) / n and
  // variance = sum(n_w (v_w + m_w^2)) / n - mean^2, which counts the spread between the replicas'
  // means (the mean of the variances does not).
  PooledMeanVariance,
  // Each replica keeps its own; the root model takes replica 0's.
  PerReplica,
};

// One segment of a layer's non-learned state (running statistics and the like), in the order it
// occupies the flat layer-state buffer. Set to `initValue` by init(); saved in model files and
// checkpoints, copied by clone().
struct StateSpec {
  std::string name;
  Shape shape;
  float initValue = 0;
  StateCombine combine = StateCombine::WeightedMean;
  // PooledMeanVariance: the variances' initial value (the means take initValue).
  float initVariance = 1;
};

}  // namespace dl4cpp

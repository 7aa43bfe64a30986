#pragma once
// Model: what every trainable network is to the code that trains, copies, saves or watches it
// (DL4J's org.deeplearning4j.nn.api.Model). MultiLayerNetwork and ComputationGraph implement it;
// ParallelWrapper, ParallelInference, the early-stopping trainers and the training listeners
// take a Model, so they work with both.
//
//   ComputationGraph graph(conf);
//   graph.init();
//   auto wrapper = parallel::ParallelWrapper::Builder(graph).workers(2).build();  // as for a net
//
// The contract is the one MultiLayerNetwork documents for each method (nn/multilayer/
// MultiLayerNetwork.h); a graph reads a DataSet as its one input and one output. Every model owns
// the four flat buffers (parameters, gradients, updater state, layer state) and exposes them as
// views, so replicas can be averaged buffer against buffer whatever the model's shape.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iterators/DataSet.h"
#include "iterators/DataSetIterator.h"
#include "nn/conf/InputType.h"
#include "nn/conf/layers/LayerSpecs.h"
#include "nn/eval/Evaluation.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Shape.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class DeviceContext;
class TrainingListener;

// Where one layer's state segment (running statistics and the like) lies in a model's
// layer-state buffer, with the rule ParallelWrapper's replicas combine it by. `layer` counts the
// model's layers (a graph's in topological order).
struct LayerStateSegment {
  int layer = 0;
  std::string name;
  int64_t offset = 0;
  Shape shape;
  StateCombine combine = StateCombine::WeightedMean;
};

class Model {
 public:
  virtual ~Model() = default;

  virtual void init() = 0;
  virtual bool isInitialized() const = 0;

  // --- Training ---------------------------------------------------------------------------------
  // One iteration on one minibatch (listeners' iterationDone follows).
  virtual void fit(const DataSet& batch) = 0;
  // One epoch over the iterator, with the listeners' onEpochStart/onEpochEnd.
  virtual void fit(DataSetIterator& iterator) = 0;
  // Forward + backward without an update: dL/dparams in gradient(); returns the mean data loss.
  virtual double computeGradientAndScore(const DataSet& batch, bool wantInputGradient) = 0;
  // One updater step with the current gradient().
  virtual void applyUpdate() = 0;

  // --- Inference and scores ---------------------------------------------------------------
  // The model's only output for its only input (a host tensor).
  virtual Tensor outputSingle(const Tensor& features, bool train) = 0;
  // The same for padded sequences (N, F, T): featuresMask (N, T) says which steps are real
  // (empty: all are).
  virtual Tensor outputSingle(const Tensor& features, bool train, const Tensor& featuresMask) = 0;
  virtual double score() const = 0;
  virtual void setScore(double score) = 0;
  // The score for `data`: its mean data loss plus the regularisation terms; in training mode
  // (DL4J's score(DataSet, training)) the layers behave as in fit(): dropout applies and batch
  // normalisation uses the batch's statistics.
  virtual double score(const DataSet& data, bool training) = 0;
  double score(const DataSet& data) { return score(data, false); }
  virtual double calcRegularizationScore() = 0;
  virtual Evaluation evaluate(DataSetIterator& iterator) = 0;

  // --- Flat buffers ------------------------------------------------------------------------------
  virtual int64_t numParams() const = 0;
  virtual Tensor params() const = 0;
  virtual void setParams(const Tensor& params) = 0;
  virtual Tensor gradient() const = 0;
  virtual Tensor updaterState() const = 0;
  virtual void setUpdaterState(const Tensor& state) = 0;
  virtual Tensor layerState() const = 0;
  virtual void setLayerState(const Tensor& state) = 0;
  virtual const std::vector<LayerStateSegment>& layerStateLayout() const = 0;
  // Parameters at the start of params() that training never changes (leading frozen layers).
  virtual int64_t numFrozenParams() const = 0;

  // --- Layers, in parameter order
  // ------------------------------------------------------------------
  virtual int numLayers() const = 0;
  // Each layer's name (its configured name, or "<index>: <type>"; a graph's vertex names).
  virtual std::vector<std::string> layerNames() const = 0;
  // Each layer's parameter count: layer i's parameters follow layer i-1's in params().
  virtual std::vector<int64_t> layerParamCounts() const = 0;
  virtual std::optional<double> getLearningRate(int layer) const = 0;
  virtual void setLearningRateScale(double scale) = 0;
  virtual double learningRateScale() const = 0;

  // --- Counters and replicas
  // ------------------------------------------------------------------------
  virtual int64_t getIterationCount() const = 0;
  virtual void setIterationCount(int64_t n) = 0;
  virtual int getEpochCount() const = 0;
  virtual void setEpochCount(int n) = 0;
  virtual int64_t getMinibatchesInEpoch() const = 0;
  virtual void setMinibatchesInEpoch(int64_t n) = 0;
  virtual int replicaIndex() const = 0;
  virtual void setReplicaIndex(int index) = 0;

  // --- Copies, devices, files --------------------------------------------------------------------
  // A deep copy (as the model's clone()).
  virtual std::unique_ptr<Model> cloneModel() const = 0;
  // A new, initialised model of the same configuration on `device` with `numThreads` CPU threads
  // (0: all cores); its parameters are from the seed, not this model's (ParallelWrapper copies
  // those in at every fit()). ConfigError where the model kind cannot run on `device`.
  virtual std::unique_ptr<Model> newReplica(Device device, int numThreads) const = 0;
  virtual void save(const std::filesystem::path& path, bool saveUpdater) const = 0;
  // The configuration as JSON (equal JSON: the same model shape).
  virtual std::string configurationJson() const = 0;
  // The type of the model's only input and of its only output (what ParallelInference serves);
  // empty for a graph with several inputs (outputs).
  virtual std::optional<InputType> declaredInputType() const = 0;
  virtual std::optional<InputType> declaredOutputType() const = 0;
  // Whether fit(batch) trains with truncated BPTT: one update per segment of the batch's
  // sequences, which one computeGradientAndScore per batch cannot stand for.
  virtual bool trainsTruncatedBptt() const = 0;
  virtual int numThreads() const = 0;
  virtual DeviceContext& context() = 0;
  virtual std::string summary() const = 0;

  // --- Listeners --------------------------------------------------------------------------------
  virtual void setListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) = 0;
  virtual void addListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) = 0;
  virtual const std::vector<std::shared_ptr<TrainingListener>>& getListeners() const = 0;

 protected:
  Model() = default;
  Model(const Model&) = default;
  Model& operator=(const Model&) = default;
  Model(Model&&) noexcept = default;
  Model& operator=(Model&&) noexcept = default;
};

}  // namespace dl4cpp

#pragma once
// MultiLayerNetwork: a stack of layers trained by backpropagation (DL4J's MultiLayerNetwork).
//
//   MultiLayerNetwork model(conf);   // conf from NeuralNetConfiguration::Builder ... .build()
//   model.init();                    // allocates and initialises parameters (reproducible by seed)
//   model.fit(trainIterator, 3);     // 3 epochs
//   Evaluation eval = model.evaluate(testIterator);
//
// Memory: the network owns four flat buffers (parameters, gradients, updater state, and layer
// state: non-learned values such as running statistics); layers hold views into them, so
// params()/setParams() and parameter averaging are single copies.
// Activation and gradient buffers are sized for the largest batch seen and reused; a training
// step on shapes seen before allocates nothing.
//
// Threading: a network and its DeviceContext are used by one thread at a time. fit/output bind
// the calling thread to the context's thread budget (and, on a GPU, to its device). Listeners run
// on the thread calling fit.
//
// Devices: on a CUDA device, parameters, gradients, updater state and activations live in GPU
// memory; features and labels arrive as host tensors from iterators and are staged to the GPU
// by Backend::stageBatch (pinned memory, a copy stream). output() returns host tensors.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "iterators/DataSet.h"
#include "iterators/DataSetIterator.h"
#include "nn/api/Model.h"
#include "nn/api/TrainingListener.h"
#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/eval/Evaluation.h"
#include "nn/profiling/LayerProfiler.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

// The network's runtime parts stay out of its public header (nn/layers/RuntimeLayer.h and
// nn/backend/DeviceContext.h are for those who write layers and backends).
class DeviceContext;

class MultiLayerNetwork : public Model {
 public:
  // numThreads: CPU threads for this network's ops; 0 = all cores.
  explicit MultiLayerNetwork(MultiLayerConfiguration conf, Device device = Device::cpu(),
                             int numThreads = 0);
  ~MultiLayerNetwork() override;
  MultiLayerNetwork(MultiLayerNetwork&&) noexcept;
  MultiLayerNetwork& operator=(MultiLayerNetwork&&) noexcept;
  MultiLayerNetwork(const MultiLayerNetwork&) = delete;
  MultiLayerNetwork& operator=(const MultiLayerNetwork&) = delete;

  // Allocates the flat buffers and initialises parameters from the configuration's seed.
  // Calling it again re-initialises (parameters, updater state, counters).
  void init() override;
  bool isInitialized() const override;

  // One iteration on one minibatch: forward, backward, updater step. The listeners' iterationDone
  // follows, as after each minibatch of fit(iterator) (IterationInfo::examplesInEpoch counts the
  // examples fitted since the last epoch boundary; examplesPerEpoch is -1). It starts and ends no
  // epoch: onEpochStart/onEpochEnd are for fit(iterator).
  // With BackpropType::TruncatedBPTT a batch of sequences is fitted segment by segment (Enums.h):
  // one iteration, one update, per segment; score() is then the last segment's, and listeners
  // hear once per batch.
  void fit(const DataSet& batch) override;
  // One epoch over the iterator (reset first when it is exhausted and resettable). DataError when
  // it yields no minibatch at all.
  void fit(DataSetIterator& iterator) override;
  void fit(DataSetIterator& iterator, int epochs);

  // Forward pass; `train` selects training-mode behaviour of layers (dropout, batch norm).
  // Returns a new host tensor (N, nOut), whichever device the network lives on; (N, nOut, T) for
  // a network ending in sequences.
  Tensor output(const Tensor& features, bool train = false);
  // The same for padded sequences (DL4J's output(input, train, featuresMask, labelsMask)):
  // featuresMask (N, T) says which steps are real; recurrent layers output 0 at the others.
  Tensor output(const Tensor& features, bool train, const Tensor& featuresMask);
  // Stateful inference (DL4J's rnnTimeStep), for generating sequences step by step: input is one
  // step (N, C) or several (N, C, T); the recurrent layers start from the state they kept at the
  // end of the previous call (zero at the first call, or after rnnClearPreviousState) and keep
  // their new one. Returns (N, nOut) for one step given as (N, C), else (N, nOut, T). Calling it
  // step by step gives what output() gives for the whole sequence. output(), score() and evaluate()
  // leave the kept state alone; fit() with truncated BPTT clears it. A call with another number
  // of sequences than the kept state's is a ShapeError (clear the state first).
  Tensor rnnTimeStep(const Tensor& input);
  // Forgets the state rnnTimeStep kept: the next call starts from zero.
  void rnnClearPreviousState();
  // The same (DL4J's outputSingle, which a graph of one output also answers).
  Tensor outputSingle(const Tensor& features, bool train = false) override;
  Tensor outputSingle(const Tensor& features, bool train, const Tensor& featuresMask) override {
    return output(features, train, featuresMask);
  }

  // Loss of the last fitted minibatch: mean data loss + the regularisation terms (DL4J's score()).
  double score() const override;
  // The same quantity for `data` (Model::score): forward in inference or training mode only, no
  // gradient.
  double score(const DataSet& data, bool training) override;
  using Model::score;
  void setScore(double score) override;
  // The non-data part of score() over the current parameters, summed over every parameter (l2,
  // l1 and weight decay of the weights, l2Bias, l1Bias and weightDecayBias of the biases):
  // 0.5 * l2 * ||p||^2 + l1 * sum |p| + 0.5 * weightDecay * ||p||^2 (DL4J's terms).
  double calcRegularizationScore() override;

  // The learning rate layer `layer`'s weights step with at the current iteration and epoch counts
  // (DL4J's getLearningRate): its updater's rate, or its schedule's value, times
  // learningRateScale(). Empty for a layer without parameters or a frozen one (it takes no
  // updates); ConfigError for no such layer.
  std::optional<double> getLearningRate(int layer) const override;
  // Multiplies every layer's learning rate after its schedule (ParallelWrapper's learning-rate
  // scaling by worker count). Default 1; copied by clone(), not saved in model files. ConfigError
  // unless finite and > 0.
  void setLearningRateScale(double scale) override;
  double learningRateScale() const override;

  // Accuracy, precision, recall, F1 and confusion matrix over the iterator's data.
  Evaluation evaluate(DataSetIterator& iterator) override;

  // --- Gradients without an update (gradient checks, ParallelWrapper's shared gradients) ---------
  // Forward + backward on `batch`; leaves dL/dparams (of the mean data loss, no regularisation)
  // in gradient() and, when wanted, dL/dfeatures in inputGradient(). Returns the mean data loss.
  // Frozen layers' gradients stay zero; with frozen layers there is no input gradient (ConfigError
  // when one is asked for).
  double computeGradientAndScore(const DataSet& batch, bool wantInputGradient = false) override;
  // Applies one updater step with the current gradient(), in DL4J's order: each layer's gradient
  // normalisation, then l1 and l2 (added to gradient()), the updater, and weight decay.
  void applyUpdate() override;

  // --- Flat buffers
  // --------------------------------------------------------------------------------
  int64_t numParams() const override;
  // The flat parameter buffer itself (a view sharing storage, as DL4J's params()).
  Tensor params() const override;
  // Copies `params` (numParams() values) into the parameter buffer.
  void setParams(const Tensor& params) override;
  Tensor gradient() const override;
  Tensor updaterState() const override;
  void setUpdaterState(const Tensor& state) override;
  Tensor inputGradient() const;
  // Non-learned layer state (running statistics and the like), laid out from every layer's
  // stateSpecs() in layer order; empty when no layer has state.
  Tensor layerState() const override;
  void setLayerState(const Tensor& state) override;
  // Where each layer's state segments lie in layerState(), with the rule replicas combine them by.
  using StateSegment = LayerStateSegment;
  const std::vector<StateSegment>& layerStateLayout() const override;

  // Which replica this network is: worker w of a ParallelWrapper is replica w, a lone network
  // replica 0. It selects the random streams of the layers' forward passes (ForwardContext.h), so
  // replicas draw different dropout masks from the same seed.
  int replicaIndex() const override;
  void setReplicaIndex(int index) override;

  // A deep copy: configuration, parameters, updater state, layer state, counters and replica
  // index (DL4J's clone()).
  MultiLayerNetwork clone() const;
  // The same deep copy on another device (moves a model between the host and GPUs); the copy
  // keeps this network's thread budget.
  MultiLayerNetwork clone(Device device) const;
  std::unique_ptr<Model> cloneModel() const override;
  std::unique_ptr<Model> newReplica(Device device, int numThreads) const override;

  // --- Model files (ModelSerializer; format in docs/model-format.md)
  // ------------------------------- Writes configuration, parameters, counters and (saveUpdater)
  // updater state to `path` atomically. The updater state is what continuing training exactly
  // needs; inference does not.
  void save(const std::filesystem::path& path, bool saveUpdater = true) const override;
  // Restores a saved model on the CPU (all cores). Without loadUpdater (or when the file has none)
  // the updater state is zero, as after init().
  static MultiLayerNetwork load(const std::filesystem::path& path, bool loadUpdater = true);

  void setListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) override;
  void addListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) override;
  const std::vector<std::shared_ptr<TrainingListener>>& getListeners() const override;

  // Per-layer profiling (see nn/profiling/LayerProfiler.h): every op this network runs from now on
  // is timed and charged to the layer running it; nullptr turns profiling off (the default, which
  // costs nothing). Not copied by clone().
  void setProfiler(std::shared_ptr<LayerProfiler> profiler);
  LayerProfiler* getProfiler() const;

  const MultiLayerConfiguration& getConfiguration() const;
  int64_t getIterationCount() const override;
  int getEpochCount() const override;
  void setIterationCount(int64_t n) override;
  void setEpochCount(int n) override;
  // Minibatches of epoch getEpochCount() already trained: counted from 0 by fit(iterator) and by
  // ParallelWrapper, back to 0 when an epoch completes. Nonzero only in a model saved inside an
  // epoch (a ParallelWrapper checkpoint), where it tells resume() how many minibatches to skip.
  int64_t getMinibatchesInEpoch() const override;
  void setMinibatchesInEpoch(int64_t n) override;
  int numLayers() const override;
  std::vector<std::string> layerNames() const override;
  std::vector<int64_t> layerParamCounts() const override;
  // Frozen layers (Layer::frozen, TransferLearning's setFeatureExtractor): the first
  // numFrozenLayers() layers, whose numFrozenParams() parameters are the start of params(). Their
  // parameters and layer state never change in training, and they have no updater state.
  int numFrozenLayers() const;
  int64_t numFrozenParams() const override;
  // CPU threads this network's ops use (the constructor's numThreads, 0 resolved to all cores).
  int numThreads() const override;
  // The device context ops run in (nn/backend/DeviceContext.h; for layer and backend code).
  DeviceContext& context() override;
  std::string summary() const override;
  std::string configurationJson() const override;
  std::optional<InputType> declaredInputType() const override;
  std::optional<InputType> declaredOutputType() const override;
  bool trainsTruncatedBptt() const override {
    return getConfiguration().backpropType == BackpropType::TruncatedBPTT;
  }

 private:
  void requireInit(const char* method) const;
  // fit(DataSet) without the listeners: the iteration itself.
  // Truncated BPTT when configured and the batch is sequences, else one step.
  void fitMinibatch(const DataSet& batch);
  // One forward, backward and update on `batch`.
  void fitStep(const DataSet& batch);
  // Truncated BPTT (BackpropType::TruncatedBPTT): fitStep on each segment of the batch's time
  // axis, the recurrent state carried from one to the next.
  void fitTruncated(const DataSet& batch);
  // Checks features/labels against the configuration; returns the batch size.
  int64_t checkBatch(const DataSet& batch, bool needLabels, const char* method) const;
  void ensureCapacity(int64_t batch, int64_t steps);
  // Makes the batch available on the model's device (Backend::stageBatch) as stagedFeatures_ and
  // stagedLabels_; profiled as the network's own op.
  void stageInputs(const Tensor& features, const Tensor& labels);
  // Runs every layer forward; returns the output activation view.
  // `mask`: the batch's features mask (host, (N, T)) or null, which recurrent layers read.
  const Tensor& forwardPass(const Tensor& features, int64_t n, bool training,
                            const Tensor* mask = nullptr);
  // Tells the profiler, when there is one, which layer's ops follow (LayerProfiler::kNetwork: the
  // network's own).
  void profileLayer(int layer);
  // The regularisation terms of the score from norms_ and absolutes_ (filled in segment order).
  double regularizationFromNorms() const;

  // Every member lives in Impl (MultiLayerNetwork.cpp), so that the runtime's types (layers,
  // steps, device context, gradient normaliser) stay out of this header and a change to them
  // recompiles no user of the network.
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dl4cpp

#pragma once
// ComputationGraph: a network whose layers and vertices form a directed acyclic graph (DL4J's
// ComputationGraph): residual blocks, concatenated branches, several inputs and outputs.
//
//   ComputationGraph net(conf);     // conf from NeuralNetConfiguration::Builder().graphBuilder()
//   net.init();                     // parameters from the seed, as MultiLayerNetwork's
//   net.fit(trainIterator);         // a DataSetIterator (one input, one output) or a
//                                   // MultiDataSetIterator
//   Tensor probabilities = net.outputSingle(features);
//
// Execution: vertices run in the configuration's topological order. Layers run through the same
// runtime objects and steps as in a MultiLayerNetwork, and a run of layers the backend plans as
// one step (the CPU's convolution + MAX pooling) is one step here too, where each layer's output
// is read only by the next. Backward runs the steps in reverse; a vertex whose output feeds
// several vertices gets the sum of their gradients. Only what needs a gradient runs backward:
// vertices below which no layer has trainable parameters (and no input gradient is asked for) are
// skipped.
//
// Memory: the four flat buffers (parameters, gradients, updater state, layer state) are laid out
// and updated as MultiLayerNetwork's (nn/graph/FlatBuffers.h): same order, same initialisation,
// same updater step, so a graph that is a chain trains to the same bits as the network. Activations
// and gradients live in one arena per pass kind, each at an offset planned from its lifetime
// (nn/graph/ActivationPlan.h): memory is reused after a buffer's last reader, in inference from
// the forward pass alone, in training once the backward pass is done with it.
// activationMemory() says how much that saves.
//
// Losses: every output must be a layer computing a loss (OutputLayer, LossLayer, RnnOutputLayer,
// RnnLossLayer) to fit; the score is the sum over outputs of each output's mean loss, plus the
// regularisation terms.
//
// Sequences: inputs of InputType::recurrent run through the recurrent layers and the vertices
// that take sequences (element-wise, merge, subset, scale, shift) as in a MultiLayerNetwork. The
// sequences of one minibatch share one length T (pad them, MultiDataSet's masks say which steps
// are real); a vertex's output carries the mask of its first masked input, and each recurrent
// layer, pooling over time, LastTimeStep and per-step loss reads the mask of what it reads.
// Activation memory is planned for the batch's T (again when T changes). Truncated BPTT
// (GraphBuilder::backpropType) and rnnTimeStep work as MultiLayerNetwork's, on every recurrent
// layer of the graph.
//
// Devices: every vertex and the sums of gradients at a fan-out run on the backend's ops, as layers
// do, so a graph runs on any device; inputs and labels given in host memory are copied to it, and
// output() answers in host memory.
//
// Threading as MultiLayerNetwork: one thread at a time; ops run under the context's thread budget.
//
// A ComputationGraph is a Model (nn/api/Model.h): ParallelWrapper, ParallelInference, the
// early-stopping trainers and the training listeners take it as they take a MultiLayerNetwork.
// Listeners are called as by a network: iterationDone after every minibatch of fit(), with
// onEpochStart/onEpochEnd around fit(iterator).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "iterators/DataSet.h"
#include "iterators/DataSetIterator.h"
#include "iterators/MultiDataSet.h"
#include "nn/api/Model.h"
#include "nn/api/TrainingListener.h"
#include "nn/backend/ForwardContext.h"
#include "nn/conf/graph/ComputationGraphConfiguration.h"
#include "nn/eval/Evaluation.h"
#include "nn/graph/ActivationPlan.h"
#include "nn/graph/FlatBuffers.h"
#include "nn/tensor/Device.h"
#include "nn/tensor/Tensor.h"

namespace dl4cpp {

class DeviceContext;
class LayerProfiler;
class NetworkStep;
namespace layers {
class RuntimeLayer;
class VertexRuntime;
class LossOutputRuntime;
}  // namespace layers

class ComputationGraph : public Model {
 public:
  // numThreads: CPU threads for this graph's ops; 0 = all cores.
  explicit ComputationGraph(ComputationGraphConfiguration conf, Device device = Device::cpu(),
                            int numThreads = 0);
  ~ComputationGraph() override;
  ComputationGraph(ComputationGraph&&) noexcept;
  ComputationGraph& operator=(ComputationGraph&&) noexcept;
  ComputationGraph(const ComputationGraph&) = delete;
  ComputationGraph& operator=(const ComputationGraph&) = delete;

  // Allocates the flat buffers and initialises parameters from the configuration's seed; calling
  // it again re-initialises. ConfigError when a layer's runtime cannot compute the loss its
  // configuration declares, BackendError on a device other than the CPU.
  void init() override;
  bool isInitialized() const override { return initialized_; }

  // One iteration: forward, backward, updater step. A DataSet fits a graph of one input and one
  // output.
  void fit(const MultiDataSet& batch);
  void fit(const DataSet& batch) override;
  // One epoch over the iterator (reset first when exhausted and resettable). DataError when it
  // yields no minibatch.
  void fit(DataSetIterator& iterator) override;
  void fit(DataSetIterator& iterator, int epochs);
  void fit(MultiDataSetIterator& iterator);
  void fit(MultiDataSetIterator& iterator, int epochs);

  // The outputs for `inputs` (one per network input, in addInputs() order), one host tensor per
  // network output in setOutputs() order.
  std::vector<Tensor> output(const std::vector<Tensor>& inputs, bool train = false);
  // The same for padded sequences: featuresMasks (empty, or one per input, an empty one where
  // every step is real) say which steps are real; recurrent layers output 0 at the others.
  std::vector<Tensor> output(const std::vector<Tensor>& inputs, bool train,
                             const std::vector<Tensor>& featuresMasks);
  std::vector<Tensor> output(const Tensor& input, bool train = false) {
    return output(std::vector<Tensor>{input}, train);
  }
  // The only output of a graph with one (ConfigError otherwise).
  Tensor outputSingle(const std::vector<Tensor>& inputs, bool train = false);
  Tensor outputSingle(const Tensor& input, bool train = false) override {
    return outputSingle(std::vector<Tensor>{input}, train);
  }
  Tensor outputSingle(const Tensor& input, bool train, const Tensor& featuresMask) override;

  // Stateful inference (DL4J's rnnTimeStep), as MultiLayerNetwork's: the outputs for the next
  // steps of the sequences, each recurrent layer starting from the state it kept at the end of the
  // previous call (zero at the first, after rnnClearPreviousState() and after a truncated-BPTT
  // fit) and keeping its new one. A sequence input is one step (N, C) or steps (N, C, T); when
  // every sequence input is one step, outputs of one step come back as (N, C). Inputs that are not
  // sequences are given whole at each call.
  std::vector<Tensor> rnnTimeStep(const std::vector<Tensor>& inputs);
  void rnnClearPreviousState() { timeStepState_ = false; }

  // The score of the last fitted minibatch: the sum of the outputs' mean losses plus the
  // regularisation terms.
  double score() const override { return score_; }
  void setScore(double score) override { score_ = score; }
  // The same quantity for `data` (Model::score): forward in inference or training mode only, no
  // gradient.
  double score(const MultiDataSet& data, bool training = false);
  double score(const DataSet& data, bool training) override {
    return score(MultiDataSet(data), training);
  }
  using Model::score;
  double calcRegularizationScore() override;

  // Evaluation of the only output over the iterator (a graph of one input and one output).
  Evaluation evaluate(DataSetIterator& iterator) override;
  // One Evaluation per output, in setOutputs() order.
  std::vector<Evaluation> evaluate(MultiDataSetIterator& iterator);

  // --- Gradients without an update (gradient checks) ---------------------------------------
  // Forward + backward; leaves dL/dparams of the summed mean losses in gradient() and, when
  // wanted, dL/dinputs in inputGradients(). Returns the summed mean loss.
  double computeGradientAndScore(const MultiDataSet& batch, bool wantInputGradient = false);
  double computeGradientAndScore(const DataSet& batch, bool wantInputGradient = false) override {
    return computeGradientAndScore(MultiDataSet(batch), wantInputGradient);
  }
  void applyUpdate() override;
  const std::vector<Tensor>& inputGradients() const { return inputGradients_; }

  // --- Flat buffers ----------------------------------------------------------------------
  int64_t numParams() const override { return buffers_.params.numel(); }
  Tensor params() const override { return buffers_.params; }
  void setParams(const Tensor& params) override;
  Tensor gradient() const override { return buffers_.gradients; }
  Tensor updaterState() const override { return buffers_.updaterState; }
  void setUpdaterState(const Tensor& state) override;
  Tensor layerState() const override { return buffers_.layerState; }
  void setLayerState(const Tensor& state) override;
  // Each state segment's place in layerState(); `layer` counts the graph's layers in
  // topological order.
  const std::vector<LayerStateSegment>& layerStateLayout() const override {
    return buffers_.stateLayout();
  }
  // The parameters of the frozen layers that come first in topological order (the start of
  // params()); a frozen layer after a trainable one is not counted, its parameters are averaged
  // with the rest by ParallelWrapper (the replicas agree on them, so they stay put up to float
  // rounding of the weighted mean).
  int64_t numFrozenParams() const override { return numFrozenParams_; }

  // The rate of the weights of layer `layer` (layers counted in topological order).
  std::optional<double> getLearningRate(int layer) const override;
  void setLearningRateScale(double scale) override;
  double learningRateScale() const override { return learningRateScale_; }
  int replicaIndex() const override { return replicaIndex_; }
  void setReplicaIndex(int index) override { replicaIndex_ = index; }

  // Activation memory per example, in floats: what the planned arena holds at its peak and what
  // every activation (and, training, gradient) would take in a buffer of its own. For sequences
  // of unfixed length, at the length of the last minibatch (1 before the first).
  struct ActivationMemory {
    int64_t peak = 0;
    int64_t total = 0;
  };
  ActivationMemory activationMemory(bool training) const;

  // Model files (ModelSerializer, docs/model-format.md): configuration, parameters, layer state,
  // counters and (saveUpdater) updater state, written atomically.
  void save(const std::filesystem::path& path, bool saveUpdater = true) const override;
  // Restores a saved graph on the CPU (all cores).
  static ComputationGraph load(const std::filesystem::path& path, bool loadUpdater = true);

  // A deep copy: configuration, parameters, updater and layer state, counters, replica index.
  ComputationGraph clone() const;
  std::unique_ptr<Model> cloneModel() const override;
  // A copy of the configuration on `device`, initialised, with its own context.
  std::unique_ptr<Model> newReplica(Device device, int numThreads) const override;

  const ComputationGraphConfiguration& getConfiguration() const { return conf_; }
  std::string summary() const override { return conf_.summary(); }
  std::string configurationJson() const override { return conf_.toJson(); }
  std::optional<InputType> declaredInputType() const override;
  std::optional<InputType> declaredOutputType() const override;
  bool trainsTruncatedBptt() const override {
    return conf_.backpropType == BackpropType::TruncatedBPTT;
  }
  int64_t getIterationCount() const override { return iteration_; }
  int getEpochCount() const override { return epoch_; }
  void setIterationCount(int64_t n) override { iteration_ = n; }
  void setEpochCount(int n) override {
    epoch_ = n;
    examplesInEpoch_ = 0;
  }
  // Minibatches of the current epoch already trained (as MultiLayerNetwork's: nonzero only in a
  // model saved inside an epoch, a ParallelWrapper checkpoint).
  int64_t getMinibatchesInEpoch() const override { return minibatchesInEpoch_; }
  void setMinibatchesInEpoch(int64_t n) override { minibatchesInEpoch_ = n; }
  // Layers in topological order, each named by its vertex.
  int numLayers() const override { return static_cast<int>(layers_.size()); }
  std::vector<std::string> layerNames() const override;
  std::vector<int64_t> layerParamCounts() const override;
  int numThreads() const override;
  DeviceContext& context() override { return *context_; }

  void setListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) override;
  void addListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) override;
  const std::vector<std::shared_ptr<TrainingListener>>& getListeners() const override {
    return listeners_;
  }

  // Per-layer profiling (nn/profiling/LayerProfiler.h), as MultiLayerNetwork::setProfiler: every
  // op is charged to the layer running it (layers numbered as layerNames() lists them), the
  // vertices' ops and the sums at fan-outs to LayerProfiler::kNetwork; nullptr turns it off.
  void setProfiler(std::shared_ptr<LayerProfiler> profiler);
  LayerProfiler* getProfiler() const;

 private:
  struct Node;  // a network input or a vertex, its runtime and its tensors
  struct Item;  // one entry of the execution order: a step of layers or a vertex

  struct BatchSize {
    int64_t examples = 0;
    int64_t steps = 0;  // T of the sequences, 0 without
  };

  void requireInit(const char* method) const;
  BatchSize checkBatch(const MultiDataSet& batch, bool needLabels, const char* method) const;
  // Plans the arenas for sequences of `steps` (0: none), when they are not planned for it.
  void planActivations(int64_t steps);
  void ensureCapacity(BatchSize size);
  // `host` where it already lives on the graph's device, otherwise a copy of it in `store` (the
  // inputs and labels a caller hands over, on a GPU).
  const Tensor& onDevice(const Tensor& host, Tensor& store);
  void forwardPass(const std::vector<Tensor>& inputs, const std::vector<Tensor>& masks,
                   BatchSize size, bool training);
  // Where consumer `node`'s backward writes the gradient of its input slot `slot`: the input's
  // gradient itself when nothing has written it yet, else a scratch buffer added in afterwards.
  Tensor gradientTarget(size_t node, size_t slot, std::vector<bool>& written);
  void addScratchGradients(size_t node);
  void profileLayer(int layer);
  // Adds output j of the last forward pass against batch's labels j to `eval`.
  void evaluateOutput(Evaluation& eval, const MultiDataSet& batch, size_t j);
  void fitMinibatch(const MultiDataSet& batch);
  // Truncated BPTT: the minibatch's segments one update each, the recurrent state carried over.
  void fitTruncated(const MultiDataSet& batch);
  void fitStep(const MultiDataSet& batch);
  // One epoch over the minibatches `next` yields (until empty), with the listeners' calls.
  void fitEpoch(const std::function<std::optional<MultiDataSet>()>& next, int64_t examplesPerEpoch);

  ComputationGraphConfiguration conf_;
  std::unique_ptr<DeviceContext> context_;
  bool initialized_ = false;
  FlatBuffers buffers_;

  std::vector<Node> nodes_;        // network inputs, then vertices in topological order
  std::vector<size_t> layerNode_;  // by layer index: its node
  std::vector<Item> items_;        // forward order
  std::vector<std::unique_ptr<layers::RuntimeLayer>> layers_;  // by layer index
  std::vector<std::unique_ptr<NetworkStep>> steps_;
  std::vector<layers::LossOutputRuntime*> losses_;  // per network output, null when no loss
  std::vector<size_t> outputNodes_;
  // Per layer index: the current batch's tensors (LayerTensors).
  std::vector<Tensor> layerInputs_, layerOutputs_, layerGrads_;

  // Per node, the masks its output carries this pass (null: every step real, or no sequences).
  std::vector<const Tensor*> nodeMasks_;

  // Lifetimes of the buffers (their sizes filled in per sequence length), and the plans.
  std::vector<ActivationPlan::Buffer> trainingBuffers_, inferenceBuffers_;
  ActivationPlan trainingPlan_, inferencePlan_;
  int64_t plannedSteps_ = -1;
  int64_t capacity_ = 0;  // examples the arena holds at the planned steps
  Tensor arena_;
  int64_t largestPerExample_ = 0;     // the largest node's values per minibatch example
  std::vector<Tensor> scratchStore_;  // per input slot: gradients summed in at a fan-out
  std::vector<Tensor> inputGradStore_, inputGradients_;
  std::vector<Tensor> stagedInputs_, stagedLabels_;  // inputs and labels copied to the device

  std::vector<std::shared_ptr<TrainingListener>> listeners_;
  int64_t numFrozenParams_ = 0;
  double score_ = 0;
  double learningRateScale_ = 1;
  int64_t iteration_ = 0;
  int epoch_ = 0;
  int64_t minibatchesInEpoch_ = 0;
  int64_t examplesInEpoch_ = 0;  // for listeners: examples fitted since the last epoch boundary
  int replicaIndex_ = 0;
  // Recurrent state across passes: truncated BPTT's segments and rnnTimeStep set it for theirs.
  ForwardContext::RecurrentStateMode stateMode_ = ForwardContext::RecurrentStateMode::NONE;
  int64_t backwardLength_ = 0;  // truncated BPTT's, for the current segment's pass
  bool timeStepState_ = false;  // whether the recurrent layers hold a state rnnTimeStep continues
};

}  // namespace dl4cpp

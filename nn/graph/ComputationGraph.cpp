#include "nn/graph/ComputationGraph.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <span>

#include "nn/backend/Backend.h"
#include "nn/backend/DeviceContext.h"
#include "nn/conf/TimeStepPreProcessor.h"
#include "nn/conf/layers/LossOutput.h"
#include "nn/layers/InputDropout.h"
#include "nn/layers/LossOutputRuntime.h"
#include "nn/layers/RuntimeLayer.h"
#include "nn/layers/VertexRuntime.h"
#include "nn/multilayer/TimeSegments.h"
#include "nn/profiling/LayerProfiler.h"
#include "nn/tensor/DeviceMemory.h"

namespace dl4cpp {

struct ComputationGraph::Node {
  std::string name;
  bool isInput = false;
  int layer = -1;  // layer index, or -1
  bool trainable = false;
  std::unique_ptr<layers::VertexRuntime> vertex;
  InputType outputType, layerInputType;
  bool reorderingInput = false;  // a layer whose preprocessor reorders values (not a view)
  int64_t batchMultiplier = 1, batchDivisor = 1;  // its examples per minibatch example
  std::vector<size_t> inputs, consumers;
  bool isOutput = false;
  int item = -1;                               // the execution item running it
  bool needsGrad = false;                      // this pass: whether dL/d(output) is needed
  Tensor output, grad;                         // the current batch's views
  std::vector<Tensor> inputViews, inputGrads;  // argument lists for the vertex's calls
  std::vector<bool> scratchUsed;               // per input slot, this backward call
  std::vector<Tensor> inputPieces;             // a fused sum's views of its inputs' pieces
  // A sum whose only reader is a ReLU layer (a residual block's end) runs fused with it
  // (addThenRelu): reluAfter, on the sum, is the ReLU's node; reluOf, on the ReLU, the sum's.
  static constexpr size_t kNone = ~size_t{0};
  size_t reluAfter = kNone, reluOf = kNone;

  // The examples it holds for a minibatch of n (checkBatch() made it a whole number).
  int64_t examples(int64_t n) const { return n * batchMultiplier / batchDivisor; }
  // Values it holds per minibatch example for sequences of `steps` (0: none), rounded up where it
  // splits the minibatch.
  int64_t valuesPerMinibatchExample(int64_t steps) const {
    const int64_t perExample = outputType.flatSize() * stepsHeld(outputType, steps);
    return (perExample * batchMultiplier + batchDivisor - 1) / batchDivisor;
  }
  // Its output's shape for a minibatch of n sequences of `steps`.
  Shape shape(int64_t n, int64_t steps) const { return outputType.shape(examples(n), steps); }

  // The steps of a tensor of `type` in a minibatch of sequences of `steps`: 1 for rows and images
  // (unless they are per time step).
  static int64_t stepsHeld(const InputType& type, int64_t steps) {
    if (type.kind != InputType::Kind::Recurrent && !type.timeDistributed) return 1;
    return type.length > 0 ? type.length : std::max<int64_t>(steps, 1);
  }
};

struct ComputationGraph::Item {
  int step = -1;    // an index into steps_, or -1 for a vertex
  size_t node = 0;  // the vertex, or the node of the step's first layer
};

namespace {

// One layer of a graph run by itself: MultiLayerNetwork's SingleLayerStep, with a frozen layer
// (which a graph may hold anywhere) passing gradients through without computing its own.
class GraphLayerStep final : public NetworkStep {
 public:
  GraphLayerStep(int index, layers::RuntimeLayer& layer, bool computesLoss, bool frozen)
      : NetworkStep(index, 1), layer_(layer), computesLoss_(computesLoss), frozen_(frozen) {}

  void forward(DeviceContext& ctx, const LayerTensors& t, const ForwardContext& pass) override {
    const int i = first();
    enterLayer(ctx, i);
    ForwardContext context = pass.forLayer(i);
    if (frozen_) context.training = false;
    layer_.forward(ctx, t.inputs[i], t.outputs[i], context);
  }
  void backward(DeviceContext& ctx, const LayerTensors& t, Tensor* inputGradient) override {
    const int i = first();
    enterLayer(ctx, i);
    if (!computesLoss_) layer_.backwardActivation(ctx, t.outputs[i], t.gradients[i]);
    layer_.backward(ctx, t.inputs[i], t.gradients[i], !frozen_, inputGradient);
  }

 private:
  layers::RuntimeLayer& layer_;
  bool computesLoss_, frozen_;
};

}  // namespace

namespace {

// Values a sum fused with its ReLU handles at a time: a piece (512 KiB of floats) that stays in
// cache between the two ops, and large enough for the CPU's element-wise ops to split across
// threads (kActivationsParallelMinElements).
constexpr int64_t kFusedPiece = int64_t{1} << 17;

// y = relu(xs[0] + xs[1] + ...), piece by piece, so that each piece of the sum is still in cache
// when the ReLU reads it back and the sum never goes through memory; element-wise ops, so the
// same bits as the two over whole tensors. `pieces` holds one view per input.
void addThenRelu(Backend& ops, std::span<const Tensor> xs, std::vector<Tensor>& pieces, Tensor& y) {
  const int64_t n = y.numel();
  for (int64_t at = 0; at < n; at += kFusedPiece) {
    const Shape piece{std::min(kFusedPiece, n - at)};
    for (size_t j = 0; j < xs.size(); ++j) pieces[j] = xs[j].view(at, piece);
    Tensor out = y.view(at, piece);
    ops.combineForward(CombineOp::ADD, pieces, out);
    ops.activationForward(ActivationKind::RELU, 0.0f, out, out);
  }
}

// The gradient reaching each input of addThenRelu from dy, the gradient of its y: relu'(y) dy,
// written into the first non-empty dxs and copied from there into the others while the piece is
// in cache (the sum's gradient never goes through memory).
void reluThenAddGradients(Backend& ops, const Tensor& y, const Tensor& dy, std::span<Tensor> dxs) {
  Tensor* first = nullptr;
  for (Tensor& dx : dxs)
    if (!dx.empty() && first == nullptr) first = &dx;
  if (first == nullptr) return;
  const int64_t n = y.numel();
  for (int64_t at = 0; at < n; at += kFusedPiece) {
    const Shape piece{std::min(kFusedPiece, n - at)};
    Tensor out = first->view(at, piece);
    ops.activationBackward(ActivationKind::RELU, 0.0f, Tensor(), y.view(at, piece),
                           dy.view(at, piece), out);
    for (Tensor& dx : dxs) {
      if (dx.empty() || &dx == first) continue;
      Tensor copy = dx.view(at, piece);
      ops.copy(out, copy);
    }
  }
}

}  // namespace

ComputationGraph::ComputationGraph(ComputationGraphConfiguration conf, Device device,
                                   int numThreads)
    : conf_(std::move(conf)), context_(std::make_unique<DeviceContext>(device, numThreads)) {}

ComputationGraph::~ComputationGraph() = default;
ComputationGraph::ComputationGraph(ComputationGraph&&) noexcept = default;
ComputationGraph& ComputationGraph::operator=(ComputationGraph&&) noexcept = default;

int ComputationGraph::numThreads() const { return context_->numThreads(); }

void ComputationGraph::setProfiler(std::shared_ptr<LayerProfiler> profiler) {
  context_->setProfiler(std::move(profiler));
}

LayerProfiler* ComputationGraph::getProfiler() const { return context_->profiler(); }

void ComputationGraph::requireInit(const char* method) const {
  if (!initialized_)
    throw ConfigError(std::string("ComputationGraph::") + method + ": call init() first");
}

void ComputationGraph::profileLayer(int layer) {
  if (LayerProfiler* p = context_->profiler()) p->enterLayer(layer);
}

void ComputationGraph::init() {
  std::vector<Node> nodes;
  std::map<std::string, size_t> ids;
  const size_t numInputs = conf_.networkInputs.size();
  for (size_t i = 0; i < numInputs; ++i) {
    Node n;
    n.name = conf_.networkInputs[i];
    n.isInput = true;
    n.outputType = conf_.networkInputTypes[i];
    ids[n.name] = nodes.size();
    nodes.push_back(std::move(n));
  }
  std::vector<const Layer*> layerConfs;
  std::vector<std::unique_ptr<layers::RuntimeLayer>> runtimes;
  for (const auto& v : conf_.vertices) {
    Node n;
    n.name = v.name;
    n.outputType = v.outputType;
    n.batchMultiplier = v.batchMultiplier;
    n.batchDivisor = v.batchDivisor;
    for (const auto& in : v.inputs) {
      n.inputs.push_back(ids.at(in));
      nodes[ids.at(in)].consumers.push_back(nodes.size());
    }
    n.inputViews.resize(n.inputs.size());
    n.inputGrads.resize(n.inputs.size());
    n.scratchUsed.assign(n.inputs.size(), false);
    n.inputPieces.resize(n.inputs.size());
    if (v.layer) {
      n.layer = static_cast<int>(layerConfs.size());
      n.layerInputType = v.layerInputType;
      n.reorderingInput = reordersValues(v.preProcessor);
      n.trainable = !v.layer->frozen && v.layer->numParams() > 0;
      layerConfs.push_back(v.layer.get());
      runtimes.push_back(detail::withPreProcessor(
          v.preProcessor, v.layerInputType,
          layers::withInputDropout(v.layer->dropOut.value_or(0), v.layer->instantiate())));
      if (dynamic_cast<const LossOutput*>(v.layer.get()) && !runtimes.back()->asLossOutput())
        throw ConfigError(fmt::format(
            "ComputationGraph::init: layer vertex \"{}\" ({}) declares a loss, but the runtime "
            "object its instantiate() returns does not compute one (it must derive from "
            "layers::LossOutputRuntime and return itself from asLossOutput())",
            v.name, v.layer->typeName()));
    } else {
      n.vertex = v.vertex->instantiate(v.inputTypes);
    }
    ids[n.name] = nodes.size();
    nodes.push_back(std::move(n));
  }
  std::vector<size_t> outputNodes;
  std::vector<layers::LossOutputRuntime*> losses;
  for (const auto& name : conf_.networkOutputs) {
    Node& n = nodes[ids.at(name)];
    n.isOutput = true;
    outputNodes.push_back(ids.at(name));
    losses.push_back(n.layer >= 0 ? runtimes[static_cast<size_t>(n.layer)]->asLossOutput()
                                  : nullptr);
  }

  // Buffers (allocated before anything else changes), then the views each runtime gets.
  FlatBuffers buffers;
  const std::vector<FlatBuffers::LayerViews> views =
      buffers.init(layerConfs, conf_.seed, context_->device(), "ComputationGraph::init");
  for (size_t l = 0; l < runtimes.size(); ++l) {
    runtimes[l]->bindParams(views[l].params, views[l].grads);
    runtimes[l]->bindState(views[l].state);
  }

  // Steps: what the backend plans over the layers (each layer's readers as the graph has them),
  // kept where its layers are not frozen, every other layer a step of its own.
  std::vector<size_t> layerNode(runtimes.size());
  for (size_t id = 0; id < nodes.size(); ++id)
    if (nodes[id].layer >= 0) layerNode[static_cast<size_t>(nodes[id].layer)] = id;
  std::vector<LayerDescription> described;
  for (size_t l = 0; l < runtimes.size(); ++l) {
    described.push_back(runtimes[l]->describe());
    const Node& n = nodes[layerNode[l]];
    for (size_t c : n.consumers)
      described.back().readers.push_back(nodes[c].layer >= 0 ? nodes[c].layer
                                                             : LayerDescription::kNetwork);
    if (n.isOutput) described.back().readers.push_back(LayerDescription::kNetwork);
  }
  const int numLayersTotal = static_cast<int>(runtimes.size());
  std::vector<std::unique_ptr<NetworkStep>> planned = context_->backend().planSteps(described);
  std::vector<std::unique_ptr<NetworkStep>> steps;
  std::vector<int> stepOfLayer(runtimes.size(), -1);
  int next = 0;
  auto singleSteps = [&](int end) {
    for (; next < end; ++next) {
      const auto l = static_cast<size_t>(next);
      stepOfLayer[l] = static_cast<int>(steps.size());
      steps.push_back(std::make_unique<GraphLayerStep>(
          next, *runtimes[l], runtimes[l]->asLossOutput() != nullptr, layerConfs[l]->frozen));
    }
  };
  for (auto& step : planned) {
    if (step->first() < next || step->count() < 1 || step->last() >= numLayersTotal)
      throw BackendError(fmt::format(
          "the backend's plan has a step over layers {}..{} of a graph of {} layers: its steps "
          "must cover layers in order, without overlap",
          step->first(), step->last(), numLayersTotal));
    bool usable = true;
    for (int l = step->first(); l <= step->last(); ++l) {
      const auto index = static_cast<size_t>(l);
      usable = usable && !layerConfs[index]->frozen && !runtimes[index]->asLossOutput();
      if (l > step->first())
        usable = usable && nodes[layerNode[index]].inputs.front() == layerNode[index - 1];
    }
    if (!usable) continue;
    singleSteps(step->first());
    for (int l = step->first(); l <= step->last(); ++l)
      stepOfLayer[static_cast<size_t>(l)] = static_cast<int>(steps.size());
    next = step->last() + 1;
    steps.push_back(std::move(step));
  }
  singleSteps(numLayersTotal);

  // Sums read only by a ReLU layer of their own step, not a network output, on images or rows:
  // the sum writes the ReLU's output and takes its gradient (forwardPass,
  // computeGradientAndScore), so neither the sum's values nor their gradient go through memory.
  for (size_t id = numInputs; id < nodes.size(); ++id) {
    Node& sum = nodes[id];
    if (!sum.vertex || sum.vertex->combineOp() != CombineOp::ADD || sum.isOutput ||
        sum.consumers.size() != 1 || sum.outputType.kind == InputType::Kind::Recurrent ||
        sum.outputType.timeDistributed)
      continue;
    Node& relu = nodes[sum.consumers.front()];
    if (relu.layer < 0 || relu.isOutput) continue;
    const auto l = static_cast<size_t>(relu.layer);
    const LayerDescription& d = described[l];
    if (d.kind != LayerDescription::Kind::ACTIVATION || d.activation != ActivationKind::RELU ||
        steps[static_cast<size_t>(stepOfLayer[l])]->count() != 1)
      continue;
    sum.reluAfter = sum.consumers.front();
    relu.reluOf = id;
  }

  // Execution order: the vertices in topological order, a step where its first layer is.
  std::vector<Item> items;
  for (size_t id = numInputs; id < nodes.size(); ++id) {
    Node& n = nodes[id];
    if (n.layer >= 0) {
      const int s = stepOfLayer[static_cast<size_t>(n.layer)];
      if (steps[static_cast<size_t>(s)]->first() != n.layer) {
        n.item = static_cast<int>(items.size()) - 1;  // inside the step just placed
        continue;
      }
      items.push_back({s, id});
    } else {
      items.push_back({-1, id});
    }
    n.item = static_cast<int>(items.size()) - 1;
  }

  // Lifetimes: training runs items 0 .. K-1 forward, the losses at K, item k backward at 2K - k.
  // Sizes are filled in by planActivations().
  const int k = static_cast<int>(items.size());
  std::vector<ActivationPlan::Buffer> training, inference;
  for (size_t id = numInputs; id < nodes.size(); ++id) {
    const Node& n = nodes[id];
    const int64_t size = 0;
    int lastForward = n.isOutput ? k : n.item;
    int firstGradient = n.isOutput ? k : 2 * k;
    for (size_t c : n.consumers) {
      lastForward = std::max(lastForward, nodes[c].item);
      firstGradient = std::min(firstGradient, 2 * k - nodes[c].item);
    }
    training.push_back({size, n.item, 2 * k - n.item});         // activation
    training.push_back({size, firstGradient, 2 * k - n.item});  // gradient
    inference.push_back({size, n.item, lastForward});
  }

  nodes_ = std::move(nodes);
  layerNode_ = std::move(layerNode);
  items_ = std::move(items);
  layers_ = std::move(runtimes);
  steps_ = std::move(steps);
  losses_ = std::move(losses);
  outputNodes_ = std::move(outputNodes);
  buffers_ = std::move(buffers);
  trainingBuffers_ = std::move(training);
  inferenceBuffers_ = std::move(inference);
  nodeMasks_.assign(nodes_.size(), nullptr);
  plannedSteps_ = -1;
  capacity_ = 0;
  arena_ = Tensor();
  planActivations(0);
  layerInputs_.assign(layers_.size(), Tensor());
  layerOutputs_.assign(layers_.size(), Tensor());
  layerGrads_.assign(layers_.size(), Tensor());
  inputGradStore_.assign(numInputs, Tensor());
  inputGradients_.clear();
  stagedInputs_.assign(numInputs, Tensor());
  stagedLabels_.assign(conf_.networkOutputs.size(), Tensor());
  numFrozenParams_ = 0;
  for (const auto& v : conf_.vertices) {
    if (!v.layer) continue;
    if (!v.layer->frozen) break;
    numFrozenParams_ += v.layer->numParams();
  }
  iteration_ = 0;
  epoch_ = 0;
  timeStepState_ = false;
  minibatchesInEpoch_ = 0;
  examplesInEpoch_ = 0;
  score_ = 0;
  initialized_ = true;
}

ComputationGraph::BatchSize ComputationGraph::checkBatch(const MultiDataSet& batch, bool needLabels,
                                                         const char* method) const {
  const size_t numInputs = conf_.networkInputs.size();
  if (batch.features.size() != numInputs)
    throw ShapeError(
        fmt::format("ComputationGraph::{}: {} feature tensors for a graph of {} inputs", method,
                    batch.features.size(), numInputs));
  BatchSize size{batch.numExamples(), 0};
  const int64_t n = size.examples;
  int firstSequence = -1;  // the input whose length the others must share
  for (size_t i = 0; i < numInputs; ++i) {
    const Tensor& f = batch.features[i];
    const InputType& type = conf_.networkInputTypes[i];
    if (type.kind == InputType::Kind::Recurrent) {
      if (f.rank() != 3 || f.dim(0) == 0 || f.dim(0) != n || f.dim(1) != type.size ||
          f.dim(2) == 0 || (type.length > 0 && f.dim(2) != type.length))
        throw ShapeError(fmt::format(
            "ComputationGraph::{}: features[{}] {} do not match input \"{}\" of type {} "
            "(expected [{}, {}, {}]: examples, features, time steps)",
            method, i, f.shape().toString(), conf_.networkInputs[i], type.toString(), n, type.size,
            type.length > 0 ? std::to_string(type.length) : std::string("T > 0")));
      if (firstSequence >= 0 && f.dim(2) != size.steps)
        throw ShapeError(fmt::format(
            "ComputationGraph::{}: features[{}] are sequences of {} steps, features[{}] of {}: "
            "the sequences of one minibatch share one length (pad them, and mask the padding)",
            method, i, f.dim(2), firstSequence, size.steps));
      if (firstSequence < 0) firstSequence = static_cast<int>(i);
      size.steps = f.dim(2);
      continue;
    }
    const int64_t perExample = type.flatSize();
    if (f.empty() || f.rank() < 2 || f.dim(0) == 0 || f.dim(0) != n ||
        f.numel() != f.dim(0) * perExample)
      throw ShapeError(fmt::format(
          "ComputationGraph::{}: features[{}] {} do not match input \"{}\" of type {} (expected "
          "[{}, {}])",
          method, i, f.shape().toString(), conf_.networkInputs[i], type.toString(), n, perExample));
  }
  auto checkMasks = [&](const std::vector<Tensor>& masks, size_t count, const char* what,
                        const std::function<bool(size_t)>& isSequence) {
    if (masks.empty()) return;
    if (masks.size() != count)
      throw ShapeError(fmt::format(
          "ComputationGraph::{}: {} {} masks for {} {} tensors (give one per tensor, an empty one "
          "where every step is real)",
          method, masks.size(), what, count, what));
    for (size_t i = 0; i < count; ++i) {
      const Tensor& m = masks[i];
      if (m.empty()) continue;
      if (!isSequence(i))
        throw ShapeError(fmt::format(
            "ComputationGraph::{}: a {} mask {} was given for {}[{}], which holds no sequences",
            method, what, m.shape().toString(), what, i));
      if (m.rank() != 2 || m.dim(0) != n || m.dim(1) != size.steps || !m.onHost())
        throw ShapeError(fmt::format(
            "ComputationGraph::{}: the mask of {}[{}] is {}: expected a host tensor [{}, {}] for "
            "{} sequences of {} steps",
            method, what, i, m.shape().toString(), n, size.steps, n, size.steps));
    }
  };
  checkMasks(batch.featuresMasks, numInputs, "features", [&](size_t i) {
    return conf_.networkInputTypes[i].kind == InputType::Kind::Recurrent;
  });
  for (const Node& node : nodes_)
    if ((n * node.batchMultiplier) % node.batchDivisor != 0)
      throw ShapeError(fmt::format(
          "ComputationGraph::{}: vertex \"{}\" splits the examples reaching it into {} equal "
          "parts (UnstackVertex), but a minibatch of {} examples gives it {}{}",
          method, node.name, node.batchDivisor, n, n * node.batchMultiplier,
          node.batchMultiplier == 1 ? "" : " (stacked)"));
  if (needLabels) {
    if (batch.labels.size() != outputNodes_.size())
      throw ShapeError(
          fmt::format("ComputationGraph::{}: {} label tensors for a graph of {} outputs", method,
                      batch.labels.size(), outputNodes_.size()));
    for (size_t j = 0; j < outputNodes_.size(); ++j) {
      const Tensor& l = batch.labels[j];
      const Node& out = nodes_[outputNodes_[j]];
      const Shape expected = out.shape(n, size.steps);
      if (l.shape() != expected)
        throw ShapeError(fmt::format(
            "ComputationGraph::{}: labels[{}] {} do not match output \"{}\": expected {}{}", method,
            j, l.shape().toString(), conf_.networkOutputs[j], expected.toString(),
            expected.rank() == 3 ? " (examples, outputs, time steps)" : ""));
    }
    checkMasks(batch.labelsMasks, outputNodes_.size(), "labels", [&](size_t j) {
      return nodes_[outputNodes_[j]].outputType.kind == InputType::Kind::Recurrent;
    });
  }
  return size;
}

void ComputationGraph::planActivations(int64_t steps) {
  if (steps == plannedSteps_) return;
  const size_t numInputs = conf_.networkInputs.size();
  largestPerExample_ = 0;
  for (size_t id = numInputs; id < nodes_.size(); ++id) {
    const int64_t size = nodes_[id].valuesPerMinibatchExample(steps);
    const size_t b = id - numInputs;
    trainingBuffers_[2 * b].valuesPerExample = size;
    trainingBuffers_[2 * b + 1].valuesPerExample = size;
    inferenceBuffers_[b].valuesPerExample = size;
    largestPerExample_ = std::max(largestPerExample_, size);
  }
  trainingPlan_ = ActivationPlan(trainingBuffers_);
  inferencePlan_ = ActivationPlan(inferenceBuffers_);
  plannedSteps_ = steps;
  capacity_ = 0;  // the arena is sized again for the new plan
  scratchStore_.clear();
}

void ComputationGraph::ensureCapacity(BatchSize size) {
  planActivations(size.steps);
  if (size.examples <= capacity_) return;
  const int64_t batch = size.examples;
  const int64_t perExample = std::max(trainingPlan_.peak(), inferencePlan_.peak());
  try {
    if (arena_.numel() < perExample * batch)
      arena_ = Tensor(Shape{perExample * batch}, context_->device());
    for (size_t i = 0; i < inputGradStore_.size(); ++i)
      inputGradStore_[i] =
          Tensor(Shape{nodes_[i].shape(batch, size.steps).numel()}, context_->device());
  } catch (const AllocationError& e) {
    throw AllocationError(
        fmt::format("ComputationGraph: activations for a batch of {} ({} values per example): {}",
                    batch, perExample, e.what()));
  }
  scratchStore_.clear();
  capacity_ = batch;
}

const Tensor& ComputationGraph::onDevice(const Tensor& host, Tensor& store) {
  if (host.empty() || host.device() == context_->device()) return host;
  if (store.shape() != host.shape()) store = Tensor(host.shape(), context_->device());
  store.copyFrom(host);
  return store;
}

void ComputationGraph::forwardPass(const std::vector<Tensor>& inputs,
                                   const std::vector<Tensor>& masks, BatchSize size,
                                   bool training) {
  ensureCapacity(size);
  const int64_t n = size.examples, steps = size.steps;
  const ActivationPlan& plan = training ? trainingPlan_ : inferencePlan_;
  const size_t numInputs = conf_.networkInputs.size();
  for (size_t i = 0; i < numInputs; ++i) {
    nodes_[i].output = onDevice(inputs[i], stagedInputs_[i]).reshape(nodes_[i].shape(n, steps));
    nodes_[i].grad = inputGradStore_[i].view(0, nodes_[i].shape(n, steps));
    nodeMasks_[i] = i < masks.size() && !masks[i].empty() ? &masks[i] : nullptr;
  }
  for (size_t id = numInputs; id < nodes_.size(); ++id) {
    Node& node = nodes_[id];
    const size_t b = id - numInputs;
    const int64_t examples = node.examples(n);
    const Shape shape = node.shape(n, steps);
    node.output = arena_.view(plan.offset(training ? 2 * b : b) * n, shape);
    node.grad = training ? arena_.view(trainingPlan_.offset(2 * b + 1) * n, shape) : Tensor();
    nodeMasks_[id] = nullptr;
    for (size_t j = 0; j < node.inputs.size(); ++j) {
      node.inputViews[j] = nodes_[node.inputs[j]].output;
      if (nodeMasks_[id] == nullptr && node.outputType.kind == InputType::Kind::Recurrent)
        nodeMasks_[id] = nodeMasks_[node.inputs[j]];
    }
    if (node.layer >= 0) {
      const auto l = static_cast<size_t>(node.layer);
      // A preprocessor that reorders values runs inside the layer (TimeStepPreProcessor), which
      // reads its input as the producer made it.
      layerInputs_[l] =
          node.reorderingInput
              ? node.inputViews[0]
              : node.inputViews[0].reshape(node.layerInputType.shape(examples, steps));
      layerOutputs_[l] = node.output;
      layerGrads_[l] = node.grad;
    }
  }
  const LayerTensors tensors{layerInputs_, layerOutputs_, layerGrads_};
  ForwardContext pass = ForwardContext::pass(training, conf_.seed, replicaIndex_, iteration_);
  pass.steps = steps;
  pass.recurrentState = stateMode_;
  pass.tbpttBackwardLength = backwardLength_;
  for (const Item& item : items_) {
    Node& node = nodes_[item.node];
    if (item.step >= 0) {
      if (node.reluOf != Node::kNone) continue;             // the sum before it wrote its output
      pass.featuresMask = nodeMasks_[node.inputs.front()];  // what its first layer reads
      steps_[static_cast<size_t>(item.step)]->forward(*context_, tensors, pass);
    } else {
      profileLayer(LayerProfiler::kNetwork);
      if (node.reluAfter != Node::kNone)
        addThenRelu(context_->backend(), node.inputViews, node.inputPieces,
                    nodes_[node.reluAfter].output);
      else
        node.vertex->forward(*context_, node.inputViews, node.output, training);
    }
  }
}

Tensor ComputationGraph::gradientTarget(size_t node, size_t slot, std::vector<bool>& written) {
  Node& consumer = nodes_[node];
  Node& producer = nodes_[consumer.inputs[slot]];
  const Shape shape = consumer.layer >= 0
                          ? layerInputs_[static_cast<size_t>(consumer.layer)].shape()
                          : producer.output.shape();
  if (!written[consumer.inputs[slot]]) {
    written[consumer.inputs[slot]] = true;
    return producer.grad.reshape(shape);
  }
  if (scratchStore_.size() <= slot) scratchStore_.resize(slot + 1);
  if (scratchStore_[slot].numel() < producer.grad.numel()) {
    scratchStore_[slot] = Tensor(Shape{largestPerExample_ * capacity_}, context_->device());
  }
  consumer.scratchUsed[slot] = true;
  return scratchStore_[slot].view(0, shape);
}

void ComputationGraph::addScratchGradients(size_t node) {
  Node& consumer = nodes_[node];
  for (size_t j = 0; j < consumer.inputs.size(); ++j) {
    if (!consumer.scratchUsed[j]) continue;
    consumer.scratchUsed[j] = false;
    Tensor& sum = nodes_[consumer.inputs[j]].grad;
    const Tensor terms[] = {sum, scratchStore_[j].view(0, sum.shape())};
    context_->backend().combineForward(CombineOp::ADD, terms, sum);
  }
}

double ComputationGraph::computeGradientAndScore(const MultiDataSet& batch,
                                                 bool wantInputGradient) {
  requireInit("computeGradientAndScore");
  for (size_t j = 0; j < losses_.size(); ++j)
    if (losses_[j] == nullptr)
      throw ConfigError(fmt::format(
          "ComputationGraph: output \"{}\" computes no loss, so the graph cannot be trained; end "
          "it with an OutputLayer or a LossLayer",
          conf_.networkOutputs[j]));
  const BatchSize size = checkBatch(batch, true, "fit");
  const int64_t n = size.examples;
  context_->bindToCurrentThread();
  forwardPass(batch.features, batch.featuresMasks, size, true);

  // Which outputs' gradients are needed: below a trainable layer, or an input when asked.
  for (Node& node : nodes_) {
    node.needsGrad = node.isInput ? wantInputGradient : node.trainable;
    for (size_t in : node.inputs) node.needsGrad = node.needsGrad || nodes_[in].needsGrad;
  }

  std::vector<bool> written(nodes_.size(), false);
  double loss = 0;
  for (size_t j = 0; j < outputNodes_.size(); ++j) {
    Node& out = nodes_[outputNodes_[j]];
    profileLayer(out.layer);
    losses_[j]->setLabelsMask(batch.labelsMask(j).empty() ? nullptr : &batch.labelsMask(j));
    const double sum = losses_[j]->lossGradient(
        *context_, out.output, onDevice(batch.labels[j], stagedLabels_[j]), out.grad);
    profileLayer(LayerProfiler::kNetwork);
    const int64_t examples = out.examples(n);
    context_->backend().scale(out.grad, 1.0f / static_cast<float>(examples));
    written[outputNodes_[j]] = true;
    loss += sum / static_cast<double>(examples);
  }

  const LayerTensors tensors{layerInputs_, layerOutputs_, layerGrads_};
  for (size_t i = items_.size(); i-- > 0;) {
    const Item& item = items_[i];
    if (item.step >= 0) {
      NetworkStep& step = *steps_[static_cast<size_t>(item.step)];
      const Node& last = nodes_[layerNode_[static_cast<size_t>(step.last())]];
      const Node& first = nodes_[item.node];
      if (!last.needsGrad && !first.needsGrad) continue;
      if (first.reluOf != Node::kNone) continue;  // the sum before it takes its gradient
      Tensor inputGrad;
      if (nodes_[first.inputs[0]].needsGrad) inputGrad = gradientTarget(item.node, 0, written);
      step.backward(*context_, tensors, inputGrad.empty() ? nullptr : &inputGrad);
      addScratchGradients(item.node);
    } else {
      Node& node = nodes_[item.node];
      if (!node.needsGrad) continue;
      for (size_t j = 0; j < node.inputs.size(); ++j)
        node.inputGrads[j] =
            nodes_[node.inputs[j]].needsGrad ? gradientTarget(item.node, j, written) : Tensor();
      profileLayer(LayerProfiler::kNetwork);
      if (node.reluAfter != Node::kNone) {
        const Node& relu = nodes_[node.reluAfter];
        reluThenAddGradients(context_->backend(), relu.output, relu.grad, node.inputGrads);
      } else {
        node.vertex->backward(*context_, node.inputViews, node.output, node.grad, node.inputGrads);
      }
      addScratchGradients(item.node);
    }
  }
  inputGradients_.clear();
  if (wantInputGradient)
    for (size_t i = 0; i < conf_.networkInputs.size(); ++i) {
      if (!written[i]) nodes_[i].grad.fill(0);  // an input only frozen layers read
      inputGradients_.push_back(nodes_[i].grad.reshape(batch.features[i].shape()));
    }
  return loss;
}

void ComputationGraph::applyUpdate() {
  requireInit("applyUpdate");
  context_->bindToCurrentThread();
  buffers_.applyUpdate(context_->backend(), context_->profiler(), iteration_, epoch_,
                       learningRateScale_, [&](int layer) {
                         for (const Node& n : nodes_)
                           if (n.layer == layer) return fmt::format("layer vertex \"{}\"", n.name);
                         return fmt::format("layer {}", layer);
                       });
}

void ComputationGraph::fitMinibatch(const MultiDataSet& batch) {
  if (conf_.backpropType == BackpropType::TruncatedBPTT)
    fitTruncated(batch);
  else
    fitStep(batch);
}

void ComputationGraph::fitTruncated(const MultiDataSet& batch) {
  const BatchSize size = checkBatch(batch, true, "fit");
  if (size.steps == 0) {  // no sequence input: nothing to cut
    fitStep(batch);
    return;
  }
  const int64_t length = conf_.tbpttFwdLength;
  for (size_t j = 0; j < batch.labels.size(); ++j)
    if (batch.labels[j].rank() != 3)
      throw ConfigError(fmt::format(
          "ComputationGraph::fit: truncated BPTT needs labels at every step ([N, nOut, T]), but "
          "output \"{}\" gives {}",
          conf_.networkOutputs[j], batch.labels[j].shape().toString()));
  for (size_t i = 0; i < conf_.networkInputTypes.size(); ++i)
    if (conf_.networkInputTypes[i].length > 0 && length < size.steps)
      throw ConfigError(fmt::format(
          "ComputationGraph::fit: truncated BPTT splits sequences into segments of {} steps, but "
          "input \"{}\" of type {} fixes their length; declare it without one "
          "(InputType::recurrent(size))",
          length, conf_.networkInputs[i], conf_.networkInputTypes[i].toString()));
  // The segments' passes carry the recurrent state; whatever rnnTimeStep kept is gone.
  timeStepState_ = false;
  struct Reset {
    ComputationGraph& graph;
    ~Reset() {
      graph.stateMode_ = ForwardContext::RecurrentStateMode::NONE;
      graph.backwardLength_ = 0;
    }
  } reset{*this};
  backwardLength_ = conf_.tbpttBackLength;
  for (int64_t start = 0; start < size.steps; start += length) {
    stateMode_ = start == 0 ? ForwardContext::RecurrentStateMode::START
                            : ForwardContext::RecurrentStateMode::CONTINUE;
    fitStep(detail::segmentOf(batch, start, std::min(length, size.steps - start)));
  }
}

void ComputationGraph::fitStep(const MultiDataSet& batch) {
  const double loss = computeGradientAndScore(batch);
  profileLayer(LayerProfiler::kNetwork);
  const FlatBuffers::ScoreTerms terms = buffers_.scoreTermsAndGradientCheck(context_->backend());
  const double score = loss + terms.regularization;
  if (!std::isfinite(score) || !terms.finiteGradient)
    throw NumericalError(fmt::format(
        "ComputationGraph::fit: {} at iteration {} (training diverged or the batch holds NaN/Inf; "
        "lower the learning rate or check the data); parameters were not updated",
        terms.finiteGradient ? fmt::format("score is {}", score)
                             : std::string("the gradient is not finite"),
        iteration_));
  applyUpdate();
  score_ = score;
  ++iteration_;
  if (LayerProfiler* p = context_->profiler()) p->iterationDone();
}

void ComputationGraph::fit(const MultiDataSet& batch) {
  requireInit("fit");
  fitMinibatch(batch);
  examplesInEpoch_ += batch.numExamples();
  if (listeners_.empty()) return;
  IterationInfo info;
  info.iteration = iteration_;
  info.epoch = epoch_;
  info.score = score_;
  info.examples = batch.numExamples();
  info.examplesInEpoch = examplesInEpoch_;
  for (auto& l : listeners_) l->iterationDone(*this, info);
}

void ComputationGraph::fit(const DataSet& batch) { fit(MultiDataSet(batch)); }

void ComputationGraph::fit(DataSetIterator& iterator) {
  requireInit("fit");
  requireBatchForEpoch(iterator, "ComputationGraph::fit");
  const int64_t examplesPerEpoch = iterator.totalExamples();
  fitEpoch(
      [&]() -> std::optional<MultiDataSet> {
        if (!iterator.hasNext()) return std::nullopt;
        return MultiDataSet(iterator.next());
      },
      examplesPerEpoch);
}

void ComputationGraph::fitEpoch(const std::function<std::optional<MultiDataSet>()>& next,
                                int64_t examplesPerEpoch) {
  for (auto& l : listeners_) l->onEpochStart(*this, epoch_);
  minibatchesInEpoch_ = 0;
  examplesInEpoch_ = 0;
  IterationInfo info;
  info.epoch = epoch_;
  info.examplesPerEpoch = examplesPerEpoch;
  while (std::optional<MultiDataSet> batch = next()) {
    fitMinibatch(*batch);
    ++minibatchesInEpoch_;
    if (listeners_.empty()) continue;
    info.iteration = iteration_;
    info.score = score_;
    info.examples = batch->numExamples();
    info.examplesInEpoch += info.examples;
    for (auto& l : listeners_) l->iterationDone(*this, info);
  }
  for (auto& l : listeners_) l->onEpochEnd(*this, epoch_);
  ++epoch_;
  minibatchesInEpoch_ = 0;
  examplesInEpoch_ = 0;
}

void ComputationGraph::fit(DataSetIterator& iterator, int epochs) {
  for (int e = 0; e < epochs; ++e) {
    if (e > 0) {
      if (!iterator.resetSupported())
        throw DataError(
            "ComputationGraph::fit(iterator, epochs): the iterator cannot be reset, so it cannot "
            "serve more than one epoch");
      iterator.reset();
    }
    fit(iterator);
  }
}

void ComputationGraph::fit(MultiDataSetIterator& iterator) {
  requireInit("fit");
  if (!iterator.hasNext() && iterator.resetSupported()) iterator.reset();
  if (!iterator.hasNext())
    throw DataError(
        "ComputationGraph::fit: the iterator has no data: it yields no minibatch, even after "
        "reset(); nothing was trained");
  fitEpoch(
      [&]() -> std::optional<MultiDataSet> {
        if (!iterator.hasNext()) return std::nullopt;
        return iterator.next();
      },
      -1);
}

void ComputationGraph::fit(MultiDataSetIterator& iterator, int epochs) {
  for (int e = 0; e < epochs; ++e) {
    if (e > 0) {
      if (!iterator.resetSupported())
        throw DataError(
            "ComputationGraph::fit(iterator, epochs): the iterator cannot be reset, so it cannot "
            "serve more than one epoch");
      iterator.reset();
    }
    fit(iterator);
  }
}

std::vector<Tensor> ComputationGraph::output(const std::vector<Tensor>& inputs, bool train) {
  return output(inputs, train, {});
}

std::vector<Tensor> ComputationGraph::output(const std::vector<Tensor>& inputs, bool train,
                                             const std::vector<Tensor>& featuresMasks) {
  requireInit("output");
  MultiDataSet batch;
  batch.features = inputs;
  batch.featuresMasks = featuresMasks;
  const BatchSize size = checkBatch(batch, false, "output");
  context_->bindToCurrentThread();
  forwardPass(inputs, featuresMasks, size, train);
  std::vector<Tensor> outputs;
  for (size_t o : outputNodes_) outputs.push_back(nodes_[o].output.to(Device::cpu()));
  return outputs;
}

std::vector<Tensor> ComputationGraph::rnnTimeStep(const std::vector<Tensor>& inputs) {
  requireInit("rnnTimeStep");
  std::vector<Tensor> steps = inputs;
  bool oneStep = true, anySequence = false;
  for (size_t i = 0; i < steps.size() && i < conf_.networkInputTypes.size(); ++i) {
    const InputType& type = conf_.networkInputTypes[i];
    if (type.kind != InputType::Kind::Recurrent) continue;
    anySequence = true;
    if (type.length > 0)
      throw ConfigError(fmt::format(
          "ComputationGraph::rnnTimeStep: input \"{}\" of type {} fixes the sequences' length; "
          "declare it without one (InputType::recurrent(size)) to run them step by step",
          conf_.networkInputs[i], type.toString()));
    if (steps[i].rank() == 2)
      steps[i] = steps[i].reshape(Shape{steps[i].dim(0), steps[i].dim(1), 1});
    else
      oneStep = false;
  }
  if (!anySequence)
    throw ConfigError("ComputationGraph::rnnTimeStep: the graph takes no sequences");
  struct Reset {
    ComputationGraph& graph;
    ~Reset() { graph.stateMode_ = ForwardContext::RecurrentStateMode::NONE; }
  } reset{*this};
  stateMode_ = timeStepState_ ? ForwardContext::RecurrentStateMode::CONTINUE
                              : ForwardContext::RecurrentStateMode::START;
  std::vector<Tensor> outputs = output(steps, false);
  timeStepState_ = true;
  if (oneStep)
    for (Tensor& y : outputs)
      if (y.rank() == 3 && y.dim(2) == 1) y = y.reshape(Shape{y.dim(0), y.dim(1)});
  return outputs;
}

Tensor ComputationGraph::outputSingle(const std::vector<Tensor>& inputs, bool train) {
  if (conf_.networkOutputs.size() != 1)
    throw ConfigError(
        fmt::format("ComputationGraph::outputSingle: the graph has {} outputs; use output(...)",
                    conf_.networkOutputs.size()));
  return output(inputs, train).front();
}

Tensor ComputationGraph::outputSingle(const Tensor& input, bool train, const Tensor& featuresMask) {
  if (conf_.networkOutputs.size() != 1)
    throw ConfigError(
        fmt::format("ComputationGraph::outputSingle: the graph has {} outputs; use output(...)",
                    conf_.networkOutputs.size()));
  return output({input}, train,
                featuresMask.empty() ? std::vector<Tensor>{} : std::vector<Tensor>{featuresMask})
      .front();
}

double ComputationGraph::calcRegularizationScore() {
  requireInit("calcRegularizationScore");
  context_->bindToCurrentThread();
  profileLayer(LayerProfiler::kNetwork);
  return buffers_.regularizationScore(context_->backend());
}

double ComputationGraph::score(const MultiDataSet& data, bool training) {
  requireInit("score");
  const BatchSize size = checkBatch(data, true, "score");
  const int64_t n = size.examples;
  for (size_t j = 0; j < losses_.size(); ++j)
    if (losses_[j] == nullptr)
      throw ConfigError(fmt::format("ComputationGraph::score: output \"{}\" computes no loss",
                                    conf_.networkOutputs[j]));
  context_->bindToCurrentThread();
  forwardPass(data.features, data.featuresMasks, size, training);
  double loss = 0;
  for (size_t j = 0; j < outputNodes_.size(); ++j) {
    losses_[j]->setLabelsMask(data.labelsMask(j).empty() ? nullptr : &data.labelsMask(j));
    const Tensor& labels = onDevice(data.labels[j], stagedLabels_[j]);
    loss += losses_[j]->lossScore(*context_, nodes_[outputNodes_[j]].output, labels) /
            static_cast<double>(nodes_[outputNodes_[j]].examples(n));
  }
  return loss + calcRegularizationScore();
}

Evaluation ComputationGraph::evaluate(DataSetIterator& iterator) {
  requireInit("evaluate");
  if (conf_.networkInputs.size() != 1 || outputNodes_.size() != 1)
    throw ConfigError(
        "ComputationGraph::evaluate(DataSetIterator&): the graph must have one input and one "
        "output; use evaluate(MultiDataSetIterator&)");
  if (!iterator.hasNext() && iterator.resetSupported()) iterator.reset();
  Evaluation eval(static_cast<int>(nodes_[outputNodes_[0]].outputType.flatSize()));
  context_->bindToCurrentThread();
  while (iterator.hasNext()) {
    const MultiDataSet batch(iterator.next());
    forwardPass(batch.features, batch.featuresMasks, checkBatch(batch, true, "evaluate"), false);
    evaluateOutput(eval, batch, 0);
  }
  return eval;
}

std::vector<Evaluation> ComputationGraph::evaluate(MultiDataSetIterator& iterator) {
  requireInit("evaluate");
  if (!iterator.hasNext() && iterator.resetSupported()) iterator.reset();
  std::vector<Evaluation> evals;
  for (size_t o : outputNodes_)
    evals.emplace_back(static_cast<int>(nodes_[o].outputType.flatSize()));
  context_->bindToCurrentThread();
  while (iterator.hasNext()) {
    const MultiDataSet batch = iterator.next();
    forwardPass(batch.features, batch.featuresMasks, checkBatch(batch, true, "evaluate"), false);
    for (size_t j = 0; j < outputNodes_.size(); ++j) evaluateOutput(evals[j], batch, j);
  }
  return evals;
}

void ComputationGraph::evaluateOutput(Evaluation& eval, const MultiDataSet& batch, size_t j) {
  const Tensor& predictions = nodes_[outputNodes_[j]].output;
  if (predictions.rank() == 3)  // time series: every real step is one prediction
    eval.evalTimeSeries(batch.labels[j], predictions, batch.labelsMask(j));
  else
    eval.eval(batch.labels[j], predictions);
}

namespace {

void copyInto(Tensor& to, const Tensor& from, const char* what) {
  if (from.numel() != to.numel())
    throw ShapeError(fmt::format("ComputationGraph::{}: {} values given, the graph has {}", what,
                                 from.numel(), to.numel()));
  to.copyFrom(from);
}

}  // namespace

void ComputationGraph::setParams(const Tensor& params) {
  requireInit("setParams");
  copyInto(buffers_.params, params, "setParams");
}

void ComputationGraph::setUpdaterState(const Tensor& state) {
  requireInit("setUpdaterState");
  copyInto(buffers_.updaterState, state, "setUpdaterState");
}

void ComputationGraph::setLayerState(const Tensor& state) {
  requireInit("setLayerState");
  copyInto(buffers_.layerState, state, "setLayerState");
}

std::optional<double> ComputationGraph::getLearningRate(int layer) const {
  requireInit("getLearningRate");
  if (layer < 0 || layer >= numLayers())
    throw ConfigError(fmt::format(
        "ComputationGraph::getLearningRate: no layer {} (the graph has {})", layer, numLayers()));
  return buffers_.learningRate(layer, iteration_, epoch_, learningRateScale_);
}

void ComputationGraph::setLearningRateScale(double scale) {
  if (!std::isfinite(scale) || scale <= 0)
    throw ConfigError(fmt::format(
        "ComputationGraph::setLearningRateScale: the scale must be finite and > 0, got {}", scale));
  learningRateScale_ = scale;
}

ComputationGraph::ActivationMemory ComputationGraph::activationMemory(bool training) const {
  requireInit("activationMemory");
  const ActivationPlan& plan = training ? trainingPlan_ : inferencePlan_;
  return {plan.peak(), plan.total()};
}

ComputationGraph ComputationGraph::clone() const {
  ComputationGraph copy(conf_, context_->device(), context_->numThreads());
  if (!initialized_) return copy;
  copy.init();
  copy.setParams(buffers_.params);
  copy.setUpdaterState(buffers_.updaterState);
  copy.setLayerState(buffers_.layerState);
  copy.replicaIndex_ = replicaIndex_;
  copy.learningRateScale_ = learningRateScale_;
  copy.iteration_ = iteration_;
  copy.epoch_ = epoch_;
  copy.minibatchesInEpoch_ = minibatchesInEpoch_;
  copy.score_ = score_;
  return copy;
}

std::unique_ptr<Model> ComputationGraph::cloneModel() const {
  return std::make_unique<ComputationGraph>(clone());
}

std::unique_ptr<Model> ComputationGraph::newReplica(Device device, int numThreads) const {
  auto replica = std::make_unique<ComputationGraph>(conf_, device, numThreads);
  replica->init();
  return replica;
}

std::optional<InputType> ComputationGraph::declaredInputType() const {
  if (conf_.networkInputTypes.size() != 1) return std::nullopt;
  return conf_.networkInputTypes.front();
}

std::optional<InputType> ComputationGraph::declaredOutputType() const {
  if (conf_.networkOutputs.size() != 1) return std::nullopt;
  return conf_.vertices[static_cast<size_t>(conf_.vertexIndex(conf_.networkOutputs.front()))]
      .outputType;
}

std::vector<std::string> ComputationGraph::layerNames() const {
  std::vector<std::string> names;
  for (const auto& v : conf_.vertices)
    if (v.layer) names.push_back(v.name);
  return names;
}

std::vector<int64_t> ComputationGraph::layerParamCounts() const {
  std::vector<int64_t> counts;
  for (const auto& v : conf_.vertices)
    if (v.layer) counts.push_back(v.layer->numParams());
  return counts;
}

void ComputationGraph::setListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) {
  listeners_ = std::move(listeners);
}

void ComputationGraph::addListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) {
  for (auto& l : listeners) listeners_.push_back(std::move(l));
}

}  // namespace dl4cpp

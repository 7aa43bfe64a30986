#include "nn/multilayer/MultiLayerNetwork.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "nn/backend/DeviceContext.h"
#include "nn/conf/TimeStepPreProcessor.h"
#include "nn/layers/InputDropout.h"
#include "nn/layers/LossOutputRuntime.h"
#include "nn/multilayer/GradientNormalizer.h"
#include "nn/multilayer/LayerSteps.h"
#include "nn/multilayer/TimeSegments.h"
#include "nn/weights/WeightInitializer.h"

namespace dl4cpp {

namespace {

// Tensor(shape, device), with what the buffer is for added to an AllocationError's message.
template <typename Describe>
Tensor allocate(const Shape& shape, Device device, Describe&& describe) {
  try {
    return Tensor(shape, device);
  } catch (const AllocationError& e) {
    throw AllocationError(describe() + ": " + e.what());
  }
}

}  // namespace

// The network's state (MultiLayerNetwork.h keeps only a pointer to it).
struct MultiLayerNetwork::Impl {
  Impl(MultiLayerConfiguration conf, Device device, int numThreads)
      : conf_(std::move(conf)), context_(std::make_unique<DeviceContext>(device, numThreads)) {}

  struct ParamSegment {
    Tensor param, grad, state;
    UpdaterParams updater;
    double baseLearningRate = 0;  // the configured rate, before schedules and learningRateScale_
    RegularizationParams regularization;
    bool isBias = false;
    int layer = 0;  // index of the layer owning the segment
  };

  MultiLayerConfiguration conf_;
  std::unique_ptr<DeviceContext> context_;
  std::vector<std::unique_ptr<layers::RuntimeLayer>> layers_;
  // The last layer's runtime as the LossOutputRuntime that computes the loss (inside
  // layers_.back(), which may wrap it in input dropout), set by init().
  layers::LossOutputRuntime* lossOutput_ = nullptr;
  std::vector<ParamSegment> segments_;  // the trainable parameters (frozen layers have none)
  int numFrozenLayers_ = 0;
  int64_t numFrozenParams_ = 0;
  // The lowest layer with trainable parameters (numLayers() when none has): where the backward
  // pass stops.
  int lowestTrainableLayer_ = 0;
  std::vector<StateSegment> stateLayout_;
  Tensor params_, gradients_, updaterState_, layerState_;

  // What the passes run, in order: the backend's planned steps and one step per other layer
  // (LayerSteps.h), made by init().
  std::vector<std::unique_ptr<NetworkStep>> steps_;

  // Per layer: capacity buffers and the views of the current batch.
  int64_t capacity_ = 0;
  int64_t capacitySteps_ = 0;  // time steps the stores hold per example (sequence networks)
  std::vector<Tensor> activationStore_, gradientStore_;
  std::vector<Tensor> inputs_, outputs_, outputGrads_;
  Tensor inputGradStore_, inputGradient_;
  // The current batch on this network's device (the iterator's tensors themselves on the CPU).
  Tensor stagedFeatures_, stagedLabels_;
  // What fit() needs the sums of squares of, asked in one Backend call (one device wait on a
  // GPU): the parameters of every segment with l2 or weight decay, in segment order, then the
  // gradient. Likewise the sums of absolute values of the segments with l1.
  std::vector<Tensor> normTensors_;
  std::vector<double> norms_;
  std::vector<Tensor> absoluteTensors_;
  std::vector<double> absolutes_;
  GradientNormalizer normalizer_;

  std::vector<std::shared_ptr<TrainingListener>> listeners_;
  double score_ = 0;
  double learningRateScale_ = 1;
  int64_t iteration_ = 0;
  int epoch_ = 0;
  int64_t minibatchesInEpoch_ = 0;
  int64_t examplesInEpoch_ = 0;  // for listeners: examples fitted since the last epoch boundary
  int replicaIndex_ = 0;
  // What the next forward pass tells recurrent layers about their state (ForwardContext.h):
  // truncated BPTT's segments and rnnTimeStep set it for their passes.
  ForwardContext::RecurrentStateMode stateMode_ = ForwardContext::RecurrentStateMode::NONE;
  int64_t backwardLength_ = 0;
  // Whether the recurrent layers hold a state rnnTimeStep continues from.
  bool timeStepState_ = false;
};

MultiLayerNetwork::MultiLayerNetwork(MultiLayerConfiguration conf, Device device, int numThreads)
    : impl_(std::make_unique<Impl>(std::move(conf), device, numThreads)) {}

MultiLayerNetwork::~MultiLayerNetwork() = default;
MultiLayerNetwork::MultiLayerNetwork(MultiLayerNetwork&&) noexcept = default;
MultiLayerNetwork& MultiLayerNetwork::operator=(MultiLayerNetwork&&) noexcept = default;

// A moved-from network has no Impl: it reads as uninitialised, as its empty members did.
bool MultiLayerNetwork::isInitialized() const { return impl_ && !impl_->layers_.empty(); }
double MultiLayerNetwork::score() const { return impl_->score_; }
void MultiLayerNetwork::setScore(double score) { impl_->score_ = score; }
double MultiLayerNetwork::learningRateScale() const { return impl_->learningRateScale_; }
Tensor MultiLayerNetwork::params() const { return impl_->params_; }
Tensor MultiLayerNetwork::gradient() const { return impl_->gradients_; }
Tensor MultiLayerNetwork::updaterState() const { return impl_->updaterState_; }
Tensor MultiLayerNetwork::inputGradient() const { return impl_->inputGradient_; }
Tensor MultiLayerNetwork::layerState() const { return impl_->layerState_; }
const std::vector<MultiLayerNetwork::StateSegment>& MultiLayerNetwork::layerStateLayout() const {
  return impl_->stateLayout_;
}
int MultiLayerNetwork::replicaIndex() const { return impl_->replicaIndex_; }
void MultiLayerNetwork::setReplicaIndex(int index) { impl_->replicaIndex_ = index; }
const std::vector<std::shared_ptr<TrainingListener>>& MultiLayerNetwork::getListeners() const {
  return impl_->listeners_;
}
const MultiLayerConfiguration& MultiLayerNetwork::getConfiguration() const { return impl_->conf_; }
int64_t MultiLayerNetwork::getIterationCount() const { return impl_->iteration_; }
int MultiLayerNetwork::getEpochCount() const { return impl_->epoch_; }
void MultiLayerNetwork::setIterationCount(int64_t n) { impl_->iteration_ = n; }
void MultiLayerNetwork::setEpochCount(int n) {
  impl_->epoch_ = n;
  impl_->examplesInEpoch_ = 0;
}
int64_t MultiLayerNetwork::getMinibatchesInEpoch() const { return impl_->minibatchesInEpoch_; }
void MultiLayerNetwork::setMinibatchesInEpoch(int64_t n) { impl_->minibatchesInEpoch_ = n; }
int MultiLayerNetwork::numLayers() const { return static_cast<int>(impl_->layers_.size()); }
int MultiLayerNetwork::numFrozenLayers() const { return impl_->numFrozenLayers_; }
int64_t MultiLayerNetwork::numFrozenParams() const { return impl_->numFrozenParams_; }
DeviceContext& MultiLayerNetwork::context() { return *impl_->context_; }
std::string MultiLayerNetwork::summary() const { return impl_->conf_.summary(); }
std::string MultiLayerNetwork::configurationJson() const { return impl_->conf_.toJson(); }
std::optional<InputType> MultiLayerNetwork::declaredInputType() const {
  return impl_->conf_.inputType;
}
std::optional<InputType> MultiLayerNetwork::declaredOutputType() const {
  return impl_->conf_.outputType;
}
Tensor MultiLayerNetwork::outputSingle(const Tensor& features, bool train) {
  return output(features, train);
}

void MultiLayerNetwork::init() {
  std::vector<std::unique_ptr<layers::RuntimeLayer>> layers;
  std::vector<std::vector<ParamSpec>> specs;
  std::vector<std::vector<StateSpec>> stateSpecs;
  int64_t totalParams = 0, totalState = 0, totalLayerState = 0;
  // Frozen layers are the first ones (the list builder checks), so their parameters are the start
  // of the parameter buffer.
  int frozenLayers = 0;
  int64_t frozenParams = 0;
  int lowestTrainable = static_cast<int>(impl_->conf_.layers.size());
  for (size_t i = 0; i < impl_->conf_.layers.size(); ++i) {
    const auto& layerConf = impl_->conf_.layers[i];
    layers.push_back(detail::withPreProcessor(
        impl_->conf_.preProcessors[i], impl_->conf_.layerInputTypes[i],
        layers::withInputDropout(layerConf->dropOut.value_or(0), layerConf->instantiate())));
    specs.push_back(layerConf->paramSpecs());
    for (const auto& spec : specs.back()) {
      const UpdaterParams& u = spec.isBias ? layerConf->resolvedBiasUpdater() : *layerConf->updater;
      totalParams += spec.shape.numel();
      if (!layerConf->frozen) totalState += spec.shape.numel() * u.stateSizePerParam();
    }
    if (layerConf->frozen) {
      ++frozenLayers;
      frozenParams = totalParams;
    } else if (!specs.back().empty() &&
               lowestTrainable == static_cast<int>(impl_->conf_.layers.size())) {
      lowestTrainable = static_cast<int>(specs.size()) - 1;
    }
    stateSpecs.push_back(layerConf->stateSpecs());
    for (const auto& spec : stateSpecs.back()) totalLayerState += spec.shape.numel();
  }
  // build() made the last layer's configuration a LossOutput; its runtime object must compute the
  // loss (a user's layer type could pair them wrongly).
  layers::LossOutputRuntime* const lossOutput = layers.back()->asLossOutput();
  if (lossOutput == nullptr)
    throw ConfigError(fmt::format(
        "MultiLayerNetwork::init: the last layer ({}) does not compute a loss: the runtime "
        "object its instantiate() returns must derive from layers::LossOutputRuntime and return "
        "itself from asLossOutput()",
        impl_->conf_.layers.back()->typeName()));
  const Device device = impl_->context_->device();
  auto buffer = [&](int64_t values, const char* what) {
    return allocate(Shape{values}, device, [&] {
      return fmt::format("MultiLayerNetwork::init: {} ({} values)", what, values);
    });
  };
  // Allocated before anything changes: a network whose buffers do not fit stays as it was.
  Tensor params = buffer(totalParams, "parameters");
  Tensor gradients = buffer(totalParams, "gradients");
  Tensor updaterState = buffer(totalState, "updater state");
  Tensor layerState = buffer(totalLayerState, "layer state");
  impl_->layers_ = std::move(layers);
  impl_->lossOutput_ = lossOutput;
  impl_->numFrozenLayers_ = frozenLayers;
  impl_->numFrozenParams_ = frozenParams;
  impl_->lowestTrainableLayer_ = lowestTrainable;
  impl_->segments_.clear();
  impl_->normalizer_ = GradientNormalizer();
  impl_->stateLayout_.clear();
  impl_->params_ = std::move(params);
  impl_->gradients_ = std::move(gradients);
  impl_->updaterState_ = std::move(updaterState);
  impl_->layerState_ = std::move(layerState);

  // Parameters are initialised in layer and spec order, so a seed gives the same values whatever
  // the device.
  Random random(impl_->conf_.seed);
  int64_t offset = 0, stateOffset = 0, layerStateOffset = 0;
  for (size_t i = 0; i < impl_->layers_.size(); ++i) {
    const Layer& layerConf = *impl_->conf_.layers[i];
    const int64_t layerOffset = offset;
    std::vector<Tensor> params, grads;
    for (const auto& spec : specs[i]) {
      Impl::ParamSegment seg;
      seg.isBias = spec.isBias;
      seg.layer = static_cast<int>(i);
      seg.param = impl_->params_.view(offset, spec.shape);
      seg.grad = impl_->gradients_.view(offset, spec.shape);
      offset += spec.shape.numel();
      if (spec.weightInit)
        initWeights(*spec.weightInit, spec.fanIn, spec.fanOut, seg.param, random);
      else if (!spec.initValues.empty())
        seg.param.copyFrom(Tensor::fromVector(spec.shape, spec.initValues));
      else
        seg.param.fill(spec.initValue);
      params.push_back(seg.param);
      grads.push_back(seg.grad);
      // A frozen layer's gradient is never computed (reported as zero, as DL4J's), and its
      // parameters take no updater step: they are no segment of the update.
      if (layerConf.frozen) {
        seg.grad.fill(0);
        continue;
      }
      seg.updater = spec.isBias ? layerConf.resolvedBiasUpdater() : *layerConf.updater;
      seg.baseLearningRate = seg.updater.learningRate;
      // A parameter DL4J never regularises takes no l1, l2 or weight decay.
      seg.regularization =
          spec.regularized ? layerConf.resolvedRegularization(spec.isBias) : RegularizationParams{};
      const int64_t stateSize = spec.shape.numel() * seg.updater.stateSizePerParam();
      seg.state = impl_->updaterState_.view(stateOffset, Shape{stateSize});
      seg.state.fill(static_cast<float>(seg.updater.initialStateValue()));
      stateOffset += stateSize;
      impl_->segments_.push_back(seg);
    }
    impl_->layers_[i]->bindParams(params, grads);
    // The layer's parameters lie side by side: its whole gradient is one view.
    if (!grads.empty() && !layerConf.frozen)
      impl_->normalizer_.addLayer(static_cast<int>(i), *layerConf.gradientNormalization,
                                  *layerConf.gradientNormalizationThreshold, grads,
                                  impl_->gradients_.view(layerOffset, Shape{offset - layerOffset}));
    std::vector<Tensor> state;
    for (const auto& spec : stateSpecs[i]) {
      state.push_back(impl_->layerState_.view(layerStateOffset, spec.shape));
      state.back().fill(spec.initValue);
      if (spec.combine == StateCombine::PooledMeanVariance) {
        const int64_t channels = spec.shape.numel() / 2;
        state.back().view(channels, Shape{channels}).fill(spec.initVariance);
      }
      // A frozen layer's state never changes and is the same in every replica: kept per replica,
      // it stays bit-identical, where any mean of equal values could round it.
      impl_->stateLayout_.push_back({static_cast<int>(i), spec.name, layerStateOffset, spec.shape,
                                     layerConf.frozen ? StateCombine::PerReplica : spec.combine});
      layerStateOffset += spec.shape.numel();
    }
    impl_->layers_[i]->bindState(state);
  }
  impl_->normTensors_.clear();
  impl_->absoluteTensors_.clear();
  for (const auto& seg : impl_->segments_) {
    if (seg.regularization.l2 != 0 || seg.regularization.weightDecay != 0)
      impl_->normTensors_.push_back(seg.param);
    if (seg.regularization.l1 != 0) impl_->absoluteTensors_.push_back(seg.param);
  }
  // The gradient whose finiteness fit() checks: the trainable layers' (the frozen ones' is zero).
  impl_->normTensors_.push_back(impl_->gradients_.view(
      impl_->numFrozenParams_, Shape{impl_->gradients_.numel() - impl_->numFrozenParams_}));
  impl_->norms_.assign(impl_->normTensors_.size(), 0.0);
  impl_->absolutes_.assign(impl_->absoluteTensors_.size(), 0.0);

  impl_->capacity_ = 0;
  impl_->capacitySteps_ = 0;
  const size_t n = impl_->layers_.size();
  impl_->steps_ = planLayerSteps(impl_->context_->backend(), impl_->layers_);
  impl_->activationStore_.assign(n, Tensor());
  impl_->gradientStore_.assign(n, Tensor());
  impl_->inputs_.assign(n, Tensor());
  impl_->outputs_.assign(n, Tensor());
  impl_->outputGrads_.assign(n, Tensor());
  impl_->iteration_ = 0;
  impl_->epoch_ = 0;
  impl_->minibatchesInEpoch_ = 0;
  impl_->examplesInEpoch_ = 0;
  impl_->score_ = 0;
}

void MultiLayerNetwork::setProfiler(std::shared_ptr<LayerProfiler> profiler) {
  impl_->context_->setProfiler(std::move(profiler));
}

LayerProfiler* MultiLayerNetwork::getProfiler() const { return impl_->context_->profiler(); }

int MultiLayerNetwork::numThreads() const { return impl_->context_->numThreads(); }

void MultiLayerNetwork::profileLayer(int layer) {
  if (LayerProfiler* p = impl_->context_->profiler()) p->enterLayer(layer);
}

void MultiLayerNetwork::requireInit(const char* method) const {
  if (!isInitialized())
    throw ConfigError(std::string("MultiLayerNetwork::") + method + ": call init() first");
}

int64_t MultiLayerNetwork::numParams() const { return impl_->params_.numel(); }

namespace {

// Time steps of a batch's features: T of sequences (N, C, T), 0 for rows and images.
int64_t stepsOf(const Tensor& features) { return features.rank() == 3 ? features.dim(2) : 0; }

// ShapeError unless `mask` is empty or (n, steps) on the host.
void checkMask(const Tensor& mask, const char* what, int64_t n, int64_t steps, const char* method) {
  if (mask.empty()) return;
  if (steps == 0)
    throw ShapeError(fmt::format(
        "MultiLayerNetwork::{}: a {} mask {} was given, but the network takes no sequences", method,
        what, mask.shape().toString()));
  if (mask.rank() != 2 || mask.dim(0) != n || mask.dim(1) != steps || !mask.onHost())
    throw ShapeError(fmt::format(
        "MultiLayerNetwork::{}: the {} mask {} does not match: expected a host tensor [{}, {}] "
        "for {} sequences of {} steps",
        method, what, mask.shape().toString(), n, steps, n, steps));
}

}  // namespace

int64_t MultiLayerNetwork::checkBatch(const DataSet& batch, bool needLabels,
                                      const char* method) const {
  const Tensor& f = batch.features;
  const InputType& in = impl_->conf_.inputType;
  const int64_t perExample = in.flatSize();
  if (in.kind == InputType::Kind::Recurrent) {
    if (f.rank() != 3 || f.dim(0) == 0 || f.dim(1) != in.size || f.dim(2) == 0 ||
        (in.length > 0 && f.dim(2) != in.length))
      throw ShapeError(
          fmt::format("MultiLayerNetwork::{}: features {} do not match the input type {} (expected "
                      "[N, {}, {}] with N > 0: examples, features, time steps)",
                      method, f.shape().toString(), in.toString(), in.size,
                      in.length > 0 ? std::to_string(in.length) : std::string("T > 0")));
  } else if (f.empty() || f.rank() < 2 || f.dim(0) == 0 || f.numel() != f.dim(0) * perExample) {
    throw ShapeError(
        fmt::format("MultiLayerNetwork::{}: features {} do not match the input type "
                    "{} (expected [N, {}] with N > 0)",
                    method, f.shape().toString(), in.toString(), perExample));
  }
  const int64_t n = f.dim(0);
  const int64_t steps = stepsOf(f);
  checkMask(batch.featuresMask, "features", n, steps, method);
  if (needLabels) {
    const Tensor& l = batch.labels;
    const InputType& out = impl_->conf_.outputType;
    const int64_t nOut = out.flatSize();
    if (out.kind == InputType::Kind::Recurrent) {
      // The output's steps: the input's, or the fixed length a layer (Subsampling1DLayer) made.
      const int64_t outSteps = out.length > 0 ? out.length : steps;
      if (l.rank() != 3 || l.dim(0) != n || l.dim(1) != nOut || l.dim(2) != outSteps)
        throw ShapeError(fmt::format(
            "MultiLayerNetwork::{}: labels {} do not match: expected [{}, {}, {}] for {} "
            "sequences of {} steps and {} outputs",
            method, l.shape().toString(), n, nOut, outSteps, n, outSteps, nOut));
      checkMask(batch.labelsMask, "labels", n, outSteps, method);
    } else {
      if (l.empty() || l.rank() != 2 || l.dim(0) != n || l.dim(1) != nOut)
        throw ShapeError(
            fmt::format("MultiLayerNetwork::{}: labels {} do not match: expected [{}, "
                        "{}] for {} examples and {} outputs",
                        method, l.shape().toString(), n, nOut, n, nOut));
      checkMask(batch.labelsMask, "labels", n, 0, method);
    }
  }
  return n;
}

void MultiLayerNetwork::ensureCapacity(int64_t batch, int64_t steps) {
  if (batch <= impl_->capacity_ && steps <= impl_->capacitySteps_) return;
  batch = std::max(batch, impl_->capacity_);
  steps = std::max(steps, impl_->capacitySteps_);
  const Device device = impl_->context_->device();
  for (size_t i = 0; i < impl_->layers_.size(); ++i) {
    const Shape shape = impl_->conf_.layerOutputTypes[i].shape(batch, steps);
    auto describe = [&] {
      return fmt::format("MultiLayerNetwork: outputs of layer {} ({}) for a batch of {}", i,
                         impl_->conf_.layers[i]->typeName(), batch);
    };
    impl_->activationStore_[i] = allocate(shape, device, describe);
    impl_->gradientStore_[i] = allocate(shape, device, describe);
  }
  impl_->inputGradStore_ = allocate(
      impl_->conf_.layerInputTypes[0].shape(batch, steps), device,
      [&] { return fmt::format("MultiLayerNetwork: input gradients for a batch of {}", batch); });
  impl_->capacity_ = batch;
  impl_->capacitySteps_ = steps;
}

const Tensor& MultiLayerNetwork::forwardPass(const Tensor& features, int64_t n, bool training,
                                             const Tensor* mask) {
  const int64_t steps = stepsOf(features);
  ensureCapacity(n, steps);
  for (size_t i = 0; i < impl_->layers_.size(); ++i) {
    // A preprocessor that reorders values runs inside the layer (TimeStepPreProcessor), which
    // reads the previous layer's output as it is.
    const InputType& in =
        reordersValues(impl_->conf_.preProcessors[i])
            ? (i == 0 ? impl_->conf_.inputType : impl_->conf_.layerOutputTypes[i - 1])
            : impl_->conf_.layerInputTypes[i];
    const Shape inShape = in.shape(n, steps);
    impl_->inputs_[i] =
        i == 0 ? features.reshape(inShape) : impl_->outputs_[i - 1].reshape(inShape);
    impl_->outputs_[i] =
        impl_->activationStore_[i].view(0, impl_->conf_.layerOutputTypes[i].shape(n, steps));
  }
  const LayerTensors tensors{impl_->inputs_, impl_->outputs_, impl_->outputGrads_};
  ForwardContext pass = ForwardContext::pass(training, impl_->conf_.seed, impl_->replicaIndex_,
                                             impl_->iteration_, impl_->numFrozenLayers_);
  pass.featuresMask = mask != nullptr && !mask->empty() ? mask : nullptr;
  pass.recurrentState = impl_->stateMode_;
  pass.tbpttBackwardLength = impl_->backwardLength_;
  pass.steps = steps;
  for (auto& step : impl_->steps_) step->forward(*impl_->context_, tensors, pass);
  return impl_->outputs_.back();
}

void MultiLayerNetwork::stageInputs(const Tensor& features, const Tensor& labels) {
  profileLayer(LayerProfiler::kNetwork);
  impl_->context_->backend().stageBatch(features, labels, impl_->stagedFeatures_,
                                        impl_->stagedLabels_);
}

double MultiLayerNetwork::computeGradientAndScore(const DataSet& batch, bool wantInputGradient) {
  requireInit("computeGradientAndScore");
  if (wantInputGradient && impl_->numFrozenLayers_ > 0)
    throw ConfigError(fmt::format(
        "MultiLayerNetwork::computeGradientAndScore: no input gradient can be computed: layers 0 "
        "to {} are frozen, and no gradient passes through a frozen layer",
        impl_->numFrozenLayers_ - 1));
  const int64_t n = checkBatch(batch, true, "fit");
  impl_->context_->bindToCurrentThread();
  stageInputs(batch.features, batch.labels);
  const Tensor& y = forwardPass(impl_->stagedFeatures_, n, true, &batch.featuresMask);
  const size_t last = impl_->layers_.size() - 1;
  const int64_t steps = stepsOf(batch.features);
  for (size_t i = 0; i <= last; ++i)
    impl_->outputGrads_[i] =
        impl_->gradientStore_[i].view(0, impl_->conf_.layerOutputTypes[i].shape(n, steps));

  impl_->lossOutput_->setLabelsMask(batch.labelsMask.empty() ? nullptr : &batch.labelsMask);
  const double lossSum = impl_->lossOutput_->lossGradient(*impl_->context_, y, impl_->stagedLabels_,
                                                          impl_->outputGrads_[last]);
  // Gradients of the mean loss: scaling the top gradient once scales every parameter gradient.
  profileLayer(LayerProfiler::kNetwork);
  impl_->context_->backend().scale(impl_->outputGrads_[last], 1.0f / static_cast<float>(n));

  // Backward, step by step from the last, down to the lowest layer with trainable parameters (to
  // the input when its gradient is asked for): no step below it runs, and the step holding it
  // writes no input gradient and may skip whatever only feeds one. Frozen layers lie below it.
  const int lowest = wantInputGradient ? 0 : impl_->lowestTrainableLayer_;
  const LayerTensors tensors{impl_->inputs_, impl_->outputs_, impl_->outputGrads_};
  for (size_t s = impl_->steps_.size(); s-- > 0;) {
    NetworkStep& step = *impl_->steps_[s];
    if (step.last() < lowest) break;
    const auto first = static_cast<size_t>(step.first());
    Tensor inputGrad;
    if (step.first() > lowest)
      inputGrad = impl_->outputGrads_[first - 1].reshape(impl_->inputs_[first].shape());
    else if (wantInputGradient) {
      inputGrad = impl_->inputGradStore_.view(0, impl_->inputs_[0].shape());
      impl_->inputGradient_ = inputGrad.reshape(batch.features.shape());
    }
    step.backward(*impl_->context_, tensors, inputGrad.empty() ? nullptr : &inputGrad);
  }
  return lossSum / static_cast<double>(n);
}

void MultiLayerNetwork::applyUpdate() {
  requireInit("applyUpdate");
  // This step's scheduled (and scaled) learning rates and momenta, every one checked before any
  // parameter changes (a schedule can overflow: an ExponentialSchedule with gamma > 1, given time).
  for (auto& seg : impl_->segments_) {
    seg.updater.learningRate = seg.baseLearningRate;
    setScheduledValues(seg.updater, impl_->iteration_, impl_->epoch_);
    seg.updater.learningRate *= impl_->learningRateScale_;
    for (const auto& [value, what] : {std::pair{seg.updater.learningRate, "learning rate"},
                                      std::pair{seg.updater.momentum, "momentum"}})
      if (!std::isfinite(value))
        throw NumericalError(fmt::format(
            "MultiLayerNetwork: the {} schedule of layer {} ({}) gives {} at iteration {}, epoch "
            "{}; parameters were not updated",
            what, seg.layer, impl_->conf_.layers[static_cast<size_t>(seg.layer)]->typeName(), value,
            impl_->iteration_, impl_->epoch_));
  }
  impl_->context_->bindToCurrentThread();
  impl_->normalizer_.apply(impl_->context_->backend(), impl_->context_->profiler());
  for (auto& seg : impl_->segments_) {
    profileLayer(seg.layer);
    impl_->context_->backend().updaterStep(seg.updater, seg.regularization, impl_->iteration_,
                                           seg.param, seg.grad, seg.state);
  }
}

std::optional<double> MultiLayerNetwork::getLearningRate(int layer) const {
  requireInit("getLearningRate");
  if (layer < 0 || layer >= numLayers())
    throw ConfigError(
        fmt::format("MultiLayerNetwork::getLearningRate: no layer {} (the network has {})", layer,
                    numLayers()));
  // The weights' rate (a bias may have an updater of its own); a layer of biases only, theirs.
  const Impl::ParamSegment* chosen = nullptr;
  for (const auto& seg : impl_->segments_)
    if (seg.layer == layer && (!chosen || (chosen->isBias && !seg.isBias))) chosen = &seg;
  if (!chosen) return std::nullopt;
  UpdaterParams u = chosen->updater;
  u.learningRate = chosen->baseLearningRate;
  setScheduledValues(u, impl_->iteration_, impl_->epoch_);
  return u.learningRate * impl_->learningRateScale_;
}

void MultiLayerNetwork::setLearningRateScale(double scale) {
  if (!std::isfinite(scale) || scale <= 0)
    throw ConfigError(fmt::format(
        "MultiLayerNetwork::setLearningRateScale: the scale must be finite and > 0, got {}",
        scale));
  impl_->learningRateScale_ = scale;
}

double MultiLayerNetwork::regularizationFromNorms() const {
  double sum = 0;
  size_t squares = 0, absolutes = 0;
  for (const auto& seg : impl_->segments_) {
    const RegularizationParams& r = seg.regularization;
    if (r.l2 != 0 || r.weightDecay != 0)
      sum += 0.5 * (r.l2 + r.weightDecay) * impl_->norms_[squares++];
    if (r.l1 != 0) sum += r.l1 * impl_->absolutes_[absolutes++];
  }
  return sum;
}

double MultiLayerNetwork::calcRegularizationScore() {
  // Ops only ever run under this network's thread budget, whichever thread asks.
  impl_->context_->bindToCurrentThread();
  profileLayer(LayerProfiler::kNetwork);
  Backend& backend = impl_->context_->backend();
  // The parameters' sums (impl_->normTensors_ ends with the gradient, which the score does not
  // need).
  backend.sumsOfSquares(impl_->normTensors_.data(),
                        static_cast<int64_t>(impl_->normTensors_.size()) - 1, impl_->norms_.data());
  backend.sumsOfAbsolutes(impl_->absoluteTensors_.data(),
                          static_cast<int64_t>(impl_->absoluteTensors_.size()),
                          impl_->absolutes_.data());
  return regularizationFromNorms();
}

void MultiLayerNetwork::fit(const DataSet& batch) {
  fitMinibatch(batch);
  impl_->examplesInEpoch_ += batch.numExamples();
  if (impl_->listeners_.empty()) return;
  IterationInfo info;
  info.iteration = impl_->iteration_;
  info.epoch = impl_->epoch_;
  info.score = impl_->score_;
  info.examples = batch.numExamples();
  info.examplesInEpoch = impl_->examplesInEpoch_;
  for (auto& l : impl_->listeners_) l->iterationDone(*this, info);
}

void MultiLayerNetwork::fitMinibatch(const DataSet& batch) {
  if (impl_->conf_.backpropType == BackpropType::TruncatedBPTT && batch.features.rank() == 3)
    fitTruncated(batch);
  else
    fitStep(batch);
}

void MultiLayerNetwork::fitTruncated(const DataSet& batch) {
  checkBatch(batch, true, "fit");
  const int64_t steps = batch.features.dim(2);
  const int64_t length = impl_->conf_.tbpttFwdLength;
  if (batch.labels.rank() != 3)
    throw ConfigError(fmt::format(
        "MultiLayerNetwork::fit: truncated BPTT needs labels at every step ([N, nOut, T]), got {}",
        batch.labels.shape().toString()));
  if (impl_->conf_.inputType.length > 0 && length < steps)
    throw ConfigError(fmt::format(
        "MultiLayerNetwork::fit: truncated BPTT splits sequences into segments of {} steps, but "
        "the input type {} fixes their length; declare it without one (InputType::recurrent(size))",
        length, impl_->conf_.inputType.toString()));
  // The segments' passes carry the recurrent state; whatever rnnTimeStep kept is gone.
  impl_->timeStepState_ = false;
  struct Reset {
    Impl& impl;
    ~Reset() {
      impl.stateMode_ = ForwardContext::RecurrentStateMode::NONE;
      impl.backwardLength_ = 0;
    }
  } reset{*impl_};
  impl_->backwardLength_ = impl_->conf_.tbpttBackLength;
  for (int64_t start = 0; start < steps; start += length) {
    const int64_t len = std::min(length, steps - start);
    const DataSet segment = detail::segmentOf(batch, start, len);
    impl_->stateMode_ = start == 0 ? ForwardContext::RecurrentStateMode::START
                                   : ForwardContext::RecurrentStateMode::CONTINUE;
    fitStep(segment);
  }
}

void MultiLayerNetwork::fitStep(const DataSet& batch) {
  const double loss = computeGradientAndScore(batch);
  // The regularisation terms (as calcRegularizationScore()) and the gradient's sum of squares,
  // in one call (and one more for the l1 terms, when there are any).
  profileLayer(LayerProfiler::kNetwork);
  Backend& backend = impl_->context_->backend();
  backend.sumsOfSquares(impl_->normTensors_.data(),
                        static_cast<int64_t>(impl_->normTensors_.size()), impl_->norms_.data());
  if (!impl_->absoluteTensors_.empty())
    backend.sumsOfAbsolutes(impl_->absoluteTensors_.data(),
                            static_cast<int64_t>(impl_->absoluteTensors_.size()),
                            impl_->absolutes_.data());
  const double score = loss + regularizationFromNorms();
  // A finite score does not imply finite gradients (an Inf input saturating TANH), so both are
  // checked before anything is written to the parameters.
  const bool finiteGradient = std::isfinite(impl_->norms_.back());
  if (!std::isfinite(score) || !finiteGradient)
    throw NumericalError(
        fmt::format("MultiLayerNetwork::fit: {} at iteration {} (training "
                    "diverged or the batch holds NaN/Inf; lower the learning rate "
                    "or check the data); parameters were not updated",
                    finiteGradient ? fmt::format("score is {}", score)
                                   : std::string("the gradient is not finite"),
                    impl_->iteration_));
  applyUpdate();
  impl_->score_ = score;
  ++impl_->iteration_;
  if (LayerProfiler* p = impl_->context_->profiler()) p->iterationDone();
}

void MultiLayerNetwork::fit(DataSetIterator& iterator) {
  requireInit("fit");
  requireBatchForEpoch(iterator, "MultiLayerNetwork::fit");
  for (auto& l : impl_->listeners_) l->onEpochStart(*this, impl_->epoch_);
  impl_->minibatchesInEpoch_ = 0;
  impl_->examplesInEpoch_ = 0;
  IterationInfo info;
  info.epoch = impl_->epoch_;
  info.examplesPerEpoch = iterator.totalExamples();
  while (iterator.hasNext()) {
    const DataSet batch = iterator.next();
    fitMinibatch(batch);
    ++impl_->minibatchesInEpoch_;
    if (impl_->listeners_.empty()) continue;
    info.iteration = impl_->iteration_;
    info.score = impl_->score_;
    info.examples = batch.numExamples();
    info.examplesInEpoch += info.examples;
    for (auto& l : impl_->listeners_) l->iterationDone(*this, info);
  }
  for (auto& l : impl_->listeners_) l->onEpochEnd(*this, impl_->epoch_);
  ++impl_->epoch_;
  impl_->minibatchesInEpoch_ = 0;
  impl_->examplesInEpoch_ = 0;
}

void MultiLayerNetwork::fit(DataSetIterator& iterator, int epochs) {
  for (int e = 0; e < epochs; ++e) {
    if (e > 0) {
      if (!iterator.resetSupported())
        throw DataError(
            "MultiLayerNetwork::fit(iterator, epochs): the iterator cannot be reset, "
            "so it cannot serve more than one epoch");
      iterator.reset();
    }
    fit(iterator);
  }
}

Tensor MultiLayerNetwork::output(const Tensor& features, bool train) {
  return output(features, train, Tensor());
}

Tensor MultiLayerNetwork::rnnTimeStep(const Tensor& input) {
  requireInit("rnnTimeStep");
  if (impl_->conf_.inputType.kind != InputType::Kind::Recurrent)
    throw ConfigError("MultiLayerNetwork::rnnTimeStep: the network takes " +
                      impl_->conf_.inputType.toString() + ", not sequences");
  if (input.rank() != 2 && input.rank() != 3)
    throw ShapeError("MultiLayerNetwork::rnnTimeStep: input " + input.shape().toString() +
                     " is neither one step [N, C] nor steps [N, C, T]");
  const Tensor steps = input.rank() == 2 ? input.reshape({input.dim(0), input.dim(1), 1}) : input;
  if (impl_->conf_.inputType.length > 0 && steps.dim(2) != impl_->conf_.inputType.length)
    throw ConfigError(fmt::format(
        "MultiLayerNetwork::rnnTimeStep: the input type {} fixes the sequences' length; declare it "
        "without one (InputType::recurrent(size)) to run them step by step",
        impl_->conf_.inputType.toString()));
  struct Reset {
    Impl& impl;
    ~Reset() { impl.stateMode_ = ForwardContext::RecurrentStateMode::NONE; }
  } reset{*impl_};
  impl_->stateMode_ = impl_->timeStepState_ ? ForwardContext::RecurrentStateMode::CONTINUE
                                            : ForwardContext::RecurrentStateMode::START;
  Tensor y = output(steps, false);
  impl_->timeStepState_ = true;
  if (input.rank() == 2 && y.rank() == 3) return y.reshape({y.dim(0), y.dim(1)});
  return y;
}

void MultiLayerNetwork::rnnClearPreviousState() { impl_->timeStepState_ = false; }

Tensor MultiLayerNetwork::output(const Tensor& features, bool train, const Tensor& featuresMask) {
  requireInit("output");
  DataSet batch;
  batch.features = features;
  batch.featuresMask = featuresMask;
  const int64_t n = checkBatch(batch, false, "output");
  impl_->context_->bindToCurrentThread();
  stageInputs(features, Tensor());
  const Tensor& y = forwardPass(impl_->stagedFeatures_, n, train, &batch.featuresMask);
  return y.to(Device::cpu());
}

double MultiLayerNetwork::score(const DataSet& data, bool training) {
  requireInit("score");
  const int64_t n = checkBatch(data, true, "score");
  impl_->context_->bindToCurrentThread();
  stageInputs(data.features, data.labels);
  const Tensor& y = forwardPass(impl_->stagedFeatures_, n, training, &data.featuresMask);
  impl_->lossOutput_->setLabelsMask(data.labelsMask.empty() ? nullptr : &data.labelsMask);
  return impl_->lossOutput_->lossScore(*impl_->context_, y, impl_->stagedLabels_) /
             static_cast<double>(n) +
         calcRegularizationScore();
}

Evaluation MultiLayerNetwork::evaluate(DataSetIterator& iterator) {
  requireInit("evaluate");
  if (!iterator.hasNext() && iterator.resetSupported()) iterator.reset();
  Evaluation eval(static_cast<int>(impl_->conf_.outputType.flatSize()));
  impl_->context_->bindToCurrentThread();
  while (iterator.hasNext()) {
    const DataSet batch = iterator.next();
    const int64_t n = checkBatch(batch, true, "evaluate");
    stageInputs(batch.features, Tensor());
    const Tensor& y = forwardPass(impl_->stagedFeatures_, n, false, &batch.featuresMask);
    if (y.rank() == 3)  // time series: every real step is one prediction
      eval.evalTimeSeries(batch.labels, y.toHost(), batch.labelsMask);
    else
      eval.eval(batch.labels, y.toHost());
  }
  return eval;
}

void MultiLayerNetwork::setParams(const Tensor& params) {
  requireInit("setParams");
  if (params.numel() != impl_->params_.numel())
    throw ShapeError(
        fmt::format("MultiLayerNetwork::setParams: {} values given, the network has {} "
                    "parameters",
                    params.numel(), impl_->params_.numel()));
  impl_->params_.copyFrom(params);
}

void MultiLayerNetwork::setUpdaterState(const Tensor& state) {
  requireInit("setUpdaterState");
  if (state.numel() != impl_->updaterState_.numel())
    throw ShapeError(
        fmt::format("MultiLayerNetwork::setUpdaterState: {} values given, the "
                    "updater state has {}",
                    state.numel(), impl_->updaterState_.numel()));
  impl_->updaterState_.copyFrom(state);
}

void MultiLayerNetwork::setLayerState(const Tensor& state) {
  requireInit("setLayerState");
  if (state.numel() != impl_->layerState_.numel())
    throw ShapeError(
        fmt::format("MultiLayerNetwork::setLayerState: {} values given, the layer "
                    "state has {}",
                    state.numel(), impl_->layerState_.numel()));
  impl_->layerState_.copyFrom(state);
}

MultiLayerNetwork MultiLayerNetwork::clone() const { return clone(impl_->context_->device()); }

MultiLayerNetwork MultiLayerNetwork::clone(Device device) const {
  MultiLayerNetwork copy(impl_->conf_, device, impl_->context_->numThreads());
  if (!isInitialized()) return copy;
  copy.init();
  copy.setParams(impl_->params_);
  copy.setUpdaterState(impl_->updaterState_);
  copy.setLayerState(impl_->layerState_);
  copy.impl_->replicaIndex_ = impl_->replicaIndex_;
  copy.impl_->learningRateScale_ = impl_->learningRateScale_;
  copy.impl_->iteration_ = impl_->iteration_;
  copy.impl_->epoch_ = impl_->epoch_;
  copy.impl_->minibatchesInEpoch_ = impl_->minibatchesInEpoch_;
  copy.impl_->score_ = impl_->score_;
  return copy;
}

std::unique_ptr<Model> MultiLayerNetwork::cloneModel() const {
  return std::make_unique<MultiLayerNetwork>(clone());
}

std::unique_ptr<Model> MultiLayerNetwork::newReplica(Device device, int numThreads) const {
  auto replica = std::make_unique<MultiLayerNetwork>(impl_->conf_, device, numThreads);
  replica->init();
  return replica;
}

std::vector<std::string> MultiLayerNetwork::layerNames() const {
  const auto& layers = impl_->conf_.layers;
  std::vector<std::string> names;
  for (size_t i = 0; i < layers.size(); ++i)
    names.push_back(layers[i]->name.empty() ? fmt::format("{}: {}", i, layers[i]->typeName())
                                            : layers[i]->name);
  return names;
}

std::vector<int64_t> MultiLayerNetwork::layerParamCounts() const {
  std::vector<int64_t> counts;
  for (const auto& layer : impl_->conf_.layers) counts.push_back(layer->numParams());
  return counts;
}

void MultiLayerNetwork::setListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) {
  impl_->listeners_ = std::move(listeners);
}

void MultiLayerNetwork::addListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) {
  for (auto& l : listeners) impl_->listeners_.push_back(std::move(l));
}

}  // namespace dl4cpp

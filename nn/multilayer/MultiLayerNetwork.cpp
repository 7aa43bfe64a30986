#include "nn/multilayer/MultiLayerNetwork.h"

#include <fmt/format.h>

#include <cmath>

#include "nn/layers/InputDropout.h"
#include "nn/layers/LossOutputRuntime.h"
#include "nn/multilayer/LayerSteps.h"
#include "nn/tensor/DeviceContext.h"
#include "nn/util/ModelSerializer.h"
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

MultiLayerNetwork::MultiLayerNetwork(MultiLayerConfiguration conf, Device device, int numThreads)
    : conf_(std::move(conf)), context_(std::make_unique<DeviceContext>(device, numThreads)) {}

MultiLayerNetwork::~MultiLayerNetwork() = default;
MultiLayerNetwork::MultiLayerNetwork(MultiLayerNetwork&&) noexcept = default;
MultiLayerNetwork& MultiLayerNetwork::operator=(MultiLayerNetwork&&) noexcept = default;

void MultiLayerNetwork::init() {
  std::vector<std::unique_ptr<layers::RuntimeLayer>> layers;
  std::vector<std::vector<ParamSpec>> specs;
  std::vector<std::vector<StateSpec>> stateSpecs;
  int64_t totalParams = 0, totalState = 0, totalLayerState = 0;
  // Frozen layers are the first ones (the list builder checks), so their parameters are the start
  // of the parameter buffer.
  int frozenLayers = 0;
  int64_t frozenParams = 0;
  int lowestTrainable = static_cast<int>(conf_.layers.size());
  for (const auto& layerConf : conf_.layers) {
    layers.push_back(
        layers::withInputDropout(layerConf->dropOut.value_or(0), layerConf->instantiate()));
    specs.push_back(layerConf->paramSpecs());
    for (const auto& spec : specs.back()) {
      const UpdaterParams& u = spec.isBias ? layerConf->resolvedBiasUpdater() : *layerConf->updater;
      totalParams += spec.shape.numel();
      if (!layerConf->frozen) totalState += spec.shape.numel() * u.stateSizePerParam();
    }
    if (layerConf->frozen) {
      ++frozenLayers;
      frozenParams = totalParams;
    } else if (!specs.back().empty() && lowestTrainable == static_cast<int>(conf_.layers.size())) {
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
        conf_.layers.back()->typeName()));
  const Device device = context_->device();
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
  layers_ = std::move(layers);
  lossOutput_ = lossOutput;
  numFrozenLayers_ = frozenLayers;
  numFrozenParams_ = frozenParams;
  lowestTrainableLayer_ = lowestTrainable;
  segments_.clear();
  normalizer_ = GradientNormalizer();
  stateLayout_.clear();
  params_ = std::move(params);
  gradients_ = std::move(gradients);
  updaterState_ = std::move(updaterState);
  layerState_ = std::move(layerState);

  // Parameters are initialised in layer and spec order, so a seed gives the same values whatever
  // the device.
  Random random(conf_.seed);
  int64_t offset = 0, stateOffset = 0, layerStateOffset = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Layer& layerConf = *conf_.layers[i];
    const int64_t layerOffset = offset;
    std::vector<Tensor> params, grads;
    for (const auto& spec : specs[i]) {
      ParamSegment seg;
      seg.isBias = spec.isBias;
      seg.layer = static_cast<int>(i);
      seg.param = params_.view(offset, spec.shape);
      seg.grad = gradients_.view(offset, spec.shape);
      offset += spec.shape.numel();
      if (spec.weightInit)
        initWeights(*spec.weightInit, spec.fanIn, spec.fanOut, seg.param, random);
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
      seg.state = updaterState_.view(stateOffset, Shape{stateSize});
      seg.state.fill(static_cast<float>(seg.updater.initialStateValue()));
      stateOffset += stateSize;
      segments_.push_back(seg);
    }
    layers_[i]->bindParams(params, grads);
    // The layer's parameters lie side by side: its whole gradient is one view.
    if (!grads.empty() && !layerConf.frozen)
      normalizer_.addLayer(static_cast<int>(i), *layerConf.gradientNormalization,
                           *layerConf.gradientNormalizationThreshold, grads,
                           gradients_.view(layerOffset, Shape{offset - layerOffset}));
    std::vector<Tensor> state;
    for (const auto& spec : stateSpecs[i]) {
      state.push_back(layerState_.view(layerStateOffset, spec.shape));
      state.back().fill(spec.initValue);
      if (spec.combine == StateCombine::PooledMeanVariance) {
        const int64_t channels = spec.shape.numel() / 2;
        state.back().view(channels, Shape{channels}).fill(spec.initVariance);
      }
      // A frozen layer's state never changes and is the same in every replica: kept per replica,
      // it stays bit-identical, where any mean of equal values could round it.
      stateLayout_.push_back({static_cast<int>(i), spec.name, layerStateOffset, spec.shape,
                              layerConf.frozen ? StateCombine::PerReplica : spec.combine});
      layerStateOffset += spec.shape.numel();
    }
    layers_[i]->bindState(state);
  }
  normTensors_.clear();
  absoluteTensors_.clear();
  for (const auto& seg : segments_) {
    if (seg.regularization.l2 != 0 || seg.regularization.weightDecay != 0)
      normTensors_.push_back(seg.param);
    if (seg.regularization.l1 != 0) absoluteTensors_.push_back(seg.param);
  }
  // The gradient whose finiteness fit() checks: the trainable layers' (the frozen ones' is zero).
  normTensors_.push_back(
      gradients_.view(numFrozenParams_, Shape{gradients_.numel() - numFrozenParams_}));
  norms_.assign(normTensors_.size(), 0.0);
  absolutes_.assign(absoluteTensors_.size(), 0.0);

  capacity_ = 0;
  const size_t n = layers_.size();
  steps_ = planLayerSteps(context_->backend(), layers_);
  activationStore_.assign(n, Tensor());
  gradientStore_.assign(n, Tensor());
  inputs_.assign(n, Tensor());
  outputs_.assign(n, Tensor());
  outputGrads_.assign(n, Tensor());
  iteration_ = 0;
  epoch_ = 0;
  minibatchesInEpoch_ = 0;
  examplesInEpoch_ = 0;
  score_ = 0;
}

void MultiLayerNetwork::setProfiler(std::shared_ptr<LayerProfiler> profiler) {
  context_->setProfiler(std::move(profiler));
}

LayerProfiler* MultiLayerNetwork::getProfiler() const { return context_->profiler(); }

int MultiLayerNetwork::numThreads() const { return context_->numThreads(); }

void MultiLayerNetwork::profileLayer(int layer) {
  if (LayerProfiler* p = context_->profiler()) p->enterLayer(layer);
}

void MultiLayerNetwork::requireInit(const char* method) const {
  if (!isInitialized())
    throw ConfigError(std::string("MultiLayerNetwork::") + method + ": call init() first");
}

int64_t MultiLayerNetwork::numParams() const { return params_.numel(); }

int64_t MultiLayerNetwork::checkBatch(const DataSet& batch, bool needLabels,
                                      const char* method) const {
  const Tensor& f = batch.features;
  const int64_t perExample = conf_.inputType.flatSize();
  if (f.empty() || f.rank() < 2 || f.dim(0) == 0 || f.numel() != f.dim(0) * perExample)
    throw ShapeError(
        fmt::format("MultiLayerNetwork::{}: features {} do not match the input type "
                    "{} (expected [N, {}] with N > 0)",
                    method, f.shape().toString(), conf_.inputType.toString(), perExample));
  const int64_t n = f.dim(0);
  if (needLabels) {
    const Tensor& l = batch.labels;
    const int64_t nOut = conf_.outputType.flatSize();
    if (l.empty() || l.rank() != 2 || l.dim(0) != n || l.dim(1) != nOut)
      throw ShapeError(
          fmt::format("MultiLayerNetwork::{}: labels {} do not match: expected [{}, "
                      "{}] for {} examples and {} outputs",
                      method, l.shape().toString(), n, nOut, n, nOut));
  }
  return n;
}

void MultiLayerNetwork::ensureCapacity(int64_t batch) {
  if (batch <= capacity_) return;
  const Device device = context_->device();
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Shape shape = conf_.layerOutputTypes[i].shape(batch);
    auto describe = [&] {
      return fmt::format("MultiLayerNetwork: outputs of layer {} ({}) for a batch of {}", i,
                         conf_.layers[i]->typeName(), batch);
    };
    activationStore_[i] = allocate(shape, device, describe);
    gradientStore_[i] = allocate(shape, device, describe);
  }
  inputGradStore_ = allocate(conf_.layerInputTypes[0].shape(batch), device, [&] {
    return fmt::format("MultiLayerNetwork: input gradients for a batch of {}", batch);
  });
  capacity_ = batch;
}

const Tensor& MultiLayerNetwork::forwardPass(const Tensor& features, int64_t n, bool training) {
  ensureCapacity(n);
  for (size_t i = 0; i < layers_.size(); ++i) {
    const Shape inShape = conf_.layerInputTypes[i].shape(n);
    inputs_[i] = i == 0 ? features.reshape(inShape) : outputs_[i - 1].reshape(inShape);
    outputs_[i] = activationStore_[i].view(0, conf_.layerOutputTypes[i].shape(n));
  }
  const LayerTensors tensors{inputs_, outputs_, outputGrads_};
  const ForwardContext pass =
      ForwardContext::pass(training, conf_.seed, replicaIndex_, iteration_, numFrozenLayers_);
  for (auto& step : steps_) step->forward(*context_, tensors, pass);
  return outputs_.back();
}

void MultiLayerNetwork::stageInputs(const Tensor& features, const Tensor& labels) {
  profileLayer(LayerProfiler::kNetwork);
  context_->backend().stageBatch(features, labels, stagedFeatures_, stagedLabels_);
}

double MultiLayerNetwork::computeGradientAndScore(const DataSet& batch, bool wantInputGradient) {
  requireInit("computeGradientAndScore");
  if (wantInputGradient && numFrozenLayers_ > 0)
    throw ConfigError(fmt::format(
        "MultiLayerNetwork::computeGradientAndScore: no input gradient can be computed: layers 0 "
        "to {} are frozen, and no gradient passes through a frozen layer",
        numFrozenLayers_ - 1));
  const int64_t n = checkBatch(batch, true, "fit");
  context_->bindToCurrentThread();
  stageInputs(batch.features, batch.labels);
  const Tensor& y = forwardPass(stagedFeatures_, n, true);
  const size_t last = layers_.size() - 1;
  for (size_t i = 0; i <= last; ++i)
    outputGrads_[i] = gradientStore_[i].view(0, conf_.layerOutputTypes[i].shape(n));

  const double lossSum = lossOutput_->lossGradient(*context_, y, stagedLabels_, outputGrads_[last]);
  // Gradients of the mean loss: scaling the top gradient once scales every parameter gradient.
  profileLayer(LayerProfiler::kNetwork);
  context_->backend().scale(outputGrads_[last], 1.0f / static_cast<float>(n));

  // Backward, step by step from the last, down to the lowest layer with trainable parameters (to
  // the input when its gradient is asked for): no step below it runs, and the step holding it
  // writes no input gradient and may skip whatever only feeds one. Frozen layers lie below it.
  const int lowest = wantInputGradient ? 0 : lowestTrainableLayer_;
  const LayerTensors tensors{inputs_, outputs_, outputGrads_};
  for (size_t s = steps_.size(); s-- > 0;) {
    NetworkStep& step = *steps_[s];
    if (step.last() < lowest) break;
    const auto first = static_cast<size_t>(step.first());
    Tensor inputGrad;
    if (step.first() > lowest)
      inputGrad = outputGrads_[first - 1].reshape(inputs_[first].shape());
    else if (wantInputGradient) {
      inputGrad = inputGradStore_.view(0, inputs_[0].shape());
      inputGradient_ = inputGrad.reshape(batch.features.shape());
    }
    step.backward(*context_, tensors, inputGrad.empty() ? nullptr : &inputGrad);
  }
  return lossSum / static_cast<double>(n);
}

void MultiLayerNetwork::applyUpdate() {
  requireInit("applyUpdate");
  // This step's scheduled (and scaled) learning rates and momenta, every one checked before any
  // parameter changes (a schedule can overflow: an ExponentialSchedule with gamma > 1, given time).
  for (auto& seg : segments_) {
    seg.updater.learningRate = seg.baseLearningRate;
    setScheduledValues(seg.updater, iteration_, epoch_);
    seg.updater.learningRate *= learningRateScale_;
    for (const auto& [value, what] : {std::pair{seg.updater.learningRate, "learning rate"},
                                      std::pair{seg.updater.momentum, "momentum"}})
      if (!std::isfinite(value))
        throw NumericalError(fmt::format(
            "MultiLayerNetwork: the {} schedule of layer {} ({}) gives {} at iteration {}, epoch "
            "{}; parameters were not updated",
            what, seg.layer, conf_.layers[static_cast<size_t>(seg.layer)]->typeName(), value,
            iteration_, epoch_));
  }
  context_->bindToCurrentThread();
  normalizer_.apply(context_->backend(), context_->profiler());
  for (auto& seg : segments_) {
    profileLayer(seg.layer);
    context_->backend().updaterStep(seg.updater, seg.regularization, iteration_, seg.param,
                                    seg.grad, seg.state);
  }
}

std::optional<double> MultiLayerNetwork::getLearningRate(int layer) const {
  requireInit("getLearningRate");
  if (layer < 0 || layer >= numLayers())
    throw ConfigError(
        fmt::format("MultiLayerNetwork::getLearningRate: no layer {} (the network has {})", layer,
                    numLayers()));
  // The weights' rate (a bias may have an updater of its own); a layer of biases only, theirs.
  const ParamSegment* chosen = nullptr;
  for (const auto& seg : segments_)
    if (seg.layer == layer && (!chosen || (chosen->isBias && !seg.isBias))) chosen = &seg;
  if (!chosen) return std::nullopt;
  UpdaterParams u = chosen->updater;
  u.learningRate = chosen->baseLearningRate;
  setScheduledValues(u, iteration_, epoch_);
  return u.learningRate * learningRateScale_;
}

void MultiLayerNetwork::setLearningRateScale(double scale) {
  if (!std::isfinite(scale) || scale <= 0)
    throw ConfigError(fmt::format(
        "MultiLayerNetwork::setLearningRateScale: the scale must be finite and > 0, got {}",
        scale));
  learningRateScale_ = scale;
}

double MultiLayerNetwork::regularizationFromNorms() const {
  double sum = 0;
  size_t squares = 0, absolutes = 0;
  for (const auto& seg : segments_) {
    const RegularizationParams& r = seg.regularization;
    if (r.l2 != 0 || r.weightDecay != 0) sum += 0.5 * (r.l2 + r.weightDecay) * norms_[squares++];
    if (r.l1 != 0) sum += r.l1 * absolutes_[absolutes++];
  }
  return sum;
}

double MultiLayerNetwork::calcRegularizationScore() {
  // Ops only ever run under this network's thread budget, whichever thread asks.
  context_->bindToCurrentThread();
  profileLayer(LayerProfiler::kNetwork);
  Backend& backend = context_->backend();
  // The parameters' sums (normTensors_ ends with the gradient, which the score does not need).
  backend.sumsOfSquares(normTensors_.data(), static_cast<int64_t>(normTensors_.size()) - 1,
                        norms_.data());
  backend.sumsOfAbsolutes(absoluteTensors_.data(), static_cast<int64_t>(absoluteTensors_.size()),
                          absolutes_.data());
  return regularizationFromNorms();
}

void MultiLayerNetwork::fit(const DataSet& batch) {
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

void MultiLayerNetwork::fitMinibatch(const DataSet& batch) {
  const double loss = computeGradientAndScore(batch);
  // The regularisation terms (as calcRegularizationScore()) and the gradient's sum of squares,
  // in one call (and one more for the l1 terms, when there are any).
  profileLayer(LayerProfiler::kNetwork);
  Backend& backend = context_->backend();
  backend.sumsOfSquares(normTensors_.data(), static_cast<int64_t>(normTensors_.size()),
                        norms_.data());
  if (!absoluteTensors_.empty())
    backend.sumsOfAbsolutes(absoluteTensors_.data(), static_cast<int64_t>(absoluteTensors_.size()),
                            absolutes_.data());
  const double score = loss + regularizationFromNorms();
  // A finite score does not imply finite gradients (an Inf input saturating TANH), so both are
  // checked before anything is written to the parameters.
  const bool finiteGradient = std::isfinite(norms_.back());
  if (!std::isfinite(score) || !finiteGradient)
    throw NumericalError(
        fmt::format("MultiLayerNetwork::fit: {} at iteration {} (training "
                    "diverged or the batch holds NaN/Inf; lower the learning rate "
                    "or check the data); parameters were not updated",
                    finiteGradient ? fmt::format("score is {}", score)
                                   : std::string("the gradient is not finite"),
                    iteration_));
  applyUpdate();
  score_ = score;
  ++iteration_;
  if (LayerProfiler* p = context_->profiler()) p->iterationDone();
}

void MultiLayerNetwork::fit(DataSetIterator& iterator) {
  requireInit("fit");
  requireBatchForEpoch(iterator, "MultiLayerNetwork::fit");
  for (auto& l : listeners_) l->onEpochStart(*this, epoch_);
  minibatchesInEpoch_ = 0;
  examplesInEpoch_ = 0;
  IterationInfo info;
  info.epoch = epoch_;
  info.examplesPerEpoch = iterator.totalExamples();
  while (iterator.hasNext()) {
    const DataSet batch = iterator.next();
    fitMinibatch(batch);
    ++minibatchesInEpoch_;
    if (listeners_.empty()) continue;
    info.iteration = iteration_;
    info.score = score_;
    info.examples = batch.numExamples();
    info.examplesInEpoch += info.examples;
    for (auto& l : listeners_) l->iterationDone(*this, info);
  }
  for (auto& l : listeners_) l->onEpochEnd(*this, epoch_);
  ++epoch_;
  minibatchesInEpoch_ = 0;
  examplesInEpoch_ = 0;
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
  requireInit("output");
  DataSet batch;
  batch.features = features;
  const int64_t n = checkBatch(batch, false, "output");
  context_->bindToCurrentThread();
  stageInputs(features, Tensor());
  const Tensor& y = forwardPass(stagedFeatures_, n, train);
  return y.to(Device::cpu());
}

double MultiLayerNetwork::score(const DataSet& data) {
  requireInit("score");
  const int64_t n = checkBatch(data, true, "score");
  context_->bindToCurrentThread();
  stageInputs(data.features, data.labels);
  const Tensor& y = forwardPass(stagedFeatures_, n, false);
  return lossOutput_->lossScore(*context_, y, stagedLabels_) / static_cast<double>(n) +
         calcRegularizationScore();
}

Evaluation MultiLayerNetwork::evaluate(DataSetIterator& iterator) {
  requireInit("evaluate");
  if (!iterator.hasNext() && iterator.resetSupported()) iterator.reset();
  Evaluation eval(static_cast<int>(conf_.outputType.flatSize()));
  context_->bindToCurrentThread();
  while (iterator.hasNext()) {
    const DataSet batch = iterator.next();
    const int64_t n = checkBatch(batch, true, "evaluate");
    stageInputs(batch.features, Tensor());
    const Tensor& y = forwardPass(stagedFeatures_, n, false);
    eval.eval(batch.labels, y.toHost());
  }
  return eval;
}

void MultiLayerNetwork::setParams(const Tensor& params) {
  requireInit("setParams");
  if (params.numel() != params_.numel())
    throw ShapeError(
        fmt::format("MultiLayerNetwork::setParams: {} values given, the network has {} "
                    "parameters",
                    params.numel(), params_.numel()));
  params_.copyFrom(params);
}

void MultiLayerNetwork::setUpdaterState(const Tensor& state) {
  requireInit("setUpdaterState");
  if (state.numel() != updaterState_.numel())
    throw ShapeError(
        fmt::format("MultiLayerNetwork::setUpdaterState: {} values given, the "
                    "updater state has {}",
                    state.numel(), updaterState_.numel()));
  updaterState_.copyFrom(state);
}

void MultiLayerNetwork::setLayerState(const Tensor& state) {
  requireInit("setLayerState");
  if (state.numel() != layerState_.numel())
    throw ShapeError(
        fmt::format("MultiLayerNetwork::setLayerState: {} values given, the layer "
                    "state has {}",
                    state.numel(), layerState_.numel()));
  layerState_.copyFrom(state);
}

MultiLayerNetwork MultiLayerNetwork::clone() const { return clone(context_->device()); }

MultiLayerNetwork MultiLayerNetwork::clone(Device device) const {
  MultiLayerNetwork copy(conf_, device, context_->numThreads());
  if (!isInitialized()) return copy;
  copy.init();
  copy.setParams(params_);
  copy.setUpdaterState(updaterState_);
  copy.setLayerState(layerState_);
  copy.replicaIndex_ = replicaIndex_;
  copy.learningRateScale_ = learningRateScale_;
  copy.iteration_ = iteration_;
  copy.epoch_ = epoch_;
  copy.minibatchesInEpoch_ = minibatchesInEpoch_;
  copy.score_ = score_;
  return copy;
}

std::unique_ptr<Model> MultiLayerNetwork::cloneModel() const {
  return std::make_unique<MultiLayerNetwork>(clone());
}

std::unique_ptr<Model> MultiLayerNetwork::newReplica(Device device, int numThreads) const {
  auto replica = std::make_unique<MultiLayerNetwork>(conf_, device, numThreads);
  replica->init();
  return replica;
}

std::vector<std::string> MultiLayerNetwork::layerNames() const {
  std::vector<std::string> names;
  for (size_t i = 0; i < conf_.layers.size(); ++i)
    names.push_back(conf_.layers[i]->name.empty()
                        ? fmt::format("{}: {}", i, conf_.layers[i]->typeName())
                        : conf_.layers[i]->name);
  return names;
}

std::vector<int64_t> MultiLayerNetwork::layerParamCounts() const {
  std::vector<int64_t> counts;
  for (const auto& layer : conf_.layers) counts.push_back(layer->numParams());
  return counts;
}

void MultiLayerNetwork::save(const std::filesystem::path& path, bool saveUpdater) const {
  ModelSerializer::writeModel(*this, path, saveUpdater);
}

MultiLayerNetwork MultiLayerNetwork::load(const std::filesystem::path& path, bool loadUpdater) {
  return ModelSerializer::restoreMultiLayerNetwork(path, loadUpdater);
}

void MultiLayerNetwork::setListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) {
  listeners_ = std::move(listeners);
}

void MultiLayerNetwork::addListeners(std::vector<std::shared_ptr<TrainingListener>> listeners) {
  for (auto& l : listeners) listeners_.push_back(std::move(l));
}

}  // namespace dl4cpp

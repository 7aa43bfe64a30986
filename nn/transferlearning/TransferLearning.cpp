#include "nn/transferlearning/TransferLearning.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "nn/conf/graph/MergeVertex.h"

namespace dl4cpp {

namespace {

std::string describe(int index, const Layer& layer) {
  return fmt::format("layer {} ({})", index, layer.typeName());
}

// Whether `a` and `b` have the same parameters and state, shape for shape.
bool sameShapes(const Layer& a, const Layer& b) {
  const auto pa = a.paramSpecs(), pb = b.paramSpecs();
  const auto sa = a.stateSpecs(), sb = b.stateSpecs();
  if (pa.size() != pb.size() || sa.size() != sb.size()) return false;
  for (size_t i = 0; i < pa.size(); ++i)
    if (pa[i].name != pb[i].name || !(pa[i].shape == pb[i].shape)) return false;
  for (size_t i = 0; i < sa.size(); ++i)
    if (sa[i].name != sb[i].name || !(sa[i].shape == sb[i].shape)) return false;
  return true;
}

// Where each layer's parameters and state start in the network's flat buffers (layer order).
struct Offsets {
  std::vector<int64_t> params, state;
};

Offsets offsetsOf(const MultiLayerConfiguration& conf) {
  Offsets o;
  int64_t params = 0, state = 0;
  for (const auto& layer : conf.layers) {
    o.params.push_back(params);
    o.state.push_back(state);
    params += layer->numParams();
    state += layer->stateSize();
  }
  return o;
}

void copyRange(const Tensor& to, int64_t toOffset, const Tensor& from, int64_t fromOffset,
               int64_t count) {
  if (count == 0) return;
  to.view(toOffset, Shape{count}).copyFrom(from.view(fromOffset, Shape{count}));
}

}  // namespace

TransferLearning::Builder::Builder(const MultiLayerNetwork& original) : original_(&original) {
  if (!original.isInitialized())
    throw ConfigError(
        "TransferLearning::Builder: the original network must be initialised (call init())");
}

int TransferLearning::Builder::originalLayers() const {
  return static_cast<int>(original_->getConfiguration().layers.size());
}

TransferLearning::Builder& TransferLearning::Builder::fineTuneConfiguration(
    const FineTuneConfiguration& fineTune) {
  fineTune_ = fineTune;
  return *this;
}

TransferLearning::Builder& TransferLearning::Builder::setFeatureExtractor(int layer) {
  if (layer < 0)
    throw ConfigError(fmt::format(
        "TransferLearning::Builder::setFeatureExtractor({}): a layer index is >= 0", layer));
  frozenTill_ = layer;
  return *this;
}

TransferLearning::Builder& TransferLearning::Builder::nOutReplace(int layer, int64_t nOut,
                                                                  const WeightInitScheme& scheme) {
  return nOutReplace(layer, nOut, scheme, scheme);
}

TransferLearning::Builder& TransferLearning::Builder::nOutReplace(
    int layer, int64_t nOut, const WeightInitScheme& scheme, const WeightInitScheme& schemeNext) {
  const std::string call =
      fmt::format("TransferLearning::Builder::nOutReplace({}, {})", layer, nOut);
  if (layer < 0 || layer >= originalLayers())
    throw ConfigError(
        fmt::format("{}: the network has layers 0 to {}", call, originalLayers() - 1));
  const std::shared_ptr<Layer> target =
      original_->getConfiguration().layers[static_cast<size_t>(layer)]->clone();
  if (!target->nInOut())
    throw ConfigError(fmt::format("{}: {} has no nOut (dense, output and convolution layers do)",
                                  call, describe(layer, *target)));
  nOutEdits_[layer] = NOutEdit{nOut, scheme, schemeNext};
  return *this;
}

TransferLearning::Builder& TransferLearning::Builder::removeOutputLayer() {
  return removeLayersFromOutput(1);
}

TransferLearning::Builder& TransferLearning::Builder::removeLayersFromOutput(int count) {
  const std::string call =
      fmt::format("TransferLearning::Builder::removeLayersFromOutput({})", count);
  if (removed_)
    throw ConfigError(fmt::format("{}: layers were already removed ({}); remove them in one call",
                                  call, *removed_));
  if (count < 1 || count > originalLayers())
    throw ConfigError(fmt::format("{}: the network has {} layers; remove 1 to {}", call,
                                  originalLayers(), originalLayers()));
  removed_ = count;
  return *this;
}

TransferLearning::Builder& TransferLearning::Builder::addLayer(const Layer& layer) {
  added_.push_back(layer.clone());
  return *this;
}

std::vector<std::shared_ptr<Layer>> TransferLearning::Builder::editedLayers(
    std::vector<bool>& reinitialised) const {
  const auto& original = original_->getConfiguration().layers;
  const int kept = originalLayers() - removed_.value_or(0);
  std::vector<std::shared_ptr<Layer>> layers;
  layers.reserve(static_cast<size_t>(kept) + added_.size());
  for (int i = 0; i < kept; ++i) layers.push_back(original[static_cast<size_t>(i)]->clone());
  reinitialised.assign(static_cast<size_t>(kept), false);

  for (const auto& [index, edit] : nOutEdits_) {
    if (index >= kept)
      throw ConfigError(
          fmt::format("TransferLearning::Builder::build: nOutReplace({}, {}) edits a layer that "
                      "removeLayersFromOutput({}) removes",
                      index, edit.nOut, *removed_));
    Layer& target = *layers[static_cast<size_t>(index)];
    *target.nInOut()->nOut = edit.nOut;
    target.weightInit = edit.scheme;
    reinitialised[static_cast<size_t>(index)] = true;
    // The next layer with an nIn takes the new size (inferred again); batch normalisation between
    // follows it by itself, and parameterless layers pass it on.
    for (int j = index + 1; j < kept; ++j) {
      Layer& next = *layers[static_cast<size_t>(j)];
      next.clearInferredSizes();
      if (next.nInOut()) {
        next.weightInit = edit.schemeNext;
        reinitialised[static_cast<size_t>(j)] = true;
        break;
      }
    }
  }

  for (int i = 0; i < kept; ++i) {
    Layer& layer = *layers[static_cast<size_t>(i)];
    layer.frozen = layer.frozen || i <= frozenTill_;
    if (!layer.frozen && fineTune_) fineTune_->applyTo(layer);
  }
  for (const auto& added : added_) {
    std::shared_ptr<Layer> layer = added->clone();
    layer->frozen = layer->frozen || static_cast<int>(layers.size()) <= frozenTill_;
    layers.push_back(std::move(layer));
  }
  return layers;
}

MultiLayerNetwork TransferLearning::Builder::build() const {
  const MultiLayerConfiguration& original = original_->getConfiguration();
  const int kept = originalLayers() - removed_.value_or(0);
  const int total = kept + static_cast<int>(added_.size());
  if (total == 0)
    throw ConfigError(
        fmt::format("TransferLearning::Builder::build: the edited network has no layers "
                    "(removeLayersFromOutput({}) removed all {} and none was added)",
                    removed_.value_or(0), originalLayers()));
  if (frozenTill_ >= total)
    throw ConfigError(
        fmt::format("TransferLearning::Builder::build: setFeatureExtractor({}) is beyond the "
                    "edited network, which has layers 0 to {}",
                    frozenTill_, total - 1));

  std::vector<bool> reinitialised;
  const std::vector<std::shared_ptr<Layer>> layers = editedLayers(reinitialised);
  const uint64_t seed = fineTune_ ? fineTune_->seedOr(original.seed) : original.seed;
  NeuralNetConfiguration::ListBuilder list(
      seed, fineTune_ ? fineTune_->applyTo(original.defaults) : original.defaults);
  list.setInputType(original.inputType)
      .backpropType(original.backpropType)
      .tBPTTForwardLength(original.tbpttFwdLength)
      .tBPTTBackwardLength(original.tbpttBackLength);
  for (const auto& layer : layers) list.layer(*layer);
  // The preprocessor a builder is told about (the others it derives) stays with its kept layer.
  for (int i = 0; i < kept; ++i) {
    const auto u = static_cast<size_t>(i);
    if (original.preProcessors[u] != InputPreProcessor::RnnToCnn) continue;
    const InputType& images = original.layerInputTypes[u];
    list.inputPreProcessor(i, {images.height, images.width, images.channels});
  }
  MultiLayerConfiguration conf;
  try {
    conf = list.build();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("TransferLearning::Builder::build: ") + e.what());
  }

  // The layers whose parameters and state carry over: kept ones that no edit re-initialises.
  std::vector<bool> carried(static_cast<size_t>(total), false);
  for (int i = 0; i < total; ++i) {
    const auto u = static_cast<size_t>(i);
    const Layer& layer = *conf.layers[u];
    carried[u] = i < kept && !reinitialised[u] && sameShapes(*original.layers[u], layer);
    if (!carried[u] && layer.frozen && (layer.numParams() > 0 || layer.stateSize() > 0))
      throw ConfigError(
          fmt::format("TransferLearning::Builder::build: {} is frozen, but its parameters would be "
                      "initialised afresh ({}): a frozen layer keeps trained parameters",
                      describe(i, layer),
                      i < kept ? "nOutReplace edits it or its input" : "it is added by addLayer"));
  }

  const Offsets from = offsetsOf(original), to = offsetsOf(conf);
  MultiLayerNetwork network(std::move(conf), original_->params().device(), original_->numThreads());
  network.init();
  for (int i = 0; i < kept; ++i) {
    const auto u = static_cast<size_t>(i);
    if (!carried[u]) continue;
    const Layer& layer = *original.layers[u];
    copyRange(network.params(), to.params[u], original_->params(), from.params[u],
              layer.numParams());
    copyRange(network.layerState(), to.state[u], original_->layerState(), from.state[u],
              layer.stateSize());
  }
  return network;
}

// --- TransferLearning::GraphBuilder -------------------------------------------------------------

namespace {

// Where each layer vertex's parameters and state start in a graph's flat buffers, by name.
std::map<std::string, std::pair<int64_t, int64_t>> graphOffsets(
    const ComputationGraphConfiguration& conf) {
  std::map<std::string, std::pair<int64_t, int64_t>> offsets;
  int64_t params = 0, state = 0;
  for (const auto& v : conf.vertices) {
    if (!v.layer) continue;
    offsets[v.name] = {params, state};
    params += v.layer->numParams();
    state += v.layer->stateSize();
  }
  return offsets;
}

std::string describeVertex(const std::string& name, const Layer* layer, const GraphVertex* vertex) {
  return fmt::format("vertex \"{}\" ({})", name, layer ? layer->typeName() : vertex->typeName());
}

}  // namespace

TransferLearning::GraphBuilder::GraphBuilder(const ComputationGraph& original)
    : original_(&original) {
  if (!original.isInitialized())
    throw ConfigError(
        "TransferLearning::GraphBuilder: the original graph must be initialised (call init())");
  const ComputationGraphConfiguration& conf = original.getConfiguration();
  for (const auto& v : conf.vertices)
    entries_.push_back({v.name, v.layer ? v.layer->clone() : nullptr,
                        v.vertex ? v.vertex->clone() : nullptr, v.inputs, true, false});
  outputs_ = conf.networkOutputs;
}

TransferLearning::GraphBuilder::Entry* TransferLearning::GraphBuilder::find(
    const std::string& name) {
  for (Entry& e : entries_)
    if (e.name == name) return &e;
  return nullptr;
}

TransferLearning::GraphBuilder::Entry& TransferLearning::GraphBuilder::require(
    const std::string& name, const char* method) {
  Entry* e = find(name);
  if (e == nullptr)
    throw ConfigError(fmt::format(
        "TransferLearning::GraphBuilder::{}(\"{}\"): no vertex of the graph (as edited so far) "
        "has that name",
        method, name));
  return *e;
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::fineTuneConfiguration(
    const FineTuneConfiguration& fineTune) {
  fineTune_ = fineTune;
  return *this;
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::setFeatureExtractor(
    const std::vector<std::string>& names) {
  featureExtractor_ = names;
  return *this;
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::nOutReplace(
    const std::string& name, int64_t nOut, const WeightInitScheme& scheme) {
  return nOutReplace(name, nOut, scheme, scheme);
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::nOutReplace(
    const std::string& name, int64_t nOut, const WeightInitScheme& scheme,
    const WeightInitScheme& schemeNext) {
  Entry& target = require(name, "nOutReplace");
  if (!target.layer || !target.layer->nInOut())
    throw ConfigError(fmt::format(
        "TransferLearning::GraphBuilder::nOutReplace(\"{}\", {}): {} has no nOut (dense, output "
        "and convolution layers do)",
        name, nOut, describeVertex(name, target.layer.get(), target.vertex.get())));
  *target.layer->nInOut()->nOut = nOut;
  target.layer->weightInit = scheme;
  target.reinitialised = true;
  // Every reader takes the new size: through vertices and layers whose size follows their input
  // (parameterless ones, batch normalisation) to the first layers with an nIn on each path.
  std::vector<std::string> frontier{name};
  std::set<std::string> seen{name};
  while (!frontier.empty()) {
    const std::string from = frontier.back();
    frontier.pop_back();
    for (Entry& e : entries_) {
      if (std::find(e.inputs.begin(), e.inputs.end(), from) == e.inputs.end() ||
          !seen.insert(e.name).second)
        continue;
      if (e.layer) {
        e.layer->clearInferredSizes();
        if (e.layer->nInOut()) {
          e.layer->weightInit = schemeNext;
          e.reinitialised = true;
          continue;
        }
      }
      frontier.push_back(e.name);
    }
  }
  return *this;
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::removeVertexAndConnections(
    const std::string& name) {
  Entry& e = require(name, "removeVertexAndConnections");
  entries_.erase(entries_.begin() + (&e - entries_.data()));
  for (Entry& other : entries_) std::erase(other.inputs, name);
  std::erase(outputs_, name);
  return *this;
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::removeVertexKeepConnections(
    const std::string& name) {
  Entry& e = require(name, "removeVertexKeepConnections");
  entries_.erase(entries_.begin() + (&e - entries_.data()));
  return *this;
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::addLayer(
    const std::string& name, const Layer& layer, const std::vector<std::string>& inputs) {
  if (inputs.size() > 1) {
    // As ComputationGraphConfiguration::GraphBuilder does: a layer reads several inputs merged.
    entries_.push_back({name + "-merge", nullptr, MergeVertex().clone(), inputs, false, false});
    entries_.push_back({name, layer.clone(), nullptr, {name + "-merge"}, false, false});
  } else {
    entries_.push_back({name, layer.clone(), nullptr, inputs, false, false});
  }
  return *this;
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::addVertex(
    const std::string& name, const GraphVertex& vertex, const std::vector<std::string>& inputs) {
  entries_.push_back({name, nullptr, vertex.clone(), inputs, false, false});
  return *this;
}

TransferLearning::GraphBuilder& TransferLearning::GraphBuilder::setOutputs(
    const std::vector<std::string>& names) {
  outputs_ = names;
  return *this;
}

ComputationGraph TransferLearning::GraphBuilder::build() const {
  const ComputationGraphConfiguration& original = original_->getConfiguration();
  std::map<std::string, const Entry*> byName;
  for (const Entry& e : entries_) byName[e.name] = &e;

  // The feature extractor: the named vertices and everything they read.
  std::set<std::string> frozen;
  std::vector<std::string> frontier;
  for (const std::string& name : featureExtractor_) {
    if (!byName.contains(name))
      throw ConfigError(
          fmt::format("TransferLearning::GraphBuilder::build: setFeatureExtractor(\"{}\") names no "
                      "vertex of the edited graph",
                      name));
    frontier.push_back(name);
  }
  while (!frontier.empty()) {
    const std::string name = frontier.back();
    frontier.pop_back();
    const auto it = byName.find(name);
    if (it == byName.end() || !frozen.insert(name).second) continue;  // a network input
    for (const std::string& in : it->second->inputs) frontier.push_back(in);
  }

  const uint64_t seed = fineTune_ ? fineTune_->seedOr(original.seed) : original.seed;
  dl4cpp::GraphBuilder graph(seed,
                             fineTune_ ? fineTune_->applyTo(original.defaults) : original.defaults);
  graph.addInputs(original.networkInputs)
      .setInputTypes(original.networkInputTypes)
      .backpropType(original.backpropType)
      .tBPTTForwardLength(original.tbpttFwdLength)
      .tBPTTBackwardLength(original.tbpttBackLength);
  for (const Entry& e : entries_) {
    if (e.layer) {
      std::shared_ptr<Layer> layer = e.layer->clone();
      layer->frozen = layer->frozen || frozen.contains(e.name);
      if (!layer->frozen && fineTune_) fineTune_->applyTo(*layer);
      graph.addLayer(e.name, *layer, e.inputs);
    } else {
      graph.addVertex(e.name, *e.vertex, e.inputs);
    }
  }
  graph.setOutputs(outputs_);
  ComputationGraphConfiguration conf;
  try {
    conf = graph.build();
  } catch (const ConfigError& e) {
    throw ConfigError(std::string("TransferLearning::GraphBuilder::build: ") + e.what());
  }

  // The layers whose parameters and state carry over: original ones no edit re-initialised.
  std::vector<std::string> carried;
  for (const auto& v : conf.vertices) {
    if (!v.layer) continue;
    const auto it = byName.find(v.name);
    const Entry* e = it == byName.end() ? nullptr : it->second;
    const int at = e != nullptr && e->original ? original.vertexIndex(v.name) : -1;
    const bool carries = at >= 0 && !e->reinitialised &&
                         original.vertices[static_cast<size_t>(at)].layer &&
                         sameShapes(*original.vertices[static_cast<size_t>(at)].layer, *v.layer);
    if (carries) {
      carried.push_back(v.name);
    } else if (v.layer->frozen && (v.layer->numParams() > 0 || v.layer->stateSize() > 0)) {
      throw ConfigError(fmt::format(
          "TransferLearning::GraphBuilder::build: {} is frozen, but its parameters would be "
          "initialised afresh ({}): a frozen layer keeps trained parameters",
          describeVertex(v.name, v.layer.get(), nullptr),
          e != nullptr && e->original ? "nOutReplace edits it or its input"
                                      : "it is added by addLayer"));
    }
  }

  const auto from = graphOffsets(original), to = graphOffsets(conf);
  ComputationGraph net(std::move(conf), original_->params().device(), original_->numThreads());
  net.init();
  const ComputationGraphConfiguration& built = net.getConfiguration();
  for (const std::string& name : carried) {
    const Layer& layer = *built.vertices[static_cast<size_t>(built.vertexIndex(name))].layer;
    copyRange(net.params(), to.at(name).first, original_->params(), from.at(name).first,
              layer.numParams());
    copyRange(net.layerState(), to.at(name).second, original_->layerState(), from.at(name).second,
              layer.stateSize());
  }
  return net;
}

}  // namespace dl4cpp

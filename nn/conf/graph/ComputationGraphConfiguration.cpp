#include "nn/conf/graph/ComputationGraphConfiguration.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <numeric>
#include <queue>
#include <set>
#include <utility>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/LayerInputs.h"
#include "nn/conf/graph/MergeVertex.h"
#include "nn/conf/layers/LossOutput.h"

namespace dl4cpp {

GraphBuilder NeuralNetConfiguration::Builder::graphBuilder() const {
  return GraphBuilder(seed_, defaults_);
}

GraphBuilder::GraphBuilder(uint64_t seed, LayerDefaults defaults)
    : seed_(seed), defaults_(std::move(defaults)) {}

GraphBuilder& GraphBuilder::addInputs(const std::vector<std::string>& names) {
  inputs_.insert(inputs_.end(), names.begin(), names.end());
  return *this;
}

GraphBuilder& GraphBuilder::setInputTypes(const std::vector<InputType>& types) {
  inputTypes_ = types;
  return *this;
}

GraphBuilder& GraphBuilder::addLayer(const std::string& name, const Layer& layer,
                                     const std::vector<std::string>& inputs) {
  if (inputs.size() > 1) {
    // DL4J's rule: a layer reads several inputs concatenated.
    entries_.push_back({name + "-merge", nullptr, MergeVertex().clone(), inputs});
    entries_.push_back({name, layer.clone(), nullptr, {name + "-merge"}});
  } else {
    entries_.push_back({name, layer.clone(), nullptr, inputs});
  }
  return *this;
}

GraphBuilder& GraphBuilder::addVertex(const std::string& name, const GraphVertex& vertex,
                                      const std::vector<std::string>& inputs) {
  entries_.push_back({name, nullptr, vertex.clone(), inputs});
  return *this;
}

GraphBuilder& GraphBuilder::setOutputs(const std::vector<std::string>& names) {
  outputs_ = names;
  return *this;
}

namespace {

std::string describe(const std::string& name, const Layer* layer, const GraphVertex* vertex) {
  return fmt::format("vertex \"{}\" ({})", name,
                     layer    ? layer->typeName()
                     : vertex ? vertex->typeName()
                              : "network input");
}

// "N" or "2N" or "N/2" or "3N/2": examples per minibatch of N.
std::string describeScale(const std::pair<int64_t, int64_t>& scale) {
  const std::string n = scale.first == 1 ? "N" : fmt::format("{}N", scale.first);
  return scale.second == 1 ? n : fmt::format("{}/{}", n, scale.second);
}

[[noreturn]] void fail(const std::string& problem) {
  throw ConfigError("ComputationGraphConfiguration: " + problem);
}

}  // namespace

ComputationGraphConfiguration GraphBuilder::build() const {
  const size_t numInputs = inputs_.size(), numEntries = entries_.size();
  if (numInputs == 0) fail("the graph has no inputs: call addInputs(...)");
  if (numEntries == 0) fail("the graph has no layers or vertices");
  if (numInputs + numEntries > static_cast<size_t>(limits::kMaxGraphVertices))
    fail(fmt::format("{} inputs and vertices, more than the {} a graph may have",
                     numInputs + numEntries, limits::kMaxGraphVertices));
  if (outputs_.empty()) fail("the graph has no outputs: call setOutputs(...)");

  // Names: ids 0 .. numInputs - 1 are the network's inputs, then the entries in the order added.
  std::map<std::string, size_t> ids;
  auto addName = [&](const std::string& name, size_t id, const std::string& what) {
    if (name.empty()) fail(what + " has an empty name");
    if (!ids.emplace(name, id).second)
      fail(fmt::format("duplicate name \"{}\": {} and an earlier input or vertex share it", name,
                       what));
  };
  for (size_t i = 0; i < numInputs; ++i) addName(inputs_[i], i, fmt::format("network input {}", i));
  for (size_t e = 0; e < numEntries; ++e) {
    const Entry& entry = entries_[e];
    addName(entry.name, numInputs + e, describe(entry.name, entry.layer.get(), entry.vertex.get()));
  }

  // Edges, each input checked.
  const size_t total = numInputs + numEntries;
  std::vector<std::vector<size_t>> inputIds(total), consumers(total);
  for (size_t e = 0; e < numEntries; ++e) {
    const Entry& entry = entries_[e];
    const std::string where = describe(entry.name, entry.layer.get(), entry.vertex.get());
    const size_t count = entry.inputs.size();
    const int minInputs = entry.layer ? 1 : entry.vertex->minInputs();
    const int maxInputs = entry.layer ? 1 : entry.vertex->maxInputs();
    if (count < static_cast<size_t>(minInputs) || count > static_cast<size_t>(maxInputs))
      fail(minInputs == maxInputs ? fmt::format("{} takes {} input{}, got {}", where, minInputs,
                                                minInputs == 1 ? "" : "s", count)
                                  : fmt::format("{} takes {} to {} inputs, got {}", where,
                                                minInputs, maxInputs, count));
    for (const std::string& input : entry.inputs) {
      const auto it = ids.find(input);
      if (it == ids.end())
        fail(fmt::format("{}: its input \"{}\" names no vertex or network input", where, input));
      inputIds[numInputs + e].push_back(it->second);
      consumers[it->second].push_back(numInputs + e);
    }
  }
  std::vector<bool> isOutput(total, false);
  for (const std::string& output : outputs_) {
    const auto it = ids.find(output);
    if (it == ids.end()) fail(fmt::format("output \"{}\" names no vertex", output));
    if (it->second < numInputs)
      fail(fmt::format("output \"{}\" is a network input; outputs must be vertices", output));
    if (isOutput[it->second]) fail(fmt::format("output \"{}\" is given twice", output));
    isOutput[it->second] = true;
  }
  for (size_t id = 0; id < total; ++id)
    if (consumers[id].empty() && !isOutput[id])
      fail(id < numInputs ? fmt::format("network input \"{}\" is read by no vertex", inputs_[id])
                          : fmt::format("{} is read by no vertex and is not an output (setOutputs)",
                                        describe(entries_[id - numInputs].name,
                                                 entries_[id - numInputs].layer.get(),
                                                 entries_[id - numInputs].vertex.get())));

  // Topological order (Kahn's), ties broken by the order vertices were added, so the order and
  // with it the parameter layout follow the code that built the graph.
  std::vector<size_t> pending(total, 0);
  std::priority_queue<size_t, std::vector<size_t>, std::greater<>> ready;
  for (size_t id = 0; id < total; ++id) pending[id] = inputIds[id].size();
  for (size_t i = 0; i < numInputs; ++i)
    for (size_t c : consumers[i]) --pending[c];
  for (size_t id = numInputs; id < total; ++id)
    if (pending[id] == 0 && inputIds[id].size() > 0) ready.push(id);
  std::vector<size_t> order;
  order.reserve(numEntries);
  std::vector<bool> done(total, false);
  for (size_t i = 0; i < numInputs; ++i) done[i] = true;
  while (!ready.empty()) {
    const size_t id = ready.top();
    ready.pop();
    if (done[id]) continue;
    done[id] = true;
    order.push_back(id);
    for (size_t c : consumers[id])
      if (--pending[c] == 0) ready.push(c);
  }
  if (order.size() != numEntries) {
    // A vertex left over is on a cycle or below one; walking inputs that are left over from it
    // must come back to a vertex already seen, which is on the cycle.
    size_t id = numInputs;
    while (done[id]) ++id;
    std::vector<size_t> path;
    std::vector<int> seenAt(total, -1);
    while (seenAt[id] < 0) {
      seenAt[id] = static_cast<int>(path.size());
      path.push_back(id);
      for (size_t in : inputIds[id])
        if (!done[in]) {
          id = in;
          break;
        }
    }
    // Each vertex on the path reads the next one.
    std::string cycle;
    for (size_t k = static_cast<size_t>(seenAt[id]); k < path.size(); ++k)
      cycle += "\"" + entries_[path[k] - numInputs].name + "\" <- ";
    const Entry& first = entries_[id - numInputs];
    fail(fmt::format("{} is on a cycle ({}\"{}\", each reading the next): a graph must be acyclic",
                     describe(first.name, first.layer.get(), first.vertex.get()), cycle,
                     first.name));
  }

  // Input types: given, or inferred from a layer with nIn that reads the input.
  std::vector<InputType> types(total);
  if (!inputTypes_.empty() && inputTypes_.size() != numInputs)
    fail(fmt::format("setInputTypes gives {} types for {} inputs", inputTypes_.size(), numInputs));
  for (size_t i = 0; i < numInputs; ++i) {
    if (!inputTypes_.empty()) {
      types[i] = inputTypes_[i];
    } else {
      std::optional<int64_t> nIn;
      bool sequences = false;  // read by a recurrent layer: sequences of nIn features
      for (size_t c : consumers[i]) {
        const Entry& entry = entries_[c - numInputs];
        if (!entry.layer || entry.layer->consumesImages()) continue;
        const std::shared_ptr<Layer> copy = entry.layer->clone();
        if (const auto sizes = copy->nInOut(); sizes && *sizes->nIn > 0) {
          nIn = *sizes->nIn;
          sequences = entry.layer->consumesSequences();
        }
      }
      if (!nIn)
        fail(fmt::format(
            "network input \"{}\" has no type: call setInputTypes(...) (for images, "
            "InputType::convolutional(h, w, c) or convolutionalFlat(h, w, c)), or give the "
            "layers that read it nIn",
            inputs_[i]));
      types[i] = sequences ? InputType::recurrent(*nIn) : InputType::feedForward(*nIn);
    }
    checkInputTypeSizes(types[i], fmt::format("network input \"{}\"", inputs_[i]));
    if (types[i].timeDistributed)
      fail(fmt::format("network input \"{}\" is {}; a graph's inputs are rows, images or sequences",
                       inputs_[i], types[i].toString()));
  }

  ComputationGraphConfiguration conf;
  conf.seed = seed_;
  conf.defaults = defaults_;
  conf.networkInputs = inputs_;
  conf.networkInputTypes.assign(types.begin(), types.begin() + static_cast<ptrdiff_t>(numInputs));
  conf.networkOutputs = outputs_;
  checkTruncatedBpttLengths(tbpttFwdLength_, tbpttBackLength_);
  conf.backpropType = backpropType_;
  conf.tbpttFwdLength = tbpttFwdLength_;
  conf.tbpttBackLength = tbpttBackLength_;
  int layerIndex = 0;
  int64_t totalParams = 0;
  // Each vertex's examples per example of the minibatch, multiplier / divisor.
  std::vector<std::pair<int64_t, int64_t>> scales(total, {1, 1});
  for (size_t id : order) {
    const Entry& entry = entries_[id - numInputs];
    ComputationGraphConfiguration::Vertex v;
    v.name = entry.name;
    v.inputs = entry.inputs;
    for (size_t in : inputIds[id]) v.inputTypes.push_back(types[in]);
    const std::string where = describe(entry.name, entry.layer.get(), entry.vertex.get());
    const std::pair<int64_t, int64_t> scale = scales[inputIds[id].front()];
    for (size_t j = 1; j < inputIds[id].size(); ++j)
      if (scales[inputIds[id][j]] != scale)
        fail(fmt::format(
            "{}: its inputs have different numbers of examples: input 0 (\"{}\") has {} and input "
            "{} (\"{}\") has {} (a StackVertex or UnstackVertex is on one path only)",
            where, entry.inputs.front(), describeScale(scale), j, entry.inputs[j],
            describeScale(scales[inputIds[id][j]])));
    scales[id] = scale;
    if (entry.vertex) {
      const GraphVertex::BatchScale by = entry.vertex->batchScale(inputIds[id].size());
      if (by.multiplier < 1 || by.divisor < 1)
        fail(fmt::format("{}: it scales the number of examples by {}/{}; both must be >= 1", where,
                         by.multiplier, by.divisor));
      int64_t m = scale.first * by.multiplier, d = scale.second * by.divisor;
      const int64_t g = std::gcd(m, d);
      m /= g;
      d /= g;
      if (m > limits::kMaxVertexInputs || d > limits::kMaxVertexInputs)
        fail(
            fmt::format("{}: its output has {}/{} times the minibatch's examples; at most {} times "
                        "more or fewer",
                        where, m, d, limits::kMaxVertexInputs));
      scales[id] = {m, d};
    }
    v.batchMultiplier = scales[id].first;
    v.batchDivisor = scales[id].second;
    if (entry.layer) {
      std::shared_ptr<Layer> l = entry.layer->clone();
      // DL4J names a graph's layer after its vertex.
      if (l->name.empty()) l->name = entry.name;
      InputType current = v.inputTypes.front();
      v.preProcessor = preProcessorFor(*l, current, where);
      v.layerInputType = current;
      if (dynamic_cast<const LossOutput*>(l.get()) != nullptr && !consumers[id].empty())
        fail(fmt::format("{} computes a loss, so it must end the graph: it is read by \"{}\"",
                         where, entries_[consumers[id].front() - numInputs].name));
      v.outputType = layerOutputType(current, l->resolve(layerIndex++, current, defaults_));
      totalParams += l->numParams();
      if (totalParams > limits::kMaxParameters)
        fail(fmt::format("{}: the graph has more than {} parameters", where,
                         limits::kMaxParameters));
      v.layer = std::move(l);
    } else {
      for (size_t j = 0; j < v.inputTypes.size(); ++j)
        if (v.inputTypes[j].kind == InputType::Kind::Recurrent && !entry.vertex->takesSequences())
          fail(fmt::format("{} takes no sequences, but its input {} (\"{}\") is {}", where, j,
                           entry.inputs[j], v.inputTypes[j].toString()));
      v.outputType = entry.vertex->outputType(entry.name, v.inputTypes);
      // Rows or images per time step go through the vertices that compute per step, all inputs
      // alike, and stay per time step.
      const bool perStep = v.inputTypes.front().timeDistributed;
      for (size_t j = 0; j < v.inputTypes.size(); ++j)
        if (v.inputTypes[j].timeDistributed != perStep ||
            (perStep && (!entry.vertex->takesSequences() ||
                         v.inputTypes[j].length != v.inputTypes.front().length)))
          fail(fmt::format(
              "{}: its input {} (\"{}\") is {}; a vertex takes rows or images per time step only "
              "where it computes per step and all its inputs are per time step of the same "
              "sequences",
              where, j, entry.inputs[j], v.inputTypes[j].toString()));
      if (perStep) v.outputType = InputType::perTimeStep(v.outputType, v.inputTypes.front().length);
      v.vertex = entry.vertex->clone();
    }
    checkInputTypeSizes(v.outputType, where + " output");
    if (v.outputType.flatSize() * v.batchMultiplier / v.batchDivisor > limits::kMaxValuesPerExample)
      fail(fmt::format("{}: its output holds {} values per example of the minibatch, more than {}",
                       where, v.outputType.flatSize() * v.batchMultiplier / v.batchDivisor,
                       limits::kMaxValuesPerExample));
    types[id] = v.outputType;
    if (v.outputType.timeDistributed && std::ranges::find(outputs_, entry.name) != outputs_.end())
      fail(fmt::format(
          "{} is an output but gives one output per time step ({}) as rows, which no labels "
          "match: end with an RnnOutputLayer or RnnLossLayer for an output per time step, or "
          "LastTimeStep (or pooling over time) for one per sequence",
          where, v.outputType.toString()));
    conf.vertices.push_back(std::move(v));
  }
  return conf;
}

int ComputationGraphConfiguration::vertexIndex(const std::string& name) const {
  for (size_t i = 0; i < vertices.size(); ++i)
    if (vertices[i].name == name) return static_cast<int>(i);
  return -1;
}

int64_t ComputationGraphConfiguration::numParams() const {
  int64_t total = 0;
  for (const Vertex& v : vertices)
    if (v.layer) total += v.layer->numParams();
  return total;
}

std::string ComputationGraphConfiguration::summary() const {
  std::string s = fmt::format("{:<20} {:<20} {:<28} {:<24} {:>10}  {}\n", "vertex", "type", "input",
                              "output", "params", "inputs");
  for (size_t i = 0; i < networkInputs.size(); ++i)
    s += fmt::format("{:<20} {:<20} {:<28} {:<24} {:>10}\n", networkInputs[i], "Input", "",
                     networkInputTypes[i].toString(), 0);
  for (const Vertex& v : vertices) {
    std::string inputs;
    for (const std::string& in : v.inputs) inputs += (inputs.empty() ? "" : ", ") + in;
    s += fmt::format("{:<20} {:<20} {:<28} {:<24} {:>10}  {}{}\n", v.name,
                     v.layer ? v.layer->typeName() : v.vertex->typeName(),
                     (v.layer ? v.layerInputType : v.inputTypes.front()).toString(),
                     v.outputType.toString(), v.layer ? v.layer->numParams() : 0, inputs,
                     v.layer && v.layer->frozen ? " (frozen)" : "");
  }
  std::string outputs;
  for (const std::string& o : networkOutputs) outputs += (outputs.empty() ? "" : ", ") + o;
  return s + fmt::format("outputs: {}\ntotal parameters: {}\n", outputs, numParams());
}

}  // namespace dl4cpp

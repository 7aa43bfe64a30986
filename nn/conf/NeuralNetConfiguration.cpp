#include "nn/conf/NeuralNetConfiguration.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/conf/LayerInputs.h"
#include "nn/conf/layers/LossOutput.h"

namespace dl4cpp {

NeuralNetConfiguration::ListBuilder NeuralNetConfiguration::Builder::list() const {
  return ListBuilder(seed_, defaults_);
}

NeuralNetConfiguration::ListBuilder& NeuralNetConfiguration::ListBuilder::layer(const Layer& l) {
  layers_.push_back(l.clone());
  return *this;
}

NeuralNetConfiguration::ListBuilder& NeuralNetConfiguration::ListBuilder::layer(int index,
                                                                                const Layer& l) {
  if (index < 0) throw ConfigError("layer(" + std::to_string(index) + ", ...): negative index");
  if (static_cast<size_t>(index) >= layers_.size()) layers_.resize(static_cast<size_t>(index) + 1);
  layers_[static_cast<size_t>(index)] = l.clone();
  return *this;
}

NeuralNetConfiguration::ListBuilder& NeuralNetConfiguration::ListBuilder::inputPreProcessor(
    int layer, const RnnToCnnPreProcessor& preProcessor) {
  if (layer < 0)
    throw ConfigError("inputPreProcessor(" + std::to_string(layer) + ", ...): negative index");
  std::erase_if(rnnToCnn_, [&](const auto& entry) { return entry.first == layer; });
  rnnToCnn_.emplace_back(layer, preProcessor);
  return *this;
}

MultiLayerConfiguration NeuralNetConfiguration::ListBuilder::build() const {
  if (layers_.empty()) throw ConfigError("list(): a network needs at least one layer");
  for (size_t i = 0; i < layers_.size(); ++i)
    if (!layers_[i])
      throw ConfigError("layer " + std::to_string(i) +
                        " was never set (indices "
                        "given to layer(index, ...) must be contiguous from 0)");
  MultiLayerConfiguration conf;
  conf.seed = seed_;
  conf.defaults = defaults_;
  checkTruncatedBpttLengths(tbpttFwdLength_, tbpttBackLength_);
  conf.backpropType = backpropType_;
  conf.tbpttFwdLength = tbpttFwdLength_;
  conf.tbpttBackLength = tbpttBackLength_;

  InputType current;
  if (inputType_) {
    current = *inputType_;
  } else {
    // A layer that reads rows and has an nIn (a dense layer, say) says what the input is. A copy:
    // nInOut() hands out writable fields.
    const std::shared_ptr<Layer> first = layers_.front()->clone();
    const auto sizes = first->consumesImages() ? std::nullopt : first->nInOut();
    if (!sizes || *sizes->nIn <= 0)
      throw ConfigError("layer 0 (" + first->typeName() +
                        "): without setInputType(...) "
                        "the first layer must be a dense layer with nIn set; for images call "
                        "setInputType(InputType::convolutionalFlat(h, w, c))");
    current = InputType::feedForward(*sizes->nIn);
  }
  checkInputTypeSizes(current, "the input type");
  if (current.timeDistributed)
    throw ConfigError("the input type " + current.toString() +
                      " is per time step; a network's input is rows, images or sequences");
  for (const auto& [index, images] : rnnToCnn_)
    if (static_cast<size_t>(index) >= layers_.size())
      throw ConfigError(fmt::format("inputPreProcessor({}, ...): the network has {} layers", index,
                                    layers_.size()));
  conf.inputType = current;

  int64_t totalParams = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const int index = static_cast<int>(i);
    std::shared_ptr<Layer> l = layers_[i]->clone();
    const std::string where = "layer " + std::to_string(i) + " (" + l->typeName() + ")";
    const auto asked =
        std::ranges::find_if(rnnToCnn_, [&](const auto& entry) { return entry.first == index; });
    const InputPreProcessor pre = asked != rnnToCnn_.end()
                                      ? rnnToCnn(*l, asked->second, current, where)
                                      : preProcessorFor(*l, current, where);
    conf.preProcessors.push_back(pre);
    conf.layerInputTypes.push_back(current);
    if (l->frozen && i > 0 && !layers_[i - 1]->frozen)
      throw ConfigError(fmt::format(
          "layer {} ({}) is frozen but layer {} ({}) before it is not: frozen layers must be the "
          "first layers of the network (as TransferLearning's setFeatureExtractor freezes them)",
          i, l->typeName(), i - 1, layers_[i - 1]->typeName()));
    const bool endsWithLoss = dynamic_cast<const LossOutput*>(l.get()) != nullptr;
    if (endsWithLoss != (i + 1 == layers_.size()))
      throw ConfigError("layer " + std::to_string(i) + " (" + l->typeName() + "): " +
                        (endsWithLoss
                             ? "a layer with a loss (" + l->typeName() + ") must be the last layer"
                             : std::string("the last layer must compute the loss: an "
                                           "OutputLayer, a LossLayer or another "
                                           "LossOutput layer type")));
    current = layerOutputType(current, l->resolve(index, current, defaults_));
    checkInputTypeSizes(current, fmt::format("layer {} ({}) output", i, l->typeName()));
    // Each layer's count is at most kMaxParameters (resolve() checks): the sum cannot overflow.
    totalParams += l->numParams();
    if (totalParams > limits::kMaxParameters)
      throw ConfigError(
          fmt::format("layers 0 to {}: more than {} parameters", i, limits::kMaxParameters));
    conf.layerOutputTypes.push_back(current);
    conf.layers.push_back(std::move(l));
  }
  if (current.timeDistributed)
    throw ConfigError(fmt::format(
        "layer {} ({}) gives one output per time step ({}) as rows, which no labels match: end "
        "with an RnnOutputLayer or RnnLossLayer for an output per time step, or wrap the last "
        "recurrent layer in LastTimeStep (or pool over time) for one per sequence",
        layers_.size() - 1, layers_.back()->typeName(), current.toString()));
  conf.outputType = current;
  return conf;
}

std::string MultiLayerConfiguration::summary() const {
  std::string s =
      fmt::format("{:<4} {:<18} {:<28} {:<24} {:>10}\n", "#", "layer", "input", "output", "params");
  int64_t total = 0;
  for (size_t i = 0; i < layers.size(); ++i) {
    s += fmt::format("{:<4} {:<18} {:<28} {:<24} {:>10}{}\n", i, layers[i]->typeName(),
                     layerInputTypes[i].toString(), layerOutputTypes[i].toString(),
                     layers[i]->numParams(), layers[i]->frozen ? " (frozen)" : "");
    total += layers[i]->numParams();
  }
  return s + fmt::format("total parameters: {}\n", total);
}

}  // namespace dl4cpp

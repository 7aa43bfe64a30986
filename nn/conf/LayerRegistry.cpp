#include "nn/conf/LayerRegistry.h"

#include "nn/conf/layers/ActivationLayer.h"
#include "nn/conf/layers/BatchNormalization.h"
#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/DenseLayer.h"
#include "nn/conf/layers/DropoutLayer.h"
#include "nn/conf/layers/EmbeddingLayer.h"
#include "nn/conf/layers/EmbeddingSequenceLayer.h"
#include "nn/conf/layers/OutputLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"
// Global pooling, local response normalisation, zero padding and the loss layer.
#include <mutex>

#include "nn/conf/layers/Bidirectional.h"
#include "nn/conf/layers/Convolution1DLayer.h"
#include "nn/conf/layers/GlobalPoolingLayer.h"
#include "nn/conf/layers/GravesLSTM.h"
#include "nn/conf/layers/LSTM.h"
#include "nn/conf/layers/LastTimeStep.h"
#include "nn/conf/layers/LocalResponseNormalization.h"
#include "nn/conf/layers/LossLayer.h"
#include "nn/conf/layers/MaskZeroLayer.h"
#include "nn/conf/layers/RnnLossLayer.h"
#include "nn/conf/layers/RnnOutputLayer.h"
#include "nn/conf/layers/SimpleRnn.h"
#include "nn/conf/layers/Subsampling1DLayer.h"
#include "nn/conf/layers/ZeroPaddingLayer.h"

namespace dl4cpp {

LayerRegistry& LayerRegistry::instance() {
  static LayerRegistry* registry = [] {
    auto* r = new LayerRegistry();  // never destroyed: usable from other statics' destructors
    registerBuiltinLayers(*r);
    return r;
  }();
  return *registry;
}

void LayerRegistry::add(const std::string& typeName, Factory factory) {
  if (typeName.empty()) throw ConfigError("LayerRegistry::add: the type name is empty");
  if (!factory) throw ConfigError("LayerRegistry::add: no factory given for " + typeName);
  std::unique_lock lock(mutex_);
  if (!factories_.emplace(typeName, std::move(factory)).second)
    throw ConfigError("LayerRegistry::add: a layer type named " + typeName +
                      " is already registered");
}

bool LayerRegistry::contains(const std::string& typeName) const {
  std::shared_lock lock(mutex_);
  return factories_.count(typeName) != 0;
}

std::shared_ptr<Layer> LayerRegistry::create(const std::string& typeName) const {
  Factory factory;
  {
    std::shared_lock lock(mutex_);
    const auto it = factories_.find(typeName);
    if (it == factories_.end()) return nullptr;
    factory = it->second;
  }
  return factory();
}

std::vector<std::string> LayerRegistry::typeNames() const {
  std::shared_lock lock(mutex_);
  std::vector<std::string> names;
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

void registerBuiltinLayers(LayerRegistry& registry) {
  registry.add<ConvolutionLayer>();
  registry.add<SubsamplingLayer>();
  registry.add<DenseLayer>();
  registry.add<OutputLayer>();
  registry.add<BatchNormalization>();
  registry.add<DropoutLayer>();
  registry.add<GlobalPoolingLayer>();
  registry.add<LocalResponseNormalization>();
  registry.add<ZeroPaddingLayer>();
  registry.add<LossLayer>();
  registry.add<ActivationLayer>();
  registry.add<LSTM>();
  registry.add<SimpleRnn>();
  registry.add<RnnOutputLayer>();
  registry.add<EmbeddingLayer>();
  registry.add<EmbeddingSequenceLayer>();
  registry.add<RnnLossLayer>();
  registry.add<GravesLSTM>();
  registry.add<LastTimeStep>();
  registry.add<Bidirectional>();
  registry.add<MaskZeroLayer>();
  registry.add<Convolution1DLayer>();
  registry.add<Subsampling1DLayer>();
}

}  // namespace dl4cpp

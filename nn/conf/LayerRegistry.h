#pragma once
// The registry of layer types: the one list that maps a layer's typeName() to a factory for its
// configuration. Reading a configuration (JSON, model files, checkpoints) creates each layer
// through it; everything else a type needs (fields, parameters, state, runtime) the layer object
// itself describes (nn/conf/layers/Layer.h).
//
// The built-in types are added by registerBuiltinLayers(), called once when the registry is first
// used: no static registrars, so what is registered never depends on link order. User code adds
// its own types before reading configurations that use them:
//   dl4cpp::LayerRegistry::instance().add<MyLayer>();
#include <functional>
#include <map>
#include <memory>
#include <shared_mutex>
#include <string>
#include <vector>

#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

class LayerRegistry {
 public:
  using Factory = std::function<std::shared_ptr<Layer>()>;

  // The process's registry, with the built-in layers registered.
  static LayerRegistry& instance();

  LayerRegistry() = default;
  LayerRegistry(const LayerRegistry&) = delete;
  LayerRegistry& operator=(const LayerRegistry&) = delete;

  // Registers `factory` under `typeName`, which must equal the typeName() of what it creates.
  // ConfigError when the name is empty or already registered.
  void add(const std::string& typeName, Factory factory);
  // Registers the default-constructible layer type L under L().typeName().
  template <typename L>
  void add() {
    add(L().typeName(), [] { return std::make_shared<L>(); });
  }

  bool contains(const std::string& typeName) const;
  // A default-constructed layer of the type, or nullptr when no type has that name.
  std::shared_ptr<Layer> create(const std::string& typeName) const;
  // Every registered name, sorted.
  std::vector<std::string> typeNames() const;

 private:
  mutable std::shared_mutex mutex_;
  std::map<std::string, Factory> factories_;
};

// Adds dl4cpp's own layer types to `registry`.
void registerBuiltinLayers(LayerRegistry& registry);

}  // namespace dl4cpp

#pragma once
// A layer inside a layer's JSON object: what wrapper layers (Bidirectional, LastTimeStep,
// MaskZeroLayer) write and read for the layer they wrap, from their writeFields / readFields.
// The nested layer is a complete layer object (type, common fields, its own fields), read through
// the LayerRegistry like a top-level one. Private to the library; defined in
// ConfigurationJson.cpp, whose writer and reader are the only ones that hold nested objects
// (ConfigError with any other).
#include <memory>
#include <string_view>

#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

void writeNestedLayer(LayerFieldWriter& out, std::string_view key, const Layer& layer);
std::shared_ptr<Layer> readNestedLayer(const LayerFieldReader& in, std::string_view key);

}  // namespace dl4cpp

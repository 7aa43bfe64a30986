#include <dl4cpp/nn/conf/layers/DenseLayer.h>
#include <dl4cpp/nn/layers/DenseLayer.h>

namespace dl4cpp {

std::unique_ptr<layers::RuntimeLayer> DenseLayer::instantiate() const {
  return std::make_unique<layers::DenseLayer>(*this);
}

}  // namespace dl4cpp

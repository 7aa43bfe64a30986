#pragma once
// What DL4J's recurrent layers share (its BaseRecurrentLayer): nIn and nOut, sequences in and out.
// A recurrent layer takes InputType::recurrent(nIn[, length]), activations (N, nIn, T), and
// delivers InputType::recurrent(nOut, length), (N, nOut, T). Padded steps (the DataSet's features
// mask, which the network hands to every layer) give 0 outputs and pass no gradient.
#include "nn/conf/layers/Layer.h"

namespace dl4cpp {

class BaseRecurrentLayer : public Layer {
 public:
  int64_t nIn = 0;   // 0: inferred from the input type
  int64_t nOut = 0;  // required

  bool consumesImages() const override { return false; }
  bool consumesSequences() const override { return true; }
  InputType resolve(int index, const InputType& input, const LayerDefaults& defaults) override;
  void writeFields(LayerFieldWriter& out) const override;
  void readFields(const LayerFieldReader& in) override;
  std::optional<SizeFields> nInOut() override { return SizeFields{&nIn, &nOut}; }
  void clearInferredSizes() override { nIn = 0; }

 protected:
  // The number of gate blocks of the weights (LSTM 4, SimpleRnn 1), for the size checks.
  virtual int gateBlocks() const = 0;
};

template <typename Derived, typename Conf>
class BaseRecurrentLayerBuilder : public LayerBuilder<Derived, Conf> {
 public:
  Derived& nIn(int64_t n) {
    return this->set([&] { this->conf_.nIn = n; });
  }
  Derived& nOut(int64_t n) {
    return this->set([&] { this->conf_.nOut = n; });
  }
};

}  // namespace dl4cpp

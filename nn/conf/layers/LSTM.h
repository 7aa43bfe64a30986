#pragma once
#include "nn/conf/layers/AbstractLSTM.h"

namespace dl4cpp {

// DL4J's LSTM (no peephole connections): sequences (N, nIn, T) to (N, nOut, T).
//   z_t = x_t W + h_{t-1} RW + b
//   a = activation(z[0:H])   f = gate(z[H:2H])   o = gate(z[2H:3H])   i = gate(z[3H:4H])
//   c_t = f * c_{t-1} + i * a        h_t = o * activation(c_t)        (H = nOut)
// Parameters in DL4J's layout and order (LSTMParamInitializer), so DL4J's values load as they are:
//   W  (nIn, 4 nOut)   input weights,     column blocks [a | f | o | i]
//   RW (nOut, 4 nOut)  recurrent weights, the same blocks
//   b  (4 nOut)        biases, the same blocks; f's block starts at forgetGateBiasInit, the
//                      others at biasInit
// The state starts at 0 for every sequence, and at a padded step (features mask 0) h and c are 0
// (DL4J's LSTMHelpers), so the next real step starts afresh. Fans, defaults and the accepted
// activations: AbstractLSTM.h.
class LSTM : public AbstractLSTM {
 public:
  class Builder;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<LSTM>(*this); }
  std::string typeName() const override { return "LSTM"; }

 protected:
  int64_t peepholeColumns() const override { return 0; }
};

class LSTM::Builder : public AbstractLSTMBuilder<Builder, LSTM> {};

}  // namespace dl4cpp

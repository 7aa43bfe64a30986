#pragma once
#include "nn/conf/layers/AbstractLSTM.h"

namespace dl4cpp {

// DL4J's GravesLSTM: the LSTM with peephole connections (Graves, "Supervised Sequence Labelling
// with Recurrent Neural Networks", 2012), sequences (N, nIn, T) to (N, nOut, T). As LSTM (LSTM.h)
// with DL4J's blocks [a | f | o | i], plus one peephole weight per unit and gate, from the cell
// state into the gate (DL4J's LSTMHelpers):
//   z_t = x_t W + h_{t-1} RW[:, 0:4H] + b
//   f = gate(z[H:2H] + c_{t-1} * wFF)     i = gate(z[3H:4H] + c_{t-1} * wGG)
//   a = activation(z[0:H])                c_t = f * c_{t-1} + i * a
//   o = gate(z[2H:3H] + c_t * wOO)        h_t = o * activation(c_t)          (H = nOut)
// Parameters in DL4J's layout (GravesLSTMParamInitializer), so DL4J's values load as they are:
//   W  (nIn, 4 nOut)        input weights, column blocks [a | f | o | i]
//   RW (nOut, 4 nOut + 3)   recurrent weights, the same blocks, then the peephole weights as its
//                           last three columns: wFF (forget), wOO (output), wGG (input gate)
//   b  (4 nOut)             biases; f's block starts at forgetGateBiasInit, the others at biasInit
// Defaults, fans, masks and the accepted activations are LSTM's (AbstractLSTM.h).
class GravesLSTM : public AbstractLSTM {
 public:
  class Builder;

  std::shared_ptr<Layer> clone() const override { return std::make_shared<GravesLSTM>(*this); }
  std::string typeName() const override { return "GravesLSTM"; }

 protected:
  int64_t peepholeColumns() const override { return 3; }
};

class GravesLSTM::Builder : public AbstractLSTMBuilder<Builder, GravesLSTM> {};

}  // namespace dl4cpp

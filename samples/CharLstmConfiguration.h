#pragma once
// The character-level LSTM of samples/parallel_char_lstm.cpp (DL4J's
// GravesLSTMCharModellingExample), shared with the peer benchmark (bench/peers, --network
// charlstm).
#include <dl4cpp/dl4cpp.h>

namespace samples {

// `layers` LSTM layers of `units` and a softmax RnnOutputLayer (MCXENT) over `characters`,
// one-hot input; Adam(5e-3) with element-wise gradient clipping at 1.
inline dl4cpp::MultiLayerConfiguration charLstmConfiguration(int64_t characters, int layers,
                                                             int units, int64_t seed) {
  using namespace dl4cpp;
  auto list = NeuralNetConfiguration::Builder()
                  .seed(seed)
                  .updater(Adam(5e-3))
                  // Clipping keeps an early large step through time from throwing the LSTM off.
                  .gradientNormalization(GradientNormalization::ClipElementWiseAbsoluteValue)
                  .gradientNormalizationThreshold(1.0)
                  .list();
  for (int i = 0; i < layers; ++i) list.layer(LSTM::Builder().nOut(units).build());
  return list
      .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(characters)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::recurrent(characters))
      .build();
}

}  // namespace samples

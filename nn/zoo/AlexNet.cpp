#include "nn/zoo/AlexNet.h"

#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/DenseLayer.h"
#include "nn/conf/layers/LocalResponseNormalization.h"
#include "nn/conf/layers/OutputLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"

namespace dl4cpp {

MultiLayerConfiguration AlexNet::conf() const {
  const auto& [channels, height, width] = inputShape_;
  // The paper initialises some biases to 1 (so that ReLUs start active) and the dense weights
  // with a smaller spread than the convolutions'.
  constexpr double kNonZeroBias = 1;
  const NormalDistribution denseInit(0, 0.005);
  auto conv = [](int64_t k, int64_t s, int64_t nOut, ConvolutionMode mode) {
    return ConvolutionLayer::Builder(k, k).stride(s, s).nOut(nOut).convolutionMode(mode);
  };
  auto maxPool = [](ConvolutionMode mode) {
    return SubsamplingLayer::Builder(PoolingType::MAX, 3, 3, 2, 2).convolutionMode(mode).build();
  };
  return NeuralNetConfiguration::Builder()
      .seed(seed_)
      .weightInit(NormalDistribution(0, 0.01))
      .activation(Activation::RELU)
      .updater(updater_)
      .biasUpdater(Nesterovs(2e-2, 0.9))
      .convolutionMode(ConvolutionMode::Same)
      .gradientNormalization(GradientNormalization::RenormalizeL2PerLayer)
      .l2(5e-4)
      .list()
      .layer(conv(11, 4, 96, ConvolutionMode::Truncate).name("cnn1").build())
      .layer(LocalResponseNormalization::Builder().build())
      // DL4J sets padding 1 here, which its Same mode ignores: Same pads by itself.
      .layer(maxPool(ConvolutionMode::Same))
      .layer(conv(5, 1, 256, ConvolutionMode::Truncate)
                 .padding(2, 2)
                 .biasInit(kNonZeroBias)
                 .name("cnn2")
                 .build())
      .layer(maxPool(ConvolutionMode::Truncate))
      .layer(LocalResponseNormalization::Builder().build())
      .layer(conv(3, 1, 384, ConvolutionMode::Same).name("cnn3").build())
      .layer(conv(3, 1, 384, ConvolutionMode::Same).biasInit(kNonZeroBias).name("cnn4").build())
      .layer(conv(3, 1, 256, ConvolutionMode::Same).biasInit(kNonZeroBias).name("cnn5").build())
      .layer(maxPool(ConvolutionMode::Truncate))
      .layer(DenseLayer::Builder()
                 .nOut(4096)
                 .weightInit(denseInit)
                 .biasInit(kNonZeroBias)
                 .name("ffn1")
                 .build())
      .layer(DenseLayer::Builder()
                 .nOut(4096)
                 .weightInit(denseInit)
                 .biasInit(kNonZeroBias)
                 .dropOut(0.5)
                 .name("ffn2")
                 .build())
      .layer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                 .nOut(numClasses_)
                 .activation(Activation::SOFTMAX)
                 .weightInit(denseInit)
                 .biasInit(0.1)
                 .name("output")
                 .build())
      .setInputType(InputType::convolutional(height, width, channels))
      .build();
}

MultiLayerNetwork AlexNet::init() const {
  MultiLayerNetwork net(conf());
  net.init();
  return net;
}

}  // namespace dl4cpp

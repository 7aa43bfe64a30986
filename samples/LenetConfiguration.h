#pragma once
// The LeNet of DL4J's LenetMnistExample, shared by the samples, the benchmarks and the tests that
// train on real MNIST.
#include <dl4cpp/dl4cpp.h>

namespace samples {

// The LeNet configuration of DL4J's examples (seed 123, l2 5e-4, XAVIER, Nesterovs(0.01, 0.9)),
// before build() (tests inspect the builder).
inline dl4cpp::NeuralNetConfiguration::ListBuilder lenetListBuilder() {
  using namespace dl4cpp;
  return NeuralNetConfiguration::Builder()
      .seed(123)
      .l2(0.0005)
      .weightInit(WeightInit::XAVIER)
      .updater(Nesterovs(0.01, 0.9))
      .list()
      .layer(ConvolutionLayer::Builder(5, 5)
                 .nIn(1)
                 .stride(1, 1)
                 .nOut(20)
                 .activation(Activation::IDENTITY)
                 .build())
      .layer(SubsamplingLayer::Builder(PoolingType::MAX).kernelSize(2, 2).stride(2, 2).build())
      .layer(ConvolutionLayer::Builder(5, 5)
                 .stride(1, 1)
                 .nOut(50)
                 .activation(Activation::IDENTITY)
                 .build())
      .layer(SubsamplingLayer::Builder(PoolingType::MAX).kernelSize(2, 2).stride(2, 2).build())
      .layer(DenseLayer::Builder().activation(Activation::RELU).nOut(500).build())
      .layer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                 .nOut(10)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::convolutionalFlat(28, 28, 1));
}

inline dl4cpp::MultiLayerConfiguration lenetConfiguration() { return lenetListBuilder().build(); }

}  // namespace samples

#include "nn/zoo/Darknet19.h"

#include <string>

#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/layers/ActivationLayer.h"
#include "nn/conf/layers/BatchNormalization.h"
#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/GlobalPoolingLayer.h"
#include "nn/conf/layers/LossLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"

namespace dl4cpp {

namespace {

// DL4J's DarknetHelper.addLayers: convolution_n (k x k, no bias), batchnormalization_n,
// activation_n (leaky ReLU 0.1), then maxpooling2d_n (2x2/2) when `pool`. Returns the last name.
std::string darknetLayers(GraphBuilder& b, int n, const std::string& input, int64_t k, int64_t nOut,
                          bool pool) {
  const std::string id = std::to_string(n);
  b.addLayer("convolution2d_" + id,
             ConvolutionLayer::Builder(k, k)
                 .nOut(nOut)
                 .hasBias(false)
                 .weightInit(WeightInit::XAVIER)
                 .convolutionMode(ConvolutionMode::Same)
                 .activation(Activation::IDENTITY)
                 .build(),
             input);
  b.addLayer("batchnormalization_" + id, BatchNormalization::Builder().build(),
             "convolution2d_" + id);
  b.addLayer("activation_" + id,
             ActivationLayer::Builder(Activation::LEAKYRELU).leakyReluAlpha(0.1).build(),
             "batchnormalization_" + id);
  if (!pool) return "activation_" + id;
  b.addLayer("maxpooling2d_" + id,
             SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2)
                 .convolutionMode(ConvolutionMode::Same)
                 .build(),
             "activation_" + id);
  return "maxpooling2d_" + id;
}

}  // namespace

ComputationGraphConfiguration Darknet19::conf() const {
  const auto& [channels, height, width] = inputShape_;
  auto b = NeuralNetConfiguration::Builder()
               .seed(seed_)
               .updater(updater_)
               .weightInit(WeightInit::RELU)
               .l2(1e-5)
               .activation(Activation::IDENTITY)
               .graphBuilder();
  b.addInputs("input").setInputTypes(InputType::convolutional(height, width, channels));
  // {kernel, channels, max pooling after}, layers 1 to 18.
  struct Spec {
    int64_t k, nOut;
    bool pool;
  };
  constexpr Spec kLayers[] = {
      {3, 32, true},    {3, 64, true},                                                       //
      {3, 128, false},  {1, 64, false},  {3, 128, true},                                     //
      {3, 256, false},  {1, 128, false}, {3, 256, true},                                     //
      {3, 512, false},  {1, 256, false}, {3, 512, false},  {1, 256, false}, {3, 512, true},  //
      {3, 1024, false}, {1, 512, false}, {3, 1024, false}, {1, 512, false}, {3, 1024, false}};
  std::string x = "input";
  int n = 0;
  for (const Spec& s : kLayers) x = darknetLayers(b, ++n, x, s.k, s.nOut, s.pool);
  b.addLayer("convolution2d_19",
             ConvolutionLayer::Builder(1, 1)
                 .nOut(numClasses_)
                 .convolutionMode(ConvolutionMode::Same)
                 .activation(Activation::IDENTITY)
                 .build(),
             x);
  b.addLayer("globalpooling", GlobalPoolingLayer::Builder(PoolingType::AVG).build(),
             "convolution2d_19");
  // DL4J's softmax ActivationLayer and LossLayer as one: the loss layer applies the softmax (a
  // LossLayer computes its loss from the probabilities of its own activation).
  b.addLayer("loss",
             LossLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                 .activation(Activation::SOFTMAX)
                 .build(),
             "globalpooling");
  b.setOutputs("loss");
  return b.build();
}

ComputationGraph Darknet19::init() const {
  ComputationGraph net(conf());
  net.init();
  return net;
}

}  // namespace dl4cpp

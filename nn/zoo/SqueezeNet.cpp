#include "nn/zoo/SqueezeNet.h"

#include <string>

#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/graph/MergeVertex.h"
#include "nn/conf/layers/ActivationLayer.h"
#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/DropoutLayer.h"
#include "nn/conf/layers/GlobalPoolingLayer.h"
#include "nn/conf/layers/LossLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"

namespace dl4cpp {

namespace {

// A k x k convolution (Same mode for the 3x3 expand, so that both expand outputs keep the squeeze
// output's size and can be concatenated) followed by ReLU; returns the ReLU's name.
std::string convRelu(GraphBuilder& b, const std::string& name, const std::string& input, int64_t k,
                     int64_t nOut) {
  b.addLayer(name,
             ConvolutionLayer::Builder(k, k)
                 .nOut(nOut)
                 .convolutionMode(k == 1 ? ConvolutionMode::Truncate : ConvolutionMode::Same)
                 .build(),
             input);
  b.addLayer(name + "_relu", ActivationLayer::Builder(Activation::RELU).build(), name);
  return name + "_relu";
}

// A fire module: squeeze 1x1, then expand 1x1 and 3x3 concatenated along the channels.
std::string fireModule(GraphBuilder& b, int id, const std::string& input, int64_t squeeze,
                       int64_t expand) {
  std::string prefix = "fire" + std::to_string(id);
  const std::string s = convRelu(b, prefix + "_sq1x1", input, 1, squeeze);
  const std::string e1 = convRelu(b, prefix + "_exp1x1", s, 1, expand);
  const std::string e3 = convRelu(b, prefix + "_exp3x3", s, 3, expand);
  b.addVertex(prefix, MergeVertex(), e1, e3);
  return prefix;
}

}  // namespace

ComputationGraphConfiguration SqueezeNet::conf() const {
  const auto& [channels, height, width] = inputShape_;
  auto b = NeuralNetConfiguration::Builder()
               .seed(seed_)
               .updater(updater_)
               .weightInit(WeightInit::RELU)
               .l2(5e-5)
               .activation(Activation::IDENTITY)
               .convolutionMode(ConvolutionMode::Truncate)
               .graphBuilder();
  b.addInputs("input").setInputTypes(InputType::convolutional(height, width, channels));
  b.addLayer("conv1", ConvolutionLayer::Builder(3, 3).stride(2, 2).nOut(64).build(), "input");
  b.addLayer("conv1_relu", ActivationLayer::Builder(Activation::RELU).build(), "conv1");
  auto maxPool = [] { return SubsamplingLayer::Builder(PoolingType::MAX, 3, 3, 2, 2).build(); };
  b.addLayer("pool1", maxPool(), "conv1_relu");
  std::string x = fireModule(b, 2, "pool1", 16, 64);
  x = fireModule(b, 3, x, 16, 64);
  b.addLayer("pool3", maxPool(), x);
  x = fireModule(b, 4, "pool3", 32, 128);
  x = fireModule(b, 5, x, 32, 128);
  b.addLayer("pool5", maxPool(), x);
  x = fireModule(b, 6, "pool5", 48, 192);
  x = fireModule(b, 7, x, 48, 192);
  x = fireModule(b, 8, x, 64, 256);
  x = fireModule(b, 9, x, 64, 256);
  b.addLayer("drop9", DropoutLayer::Builder(0.5).build(), x);
  x = convRelu(b, "conv10", "drop9", 1, numClasses_);
  b.addLayer("avg_pool", GlobalPoolingLayer::Builder(PoolingType::AVG).build(), x);
  // DL4J's softmax ActivationLayer and LossLayer as one: the loss layer applies the softmax (a
  // LossLayer computes its loss from the probabilities of its own activation).
  b.addLayer("loss",
             LossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build(),
             "avg_pool");
  b.setOutputs("loss");
  return b.build();
}

ComputationGraph SqueezeNet::init() const {
  ComputationGraph net(conf());
  net.init();
  return net;
}

}  // namespace dl4cpp

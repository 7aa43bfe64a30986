#include "nn/zoo/ResNet50.h"

#include <string>

#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/graph/ElementWiseVertex.h"
#include "nn/conf/layers/ActivationLayer.h"
#include "nn/conf/layers/BatchNormalization.h"
#include "nn/conf/layers/ConvolutionLayer.h"
#include "nn/conf/layers/GlobalPoolingLayer.h"
#include "nn/conf/layers/OutputLayer.h"
#include "nn/conf/layers/SubsamplingLayer.h"
#include "nn/conf/layers/ZeroPaddingLayer.h"

namespace dl4cpp {

namespace {

// Adds convolution `name` (k x k, stride s, nOut) followed by its batch norm "<name>_bn" (ReLU
// after it when `relu`); returns the batch norm's name.
std::string convBn(GraphBuilder& b, const std::string& name, const std::string& input, int64_t k,
                   int64_t s, int64_t nOut, bool relu) {
  b.addLayer(name,
             ConvolutionLayer::Builder(k, k)
                 .stride(s, s)
                 .nOut(nOut)
                 .convolutionMode(ConvolutionMode::Same)
                 .activation(Activation::IDENTITY)
                 .build(),
             input);
  b.addLayer(name + "_bn",
             BatchNormalization::Builder()
                 .activation(relu ? Activation::RELU : Activation::IDENTITY)
                 .build(),
             name);
  return name + "_bn";
}

// A bottleneck block: 1x1 (stride s), 3x3, 1x1 to 4 * width channels, added to the shortcut
// (a 1x1 projection with batch norm when `project`, else the input itself), then ReLU.
std::string bottleneck(GraphBuilder& b, const std::string& name, const std::string& input,
                       int64_t width, int64_t s, bool project) {
  std::string x = convBn(b, name + "_2a", input, 1, s, width, true);
  x = convBn(b, name + "_2b", x, 3, 1, width, true);
  x = convBn(b, name + "_2c", x, 1, 1, 4 * width, false);
  const std::string shortcut =
      project ? convBn(b, name + "_1", input, 1, s, 4 * width, false) : input;
  b.addVertex(name + "_add", ElementWiseVertex(ElementWiseVertex::Op::Add), x, shortcut);
  b.addLayer(name + "_relu", ActivationLayer::Builder().activation(Activation::RELU).build(),
             name + "_add");
  return name + "_relu";
}

}  // namespace

ComputationGraphConfiguration ResNet50::conf() const {
  const auto& [channels, height, width] = inputShape_;
  auto b = NeuralNetConfiguration::Builder().seed(seed_).updater(updater_).graphBuilder();
  b.addInputs("input").setInputTypes(InputType::convolutional(height, width, channels));
  b.addLayer("stem_pad", ZeroPaddingLayer::Builder(3, 3).build(), "input");
  b.addLayer("conv1",
             ConvolutionLayer::Builder(7, 7)
                 .stride(2, 2)
                 .nOut(64)
                 .convolutionMode(ConvolutionMode::Truncate)
                 .activation(Activation::IDENTITY)
                 .build(),
             "stem_pad");
  b.addLayer("conv1_bn", BatchNormalization::Builder().activation(Activation::RELU).build(),
             "conv1");
  b.addLayer("pool1",
             SubsamplingLayer::Builder(PoolingType::MAX, 3, 3, 2, 2)
                 .convolutionMode(ConvolutionMode::Same)
                 .build(),
             "conv1_bn");
  std::string x = "pool1";
  constexpr int kBlocks[] = {3, 4, 6, 3};
  constexpr int64_t kWidths[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage)
    for (int block = 0; block < kBlocks[stage]; ++block)
      x = bottleneck(b, "res" + std::to_string(stage + 2) + static_cast<char>('a' + block), x,
                     kWidths[stage], block == 0 && stage > 0 ? 2 : 1, block == 0);
  b.addLayer("avg_pool", GlobalPoolingLayer::Builder(PoolingType::AVG).build(), x);
  b.addLayer("fc",
             OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(numClasses_)
                 .activation(Activation::SOFTMAX)
                 .build(),
             "avg_pool");
  b.setOutputs("fc");
  return b.build();
}

ComputationGraph ResNet50::init() const {
  ComputationGraph net(conf());
  net.init();
  return net;
}

}  // namespace dl4cpp

// The size limits of nn/conf/ConfigurationLimits.h, enforced by the list builder for configurations
// built in code (and read from JSON, which builds through it).
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

#include "nn/conf/ConfigurationLimits.h"
#include "nn/core/Error.h"

using namespace dl4cpp;

namespace {

constexpr int64_t kExtent = limits::kMaxExtent;  // 2^20

std::string buildError(const NeuralNetConfiguration::ListBuilder& list) {
  try {
    list.build();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no ConfigError)";
}

// input -> [layers...] -> a 2-way output layer
NeuralNetConfiguration::ListBuilder network(const InputType& input) {
  NeuralNetConfiguration::ListBuilder list = NeuralNetConfiguration::Builder().list();
  list.setInputType(input);
  return list;
}

OutputLayer out() { return OutputLayer::Builder().nOut(2).build(); }

}  // namespace

TEST_SUITE("nn/conf") {
  TEST_CASE("limits: boundedProduct stops at the limit without overflowing") {
    CHECK(limits::boundedProduct({3, 5, 7}, 105) == 105);
    CHECK_FALSE(limits::boundedProduct({3, 5, 7}, 104).has_value());
    CHECK_FALSE(
        limits::boundedProduct({int64_t{1} << 32, int64_t{1} << 32}, INT64_MAX).has_value());
  }

  TEST_CASE(
      "limits: an input type whose values per example would overflow int64 is a ConfigError") {
    // 2^30 x 2^30 x 2^30 overflowed flatSize() and the dense layer's nIn silently.
    const std::string huge = buildError(
        network(InputType::convolutionalFlat(int64_t{1} << 30, int64_t{1} << 30, int64_t{1} << 30))
            .layer(out()));
    CHECK(huge.find("the input type ConvolutionalFlat") != std::string::npos);
    CHECK(huge.find("height must be between 0 and 1048576") != std::string::npos);
    CHECK(buildError(network(InputType::feedForward(limits::kMaxValuesPerExample + 1)).layer(out()))
              .find("size must be between 0") != std::string::npos);
    CHECK(buildError(network(InputType::convolutional(4, -1, 1)).layer(out())).find("width") !=
          std::string::npos);
    // 2^20 x 2^20 x 2^20 = 2^60 values: each extent allowed, the product not.
    CHECK(buildError(network(InputType::convolutional(kExtent, kExtent, kExtent)).layer(out()))
              .find("more than 1099511627776 values per example") != std::string::npos);
  }

  TEST_CASE("limits: kernel, stride, padding, dilation and nOut above 2^20 are ConfigErrors") {
    const InputType image = InputType::convolutional(8, 8, 1);
    CHECK(buildError(network(image)
                         .layer(ConvolutionLayer::Builder(3, 3).nOut(kExtent + 1).build())
                         .layer(out()))
              .find("nOut must be between 1 and 1048576") != std::string::npos);
    CHECK(buildError(
              network(image)
                  .layer(ConvolutionLayer::Builder(3, 3).stride(1, kExtent + 1).nOut(1).build())
                  .layer(out()))
              .find("stride must be at most 1048576") != std::string::npos);
    // Padding of 2^62 overflowed the window arithmetic (in + 2 * padding).
    CHECK(buildError(network(image)
                         .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 1, 1)
                                    .padding(int64_t{1} << 62, 0)
                                    .build())
                         .layer(out()))
              .find("padding must be at most 1048576") != std::string::npos);
    CHECK(buildError(
              network(image)
                  .layer(ConvolutionLayer::Builder(3, 3).dilation(kExtent + 1, 1).nOut(1).build())
                  .layer(out()))
              .find("dilation must be at most") != std::string::npos);
    CHECK(buildError(network(InputType::feedForward(4))
                         .layer(OutputLayer::Builder().nOut(kExtent + 1).build()))
              .find("nOut must be between 1 and 1048576") != std::string::npos);
    // A layer output beyond one extent (padding grows it): 2^20 + 2 * 2^19 rows.
    CHECK(buildError(
              network(InputType::convolutional(kExtent, 1, 1))
                  .layer(ConvolutionLayer::Builder(1, 1).padding(kExtent / 2, 0).nOut(1).build())
                  .layer(out()))
              .find("layer 0 (ConvolutionLayer) output Convolutional(2097152x1x1): height") !=
          std::string::npos);
  }

  TEST_CASE("limits: at most 2^40 parameters per layer and per network, exactly 2^40 allowed") {
    auto dense = [](int64_t nIn, int64_t nOut, bool bias) {
      return network(InputType::feedForward(nIn))
          .layer(OutputLayer::Builder().nOut(nOut).hasBias(bias).build());
    };
    const MultiLayerConfiguration largest = dense(kExtent, kExtent, false).build();
    CHECK(largest.layers[0]->numParams() == limits::kMaxParameters);
    CHECK(buildError(dense(2 * kExtent, kExtent, false))
              .find("nIn 2097152 x nOut 1048576 weights exceed") != std::string::npos);
    // 2^40 weights plus 2^20 biases: the weights within the limit, the total not.
    CHECK(buildError(dense(kExtent, kExtent, true))
              .find("layers 0 to 0: more than 1099511627776 parameters") != std::string::npos);
    // A convolution: 2^10 channels of 2^10 x 2^10, a 2^10 x 2^10 kernel, 1025 filters.
    CHECK(buildError(network(InputType::convolutional(1024, 1024, 1024))
                         .layer(ConvolutionLayer::Builder(1024, 1024).nOut(1025).build())
                         .layer(out()))
              .find("nOut 1025 x nIn 1024 x kernel 1024x1024 weights exceed the limit of "
                    "1099511627776") != std::string::npos);
  }
}

#pragma once
// The model mnist_inference_server serves: read from its file and checked against what requests
// give it (one 28x28x1 image, kImagePixels values) before anything is allocated for serving it, so
// that a model file asking for other inputs (a few KB may declare a 16384x16384 input) is refused
// at start-up with both shapes named, rather than failing in warm-up or on every request.
//
// A normalizer saved in the model file (ModelSerializer::writeModel(..., normalizer)) comes with
// it, and the server applies it to every request's features (grey levels / 255, as
// MnistDataSetIterator gives them: see PredictionRequest.h) before the network, as the training
// iterator applied it to its batches.
#include <dl4cpp/nn/multilayer/MultiLayerNetwork.h>
#include <dl4cpp/nn/util/ModelSerializer.h>

#include <filesystem>

namespace samples::server {

// Throws dl4cpp::ConfigError naming the model's input type and the ones the server can feed:
// ConvolutionalFlat(28x28x1), Convolutional(28x28x1) or FeedForward(784).
void requireMnistInput(const dl4cpp::MultiLayerConfiguration& configuration);

// ModelSerializer::restoreMultiLayerNetworkAndNormalizer (without updater state) followed by
// requireMnistInput.
dl4cpp::ModelAndNormalizer loadServedModel(const std::filesystem::path& path);

}  // namespace samples::server

#pragma once
// The model mnist_inference_server serves: read from its file and checked against what requests
// give it (one 28x28x1 image, kImagePixels values) before anything is allocated for serving it, so
// that a model file asking for other inputs (a few KB may declare a 16384x16384 input) is refused
// at start-up with both shapes named, rather than failing in warm-up or on every request.
//
// A normalizer saved in the model file (ModelSerializer::writeModel(..., normalizer)) comes with
// it, and the server applies it to every request's features (in the model's pixel range: see
// choosePixelRange) before the network, as the training iterator applied it to its batches.
#include <filesystem>
#include <optional>
#include <string>

#include "iterators/DataNormalization.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "nn/util/ModelSerializer.h"
#include "server/PixelRange.h"

namespace samples::server {

// Throws dl4cpp::ConfigError naming the model's input type and the ones the server can feed:
// ConvolutionalFlat(28x28x1), Convolutional(28x28x1) or FeedForward(784).
void requireMnistInput(const dl4cpp::MultiLayerConfiguration& configuration);
void requireMnistInput(const dl4cpp::InputType& input);

// Whether `path` names an ONNX model (its extension is .onnx, in any case): the server imports it
// rather than reading it as a dl4cpp model file.
bool isOnnxModelPath(const std::filesystem::path& path);

// An ONNX model imported with dl4cpp::onnx::importModel (frozen: it is only served), checked to
// have one input and one output and to take MNIST images as requireMnistInput says (an exported
// LeNet takes (N, 784) rows and reshapes them to images itself). A build without ONNX
// (DL4CPP_WITH_ONNX) throws dl4cpp::ConfigError saying so; an import error is the importer's
// ModelExchangeError.
dl4cpp::ComputationGraph loadServedOnnxModel(const std::filesystem::path& path);

// ModelSerializer::restoreMultiLayerNetworkAndNormalizer (without updater state) followed by
// requireMnistInput.
dl4cpp::ModelAndNormalizer loadServedModel(const std::filesystem::path& path);

// The pixel range a model is served in, and what chose it (the server prints and reports both).
struct PixelRangeChoice {
  PixelRange range = PixelRange::UNIT;
  std::string chosenBy;  // "--pixel-range", "the model file's ImagePreProcessingScaler", "default"
};

// `requested` (--pixel-range) whenever given. Otherwise LEVELS when the model file's normalizer is
// an ImagePreProcessingScaler of 8-bit pixels (maxBits 8, its default): that scaler takes grey
// levels 0..255, so the model was trained on them (as ImageRecordReader gives them), and handed
// levels / 255 it would see them scaled twice. Otherwise UNIT, MnistDataSetIterator's scale: no
// other normalizer, nor none, tells which scale the model was trained on (a model trained on levels
// with a NormalizerStandardize needs --pixel-range 0-255).
PixelRangeChoice choosePixelRange(std::optional<PixelRange> requested,
                                  const dl4cpp::DataNormalization* normalizer);

}  // namespace samples::server

#include "nn/earlystopping/saver/LocalFileModelSaver.h"

#include <fmt/format.h>

#include <system_error>

#include "nn/core/Error.h"
#include "nn/core/OutputPath.h"

namespace dl4cpp {

LocalFileModelSaver::LocalFileModelSaver(std::filesystem::path directory)
    : directory_(std::move(directory)) {
  if (directory_.empty()) throw ConfigError("LocalFileModelSaver: the directory is empty");
  // Before training, not at the first model saved.
  checkOutputDirectory(directory_, "early-stopping models");
}

void LocalFileModelSaver::saveBestModel(const MultiLayerNetwork& model) {
  save(model, bestModelPath());
}

void LocalFileModelSaver::saveLatestModel(const MultiLayerNetwork& model) {
  save(model, latestModelPath());
}

std::optional<MultiLayerNetwork> LocalFileModelSaver::getBestModel() {
  return load(bestModelPath());
}

std::optional<MultiLayerNetwork> LocalFileModelSaver::getLatestModel() {
  return load(latestModelPath());
}

void LocalFileModelSaver::save(const MultiLayerNetwork& model,
                               const std::filesystem::path& path) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error)
    throw IoError(fmt::format("LocalFileModelSaver: cannot create the directory {}: {}",
                              directory_.string(), error.message()));
  model.save(path);
}

std::optional<MultiLayerNetwork> LocalFileModelSaver::load(const std::filesystem::path& path) {
  std::error_code error;
  const bool exists = std::filesystem::exists(path, error);
  if (error)
    throw IoError(
        fmt::format("LocalFileModelSaver: cannot look for {}: {}", path.string(), error.message()));
  if (!exists) return std::nullopt;
  return MultiLayerNetwork::load(path);
}

}  // namespace dl4cpp

#include "nn/earlystopping/saver/LocalFileModelSaver.h"

#include <fmt/format.h>

#include <system_error>

#include "nn/core/Error.h"
#include "nn/core/OutputPath.h"
#include "nn/util/ModelSerializer.h"

namespace dl4cpp {

LocalFileModelSaver::LocalFileModelSaver(std::filesystem::path directory)
    : directory_(std::move(directory)) {
  if (directory_.empty()) throw ConfigError("LocalFileModelSaver: the directory is empty");
  // Before training, not at the first model saved.
  checkOutputDirectory(directory_, "early-stopping models");
}

void LocalFileModelSaver::saveBestModel(const Model& model) { save(model, bestModelPath()); }

void LocalFileModelSaver::saveLatestModel(const Model& model) { save(model, latestModelPath()); }

std::unique_ptr<Model> LocalFileModelSaver::getBestModel() { return load(bestModelPath()); }

std::unique_ptr<Model> LocalFileModelSaver::getLatestModel() { return load(latestModelPath()); }

void LocalFileModelSaver::save(const Model& model, const std::filesystem::path& path) const {
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error)
    throw IoError(fmt::format("LocalFileModelSaver: cannot create the directory {}: {}",
                              directory_.string(), error.message()));
  model.save(path, true);
}

std::unique_ptr<Model> LocalFileModelSaver::load(const std::filesystem::path& path) {
  std::error_code error;
  const bool exists = std::filesystem::exists(path, error);
  if (error)
    throw IoError(
        fmt::format("LocalFileModelSaver: cannot look for {}: {}", path.string(), error.message()));
  if (!exists) return nullptr;
  return ModelSerializer::restoreModel(path);
}

}  // namespace dl4cpp

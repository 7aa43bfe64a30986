#pragma once
// LocalFileModelSaver: writes the best and latest models as model files (DL4J's), bestModel.bin
// and latestModel.bin in `directory`, with the model's save (updater state included, so
// training can continue from them; written atomically, so a crash leaves the previous file whole).
// The directory is created when the first model is saved; the constructor checks that it can be
// (checkOutputDirectory, nn/core/OutputPath.h: OutputPathError for a path that is not a
// directory, or whose nearest existing folder is not writable), and the files follow the
// output-path rule. A failed write is an IoError naming the file. The getters load the files
// (ModelSerializer::restoreModel: a network or a graph as
// saved, on the CPU, all cores) and are empty while a file does not exist. Files
// of an earlier run in the same directory stay until this one overwrites them (EarlyStoppingTrainer
// only takes a best model it saved itself).
#include <filesystem>

#include "nn/earlystopping/saver/EarlyStoppingModelSaver.h"

namespace dl4cpp {

class LocalFileModelSaver : public EarlyStoppingModelSaver {
 public:
  static constexpr const char* kBestModelFile = "bestModel.bin";
  static constexpr const char* kLatestModelFile = "latestModel.bin";

  explicit LocalFileModelSaver(std::filesystem::path directory);

  void saveBestModel(const Model& model) override;
  void saveLatestModel(const Model& model) override;
  std::unique_ptr<Model> getBestModel() override;
  std::unique_ptr<Model> getLatestModel() override;

  std::filesystem::path bestModelPath() const { return directory_ / kBestModelFile; }
  std::filesystem::path latestModelPath() const { return directory_ / kLatestModelFile; }

 private:
  void save(const Model& model, const std::filesystem::path& path) const;
  static std::unique_ptr<Model> load(const std::filesystem::path& path);

  std::filesystem::path directory_;
};

}  // namespace dl4cpp

#pragma once
// Checkpoints of a ParallelWrapper run: when to write them (Checkpoint), and the files themselves
// (Checkpoints). A checkpoint is an ordinary model file (ModelSerializer, with updater state)
// holding the averaged root model at an averaging boundary, counters included, so
// MultiLayerNetwork::load() (ComputationGraph::load() for a graph) of the newest one plus
// ParallelWrapper::resume() continues the run.
// With the normalizer the training data goes through (ParallelWrapper::Builder::
// checkpointNormalizer), each checkpoint holds it too, so a checkpoint can be served as it is and
// a resumed run finds it there (ModelSerializer::restoreNormalizerFromFile).
//
//   auto wrapper = ParallelWrapper::Builder(model).workers(2).averagingFrequency(3)
//       .checkpointEvery(Checkpoint::iterations(300), "checkpoints/", 3)
//       .build();
//
// Files are named "checkpoint-i<iteration, 12 digits>-e<epoch, 6 digits>.dl4cpp": the name sorts
// by training progress, so the newest is the last name in order (an end-of-epoch checkpoint
// sorts after a mid-epoch one at the same iteration).
//
// A directory holds the checkpoints of one run, and every new checkpoint must be the newest in
// it: a run (or a Checkpoints::write) refuses with ConfigError, naming the files, when the
// directory holds checkpoints newer than the model's position (iteration, epoch). Those belong to
// another run, or to a later point of this run than the model was resumed from; had the run gone
// on, its checkpoints would sort before them, and keepLast would delete each new one as it was
// written. ParallelWrapper checks before training a single step. A run resumed from the newest
// checkpoint (MultiLayerNetwork::load(Checkpoints::latest(dir)), then resume()) finds nothing
// newer and continues the numbering past what is there; the older files of the directory count
// towards keepLast like its own. Newer files are never deleted to make room: what to do with
// them is the user's decision.
//
// With an outer updater (ParallelWrapper::Builder::outerUpdater), each checkpoint has a companion
// "<checkpoint name>.outer" holding the outer updater's state (its velocity or moments and its step
// count), written before the checkpoint itself and deleted with it: resume() reads the one beside
// the checkpoint it resumes from (ParallelWrapper::restoreOuterUpdaterState), so the resumed run
// continues exactly. A checkpoint without one (written without an outer updater) resumes with
// the outer updater's state at zero.
//
// Saves killed mid-write leave "<checkpoint name>.tmp-<16 hex digits>" files. Each write removes
// those of its directory that no process holds: the writer of a temporary keeps it locked
// (flock) until it is renamed into place, so a save in progress, by this process or another, is
// never touched (removeStaleTemporaries, AtomicFile.h). Other files are never touched.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "iterators/DataNormalization.h"
#include "nn/api/Model.h"

namespace dl4cpp::parallel {

// How often checkpoints are written. Both kinds write only at averaging boundaries, where the
// root model holds the averaged state every worker continues from.
class Checkpoint {
 public:
  enum class Unit { Iterations, Epochs };

  // At the first averaging boundary at or after every multiple of n iterations (the root's
  // iteration count; one round adds averagingFrequency). n >= 1, else ConfigError.
  static Checkpoint iterations(int64_t n);
  // After every n-th completed epoch (by the root's epoch count). n >= 1, else ConfigError.
  static Checkpoint epochs(int n);

  Unit unit() const { return unit_; }
  int64_t every() const { return every_; }

 private:
  Checkpoint(Unit unit, int64_t every) : unit_(unit), every_(every) {}
  Unit unit_;
  int64_t every_;
};

class Checkpoints {
 public:
  // "checkpoint-i000000000120-e000002.dl4cpp"
  static std::string fileName(int64_t iteration, int epoch);
  // The checkpoint files in `directory`, oldest first (other files are ignored); empty when the
  // directory does not exist.
  static std::vector<std::filesystem::path> list(const std::filesystem::path& directory);
  // The newest checkpoint in `directory`, if any.
  static std::optional<std::filesystem::path> latest(const std::filesystem::path& directory);
  // The companion file of `checkpoint` holding the outer updater's state: "<checkpoint>.outer".
  static std::filesystem::path outerStateFile(const std::filesystem::path& checkpoint);
  // ConfigError naming them when `directory` holds checkpoints newer than position (iteration,
  // epoch); nothing when it does not exist.
  static void requireNoneAfter(const std::filesystem::path& directory, int64_t iteration,
                               int epoch);
  // Writes `model` (with updater state, and `normalizer` when given, as
  // ModelSerializer::writeModel) atomically into `directory` (created if missing), then deletes
  // all but the newest keepLast checkpoints and the temporaries of killed saves. Returns the new
  // file, which is the newest in the directory: ConfigError, before writing anything, when the
  // directory holds a newer one (requireNoneAfter); OutputPathError, before writing anything, when
  // the directory cannot be written (checkOutputDirectory, nn/core/OutputPath.h). IoError on
  // failure; the previous checkpoints are then untouched. Non-empty `outerState` (a
  // ParallelWrapper's outer updater state) goes to outerStateFile() of the new checkpoint,
  // written first; companions whose checkpoint is gone are deleted with the old checkpoints.
  static std::filesystem::path write(const Model& model, const std::filesystem::path& directory,
                                     int keepLast, const DataNormalization* normalizer = nullptr,
                                     std::span<const std::byte> outerState = {});
};

}  // namespace dl4cpp::parallel

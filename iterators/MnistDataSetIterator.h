#pragma once
// MnistDataSetIterator: MNIST (or Fashion-MNIST, which has the same file layout) from IDX files,
// with DL4J's constructors and semantics.
//
//  - features: (N, rows*cols) = (N, 784) floats, pixel/255, or with binarize pixel > 30 ? 1 : 0
//    (DL4J's threshold); labels: (N, 10) one-hot.
//  - The first `numExamples` examples of the file are used (<= 0 or more than the file holds:
//    all of them). With shuffle, their order is permuted at construction and again at every
//    reset(), by a Fisher-Yates shuffle driven by std::mt19937_64(seed): the sequence of epochs is
//    a pure function of the seed, identical across compilers and standard libraries.
//  - The last, partial batch of an epoch is kept.
//  - Images stay in memory as uint8 (47 MB for the training set); next() converts one batch.
//
// Files, looked up in `dir`: train-images-idx3-ubyte, train-labels-idx1-ubyte (train) or
// t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte (test), each raw or with a .gz suffix (raw is
// preferred when both exist). An empty `dir` means defaultDataDirectory("MNIST"). Missing files
// give DataNotFoundError saying how to get them; a name that exists but is no regular file (a
// directory, a FIFO) gives IdxReader's DataFormatError saying what it is; image/label count
// mismatch gives DataMismatchError naming both files; the IdxReader errors pass through
// unchanged.
//
// Not thread-safe (one thread at a time, see DataSetIterator); asyncSupported() is true.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "iterators/DataSetIterator.h"
#include "iterators/IdxReader.h"

namespace dl4cpp {

class MnistDataSetIterator : public DataSetIterator {
 public:
  static constexpr int kNumClasses = 10;
  static constexpr int kBinarizeThreshold = 30;  // pixel > 30 -> 1 with binarize (as DL4J)

  // DL4J: all examples (60000 train / 10000 test), not binarized, shuffled with `seed`.
  MnistDataSetIterator(int batch, bool train, int64_t seed);
  MnistDataSetIterator(int batch, int numExamples, bool binarize, bool train, bool shuffle,
                       int64_t seed, std::string dir = "");

  bool hasNext() override;
  DataSet next() override;
  void skipNext() override;  // moves the cursor; copies nothing
  void reset() override;

  int batch() const override { return batch_; }
  int64_t inputColumns() const override { return images_.imageSize(); }
  int totalOutcomes() const override { return kNumClasses; }
  int64_t totalExamples() const override { return static_cast<int64_t>(order_.size()); }

  // Where data sets live when no directory is given: $DL4CPP_DATA_DIR/<dataset> when that
  // variable is set and non-empty, else $HOME/.dl4cpp/data/<dataset> (.dl4cpp/data/<dataset>,
  // relative, when HOME is unset). scripts/get-mnist.sh uses the same default.
  static std::string defaultDataDirectory(const std::string& dataset = "MNIST");
  // Where Debian's dataset-fashion-mnist package installs Fashion-MNIST (gzip IDX files).
  static std::string fashionMnistDirectory() { return "/usr/share/datasets/fashion-mnist"; }

  // The directory and the two files actually read.
  const std::string& directory() const { return dir_; }
  const std::string& imagesPath() const { return imagesPath_; }
  const std::string& labelsPath() const { return labelsPath_; }

 private:
  void shuffleOrder();

  int batch_;
  bool binarize_;
  bool shuffle_;
  std::string dir_, imagesPath_, labelsPath_;
  IdxImages images_;            // first numExamples images of the file, uint8
  IdxLabels labels_;            // their labels
  std::vector<int64_t> order_;  // epoch order: indices into images_/labels_
  int64_t cursor_ = 0;          // position in order_ of the next example
  std::mt19937_64 rng_;         // seeded once; each shuffle continues the sequence
};

}  // namespace dl4cpp

// Real tables end to end: the CSV files of Debian's python3-sklearn (SklearnData.h), read as they
// are. Their first line is skipped and checked against what the reader finds.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "iterators/CSVRecordReader.h"
#include "iterators/RecordReaderDataSetIterator.h"
#include "iterators/SklearnData.h"
#include "nn/conf/layers/DenseLayer.h"
#include "nn/conf/layers/OutputLayer.h"
#include "nn/multilayer/MultiLayerNetwork.h"
#include "parallel/ParallelWrapper.h"

using namespace dl4cpp;
using testutil::haveSklearnData;
using testutil::kSklearnData;

namespace {

struct Header {
  int64_t rows, features;
  int classes;
};

Header readHeader(const std::filesystem::path& path) {
  CSVRecordReader reader;
  reader.initialize(path);
  const Record first = reader.next();
  REQUIRE(first.values.size() >= 3);
  return {std::stoll(first.values[0]), std::stoll(first.values[1]),
          static_cast<int>(first.values.size()) - 2};
}

constexpr int kIrisEpochs = 300;

// 4 -> 16 (TANH) -> 3 (SOFTMAX), Adam.
MultiLayerNetwork irisNetwork() {
  MultiLayerNetwork net(
      NeuralNetConfiguration::Builder()
          .seed(7)
          .updater(Adam(0.05))
          .weightInit(WeightInit::XAVIER)
          .list()
          .layer(DenseLayer::Builder().nIn(4).nOut(16).activation(Activation::TANH).build())
          .layer(OutputLayer::Builder(LossFunction::MCXENT)
                     .nOut(3)
                     .activation(Activation::SOFTMAX)
                     .build())
          .build(),
      Device::cpu(), 1);
  net.init();
  return net;
}

// Accuracy over all of iris.csv, read again through a fresh reader in batches of 32.
double irisAccuracy(MultiLayerNetwork& net) {
  CSVRecordReader reader(1);
  reader.initialize(kSklearnData / "iris.csv");
  RecordReaderDataSetIterator it(reader, 32, 4, 3);
  return net.evaluate(it).accuracy();
}

}  // namespace

TEST_SUITE("iterators") {
  TEST_CASE("sklearn CSV: iris, wine and breast cancer are read whole, with the header's counts") {
    if (!haveSklearnData()) return;
    struct Expected {
      const char* file;
      int64_t rows, features;
      int classes;
      std::vector<int64_t> perClass;
    };
    const std::vector<Expected> files = {{"iris.csv", 150, 4, 3, {50, 50, 50}},
                                         {"wine_data.csv", 178, 13, 3, {59, 71, 48}},
                                         {"breast_cancer.csv", 569, 30, 2, {212, 357}}};
    for (const Expected& e : files) {
      CAPTURE(e.file);
      const auto path = kSklearnData / e.file;
      const Header header = readHeader(path);
      CHECK(header.rows == e.rows);
      CHECK(header.features == e.features);
      CHECK(header.classes == e.classes);
      CSVRecordReader reader(1);
      reader.initialize(path);
      RecordReaderDataSetIterator it(reader, 64, static_cast<int>(e.features), e.classes);
      CHECK(it.inputColumns() == e.features);
      std::vector<int64_t> perClass(e.classes, 0);
      int64_t rows = 0;
      while (it.hasNext()) {
        const DataSet b = it.next();
        for (int64_t r = 0; r < b.numExamples(); ++r)
          for (int c = 0; c < e.classes; ++c) perClass[c] += b.labels.at(r * e.classes + c) == 1;
        rows += b.numExamples();
      }
      CHECK(rows == e.rows);
      CHECK(it.totalExamples() == e.rows);
      CHECK(perClass == e.perClass);
    }
  }

  TEST_CASE("sklearn CSV: a dense network trained on iris through the CSV reader") {
    if (!haveSklearnData()) return;
    CSVRecordReader reader(1);
    reader.initialize(kSklearnData / "iris.csv");
    RecordReaderDataSetIterator train(reader, 150, 4, 3);
    MultiLayerNetwork net = irisNetwork();
    net.fit(train, kIrisEpochs);
    const double accuracy = irisAccuracy(net);
    MESSAGE("iris training-set accuracy, " << kIrisEpochs << " full-batch epochs: " << accuracy);
    // Guessing scores 1/3; the classes are nearly linearly separable (setosa fully).
    CHECK(accuracy >= 0.95);
  }

  TEST_CASE("sklearn CSV: ParallelWrapper trains on iris through the CSV reader") {
    if (!haveSklearnData()) return;
    CSVRecordReader reader(1);
    reader.initialize(kSklearnData / "iris.csv");
    // Two workers, a half of the table each, gradients shared every step: full-batch training.
    RecordReaderDataSetIterator train(reader, 75, 4, 3);
    MultiLayerNetwork net = irisNetwork();
    auto wrapper = parallel::ParallelWrapper::Builder(net)
                       .workers(2)
                       .threadsPerWorker(1)
                       .trainingMode(parallel::TrainingMode::SHARED_GRADIENTS)
                       .build();
    wrapper.fit(train, kIrisEpochs);
    wrapper.close();
    const double accuracy = irisAccuracy(net);
    MESSAGE("iris training-set accuracy with ParallelWrapper: " << accuracy);
    CHECK(accuracy >= 0.95);
  }
}

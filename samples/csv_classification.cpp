// Classification on a real table: DL4J's CSV example (CSVRecordReader, RecordReaderDataSetIterator,
// shuffle, splitTestAndTrain, NormalizerStandardize) on the CSV files Debian's python3-sklearn
// ships, read as they are.
//   csv_classification [--table iris|wine_data|breast_cancer] [--epochs 200] [--data-dir DIR]
//
// Those files start with a line "<rows>,<features>,<class names...>" instead of column names; the
// class is the last column.
#include <dl4cpp/dl4cpp.h>
#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <iostream>
#include <limits>

#include "SampleSupport.h"
#include "nn/core/QuoteForMessage.h"

using namespace dl4cpp;

namespace {

struct TableHeader {
  int64_t rows = 0;
  int features = 0;
  std::vector<std::string> classes;
};

TableHeader readHeader(const std::filesystem::path& file) {
  CSVRecordReader reader;
  reader.initialize(file);
  const Record first = reader.next();
  if (first.values.size() < 4)
    throw DataFormatError(fmt::format(
        "{}: line 1 is not '<rows>,<features>,<class names...>' (python3-sklearn's layout)",
        file.string()));
  // A count in the first line, as a positive integer; the cell is quoted bounded and escaped.
  auto count = [&](size_t column, const char* what) {
    const std::string& text = first.values[column];
    int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value < 1 ||
        value > std::numeric_limits<int>::max())
      throw DataFormatError(
          fmt::format("{}: line 1, column {}: the {} {} is not a positive integer", file.string(),
                      column + 1, what, quoteForMessage(text)));
    return value;
  };
  TableHeader header;
  header.rows = count(0, "row count");
  header.features = static_cast<int>(count(1, "feature count"));
  header.classes.assign(first.values.begin() + 2, first.values.end());
  return header;
}

// features -> 32 (RELU) -> 32 (RELU) -> classes (SOFTMAX), Adam.
MultiLayerNetwork tableNetwork(int features, int classes, int64_t seed) {
  MultiLayerNetwork net(
      NeuralNetConfiguration::Builder()
          .seed(seed)
          .updater(Adam(0.01))
          .weightInit(WeightInit::XAVIER)
          .list()
          .layer(DenseLayer::Builder().nIn(features).nOut(32).activation(Activation::RELU).build())
          .layer(DenseLayer::Builder().nOut(32).activation(Activation::RELU).build())
          .layer(OutputLayer::Builder(LossFunction::MCXENT)
                     .nOut(classes)
                     .activation(Activation::SOFTMAX)
                     .build())
          .build(),
      Device::cpu(), 1);
  net.init();
  return net;
}

}  // namespace

int run(int argc, char** argv) {
  const samples::SampleOptions options(
      argc, argv,
      {{"table", "iris | wine_data | breast_cancer (default iris)"},
       {"data-dir",
        "python3-sklearn's data folder (default "
        "/usr/lib/python3/dist-packages/sklearn/datasets/data)"},
       {"epochs", "training epochs (default 200)"},
       {"batch", "minibatch size (default 16)"},
       {"train-fraction", "share of the shuffled rows used for training (default 0.8)"},
       {"seed", "shuffle and initialisation seed (default 42)"},
       {"min-accuracy", "exit with status 1 when test accuracy is below this (default 0)"},
       {"save", "write the trained model to this file"}});
  const std::filesystem::path file =
      std::filesystem::path(
          options.getString("data-dir", "/usr/lib/python3/dist-packages/sklearn/datasets/data")) /
      (options.getString("table", "iris") + ".csv");
  const int epochs = static_cast<int>(options.getInt("epochs", 200));
  const int batch = static_cast<int>(options.getInt("batch", 16));
  const int64_t seed = options.getInt("seed", 42);
  if (epochs < 1 || batch < 1) throw std::invalid_argument("--epochs and --batch must be >= 1");

  if (!std::filesystem::exists(file)) {
    // 77: what CTest's SKIP_RETURN_CODE names, so the sample's test reports a skip, not a failure.
    std::cout << "skipped: " << file.string()
              << " not found (python3-sklearn installs it: scripts/install-deps.sh)\n";
    return 77;
  }
  const TableHeader header = readHeader(file);
  const int classes = static_cast<int>(header.classes.size());
  std::cout << fmt::format("{}: {} rows, {} features, classes {}\n", file.string(), header.rows,
                           header.features, fmt::join(header.classes, ", "));

  // The whole table as one DataSet (it is small); the class column follows the features.
  CSVRecordReader reader(1);
  reader.initialize(file);
  RecordReaderDataSetIterator all(reader, static_cast<int>(header.rows) + 1, header.features,
                                  classes);
  const DataSet table = all.next().shuffled(static_cast<uint64_t>(seed));
  if (table.numExamples() != header.rows)
    throw DataMismatchError(fmt::format("{}: line 1 announces {} rows, the file holds {}",
                                        file.string(), header.rows, table.numExamples()));
  const DataSet::TrainTest split =
      table.splitTestAndTrain(options.getDouble("train-fraction", 0.8));

  ListDataSetIterator train(split.train, batch);
  ListDataSetIterator test(split.test, batch);
  auto normalizer = std::make_shared<NormalizerStandardize>();
  normalizer->fit(train);  // the training rows' statistics, applied to both
  train.setPreProcessor(normalizer);
  test.setPreProcessor(normalizer);

  MultiLayerNetwork model = tableNetwork(header.features, classes, seed);
  std::cout << model.summary();
  std::cout << fmt::format("training on {} rows, testing on {}\n", split.train.numExamples(),
                           split.test.numExamples());
  for (int epoch = 0; epoch < epochs; ++epoch) model.fit(train);
  std::cout << fmt::format("{} epochs, final score {:.4f}\n", epochs, model.score());

  const std::string savePath = options.getString("save", "");
  if (!savePath.empty()) samples::saveModel(model, savePath);
  return samples::reportEvaluation(model.evaluate(test), options.getDouble("min-accuracy", 0.0));
}

int main(int argc, char** argv) {
  return samples::runSample("csv_classification", [&] { return run(argc, argv); });
}

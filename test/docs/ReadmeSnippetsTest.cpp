// The README's code, compiled and run. Every code block of its "Your own data" section and every
// code cell of the "DL4J → dl4cpp" table of docs/porting-from-dl4j.md (the dl4cpp column) appears
// in this file's code as written there (spacing aside), in a test case that runs it; the first
// test case reads them (and docs/data.md, which repeats the DataVec block) and fails, naming the
// snippet, when one no longer does. So the docs and this file change together.
#include <LenetConfiguration.h>
#include <TempDir.h>
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>
#include <iterators/SklearnData.h>
#include <nn/conf/BatchStatsTestLayer.h>

#include <cmath>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "TestPaths.h"
#include "iterators/image/ImageWriter.h"

using namespace dl4cpp;
using parallel::Checkpoint;
using parallel::Checkpoints;
using parallel::InferenceMode;
namespace fs = std::filesystem;

namespace {

const fs::path kSourceDir = testutil::testDataDir().parent_path().parent_path();

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE_MESSAGE(in.good(), "cannot read " << path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string withoutSpaces(const std::string& text) {
  std::string out;
  for (char c : text)
    if (!std::isspace(static_cast<unsigned char>(c))) out += c;
  return out;
}

// This file's code: every line but those that are only a comment, without whitespace.
std::string codeOf(const std::string& source) {
  std::istringstream lines(source);
  std::string line, code;
  while (std::getline(lines, line)) {
    const size_t first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line.compare(first, 2, "//") == 0) continue;
    code += line;
    code += '\n';
  }
  return withoutSpaces(code);
}

// The README's section that starts with `heading`, up to the next "## " heading.
std::string section(const std::string& readme, const std::string& heading) {
  const size_t begin = readme.find("\n" + heading);
  REQUIRE_MESSAGE(begin != std::string::npos, "no section " << heading);
  const size_t end = readme.find("\n## ", begin + 1);
  return readme.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

// The ```cpp blocks of `text`.
std::vector<std::string> cppBlocks(const std::string& text) {
  std::vector<std::string> blocks;
  for (size_t at = text.find("```cpp\n"); at != std::string::npos;
       at = text.find("```cpp\n", at + 1)) {
    const size_t begin = at + 7, end = text.find("```", begin);
    REQUIRE(end != std::string::npos);
    blocks.push_back(text.substr(begin, end - begin));
  }
  return blocks;
}

// The `code` spans of the dl4cpp (second) column of the table in `text`, but for file names.
std::vector<std::string> tableCells(const std::string& text) {
  std::vector<std::string> spans;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("| ", 0) != 0 || line.rfind("| DL4J (Java)", 0) == 0) continue;
    // Split at the pipes outside `code`; cells[2] is the dl4cpp column.
    std::vector<std::string> cells(1);
    bool inCode = false;
    for (char c : line) {
      if (c == '`') inCode = !inCode;
      if (c == '|' && !inCode)
        cells.emplace_back();
      else
        cells.back() += c;
    }
    REQUIRE_MESSAGE(cells.size() == 4, "not a two-column row: " << line);
    const std::string& cell = cells[2];
    for (size_t open = cell.find('`'); open != std::string::npos; open = cell.find('`', open + 1)) {
      const size_t close = cell.find('`', open + 1);
      REQUIRE(close != std::string::npos);
      const std::string span = cell.substr(open + 1, close - open - 1);
      if (span.size() < 3 || span.compare(span.size() - 3, 3, ".md") != 0) spans.push_back(span);
      open = close;
    }
  }
  return spans;
}

const char* const kFashionClasses[] = {"T-shirt_top", "Trouser", "Pullover", "Dress", "Coat",
                                       "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle_boot"};

// dir/<class>/<i>.png: the first `count` images of Fashion-MNIST's test set (Debian's
// dataset-fashion-mnist), named by class as scripts/make-fashion-png.sh names them. False, after
// the skip line CTest looks for, when the data set is not installed.
bool writeFashionPng(const fs::path& dir, int count) {
  const std::string source = MnistDataSetIterator::fashionMnistDirectory();
  if (!fs::exists(source + "/t10k-images-idx3-ubyte.gz")) {
    std::cout << "skipped: " << source
              << " not found (install dataset-fashion-mnist: scripts/install-deps.sh)\n";
    return false;
  }
  MnistDataSetIterator fashion(count, count, false, false, false, 0, source);
  const DataSet images = fashion.next();
  for (int64_t i = 0; i < count; ++i) {
    int label = 0;
    while (images.labels.at(i * 10 + label) != 1.0f) ++label;
    Image image(1, 28, 28);
    for (int64_t k = 0; k < 784; ++k)
      image.pixels[static_cast<size_t>(k)] = std::round(images.features.at(i * 784 + k) * 255.0f);
    const fs::path folder = dir / kFashionClasses[label];
    fs::create_directories(folder);
    ImageWriter::writePng(image, folder / (std::to_string(i) + ".png"));
  }
  return true;
}

MultiLayerNetwork lenet() {
  MultiLayerNetwork model(
      samples::lenetListBuilder().setInputType(InputType::convolutional(28, 28, 1)).build());
  model.init();
  return model;
}

// All of an iterator's examples in one DataSet.
DataSet wholeEpoch(DataSetIterator& iterator) {
  std::vector<DataSet> batches;
  while (iterator.hasNext()) batches.push_back(iterator.next());
  return DataSet::merge(batches);
}

// A small feed-forward network and data for the table's model cells.
MultiLayerConfiguration smallConfiguration() {
  return NeuralNetConfiguration::Builder()
      .seed(7)
      .updater(Adam(1e-2))
      .list()
      .layer(DenseLayer::Builder().nIn(4).nOut(8).activation(Activation::TANH).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .build();
}

DataSet smallData(int n) {
  std::vector<float> features, labels;
  for (int i = 0; i < n; ++i) {
    const int label = i % 3;
    for (int k = 0; k < 4; ++k)
      features.push_back(static_cast<float>(k == label) +
                         0.1f * static_cast<float>((i * 7 + k) % 5));
    for (int k = 0; k < 3; ++k) labels.push_back(k == label ? 1.0f : 0.0f);
  }
  return DataSet(Tensor::fromVector(Shape{n, 4}, features),
                 Tensor::fromVector(Shape{n, 3}, labels));
}

}  // namespace

TEST_SUITE("docs") {
  TEST_CASE("README: its code blocks and table cells are this file's code, as written") {
    const std::string readme = readText(kSourceDir / "README.md");
    const std::string code =
        codeOf(readText(kSourceDir / "test" / "docs" / "ReadmeSnippetsTest.cpp"));
    const std::vector<std::string> blocks =
        cppBlocks(section(readme, "## Your own data: image folders and CSV tables"));
    CHECK(blocks.size() == 3);
    for (const std::string& block : blocks)
      CHECK_MESSAGE(code.find(withoutSpaces(block)) != std::string::npos,
                    "README block not in test/docs/ReadmeSnippetsTest.cpp:\n"
                        << block);
    // docs/data.md shows the DataVec block too.
    const std::vector<std::string> dataDocBlocks = cppBlocks(section(
        readText(kSourceDir / "docs" / "data.md"), "## DataVec's shape of the same pipeline"));
    REQUIRE(dataDocBlocks.size() == 1);
    CHECK(withoutSpaces(dataDocBlocks[0]) == withoutSpaces(blocks.at(0)));
    const std::vector<std::string> cells = tableCells(
        section(readText(kSourceDir / "docs" / "porting-from-dl4j.md"), "## DL4J → dl4cpp"));
    CHECK(cells.size() > 100);
    for (const std::string& cell : cells)
      CHECK_MESSAGE(code.find(withoutSpaces(cell)) != std::string::npos,
                    "README table cell not in test/docs/ReadmeSnippetsTest.cpp: " << cell);
  }

  TEST_CASE(
      "README, Your own data: the DataVec pipeline trains LeNet with ParallelWrapper (2 "
      "workers) on Fashion-MNIST PNGs, the loss going down") {
    testutil::TempDir dir;
    const fs::path trainDir = dir / "fashion-png" / "train";
    if (!writeFashionPng(trainDir, 1000)) return;
    MultiLayerNetwork model = lenet();
    const MultiLayerNetwork untrained = model.clone();
    auto wrapper = parallel::ParallelWrapper::Builder(model)
                       .prefetchBuffer(24)
                       .workers(2)
                       .averagingFrequency(3)
                       .reportScoreAfterAveraging(true)
                       .build();

    const uint64_t seed = 42;
    auto labelMaker = std::make_shared<ParentPathLabelGenerator>();
    FileSplit trainSplit(trainDir, NativeImageLoader::ALLOWED_FORMATS, seed);
    BalancedPathFilter pathFilter(seed, NativeImageLoader::ALLOWED_FORMATS, labelMaker);
    std::vector<InputSplit> parts = trainSplit.sample(pathFilter, 80, 20);
    ImageRecordReader rr(28, 28, 1, labelMaker);
    rr.initialize(parts[0], std::make_shared<FlipImageTransform>(seed));
    RecordReaderDataSetIterator it(rr, 64, 1, rr.numLabels());
    it.setPreProcessor(std::make_shared<ImagePreProcessingScaler>(0, 1));
    std::vector<std::string> labels = rr.getLabels();
    wrapper.fit(it);

    CHECK(labels == std::vector<std::string>{"Ankle_boot", "Bag", "Coat", "Dress", "Pullover",
                                             "Sandal", "Shirt", "Sneaker", "T-shirt_top",
                                             "Trouser"});
    CHECK(parts[0].length() + parts[1].length() ==
          pathFilter.filter(trainSplit.locations()).size());
    CHECK(parts[0].length() == 4 * parts[1].length());
    wrapper.fit(it, 7);
    CHECK(model.getEpochCount() == 8);

    // The held-out part, read as the test data of a DataVec port is.
    ImageRecordReader testReader(28, 28, 1, labelMaker);
    testReader.initialize(parts[1]);
    REQUIRE(testReader.getLabels() == labels);
    RecordReaderDataSetIterator testIterator(testReader, 100, 1, testReader.numLabels());
    testIterator.setPreProcessor(std::make_shared<ImagePreProcessingScaler>(0, 1));
    const DataSet heldOut = wholeEpoch(testIterator);
    MultiLayerNetwork before = untrained.clone();
    const double lossBefore = before.score(heldOut);
    const double lossAfter = model.score(heldOut);
    MESSAGE("held-out loss " << lossBefore << " -> " << lossAfter);
    CHECK(lossAfter < 0.75 * lossBefore);
  }

  TEST_CASE(
      "README, Your own data: the dl4cpp shape of the pipeline trains and saves the model with "
      "its scaler") {
    testutil::TempDir dir;
    const fs::path trainDir = dir / "train";
    const fs::path modelFile = dir / "fashion.dl4cpp";
    if (!writeFashionPng(trainDir, 300)) return;
    MultiLayerNetwork model = lenet();
    auto wrapper = parallel::ParallelWrapper::Builder(model).workers(2).build();

    LabeledFileSplit all(trainDir);                   // labels: the folder names, sorted
    auto parts = all.splitEachLabel({0.9, 0.1}, 42);  // per class, at random: train, validation
    auto augment =
        std::make_shared<PipelineImageTransform>(std::vector<PipelineImageTransform::Step>{
            {std::make_shared<FlipImageTransform>(FlipMode::Horizontal), 0.5},
            {std::make_shared<RotateImageTransform>(10.0), 0.5}});
    ImageRecordReader reader(28, 28, 1, parts[0],
                             augment);  // PNG or JPEG, decoded as batches are asked for
    ImageDataSetIterator train(reader, 64, {.decodeThreads = 2, .seed = 42});
    auto scaler = std::make_shared<ImagePreProcessingScaler>();  // [0, 255] -> [0, 1]
    train.setPreProcessor(scaler);
    wrapper.fit(train);
    ModelSerializer::writeModel(model, modelFile, true, scaler.get());  // served with its scaler

    CHECK(parts[0].size() + parts[1].size() == 300);
    CHECK(model.getEpochCount() == 1);
    const auto restored = ModelSerializer::restoreNormalizerFromFile(modelFile);
    REQUIRE(restored);
    CHECK(dynamic_cast<const ImagePreProcessingScaler*>(restored.get()) != nullptr);
  }

  TEST_CASE("README, Your own data: a CSV table as DL4J's examples read it (iris)") {
    if (!testutil::haveSklearnData()) return;
    const fs::path csvFile = testutil::kSklearnData / "iris.csv";
    const uint64_t seed = 42;

    CSVRecordReader recordReader(1, ',');         // skip one header line
    recordReader.initialize(FileSplit(csvFile));  // a file, or every file of a folder
    RecordReaderDataSetIterator iterator(recordReader, 150, 4, 3);  // label column 4, 3 classes
    DataSet allData = iterator.next().shuffled(seed);

    CHECK(allData.features.shape() == Shape{150, 4});
    CHECK(allData.labels.shape() == Shape{150, 3});
    std::vector<int> perClass(3);
    for (int64_t r = 0; r < 150; ++r)
      for (int c = 0; c < 3; ++c)
        perClass[static_cast<size_t>(c)] += allData.labels.at(r * 3 + c) == 1.0f;
    CHECK(perClass == std::vector<int>{50, 50, 50});
    CHECK_FALSE(iterator.hasNext());
  }

  TEST_CASE("Porting from DL4J: the configuration cells build networks that train") {
    auto builder = NeuralNetConfiguration::Builder().seed(123);
    builder.l1(1e-4)
        .l1Bias(1e-4)
        .weightDecay(1e-4)
        .gradientNormalization(GradientNormalization::ClipL2PerLayer)
        .gradientNormalizationThreshold(1.0);
    builder.updater(Nesterovs(0.01, 0.9)).weightInit(WeightInit::XAVIER).dropOut(0.5);
    auto list = builder.list();
    list.layer(ConvolutionLayer::Builder(5, 5).nOut(20).build())
        .layer(SubsamplingLayer::Builder(PoolingType::MAX).kernelSize(2, 2).stride(2, 2).build())
        .layer(BatchNormalization::Builder().decay(0.9).eps(1e-5).lockGammaBeta(false).build())
        .layer(ActivationLayer::Builder().activation(Activation::ELU).build())
        .layer(ZeroPaddingLayer::Builder(1, 1).build())
        .layer(
            ConvolutionLayer::Builder(3, 3).nOut(8).convolutionMode(ConvolutionMode::Same).build())
        .layer(LocalResponseNormalization::Builder().build())
        .layer(GlobalPoolingLayer::Builder(PoolingType::AVG).build())
        .layer(DropoutLayer::Builder(0.5).build())
        .layer(DenseLayer::Builder()
                   .nOut(16)
                   .activation(Activation::RELU)
                   .l1(1e-4)
                   .l1Bias(1e-4)
                   .weightDecay(1e-4)
                   .gradientNormalization(GradientNormalization::ClipL2PerLayer)
                   .gradientNormalizationThreshold(1.0)
                   .build())
        .layer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                   .nOut(3)
                   .activation(Activation::SOFTMAX)
                   .build())
        .setInputType(InputType::convolutionalFlat(28, 28, 1));
    MultiLayerConfiguration conf = list.build();
    MultiLayerNetwork model(conf);
    model.init();
    std::string json = conf.toJson();
    CHECK(MultiLayerConfiguration::fromJson(json) == conf);
    const DataSet images(Tensor::fromVector(Shape{4, 784}, std::vector<float>(4 * 784, 0.5f)),
                         Tensor::fromVector(Shape{4, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0}));
    model.fit(images);
    CHECK(std::isfinite(model.score()));

    // Every updater, activation, loss, weight init and pooling type the table names.
    const auto trains = [](const MultiLayerConfiguration& c) {
      MultiLayerNetwork net(c);
      net.init();
      net.fit(smallData(12));
      return std::isfinite(net.score());
    };
    const auto withUpdater = [&](const UpdaterParams& updater) {
      return trains(NeuralNetConfiguration::Builder()
                        .updater(updater)
                        .list()
                        .layer(DenseLayer::Builder().nIn(4).nOut(5).build())
                        .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                   .nOut(3)
                                   .activation(Activation::SOFTMAX)
                                   .build())
                        .build());
    };
    CHECK(withUpdater(Nesterovs(0.01, 0.9)));
    CHECK(withUpdater(Adam(1e-3)));
    CHECK(withUpdater(Sgd(0.1)));
    CHECK(withUpdater(RmsProp(1e-3)));
    CHECK(withUpdater(AdaGrad(0.1)));
    CHECK(withUpdater(AdaDelta()));
    CHECK(withUpdater(AdaMax(1e-3)));
    CHECK(withUpdater(Nadam(1e-3)));
    CHECK(withUpdater(AMSGrad(1e-3)));
    for (Activation activation :
         {Activation::ELU, Activation::SELU, Activation::GELU, Activation::SWISH,
          Activation::SOFTPLUS, Activation::HARDTANH, Activation::HARDSIGMOID, Activation::RELU6})
      CHECK(trains(NeuralNetConfiguration::Builder()
                       .list()
                       .layer(DenseLayer::Builder().nIn(4).nOut(5).activation(activation).build())
                       .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                  .nOut(3)
                                  .activation(Activation::SOFTMAX)
                                  .build())
                       .build()));
    for (LossFunction loss :
         {LossFunction::MEAN_ABSOLUTE_ERROR, LossFunction::L1, LossFunction::L2,
          LossFunction::HINGE, LossFunction::SQUARED_HINGE, LossFunction::KL_DIVERGENCE})
      CHECK(trains(
          NeuralNetConfiguration::Builder()
              .list()
              .layer(DenseLayer::Builder().nIn(4).nOut(5).build())
              .layer(OutputLayer::Builder(loss).nOut(3).activation(Activation::SOFTMAX).build())
              .build()));
    CHECK(trains(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(3).activation(Activation::IDENTITY).build())
            .layer(LossLayer::Builder(LossFunction::MCXENT).activation(Activation::SOFTMAX).build())
            .build()));
    for (const WeightInitScheme& init :
         {WeightInitScheme(WeightInit::LECUN_NORMAL), WeightInitScheme(WeightInit::LECUN_UNIFORM),
          WeightInitScheme(WeightInit::XAVIER_FAN_IN), WeightInitScheme(WeightInit::ONES)})
      CHECK(trains(NeuralNetConfiguration::Builder()
                       .weightInit(init)
                       .list()
                       .layer(DenseLayer::Builder().nIn(4).nOut(5).build())
                       .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                  .nOut(3)
                                  .activation(Activation::SOFTMAX)
                                  .build())
                       .build()));
    CHECK(trains(NeuralNetConfiguration::Builder()
                     .list()
                     .layer(DenseLayer::Builder()
                                .nIn(4)
                                .nOut(5)
                                .weightInit(NormalDistribution(0, 0.01))
                                .build())
                     .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                .nOut(3)
                                .weightInit(UniformDistribution(-0.1, 0.1))
                                .activation(Activation::SOFTMAX)
                                .build())
                     .build()));
    for (PoolingType pooling : {PoolingType::SUM, PoolingType::PNORM})
      CHECK(trains(NeuralNetConfiguration::Builder()
                       .list()
                       .layer(ConvolutionLayer::Builder(2, 2).nOut(2).build())
                       .layer(GlobalPoolingLayer::Builder(pooling).build())
                       .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                  .nOut(3)
                                  .activation(Activation::SOFTMAX)
                                  .build())
                       .setInputType(InputType::convolutionalFlat(2, 2, 1))
                       .build()));
  }

  TEST_CASE("Porting from DL4J: the model, iterator, serializer and inference cells run") {
    testutil::TempDir dir;
    const fs::path file = dir / "model.dl4cpp";
    MultiLayerConfiguration conf = smallConfiguration();
    MultiLayerNetwork model(conf);
    model.init();
    const std::vector<DataSet> list = {smallData(30)};
    const int batch = 10, queueSize = 2, epochs = 2;
    ListDataSetIterator source(list, batch);
    AsyncDataSetIterator async(source, queueSize);
    DataSetIterator& iter = async;

    model.setListeners({std::make_shared<ScoreIterationListener>(10)});
    model.fit(iter);
    model.fit(iter, epochs);
    const Tensor x = smallData(5).features;
    CHECK(model.output(x).shape() == Shape{5, 3});
    CHECK(std::isfinite(model.score()));
    const Tensor p = model.params().clone();
    CHECK(p.numel() == model.numParams());
    MultiLayerNetwork copy = model.clone();
    CHECK(copy.params().toVector() == p.toVector());
    model.setParams(p);
    Evaluation eval = model.evaluate(iter);
    CHECK(eval.stats().find("Accuracy") != std::string::npos);

    // Normalizers, fitted on an iterator and applied by it.
    {
      auto norm = std::make_shared<NormalizerStandardize>();
      norm->fit(iter);
      iter.setPreProcessor(norm);
      CHECK(iter.next().features.shape() == Shape{10, 4});
      auto minMax = std::make_shared<NormalizerMinMaxScaler>();
      minMax->fit(iter);
      CHECK(minMax->isFitted());
    }
    // DataSet shuffle and split.
    const DataSet allData = smallData(20);
    const uint64_t seed = 42;
    const DataSet::TrainTest split = allData.shuffled(seed).splitTestAndTrain(0.65);
    CHECK(split.train.numExamples() + split.test.numExamples() == 20);
    CHECK(allData.splitTestAndTrain(0.65).train.numExamples() == 13);

    // Model files, with and without a normalizer.
    ModelSerializer::writeModel(model, file, true);
    MultiLayerNetwork restored = ModelSerializer::restoreMultiLayerNetwork(file);
    CHECK(restored.params().toVector() == model.params().toVector());
    model.save(file);
    CHECK(MultiLayerNetwork::load(file).numParams() == model.numParams());
    {
      const auto scaler = std::make_shared<ImagePreProcessingScaler>(0, 1);
      const DataNormalization& norm = *scaler;
      ModelSerializer::addNormalizerToModel(file, norm);
      CHECK(ModelSerializer::restoreNormalizerFromFile(file) != nullptr);
    }

    // Inference from several threads' worth of requests, a model update, shutdown.
    {
      auto pi = parallel::ParallelInference::Builder(model)
                    .inferenceMode(InferenceMode::BATCHED)
                    .batchLimit(32)
                    .queueLimit(64)
                    .workers(2)
                    .build();
      const MultiLayerNetwork& m = restored;
      CHECK(pi.output(x).shape() == Shape{5, 3});
      pi.updateModel(m);
      pi.shutdown();
    }

    // The gradient check, on a double-checked small network.
    {
      GradientCheckUtil::Options options;
      options.maxChecksPerTensor = 8;
      const DataSet data = smallData(3);
      CHECK(GradientCheckUtil::checkGradients(model, data, options).passed);
    }

    // A layer type of user code: registered, round-tripped through JSON, trained.
    {
      using MyLayer = testutil::BatchStatsLayer;
      static_assert(std::is_base_of_v<dl4cpp::Layer, MyLayer>);
      static_assert(std::is_base_of_v<layers::RuntimeLayer, testutil::BatchStatsRuntime>);
      if (!LayerRegistry::instance().contains(MyLayer::kTypeName))
        LayerRegistry::instance().add<MyLayer>();
      const MultiLayerConfiguration custom = testutil::batchStatsNet(3);
      CHECK(MultiLayerConfiguration::fromJson(custom.toJson()) == custom);
    }

    // The error types, all of them dl4cpp::Error.
    static_assert(
        std::is_base_of_v<Error, dl4cpp::ConfigError> && std::is_base_of_v<Error, ShapeError> &&
        std::is_base_of_v<DataError, DataNotFoundError> &&
        std::is_base_of_v<DataError, DataFormatError> &&
        std::is_base_of_v<DataError, DataTruncatedError> &&
        std::is_base_of_v<DataError, DataMismatchError> &&
        std::is_base_of_v<DataFormatError, ChecksumError> &&
        std::is_base_of_v<DataFormatError, VersionError> && std::is_base_of_v<Error, IoError> &&
        std::is_base_of_v<Error, BackendError> && std::is_base_of_v<Error, NumericalError>);
  }

  TEST_CASE("Porting from DL4J: checkpoints, and a run resumed from the newest") {
    testutil::TempDir temp;
    const fs::path dir = temp / "checkpoints";
    const int64_t n = 2;
    const int keepLast = 2, epochs = 2, batch = 10;
    const std::vector<DataSet> list = {smallData(30)};
    {
      MultiLayerNetwork model(smallConfiguration());
      model.init();
      auto wrapper = parallel::ParallelWrapper::Builder(model)
                         .checkpointEvery(Checkpoint::iterations(n), dir, keepLast)
                         .workers(1)
                         .averagingFrequency(1)
                         .build();
      ListDataSetIterator iter(list, batch);
      wrapper.fit(iter);
    }
    REQUIRE(Checkpoints::latest(dir).has_value());
    CHECK(Checkpoints::list(dir).size() == 1);  // after iteration 2 of 3
    MultiLayerNetwork model = MultiLayerNetwork::load(*Checkpoints::latest(dir));
    CHECK(model.getEpochCount() == 0);
    auto wrapper =
        parallel::ParallelWrapper::Builder(model).workers(1).averagingFrequency(1).build();
    ListDataSetIterator iter(list, batch);
    wrapper.resume(iter, epochs);
    CHECK(model.getEpochCount() == epochs);
  }

  TEST_CASE("Porting from DL4J: MnistDataSetIterator mnistTrain(128, true, 123)") {
    try {
      MnistDataSetIterator mnistTrain(128, true, 123);
      CHECK(mnistTrain.totalExamples() == 60000);
      CHECK(mnistTrain.next().features.shape() == Shape{128, 784});
    } catch (const DataNotFoundError& e) {
      std::cout << "skipped: MNIST not found (scripts/get-mnist.sh): " << e.what() << "\n";
    }
  }

  TEST_CASE("Porting from DL4J: the DataVec cells run") {
    testutil::TempDir dir;
    const fs::path trainDir = dir / "images";
    for (int label = 0; label < 3; ++label)
      for (int i = 0; i < 10; ++i) {
        Image image(1, 28, 28);
        for (size_t k = 0; k < image.pixels.size(); ++k)
          image.pixels[k] = static_cast<float>((k * (label + 1) + static_cast<size_t>(i)) % 256);
        fs::create_directories(trainDir / std::to_string(label));
        ImageWriter::writePng(
            image, trainDir / std::to_string(label) / ("img_" + std::to_string(i) + ".png"));
      }

    const uint64_t seed = 42;
    FileSplit trainSplit(trainDir, NativeImageLoader::ALLOWED_FORMATS, seed);
    auto labelMaker = std::make_shared<ParentPathLabelGenerator>();
    auto byName = std::make_shared<PatternPathLabelGenerator>("_", 0);
    CHECK(byName->labelFor(trainSplit.locations()[0]) == "img");
    BalancedPathFilter pathFilter(seed, NativeImageLoader::ALLOWED_FORMATS, labelMaker);
    std::vector<InputSplit> parts = trainSplit.sample(pathFilter, 80, 20);
    CHECK(parts[0].length() == 24);

    auto transform =
        std::make_shared<PipelineImageTransform>(std::vector<PipelineImageTransform::Step>{
            {std::make_shared<FlipImageTransform>(seed), 0.5},
            {std::make_shared<RotateImageTransform>(10.0), 0.5},
            {std::make_shared<ScaleImageTransform>(0.1), 0.5},
            {std::make_shared<TranslateImageTransform>(2.0, 2.0), 0.5},
            {std::make_shared<BrightnessContrastTransform>(0.1, 0.1), 0.5}});
    const double probability = 1.0;
    const std::vector<PipelineImageTransform::Step> steps = {
        {transform, probability},
        {std::make_shared<CropImageTransform>(2), 0.5},
        {std::make_shared<RandomCropTransform>(24, 24), 0.5}};
    const bool shuffle = true;
    const auto pipeline = std::make_shared<PipelineImageTransform>(steps, shuffle);
    Image image(1, 28, 28);
    ExampleRandom random(seed, 0, 0);
    pipeline->transform(image, random);
    CHECK(image.channels == 1);
    {
      ImageRecordReader rr(28, 28, 1, labelMaker);
      rr.initialize(parts[0], transform);
      RecordReaderDataSetIterator it(rr, 64, 1, rr.numLabels());
      CHECK(rr.getLabels() == std::vector<std::string>{"0", "1", "2"});
      CHECK(it.next().features.shape() == Shape{24, 1, 28, 28});
      RecordReaderDataSetIterator fourThreads =
          RecordReaderDataSetIterator(rr, 64, 1, rr.numLabels(), {.decodeThreads = 4});
      CHECK(fourThreads.next().labels.shape() == Shape{24, 3});
    }
    {
      LabeledFileSplit all(trainDir);
      const LabeledFileSplit balanced = BalancedPathFilter(seed).filter(all);
      std::vector<LabeledFileSplit> splits = all.splitEachLabel({0.8, 0.2}, seed);
      ImageRecordReader reader(28, 28, 1, splits[0], transform);
      ImageDataSetIterator train(reader, 64, {.decodeThreads = 2, .seed = 42});
      CHECK(balanced.size() == 30);
      CHECK(train.next().features.shape() == Shape{24, 1, 28, 28});
    }
    const fs::path file = trainSplit.locations()[0];
    CHECK(NativeImageLoader(28, 28, 1).asMatrix(file).shape() == Shape{1, 1, 28, 28});
    CHECK(std::make_shared<ImagePreProcessingScaler>(0, 1)->getMaxRange() == 1.0);
  }

  TEST_CASE("Porting from DL4J: the CSV cells run (iris)") {
    if (!testutil::haveSklearnData()) return;
    const fs::path file = testutil::kSklearnData / "iris.csv";
    CSVRecordReader rr(1, ',');
    rr.initialize(FileSplit(file));
    RecordReaderDataSetIterator iterator(rr, 50, 4, 3);
    CHECK(iterator.next().labels.shape() == Shape{50, 3});
    CSVRecordReader values(1, ',');
    values.initialize(FileSplit(file));
    {
      CSVRecordReader& rr = values;
      RecordReaderDataSetIterator regression(rr, 50, 0, 0, true);
      const DataSet first = regression.next();
      CHECK(first.features.shape() == Shape{50, 4});
      CHECK(first.labels.shape() == Shape{50, 1});
    }
  }

  TEST_CASE("Porting from DL4J: a convolution per video frame through RnnToCnnPreProcessor") {
    MultiLayerNetwork model(NeuralNetConfiguration::Builder()
                                .list()
                                .layer(ConvolutionLayer::Builder(2, 2).nOut(3).build())
                                .layer(LSTM::Builder().nOut(4).build())
                                .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                           .nOut(2)
                                           .activation(Activation::SOFTMAX)
                                           .build())
                                .inputPreProcessor(0, RnnToCnnPreProcessor{4, 3, 2})
                                .setInputType(InputType::recurrent(24))
                                .build());
    model.init();
    CHECK((model.getConfiguration().preProcessors[1] == InputPreProcessor::CnnToRnn));
    CHECK(model.output(Tensor(Shape{2, 24, 5})).shape() == Shape{2, 2, 5});
  }
}

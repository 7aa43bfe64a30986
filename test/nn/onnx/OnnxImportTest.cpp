// ONNX import (nn/onnx/OnnxImport.h): models written by ONNX's own Python helper
// (test/nn/onnx/make_import_cases.py, one per operator form the importer maps, at opsets 11 to
// 17) imported and compared with ONNX Runtime on the same inputs (within 1e-4); the imported
// graph is an ordinary one (JSON, model file, frozen with trainable = false, trainable
// otherwise); every refusal is a ModelExchangeError naming the node, its operator and why.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <string>
#include <vector>

#include "TempDir.h"
#include "TestPaths.h"
#include "nn/onnx/OnnxExportTestUtil.h"
#include "nn/onnx/OnnxImport.h"
#include "nn/onnx/OnnxRuntimeRunner.h"

using namespace dl4cpp;
using testutil::randomTensor;

namespace {

constexpr const char* kPython = "/usr/bin/python3";

// Writes the helper's models into `dir`; false (with the skip line printed) where Debian's
// python3-onnx is not installed.
bool writeCases(const std::filesystem::path& dir) {
  const std::string probe = std::string(kPython) + " -c 'import onnx, numpy' >/dev/null 2>&1";
  if (std::system(probe.c_str()) != 0) {
    std::cout << "skipped: /usr/bin/python3 cannot import onnx (Debian's python3-onnx)\n";
    return false;
  }
  const auto script = testutil::ortScript().parent_path() / "make_import_cases.py";
  const std::string command =
      std::string(kPython) + " '" + script.string() + "' '" + dir.string() + "' >/dev/null";
  REQUIRE(std::system(command.c_str()) == 0);
  return true;
}

std::vector<std::filesystem::path> casesIn(const std::filesystem::path& dir, bool bad) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().extension() == ".onnx" &&
        (entry.path().filename().string().rfind("bad_", 0) == 0) == bad)
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

Tensor inputFor(const ComputationGraph& graph, int64_t batch, uint64_t seed) {
  return randomTensor(graph.getConfiguration().networkInputTypes.at(0).shape(batch), seed);
}

void writeBytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
}

// A length-delimited protobuf field.
std::string field(int number, const std::string& payload) {
  std::string out(1, char(number << 3 | 2));
  for (size_t n = payload.size();; n >>= 7) {
    out += char((n & 0x7f) | (n >= 0x80 ? 0x80 : 0));
    if (n < 0x80) break;
  }
  return out + payload;
}

}  // namespace

TEST_SUITE("nn/onnx") {
  TEST_CASE("OnnxImport: every supported operator form matches ONNX Runtime") {
    testutil::TempDir dir;
    if (!writeCases(dir.path())) return;
    if (testutil::skippedWithoutOnnxRuntime()) return;
    const auto files = casesIn(dir.path(), false);
    CHECK(files.size() >= 40);
    uint64_t seed = 1;
    for (const auto& file : files) {
      if (file.filename().string().starts_with("lstm_")) continue;  // the next test's
      INFO(file.filename().string());
      ComputationGraph graph = onnx::importModel(file);
      const Tensor x = inputFor(graph, 3, ++seed);
      const Tensor expected = graph.outputSingle(x);
      const auto actual = testutil::runInOnnxRuntime(file, {{"x", x}}, {"y"}, dir.path());
      testutil::checkSameOutputs(expected, actual.at(0), file.filename().string());
    }
  }

  TEST_CASE("OnnxImport: LSTM, peephole LSTM, RNN and bidirectional models match ONNX Runtime") {
    testutil::TempDir dir;
    if (!writeCases(dir.path())) return;
    if (testutil::skippedWithoutOnnxRuntime()) return;
    uint64_t seed = 100;
    int cases = 0;
    for (const auto& file : casesIn(dir.path(), false)) {
      if (!file.filename().string().starts_with("lstm_")) continue;
      INFO(file.filename().string());
      ComputationGraph graph = onnx::importModel(file);
      const Tensor x = inputFor(graph, 3, ++seed);
      const Tensor expected = graph.outputSingle(x);
      const auto actual = testutil::runInOnnxRuntime(file, {{"x", x}}, {"y"}, dir.path());
      testutil::checkSameOutputs(expected, actual.at(0), file.filename().string());
      ++cases;
    }
    CHECK(cases == 7);
  }

  TEST_CASE("OnnxImport: ParallelInference serves imported models as ONNX Runtime answers") {
    testutil::TempDir dir;
    if (!writeCases(dir.path())) return;
    if (testutil::skippedWithoutOnnxRuntime()) return;
    for (const char* name : {"lenet_like", "lstm_bidirectional_mean"}) {
      INFO(name);
      const auto file = dir / (std::string(name) + ".onnx");
      const ComputationGraph graph = onnx::importModel(file);
      auto inference = parallel::ParallelInference::Builder(graph)
                           .devices({Device::cpu()})
                           .inferenceMode(parallel::InferenceMode::BATCHED)
                           .workers(2)
                           .batchLimit(8)
                           .build();
      // Concurrent callers of different batch sizes: the worker batches them together.
      std::vector<Tensor> inputs;
      for (int64_t i = 0; i < 6; ++i) inputs.push_back(inputFor(graph, 1 + i % 3, 300 + i));
      std::vector<std::future<Tensor>> answers;
      for (const Tensor& x : inputs)
        answers.push_back(
            std::async(std::launch::async, [&inference, x] { return inference.output(x); }));
      for (size_t i = 0; i < inputs.size(); ++i) {
        const auto expected =
            testutil::runInOnnxRuntime(file, {{"x", inputs[i]}}, {"y"}, dir.path());
        testutil::checkSameOutputs(expected.at(0), answers[i].get(),
                                   std::string(name) + " request " + std::to_string(i));
      }
    }
  }

  TEST_CASE("OnnxImport: the imported graph is an ordinary trainable graph") {
    testutil::TempDir dir;
    if (!writeCases(dir.path())) return;
    const auto file = dir / "lenet_like.onnx";
    ComputationGraph graph = onnx::importModel(file);
    const ComputationGraphConfiguration& conf = graph.getConfiguration();
    // Gemm + Relu is one dense layer, MatMul + Add + Softmax at the output the OutputLayer.
    const auto& out = conf.vertices.at(conf.vertexIndex(conf.networkOutputs.at(0)));
    REQUIRE(out.isLayer());
    CHECK(out.layer->typeName() == "OutputLayer");
    for (const auto& v : conf.vertices)
      if (v.isLayer()) CHECK_FALSE(v.layer->frozen);

    // JSON and model files hold it as any graph.
    CHECK(ComputationGraphConfiguration::fromJson(conf.toJson()) == conf);
    onnx::importModelFile(file, dir / "lenet.dl4cpp");
    ComputationGraph restored = ModelSerializer::restoreComputationGraph(dir / "lenet.dl4cpp");
    const Tensor x = inputFor(graph, 4, 5);
    CHECK(testutil::maxAbsDifference(graph.outputSingle(x), restored.outputSingle(x)) == 0);

    // fit() changes the parameters of a trainable import, of a frozen one none.
    const DataSet batch(x, testutil::oneHot(4, 5, 6));
    const std::vector<float> before = graph.params().toVector();
    graph.fit(batch);
    CHECK(graph.params().toVector() != before);
    ComputationGraph frozen = onnx::importModel(file, {.trainable = false});
    for (const auto& v : frozen.getConfiguration().vertices)
      if (v.isLayer() && v.layer->numParams() > 0) CHECK(v.layer->frozen);
    const std::vector<float> frozenBefore = frozen.params().toVector();
    frozen.fit(batch);
    CHECK(frozen.params().toVector() == frozenBefore);

    // Fine-tuning as docs/onnx.md shows: the head (named after the ONNX output "y") replaced for
    // 3 classes, the features ("g": the Gemm + Relu) and everything before them frozen.
    ComputationGraph tuned =
        TransferLearning::GraphBuilder(graph)
            .fineTuneConfiguration(FineTuneConfiguration::Builder().updater(Adam(1e-2)).build())
            .setFeatureExtractor("g")
            .removeVertexAndConnections("y")
            .addLayer("newOut",
                      OutputLayer::Builder(LossFunction::MCXENT)
                          .nOut(3)
                          .activation(Activation::SOFTMAX)
                          .build(),
                      "g")
            .setOutputs("newOut")
            .build();
    const DataSet three(x, testutil::oneHot(4, 3, 7));
    const std::vector<float> tunedBefore = tuned.params().toVector();
    const double scoreBefore = tuned.score(three);
    for (int i = 0; i < 20; ++i) tuned.fit(three);
    CHECK(tuned.score(three) < scoreBefore);
    // The frozen layers' parameters are where they were, the new head's are not.
    const std::vector<float> tunedAfter = tuned.params().toVector();
    size_t offset = 0;
    int frozenLayers = 0;
    for (const auto& v : tuned.getConfiguration().vertices) {
      if (!v.isLayer()) continue;
      const auto n = static_cast<size_t>(v.layer->numParams());
      const bool same = std::equal(tunedBefore.begin() + offset, tunedBefore.begin() + offset + n,
                                   tunedAfter.begin() + offset);
      INFO(v.name);
      CHECK(same == v.layer->frozen);
      frozenLayers += v.layer->frozen && n > 0;
      offset += n;
    }
    CHECK(frozenLayers == 4);  // conv, batch norm, conv, dense
  }

  TEST_CASE("OnnxImport: what the importer cannot map is an error naming node, op and reason") {
    testutil::TempDir dir;
    if (!writeCases(dir.path())) return;
    const std::vector<std::pair<std::string, std::string>> expected{
        {"bad_unsupported_op", "node \"bad\" (Cos): operator not supported"},
        {"bad_opset10", "opset 10"},
        {"bad_grouped_conv", "node \"bad\" (Conv): grouped convolution"},
        {"bad_lstm_reverse",
         "node \"bad\" (LSTM): direction reverse (forward and bidirectional are imported)"},
        {"bad_bidirectional_split", "node \"bad\" (Transpose): a transpose other than"},
        {"bad_lstm_sequence_lens", "node \"bad\" (LSTM): sequence_lens"},
        {"bad_ceil_mode", "node \"bad\" (MaxPool): ceil_mode"},
        {"bad_reshape", "node \"bad\" (Reshape): a reshape other than"},
        {"bad_softmax_images_opset11", "node \"bad\" (Softmax): softmax over axis 1"},
        {"bad_broadcast_add", "node \"bad\" (Add): a constant operand must be one float"},
        {"bad_pad_reflect", "node \"bad\" (Pad): a mode other than constant"},
        {"bad_uneven_pool_pads", "node \"bad\" (AveragePool): uneven padding other than Same"},
        {"bad_reducesum_channels", "node \"bad\" (ReduceSum): a sum other than over H and W"},
        {"bad_zero_stride", "node \"bad\" (MaxPool): stride 0 out of range"},
        {"bad_huge_pad", "node \"bad\" (Pad): padding 1099511627776"},
        {"bad_elu_alpha", "node \"bad\" (Elu): alpha != 1"},
        {"bad_lrn_even", "node \"bad\" (LRN): size 2"},
    };
    CHECK(casesIn(dir.path(), true).size() == expected.size());
    for (const auto& [name, words] : expected) {
      INFO(name);
      CHECK_THROWS_WITH_AS(onnx::importModel(dir / (name + ".onnx")),
                           doctest::Contains(words.c_str()), ModelExchangeError);
    }
  }

  TEST_CASE("OnnxImport: garbage, truncated and missing files are typed errors") {
    testutil::TempDir dir;
    writeBytes(dir / "garbage.onnx", std::string(1000, '\xff'));
    CHECK_THROWS_WITH_AS(onnx::importModel(dir / "garbage.onnx"),
                         doctest::Contains("is not an ONNX model"), ModelExchangeError);
    writeBytes(dir / "empty.onnx", "");
    CHECK_THROWS_AS(onnx::importModel(dir / "empty.onnx"), ModelExchangeError);
    writeBytes(dir / "text.onnx", "ir_version: 8\ngraph { }\n");
    CHECK_THROWS_AS(onnx::importModel(dir / "text.onnx"), ModelExchangeError);
    // Well-formed protobuf nested far deeper than the parse limit: a graph whose node has an
    // attribute holding a graph whose node ..., 100 times.
    std::string graph;
    for (int i = 0; i < 100; ++i)
      graph = field(1, field(5, field(6, graph)));  // graph.node.attribute.g
    writeBytes(dir / "nested.onnx", field(7, graph));
    CHECK_THROWS_WITH_AS(onnx::importModel(dir / "nested.onnx"),
                         doctest::Contains("is not an ONNX model"), ModelExchangeError);
    CHECK_THROWS_AS(onnx::importModel(dir / "missing.onnx"), DataNotFoundError);

    if (!writeCases(dir.path())) return;
    std::ifstream in(dir / "lenet_like.onnx", std::ios::binary);
    const std::string whole((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (size_t cut : {whole.size() / 2, whole.size() - 3, size_t{10}}) {
      INFO("truncated to " << cut);
      writeBytes(dir / "truncated.onnx", whole.substr(0, cut));
      CHECK_THROWS_AS(onnx::importModel(dir / "truncated.onnx"), ModelExchangeError);
    }
  }
}

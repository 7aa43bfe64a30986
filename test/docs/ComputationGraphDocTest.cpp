// docs/computation-graph.md's code, compiled and run: its code block appears in this file as
// written there (spacing aside), and the first test case fails when it no longer does.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

#include "TestPaths.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;
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

}  // namespace

TEST_CASE("docs/computation-graph.md: its code is this file's") {
  const std::string doc = readText(kSourceDir / "docs" / "computation-graph.md");
  const size_t begin = doc.find("```cpp\n");
  REQUIRE(begin != std::string::npos);
  const size_t end = doc.find("```", begin + 7);
  REQUIRE(end != std::string::npos);
  const std::string block = withoutSpaces(doc.substr(begin + 7, end - begin - 7));
  const std::string self =
      withoutSpaces(readText(kSourceDir / "test" / "docs" / "ComputationGraphDocTest.cpp"));
  CHECK_MESSAGE(self.find(block) != std::string::npos,
                "docs/computation-graph.md's code block is not in ComputationGraphDocTest.cpp");
}

TEST_CASE("docs/computation-graph.md: the residual network trains") {
  // Three classes by the sign pattern of two features.
  Random random(1);
  Tensor x(Shape{60, 4}), y(Shape{60, 3});
  y.fill(0);
  for (int64_t r = 0; r < 60; ++r) {
    for (int64_t c = 0; c < 4; ++c) x.data()[r * 4 + c] = float(random.uniform(-1, 1));
    const int label = x.data()[r * 4] > 0 ? (x.data()[r * 4 + 1] > 0 ? 2 : 1) : 0;
    y.data()[r * 3 + label] = 1;
  }
  ListDataSetIterator iterator(DataSet(x, y), 20);
  const Tensor features = x.rows(0, 5);

  ComputationGraphConfiguration conf =
      NeuralNetConfiguration::Builder()
          .seed(42)
          .updater(Adam(1e-2))
          .graphBuilder()
          .addInputs("in")
          .setInputTypes(InputType::feedForward(4))
          .addLayer("dense", DenseLayer::Builder().nOut(16).activation(Activation::TANH).build(),
                    "in")
          .addLayer("inner", DenseLayer::Builder().nOut(16).activation(Activation::TANH).build(),
                    "dense")
          .addVertex("residual", ElementWiseVertex(ElementWiseVertex::Op::Add), "dense", "inner")
          .addLayer("out",
                    OutputLayer::Builder(LossFunction::MCXENT)
                        .nOut(3)
                        .activation(Activation::SOFTMAX)
                        .build(),
                    "residual")
          .setOutputs("out")
          .build();
  ComputationGraph net(conf);
  net.init();
  net.fit(iterator, 20);  // any DataSetIterator: one input, one output
  Tensor probabilities = net.outputSingle(features);
  std::cout << net.summary();

  CHECK(probabilities.shape() == Shape{5, 3});
  iterator.reset();
  CHECK(net.evaluate(iterator).accuracy() > 0.8);
}

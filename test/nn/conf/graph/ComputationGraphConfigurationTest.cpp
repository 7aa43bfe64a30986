// The graph builder: type inference through the graph, DL4J's added merge and preprocessors,
// typed errors naming the vertex for every bad graph, and the JSON round trip with its limits.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>

using namespace dl4cpp;

namespace {

DenseLayer dense(int64_t nOut) {
  return DenseLayer::Builder().nOut(nOut).activation(Activation::TANH).build();
}
OutputLayer output(int64_t nOut) {
  return OutputLayer::Builder(LossFunction::MCXENT)
      .nOut(nOut)
      .activation(Activation::SOFTMAX)
      .build();
}

GraphBuilder residual() {
  GraphBuilder b = NeuralNetConfiguration::Builder().seed(1).graphBuilder();
  b.addInputs("in")
      .setInputTypes(InputType::feedForward(4))
      .addLayer("d1", dense(6), "in")
      .addLayer("d2", dense(6), "d1")
      .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "d1", "d2")
      .addLayer("out", output(3), "add")
      .setOutputs("out");
  return b;
}

void requireError(const GraphBuilder& b, const std::string& part) {
  try {
    (void)b.build();
    FAIL("build() accepted the graph");
  } catch (const ConfigError& e) {
    INFO(e.what());
    CHECK(std::string(e.what()).find(part) != std::string::npos);
  }
}

}  // namespace

TEST_CASE("GraphBuilder: types flow through the graph and nIn is inferred") {
  const ComputationGraphConfiguration conf = residual().build();
  REQUIRE(conf.vertices.size() == 4);
  CHECK(conf.vertices[0].name == "d1");
  CHECK(conf.vertices[2].name == "add");
  CHECK(conf.vertices[2].outputType.toString() == "FeedForward(6)");
  const auto* d2 = dynamic_cast<const DenseLayer*>(conf.vertices[1].layer.get());
  REQUIRE(d2 != nullptr);
  CHECK(d2->nIn == 6);
  CHECK(d2->name == "d2");  // a graph's layer takes its vertex's name, as in DL4J
  CHECK(conf.numParams() == (4 * 6 + 6) + (6 * 6 + 6) + (6 * 3 + 3));
  CHECK(conf.summary().find("ElementWiseVertex") != std::string::npos);
}

TEST_CASE("GraphBuilder: images reaching a dense layer are flattened, several inputs merged") {
  const ComputationGraphConfiguration conf =
      NeuralNetConfiguration::Builder()
          .graphBuilder()
          .addInputs("image", "extra")
          .setInputTypes(InputType::convolutionalFlat(8, 8, 1), InputType::feedForward(5))
          .addLayer("conv", ConvolutionLayer::Builder(3, 3).nOut(2).build(), "image")
          .addLayer("flat", dense(7), "conv")
          .addLayer("dense", dense(4), "flat", "extra")
          .addLayer("out", output(2), "dense")
          .setOutputs("out")
          .build();
  const auto& v = conf.vertices;
  const int conv = conf.vertexIndex("conv"), flat = conf.vertexIndex("flat"),
            merge = conf.vertexIndex("dense-merge");
  REQUIRE(conv >= 0);
  REQUIRE(merge >= 0);
  CHECK((v[size_t(conv)].preProcessor == InputPreProcessor::FeedForwardToCnn));
  CHECK((v[size_t(flat)].preProcessor == InputPreProcessor::CnnToFeedForward));
  CHECK(v[size_t(flat)].layerInputType.toString() == "FeedForward(72)");
  CHECK(v[size_t(merge)].outputType.toString() == "FeedForward(12)");
  CHECK(v[size_t(conf.vertexIndex("dense"))].inputs == std::vector<std::string>{"dense-merge"});
}

TEST_CASE("GraphBuilder: a bad graph is a ConfigError naming the vertex") {
  auto base = [] {
    GraphBuilder b = NeuralNetConfiguration::Builder().graphBuilder();
    b.addInputs("in").setInputTypes(InputType::feedForward(4));
    return b;
  };
  {
    GraphBuilder b = base();
    b.addLayer("d", dense(3), "in").addLayer("d", output(2), "d").setOutputs("d");
    requireError(b, "duplicate name \"d\"");
  }
  {
    GraphBuilder b = base();
    b.addLayer("d", dense(3), "nowhere").addLayer("out", output(2), "d").setOutputs("out");
    requireError(b, "vertex \"d\" (DenseLayer): its input \"nowhere\" names no vertex");
  }
  {
    GraphBuilder b = base();
    b.addLayer("a", dense(3), "b")
        .addLayer("b", dense(3), "a")
        .addVertex("m", MergeVertex(), "in", "b")
        .addLayer("out", output(2), "m")
        .setOutputs("out");
    requireError(b, "is on a cycle");
  }
  {
    GraphBuilder b = base();
    b.addLayer("d", dense(3), "in")
        .addLayer("unused", dense(3), "d")
        .addLayer("out", output(2), "d")
        .setOutputs("out");
    requireError(b, "vertex \"unused\" (DenseLayer) is read by no vertex and is not an output");
  }
  {
    GraphBuilder b = base();
    b.addLayer("a", dense(3), "in")
        .addLayer("b", dense(5), "in")
        .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "a", "b")
        .addLayer("out", output(2), "add")
        .setOutputs("out");
    requireError(b, "vertex \"add\" (ElementWiseVertex): its inputs must have the same shape");
  }
  {
    GraphBuilder b = NeuralNetConfiguration::Builder().graphBuilder();
    b.addInputs("in")
        .setInputTypes(InputType::convolutional(8, 8, 1))
        .addLayer("c1", ConvolutionLayer::Builder(3, 3).nOut(2).build(), "in")
        .addLayer("c2", ConvolutionLayer::Builder(5, 5).nOut(2).build(), "in")
        .addVertex("merge", MergeVertex(), "c1", "c2")
        .addLayer("out", output(2), "merge")
        .setOutputs("out");
    requireError(b,
                 "vertex \"merge\" (MergeVertex): inputs must be all rows or all images of one "
                 "height and width");
  }
  {
    GraphBuilder b = base();
    b.addVertex("sub", ElementWiseVertex(ElementWiseVertex::Op::Subtract), "in", "in", "in")
        .addLayer("out", output(2), "sub")
        .setOutputs("out");
    requireError(b, "vertex \"sub\" (ElementWiseVertex) takes 2 inputs, got 3");
  }
  {
    GraphBuilder b = base();
    b.addVertex("s", SubsetVertex(2, 4), "in").addLayer("out", output(2), "s").setOutputs("out");
    requireError(b, "vertex \"s\" (SubsetVertex): the range 2..4");
  }
  {
    GraphBuilder b = base();
    b.addLayer("out", output(2), "in").addLayer("after", dense(2), "out").setOutputs("after");
    requireError(b, "vertex \"out\" (OutputLayer) computes a loss, so it must end the graph");
  }
  {
    GraphBuilder b = base();
    b.addLayer("out", output(2), "in").setOutputs("missing");
    requireError(b, "output \"missing\" names no vertex");
  }
}

TEST_CASE("ComputationGraphConfiguration: JSON round trip, and hostile JSON refused") {
  ComputationGraphConfiguration conf =
      NeuralNetConfiguration::Builder()
          .seed(7)
          .updater(Adam(1e-2))
          .graphBuilder()
          .addInputs("a", "b")
          .setInputTypes(InputType::feedForward(4), InputType::feedForward(4))
          .addVertex("sum", ElementWiseVertex(ElementWiseVertex::Op::Max), "a", "b")
          .addVertex("scaled", ScaleVertex(0.5), "sum")
          .addVertex("shifted", ShiftVertex(-1), "scaled")
          .addVertex("norm", L2NormalizeVertex(1e-6), "shifted")
          .addVertex("sub", SubsetVertex(1, 2), "norm")
          .addLayer("d", dense(3), "sub", "a")
          .addLayer("out", output(2), "d")
          .setOutputs("out")
          .build();
  const std::string json = conf.toJson();
  const ComputationGraphConfiguration back = ComputationGraphConfiguration::fromJson(json);
  CHECK(back == conf);
  CHECK(back.toJson() == json);
  CHECK(json.find("\"op\": \"Max\"") != std::string::npos);

  auto refuse = [](const std::string& text, const std::string& part) {
    try {
      (void)ComputationGraphConfiguration::fromJson(text);
      FAIL("fromJson accepted it");
    } catch (const ConfigError& e) {
      INFO(e.what());
      CHECK(std::string(e.what()).find(part) != std::string::npos);
    }
  };
  refuse(std::string(70, '[') + std::string(70, ']'), "nested more than 64 levels");
  refuse(std::string((16 << 20) + 1, ' '), "more than the");
  refuse("{\"format\": \"dl4cpp.MultiLayerConfiguration\"}", "$.format");
  std::string unknownVertex = json;
  unknownVertex.replace(unknownVertex.find("\"ScaleVertex\""), 13, "\"NoSuchVertex\"");
  refuse(unknownVertex, "unknown vertex type");
  std::string changedType = json;
  const size_t at = changedType.find("\"size\": 2");
  REQUIRE(at != std::string::npos);
  changedType.replace(at, 10, "\"size\": 3");
  refuse(changedType, "the file says");
  // Too many vertices: the count is checked before any vertex is read.
  std::string many =
      "{\"format\": \"dl4cpp.ComputationGraphConfiguration\", \"seed\": 0, \"defaults\": ";
  const std::string defaults = json.substr(json.find("\"defaults\": ") + 12);
  many += defaults.substr(0, defaults.find("\n  },") + 4);
  many += ", \"inputs\": [], \"vertices\": [";
  for (int i = 0; i < 70000; ++i) many += i ? ",0" : "0";
  many += "], \"outputs\": []}";
  refuse(many, "vertices, more than the 65536");
}

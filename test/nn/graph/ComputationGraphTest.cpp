// ComputationGraph: a chain graph equals MultiLayerNetwork bit for bit (with the CPU's fused
// steps), gradient checks on fan-out, merge, residual add, subset and two outputs (each failing on
// a corrupted vertex), multi-input/multi-output training, activation memory planning,
// reproducibility and clone().
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "TempDir.h"
#include "nn/graph/GraphTestData.h"
#include "nn/layers/VertexRuntime.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;
using testing::oneHot;
using testing::randomTensor;

namespace {

DenseLayer dense(int64_t nOut, Activation a = Activation::TANH) {
  return DenseLayer::Builder().nOut(nOut).activation(a).build();
}
OutputLayer softmaxOut(int64_t nOut) {
  return OutputLayer::Builder(LossFunction::MCXENT)
      .nOut(nOut)
      .activation(Activation::SOFTMAX)
      .build();
}

// A vertex whose backward pass is wrong by 10%: the gradient checks must notice.
class CorruptedScaleVertex : public GraphVertex {
 public:
  std::shared_ptr<GraphVertex> clone() const override {
    return std::make_shared<CorruptedScaleVertex>(*this);
  }
  std::string typeName() const override { return "CorruptedScaleVertex"; }
  InputType outputType(const std::string&, const std::vector<InputType>& in) const override {
    return in.front();
  }
  std::unique_ptr<layers::VertexRuntime> instantiate(const std::vector<InputType>&) const override {
    struct Runtime : layers::VertexRuntime {
      void forward(DeviceContext&, std::span<const Tensor> in, Tensor& out, bool) override {
        out.copyFrom(in[0]);
      }
      void backward(DeviceContext&, std::span<const Tensor>, const Tensor&, const Tensor& g,
                    std::span<Tensor> dx) override {
        if (dx[0].empty()) return;
        for (int64_t i = 0; i < g.numel(); ++i) dx[0].data()[i] = 1.1f * g.data()[i];
      }
    };
    return std::make_unique<Runtime>();
  }
};

GradientCheckUtil::Result check(const ComputationGraphConfiguration& conf,
                                const MultiDataSet& data) {
  ComputationGraph net(conf);
  net.init();
  return GradientCheckUtil::checkGradients(net, data);
}

// A graph with fan-out, a residual add, a merge, a subset, and the given vertex on one branch.
ComputationGraphConfiguration branchy(const GraphVertex& onBranch) {
  return NeuralNetConfiguration::Builder()
      .seed(11)
      .updater(Adam(1e-2))
      .graphBuilder()
      .addInputs("in")
      .setInputTypes(InputType::feedForward(5))
      .addLayer("d1", dense(6), "in")
      .addLayer("d2", dense(6), "d1")
      .addVertex("branch", onBranch, "d2")
      .addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "d1", "branch")
      .addVertex("sub", SubsetVertex(1, 4), "d1")
      .addVertex("merge", MergeVertex(), "add", "sub")
      .addLayer("out", softmaxOut(3), "merge")
      .setOutputs("out")
      .build();
}

}  // namespace

TEST_CASE("ComputationGraph: a chain graph trains to MultiLayerNetwork's bits, fused steps too") {
  const auto conv =
      ConvolutionLayer::Builder(5, 5).nOut(4).activation(Activation::IDENTITY).build();
  const auto pool = SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build();
  const auto d = DenseLayer::Builder().nOut(10).activation(Activation::RELU).dropOut(0.8).build();
  auto builder = [] {
    return NeuralNetConfiguration::Builder().seed(5).updater(Adam(1e-2)).l2(1e-4);
  };
  MultiLayerNetwork chain(builder()
                              .list()
                              .layer(conv)
                              .layer(pool)
                              .layer(d)
                              .layer(softmaxOut(3))
                              .setInputType(InputType::convolutionalFlat(12, 12, 1))
                              .build());
  ComputationGraph graph(builder()
                             .graphBuilder()
                             .addInputs("in")
                             .setInputTypes(InputType::convolutionalFlat(12, 12, 1))
                             .addLayer("conv", conv, "in")
                             .addLayer("pool", pool, "conv")
                             .addLayer("dense", d, "pool")
                             .addLayer("out", softmaxOut(3), "dense")
                             .setOutputs("out")
                             .build());
  chain.init();
  graph.init();
  REQUIRE(graph.numParams() == chain.numParams());
  CHECK(graph.params().toVector() == chain.params().toVector());
  for (int step = 0; step < 4; ++step) {
    const DataSet batch(randomTensor(Shape{8, 144}, 100 + step, 0, 1), oneHot(8, 3, 200 + step));
    chain.fit(batch);
    graph.fit(batch);
    CHECK(graph.score() == chain.score());
  }
  CHECK(graph.params().toVector() == chain.params().toVector());
  CHECK(graph.updaterState().toVector() == chain.updaterState().toVector());
  const Tensor x = randomTensor(Shape{3, 144}, 9, 0, 1);
  CHECK(graph.outputSingle(x).toVector() == chain.output(x).toVector());
}

TEST_CASE("ComputationGraph: gradient checks on fan-out, residual add, merge and subset") {
  const MultiDataSet data(DataSet(randomTensor(Shape{4, 5}, 1), oneHot(4, 3, 2)));
  for (const auto& [name, vertex] :
       std::vector<std::pair<std::string, std::shared_ptr<GraphVertex>>>{
           {"scale", std::make_shared<ScaleVertex>(0.7)},
           {"shift", std::make_shared<ShiftVertex>(0.3)},
           {"l2norm", std::make_shared<L2NormalizeVertex>()}}) {
    INFO(name);
    const auto result = check(branchy(*vertex), data);
    INFO(result.report);
    CHECK(result.passed);
    CHECK(result.checked == ComputationGraph(branchy(*vertex)).getConfiguration().numParams() + 20);
  }
  const auto broken = check(branchy(CorruptedScaleVertex()), data);
  INFO(broken.report);
  CHECK_FALSE(broken.passed);
}

TEST_CASE("ComputationGraph: gradient checks of the element-wise ops, and two outputs") {
  for (auto op :
       {ElementWiseVertex::Op::Add, ElementWiseVertex::Op::Subtract, ElementWiseVertex::Op::Product,
        ElementWiseVertex::Op::Average, ElementWiseVertex::Op::Max}) {
    INFO(nameOf(ElementWiseVertex::kOpNames, op));
    const auto conf = NeuralNetConfiguration::Builder()
                          .seed(3)
                          .graphBuilder()
                          .addInputs("a", "b")
                          .setInputTypes(InputType::feedForward(4), InputType::feedForward(3))
                          .addLayer("da", dense(5), "a")
                          .addLayer("db", dense(5), "b")
                          .addVertex("op", ElementWiseVertex(op), "da", "db")
                          .addLayer("out1", softmaxOut(3), "op")
                          .addLayer("out2", softmaxOut(2), "op", "db")
                          .setOutputs("out1", "out2")
                          .build();
    const MultiDataSet data({randomTensor(Shape{4, 4}, 5), randomTensor(Shape{4, 3}, 6)},
                            {oneHot(4, 3, 7), oneHot(4, 2, 8)});
    const auto result = check(conf, data);
    INFO(result.report);
    CHECK(result.passed);

    // The score is the sum of the outputs' mean losses.
    ComputationGraph net(conf);
    net.init();
    const double both = net.score(data);
    const std::vector<Tensor> outs = net.output(data.features);
    REQUIRE(outs.size() == 2);
    // Both outputs' cross-entropies, each a mean over the examples.
    double xent = 0;
    for (size_t o = 0; o < 2; ++o)
      for (int64_t i = 0; i < data.labels[o].numel(); ++i)
        if (data.labels[o].data()[i] == 1) xent -= std::log(double(outs[o].data()[i]));
    CHECK(both == doctest::Approx(xent / 4).epsilon(1e-5));
  }
}

TEST_CASE("ComputationGraph: multi-input, multi-output training is reproducible and learns") {
  auto make = [] {
    return ComputationGraph(
        NeuralNetConfiguration::Builder()
            .seed(21)
            .updater(Adam(2e-2))
            .graphBuilder()
            .addInputs("a", "b")
            .setInputTypes(InputType::feedForward(4), InputType::feedForward(4))
            .addLayer("shared", dense(8), "a", "b")
            .addLayer("h1", dense(8), "shared")
            .addVertex("res", ElementWiseVertex(ElementWiseVertex::Op::Add), "shared", "h1")
            .addLayer("out1", softmaxOut(2), "res")
            .addLayer("out2", softmaxOut(3), "shared")
            .setOutputs("out1", "out2")
            .build());
  };
  std::vector<MultiDataSet> batches;
  for (int i = 0; i < 4; ++i) {
    const Tensor a = randomTensor(Shape{16, 4}, 30 + i), b = randomTensor(Shape{16, 4}, 40 + i);
    Tensor y1(Shape{16, 2}), y2(Shape{16, 3});
    y1.fill(0);
    y2.fill(0);
    for (int64_t r = 0; r < 16; ++r) {
      y1.data()[r * 2 + (a.data()[r * 4] > b.data()[r * 4] ? 1 : 0)] = 1;
      y2.data()[r * 3 + (b.data()[r * 4 + 1] > 0.3f ? 2 : b.data()[r * 4 + 1] > -0.3f ? 1 : 0)] = 1;
    }
    batches.emplace_back(std::vector<Tensor>{a, b}, std::vector<Tensor>{y1, y2});
  }
  ComputationGraph first = make(), second = make();
  first.init();
  second.init();
  ListMultiDataSetIterator it1(batches), it2(batches);
  first.fit(it1, 1);
  const double initial = first.score(batches[0]);
  first.fit(it1, 30);
  second.fit(it2, 31);
  CHECK(first.params().toVector() == second.params().toVector());
  CHECK(first.score(batches[0]) < 0.6 * initial);
  CHECK(first.getEpochCount() == 31);
  CHECK(first.getIterationCount() == 124);

  ListMultiDataSetIterator eval(batches);
  const std::vector<Evaluation> evals = first.evaluate(eval);
  REQUIRE(evals.size() == 2);
  CHECK(evals[0].accuracy() > 0.8);

  const ComputationGraph copy = first.clone();
  CHECK(copy.params().toVector() == first.params().toVector());
  CHECK(copy.updaterState().toVector() == first.updaterState().toVector());
  ComputationGraph copy2 = first.clone();
  CHECK(copy2.output(batches[1].features)[1].toVector() ==
        first.output(batches[1].features)[1].toVector());
  CHECK_THROWS_AS(first.outputSingle(batches[1].features), ConfigError);
  CHECK_THROWS_AS(first.fit(MultiDataSet({batches[0].features[0]}, {batches[0].labels[0]})),
                  ShapeError);
}

// A small ResNet-style graph: a stem, three residual blocks (conv-BN-act-conv-BN + shortcut,
// then act), global average pooling, the output. Without `batchNorm`, no BN layers.
ComputationGraphConfiguration resnet(Activation act, bool batchNorm) {
  auto b = NeuralNetConfiguration::Builder().seed(2).updater(Sgd(0.05)).graphBuilder();
  b.addInputs("in").setInputTypes(InputType::convolutionalFlat(8, 8, 3));
  auto conv = [&](Activation a) {
    return ConvolutionLayer::Builder(3, 3).nOut(8).padding(1, 1).activation(a).build();
  };
  b.addLayer("stem", conv(act), "in");
  std::string previous = "stem";
  for (int block = 0; block < 3; ++block) {
    const std::string p = "b" + std::to_string(block) + "_";
    std::string last = p + "c1";
    b.addLayer(last, conv(batchNorm ? Activation::IDENTITY : act), previous);
    if (batchNorm) {
      b.addLayer(p + "bn1", BatchNormalization::Builder().activation(act).build(), last);
      last = p + "bn1";
    }
    b.addLayer(p + "c2", conv(Activation::IDENTITY), last);
    last = p + "c2";
    if (batchNorm) {
      b.addLayer(p + "bn2", BatchNormalization::Builder().activation(Activation::IDENTITY).build(),
                 last);
      last = p + "bn2";
    }
    b.addVertex(p + "add", ElementWiseVertex(ElementWiseVertex::Op::Add), last, previous)
        .addLayer(p + "act", ActivationLayer::Builder().activation(act).build(), p + "add");
    previous = p + "act";
  }
  b.addLayer("gap", GlobalPoolingLayer::Builder(PoolingType::AVG).build(), previous)
      .addLayer("out", softmaxOut(4), "gap")
      .setOutputs("out");
  return b.build();
}

TEST_CASE("ComputationGraph: gradient checks on a residual convolutional graph") {
  const DataSet batch(randomTensor(Shape{6, 192}, 3, 0, 1), oneHot(6, 4, 4));
  for (bool batchNorm : {false, true}) {
    INFO("batch norm: " << batchNorm);
    ComputationGraph net(resnet(Activation::TANH, batchNorm));
    net.init();
    // A dozen entries of every parameter tensor: a wrong gradient of any layer or vertex shows
    // in the entries it feeds, and CI runs this check at every ISA level.
    GradientCheckUtil::Options options;
    options.maxChecksPerTensor = 12;
    const auto result = GradientCheckUtil::checkGradients(net, MultiDataSet(batch), options);
    INFO(result.report);
    CHECK(result.passed);
  }
}

TEST_CASE("ComputationGraph: score(data, true) is the training loss, without a gradient") {
  // Batch normalisation uses the batch's statistics in training, its running ones otherwise.
  ComputationGraph net(resnet(Activation::TANH, true));
  net.init();
  const MultiDataSet batch(DataSet(randomTensor(Shape{6, 192}, 3, 0, 1), oneHot(6, 4, 4)));
  const std::vector<float> params = net.params().toVector();
  const double training = net.score(batch, true);
  const double inference = net.score(batch);
  CHECK(inference == net.score(batch, false));
  CHECK(std::fabs(training - inference) > 1e-3);
  CHECK(net.params().toVector() == params);
  const double fitted = net.computeGradientAndScore(batch) + net.calcRegularizationScore();
  CHECK(training == doctest::Approx(fitted).epsilon(1e-6));
}

TEST_CASE("ComputationGraph: activations share memory after their last reader") {
  ComputationGraph net(resnet(Activation::RELU, true));
  net.init();
  const auto inference = net.activationMemory(false), training = net.activationMemory(true);
  MESSAGE("ResNet-style graph, floats per example: inference peak "
          << inference.peak << " of " << inference.total << ", training peak " << training.peak
          << " of " << training.total);
  CHECK(inference.peak * 4 < inference.total);
  CHECK(training.peak < training.total);
  // Shared memory changes nothing: training runs, and repeated inference is stable.
  const DataSet batch(randomTensor(Shape{6, 192}, 3, 0, 1), oneHot(6, 4, 4));
  const Tensor before = net.outputSingle(batch.features);
  CHECK(net.outputSingle(batch.features).toVector() == before.toVector());
  const double first = net.score(batch);
  for (int i = 0; i < 10; ++i) net.fit(batch);
  CHECK(net.score(batch) < first);
}

TEST_CASE("ComputationGraph: frozen layers pass gradients without taking any") {
  DenseLayer frozen = dense(5);
  frozen.frozen = true;
  ComputationGraph net(NeuralNetConfiguration::Builder()
                           .seed(4)
                           .graphBuilder()
                           .addInputs("in")
                           .setInputTypes(InputType::feedForward(3))
                           .addLayer("d1", dense(5), "in")
                           .addLayer("frozen", frozen, "d1")
                           .addLayer("out", softmaxOut(2), "frozen")
                           .setOutputs("out")
                           .build());
  net.init();
  const MultiDataSet data(DataSet(randomTensor(Shape{4, 3}, 8), oneHot(4, 2, 9)));
  const auto result = GradientCheckUtil::checkGradients(net, data);
  INFO(result.report);
  CHECK(result.passed);
  const std::vector<float> before = net.params().toVector();
  net.fit(data);
  const std::vector<float> after = net.params().toVector();
  // d1 (3*5+5 values) changed; the frozen layer's 5*5+5 did not.
  CHECK(std::vector<float>(before.begin() + 20, before.begin() + 50) ==
        std::vector<float>(after.begin() + 20, after.begin() + 50));
  CHECK(std::vector<float>(before.begin(), before.begin() + 20) !=
        std::vector<float>(after.begin(), after.begin() + 20));
}

TEST_CASE("ComputationGraph: model files round-trip, and hostile files are typed errors") {
  testutil::TempDir dir;
  ComputationGraph net(branchy(ScaleVertex(0.5)));
  net.init();
  const MultiDataSet data(DataSet(randomTensor(Shape{4, 5}, 1), oneHot(4, 3, 2)));
  net.fit(data);
  net.fit(data);
  const auto path = dir.path() / "graph.dl4cpp";
  net.save(path);
  ComputationGraph back = ComputationGraph::load(path);
  CHECK(back.getConfiguration() == net.getConfiguration());
  CHECK(back.params().toVector() == net.params().toVector());
  CHECK(back.updaterState().toVector() == net.updaterState().toVector());
  CHECK(back.getIterationCount() == 2);
  // Training continues exactly.
  net.fit(data);
  back.fit(data);
  CHECK(back.params().toVector() == net.params().toVector());
  ComputationGraph viaSerializer = ModelSerializer::restoreComputationGraph(path, false);
  CHECK(viaSerializer.updaterState().toVector() != net.updaterState().toVector());

  std::vector<std::byte> bytes = ModelSerializer::toBytes(net, true);
  std::vector<std::byte> flipped = bytes;
  flipped[bytes.size() - 20] ^= std::byte{1};
  CHECK_THROWS_AS(ModelSerializer::restoreComputationGraphFromBytes(flipped), ChecksumError);
  CHECK_THROWS_AS(
      ModelSerializer::restoreComputationGraphFromBytes(std::span(bytes).first(bytes.size() - 3)),
      DataError);
  // A graph's file is no network's and the other way round: the format field says so.
  CHECK_THROWS_WITH_AS(ModelSerializer::restoreFromBytes(bytes),
                       doctest::Contains("expected \"dl4cpp.MultiLayerConfiguration\""),
                       ConfigError);
  MultiLayerNetwork mln(NeuralNetConfiguration::Builder()
                            .list()
                            .layer(DenseLayer::Builder().nIn(2).nOut(2).build())
                            .layer(softmaxOut(2))
                            .build());
  mln.init();
  CHECK_THROWS_WITH_AS(
      ModelSerializer::restoreComputationGraphFromBytes(ModelSerializer::toBytes(mln, true)),
      doctest::Contains("expected \"dl4cpp.ComputationGraphConfiguration\""), ConfigError);
}

// The layer registry and the contract a layer type fulfils in its own files: JSON fields,
// parameter and state specs, runtime object, forward context; shown with a type defined in this
// test, as user code would define one.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "../../TempDir.h"
#include "BatchStatsTestLayer.h"
#include "nn/conf/LayerRegistry.h"
#include "nn/layers/LayerTestUtil.h"

using namespace dl4cpp;

namespace {

DataSet rows(const std::vector<float>& features, int64_t size) {
  const int64_t n = static_cast<int64_t>(features.size()) / size;
  std::vector<float> labels(static_cast<size_t>(n * 2));
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<float>(i % 3) * 0.5f;
  return DataSet(Tensor::fromVector({n, size}, features), Tensor::fromVector({n, 2}, labels));
}

}  // namespace

TEST_SUITE("nn/conf") {
  TEST_CASE("LayerRegistry: the built-in layer types, and errors for unknown and duplicate ones") {
    const auto names = LayerRegistry::instance().typeNames();
    for (const char* builtin :
         {"ConvolutionLayer", "SubsamplingLayer", "DenseLayer", "OutputLayer", "GlobalPoolingLayer",
          "LocalResponseNormalization", "ZeroPaddingLayer", "LossLayer", "ActivationLayer"})
      CHECK(std::find(names.begin(), names.end(), builtin) != names.end());

    std::string json = testutil::batchStatsNet(3).toJson();
    testutil::registerBatchStatsLayer();
    const std::string renamed = "\"Nope\"";
    json.replace(json.find("\"test.BatchStats\""), std::string("\"test.BatchStats\"").size(),
                 renamed);
    const std::string message =
        testutil::thrownMessage<ConfigError>([&] { MultiLayerConfiguration::fromJson(json); });
    CHECK(message.find("$.layers[0].type") != std::string::npos);
    CHECK(message.find("unknown layer type \"Nope\"") != std::string::npos);
    CHECK(message.find("ConvolutionLayer") != std::string::npos);

    testutil::thrownMessage<ConfigError>([] { LayerRegistry::instance().add<DenseLayer>(); });
    LayerRegistry local;
    registerBuiltinLayers(local);
    // Every built-in type creates a layer of its own name.
    const auto localNames = local.typeNames();
    CHECK(localNames.size() >= 6);
    for (const std::string& name : localNames) CHECK(local.create(name)->typeName() == name);
    CHECK(local.create("DenseLayer")->typeName() == "DenseLayer");
    CHECK(local.create("test.BatchStats") == nullptr);
  }

  TEST_CASE("A layer type registered by user code round-trips through JSON and model files") {
    testutil::registerBatchStatsLayer();
    const MultiLayerConfiguration conf = testutil::batchStatsNet(3, 0.25);
    CHECK(conf.layers[0]->numParams() == 3);
    CHECK(conf.layers[0]->stateSize() == 6 + 3 + 1);
    const std::string json = conf.toJson();
    CHECK(json.find("\"initialG\": 0.25") != std::string::npos);
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(json);
    CHECK(parsed == conf);
    CHECK(dynamic_cast<const testutil::BatchStatsLayer&>(*parsed.layers[0]).initialG == 0.25);

    MultiLayerNetwork net(conf);
    net.init();
    CHECK(net.numParams() == 3 + 3 * 2 + 2);
    // Parameters from the spec's initial value, state from the state specs'.
    for (int i = 0; i < 3; ++i) CHECK(net.params().at(i) == 0.25f);
    REQUIRE(net.layerState().numel() == 10);
    // moments: means 0, variances 1 (a PooledMeanVariance segment's initVariance); mean 0; draw -1
    for (int i = 0; i < 3; ++i) CHECK(net.layerState().at(i) == 0.0f);
    for (int i = 3; i < 6; ++i) CHECK(net.layerState().at(i) == 1.0f);
    for (int i = 6; i < 9; ++i) CHECK(net.layerState().at(i) == 0.0f);
    CHECK(net.layerState().at(9) == -1.0f);
    REQUIRE(net.layerStateLayout().size() == 3);
    CHECK(net.layerStateLayout()[1].name == "mean");
    CHECK(net.layerStateLayout()[1].offset == 6);

    net.fit(rows({1, 2, 3, 3, 2, 1, 5, 5, 5, 0, 1, 2}, 3));
    // The training forward recorded the batch's moments: feature 0 holds 1, 3, 5, 0.
    CHECK(net.layerState().at(0) == doctest::Approx(2.25));
    CHECK(net.layerState().at(3) == doctest::Approx(3.6875));
    CHECK(net.layerState().at(6) == doctest::Approx(2.25));
    CHECK(net.layerState().at(9) >= 0.0f);

    testutil::TempDir dir;
    net.save(dir.path() / "user-layer.dl4cpp");
    MultiLayerNetwork loaded = MultiLayerNetwork::load(dir.path() / "user-layer.dl4cpp");
    CHECK(loaded.getConfiguration() == conf);
    CHECK(loaded.params().toVector() == net.params().toVector());
    CHECK(loaded.layerState().toVector() == net.layerState().toVector());
    CHECK(loaded.updaterState().toVector() == net.updaterState().toVector());
    const Tensor x = Tensor::fromVector({1, 3}, {0.5f, -1, 2});
    CHECK(loaded.output(x).toVector() == net.output(x).toVector());

    const MultiLayerNetwork copy = net.clone();
    CHECK(copy.layerState().toVector() == net.layerState().toVector());
  }

  TEST_CASE("A layer's forward stream: the same for the same seed, replica and iteration") {
    testutil::registerBatchStatsLayer();
    const DataSet batch = rows({1, 2, 3, 4, 5, 6}, 3);
    auto drawAfterOneStep = [&](uint64_t seed, int replica) {
      MultiLayerNetwork net(testutil::batchStatsNet(3, 0.5, seed));
      net.init();
      net.setReplicaIndex(replica);
      net.fit(batch);
      return net.layerState().at(9);
    };
    const float first = drawAfterOneStep(5, 0);
    CHECK(first == drawAfterOneStep(5, 0));
    CHECK(first == static_cast<float>(Random(ForwardContext::streamSeed(5, 0, 0, 0)).nextDouble()));
    CHECK(first != drawAfterOneStep(5, 1));
    CHECK(first != drawAfterOneStep(6, 0));
    // The next iteration draws from a new stream.
    MultiLayerNetwork net(testutil::batchStatsNet(3, 0.5, 5));
    net.init();
    net.fit(batch);
    net.fit(batch);
    CHECK(net.layerState().at(9) ==
          static_cast<float>(Random(ForwardContext::streamSeed(5, 0, 1, 0)).nextDouble()));
  }

  TEST_CASE("A user layer passes the numerical gradient check") {
    testutil::registerBatchStatsLayer();
    MultiLayerNetwork net(testutil::batchStatsNet(4, 0.8));
    net.init();
    const DataSet data = rows({0.3f, -0.2f, 0.5f, 0.1f, -0.4f, 0.6f, 0.2f, -0.1f}, 4);
    const auto result = GradientCheckUtil::checkGradients(net, data, {});
    INFO(result.report);
    CHECK(result.passed);
  }
}

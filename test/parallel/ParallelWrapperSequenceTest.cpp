#include <doctest/doctest.h>

#include <vector>

#include "nn/layers/SequenceTestUtil.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using testutil::VectorIterator;

namespace {

MultiLayerConfiguration lstmNet() {
  return NeuralNetConfiguration::Builder()
      .seed(5)
      .updater(Sgd(0.1))
      .list()
      .layer(LSTM::Builder().nOut(4).build())
      .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::recurrent(3))
      .build();
}

// lstmNet() with truncated BPTT in segments of 2 steps.
MultiLayerConfiguration truncatedLstmNet() {
  return NeuralNetConfiguration::Builder()
      .seed(5)
      .updater(Sgd(0.1))
      .list()
      .layer(LSTM::Builder().nOut(4).build())
      .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::recurrent(3))
      .backpropType(BackpropType::TruncatedBPTT)
      .tBPTTLength(2)
      .build();
}

// lstmNet() (or truncatedLstmNet()) as a chain ComputationGraph, initialised: the same parameters.
ComputationGraph lstmGraph(bool truncated = false) {
  ComputationGraph g(
      NeuralNetConfiguration::Builder()
          .seed(5)
          .updater(Sgd(0.1))
          .graphBuilder()
          .addInputs("in")
          .setInputTypes(InputType::recurrent(3))
          .addLayer("lstm", LSTM::Builder().nOut(4).build(), "in")
          .addLayer("out",
                    RnnOutputLayer::Builder(LossFunction::MCXENT)
                        .nOut(3)
                        .activation(Activation::SOFTMAX)
                        .build(),
                    "lstm")
          .setOutputs("out")
          .backpropType(truncated ? BackpropType::TruncatedBPTT : BackpropType::Standard)
          .tBPTTLength(2)
          .build());
  g.init();
  return g;
}

MultiLayerNetwork initialized(const MultiLayerConfiguration& conf) {
  MultiLayerNetwork m(conf);
  m.init();
  return m;
}

// `count` batches of 2 sequences of 6 steps; in each, the second sequence is 4 steps long,
// padded at the end with 7.0 features (which change the result unless the masks hide them).
std::vector<DataSet> paddedBatches(int count) {
  std::vector<DataSet> out;
  for (int b = 0; b < count; ++b) {
    DataSet batch = testutil::randomSequences(2, 3, 6, 3, 100 + static_cast<uint64_t>(b));
    const std::vector<float> mask{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    batch.featuresMask = Tensor::fromVector({2, 6}, mask);
    batch.labelsMask = batch.featuresMask.clone();
    for (int64_t k = 0; k < 3; ++k)
      for (int64_t s = 4; s < 6; ++s) batch.features.data()[(3 + k) * 6 + s] = 7.0f;
    out.push_back(batch);
  }
  return out;
}

std::vector<DataSet> withoutMasks(std::vector<DataSet> data) {
  for (DataSet& d : data) {
    d = DataSet(d.features.clone(), d.labels.clone());
  }
  return data;
}

}  // namespace

TEST_SUITE("parallel") {
  TEST_CASE("ParallelWrapper: masked LSTM batches train exactly as plain fit (1 worker)") {
    const auto data = paddedBatches(6);
    MultiLayerNetwork plain = initialized(lstmNet());
    VectorIterator plainData(data);
    plain.fit(plainData);

    MultiLayerNetwork root = initialized(lstmNet());
    auto wrapper = testutil::wrapperOnCpu(root).workers(1).averagingFrequency(2).build();
    VectorIterator wrapped(data);
    wrapper.fit(wrapped);
    CHECK(root.params().toVector() == plain.params().toVector());

    // The masks matter here: the same batches without them train to other parameters.
    MultiLayerNetwork unmasked = initialized(lstmNet());
    VectorIterator unmaskedData(withoutMasks(data));
    unmasked.fit(unmaskedData);
    CHECK_FALSE(unmasked.params().allClose(plain.params(), 1e-5f));
  }

  TEST_CASE("ParallelWrapper: a graph of masked LSTM sequences trains as plain fit (1 worker)") {
    const auto data = paddedBatches(6);
    ComputationGraph plain = lstmGraph();
    VectorIterator plainData(data);
    plain.fit(plainData);
    // The graph is the network's chain: the same parameters, masks honoured alike.
    MultiLayerNetwork network = initialized(lstmNet());
    VectorIterator networkData(data);
    network.fit(networkData);
    CHECK(plain.params().toVector() == network.params().toVector());

    ComputationGraph root = lstmGraph();
    auto wrapper = testutil::wrapperOnCpu(root).workers(1).averagingFrequency(2).build();
    VectorIterator wrapped(data);
    wrapper.fit(wrapped);
    CHECK(root.params().toVector() == plain.params().toVector());
  }

  TEST_CASE(
      "ParallelWrapper: 2 workers averaging every iteration on masked sequences, SGD = one model "
      "on the merged batches") {
    const auto data = paddedBatches(6);
    std::vector<DataSet> merged;
    for (size_t i = 0; i < data.size(); i += 2)
      merged.push_back(DataSet::merge({data[i], data[i + 1]}));
    MultiLayerNetwork single = initialized(lstmNet());
    VectorIterator big(merged);
    single.fit(big);

    MultiLayerNetwork root = initialized(lstmNet());
    auto wrapper = testutil::wrapperOnCpu(root).workers(2).averagingFrequency(1).build();
    VectorIterator small(data);
    wrapper.fit(small);
    CHECK(root.params().allClose(single.params(), 1e-5f));
    CHECK(root.getIterationCount() == 3);
  }

  TEST_CASE("ParallelWrapper: truncated BPTT on masked sequences, 1 worker = plain fit") {
    const auto data = paddedBatches(4);
    MultiLayerNetwork plain = initialized(truncatedLstmNet());
    VectorIterator plainData(data);
    plain.fit(plainData);
    CHECK(plain.getIterationCount() == 12);  // 3 segments of 2 steps per batch

    MultiLayerNetwork root = initialized(truncatedLstmNet());
    auto wrapper = testutil::wrapperOnCpu(root).workers(1).averagingFrequency(2).build();
    VectorIterator wrapped(data);
    wrapper.fit(wrapped);
    CHECK(root.params().toVector() == plain.params().toVector());

    // Truncation matters here: standard BPTT on the same batches ends elsewhere.
    MultiLayerNetwork standard = initialized(lstmNet());
    VectorIterator standardData(data);
    standard.fit(standardData);
    CHECK_FALSE(standard.params().allClose(plain.params(), 1e-5f));
  }

  TEST_CASE("ParallelWrapper: 2 workers each run truncated BPTT on their own batch, then average") {
    const auto data = paddedBatches(2);
    // What averaging after every batch must give: each batch fitted (3 segments, 3 updates) by
    // its own copy of the model, then the mean of the two.
    MultiLayerNetwork a = initialized(truncatedLstmNet()), b = initialized(truncatedLstmNet());
    a.fit(data[0]);
    b.fit(data[1]);
    const std::vector<float> pa = a.params().toVector(), pb = b.params().toVector();
    std::vector<float> mean(pa.size());
    for (size_t i = 0; i < pa.size(); ++i) mean[i] = (pa[i] + pb[i]) / 2;

    MultiLayerNetwork root = initialized(truncatedLstmNet());
    auto wrapper = testutil::wrapperOnCpu(root).workers(2).averagingFrequency(1).build();
    VectorIterator batches(data);
    wrapper.fit(batches);
    CHECK(root.params().allClose(Tensor::fromVector(root.params().shape(), mean), 1e-6f));
  }

  TEST_CASE("ParallelWrapper: 2 workers train a truncated-BPTT graph as they train the network") {
    const auto data = paddedBatches(4);
    MultiLayerNetwork net = initialized(truncatedLstmNet());
    ComputationGraph graph = lstmGraph(true);
    graph.setParams(net.params());
    auto netWrapper = testutil::wrapperOnCpu(net).workers(2).averagingFrequency(1).build();
    auto graphWrapper = testutil::wrapperOnCpu(graph).workers(2).averagingFrequency(1).build();
    VectorIterator netData(data), graphData(data);
    netWrapper.fit(netData);
    graphWrapper.fit(graphData);
    CHECK(graph.params().toVector() == net.params().toVector());

    ComputationGraph shared = lstmGraph(true);
    CHECK_THROWS_WITH_AS(testutil::wrapperOnCpu(shared)
                             .workers(2)
                             .trainingMode(parallel::TrainingMode::SHARED_GRADIENTS)
                             .build(),
                         doctest::Contains("truncated BPTT"), ConfigError);
  }

  TEST_CASE("ParallelWrapper: truncated BPTT with SHARED_GRADIENTS is a ConfigError") {
    MultiLayerNetwork root = initialized(truncatedLstmNet());
    CHECK_THROWS_AS(testutil::wrapperOnCpu(root)
                        .workers(2)
                        .trainingMode(parallel::TrainingMode::SHARED_GRADIENTS)
                        .build(),
                    ConfigError);
  }
}

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

// LSTM(4) -> RnnOutputLayer(3, softmax, MCXENT) over 3 features, with `backprop`'s settings.
MultiLayerNetwork lstmNetwork(const UpdaterParams& updater, BackpropType type, int64_t forward,
                              int64_t backward, uint64_t seed = 21) {
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(seed)
                            .updater(updater)
                            .list()
                            .layer(LSTM::Builder().nOut(4).build())
                            .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                       .nOut(3)
                                       .activation(Activation::SOFTMAX)
                                       .build())
                            .setInputType(InputType::recurrent(3))
                            .backpropType(type)
                            .tBPTTForwardLength(forward)
                            .tBPTTBackwardLength(backward)
                            .build());
  net.init();
  return net;
}

// Steps [from, from + length) of a (N, C, T) tensor.
Tensor steps(const Tensor& x, int64_t from, int64_t length) {
  const int64_t n = x.dim(0), c = x.dim(1), t = x.dim(2);
  std::vector<float> v;
  for (int64_t e = 0; e < n; ++e)
    for (int64_t k = 0; k < c; ++k)
      for (int64_t s = from; s < from + length; ++s) v.push_back(x.at((e * c + k) * t + s));
  return Tensor::fromVector({n, c, length}, v);
}

// Steps [from, from + length) of a (N, T) mask.
Tensor maskSteps(const Tensor& mask, int64_t from, int64_t length) {
  return steps(mask.reshape({mask.dim(0), 1, mask.dim(1)}), from, length)
      .reshape({mask.dim(0), length});
}

// The MCXENT loss of `out` against `labels` over steps [from, T) where `mask` (or every step) is
// real, divided by the number of sequences: the score of that segment.
double segmentLoss(const Tensor& out, const DataSet& batch, int64_t from) {
  const int64_t n = out.dim(0), c = out.dim(1), t = out.dim(2);
  double sum = 0;
  for (int64_t e = 0; e < n; ++e)
    for (int64_t s = from; s < t; ++s) {
      if (!batch.labelsMask.empty() && batch.labelsMask.at(e * t + s) == 0) continue;
      for (int64_t k = 0; k < c; ++k) {
        const int64_t i = (e * c + k) * t + s;
        sum -= batch.labels.at(i) * std::log(out.at(i));
      }
    }
  return sum / static_cast<double>(n);
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("Truncated BPTT: configuration, JSON round trip and length checks") {
    MultiLayerNetwork net = lstmNetwork(Sgd(0.1), BackpropType::TruncatedBPTT, 5, 3);
    const MultiLayerConfiguration& conf = net.getConfiguration();
    CHECK((conf.backpropType == BackpropType::TruncatedBPTT));
    CHECK(conf.tbpttFwdLength == 5);
    CHECK(conf.tbpttBackLength == 3);
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed == conf);
    CHECK((parsed.backpropType == BackpropType::TruncatedBPTT));
    CHECK(parsed.tbpttFwdLength == 5);
    CHECK(parsed.tbpttBackLength == 3);
    // DL4J's defaults.
    const MultiLayerConfiguration standard =
        lstmNetwork(Sgd(0.1), BackpropType::Standard, 20, 20).getConfiguration();
    CHECK((MultiLayerConfiguration::fromJson(standard.toJson()).backpropType ==
           BackpropType::Standard));
    CHECK_THROWS_AS(lstmNetwork(Sgd(0.1), BackpropType::TruncatedBPTT, 3, 4), ConfigError);
    CHECK_THROWS_AS(lstmNetwork(Sgd(0.1), BackpropType::TruncatedBPTT, 0, 0), ConfigError);
  }

  TEST_CASE("Truncated BPTT: a forward length >= the sequence's is standard BPTT") {
    MultiLayerNetwork standard = lstmNetwork(Adam(1e-2), BackpropType::Standard, 20, 20);
    MultiLayerNetwork truncated = lstmNetwork(Adam(1e-2), BackpropType::TruncatedBPTT, 6, 6);
    MultiLayerNetwork longer = lstmNetwork(Adam(1e-2), BackpropType::TruncatedBPTT, 9, 9);
    for (uint64_t b = 0; b < 3; ++b) {
      const DataSet batch = testutil::randomSequences(2, 3, 6, 3, 40 + b);
      standard.fit(batch);
      truncated.fit(batch);
      longer.fit(batch);
    }
    CHECK(truncated.params().toVector() == standard.params().toVector());
    CHECK(longer.params().toVector() == standard.params().toVector());
    CHECK(truncated.getIterationCount() == 3);
  }

  TEST_CASE("Truncated BPTT: one update per segment, the last one shorter") {
    MultiLayerNetwork net = lstmNetwork(Sgd(0.1), BackpropType::TruncatedBPTT, 4, 4);
    const std::vector<float> before = net.params().toVector();
    net.fit(testutil::randomSequences(2, 3, 10, 3, 5));  // segments of 4, 4 and 2 steps
    CHECK(net.getIterationCount() == 3);
    net.fit(testutil::randomSequences(2, 3, 8, 3, 6));
    CHECK(net.getIterationCount() == 5);
    CHECK(net.params().toVector() != before);

    // Standard BPTT: one update per batch.
    MultiLayerNetwork standard = lstmNetwork(Sgd(0.1), BackpropType::Standard, 4, 4);
    standard.fit(testutil::randomSequences(2, 3, 10, 3, 5));
    CHECK(standard.getIterationCount() == 1);
  }

  TEST_CASE("Truncated BPTT: the state is carried from one segment to the next, masks sliced") {
    // Without updates (NoOp) the score after fit is the last segment's: with the state carried
    // it is the loss of steps 3..5 of the whole sequence's output.
    DataSet batch = testutil::randomSequences(2, 3, 6, 3, 8);
    const std::vector<float> mask{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0};  // the second: 5 steps
    batch.featuresMask = Tensor::fromVector({2, 6}, mask);
    batch.labelsMask = batch.featuresMask.clone();
    MultiLayerNetwork net = lstmNetwork(NoOp(), BackpropType::TruncatedBPTT, 3, 3);
    net.fit(batch);
    CHECK(net.getIterationCount() == 2);
    const Tensor whole = net.output(batch.features, false, batch.featuresMask);
    const double carried = segmentLoss(whole, batch, 3);
    CHECK(net.score() == doctest::Approx(carried).epsilon(1e-5));

    // Segment 2 alone (the state starting at zero) scores otherwise: segment 1's input matters.
    DataSet second{steps(batch.features, 3, 3), steps(batch.labels, 3, 3)};
    second.featuresMask = maskSteps(batch.featuresMask, 3, 3);
    second.labelsMask = second.featuresMask.clone();
    const double fresh =
        segmentLoss(net.output(second.features, false, second.featuresMask), second, 0);
    CHECK(std::abs(fresh - carried) > 1e-3);

    // And the next batch starts from a zero state again: the same batch scores the same.
    net.fit(batch);
    CHECK(net.score() == doctest::Approx(carried).epsilon(1e-5));
  }

  TEST_CASE("Truncated BPTT: a shorter backward length gives another update") {
    const DataSet batch = testutil::randomSequences(2, 3, 6, 3, 9);
    MultiLayerNetwork full = lstmNetwork(Sgd(0.5), BackpropType::TruncatedBPTT, 6, 6);
    MultiLayerNetwork shorter = lstmNetwork(Sgd(0.5), BackpropType::TruncatedBPTT, 6, 2);
    full.fit(batch);
    shorter.fit(batch);
    CHECK(full.getIterationCount() == 1);
    CHECK(shorter.getIterationCount() == 1);
    CHECK_FALSE(full.params().allClose(shorter.params(), 1e-6f));
  }

  TEST_CASE("Truncated BPTT: SimpleRnn carries its state too") {
    DataSet batch = testutil::randomSequences(2, 3, 6, 3, 10);
    MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                              .seed(3)
                              .updater(NoOp())
                              .list()
                              .layer(SimpleRnn::Builder().nOut(4).build())
                              .layer(RnnOutputLayer::Builder(LossFunction::MCXENT)
                                         .nOut(3)
                                         .activation(Activation::SOFTMAX)
                                         .build())
                              .setInputType(InputType::recurrent(3))
                              .backpropType(BackpropType::TruncatedBPTT)
                              .tBPTTLength(2)
                              .build());
    net.init();
    net.fit(batch);
    CHECK(net.getIterationCount() == 3);
    CHECK(net.score() ==
          doctest::Approx(segmentLoss(net.output(batch.features), batch, 4)).epsilon(1e-5));
  }
}

#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "nn/conf/layers/Bidirectional.h"
#include "nn/conf/layers/LastTimeStep.h"
#include "nn/conf/layers/MaskZeroLayer.h"
#include "nn/layers/LayerCheckUtil.h"
#include "nn/layers/LayerTestUtil.h"
#include "nn/layers/SequenceTestUtil.h"

using namespace dl4cpp;

namespace {

// Sequences (3, 2, 5) whose masked steps (padding at the end, at the start, none) hold `value`.
DataSet paddedWith(float value, uint64_t seed) {
  DataSet data = testutil::randomSequences(3, 2, 5, 3, seed);
  const std::vector<float> mask{1, 1, 1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1};
  for (int64_t e = 0; e < 3; ++e)
    for (int64_t s = 0; s < 5; ++s)
      if (mask[size_t(e * 5 + s)] == 0)
        for (int64_t k = 0; k < 2; ++k) data.features.data()[(e * 2 + k) * 5 + s] = value;
  data.labelsMask = Tensor::fromVector({3, 5}, mask);
  return data;
}

}  // namespace

TEST_SUITE("nn/layers") {
  TEST_CASE("MaskZeroLayer: runs the wrapped layer as with the mask of its padding steps") {
    const LSTM lstm = LSTM::Builder().nOut(3).build();
    for (float value : {0.0f, -1.0f}) {
      CAPTURE(value);
      const DataSet data = paddedWith(value, 5);
      MultiLayerNetwork masked = testutil::sequenceNetwork(MaskZeroLayer(lstm, value), 2, 3);
      MultiLayerNetwork plain = testutil::sequenceNetwork(lstm, 2, 3);
      REQUIRE(masked.params().toVector() == plain.params().toVector());
      const Tensor expected = plain.output(data.features, false, data.labelsMask);
      CHECK(masked.output(data.features).allClose(expected, 1e-6f));
      // A step with some features equal to the value is real.
      DataSet partial = data;
      partial.features.data()[0] = value;
      CHECK(masked.output(partial.features)
                .allClose(plain.output(partial.features, false, data.labelsMask), 1e-6f));
    }
  }

  TEST_CASE("MaskZeroLayer: gradient check over zero-padded sequences") {
    const DataSet data = paddedWith(0.0f, 7);
    MultiLayerNetwork net =
        testutil::sequenceNetwork(MaskZeroLayer(SimpleRnn::Builder().nOut(3).build()), 2, 3);
    GradientCheckUtil::Options options;
    options.checkInputGradient = false;  // perturbing a padding value makes its step real
    const auto r = GradientCheckUtil::checkGradients(net, data, options);
    INFO(r.report);
    CHECK(r.passed);
    CHECK(r.checked == net.numParams());
    // Equal to the wrapped layer given the mask: the padded steps pass no gradient.
    DataSet explicitMask = data;
    explicitMask.featuresMask = data.labelsMask.clone();
    MultiLayerNetwork plain = testutil::sequenceNetwork(SimpleRnn::Builder().nOut(3).build(), 2, 3);
    CHECK(net.computeGradientAndScore(data) ==
          doctest::Approx(plain.computeGradientAndScore(explicitMask)).epsilon(1e-6));
    CHECK(net.gradient().allClose(plain.gradient(), 1e-6f));
  }

  TEST_CASE("MaskZeroLayer: builder, JSON and model-file round trip, typed errors") {
    const MaskZeroLayer built = MaskZeroLayer::Builder()
                                    .setUnderlying(LSTM::Builder().nOut(2).build())
                                    .setMaskValue(-1.5)
                                    .build();
    CHECK(built.maskingValue == -1.5);
    CHECK(MaskZeroLayer(LSTM::Builder().nOut(2).build()).maskingValue == 0.0);
    const MultiLayerConfiguration conf =
        NeuralNetConfiguration::Builder()
            .list()
            .layer(built)
            .layer(LastTimeStep(
                Bidirectional(Bidirectional::Mode::ADD, SimpleRnn::Builder().nOut(3).build())))
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(2)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::recurrent(2))
            .build();
    const MultiLayerConfiguration parsed = MultiLayerConfiguration::fromJson(conf.toJson());
    CHECK(parsed.toJson() == conf.toJson());
    CHECK(dynamic_cast<const MaskZeroLayer&>(*parsed.layers[0]).maskingValue == -1.5);

    MultiLayerNetwork net(conf);
    net.init();
    DataSet data = paddedWith(-1.5f, 3);
    MultiLayerNetwork restored =
        ModelSerializer::restoreFromBytes(ModelSerializer::toBytes(net, true));
    CHECK(restored.output(data.features).allClose(net.output(data.features), 1e-6f));

    testutil::expectConfigError(NeuralNetConfiguration::Builder()
                                    .list()
                                    .layer(MaskZeroLayer(DenseLayer::Builder().nOut(4).build()))
                                    .layer(RnnOutputLayer::Builder().nOut(2).build())
                                    .setInputType(InputType::recurrent(3)),
                                {"layer 0 (MaskZeroLayer)", "DenseLayer"});
    testutil::expectConfigError(
        NeuralNetConfiguration::Builder()
            .list()
            .layer(MaskZeroLayer(LSTM::Builder().nOut(4).build(), std::nan("")))
            .layer(RnnOutputLayer::Builder().nOut(2).build())
            .setInputType(InputType::recurrent(3)),
        {"layer 0 (MaskZeroLayer)", "maskingValue"});
  }
}

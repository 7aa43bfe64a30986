#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <vector>

#include "nn/tensor/Random.h"

using namespace dl4cpp;

namespace {

// Index sequences -> EmbeddingSequenceLayer -> LSTM -> GlobalPoolingLayer(`pooling`) -> softmax
// OutputLayer: one label per sequence.
MultiLayerNetwork classifier(PoolingType pooling) {
  MultiLayerNetwork net(NeuralNetConfiguration::Builder()
                            .seed(9)
                            .updater(Adam(2e-2))
                            .list()
                            .layer(EmbeddingSequenceLayer::Builder()
                                       .nIn(7)
                                       .nOut(3)
                                       .activation(Activation::IDENTITY)
                                       .build())
                            .layer(LSTM::Builder().nOut(4).build())
                            .layer(GlobalPoolingLayer::Builder(pooling).build())
                            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                       .nOut(2)
                                       .activation(Activation::SOFTMAX)
                                       .build())
                            .setInputType(InputType::recurrent(1))
                            .build());
  net.init();
  return net;
}

DataSet sequence(const std::vector<float>& indices, int label) {
  const auto t = static_cast<int64_t>(indices.size());
  Tensor labels(Shape{1, 2});
  labels.data()[label] = 1;
  return {Tensor::fromVector({1, 1, t}, indices), labels};
}

}  // namespace

TEST_SUITE("nn/multilayer") {
  TEST_CASE("Sequence classifier: a padded, masked batch equals its sequences one by one") {
    for (PoolingType pooling :
         {PoolingType::MAX, PoolingType::AVG, PoolingType::SUM, PoolingType::PNORM}) {
      CAPTURE(toString(pooling));
      MultiLayerNetwork net = classifier(pooling);
      const DataSet a = sequence({3, 1, 4}, 0), b = sequence({1, 5, 2, 6, 0}, 1);
      // a padded at the end with an index outside the vocabulary: never looked up.
      DataSet batch(Tensor::fromVector({2, 1, 5}, {3, 1, 4, 99, 99, 1, 5, 2, 6, 0}),
                    Tensor::fromVector({2, 2}, {1, 0, 0, 1}),
                    Tensor::fromVector({2, 5}, {1, 1, 1, 0, 0, 1, 1, 1, 1, 1}), Tensor());

      const double scoreA = net.score(a), scoreB = net.score(b);
      net.computeGradientAndScore(a);
      const std::vector<float> gradA = net.gradient().toVector();
      net.computeGradientAndScore(b);
      const std::vector<float> gradB = net.gradient().toVector();
      CHECK(net.computeGradientAndScore(batch) ==
            doctest::Approx((scoreA + scoreB) / 2).epsilon(1e-5));
      const std::vector<float> grad = net.gradient().toVector();
      REQUIRE(grad.size() == gradA.size());
      for (size_t i = 0; i < grad.size(); ++i) {
        INFO("parameter " << i);
        CHECK(grad[i] == doctest::Approx((gradA[i] + gradB[i]) / 2).epsilon(1e-4));
      }
      const Tensor out = net.output(batch.features, false, batch.featuresMask);
      const Tensor outA = net.output(a.features);
      CHECK(out.at(0) == doctest::Approx(outA.at(0)).epsilon(1e-5));
      CHECK(out.at(1) == doctest::Approx(outA.at(1)).epsilon(1e-5));
    }
  }

  TEST_CASE("Sequence classifier: learns which of two tokens a sequence holds, masked batches") {
    // Label 1 when index 5 occurs anywhere in the sequence: pooling over time must find it.
    MultiLayerNetwork net = classifier(PoolingType::MAX);
    Random random(4);
    std::vector<DataSet> parts;
    for (int e = 0; e < 64; ++e) {
      const int length = 2 + static_cast<int>(random.nextU64() % 6);
      const int label = e % 2;
      std::vector<float> indices;
      for (int s = 0; s < length; ++s) indices.push_back(float(random.nextU64() % 5));
      if (label == 1) indices[random.nextU64() % indices.size()] = 5;
      parts.push_back(sequence(indices, label));
    }
    const DataSet all = DataSet::merge(parts);  // padded to 7 steps, masked
    REQUIRE_FALSE(all.featuresMask.empty());
    for (int i = 0; i < 150; ++i) net.fit(all);
    ListDataSetIterator it(std::vector<DataSet>{all}, 16);
    CHECK(net.evaluate(it).accuracy() >= 0.95);
  }
}

// LayerProfiler + ProfilingObserver: every layer's ops are charged to that layer and phase, once
// per iteration, with analytic FLOPs; profiling changes no result; without a profiler nothing is
// recorded and the bare backend runs.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <chrono>

#include "nn/backend/DeviceContext.h"
#include "nn/backend/ProfilingObserver.h"
#include "nn/backend/cpu/CpuBackend.h"

using namespace dl4cpp;

namespace {

constexpr int64_t kBatch = 8;

// conv 3x3 (1 -> 4, 12x12 -> 10x10, HARDTANH), max pool 2x2 (-> 5x5), dense 100 -> 16 (TANH),
// output 16 -> 10 (softmax + NLL); l2 on the three weight tensors. (With IDENTITY, RELU or
// LEAKYRELU the convolution runs the pooling layer inside its own passes.)
MultiLayerConfiguration smallConvNet(Activation convActivation = Activation::HARDTANH) {
  return NeuralNetConfiguration::Builder()
      .seed(7)
      .updater(Nesterovs(0.01, 0.9))
      .l2(1e-4)
      .list()
      .layer(ConvolutionLayer::Builder(3, 3).nOut(4).activation(convActivation).build())
      .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
      .layer(DenseLayer::Builder().nOut(16).activation(Activation::TANH).build())
      .layer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                 .nOut(10)
                 .activation(Activation::SOFTMAX)
                 .build())
      .setInputType(InputType::convolutionalFlat(12, 12, 1))
      .build();
}

DataSet smallBatch() {
  Tensor features(Shape{kBatch, 144}), labels(Shape{kBatch, 10});
  for (int64_t i = 0; i < features.numel(); ++i)
    features.data()[i] = static_cast<float>(i % 17) / 17.0f;
  for (int64_t r = 0; r < kBatch; ++r) labels.data()[r * 10 + (r * 3) % 10] = 1;
  return {features, labels};
}

}  // namespace

TEST_SUITE("nn/profiling") {
  TEST_CASE(
      "LayerProfiler: each layer's phases are recorded once per iteration with analytic FLOPs") {
    MultiLayerNetwork model(smallConvNet(), Device::cpu(), 1);
    model.init();
    auto profiler = std::make_shared<LayerProfiler>();
    model.setProfiler(profiler);
    REQUIRE(model.getProfiler() == profiler.get());
    const DataSet batch = smallBatch();
    constexpr int64_t kIterations = 4;
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < kIterations; ++i) model.fit(batch);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    CHECK(profiler->iterations() == kIterations);
    CHECK(profiler->numLayers() == 4);
    using P = ProfilePhase;
    // Expected calls per iteration for [layer][phase] in ProfilePhase order: FORWARD,
    // ACTIVATION_FORWARD, LOSS, ACTIVATION_BACKWARD, BACKWARD_DATA, BACKWARD_WEIGHTS, UPDATER,
    // OTHER. The first layer computes no input gradient; the output layer's activation gradient is
    // fused into its loss; the updater runs once per parameter segment (W and b).
    const int perIteration[4][kProfilePhaseCount] = {{1, 1, 0, 1, 0, 1, 2, 0},   // convolution
                                                     {1, 0, 0, 0, 1, 0, 0, 0},   // max pooling
                                                     {1, 1, 0, 1, 1, 1, 2, 0},   // dense
                                                     {1, 1, 1, 0, 1, 1, 2, 0}};  // output
    for (int layer = 0; layer < 4; ++layer)
      for (int phase = 0; phase < kProfilePhaseCount; ++phase) {
        CAPTURE(layer);
        CAPTURE(profilePhaseName(static_cast<P>(phase)));
        const PhaseTotals t = profiler->totals(layer, static_cast<P>(phase));
        CHECK(t.calls == perIteration[layer][phase] * kIterations);
        if (t.calls > 0)
          CHECK(t.seconds > 0);
        else
          CHECK(t.seconds == 0);
      }
    // The network's own ops: staging the batch, gradient scaling, and one call for the l2 sums of
    // squares together with the finite-gradient check.
    CHECK(profiler->totals(LayerProfiler::kNetwork, P::OTHER).calls == 3 * kIterations);

    // conv: 2 * N * O * outH * outW * C * kH * kW; dense: 2 * N * nIn * nOut.
    const double conv = 2.0 * kBatch * 4 * 10 * 10 * 1 * 3 * 3;
    const double dense = 2.0 * kBatch * 100 * 16, output = 2.0 * kBatch * 16 * 10;
    CHECK(profiler->totals(0, P::FORWARD).flops == doctest::Approx(kIterations * conv));
    CHECK(profiler->totals(0, P::BACKWARD_WEIGHTS).flops == doctest::Approx(kIterations * conv));
    CHECK(profiler->totals(1, P::FORWARD).flops == 0);
    for (P phase : {P::FORWARD, P::BACKWARD_DATA, P::BACKWARD_WEIGHTS}) {
      CHECK(profiler->totals(2, phase).flops == doctest::Approx(kIterations * dense));
      CHECK(profiler->totals(3, phase).flops == doctest::Approx(kIterations * output));
    }
    CHECK(profiler->totalSeconds() > 0);
    CHECK(profiler->totalSeconds() <= wall);

    profiler->reset();
    CHECK(profiler->empty());
    CHECK(profiler->iterations() == 0);
    CHECK(profiler->totals(0, P::FORWARD).calls == 0);
    model.fit(batch);
    CHECK(profiler->totals(0, P::FORWARD).calls == 1);
    CHECK(profiler->iterations() == 1);
  }

  TEST_CASE("LayerProfiler: a convolution fused with its MAX pooling layer is charged for both") {
    for (Activation activation : {Activation::IDENTITY, Activation::RELU}) {
      CAPTURE(toString(activation));
      MultiLayerNetwork model(smallConvNet(activation), Device::cpu(), 1);
      model.init();
      auto profiler = std::make_shared<LayerProfiler>();
      model.setProfiler(profiler);
      constexpr int64_t kIterations = 3;
      for (int i = 0; i < kIterations; ++i) model.fit(smallBatch());
      using P = ProfilePhase;
      // One fused forward call (the activation inside it) and one fused weight-gradient call;
      // ReLU's backward pass, on the pooled gradient, is one activation call; the pooling layer
      // records nothing, its gradient into the convolution's output included.
      const int relu = activation == Activation::RELU ? 1 : 0;
      const int perIteration[2][kProfilePhaseCount] = {{1, 0, 0, relu, 0, 1, 2, 0},
                                                       {0, 0, 0, 0, 0, 0, 0, 0}};
      for (int layer = 0; layer < 2; ++layer)
        for (int phase = 0; phase < kProfilePhaseCount; ++phase) {
          CAPTURE(layer);
          CAPTURE(profilePhaseName(static_cast<P>(phase)));
          CHECK(profiler->totals(layer, static_cast<P>(phase)).calls ==
                perIteration[layer][phase] * kIterations);
        }
      const double conv = 2.0 * kBatch * 4 * 10 * 10 * 1 * 3 * 3;
      CHECK(profiler->totals(0, P::FORWARD).flops == doctest::Approx(kIterations * conv));
      CHECK(profiler->totals(0, P::BACKWARD_WEIGHTS).flops == doctest::Approx(kIterations * conv));
    }
  }

  TEST_CASE(
      "LayerProfiler: a fused pair after the first layer charges its pooling gradient to the "
      "pooling layer") {
    // Its input gradient is needed, so the step's backward pass runs the layers' ops: pooling's
    // into the convolution's output gradient, then the convolution's two gradients.
    MultiLayerNetwork model(
        NeuralNetConfiguration::Builder()
            .seed(7)
            .list()
            .layer(ConvolutionLayer::Builder(3, 3).nOut(2).activation(Activation::RELU).build())
            .layer(ConvolutionLayer::Builder(3, 3).nOut(4).activation(Activation::IDENTITY).build())
            .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
            .layer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD)
                       .nOut(10)
                       .activation(Activation::SOFTMAX)
                       .build())
            .setInputType(InputType::convolutionalFlat(12, 12, 1))
            .build(),
        Device::cpu(), 1);
    model.init();
    auto profiler = std::make_shared<LayerProfiler>();
    model.setProfiler(profiler);
    model.fit(smallBatch());
    using P = ProfilePhase;
    const int calls[2][kProfilePhaseCount] = {{1, 0, 0, 0, 1, 1, 2, 0},   // convolution
                                              {0, 0, 0, 0, 1, 0, 0, 0}};  // max pooling
    for (int layer = 1; layer <= 2; ++layer)
      for (int phase = 0; phase < kProfilePhaseCount; ++phase) {
        CAPTURE(layer);
        CAPTURE(profilePhaseName(static_cast<P>(phase)));
        CHECK(profiler->totals(layer, static_cast<P>(phase)).calls == calls[layer - 1][phase]);
      }
    const double conv = 2.0 * kBatch * 4 * 8 * 8 * 2 * 3 * 3;
    for (P phase : {P::FORWARD, P::BACKWARD_DATA, P::BACKWARD_WEIGHTS})
      CHECK(profiler->totals(1, phase).flops == doctest::Approx(conv));
  }

  TEST_CASE("LayerProfiler: profiling changes no result (bit-identical parameters and scores)") {
    MultiLayerNetwork plain(smallConvNet(), Device::cpu(), 1),
        profiled(smallConvNet(), Device::cpu(), 1);
    plain.init();
    profiled.init();
    profiled.setProfiler(std::make_shared<LayerProfiler>());
    const DataSet batch = smallBatch();
    for (int i = 0; i < 3; ++i) {
      plain.fit(batch);
      profiled.fit(batch);
      CHECK(plain.score() == profiled.score());
    }
    const Tensor a = plain.params(), b = profiled.params();
    int64_t differing = 0;
    for (int64_t i = 0; i < a.numel(); ++i) differing += a.data()[i] != b.data()[i];
    CHECK(differing == 0);
  }

  TEST_CASE("LayerProfiler: without a profiler nothing is recorded and no observer runs") {
    MultiLayerNetwork model(smallConvNet(), Device::cpu(), 1);
    model.init();
    CHECK(model.getProfiler() == nullptr);
    CHECK(model.context().backend().observer() == nullptr);

    auto profiler = std::make_shared<LayerProfiler>();
    model.setProfiler(profiler);
    CHECK(dynamic_cast<ProfilingObserver*>(model.context().backend().observer()) != nullptr);
    model.setProfiler(nullptr);
    CHECK(model.getProfiler() == nullptr);
    CHECK(model.context().backend().observer() == nullptr);
    const DataSet batch = smallBatch();
    model.fit(batch);
    model.output(batch.features);
    CHECK(profiler->empty());
    CHECK(profiler->iterations() == 0);
    CHECK(profiler->numLayers() == 0);
  }

  TEST_CASE("LayerProfiler: inference is charged to forward phases only, unknown cells read zero") {
    MultiLayerNetwork model(smallConvNet(), Device::cpu(), 1);
    model.init();
    auto profiler = std::make_shared<LayerProfiler>();
    model.setProfiler(profiler);
    model.output(smallBatch().features);
    CHECK(profiler->iterations() == 0);  // output() is not a training iteration
    for (int layer = 0; layer < 4; ++layer) {
      CHECK(profiler->totals(layer, ProfilePhase::FORWARD).calls == 1);
      CHECK(profiler->totals(layer, ProfilePhase::BACKWARD_DATA).calls == 0);
      CHECK(profiler->totals(layer, ProfilePhase::UPDATER).calls == 0);
    }
    CHECK(profiler->totals(LayerProfiler::kNetwork, ProfilePhase::OTHER).calls == 1);  // staging
    CHECK(profiler->totals(17, ProfilePhase::FORWARD).calls == 0);
    CHECK(profiler->totals(-5, ProfilePhase::FORWARD).calls == 0);
    CHECK(profilePhaseName(ProfilePhase::BACKWARD_WEIGHTS) == "backward weights");
  }

  TEST_CASE("LayerProfiler: a graph charges its layers, and its vertices to the network") {
    // input (12) -> dense "a" (12) -> add(input, a) -> output (3): a fan-out and a residual add.
    auto b = NeuralNetConfiguration::Builder().seed(3).updater(Sgd(0.1)).graphBuilder();
    b.addInputs("in").setInputTypes(InputType::feedForward(12));
    b.addLayer("a", DenseLayer::Builder().nOut(12).activation(Activation::TANH).build(), "in");
    b.addVertex("add", ElementWiseVertex(ElementWiseVertex::Op::Add), "in", "a");
    b.addLayer(
        "out",
        OutputLayer::Builder(LossFunction::MCXENT).nOut(3).activation(Activation::SOFTMAX).build(),
        "add");
    const ComputationGraphConfiguration conf = b.setOutputs("out").build();
    ComputationGraph plain(conf), profiled(conf);
    plain.init();
    profiled.init();
    CHECK(profiled.getProfiler() == nullptr);
    auto profiler = std::make_shared<LayerProfiler>();
    profiled.setProfiler(profiler);
    CHECK(profiled.getProfiler() == profiler.get());

    Tensor features(Shape{kBatch, 12}), labels(Shape{kBatch, 3});
    for (int64_t i = 0; i < features.numel(); ++i)
      features.data()[i] = static_cast<float>(i % 7) / 7.0f;
    for (int64_t r = 0; r < kBatch; ++r) labels.data()[r * 3 + r % 3] = 1;
    const DataSet batch(features, labels);
    for (int i = 0; i < 2; ++i) {
      plain.fit(batch);
      profiled.fit(batch);
    }
    CHECK(profiler->iterations() == 2);
    // Layers in layerNames() order: "a", "out".
    REQUIRE(profiled.layerNames() == std::vector<std::string>{"a", "out"});
    for (int layer = 0; layer < 2; ++layer) {
      CAPTURE(layer);
      CHECK(profiler->totals(layer, ProfilePhase::FORWARD).calls == 2);
      CHECK(profiler->totals(layer, ProfilePhase::BACKWARD_WEIGHTS).calls == 2);
    }
    // The add vertex forward, its backward and the sum at the input's fan-out: the network's.
    CHECK(profiler->totals(LayerProfiler::kNetwork, ProfilePhase::FORWARD).calls >= 2);
    CHECK(profiled.params().toVector() == plain.params().toVector());

    profiled.setProfiler(nullptr);
    CHECK(profiled.getProfiler() == nullptr);
    const auto before = profiler->totals(0, ProfilePhase::FORWARD).calls;
    profiled.fit(batch);
    CHECK(profiler->totals(0, ProfilePhase::FORWARD).calls == before);
  }
}

// FineTuneConfiguration: which fields reach which layers (DL4J's base layers), DL4J's rule for
// regularisation (replace when set above 0, remove when set to 0), and the defaults it hands to
// added layers.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

using namespace dl4cpp;

namespace {

// A resolved layer of each kind the rules tell apart.
MultiLayerConfiguration everyKind() {
  return NeuralNetConfiguration::Builder()
      .seed(1)
      .activation(Activation::TANH)
      .updater(Sgd(0.1))
      .l1(1e-4)
      .l2(1e-3)
      .l1Bias(2e-4)
      .weightDecayBias(3e-4)
      .list()
      .layer(ConvolutionLayer::Builder(3, 3).nOut(2).build())
      .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
      .layer(ActivationLayer::Builder(Activation::ELU).build())
      .layer(BatchNormalization::Builder().build())
      .layer(DenseLayer::Builder().nOut(4).build())
      .layer(LossLayer::Builder(LossFunction::MSE).activation(Activation::IDENTITY).build())
      .setInputType(InputType::convolutionalFlat(6, 6, 1))
      .build();
}

// Layer `i` of everyKind() after `fineTune`.
std::shared_ptr<Layer> tuned(const FineTuneConfiguration& fineTune, size_t i) {
  std::shared_ptr<Layer> layer = everyKind().layers[i]->clone();
  fineTune.applyTo(*layer);
  return layer;
}

}  // namespace

TEST_SUITE("nn/transferlearning") {
  TEST_CASE("FineTuneConfiguration: layer settings reach DL4J's base layers only") {
    const FineTuneConfiguration fineTune =
        FineTuneConfiguration::Builder()
            .activation(Activation::RELU)
            .updater(Adam(1e-3))
            .biasUpdater(Sgd(0.5))
            .dropOut(0.9)
            .weightInit(WeightInit::RELU)
            .biasInit(0.1)
            .gradientNormalization(GradientNormalization::ClipL2PerLayer)
            .gradientNormalizationThreshold(2)
            .convolutionMode(ConvolutionMode::Same)
            .build();
    // Convolution, batch normalisation, dense and the loss layer: base layers.
    for (size_t i : {0, 3, 4, 5}) {
      INFO("layer " << i);
      const auto layer = tuned(fineTune, i);
      CHECK((*layer->activation == Activation::RELU));
      CHECK((layer->updater->kind == UpdaterKind::ADAM));
      CHECK((layer->biasUpdater->kind == UpdaterKind::SGD));
      CHECK(*layer->dropOut == 0.9);
      CHECK(*layer->weightInit == WeightInitScheme(WeightInit::RELU));
      CHECK(*layer->biasInit == 0.1);
      CHECK((*layer->gradientNormalization == GradientNormalization::ClipL2PerLayer));
      CHECK(*layer->gradientNormalizationThreshold == 2);
    }
    // Subsampling and activation layers keep theirs (the activation layer's is its function).
    const MultiLayerConfiguration original = everyKind();
    for (size_t i : {1, 2}) {
      INFO("layer " << i);
      const auto layer = tuned(fineTune, i);
      const Layer& before = *original.layers[i];
      CHECK((*layer->activation == *before.activation));
      CHECK((layer->updater->kind == UpdaterKind::SGD));
      CHECK(*layer->dropOut == *before.dropOut);
    }
    // convolutionMode goes to convolution and subsampling layers.
    CHECK((*std::dynamic_pointer_cast<ConvolutionLayer>(tuned(fineTune, 0))->convolutionMode ==
           ConvolutionMode::Same));
    CHECK((*std::dynamic_pointer_cast<SubsamplingLayer>(tuned(fineTune, 1))->convolutionMode ==
           ConvolutionMode::Same));
  }

  TEST_CASE("FineTuneConfiguration: regularisation set above 0 replaces, set to 0 removes") {
    // The dense layer has l1 1e-4 and l2 1e-3 on its weights, l1Bias 2e-4 and weight decay 3e-4
    // on its bias.
    const auto l2Only = tuned(FineTuneConfiguration::Builder().l2(5e-3).build(), 4);
    CHECK(*l2Only->l2 == 5e-3);
    CHECK(*l2Only->l1 == 0);
    CHECK(l2Only->weightDecay->coeff == 0);
    CHECK(*l2Only->l1Bias == 2e-4);  // the biases' terms are a group of their own
    CHECK(l2Only->weightDecayBias->coeff == 3e-4);

    const auto noL1 = tuned(FineTuneConfiguration::Builder().l1(0).l2Bias(0).build(), 4);
    CHECK(*noL1->l1 == 0);
    CHECK(*noL1->l2 == 1e-3);
    CHECK(*noL1->l2Bias == 0);
    CHECK(*noL1->l1Bias == 2e-4);

    // l2 and weight decay exclude each other; the last set above 0 wins.
    const auto decay =
        tuned(FineTuneConfiguration::Builder().l2(1e-2).weightDecay(4e-4, false).build(), 4);
    CHECK(*decay->l2 == 0);
    CHECK(decay->weightDecay->coeff == 4e-4);
    CHECK_FALSE(decay->weightDecay->applyLR);
    const auto bias =
        tuned(FineTuneConfiguration::Builder().weightDecayBias(1e-2).l2Bias(6e-4).build(), 4);
    CHECK(*bias->l2Bias == 6e-4);
    CHECK(bias->weightDecayBias->coeff == 0);
    CHECK(*bias->l1Bias == 0);
  }

  TEST_CASE("FineTuneConfiguration: the defaults of added layers, and the seed") {
    const FineTuneConfiguration fineTune =
        FineTuneConfiguration::Builder().updater(Adam(0.01)).l2(0).seed(77).build();
    const MultiLayerConfiguration conf = everyKind();
    const LayerDefaults defaults = fineTune.applyTo(conf.defaults);
    CHECK((defaults.updater.kind == UpdaterKind::ADAM));
    CHECK(defaults.l2 == 0);
    CHECK(defaults.l1 == 1e-4);
    CHECK((defaults.activation == Activation::TANH));
    CHECK(fineTune.seedOr(conf.seed) == 77);
    CHECK(FineTuneConfiguration::Builder().build().seedOr(conf.seed) == 1);
  }
}

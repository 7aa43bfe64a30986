// Built by scripts/check-install.sh against an installed dl4cpp: proves that the package config,
// the umbrella header, an individual header and the generated config.h all work from outside.
#include <dl4cpp/config.h>
#include <dl4cpp/dl4cpp.h>
#include <dl4cpp/nn/multilayer/MultiLayerNetwork.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <vector>

#ifndef DL4CPP_VERSION
#error "<dl4cpp/config.h> does not define DL4CPP_VERSION"
#endif

using namespace dl4cpp;

int main() {
  try {
    if (std::strlen(DL4CPP_VERSION) == 0) {
      std::fprintf(stderr, "consumer: DL4CPP_VERSION is empty\n");
      return 1;
    }

    auto conf =
        NeuralNetConfiguration::Builder()
            .seed(1)
            .updater(Sgd(0.1))
            .list()
            .layer(DenseLayer::Builder().nIn(4).nOut(8).activation(Activation::TANH).build())
            .layer(OutputLayer::Builder(LossFunction::MCXENT)
                       .nOut(3)
                       .activation(Activation::SOFTMAX)
                       .build())
            .build();
    MultiLayerNetwork model(conf);
    model.init();

    // Six examples, four features, three classes (one-hot).
    const std::vector<float> features = {1.0f, 0.0f, 0.0f, 0.5f,  //
                                         0.9f, 0.1f, 0.0f, 0.4f,  //
                                         0.0f, 1.0f, 0.0f, 0.5f,  //
                                         0.1f, 0.9f, 0.1f, 0.4f,  //
                                         0.0f, 0.0f, 1.0f, 0.5f,  //
                                         0.1f, 0.0f, 0.9f, 0.4f};
    const std::vector<float> labels = {1, 0, 0,  //
                                       1, 0, 0,  //
                                       0, 1, 0,  //
                                       0, 1, 0,  //
                                       0, 0, 1,  //
                                       0, 0, 1};
    const DataSet data(Tensor::fromVector({6, 4}, features), Tensor::fromVector({6, 3}, labels));

    model.fit(data);
    const double first = model.score();
    for (int i = 0; i < 19; ++i) model.fit(data);
    const double last = model.score();

    std::printf("dl4cpp %s consumer: numParams=%lld, score %.4f -> %.4f\n", DL4CPP_VERSION,
                static_cast<long long>(model.numParams()), first, last);
    if (model.numParams() != 4 * 8 + 8 + 8 * 3 + 3 || !std::isfinite(last)) {
      std::fprintf(stderr, "consumer: unexpected parameter count or non-finite score\n");
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "consumer: %s\n", e.what());
    return 1;
  }
}

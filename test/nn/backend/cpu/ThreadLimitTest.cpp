// OMP_THREAD_LIMIT below the default thread count (a sanitizer or an emulated run, a user sharing
// the cores): the CPU backend must never leave a thread asking OpenMP for more threads than the
// limit gives, or oneDNN plans for a team that never comes and its kernels wait at their barriers
// for ever. test/CMakeLists.txt runs this with OMP_THREAD_LIMIT=1.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <iostream>

#include "nn/backend/Backend.h"

using namespace dl4cpp;

TEST_SUITE("nn") {
  TEST_CASE("CpuBackend: OMP_THREAD_LIMIT caps the thread count, also the default one") {
    const int limit = omp_get_thread_limit();
    if (omp_get_max_threads() <= limit) {
      std::cout << "skipped: needs OMP_THREAD_LIMIT below the default thread count ("
                << omp_get_max_threads() << ")" << std::endl;
      return;
    }
    auto cpu = makeBackend(Device::cpu());
    // Making a backend caps the thread that made it: a layer may run on it without a bind.
    CHECK(omp_get_max_threads() == limit);
    omp_set_num_threads(limit + 1);
    cpu->bindToCurrentThread(0);  // keep the current count
    CHECK(omp_get_max_threads() == limit);
    cpu->bindToCurrentThread(limit + 3);
    CHECK(omp_get_max_threads() == limit);

    // A convolution through oneDNN then finishes (it waited for ever on a missing thread).
    MultiLayerNetwork model(NeuralNetConfiguration::Builder()
                                .seed(3)
                                .list()
                                .layer(ConvolutionLayer::Builder(3, 3).nOut(8).build())
                                .layer(OutputLayer::Builder(LossFunction::MCXENT)
                                           .nOut(2)
                                           .activation(Activation::SOFTMAX)
                                           .build())
                                .setInputType(InputType::convolutionalFlat(12, 12, 4))
                                .build(),
                            Device::cpu(), limit + 3);
    model.init();
    Tensor features(Shape{4, 12 * 12 * 4});
    Tensor labels(Shape{4, 2});
    for (int64_t i = 0; i < features.numel(); ++i) features.data()[i] = float(i % 7) / 7.0f;
    for (int64_t i = 0; i < 4; ++i) labels.data()[i * 2 + i % 2] = 1.0f;
    model.fit(DataSet(features, labels));
    CHECK(std::isfinite(model.score()));
  }
}

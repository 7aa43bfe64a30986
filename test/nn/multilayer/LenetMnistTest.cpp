// LeNet (the sample's configuration) trained on a slice of the real MNIST.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "CpuIsaTestUtil.h"
#include "LenetConfiguration.h"

using namespace dl4cpp;

TEST_SUITE("nn/multilayer") {
  TEST_CASE("LeNet: 200 iterations on real MNIST reach 93% test accuracy") {
    // Real data, not synthetic: fails (with how to fetch it) when MNIST is missing.
    MnistDataSetIterator train(128, 25600, false, true, true, 123);
    MnistDataSetIterator test(500, 2000, false, false, false, 123);
    MultiLayerNetwork model(samples::lenetConfiguration());
    model.init();
    CHECK(model.numParams() == 431080);
    model.fit(train);
    CHECK(model.getIterationCount() == 200);
    CHECK(model.getEpochCount() == 1);
    const Evaluation eval = model.evaluate(test);
    INFO(eval.stats());
    CHECK(eval.getNumRowCounter() == 2000);
    CHECK(eval.accuracy() >= 0.93);
  }

  TEST_CASE("LeNet: training on 1 and 2 threads gives the same parameters, bit for bit") {
    // Every op sums in an order that does not depend on the thread count, dnnl_sgemm included
    // (run on fixed panels of C below the avx512 level: on its own threads it splits K of the
    // output layer's forward product at avx2). At baseline the convolutions run oneDNN's
    // primitives, whose weight gradients sum per thread.
    if (testutil::skippedBelow(CpuIsa::Avx2, "LeNet on dl4cpp's convolution kernels")) return;
    MESSAGE("ISA level: " << std::string(cpuIsaName(cpuIsa())));
    std::vector<float> params[2];
    for (int threads = 1; threads <= 2; ++threads) {
      MnistDataSetIterator train(128, 640, false, true, true, 123);
      MultiLayerNetwork model(samples::lenetConfiguration(), Device::cpu(), threads);
      model.init();
      model.fit(train);
      CHECK(model.getIterationCount() == 5);
      params[threads - 1] = model.params().toVector();
    }
    CHECK(params[0] == params[1]);
  }
}

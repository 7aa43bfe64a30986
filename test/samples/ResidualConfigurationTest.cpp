// The residual network the sample and the peer benchmark share (samples/ResidualConfiguration.h):
// its size, derived layer by layer; the same function for image and flat-row inputs; and a
// training step that lowers the loss on a fixed batch.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include "ResidualConfiguration.h"
#include "nn/tensor/Random.h"

using namespace dl4cpp;

namespace {

DataSet fixedBatch(int64_t n) {
  Random random(5);
  Tensor f(Shape{n, 1, 28, 28}), l(Shape{n, 10});
  for (int64_t i = 0; i < f.numel(); ++i) f.data()[i] = float(random.uniform(0, 1));
  l.fill(0);
  for (int64_t r = 0; r < n; ++r) l.data()[r * 10 + r % 10] = 1;
  return DataSet(f, l);
}

}  // namespace

TEST_CASE("ResidualConfiguration: parameter count and residual structure") {
  const ComputationGraphConfiguration conf = samples::residualConfiguration();
  // Bias-free convolutions k*k*nIn*nOut, each with batch norm (gamma, beta: 2 * nOut):
  //   stem 3x3 1->16: 144 + 32
  //   res1 3x3 16->16 twice: 2 * (2,304 + 32)                                     = 4,672
  //   res2 3x3 16->32: 4,608 + 64; 3x3 32->32: 9,216 + 64; 1x1 16->32: 512 + 64   = 14,528
  //   res3 3x3 32->64: 18,432 + 128; 3x3 64->64: 36,864 + 128; 1x1 32->64: 2,048 + 128 = 57,728
  //   output 64*10 + 10                                                           = 650
  CHECK(conf.numParams() == 176 + 4'672 + 14'528 + 57'728 + 650);
  int adds = 0;
  for (const auto& v : conf.vertices)
    if (v.vertex && v.vertex->typeName() == "ElementWiseVertex") ++adds;
  CHECK(adds == 3);
}

TEST_CASE("ResidualConfiguration: images and flat rows give the same network") {
  ComputationGraph images(samples::residualConfiguration(), Device::cpu(), 1);
  ComputationGraph rows(
      samples::residualConfiguration(123, InputType::convolutionalFlat(28, 28, 1)), Device::cpu(),
      1);
  images.init();
  rows.init();
  REQUIRE(images.params().toVector() == rows.params().toVector());
  const DataSet batch = fixedBatch(4);
  const Tensor flat = batch.features.reshape(Shape{4, 784});
  const Tensor a = images.outputSingle(batch.features), b = rows.outputSingle(flat);
  CHECK(a.shape() == Shape{4, 10});
  CHECK(a.toVector() == b.toVector());
}

TEST_CASE("ResidualConfiguration: training steps lower the loss on a fixed batch") {
  // One thread: the test's time stays small on a machine whose cores other processes share.
  ComputationGraph net(samples::residualConfiguration(), Device::cpu(), 1);
  net.init();
  const DataSet batch = fixedBatch(16);
  const double before = net.score(batch);
  for (int i = 0; i < 5; ++i) net.fit(batch);
  CHECK(net.score(batch) < before);
}

// Whole models on a GPU: one LeNet training step against the CPU, moving models between devices,
// ParallelWrapper and ParallelInference with GPU replicas, and the cross-device parameter
// averaging.
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <thread>
#include <vector>

#include "LenetConfiguration.h"
#include "cuda/CudaTestUtil.h"
#include "nn/backend/DeviceContext.h"
#include "nn/backend/Devices.h"
#include "parallel/ParallelInference.h"
#include "parallel/ParallelTestUtil.h"
#include "parallel/ParallelWrapper.h"
#include "parallel/ParameterAverager.h"

using namespace dl4cpp;
using cudatest::checkClose;
using cudatest::cudaDevicePresent;
using cudatest::oneHot;
using cudatest::randomTensor;

namespace {
const Device kGpu = Device::cuda(0);

// MNIST-shaped data: pixels in [0, 1), one-hot digits.
DataSet mnistLike(int64_t n, uint64_t seed) {
  return {randomTensor(Shape{n, 784}, seed, 0, 1), oneHot(n, 10, seed + 1)};
}
}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("CUDA parity: LeNet from identical initialisation through three training steps") {
    if (!cudaDevicePresent()) return;
    MultiLayerNetwork cpu(samples::lenetConfiguration());
    MultiLayerNetwork gpu(samples::lenetConfiguration(), kGpu);
    cpu.init();
    gpu.init();
    CHECK(gpu.params().device() == kGpu);
    CHECK(gpu.params().toVector() == cpu.params().toVector());  // drawn on the host, copied exactly

    for (int step = 0; step < 3; ++step) {
      const DataSet batch = mnistLike(32, 500 + static_cast<uint64_t>(step));
      cpu.fit(batch);
      gpu.fit(batch);
      CAPTURE(step);
      CHECK(gpu.score() == doctest::Approx(cpu.score()).epsilon(1e-4));
    }
    checkClose(cpu.params(), gpu.params(), 2e-5, 1e-3);
    checkClose(cpu.updaterState(), gpu.updaterState(), 2e-5, 1e-3);
    CHECK(gpu.getIterationCount() == 3);

    const DataSet test = mnistLike(20, 900);
    const Tensor out = gpu.output(test.features);
    CHECK(out.device().isCpu());  // output() always answers on the host
    checkClose(cpu.output(test.features), out, 1e-5, 1e-4);
    CHECK(gpu.score(test) == doctest::Approx(cpu.score(test)).epsilon(1e-4));
  }

  TEST_CASE("MultiLayerNetwork::clone(Device) moves parameters + updater state + counters") {
    if (!cudaDevicePresent()) return;
    const auto conf = testutil::smallNet(Adam(0.01), 1e-3);
    MultiLayerNetwork host(conf);
    host.init();
    for (const DataSet& b : testutil::batches(3, 8)) host.fit(b);

    MultiLayerNetwork onGpu = host.clone(kGpu);
    CHECK(onGpu.context().device() == kGpu);
    CHECK(onGpu.params().device() == kGpu);
    CHECK(onGpu.params().toVector() == host.params().toVector());
    CHECK(onGpu.updaterState().toVector() == host.updaterState().toVector());
    CHECK(onGpu.getIterationCount() == host.getIterationCount());
    CHECK(onGpu.score() == host.score());

    // Training continues the same way on both devices, and the model comes back intact.
    const auto more = testutil::batches(2, 8, 77);
    for (const DataSet& b : more) {
      host.fit(b);
      onGpu.fit(b);
    }
    MultiLayerNetwork back = onGpu.clone(Device::cpu());
    CHECK(back.context().device().isCpu());
    checkClose(host.params(), back.params(), 1e-5, 1e-4);
    CHECK(back.getIterationCount() == 5);

    testutil::VectorIterator data(testutil::batches(4, 8, 5));
    const Evaluation a = host.evaluate(data);
    const Evaluation b = onGpu.evaluate(data);
    CHECK(a.accuracy() == doctest::Approx(b.accuracy()));
  }

  TEST_CASE("ParallelWrapper on a GPU: two workers sharing cuda:0 match two CPU workers") {
    if (!cudaDevicePresent()) return;
    using namespace dl4cpp::parallel;
    for (TrainingMode mode : {TrainingMode::AVERAGING, TrainingMode::SHARED_GRADIENTS}) {
      CAPTURE(static_cast<int>(mode));
      const auto conf = testutil::smallNet(Nesterovs(0.1, 0.9), 1e-3);
      const auto data = testutil::batches(12, 8);
      MultiLayerNetwork cpuRoot(conf), gpuRoot(conf);
      cpuRoot.init();
      gpuRoot.init();
      auto onCpu = ParallelWrapper::Builder(cpuRoot)
                       .workers(2)
                       .averagingFrequency(2)
                       .trainingMode(mode)
                       .devices({Device::cpu()})
                       .build();
      auto onGpu = ParallelWrapper::Builder(gpuRoot)
                       .workers(2)
                       .averagingFrequency(2)
                       .trainingMode(mode)
                       .devices({kGpu})
                       .build();
      testutil::VectorIterator a(data), b(data);
      testutil::withinSeconds(120, [&] {
        onCpu.fit(a);
        onGpu.fit(b);
      });
      CHECK(gpuRoot.params().device().isCpu());  // the root stays where it was
      checkClose(cpuRoot.params(), gpuRoot.params(), 1e-5, 1e-4);
      checkClose(cpuRoot.updaterState(), gpuRoot.updaterState(), 1e-5, 1e-4);
      CHECK(gpuRoot.score() == doctest::Approx(cpuRoot.score()).epsilon(1e-4));
    }
  }

  TEST_CASE("ParallelInference on a GPU: concurrent callers get the CPU model's output") {
    if (!cudaDevicePresent()) return;
    using namespace dl4cpp::parallel;
    MultiLayerNetwork model(samples::lenetConfiguration());
    model.init();
    constexpr int kCallers = 4, kRequests = 10;
    std::vector<std::vector<Tensor>> features(kCallers), expected(kCallers);
    for (int t = 0; t < kCallers; ++t)
      for (int r = 0; r < kRequests; ++r) {
        features[t].push_back(randomTensor(Shape{1 + r % 3, 784}, 900 + 20 * t + r, 0, 1));
        expected[t].push_back(model.output(features[t].back()));
      }
    for (InferenceMode mode : {InferenceMode::BATCHED, InferenceMode::SEQUENTIAL}) {
      CAPTURE(static_cast<int>(mode));
      auto inference = ParallelInference::Builder(model)
                           .workers(2)
                           .devices({kGpu})
                           .inferenceMode(mode)
                           .batchLimit(8)
                           .build();
      CHECK(inference.devices() == std::vector<Device>{kGpu});
      std::vector<std::vector<Tensor>> got(kCallers);
      testutil::withinSeconds(120, [&] {
        std::vector<std::thread> callers;
        for (int t = 0; t < kCallers; ++t)
          callers.emplace_back([&, t] {
            for (const Tensor& f : features[t]) got[t].push_back(inference.output(f));
          });
        for (auto& c : callers) c.join();
      });
      for (int t = 0; t < kCallers; ++t)
        for (int r = 0; r < kRequests; ++r) checkClose(expected[t][r], got[t][r], 1e-5, 1e-4);
    }
  }

  TEST_CASE("Cross-device averaging equals ParameterAverager bit for bit (host + GPU + peer)") {
    if (!cudaDevicePresent()) return;
    const int64_t n = 5000;
    std::vector<Tensor> host{randomTensor(Shape{n}, 1), randomTensor(Shape{n}, 2),
                             randomTensor(Shape{n}, 3)};
    const std::vector<int64_t> examples{8, 0, 5};  // the middle replica has no vote
    std::vector<Tensor> expected{Tensor(Shape{n})};
    parallel::ParameterAverager::average(host, examples, expected, 100, 4321);

    // Sources and destinations on the GPU and on the host, averaged on cuda:0.
    std::vector<Tensor> mixed{host[0].to(kGpu), host[1].clone(), host[2].to(kGpu)};
    std::vector<Tensor> destinations{Tensor(Shape{n}, kGpu), Tensor(Shape{n})};
    devices::averageSlice(mixed, examples, destinations, 100, 4321, kGpu);
    for (const Tensor& d : destinations) {
      const std::vector<float> got = d.toVector(), want = expected[0].toVector();
      CHECK(got == want);  // outside [100, 4321) both are still zero
    }

    if (cudaDeviceCount() < 2) {
      MESSAGE("one GPU: the peer-to-peer / pinned-host path between GPUs is not exercised");
      return;
    }
    const Device second = Device::cuda(1);
    std::vector<Tensor> spread{host[0].to(kGpu), host[1].to(second), host[2].to(second)};
    std::vector<Tensor> targets{Tensor(Shape{n}, second), Tensor(Shape{n}, kGpu)};
    devices::averageSlice(spread, examples, targets, 100, 4321, kGpu);
    for (const Tensor& d : targets) CHECK(d.toVector() == expected[0].toVector());
  }

  TEST_CASE("A GPU tensor is not host memory: toHost() copies, host averaging refuses it") {
    if (!cudaDevicePresent()) return;
    const Tensor host = randomTensor(Shape{64}, 4);
    const Tensor gpu = host.to(kGpu);
    CHECK_FALSE(gpu.onHost());
    const Tensor back = gpu.toHost();
    CHECK(back.onHost());
    CHECK(back.toVector() == host.toVector());
    std::vector<Tensor> buffers{host, gpu};
    std::vector<Tensor> destinations{Tensor(Shape{64})};
    CHECK(devices::averagingDevice(Device::cpu(), {Device::cpu(), kGpu}) == kGpu);
    CHECK_THROWS_AS(devices::averageSlice(buffers, {1, 1}, destinations, 0, 64, Device::cpu()),
                    BackendError);
  }
}

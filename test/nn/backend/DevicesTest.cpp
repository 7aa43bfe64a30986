// nn/backend/Devices.h on the host, and the device choices ParallelWrapper's averaging makes,
// which are plain logic over Device values and need no GPU (the GPU side of averageSlice is in
// test/cuda/CudaTrainingTest.cpp).
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include "nn/backend/Devices.h"
#include "nn/core/Error.h"
#include "nn/core/HostMemory.h"
#include "nn/tensor/Tensor.h"

using namespace dl4cpp;

TEST_SUITE("nn") {
  TEST_CASE("devices: the CPU's memory is host memory and its ops run on the host's cores") {
    CHECK(devices::isHostMemory(Device::cpu()));
    CHECK(devices::runsOnHostCores(Device::cpu()));
    CHECK_FALSE(devices::isHostMemory(Device::cuda(0)));
    CHECK_FALSE(devices::runsOnHostCores(Device::cuda(0)));
  }

  TEST_CASE("devices: host memory is zeroed, 64-byte aligned, copied (overlapping too), filled") {
    const Device cpu = Device::cpu();
    float* p = devices::allocate(cpu, 100);
    CHECK(reinterpret_cast<uintptr_t>(p) % 64 == 0);
    for (int i = 0; i < 100; ++i) REQUIRE(p[i] == 0.0f);
    for (int i = 0; i < 100; ++i) p[i] = static_cast<float>(i);
    devices::copy(p + 1, cpu, p, cpu, 10);  // overlapping ranges: a memmove
    for (int i = 1; i <= 10; ++i) CHECK(p[i] == static_cast<float>(i - 1));
    devices::copy(nullptr, cpu, nullptr, cpu, 0);  // what an empty tensor's copy amounts to
    devices::fill(p, cpu, 50, 2.5f);
    CHECK(p[49] == 2.5f);
    CHECK(p[50] == 50.0f);
    devices::release(cpu, p);
    float* none = devices::allocate(cpu, 0);  // a real block, so data() is never null for storage
    CHECK(none != nullptr);
    devices::release(cpu, none);
  }

  TEST_CASE("devices: only an allocation beyond the host's RAM and swap is refused up front") {
    const uint64_t host = hostMemoryBytes();
    CHECK_FALSE(devices::exceedsCapacity(Device::cpu(), 1024).has_value());
    if (host == UINT64_MAX) return;  // the kernel did not say: nothing is beyond it
    const auto why = devices::exceedsCapacity(Device::cpu(), host + 1);
    REQUIRE(why.has_value());
    CHECK(why->find("RAM and swap") != std::string::npos);
    // A GPU's allocator reports its own out-of-memory.
    CHECK_FALSE(devices::exceedsCapacity(Device::cuda(0), host + 1).has_value());
  }

  TEST_CASE("devices: averaging stays on the host only when every buffer is in host memory") {
    const Device cpu = Device::cpu(), gpu0 = Device::cuda(0), gpu1 = Device::cuda(1);
    CHECK(devices::averagingDevice(cpu, {cpu, cpu, cpu}) == cpu);
    // A worker with a GPU forms its slice there.
    CHECK(devices::averagingDevice(gpu0, {cpu, gpu0, gpu1}) == gpu0);
    CHECK(devices::averagingDevice(gpu1, {cpu, gpu0, gpu1}) == gpu1);
    // A host worker among GPU buffers borrows the last GPU in use, the root's when it is the
    // only one.
    CHECK(devices::averagingDevice(cpu, {cpu, gpu0, cpu, gpu1, cpu}) == gpu1);
    CHECK(devices::averagingDevice(cpu, {gpu1, cpu, cpu}) == gpu1);
  }

  TEST_CASE("devices: averageSlice on the host is the example-weighted mean, in place too") {
    std::vector<Tensor> buffers{Tensor::fromVector({3}, {1, 2, 3}),
                                Tensor::fromVector({3}, {3, 4, 5})};
    std::vector<Tensor> destinations = buffers;  // every replica receives the mean
    destinations.push_back(Tensor(Shape{3}));
    devices::averageSlice(buffers, {1, 3}, destinations, 1, 3, Device::cpu());
    for (const Tensor& d : destinations) {
      CHECK(d.at(1) == 0.25f * 2 + 0.75f * 4);
      CHECK(d.at(2) == 0.25f * 3 + 0.75f * 5);
    }
    CHECK(destinations[0].at(0) == 1.0f);  // outside the slice: untouched
    CHECK(destinations[2].at(0) == 0.0f);
  }
}

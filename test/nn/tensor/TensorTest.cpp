#include <dl4cpp/config.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iostream>
#include <limits>
#include <new>
#include <string>
#include <vector>

#include "nn/backend/DeviceContext.h"
#include "nn/core/Error.h"
#include "nn/core/HostMemory.h"
#include "nn/tensor/Tensor.h"

using namespace dl4cpp;

namespace {
std::vector<float> iota(int64_t n, float start = 0) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = start + static_cast<float>(i);
  return v;
}

template <typename F>
std::string shapeErrorMessage(F&& f) {
  try {
    f();
  } catch (const ShapeError& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_SUITE("nn/tensor") {
  TEST_CASE("Shape: rank, numel, equality and toString") {
    const Shape s{128, 1, 28, 28};
    CHECK(s.rank() == 4);
    CHECK(s.numel() == 128 * 28 * 28);
    CHECK(s[2] == 28);
    CHECK(s.toString() == "[128, 1, 28, 28]");
    CHECK(Shape{}.toString() == "[]");
    CHECK(Shape{}.rank() == 0);
    CHECK(Shape{3, 0}.numel() == 0);
    CHECK(Shape{2, 3} == Shape{2, 3});
    CHECK(Shape{2, 3} != Shape{3, 2});
    CHECK(Shape{6} != Shape{6, 1});
    CHECK(s.withBatch(7) == Shape{7, 1, 28, 28});
    CHECK_THROWS_AS(Shape({1, 2, 3, 4, 5, 6, 7}), ShapeError);
    CHECK_THROWS_AS(Shape({2, -1}), ShapeError);
    Shape grow{1, 1, 1, 1, 1, 1};
    CHECK_THROWS_AS(grow.push(1), ShapeError);
  }

  TEST_CASE("Tensor: a new tensor is zero-filled, on the CPU, with its shape") {
    Tensor t(Shape{3, 5});
    CHECK_FALSE(t.empty());
    CHECK(t.rank() == 2);
    CHECK(t.dim(0) == 3);
    CHECK(t.dim(1) == 5);
    CHECK(t.numel() == 15);
    CHECK(t.device() == Device::cpu());
    for (float v : t.toVector()) CHECK(v == 0.0f);
    Tensor empty;
    CHECK(empty.empty());
    CHECK(empty.data() == nullptr);
  }

  TEST_CASE("Tensor: fromVector keeps values in row-major order, a size mismatch is a ShapeError") {
    const Tensor t = Tensor::fromVector({2, 3}, {1, 2, 3, 4, 5, 6});
    CHECK(t.toVector() == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(t.at(4) == 5.0f);
    const std::string msg = shapeErrorMessage([] { Tensor::fromVector({2, 3}, {1, 2, 3}); });
    CHECK(msg.find("[2, 3]") != std::string::npos);
    CHECK(msg.find("3 values") != std::string::npos);
    CHECK_THROWS_AS(Tensor::fromVector({2}, {1, 2, 3}), ShapeError);
  }

  TEST_CASE("Tensor: host memory is 64-byte aligned") {
    for (int64_t n : {1, 3, 17, 1000, 4097}) {
      CAPTURE(n);
      Tensor t(Shape{n});
      CHECK(reinterpret_cast<uintptr_t>(t.data()) % 64 == 0);
    }
    const Tensor v = Tensor::fromVector({5}, {1, 2, 3, 4, 5});
    CHECK(reinterpret_cast<uintptr_t>(v.data()) % 64 == 0);
  }

  TEST_CASE("Tensor: copies, view, rows and reshape share storage") {
    Tensor t = Tensor::fromVector({4, 3}, iota(12));
    Tensor alias = t;  // a handle copy
    alias.data()[0] = 100;
    CHECK(t.at(0) == 100.0f);

    Tensor v = t.view(5, Shape{2, 2});
    CHECK(v.shape() == Shape{2, 2});
    CHECK(v.data() == t.data() + 5);
    CHECK(v.toVector() == std::vector<float>{5, 6, 7, 8});
    v.data()[1] = -6;
    CHECK(t.at(6) == -6.0f);

    Tensor r = t.rows(1, 3);
    CHECK(r.shape() == Shape{2, 3});
    CHECK(r.data() == t.data() + 3);
    r.fill(9);
    CHECK(t.toVector() == std::vector<float>{100, 1, 2, 9, 9, 9, 9, 9, 9, 9, 10, 11});

    Tensor flat = t.reshape(Shape{12});
    CHECK(flat.data() == t.data());
    flat.data()[11] = 42;
    CHECK(t.at(11) == 42.0f);

    // A view of a view is offset from the base, and rows of an image batch are whole images.
    Tensor vv = t.view(3, Shape{6}).view(2, Shape{2});
    CHECK(vv.data() == t.data() + 5);
    Tensor images(Shape{4, 2, 3, 3});
    Tensor two = images.rows(2, 4);
    CHECK(two.shape() == Shape{2, 2, 3, 3});
    CHECK(two.data() == images.data() + 2 * 18);
    CHECK(t.rows(2, 2).numel() == 0);  // an empty row range is allowed
  }

  TEST_CASE("Tensor: out-of-range views, rows, reshapes and at() throw ShapeError") {
    const Tensor t(Shape{4, 3});
    CHECK_THROWS_AS(t.view(-1, Shape{2}), ShapeError);
    CHECK_THROWS_AS(t.view(11, Shape{2}), ShapeError);
    CHECK_THROWS_AS(t.view(0, Shape{13}), ShapeError);
    CHECK_NOTHROW(t.view(10, Shape{2}));
    CHECK_THROWS_AS(t.rows(-1, 2), ShapeError);
    CHECK_THROWS_AS(t.rows(0, 5), ShapeError);
    CHECK_THROWS_AS(t.rows(3, 2), ShapeError);
    CHECK_THROWS_AS(t.reshape(Shape{5, 2}), ShapeError);
    CHECK_THROWS_AS(t.at(12), ShapeError);
    CHECK_THROWS_AS(t.at(-1), ShapeError);
    const std::string msg = shapeErrorMessage([&] { t.reshape(Shape{5, 2}); });
    CHECK(msg.find("[4, 3]") != std::string::npos);
    CHECK(msg.find("[5, 2]") != std::string::npos);
    // A view cannot reach past its own extent, even though the storage is larger.
    const Tensor v = t.view(2, Shape{4});
    CHECK_THROWS_AS(v.view(1, Shape{4}), ShapeError);
  }

  TEST_CASE("Tensor: clone is independent") {
    Tensor t = Tensor::fromVector({2, 2}, {1, 2, 3, 4});
    Tensor c = t.clone();
    CHECK(c.shape() == t.shape());
    CHECK(c.data() != t.data());
    CHECK(c.toVector() == t.toVector());
    c.data()[0] = 50;
    t.data()[3] = -4;
    CHECK(t.toVector() == std::vector<float>{1, 2, 3, -4});
    CHECK(c.toVector() == std::vector<float>{50, 2, 3, 4});
    // Cloning a view copies only the view's elements, into fresh aligned storage.
    Tensor vc = t.view(1, Shape{2}).clone();
    CHECK(vc.toVector() == std::vector<float>{2, 3});
    CHECK(reinterpret_cast<uintptr_t>(vc.data()) % 64 == 0);
    CHECK(Tensor().clone().empty());
  }

  TEST_CASE("Tensor: copyFrom copies elements across shapes of equal numel") {
    Tensor dst(Shape{2, 3});
    const Tensor src = Tensor::fromVector({6}, iota(6, 1));
    dst.copyFrom(src);
    CHECK(dst.toVector() == std::vector<float>{1, 2, 3, 4, 5, 6});
    CHECK(dst.shape() == Shape{2, 3});  // the destination keeps its shape
    CHECK(dst.data() != src.data());
    // Into a view of a larger buffer: only that slice changes.
    Tensor big(Shape{8});
    Tensor slice = big.view(3, Shape{2});
    slice.copyFrom(Tensor::fromVector({2}, {7, 8}));
    CHECK(big.toVector() == std::vector<float>{0, 0, 0, 7, 8, 0, 0, 0});
    // Overlapping views of the same storage (memmove semantics).
    Tensor o = Tensor::fromVector({5}, {1, 2, 3, 4, 5});
    Tensor head = o.view(0, Shape{4});
    head.copyFrom(o.view(1, Shape{4}));
    CHECK(o.toVector() == std::vector<float>{2, 3, 4, 5, 5});
    const std::string msg = shapeErrorMessage([&] { dst.copyFrom(Tensor(Shape{5})); });
    CHECK(msg.find("[5]") != std::string::npos);
    CHECK(msg.find("[2, 3]") != std::string::npos);
  }

  TEST_CASE("Tensor: fill and allClose") {
    Tensor a(Shape{2, 2});
    a.fill(1.5f);
    CHECK(a.toVector() == std::vector<float>{1.5f, 1.5f, 1.5f, 1.5f});
    Tensor b = a.clone();
    CHECK(a.allClose(b, 0.0f));
    b.data()[2] = 1.5f + 1e-3f;
    CHECK(a.allClose(b, 2e-3f));
    CHECK_FALSE(a.allClose(b, 1e-4f));
    // Shapes must match exactly, not just numel.
    CHECK_FALSE(a.allClose(a.reshape(Shape{4}), 1.0f));
    // NaN is never close to anything, not even to NaN.
    Tensor n = a.clone();
    n.data()[0] = std::numeric_limits<float>::quiet_NaN();
    CHECK_FALSE(n.allClose(a, 1e9f));
    CHECK_FALSE(n.allClose(n, 1e9f));
  }

  TEST_CASE("Device: names and equality") {
    CHECK(Device::cpu().toString() == "cpu");
    CHECK(Device::cuda(1).toString() == "cuda:1");
    CHECK(Device::cpu().isCpu());
    CHECK_FALSE(Device::cuda(0).isCpu());
    CHECK(Device::cuda(0) != Device::cuda(1));
    CHECK(Device::cuda(0) != Device::cpu());
  }

  TEST_CASE("Tensor: toHost() shares a host tensor's storage, to(cpu) always copies") {
    Tensor a = Tensor::fromVector({2}, {1, 2});
    CHECK(a.onHost());
    CHECK(Tensor().onHost());
    Tensor host = a.toHost();
    CHECK(host.data() == a.data());
    CHECK(host.shape() == a.shape());
    Tensor copy = a.to(Device::cpu());
    CHECK(copy.data() != a.data());
    CHECK(copy.toVector() == a.toVector());
    CHECK(Tensor().toHost().empty());
  }

  TEST_CASE("DeviceContext: CPU thread budget") {
    DeviceContext ctx;
    CHECK(ctx.device() == Device::cpu());
    CHECK(ctx.numThreads() == hardwareConcurrency());
    CHECK(hardwareConcurrency() >= 1);
    ctx.setNumThreads(1);
    CHECK(ctx.numThreads() == 1);
    ctx.setNumThreads(0);
    CHECK(ctx.numThreads() == hardwareConcurrency());
    DeviceContext two(Device::cpu(), 2);
    CHECK(two.numThreads() == 2);
    CHECK_NOTHROW(two.bindToCurrentThread());
  }

  TEST_CASE("isVisible and defaultDevices: every visible GPU, else the CPU alone") {
    const int gpus = cudaDeviceCount();
    CHECK(isVisible(Device::cpu()));
    CHECK_FALSE(isVisible(Device::cuda(gpus)));
    CHECK_FALSE(isVisible(Device::cuda(-1)));
    std::vector<Device> expected;
    for (int i = 0; i < gpus; ++i) {
      CHECK(isVisible(Device::cuda(i)));
      expected.push_back(Device::cuda(i));
    }
    if (gpus == 0) expected.push_back(Device::cpu());
    CHECK(defaultDevices() == expected);
  }

  TEST_CASE("DeviceContext: a CUDA device that is not there is a clear BackendError") {
    // One index past the last device: absent on every machine and in every build.
    const int missing = cudaDeviceCount();
    if (!DL4CPP_HAVE_CUDA) CHECK(missing == 0);
    const std::string name = "cuda:" + std::to_string(missing);
    std::string message;
    CHECK_THROWS_AS(DeviceContext(Device::cuda(missing)), BackendError);
    try {
      DeviceContext ctx(Device::cuda(missing));
    } catch (const BackendError& e) {
      message = e.what();
    }
    INFO("message: " << message);
    CHECK(message.find(DL4CPP_HAVE_CUDA ? "CUDA device(s)" : "built without CUDA") !=
          std::string::npos);
    CHECK(message.find(name) != std::string::npos);
    // Nor can memory be allocated there.
    CHECK_THROWS_AS(Tensor(Shape{2}, Device::cuda(missing)), BackendError);
  }

  TEST_CASE("Tensor: an empty (default) tensor has no elements and is safe to use") {
    // Its rank-0 shape alone would count 1 element; with no storage there must be none, or
    // toVector/copyFrom/allClose would touch a null pointer.
    const Tensor empty;
    CHECK(empty.numel() == 0);
    CHECK(empty.rank() == 0);
    CHECK(empty.toVector().empty());
    CHECK(empty.allClose(Tensor(), 0.0f));
    Tensor dst;
    CHECK_NOTHROW(dst.copyFrom(empty));
    CHECK_THROWS_AS(empty.at(0), ShapeError);
    CHECK_THROWS_AS(Tensor(Shape{1}).copyFrom(empty), ShapeError);
  }

  TEST_CASE("Tensor: a tensor larger than memory or than int64 can count is an AllocationError") {
    // One float more than RAM and swap hold (was std::bad_alloc, or a kill where memory is
    // overcommitted).
    const auto tooMany = static_cast<int64_t>(hostMemoryBytes() / sizeof(float)) + 1;
    const std::string expected = fmt::format(
        "cannot allocate a float32 tensor of shape [{}] ({} bytes) on cpu: "
        "more than this machine's {} bytes of RAM and swap",
        tooMany, tooMany * 4, hostMemoryBytes());
    CHECK_THROWS_WITH_AS(Tensor(Shape{tooMany}), doctest::Contains(expected.c_str()),
                         AllocationError);
    // 2^64 elements: numel() wrapped to 0 and a one-float buffer stood for it.
    CHECK_THROWS_WITH_AS(
        Tensor(Shape{int64_t{1} << 32, int64_t{1} << 32}),
        doctest::Contains("shape [4294967296, 4294967296] (more bytes than a pointer can address)"),
        AllocationError);
    CHECK_THROWS_AS(Tensor(Shape{int64_t{1} << 62}), AllocationError);  // 2^64 bytes
  }

  TEST_CASE("Tensor: an allocation the system refuses is an AllocationError saying so") {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    std::cout << "skipped: sanitizer build (its allocator aborts instead of failing)" << std::endl;
#else
    // Address space for what is mapped now plus 256 MiB: a 2 GiB tensor fits in the machine's
    // memory but not under the limit, so the allocator itself fails.
    std::ifstream statm("/proc/self/statm");
    uint64_t pages = 0;
    REQUIRE(static_cast<bool>(statm >> pages));
    rlimit saved{};
    REQUIRE(::getrlimit(RLIMIT_AS, &saved) == 0);
    rlimit limited = saved;
    limited.rlim_cur =
        pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE)) + (uint64_t{256} << 20);
    REQUIRE(::setrlimit(RLIMIT_AS, &limited) == 0);
    rlimit applied{};
    REQUIRE(::getrlimit(RLIMIT_AS, &applied) == 0);
    if (applied.rlim_cur != limited.rlim_cur) {
      // qemu-user accepts the call and keeps its own address space unlimited.
      std::cout << "skipped: setrlimit(RLIMIT_AS) succeeded but the limit was not applied"
                << std::endl;
      return;
    }
    std::string message;
    try {
      Tensor t(Shape{int64_t{1} << 29});
    } catch (const AllocationError& e) {
      message = e.what();
    } catch (const std::bad_alloc&) {
      message = "std::bad_alloc escaped";
    }
    REQUIRE(::setrlimit(RLIMIT_AS, &saved) == 0);
    CHECK(message.find("shape [536870912] (2147483648 bytes) on cpu: out of memory") !=
          std::string::npos);
#endif
  }
}

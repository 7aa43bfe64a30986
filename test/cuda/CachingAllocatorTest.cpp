// The caching allocator's bookkeeping, on a host fake of the raw device memory: these run on every
// machine (no GPU needed), and are what makes "no cudaMalloc in the steady-state loop" testable.
#include <doctest/doctest.h>

#include <cstdlib>
#include <memory>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "nn/backend/cuda/CachingAllocator.h"

using dl4cpp::cuda::CachingAllocator;

namespace {

// Raw memory with a byte budget, counting every call (shared, so tests can look after the
// allocator is gone).
struct FakeDevice {
  size_t capacity = SIZE_MAX;
  size_t used = 0;
  int allocations = 0, releases = 0, synchronizations = 0;
  std::set<void*> live;
  std::mutex mutex;
};

struct FakeMemory {
  std::shared_ptr<FakeDevice> device;

  void* allocate(size_t bytes) {
    std::lock_guard<std::mutex> lock(device->mutex);
    if (device->used + bytes > device->capacity) return nullptr;
    void* p = std::malloc(bytes);
    device->used += bytes;
    ++device->allocations;
    device->live.insert(p);
    return p;
  }
  void release(void* p) {
    std::lock_guard<std::mutex> lock(device->mutex);
    REQUIRE(device->live.erase(p) == 1);  // never a double free or a foreign pointer
    ++device->releases;
    std::free(p);
  }
  void synchronize() {
    std::lock_guard<std::mutex> lock(device->mutex);
    ++device->synchronizations;
  }
};

// device->used only grows on allocate; account releases too, so capacity tests are meaningful.
struct TrackedMemory : FakeMemory {
  std::shared_ptr<std::vector<std::pair<void*, size_t>>> sizes =
      std::make_shared<std::vector<std::pair<void*, size_t>>>();
  void* allocate(size_t bytes) {
    void* p = FakeMemory::allocate(bytes);
    if (p) sizes->emplace_back(p, bytes);
    return p;
  }
  void release(void* p) {
    for (auto it = sizes->begin(); it != sizes->end(); ++it)
      if (it->first == p) {
        device->used -= it->second;
        sizes->erase(it);
        break;
      }
    FakeMemory::release(p);
  }
};

}  // namespace

TEST_SUITE("cuda") {
  TEST_CASE("CachingAllocator: size classes are powers of two from 512 bytes") {
    using A = CachingAllocator<FakeMemory>;
    CHECK(A::sizeClass(0) == 512);
    CHECK(A::sizeClass(1) == 512);
    CHECK(A::sizeClass(512) == 512);
    CHECK(A::sizeClass(513) == 1024);
    CHECK(A::sizeClass(3000) == 4096);
    CHECK(A::sizeClass(size_t{1} << 30) == (size_t{1} << 30));
  }

  TEST_CASE("CachingAllocator: a freed block serves the next request of its class after one sync") {
    auto device = std::make_shared<FakeDevice>();
    CachingAllocator<FakeMemory> allocator(FakeMemory{device});
    void* a = allocator.allocate(1000);  // class 1024
    CHECK(device->allocations == 1);
    allocator.release(a);
    CHECK(device->releases == 0);  // cached, not given back
    CHECK(allocator.stats().bytesCached == 1024);
    CHECK(device->synchronizations == 0);  // releasing never waits

    void* b = allocator.allocate(700);  // same class: the cached block, after one device sync
    CHECK(b == a);
    CHECK(device->allocations == 1);
    CHECK(device->synchronizations == 1);
    CHECK(allocator.stats().cacheHits == 1);

    void* c = allocator.allocate(5000);  // another class: a new raw block, no sync needed
    CHECK(c != a);
    CHECK(device->allocations == 2);
    CHECK(device->synchronizations == 1);
    const auto stats = allocator.stats();
    CHECK(stats.bytesInUse == 1024 + 8192);
    CHECK(stats.bytesCached == 0);
    allocator.release(b);
    allocator.release(c);
  }

  TEST_CASE("CachingAllocator: a steady-state loop makes no raw allocation after its first pass") {
    auto device = std::make_shared<FakeDevice>();
    CachingAllocator<FakeMemory> allocator(FakeMemory{device});
    const std::vector<size_t> sizes{128, 4096, 4096, 100000, 6};
    for (int iteration = 0; iteration < 50; ++iteration) {
      std::vector<void*> blocks;
      for (size_t s : sizes) blocks.push_back(allocator.allocate(s));
      std::set<void*> distinct(blocks.begin(), blocks.end());
      CHECK(distinct.size() == blocks.size());  // live blocks never alias
      for (void* p : blocks) allocator.release(p);
    }
    CHECK(device->allocations == static_cast<int>(sizes.size()));
    CHECK(allocator.stats().rawAllocations == static_cast<int64_t>(sizes.size()));
    CHECK(allocator.stats().cacheHits == 49 * static_cast<int64_t>(sizes.size()));
    CHECK(allocator.stats().bytesInUse == 0);
  }

  TEST_CASE(
      "CachingAllocator: out of memory trims the cache and retries before throwing bad_alloc") {
    auto device = std::make_shared<FakeDevice>();
    device->capacity = 4096;
    TrackedMemory raw;
    raw.device = device;
    CachingAllocator<TrackedMemory> allocator(raw);
    void* small = allocator.allocate(2048);
    allocator.release(small);              // 2048 bytes cached
    void* big = allocator.allocate(4096);  // needs the cached block given back first
    CHECK(big != nullptr);
    CHECK(device->releases == 1);
    CHECK(device->synchronizations == 1);  // the released block may still be in use: wait once
    CHECK(allocator.stats().bytesCached == 0);
    CHECK_THROWS_AS(allocator.allocate(512), std::bad_alloc);  // nothing left to trim
    allocator.release(big);
  }

  TEST_CASE("CachingAllocator: trim and destruction give every cached block back") {
    auto device = std::make_shared<FakeDevice>();
    {
      CachingAllocator<FakeMemory> allocator(FakeMemory{device});
      void* a = allocator.allocate(10);
      void* b = allocator.allocate(20000);
      allocator.release(a);
      allocator.trim();
      CHECK(device->releases == 1);
      CHECK(allocator.stats().rawReleases == 1);
      allocator.release(b);
      allocator.release(nullptr);  // ignored
      int local = 0;
      allocator.release(&local);  // not ours: ignored, not freed
      CHECK(allocator.stats().bytesCached == 32768);
    }
    CHECK(device->releases == 2);
    CHECK(device->live.empty());
  }

  TEST_CASE("CachingAllocator: threads sharing one allocator never get the same live block") {
    auto device = std::make_shared<FakeDevice>();
    CachingAllocator<FakeMemory> allocator(FakeMemory{device});
    constexpr int kThreads = 4, kRounds = 2000;
    std::mutex liveMutex;
    std::set<void*> live;
    bool aliased = false;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int r = 0; r < kRounds; ++r) {
          void* p = allocator.allocate(static_cast<size_t>(512 << ((r + t) % 3)));
          {
            std::lock_guard<std::mutex> lock(liveMutex);
            if (!live.insert(p).second) aliased = true;
          }
          {
            std::lock_guard<std::mutex> lock(liveMutex);
            live.erase(p);
          }
          allocator.release(p);
        }
      });
    for (auto& th : threads) th.join();
    CHECK_FALSE(aliased);
    const auto stats = allocator.stats();
    CHECK(stats.bytesInUse == 0);
    // At most one block per thread and size class was ever needed at the same time.
    CHECK(stats.rawAllocations <= kThreads * 3);
    CHECK(stats.rawAllocations + stats.cacheHits == kThreads * kRounds);
  }
}

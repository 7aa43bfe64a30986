#pragma once
// CachingAllocator: device memory recycled through size-class free lists, so that a training loop
// that keeps allocating and freeing tensors of the same sizes stops calling cudaMalloc (which
// synchronises the device) after its first iteration.
//
// The bookkeeping is independent of CUDA: `RawMemory` supplies
//   void* allocate(size_t bytes)   (nullptr when out of memory)
//   void release(void* p)
//   void synchronize()             (waits until no queued work can still touch freed blocks)
// The CUDA backend instantiates it with cudaMalloc/cudaFree/cudaDeviceSynchronize per device; the
// tests instantiate it with a host fake and check the logic without a GPU.
//
// Size classes: requests are rounded up to a power of two (at least kMinBlock bytes), so a block
// freed by one tensor serves any later request of the same class. A freed block is not handed out
// again until `synchronize()` has run once after its release: kernels queued on any stream of the
// device may still be using it, and a synchronise on reuse (rather than on every release) costs
// nothing in the steady state, where nothing is released.
// Thread-safe: one mutex guards the lists (workers sharing a GPU share its allocator).
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dl4cpp::cuda {

struct AllocatorStats {
  int64_t rawAllocations = 0;  // calls to RawMemory::allocate that succeeded
  int64_t rawReleases = 0;     // blocks given back by trim()/out-of-memory retries
  int64_t cacheHits = 0;       // requests served from a free list
  int64_t synchronizations = 0;
  size_t bytesInUse = 0;   // size-class bytes handed out and not yet released
  size_t bytesCached = 0;  // size-class bytes sitting in free lists
};

template <typename RawMemory>
class CachingAllocator {
 public:
  static constexpr size_t kMinBlock = 512;

  explicit CachingAllocator(RawMemory raw) : raw_(std::move(raw)) {}
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;
  // Cached blocks go back to RawMemory; blocks still in use are the owners' problem (a leak).
  ~CachingAllocator() { trim(); }

  // The size class serving a request of `bytes`.
  static size_t sizeClass(size_t bytes) {
    size_t c = kMinBlock;
    while (c < bytes) c <<= 1;
    return c;
  }

  // A block of at least `bytes` bytes; throws std::bad_alloc when RawMemory has none even after
  // the cache was emptied.
  void* allocate(size_t bytes) {
    const size_t cls = sizeClass(bytes);
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(cls);
    if (it != free_.end() && !it->second.empty()) {
      if (releasedSinceSync_) {
        raw_.synchronize();
        ++stats_.synchronizations;
        releasedSinceSync_ = false;
      }
      void* p = it->second.back();
      it->second.pop_back();
      stats_.bytesCached -= cls;
      ++stats_.cacheHits;
      return handOut(p, cls);
    }
    void* p = raw_.allocate(cls);
    if (p == nullptr) {  // out of memory: give the cache back and try once more
      trimLocked();
      p = raw_.allocate(cls);
      if (p == nullptr) throw std::bad_alloc();
    }
    ++stats_.rawAllocations;
    return handOut(p, cls);
  }

  // Returns a block from allocate() to its free list. Unknown pointers are ignored (nullptr).
  void release(void* p) {
    if (p == nullptr) return;
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = inUse_.find(p);
    if (it == inUse_.end()) return;
    const size_t cls = it->second;
    inUse_.erase(it);
    stats_.bytesInUse -= cls;
    stats_.bytesCached += cls;
    free_[cls].push_back(p);
    releasedSinceSync_ = true;
  }

  // Gives every cached block back to RawMemory.
  void trim() {
    std::lock_guard<std::mutex> lock(mutex_);
    trimLocked();
  }

  AllocatorStats stats() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return stats_;
  }

 private:
  void* handOut(void* p, size_t cls) {
    inUse_.emplace(p, cls);
    stats_.bytesInUse += cls;
    return p;
  }

  void trimLocked() {
    if (releasedSinceSync_) {  // a cached block may still be read by queued work
      raw_.synchronize();
      ++stats_.synchronizations;
      releasedSinceSync_ = false;
    }
    for (auto& [cls, blocks] : free_) {
      for (void* p : blocks) {
        raw_.release(p);
        ++stats_.rawReleases;
        stats_.bytesCached -= cls;
      }
      blocks.clear();
    }
  }

  RawMemory raw_;
  mutable std::mutex mutex_;
  std::map<size_t, std::vector<void*>> free_;
  std::unordered_map<void*, size_t> inUse_;
  bool releasedSinceSync_ = false;
  AllocatorStats stats_;
};

}  // namespace dl4cpp::cuda

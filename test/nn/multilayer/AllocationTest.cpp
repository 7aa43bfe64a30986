// A training step on shapes seen before performs no heap allocation in dl4cpp's own code.
// Counted by replacing the global operator new in this test executable (not in sanitizer builds,
// whose runtimes own it). Each counted allocation is attributed by its stack: oneDNN 2.6's
// dnnl_primitive_execute builds an argument map on every call, which dl4cpp cannot avoid; those
// are reported, everything else must be zero.
#include <doctest/doctest.h>

#include <dlfcn.h>
#include <execinfo.h>

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>

#include <dl4cpp/dl4cpp.h>

#include "LenetConfiguration.h"

#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
#define DL4CPP_COUNT_ALLOCATIONS 1
namespace {
std::atomic<bool> counting{false};
std::atomic<long> ownAllocations{0};
std::atomic<long> onednnAllocations{0};
thread_local bool inHook = false;

bool calledFromOneDnn() {
  void* frames[32];
  const int n = backtrace(frames, 32);
  for (int i = 1; i < n; ++i) {
    Dl_info info;
    if (dladdr(frames[i], &info) && info.dli_fname && std::strstr(info.dli_fname, "libdnnl")) return true;
  }
  return false;
}

void* allocate(std::size_t size, std::size_t alignment) {
  if (counting.load(std::memory_order_relaxed) && !inHook) {
    inHook = true;  // backtrace/dladdr may allocate themselves
    (calledFromOneDnn() ? onednnAllocations : ownAllocations).fetch_add(1, std::memory_order_relaxed);
    inHook = false;
  }
  void* p = alignment > alignof(std::max_align_t)
                ? std::aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment)
                : std::malloc(size ? size : 1);
  if (!p) throw std::bad_alloc();
  return p;
}
}  // namespace
void* operator new(std::size_t size) { return allocate(size, 0); }
void* operator new[](std::size_t size) { return allocate(size, 0); }
void* operator new(std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void* operator new[](std::size_t size, std::align_val_t a) { return allocate(size, static_cast<std::size_t>(a)); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
#endif

using namespace dl4cpp;

#ifdef DL4CPP_COUNT_ALLOCATIONS
namespace {
// `rows` examples of `features` values in [0, 1), one-hot labels over 10 classes.
DataSet syntheticBatch(int64_t rows, int64_t features) {
  Tensor x(Shape{rows, features}), labels(Shape{rows, 10});
  for (int64_t i = 0; i < x.numel(); ++i) x.data()[i] = static_cast<float>(i % 13) / 13.0f;
  for (int64_t r = 0; r < rows; ++r) labels.data()[r * 10 + r % 10] = 1;
  return DataSet{x, labels};
}

// Two steps on the batch create buffers and primitives; then `steps` more are counted. Returns
// oneDNN's allocations per counted step; dl4cpp's own must be zero.
long countedSteps(MultiLayerNetwork& model, const DataSet& batch, int steps) {
  model.fit(batch);
  model.fit(batch);
  ownAllocations = 0;
  onednnAllocations = 0;
  counting = true;
  for (int i = 0; i < steps; ++i) model.fit(batch);
  counting = false;
  CHECK(ownAllocations.load() == 0);
  return onednnAllocations.load() / steps;
}
}  // namespace
#endif

TEST_SUITE("nn/multilayer") {
  TEST_CASE("MultiLayerNetwork: steady-state fit() allocates nothing in dl4cpp (conv, pooling, dense, Nesterovs)") {
#ifndef DL4CPP_COUNT_ALLOCATIONS
    MESSAGE("skipped: sanitizer build (its runtime owns operator new)");
#else
    auto conf = NeuralNetConfiguration::Builder().seed(1).updater(Nesterovs(0.01, 0.9)).l2(1e-4)
                    .list()
                    .layer(ConvolutionLayer::Builder(3, 3).nOut(4).activation(Activation::RELU).build())
                    .layer(SubsamplingLayer::Builder(PoolingType::MAX, 2, 2, 2, 2).build())
                    .layer(DenseLayer::Builder().nOut(16).activation(Activation::TANH).build())
                    .layer(OutputLayer::Builder(LossFunction::NEGATIVELOGLIKELIHOOD).nOut(10)
                               .activation(Activation::SOFTMAX).build())
                    .setInputType(InputType::convolutionalFlat(12, 12, 1))
                    .build();
    MultiLayerNetwork model(conf);
    model.init();
    const DataSet batch = syntheticBatch(32, 144);
    MESSAGE("oneDNN's primitive execution allocated " << countedSteps(model, batch, 5) << " times per step");
    CHECK(model.getIterationCount() == 7);
#endif
  }

  TEST_CASE("MultiLayerNetwork: steady-state fit() of LeNet, batch 128, allocates nothing in dl4cpp") {
#ifndef DL4CPP_COUNT_ALLOCATIONS
    MESSAGE("skipped: sanitizer build (its runtime owns operator new)");
#else
    MultiLayerNetwork model(samples::lenetConfiguration());
    model.init();
    const DataSet batch = syntheticBatch(128, 784);
    // What remains is oneDNN's: conv 2's channels-last kernels with their reorders, ReLU, softmax.
    MESSAGE("oneDNN's primitive execution allocated " << countedSteps(model, batch, 3) << " times per step");
    CHECK(model.getIterationCount() == 5);
#endif
  }
}

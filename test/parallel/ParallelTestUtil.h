#pragma once
// Helpers for the parallel tests: small networks, deterministic data, and a bound on how long a
// test body may take (a hang becomes a failure, never a stuck CI).
#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <chrono>
#include <cstring>
#include <future>
#include <random>
#include <vector>

#include "nn/backend/DeviceContext.h"
#include "nn/tensor/Random.h"

namespace testutil {

// The parallel suites check the wrappers' own logic against models on the CPU, bit for bit. Where a
// GPU is visible the builders default to it, so these tests name the CPU; test/cuda covers workers
// on a GPU.
inline dl4cpp::parallel::ParallelWrapper::Builder wrapperOnCpu(dl4cpp::Model& root) {
  return dl4cpp::parallel::ParallelWrapper::Builder(root).devices({dl4cpp::Device::cpu()});
}
inline dl4cpp::parallel::ParallelInference::Builder inferenceOnCpu(const dl4cpp::Model& model) {
  return dl4cpp::parallel::ParallelInference::Builder(model).devices({dl4cpp::Device::cpu()});
}

// Dense 6 -> 10 (tanh) -> 3 (softmax, MCXENT) under `network`'s network-wide settings.
inline dl4cpp::MultiLayerConfiguration smallNet(
    const dl4cpp::NeuralNetConfiguration::Builder& network) {
  using namespace dl4cpp;
  return network.list()
      .layer(DenseLayer::Builder().nIn(6).nOut(10).activation(Activation::TANH).build())
      .layer(OutputLayer::Builder(LossFunction::MCXENT)
                 .nOut(3)
                 .activation(Activation::SOFTMAX)
                 .build())
      .build();
}

inline dl4cpp::MultiLayerConfiguration smallNet(const dl4cpp::UpdaterParams& updater,
                                                double l2 = 0) {
  return smallNet(dl4cpp::NeuralNetConfiguration::Builder().seed(12).updater(updater).l2(l2));
}

// `count` minibatches of `rows` examples (the last one `lastRows` when > 0), fixed by `seed`.
inline std::vector<dl4cpp::DataSet> batches(int count, int64_t rows, uint64_t seed = 3,
                                            int64_t lastRows = 0) {
  dl4cpp::Random random(seed);
  std::vector<dl4cpp::DataSet> out;
  for (int b = 0; b < count; ++b) {
    const int64_t n = (b == count - 1 && lastRows > 0) ? lastRows : rows;
    dl4cpp::Tensor f(dl4cpp::Shape{n, 6}), l(dl4cpp::Shape{n, 3});
    for (int64_t i = 0; i < f.numel(); ++i) f.data()[i] = static_cast<float>(random.uniform(-1, 1));
    for (int64_t r = 0; r < n; ++r)
      l.data()[r * 3 + static_cast<int64_t>(random.nextU64() % 3)] = 1;
    out.push_back({f, l});
  }
  return out;
}

// An iterator over prepared minibatches, one per next(), in order.
class VectorIterator : public dl4cpp::DataSetIterator {
 public:
  explicit VectorIterator(std::vector<dl4cpp::DataSet> data) : data_(std::move(data)) {}
  bool hasNext() override { return position_ < data_.size(); }
  dl4cpp::DataSet next() override {
    if (!hasNext()) throwNoNext("VectorIterator");
    ++served_;
    return data_[position_++];
  }
  // Skipped batches are not served (served() counts next() only).
  void skipNext() override {
    if (!hasNext()) throwNoNext("VectorIterator");
    ++position_;
  }
  void reset() override { position_ = 0; }
  int batch() const override {
    return data_.empty() ? 0 : static_cast<int>(data_.front().numExamples());
  }
  int64_t inputColumns() const override { return 6; }
  int totalOutcomes() const override { return 3; }
  int64_t served() const { return served_; }

 protected:
  std::vector<dl4cpp::DataSet> data_;
  size_t position_ = 0;
  int64_t served_ = 0;
};

// A VectorIterator that reshuffles its minibatches at construction and at every reset(), from
// `seed`: two constructed alike serve the same orders.
class ShufflingIterator : public VectorIterator {
 public:
  explicit ShufflingIterator(std::vector<dl4cpp::DataSet> data, uint64_t seed)
      : VectorIterator(std::move(data)), rng_(seed) {
    shuffle();
  }
  void reset() override {
    VectorIterator::reset();
    shuffle();
  }

 private:
  void shuffle() {
    for (size_t i = data_.size(); i > 1; --i) std::swap(data_[i - 1], data_[rng_() % i]);
  }
  std::mt19937_64 rng_;
};

// A VectorIterator that cannot be reset (a stream read once), as resetSupported() says.
class NoResetIterator : public VectorIterator {
 public:
  using VectorIterator::VectorIterator;
  bool resetSupported() const override { return false; }
  void reset() override { throw dl4cpp::DataError("NoResetIterator cannot be reset"); }
};

// The same values, bit for bit.
inline bool bitIdentical(const dl4cpp::Tensor& a, const dl4cpp::Tensor& b) {
  const auto x = a.toVector(), y = b.toVector();
  // An empty vector's data() may be null, which memcmp must not be given even for 0 bytes.
  return x.size() == y.size() &&
         (x.empty() || std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0);
}

// Runs `body` on another thread and fails the test if it takes longer than `limit`.
template <typename F>
void withinSeconds(double limit, F&& body) {
  auto future = std::async(std::launch::async, std::forward<F>(body));
  const bool finished =
      future.wait_for(std::chrono::duration<double>(limit)) == std::future_status::ready;
  REQUIRE_MESSAGE(finished, "did not finish within " << limit << " s (hang?)");
  future.get();
}

}  // namespace testutil

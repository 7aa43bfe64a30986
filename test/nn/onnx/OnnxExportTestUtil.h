#pragma once
// What the ONNX export tests share: random inputs and labels, and the comparison of dl4cpp's
// outputs with ONNX Runtime's (at most 1e-4 apart, and the same class per example where asked).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "nn/conf/NeuralNetConfiguration.h"
#include "nn/conf/layers/LSTM.h"
#include "nn/conf/layers/RnnOutputLayer.h"
#include "nn/core/Error.h"
#include "nn/graph/ComputationGraph.h"
#include "nn/onnx/OnnxImport.h"
#include "nn/tensor/Random.h"
#include "nn/tensor/Tensor.h"

namespace testutil {

inline constexpr float kOnnxTolerance = 1e-4f;

inline dl4cpp::Tensor randomTensor(const dl4cpp::Shape& shape, uint64_t seed, double low = -1,
                                   double high = 1) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor t(shape);
  for (int64_t i = 0; i < t.numel(); ++i) t.data()[i] = float(random.uniform(low, high));
  return t;
}

inline dl4cpp::Tensor oneHot(int64_t n, int64_t classes, uint64_t seed) {
  dl4cpp::Random random(seed);
  dl4cpp::Tensor t(dl4cpp::Shape{n, classes});
  t.fill(0);
  for (int64_t r = 0; r < n; ++r)
    t.data()[r * classes + int64_t(random.nextU64() % uint64_t(classes))] = 1;
  return t;
}

// The largest |expected - actual|; checks the shapes agree.
inline float maxAbsDifference(const dl4cpp::Tensor& expected, const dl4cpp::Tensor& actual) {
  REQUIRE(expected.shape() == actual.shape());
  const std::vector<float> e = expected.toVector(), a = actual.toVector();
  float worst = 0;
  for (size_t i = 0; i < e.size(); ++i) {
    REQUIRE(std::isfinite(e[i]));
    worst = std::max(worst, std::abs(e[i] - a[i]));
  }
  return worst;
}

// Each row's index of its largest value, of (N, K).
inline std::vector<int64_t> argmaxRows(const dl4cpp::Tensor& t) {
  const std::vector<float> v = t.toVector();
  const int64_t n = t.shape()[0], k = t.numel() / n;
  std::vector<int64_t> classes;
  for (int64_t r = 0; r < n; ++r)
    classes.push_back(std::max_element(v.begin() + r * k, v.begin() + (r + 1) * k) -
                      (v.begin() + r * k));
  return classes;
}

// dl4cpp's and ONNX Runtime's outputs agree within kOnnxTolerance (and, with sameClasses, in
// every row's argmax); `what` names the case in failures.
inline void checkSameOutputs(const dl4cpp::Tensor& expected, const dl4cpp::Tensor& actual,
                             const std::string& what, bool sameClasses = false) {
  INFO(what);
  const float difference = maxAbsDifference(expected, actual);
  INFO("max |dl4cpp - ONNX Runtime| = " << difference);
  CHECK(difference <= kOnnxTolerance);
  if (sameClasses) CHECK(argmaxRows(expected) == argmaxRows(actual));
}

inline constexpr float kRoundTripTolerance = 1e-6f;

// Round trip: the exported file imported again (dl4cpp::onnx::importModel) computes `expected`
// (dl4cpp's outputs of the exported model, in the file's output order) within 1e-6.
inline void checkRoundTrip(const std::filesystem::path& file,
                           const std::vector<dl4cpp::Tensor>& inputs,
                           const std::vector<dl4cpp::Tensor>& expected, const std::string& what) {
  INFO("round trip: " << what);
  dl4cpp::ComputationGraph imported = dl4cpp::onnx::importModel(file);
  const std::vector<dl4cpp::Tensor> actual = imported.output(inputs);
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    const float difference = maxAbsDifference(expected[i], actual[i]);
    INFO("output " << i << ": max |exported - imported| = " << difference);
    CHECK(difference <= kRoundTripTolerance);
  }
}

}  // namespace testutil

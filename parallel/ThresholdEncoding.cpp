#include "parallel/ThresholdEncoding.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>

#include "nn/core/Error.h"

namespace dl4cpp::parallel {

namespace {

constexpr int kHeaderWords = 4;
constexpr int32_t kSparse = 0, kBitmap = 1;

void requireDecayRate(const char* who, double decayRate) {
  if (!(decayRate >= 0.5 && decayRate < 1.0))
    throw ConfigError(fmt::format(
        "{}: decayRate must be in [0.5, 1) (usually 0.95 to 0.999), got {}", who, decayRate));
}

void requirePositive(const char* who, const char* what, double value) {
  if (!(value > 0)) throw ConfigError(fmt::format("{}: {} must be > 0, got {}", who, what, value));
}

}  // namespace

FixedThresholdAlgorithm::FixedThresholdAlgorithm(double threshold) : threshold_(threshold) {
  requirePositive("FixedThresholdAlgorithm", "threshold", threshold);
}

std::string FixedThresholdAlgorithm::toString() const {
  return fmt::format("FixedThresholdAlgorithm(threshold={})", threshold_);
}

double AdaptiveThresholdAlgorithm::defaultDecayRate() { return std::pow(0.5, 1.0 / 20.0); }

AdaptiveThresholdAlgorithm::AdaptiveThresholdAlgorithm(double initialThreshold,
                                                       double minTargetSparsity,
                                                       double maxTargetSparsity, double decayRate)
    : initialThreshold_(initialThreshold),
      minTargetSparsity_(minTargetSparsity),
      maxTargetSparsity_(maxTargetSparsity),
      decayRate_(decayRate) {
  requirePositive("AdaptiveThresholdAlgorithm", "initialThreshold", initialThreshold);
  requirePositive("AdaptiveThresholdAlgorithm", "minTargetSparsity", minTargetSparsity);
  if (!(maxTargetSparsity >= minTargetSparsity))
    throw ConfigError(fmt::format(
        "AdaptiveThresholdAlgorithm: maxTargetSparsity ({}) must be >= minTargetSparsity ({})",
        maxTargetSparsity, minTargetSparsity));
  requireDecayRate("AdaptiveThresholdAlgorithm", decayRate);
}

double AdaptiveThresholdAlgorithm::calculateThreshold(int64_t, int,
                                                      std::optional<double> lastThreshold,
                                                      std::optional<double> lastSparsity) {
  if (!lastThreshold || !lastSparsity) return initialThreshold_;
  if (*lastSparsity < minTargetSparsity_) return *lastThreshold * decayRate_;
  if (*lastSparsity > maxTargetSparsity_) return *lastThreshold / decayRate_;
  return *lastThreshold;
}

std::string AdaptiveThresholdAlgorithm::toString() const {
  return fmt::format(
      "AdaptiveThresholdAlgorithm(initialThreshold={},minTargetSparsity={},maxTargetSparsity={},"
      "decayRate={})",
      initialThreshold_, minTargetSparsity_, maxTargetSparsity_, decayRate_);
}

TargetSparsityThresholdAlgorithm::TargetSparsityThresholdAlgorithm(double initialThreshold,
                                                                   double sparsityTarget,
                                                                   double decayRate)
    : initialThreshold_(initialThreshold), sparsityTarget_(sparsityTarget), decayRate_(decayRate) {
  requirePositive("TargetSparsityThresholdAlgorithm", "initialThreshold", initialThreshold);
  if (!(sparsityTarget > 0 && sparsityTarget < 1.0 / 16))
    throw ConfigError(
        fmt::format("TargetSparsityThresholdAlgorithm: sparsityTarget must be in (0, 1/16), got {}",
                    sparsityTarget));
  requireDecayRate("TargetSparsityThresholdAlgorithm", decayRate);
}

double TargetSparsityThresholdAlgorithm::calculateThreshold(int64_t, int,
                                                            std::optional<double> lastThreshold,
                                                            std::optional<double> lastSparsity) {
  if (!lastThreshold || !lastSparsity) return initialThreshold_;
  if (*lastSparsity < sparsityTarget_) return *lastThreshold * decayRate_;
  if (*lastSparsity > sparsityTarget_) return *lastThreshold / decayRate_;
  return *lastThreshold;
}

std::string TargetSparsityThresholdAlgorithm::toString() const {
  return fmt::format(
      "TargetSparsityThresholdAlgorithm(initialThreshold={},sparsityTarget={},decayRate={})",
      initialThreshold_, sparsityTarget_, decayRate_);
}

ResidualClippingPostProcessor::ResidualClippingPostProcessor(double thresholdMultipleClipValue,
                                                             int frequency)
    : multiple_(thresholdMultipleClipValue), frequency_(frequency) {
  if (!(thresholdMultipleClipValue >= 1))
    throw ConfigError(fmt::format(
        "ResidualClippingPostProcessor: thresholdMultipleClipValue must be >= 1, got {}",
        thresholdMultipleClipValue));
  if (frequency < 1)
    throw ConfigError(
        fmt::format("ResidualClippingPostProcessor: frequency must be >= 1, got {}", frequency));
}

void ResidualClippingPostProcessor::processResidual(int64_t iteration, int, double lastThreshold,
                                                    std::span<float> residual) {
  if (iteration % frequency_ != 0) return;
  const auto clip = static_cast<float>(multiple_ * lastThreshold);
  for (float& r : residual) r = std::clamp(r, -clip, clip);
}

EncodingHandler::EncodingHandler(const ThresholdAlgorithm& algorithm,
                                 const ResidualPostProcessor* postProcessor)
    : algorithm_(algorithm.clone()),
      postProcessor_(postProcessor ? postProcessor->clone() : nullptr) {}

void EncodingHandler::reset() {
  lastThreshold_.reset();
  lastSparsity_.reset();
}

EncodingStats EncodingHandler::encode(const float* update, std::span<float> residual,
                                      int64_t iteration, int epoch, std::vector<int32_t>& message) {
  if (update)
    for (size_t i = 0; i < residual.size(); ++i) residual[i] += update[i];
  const double tau =
      algorithm_->calculateThreshold(iteration, epoch, lastThreshold_, lastSparsity_);
  const EncodingStats stats = thresholdEncode(residual, static_cast<float>(tau), message);
  lastThreshold_ = tau;
  lastSparsity_ = stats.sparsity();
  if (postProcessor_) postProcessor_->processResidual(iteration, epoch, tau, residual);
  return stats;
}

EncodingStats thresholdEncode(std::span<float> values, float threshold,
                              std::vector<int32_t>& message) {
  const auto n = static_cast<int64_t>(values.size());
  if (n > INT32_MAX - 1)
    throw ConfigError(
        fmt::format("threshold encoding: {} elements exceed the format's limit of 2^31 - 2", n));
  int64_t count = 0;
  for (float v : values) count += std::fabs(v) >= threshold;
  const int64_t bitmapWords = (n + 15) / 16;
  const bool dense = count > bitmapWords;
  message.assign(static_cast<size_t>(kHeaderWords + (dense ? bitmapWords : count)), 0);
  message[0] = static_cast<int32_t>(count);
  message[1] = static_cast<int32_t>(n);
  message[2] = std::bit_cast<int32_t>(threshold);
  message[3] = dense ? kBitmap : kSparse;
  int32_t* body = message.data() + kHeaderWords;
  int64_t next = 0;
  for (int64_t i = 0; i < n; ++i) {
    float& v = values[static_cast<size_t>(i)];
    if (!(std::fabs(v) >= threshold)) continue;
    const bool positive = v > 0;
    v -= positive ? threshold : -threshold;
    if (dense) {
      const uint32_t code = positive ? 1u : 2u;
      body[i / 16] =
          static_cast<int32_t>(static_cast<uint32_t>(body[i / 16]) | (code << (2 * (i % 16))));
    } else {
      body[next++] = static_cast<int32_t>(positive ? i + 1 : -(i + 1));
    }
  }
  EncodingStats stats;
  stats.threshold = threshold;
  stats.encoded = count;
  stats.length = n;
  stats.bytes = static_cast<int64_t>(message.size() * sizeof(int32_t));
  stats.dense = dense;
  return stats;
}

void thresholdDecodeAdd(std::span<const int32_t> message, std::span<float> target) {
  if (message.size() < kHeaderWords)
    throw DataFormatError("threshold encoding: a message shorter than its header");
  const int64_t count = message[0], n = message[1];
  const float tau = std::bit_cast<float>(message[2]);
  const int32_t format = message[3];
  if (n != static_cast<int64_t>(target.size()))
    throw DataFormatError(fmt::format(
        "threshold encoding: a message of {} elements for a vector of {}", n, target.size()));
  if (count < 0 || !std::isfinite(tau) || (format != kSparse && format != kBitmap))
    throw DataFormatError("threshold encoding: a malformed message header");
  const auto body = message.subspan(kHeaderWords);
  if (format == kSparse) {
    if (static_cast<int64_t>(body.size()) != count)
      throw DataFormatError(fmt::format(
          "threshold encoding: {} elements announced, {} words follow", count, body.size()));
    for (int32_t word : body) {
      const int64_t index = std::abs(static_cast<int64_t>(word)) - 1;
      if (word == 0 || index >= n)
        throw DataFormatError(fmt::format("threshold encoding: element {} out of range", word));
      target[static_cast<size_t>(index)] += word > 0 ? tau : -tau;
    }
    return;
  }
  if (static_cast<int64_t>(body.size()) != (n + 15) / 16)
    throw DataFormatError("threshold encoding: a bitmap of the wrong length");
  for (int64_t i = 0; i < n; ++i) {
    const uint32_t code =
        (static_cast<uint32_t>(body[static_cast<size_t>(i / 16)]) >> (2 * (i % 16))) & 3u;
    if (code == 1) target[static_cast<size_t>(i)] += tau;
    if (code == 2) target[static_cast<size_t>(i)] -= tau;
    if (code == 3) throw DataFormatError("threshold encoding: a bitmap code of 3");
  }
}

}  // namespace dl4cpp::parallel

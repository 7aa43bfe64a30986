#pragma once
// Threshold encoding of updates, as DL4J's SHARED_GRADIENTS sends them (EncodingHandler,
// ThresholdAlgorithm, ResidualPostProcessor; ND4J's encodeThreshold; Strom, "Scalable
// distributed DNN training using commodity GPU cloud computing", 2015). Of a vector u (this
// step's update plus the residual earlier steps left behind), only the elements with
// |u_i| >= tau travel, each as its index and sign standing for sign * tau; u_i - sign * tau stays
// in the residual and travels in a later step, once it has grown past tau again. Nothing is lost:
// after any number of steps, everything sent plus the residual equals the sum of the updates.
//
// Message layout, in int32 words: a header of four, [0] elements encoded, [1] length of u,
// [2] tau's float bits, [3] format; then the body:
//  - format 0, sparse: one word per encoded element, +(i + 1) for +tau, -(i + 1) for -tau;
//  - format 1, bitmap: two bits per element (01: +tau, 10: -tau), 16 elements per word,
//    element i in bits 2(i mod 16) of word i / 16; chosen when smaller than the sparse body,
//    that is when more than 1/16 of the elements are encoded (DL4J's dense switch).
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dl4cpp::parallel {

// Chooses tau for each step from the last step's tau and sparsity (elements encoded / length).
// Each worker holds its own (clone()).
class ThresholdAlgorithm {
 public:
  virtual ~ThresholdAlgorithm() = default;
  // lastThreshold and lastSparsity are empty at the first step.
  virtual double calculateThreshold(int64_t iteration, int epoch,
                                    std::optional<double> lastThreshold,
                                    std::optional<double> lastSparsity) = 0;
  virtual std::unique_ptr<ThresholdAlgorithm> clone() const = 0;
  virtual std::string toString() const = 0;
};

// tau fixed.
class FixedThresholdAlgorithm final : public ThresholdAlgorithm {
 public:
  explicit FixedThresholdAlgorithm(double threshold);  // > 0, else ConfigError
  double calculateThreshold(int64_t, int, std::optional<double>, std::optional<double>) override {
    return threshold_;
  }
  std::unique_ptr<ThresholdAlgorithm> clone() const override {
    return std::make_unique<FixedThresholdAlgorithm>(*this);
  }
  std::string toString() const override;

 private:
  double threshold_;
};

// DL4J's default: tau starts at initialThreshold; when the last step's sparsity fell below
// minTargetSparsity, tau *= decayRate (more elements travel); above maxTargetSparsity,
// tau /= decayRate; in between, tau stays. The defaults are DL4J's (decayRate 0.5^(1/20): tau
// halves or doubles in 20 steps).
class AdaptiveThresholdAlgorithm final : public ThresholdAlgorithm {
 public:
  static constexpr double kDefaultInitialThreshold = 1e-4;
  static constexpr double kDefaultMinTargetSparsity = 1e-4;
  static constexpr double kDefaultMaxTargetSparsity = 1e-2;
  static double defaultDecayRate();

  // ConfigError unless initialThreshold > 0, 0 < min <= max, 0.5 <= decayRate < 1.
  explicit AdaptiveThresholdAlgorithm(double initialThreshold = kDefaultInitialThreshold,
                                      double minTargetSparsity = kDefaultMinTargetSparsity,
                                      double maxTargetSparsity = kDefaultMaxTargetSparsity,
                                      double decayRate = defaultDecayRate());
  double calculateThreshold(int64_t iteration, int epoch, std::optional<double> lastThreshold,
                            std::optional<double> lastSparsity) override;
  std::unique_ptr<ThresholdAlgorithm> clone() const override {
    return std::make_unique<AdaptiveThresholdAlgorithm>(*this);
  }
  std::string toString() const override;

 private:
  double initialThreshold_, minTargetSparsity_, maxTargetSparsity_, decayRate_;
};

// tau moves every step towards one sparsity: down by decayRate when the last step was sparser
// than sparsityTarget, up when denser (DL4J's defaults: 1e-4, 1e-3, 0.5^(1/20)).
class TargetSparsityThresholdAlgorithm final : public ThresholdAlgorithm {
 public:
  // ConfigError unless initialThreshold > 0, 0 < sparsityTarget < 1/16, 0.5 <= decayRate < 1.
  explicit TargetSparsityThresholdAlgorithm(
      double initialThreshold = 1e-4, double sparsityTarget = 1e-3,
      double decayRate = AdaptiveThresholdAlgorithm::defaultDecayRate());
  double calculateThreshold(int64_t iteration, int epoch, std::optional<double> lastThreshold,
                            std::optional<double> lastSparsity) override;
  std::unique_ptr<ThresholdAlgorithm> clone() const override {
    return std::make_unique<TargetSparsityThresholdAlgorithm>(*this);
  }
  std::string toString() const override;

 private:
  double initialThreshold_, sparsityTarget_, decayRate_;
};

// Adjusts the residual after each step's encoding.
class ResidualPostProcessor {
 public:
  virtual ~ResidualPostProcessor() = default;
  virtual void processResidual(int64_t iteration, int epoch, double lastThreshold,
                               std::span<float> residual) = 0;
  virtual std::unique_ptr<ResidualPostProcessor> clone() const = 0;
};

// Every `frequency` steps, clips the residual to +-thresholdMultipleClipValue * tau: a residual
// many times tau would take many steps to drain (DL4J's ResidualClippingPostProcessor; DL4J's
// ParallelWrapper uses (5, 5)). What is clipped is lost, the one exception to the accounting above.
class ResidualClippingPostProcessor final : public ResidualPostProcessor {
 public:
  // ConfigError unless thresholdMultipleClipValue >= 1 and frequency >= 1.
  explicit ResidualClippingPostProcessor(double thresholdMultipleClipValue = 5.0,
                                         int frequency = 5);
  void processResidual(int64_t iteration, int epoch, double lastThreshold,
                       std::span<float> residual) override;
  std::unique_ptr<ResidualPostProcessor> clone() const override {
    return std::make_unique<ResidualClippingPostProcessor>(*this);
  }

 private:
  double multiple_;
  int frequency_;
};

// What one encoding sent.
struct EncodingStats {
  double threshold = 0;
  int64_t encoded = 0;  // elements sent
  int64_t length = 0;   // elements of the vector
  int64_t bytes = 0;    // of the message
  bool dense = false;   // bitmap format
  double sparsity() const {
    return length > 0 ? static_cast<double>(encoded) / static_cast<double>(length) : 0;
  }
};

// One worker's encoder: its threshold algorithm, residual post-processor and last step's figures.
class EncodingHandler {
 public:
  // postProcessor may be null (none).
  EncodingHandler(const ThresholdAlgorithm& algorithm, const ResidualPostProcessor* postProcessor);

  // residual += update (both `length` floats; update may be null: nothing added), then encodes
  // the residual into `message` (replaced) with this step's tau and subtracts what was encoded
  // from it, then lets the post-processor adjust it.
  EncodingStats encode(const float* update, std::span<float> residual, int64_t iteration, int epoch,
                       std::vector<int32_t>& message);
  // Forgets the last step (the next picks tau afresh from the initial threshold).
  void reset();

 private:
  std::unique_ptr<ThresholdAlgorithm> algorithm_;
  std::unique_ptr<ResidualPostProcessor> postProcessor_;
  std::optional<double> lastThreshold_, lastSparsity_;
};

// Encodes `values` with threshold tau into `message` (replaced), subtracting what was encoded
// from `values`: the step EncodingHandler::encode takes. Returns the figures.
EncodingStats thresholdEncode(std::span<float> values, float threshold,
                              std::vector<int32_t>& message);
// target[i] += the value message encodes for element i. DataFormatError when the message is
// malformed or not of target's length.
void thresholdDecodeAdd(std::span<const int32_t> message, std::span<float> target);

}  // namespace dl4cpp::parallel

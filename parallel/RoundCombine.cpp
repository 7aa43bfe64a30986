#include "parallel/RoundCombine.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>

#include "nn/backend/DeviceContext.h"
#include "nn/core/Error.h"
#include "nn/updaters/Updaters.h"
#include "parallel/cluster/Cluster.h"

namespace dl4cpp::parallel {

namespace {

// The outer updater's state record: magic, version, updater kind, state floats per parameter,
// steps taken, float count, the floats (little-endian, as written by this host), CRC32 of all
// that precedes it.
constexpr std::array<char, 8> kMagic{'D', 'L', '4', 'C', 'O', 'U', 'T', 'R'};
constexpr uint32_t kVersion = 1;

template <typename T>
void put(std::vector<std::byte>& out, const T& value) {
  const auto* p = reinterpret_cast<const std::byte*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

uint32_t crc32Of(std::span<const std::byte> bytes) {
  return static_cast<uint32_t>(
      ::crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

class Reader {
 public:
  Reader(std::span<const std::byte> bytes, const std::string& source)
      : bytes_(bytes), source_(source) {}
  template <typename T>
  T get(const char* field) {
    if (bytes_.size() - offset_ < sizeof(T))
      throw DataTruncatedError(fmt::format("outer updater state {}: ends inside {} (offset {})",
                                           source_, field, offset_));
    T value;
    std::memcpy(&value, bytes_.data() + offset_, sizeof(T));
    offset_ += sizeof(T);
    return value;
  }
  size_t offset() const { return offset_; }
  size_t remaining() const { return bytes_.size() - offset_; }

 private:
  std::span<const std::byte> bytes_;
  const std::string& source_;
  size_t offset_ = 0;
};

}  // namespace

void RoundCombine::loadState(std::span<const std::byte> bytes, const std::string& source) {
  if (!bytes.empty())
    throw DataMismatchError(fmt::format(
        "{} holds outer updater state, but this ParallelWrapper has no outerUpdater", source));
}

OuterUpdaterCombine::OuterUpdaterCombine(UpdaterParams updater, int64_t numParams, int64_t frozen,
                                         int threads)
    : updater_(std::move(updater)),
      frozen_(frozen),
      state_(Shape{std::max<int64_t>(1, updater_.stateSizePerParam() * (numParams - frozen))}),
      mean_(Shape{numParams}),
      destinations_{mean_},
      ctx_(std::make_unique<DeviceContext>(Device::cpu(), threads)) {
  state_.fill(static_cast<float>(updater_.initialStateValue()));
}

OuterUpdaterCombine::~OuterUpdaterCombine() = default;

std::vector<Tensor>& OuterUpdaterCombine::meanDestinations(std::vector<Tensor>&) {
  return destinations_;
}

void OuterUpdaterCombine::finish(Tensor root, const std::vector<Tensor>& replicas, int epoch) {
  const int64_t n = mean_.numel();
  Tensor global = root;
  if (!root.onHost()) {
    if (global_.empty()) global_ = Tensor(Shape{n});
    global_.copyFrom(root);
    global = global_;
  }
  // The outer gradient, in place of the mean: how far the workers moved away from the global
  // parameters, on average.
  float* g = mean_.data();
  const float* p = global.data();
  for (int64_t i = frozen_; i < n; ++i) g[i] = p[i] - g[i];
  if (n > frozen_) {
    Tensor params = global.view(frozen_, Shape{n - frozen_});
    Tensor gradient = mean_.view(frozen_, Shape{n - frozen_});
    UpdaterParams u = updater_;
    setScheduledValues(u, steps_, epoch);
    ctx_->bindToCurrentThread();
    ctx_->backend().updaterStep(u, RegularizationParams{}, steps_, params, gradient, state_);
  }
  ++steps_;
  if (!root.onHost()) root.copyFrom(global);
  for (const Tensor& r : replicas) {
    Tensor to = r;
    to.copyFrom(global);
  }
}

std::vector<std::byte> OuterUpdaterCombine::saveState() const {
  std::vector<std::byte> out;
  out.insert(out.end(), reinterpret_cast<const std::byte*>(kMagic.data()),
             reinterpret_cast<const std::byte*>(kMagic.data()) + kMagic.size());
  put(out, kVersion);
  put(out, static_cast<uint32_t>(updater_.kind));
  put(out, static_cast<uint32_t>(updater_.stateSizePerParam()));
  put(out, steps_);
  put(out, state_.numel());
  const auto* floats = reinterpret_cast<const std::byte*>(state_.data());
  out.insert(out.end(), floats, floats + state_.numel() * static_cast<int64_t>(sizeof(float)));
  put(out, crc32Of(out));
  return out;
}

void OuterUpdaterCombine::loadState(std::span<const std::byte> bytes, const std::string& source) {
  Reader in(bytes, source);
  std::array<char, 8> magic{};
  for (char& c : magic) c = in.get<char>("the magic");
  if (magic != kMagic)
    throw DataFormatError(fmt::format("{} is not an outer updater state (bad magic)", source));
  const auto version = in.get<uint32_t>("the version");
  if (version != kVersion)
    throw VersionError(
        fmt::format("{}: outer updater state version {}; this build reads version {}", source,
                    version, kVersion));
  const auto kind = in.get<uint32_t>("the updater kind");
  const auto perParam = in.get<uint32_t>("the state size");
  const auto steps = in.get<int64_t>("the step count");
  const auto count = in.get<int64_t>("the float count");
  if (count < 0 ||
      static_cast<uint64_t>(count) * sizeof(float) + sizeof(uint32_t) != in.remaining())
    throw DataFormatError(
        fmt::format("{}: {} floats announced, {} bytes follow", source, count, in.remaining()));
  const size_t payload = in.offset() + static_cast<size_t>(count) * sizeof(float);
  uint32_t stored;
  std::memcpy(&stored, bytes.data() + payload, sizeof stored);
  if (crc32Of(bytes.first(payload)) != stored)
    throw ChecksumError(fmt::format("{}: the outer updater state's CRC32 does not match", source));
  if (kind != static_cast<uint32_t>(updater_.kind) ||
      perParam != static_cast<uint32_t>(updater_.stateSizePerParam()) || count != state_.numel())
    throw DataMismatchError(fmt::format(
        "{}: outer updater state of updater kind {} with {} floats; this wrapper's outer updater "
        "is kind {} with {}",
        source, kind, count, static_cast<uint32_t>(updater_.kind), state_.numel()));
  if (steps < 0)
    throw DataFormatError(fmt::format("{}: negative outer step count {}", source, steps));
  std::memcpy(state_.data(), bytes.data() + in.offset(),
              static_cast<size_t>(count) * sizeof(float));
  steps_ = steps;
}

void OuterUpdaterCombine::broadcastState(Cluster& cluster) {
  cluster.broadcast(std::span<float>(state_.data(), static_cast<size_t>(state_.numel())), 0);
  std::array<double, 1> steps{static_cast<double>(steps_)};
  cluster.broadcast(std::span<double>(steps), 0);
  steps_ = static_cast<int64_t>(steps[0]);
}

std::unique_ptr<RoundCombine> makeRoundCombine(const UpdaterParams* outerUpdater, int64_t numParams,
                                               int64_t frozen, int threads) {
  if (!outerUpdater) return std::make_unique<MeanCombine>();
  return std::make_unique<OuterUpdaterCombine>(*outerUpdater, numParams, frozen, threads);
}

}  // namespace dl4cpp::parallel

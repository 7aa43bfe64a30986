#include "parallel/cluster/InProcessCluster.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>

#include "nn/core/Error.h"

namespace dl4cpp::parallel {

namespace {
// What one rank brought to the current collective.
struct Posted {
  std::string call;  // "allReduceSum(float x 10)": compared across ranks
  const void* data = nullptr;
};
}  // namespace

// A collective is two barriers: after the first every rank's input is posted and may be read;
// after the second every rank has read what it needs, so each may overwrite its own buffer.
struct InProcessCluster::Shared {
  explicit Shared(int n) : size(n), posted(static_cast<size_t>(n)) {}

  const int size;
  std::mutex mutex;
  std::condition_variable changed;
  int arrived = 0;
  uint64_t generation = 0;
  bool broken = false;
  std::vector<Posted> posted;

  void barrier(const Cluster& self, const std::string& call) {
    std::unique_lock lock(mutex);
    if (broken) throwBroken(self, call);
    const uint64_t mine = generation;
    if (++arrived == size) {
      arrived = 0;
      ++generation;
      changed.notify_all();
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + self.timeout();
    if (!changed.wait_until(lock, deadline, [&] { return generation != mine || broken; })) {
      broken = true;
      changed.notify_all();
      throw ClusterError(fmt::format(
          "{}: {} did not complete within {} ms: another rank died, hangs, or never joined",
          self.describe(), call, self.timeout().count()));
    }
    if (generation == mine) throwBroken(self, call);
  }

  [[noreturn]] static void throwBroken(const Cluster& self, const std::string& call) {
    throw ClusterError(fmt::format(
        "{}: {} refused: an earlier collective of this cluster timed out", self.describe(), call));
  }

  // Posts `call` and `data` for this rank, waits for every rank, and checks that all of them made
  // the same call.
  void post(const Cluster& self, const std::string& call, const void* data) {
    {
      std::lock_guard lock(mutex);
      posted[static_cast<size_t>(self.rank())] = Posted{call, data};
    }
    barrier(self, call);
    std::lock_guard lock(mutex);
    for (int r = 0; r < size; ++r)
      if (posted[static_cast<size_t>(r)].call != call)
        throw ClusterError(fmt::format("{}: called {} while rank {} called {}", self.describe(),
                                       call, r, posted[static_cast<size_t>(r)].call));
  }
  const void* dataOf(int rank) {
    std::lock_guard lock(mutex);
    return posted[static_cast<size_t>(rank)].data;
  }
};

std::vector<std::shared_ptr<Cluster>> InProcessCluster::create(int size) {
  if (size < 1) throw ConfigError(fmt::format("InProcessCluster: size must be >= 1, got {}", size));
  auto shared = std::make_shared<Shared>(size);
  std::vector<std::shared_ptr<Cluster>> ranks;
  ranks.reserve(static_cast<size_t>(size));
  for (int r = 0; r < size; ++r) ranks.push_back(std::make_shared<InProcessCluster>(shared, r));
  return ranks;
}

InProcessCluster::InProcessCluster(std::shared_ptr<Shared> shared, int rank)
    : shared_(std::move(shared)), rank_(rank) {}

int InProcessCluster::size() const { return shared_->size; }

std::string InProcessCluster::describe() const {
  return fmt::format("in-process rank {} of {}", rank_, shared_->size);
}

bool InProcessCluster::broken() const {
  std::lock_guard lock(shared_->mutex);
  return shared_->broken;
}

std::vector<double> InProcessCluster::allGather(std::span<const double> mine) {
  const std::string call = fmt::format("allGather(double x {})", mine.size());
  shared_->post(*this, call, mine.data());
  std::vector<double> all;
  all.reserve(mine.size() * static_cast<size_t>(size()));
  for (int r = 0; r < size(); ++r) {
    const auto* theirs = static_cast<const double*>(shared_->dataOf(r));
    all.insert(all.end(), theirs, theirs + mine.size());
  }
  shared_->barrier(*this, call);
  return all;
}

std::vector<int32_t> InProcessCluster::allGatherVarying(std::span<const int32_t> mine,
                                                        std::vector<int64_t>& counts) {
  // The lengths differ by rank, so the call compared across ranks names none.
  const std::string call = "allGatherVarying(int32)";
  const std::span<const int32_t> posted = mine;
  shared_->post(*this, call, &posted);
  std::vector<int32_t> all;
  counts.assign(static_cast<size_t>(size()), 0);
  for (int r = 0; r < size(); ++r) {
    const auto& theirs = *static_cast<const std::span<const int32_t>*>(shared_->dataOf(r));
    counts[static_cast<size_t>(r)] = static_cast<int64_t>(theirs.size());
    all.insert(all.end(), theirs.begin(), theirs.end());
  }
  shared_->barrier(*this, call);
  return all;
}

template <typename T>
void InProcessCluster::reduce(std::span<T> values, const char* type) {
  const std::string call = fmt::format("allReduceSum({} x {})", type, values.size());
  shared_->post(*this, call, values.data());
  std::vector<T> sum(values.size(), T(0));
  for (int r = 0; r < size(); ++r) {  // rank order: deterministic
    const auto* theirs = static_cast<const T*>(shared_->dataOf(r));
    for (size_t i = 0; i < sum.size(); ++i) sum[i] += theirs[i];
  }
  shared_->barrier(*this, call);  // every rank has read every buffer
  std::copy(sum.begin(), sum.end(), values.begin());
}

template <typename T>
void InProcessCluster::bcast(std::span<T> values, int root, const char* type) {
  if (root < 0 || root >= size())
    throw ConfigError(fmt::format("{}: broadcast from rank {}, which is not in 0..{}", describe(),
                                  root, size() - 1));
  const std::string call = fmt::format("broadcast({} x {}, root {})", type, values.size(), root);
  shared_->post(*this, call, values.data());
  std::vector<T> copy;
  if (rank_ != root) {
    const auto* theirs = static_cast<const T*>(shared_->dataOf(root));
    copy.assign(theirs, theirs + values.size());
  }
  shared_->barrier(*this, call);
  if (rank_ != root) std::copy(copy.begin(), copy.end(), values.begin());
}

void InProcessCluster::allReduceSum(std::span<float> values) { reduce(values, "float"); }
void InProcessCluster::allReduceSum(std::span<double> values) { reduce(values, "double"); }
void InProcessCluster::broadcast(std::span<float> values, int root) {
  bcast(values, root, "float");
}
void InProcessCluster::broadcast(std::span<double> values, int root) {
  bcast(values, root, "double");
}

}  // namespace dl4cpp::parallel

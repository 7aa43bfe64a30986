#include "parallel/cluster/RoundExchange.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "nn/core/Error.h"

namespace dl4cpp::parallel {

namespace {
constexpr size_t kFields = 8;

std::array<double, kFields> encode(const RoundVote& v) {
  return {static_cast<double>(v.examples),
          v.lossSum,
          static_cast<double>(v.iterations),
          static_cast<double>(v.minibatches),
          v.stop ? 1.0 : 0.0,
          v.failed ? 1.0 : 0.0,
          static_cast<double>(v.workers),
          static_cast<double>(v.params)};
}

RoundVote decode(const double* f) {
  RoundVote v;
  v.examples = static_cast<int64_t>(f[0]);
  v.lossSum = f[1];
  v.iterations = static_cast<int64_t>(f[2]);
  v.minibatches = static_cast<int64_t>(f[3]);
  v.stop = f[4] != 0;
  v.failed = f[5] != 0;
  v.workers = static_cast<int>(f[6]);
  v.params = static_cast<int64_t>(f[7]);
  return v;
}

void broadcastTensor(Cluster& cluster, Tensor tensor) {  // a handle: writes reach the model
  if (tensor.numel() == 0) return;
  Tensor host = tensor.toHost();  // the tensor itself when in host memory: no copy
  cluster.broadcast(std::span<float>(host.data(), static_cast<size_t>(host.numel())), 0);
  if (!tensor.onHost()) tensor.copyFrom(host);
}
}  // namespace

RoundTotals exchangeVotes(Cluster& cluster, const RoundVote& mine) {
  const auto encoded = encode(mine);
  const std::vector<double> all = cluster.allGather(encoded);
  RoundTotals totals;
  for (int r = 0; r < cluster.size(); ++r) {  // rank order: the same sums on every rank
    const RoundVote v = decode(all.data() + static_cast<size_t>(r) * kFields);
    totals.examples += v.examples;
    totals.lossSum += v.lossSum;
    totals.iterations = std::max(totals.iterations, v.iterations);
    totals.minibatches += v.minibatches;
    totals.stop = totals.stop || v.stop;
    if (v.failed && totals.firstFailedRank < 0) totals.firstFailedRank = r;
    totals.ranks.push_back(v);
  }
  return totals;
}

void requireSameShape(const Cluster& cluster, const RoundTotals& totals) {
  const RoundVote& first = totals.ranks.front();
  for (size_t r = 1; r < totals.ranks.size(); ++r) {
    const RoundVote& v = totals.ranks[r];
    if (v.workers != first.workers || v.params != first.params)
      throw ConfigError(fmt::format(
          "ParallelWrapper on {}: every rank must run the same workers on the same network; rank "
          "0 has {} workers and {} parameters, rank {} has {} and {}",
          cluster.describe(), first.workers, first.params, r, v.workers, v.params));
  }
}

void broadcastModel(Cluster& cluster, Model& model) {
  broadcastTensor(cluster, model.params());
  broadcastTensor(cluster, model.updaterState());
  broadcastTensor(cluster, model.layerState());
  std::array<double, 3> counters{static_cast<double>(model.getIterationCount()),
                                 static_cast<double>(model.getEpochCount()),
                                 static_cast<double>(model.getMinibatchesInEpoch())};
  cluster.broadcast(std::span<double>(counters), 0);
  model.setIterationCount(static_cast<int64_t>(counters[0]));
  model.setEpochCount(static_cast<int>(counters[1]));
  model.setMinibatchesInEpoch(static_cast<int64_t>(counters[2]));
}

}  // namespace dl4cpp::parallel

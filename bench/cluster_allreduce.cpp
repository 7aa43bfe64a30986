// All-reduce time per averaging: MpiCluster::allReduceSum of N floats (default 431,080, LeNet's
// parameter count), repeated, timed on every rank. Run it under mpirun, over shared memory on one
// machine or over TCP between hosts (scripts/test-cluster-netns.sh runs it between two network
// namespaces):
//   mpirun -np 2 bench_cluster_allreduce [--floats 431080] [--repeats 200] [--warmup 20]
// Rank 0 prints the median, mean and 90th percentile over the repeats of the slowest rank's time
// per call (a rank's time includes waiting for the others to arrive), and the same for an
// all-reduce of no floats: the arrival barrier alone, what every collective pays before moving
// data.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <numeric>
#include <vector>

#include "SampleSupport.h"
#include "parallel/cluster/MpiCluster.h"

using namespace dl4cpp::parallel;
using Clock = std::chrono::steady_clock;

namespace {

struct Summary {
  double median = 0;
  double mean = 0;
  double p90 = 0;
};

// Milliseconds per call on every rank, repeat by repeat; each repeat counts as its slowest rank.
Summary timeAllReduce(Cluster& cluster, std::size_t floats, int repeats, int warmup) {
  std::vector<float> values(floats, 1.0f);
  for (int i = 0; i < warmup; ++i) cluster.allReduceSum(values);
  std::vector<double> mine;
  mine.reserve(static_cast<std::size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    const Clock::time_point start = Clock::now();
    cluster.allReduceSum(values);
    mine.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  const std::vector<double> all = cluster.allGather(mine);
  std::vector<double> slowest(mine.size(), 0.0);
  for (std::size_t i = 0; i < all.size(); ++i)
    slowest[i % mine.size()] = std::max(slowest[i % mine.size()], all[i]);
  std::sort(slowest.begin(), slowest.end());
  Summary s;
  s.median = slowest[slowest.size() / 2];
  s.mean = std::accumulate(slowest.begin(), slowest.end(), 0.0) / static_cast<double>(repeats);
  s.p90 = slowest[slowest.size() * 9 / 10];
  return s;
}

}  // namespace

int main(int argc, char** argv) try {
  const samples::SampleOptions options(
      argc, argv,
      {{"floats", "floats per all-reduce (default 431080, LeNet's parameters)"},
       {"repeats", "timed all-reduces (default 200)"},
       {"warmup", "untimed all-reduces first (default 20)"}});
  const long floats = options.getInt("floats", 431080);
  const int repeats = static_cast<int>(options.getInt("repeats", 200));
  const int warmup = static_cast<int>(options.getInt("warmup", 20));
  if (floats < 0 || repeats < 1 || warmup < 0)
    throw std::invalid_argument("--floats and --warmup must be >= 0, --repeats >= 1");

  const std::shared_ptr<MpiCluster> cluster = MpiCluster::world();
  const Summary data = timeAllReduce(*cluster, static_cast<std::size_t>(floats), repeats, warmup);
  const Summary arrival = timeAllReduce(*cluster, 0, repeats, warmup);
  if (cluster->rank() == 0)
    std::cout << fmt::format(
        "bench_cluster_allreduce: {} ranks ({}), {} repeats\n"
        "all-reduce of {} floats ({:.2f} MB): median {:.3f} ms, mean {:.3f} ms, p90 {:.3f} ms\n"
        "arrival barrier alone (0 floats): median {:.3f} ms, mean {:.3f} ms, p90 {:.3f} ms\n",
        cluster->size(), cluster->describe(), repeats, floats,
        static_cast<double>(floats) * 4 / 1e6, data.median, data.mean, data.p90, arrival.median,
        arrival.mean, arrival.p90);
  return 0;
} catch (const std::exception& e) {
  std::cerr << "bench_cluster_allreduce: " << e.what() << "\n";
  return 2;
}

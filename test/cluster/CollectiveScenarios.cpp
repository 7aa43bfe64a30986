// The scenarios where every rank takes part: the collectives' results on 2 ranks (collectives), and
// on the one rank of a program started without mpirun (singleton).
#include <fmt/format.h>
#include <time.h>

#include <chrono>
#include <thread>
#include <vector>

#include "Scenarios.h"
#include "nn/core/Error.h"

namespace dl4cpp::cluster_check {

namespace {

using parallel::MpiCluster;
using namespace std::chrono_literals;

double threadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Every rank's three values, in rank order.
void gather(MpiCluster& c, Checks& checks) {
  const double r = c.rank();
  const std::vector<double> all = c.allGather(std::vector<double>{10 * r, 10 * r + 1, 10 * r + 2});
  bool inOrder = all.size() == 3 * static_cast<std::size_t>(c.size());
  for (std::size_t i = 0; inOrder && i < all.size(); ++i)
    inOrder = all[i] == static_cast<double>(10 * (i / 3) + i % 3);
  checks.expect(inOrder, "allGather concatenates every rank's values in rank order");
  checks.expect(c.allGather({}).empty(), "allGather of no values gives none");

  // Rank r sends r + 2 values (rank 1 of 3 or more: none), r * 100 + i: the threshold-encoded
  // messages of SHARED_GRADIENTS differ in length from rank to rank.
  const int length = c.size() > 2 && c.rank() == 1 ? 0 : c.rank() + 2;
  std::vector<int32_t> mine;
  for (int i = 0; i < length; ++i) mine.push_back(c.rank() * 100 + i - 7);
  std::vector<int64_t> counts;
  const std::vector<int32_t> varying = c.allGatherVarying(mine, counts);
  std::vector<int32_t> expected;
  bool countsRight = counts.size() == static_cast<std::size_t>(c.size());
  for (int q = 0; q < c.size(); ++q) {
    const int theirs = c.size() > 2 && q == 1 ? 0 : q + 2;
    countsRight = countsRight && counts[static_cast<std::size_t>(q)] == theirs;
    for (int i = 0; i < theirs; ++i) expected.push_back(q * 100 + i - 7);
  }
  checks.expect(countsRight, "allGatherVarying reports every rank's length");
  checks.expect(varying == expected,
                "allGatherVarying concatenates every rank's values, of differing lengths, in rank "
                "order");
}

// Small integers (and halves) add up exactly in any order, so the sums are compared bit for bit.
void sums(MpiCluster& c, Checks& checks) {
  const int r = c.rank();
  const int n = c.size();
  std::vector<float> f(1000);
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = static_cast<float>((r + 1) * i);
  c.allReduceSum(f);
  bool exact = true;
  for (std::size_t i = 0; i < f.size(); ++i)
    exact = exact && f[i] == static_cast<float>(i * n * (n + 1) / 2);
  checks.expect(exact, "allReduceSum of 1000 floats is the exact sum over ranks");

  std::vector<double> d(777);
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = 1e9 * r + 0.5 * static_cast<double>(i);
  c.allReduceSum(d);
  exact = true;
  for (std::size_t i = 0; i < d.size(); ++i)
    exact = exact && d[i] == 1e9 * (n * (n - 1) / 2) + 0.5 * n * static_cast<double>(i);
  checks.expect(exact, "allReduceSum of 777 doubles is the exact sum over ranks");

  // More than a million: Open MPI splits it into fragments and pipelines them.
  std::vector<float> large(1'500'001);
  for (std::size_t i = 0; i < large.size(); ++i)
    large[i] = static_cast<float>((i % 1000) * (r + 1));
  c.allReduceSum(large);
  exact = true;
  for (std::size_t i = 0; i < large.size(); ++i)
    exact = exact && large[i] == static_cast<float>((i % 1000) * n * (n + 1) / 2);
  checks.expect(exact, "allReduceSum of 1,500,001 floats is the exact sum over ranks");

  std::vector<float> none;
  c.allReduceSum(none);
  checks.expect(true, "allReduceSum of no values returns");
}

void broadcasts(MpiCluster& c, Checks& checks) {
  const int root = c.size() - 1;  // rank 1 of 2: not the rank that is 0 everywhere by accident
  std::vector<float> f(4321, -1.0f);
  if (c.rank() == root)
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = 7.5f * static_cast<float>(i);
  c.broadcast(f, root);
  bool same = true;
  for (std::size_t i = 0; i < f.size(); ++i) same = same && f[i] == 7.5f * static_cast<float>(i);
  checks.expect(same, fmt::format("broadcast of floats from rank {} reaches every rank", root));

  std::vector<double> d(3, c.rank() == 0 ? 0.1 : 99.0);
  c.broadcast(d, 0);
  checks.expect(d == std::vector<double>(3, 0.1), "broadcast of doubles from rank 0");

  // A root that is no rank is refused before any rank is waited for, and breaks nothing.
  bool refused = false;
  try {
    c.broadcast(d, c.size());
  } catch (const ConfigError& e) {
    refused = std::string_view(e.what()).find("the root must be a rank") != std::string_view::npos;
  }
  checks.expect(refused, "broadcast from a root that is no rank is a ConfigError");
  checks.expect(!c.broken(), "a refused broadcast does not break the cluster");
}

// A rank that arrives late is waited for, and the waiting costs the other ranks little CPU (they
// sleep between tests instead of spinning on a core that oversubscribed ranks share).
void lateArrival(MpiCluster& c, Checks& checks) {
  if (c.size() < 2) return;
  const bool late = c.rank() == c.size() - 1;
  std::vector<float> v(431080, 1.0f);
  if (late) std::this_thread::sleep_for(300ms);
  const auto start = std::chrono::steady_clock::now();
  const double cpuStart = threadCpuSeconds();
  c.allReduceSum(v);
  const double cpu = threadCpuSeconds() - cpuStart;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  checks.expect(v[0] == static_cast<float>(c.size()) && v.back() == static_cast<float>(c.size()),
                "an all-reduce waits for the late rank");
  if (late) return;
  say(c, fmt::format("waited {:.3f} s for the late rank, using {:.4f} s of CPU", wall, cpu));
  if (wall > 0.2)
    checks.expect(
        cpu < 0.25 * wall,
        fmt::format("waiting {:.3f} s for the late rank took {:.3f} s of CPU", wall, cpu));
}

void run(MpiCluster& c, Checks& checks) {
  // Bounded: a rank whose check fails leaves the others waiting in the next collective.
  c.setTimeout(30s);
  checks.expect(MpiCluster::world().get() == &c, "world() gives the same cluster on every call");
  const std::string prefix = fmt::format("MPI rank {} of {} on host ", c.rank(), c.size());
  checks.expect(c.describe().starts_with(prefix) && c.describe().size() > prefix.size(),
                "describe(): " + c.describe());
  gather(c, checks);
  sums(c, checks);
  broadcasts(c, checks);
  lateArrival(c, checks);
  checks.expect(!c.broken(), "the cluster is not broken after successful collectives");
}

}  // namespace

int collectives(MpiCluster& cluster) {
  Checks checks(cluster);
  checks.expect(cluster.size() >= 2, "collectives runs on 2 or more ranks (mpirun -np 2)");
  run(cluster, checks);
  return checks.finish("collectives");
}

int singleton(MpiCluster& cluster) {
  Checks checks(cluster);
  checks.expect(cluster.rank() == 0 && cluster.size() == 1,
                "a program started without mpirun is rank 0 of 1");
  run(cluster, checks);
  return checks.finish("singleton");
}

}  // namespace dl4cpp::cluster_check

#include <dl4cpp/dl4cpp.h>
#include <doctest/doctest.h>

#include <chrono>

#include "parallel/ClusterTestUtil.h"
#include "parallel/ParallelTestUtil.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;
using testutil::messageOf;
using testutil::runRanks;

TEST_SUITE("parallel") {
  TEST_CASE("InProcessCluster: gather in rank order, sums in rank order, broadcast from any rank") {
    testutil::withinSeconds(60, [] {
      const auto failures = runRanks(3, [](int rank, std::shared_ptr<Cluster> cluster) {
        CHECK(cluster->rank() == rank);
        CHECK(cluster->size() == 3);
        CHECK(cluster->describe() == "in-process rank " + std::to_string(rank) + " of 3");
        const std::vector<double> mine{static_cast<double>(rank), 10.0 + rank};
        CHECK(cluster->allGather(mine) == std::vector<double>{0, 10, 1, 11, 2, 12});
        std::vector<float> f{1.0f + static_cast<float>(rank), 0.5f};
        cluster->allReduceSum(std::span<float>(f));
        CHECK(f == std::vector<float>{6.0f, 1.5f});
        std::vector<double> d{static_cast<double>(rank) * 0.25};
        cluster->allReduceSum(std::span<double>(d));
        CHECK(d[0] == 0.75);
        std::vector<float> b(4, static_cast<float>(rank));
        cluster->broadcast(std::span<float>(b), 2);
        CHECK(b == std::vector<float>(4, 2.0f));
        std::vector<double> bd{static_cast<double>(rank)};
        cluster->broadcast(std::span<double>(bd), 1);
        CHECK(bd[0] == 1.0);
        // Lengths differ by rank (rank 1 sends nothing).
        std::vector<int32_t> varying(rank == 1 ? 0 : static_cast<size_t>(rank + 1), rank - 5);
        std::vector<int64_t> counts;
        CHECK(cluster->allGatherVarying(varying, counts) == std::vector<int32_t>{-5, -3, -3, -3});
        CHECK(counts == std::vector<int64_t>{1, 0, 3});
        CHECK_FALSE(cluster->broken());
      });
      for (const auto& f : failures) CHECK(messageOf(f) == "");
    });
  }

  TEST_CASE(
      "InProcessCluster: ranks that make different calls all get a ClusterError naming both") {
    testutil::withinSeconds(60, [] {
      const auto failures = runRanks(2, [](int rank, std::shared_ptr<Cluster> cluster) {
        std::vector<float> values(rank == 0 ? 3 : 4);
        cluster->allReduceSum(std::span<float>(values));
      });
      for (const auto& f : failures) {
        REQUIRE(f);
        CHECK_THROWS_AS(std::rethrow_exception(f), ClusterError);
        CHECK(messageOf(f).find("allReduceSum(float x 3)") != std::string::npos);
        CHECK(messageOf(f).find("allReduceSum(float x 4)") != std::string::npos);
      }
    });
  }

  TEST_CASE("InProcessCluster: a rank that never joins makes the others time out, then refuse") {
    testutil::withinSeconds(60, [] {
      const auto failures = runRanks(2, [](int rank, std::shared_ptr<Cluster> cluster) {
        if (rank == 1) return;  // dead
        cluster->setTimeout(std::chrono::milliseconds(200));
        const auto start = std::chrono::steady_clock::now();
        std::vector<double> mine{1};
        try {
          (void)cluster->allGather(mine);
          FAIL("allGather returned without rank 1");
        } catch (const ClusterError& e) {
          const double waited =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          CHECK(waited >= 0.2);
          CHECK(waited < 10);
          CHECK(std::string(e.what()).find("did not complete within 200 ms") != std::string::npos);
        }
        CHECK(cluster->broken());
        const auto again = std::chrono::steady_clock::now();
        CHECK_THROWS_AS((void)cluster->allGather(mine), ClusterError);
        CHECK(std::chrono::duration<double>(std::chrono::steady_clock::now() - again).count() < 1);
      });
      CHECK(messageOf(failures[0]) == "");
    });
  }

  TEST_CASE("Cluster: bad settings are ConfigErrors") {
    CHECK_THROWS_AS(InProcessCluster::create(0), ConfigError);
    auto one = InProcessCluster::create(1).front();
    CHECK_THROWS_AS(one->setTimeout(std::chrono::milliseconds(0)), ConfigError);
    std::vector<float> v(2);
    CHECK_THROWS_AS(one->broadcast(std::span<float>(v), 1), ConfigError);
    one->allReduceSum(std::span<float>(v));  // one rank: its own values
    CHECK(v == std::vector<float>(2, 0.0f));
  }
}

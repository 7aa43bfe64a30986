#include <dl4cpp/config.h>
#include <doctest/doctest.h>

#include <climits>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "nn/core/Error.h"
#include "parallel/cluster/CountChunks.h"
#include "parallel/cluster/MpiCluster.h"

using namespace dl4cpp;
using namespace dl4cpp::parallel;

TEST_SUITE("parallel") {
  TEST_CASE("MpiCluster: without MPI built in, world() is a ClusterError naming DL4CPP_WITH_MPI") {
#if DL4CPP_HAVE_MPI
    // The MPI build's world() runs in processes of their own: dl4cpp_cluster_check (CTest
    // MpiCluster.*), since MPI, once started, stays for the rest of the process.
    std::cout << "skipped: this build has MPI; MpiCluster.singleton checks its world()"
              << std::endl;
#else
    try {
      MpiCluster::world();
      FAIL("world() returned a cluster in a build without MPI");
    } catch (const ClusterError& e) {
      const std::string message = e.what();
      CHECK(message.find("built without MPI") != std::string::npos);
      CHECK(message.find("DL4CPP_WITH_MPI") != std::string::npos);
    }
    // Every call says so, not only the first.
    CHECK_THROWS_AS(MpiCluster::world(), ClusterError);
#endif
  }

  TEST_CASE("MpiCluster: buffers beyond MPI's int counts go in pieces of at most INT_MAX") {
    std::vector<std::pair<std::size_t, std::size_t>> pieces;
    const auto record = [&](std::size_t offset, std::size_t count) {
      pieces.emplace_back(offset, count);
    };
    const std::size_t limit = INT_MAX;
    forEachCountChunk(0, limit, record);
    CHECK(pieces.empty());
    forEachCountChunk(431080, limit, record);
    CHECK(pieces == decltype(pieces){{0, 431080}});
    pieces.clear();
    forEachCountChunk(limit, limit, record);
    CHECK(pieces == decltype(pieces){{0, limit}});
    pieces.clear();
    forEachCountChunk(2 * limit + 5, limit, record);
    CHECK(pieces == decltype(pieces){{0, limit}, {limit, limit}, {2 * limit, 5}});
  }
}

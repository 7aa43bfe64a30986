// MpiCluster in a build without MPI (DL4CPP_WITH_MPI=OFF, or no MPI found): world() says so. No
// MpiCluster can exist here, so the members below are never reached; they are defined because a
// call through MpiCluster (a final class) binds to them directly.
#include <dl4cpp/config.h>

#include "nn/core/Error.h"
#include "parallel/cluster/MpiCluster.h"

namespace dl4cpp::parallel {

namespace {
[[noreturn]] void noMpi() {
  throw ClusterError(
      "MpiCluster::world(): dl4cpp " DL4CPP_VERSION
      " was built without MPI (DL4CPP_WITH_MPI=OFF or no MPI found): install Open MPI "
      "(libopenmpi-dev, openmpi-bin) and rebuild with -DDL4CPP_WITH_MPI=ON, or train in one "
      "process without a cluster");
}
}  // namespace

struct MpiCluster::State {};

std::shared_ptr<MpiCluster> MpiCluster::world() { noMpi(); }

MpiCluster::MpiCluster(std::unique_ptr<State> state) : state_(std::move(state)) {}
MpiCluster::~MpiCluster() = default;
int MpiCluster::rank() const { noMpi(); }
int MpiCluster::size() const { noMpi(); }
std::string MpiCluster::describe() const { noMpi(); }
bool MpiCluster::broken() const { noMpi(); }
std::vector<double> MpiCluster::allGather(std::span<const double>) { noMpi(); }
std::vector<int32_t> MpiCluster::allGatherVarying(std::span<const int32_t>, std::vector<int64_t>&) {
  noMpi();
}
void MpiCluster::allReduceSum(std::span<float>) { noMpi(); }
void MpiCluster::allReduceSum(std::span<double>) { noMpi(); }
void MpiCluster::broadcast(std::span<float>, int) { noMpi(); }
void MpiCluster::broadcast(std::span<double>, int) { noMpi(); }

}  // namespace dl4cpp::parallel

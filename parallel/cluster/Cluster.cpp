#include "parallel/cluster/Cluster.h"

#include <fmt/format.h>

#include "nn/core/Error.h"

namespace dl4cpp::parallel {

void Cluster::setTimeout(std::chrono::milliseconds t) {
  if (t.count() <= 0)
    throw ConfigError(
        fmt::format("Cluster::setTimeout: the timeout must be > 0 ms, got {} ms", t.count()));
  timeout_ = t;
}

}  // namespace dl4cpp::parallel

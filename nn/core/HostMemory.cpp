#include "nn/core/HostMemory.h"

#include <sys/sysinfo.h>

namespace dl4cpp {

uint64_t hostMemoryBytes() {
  static const uint64_t bytes = [] {
    struct sysinfo info {};
    if (::sysinfo(&info) != 0) return UINT64_MAX;
    return (uint64_t{info.totalram} + info.totalswap) * info.mem_unit;
  }();
  return bytes;
}

}  // namespace dl4cpp

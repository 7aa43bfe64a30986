#include "parallel/CpuAffinity.h"

#include <pthread.h>
#include <sched.h>

#include <vector>

namespace dl4cpp::parallel {

namespace {
std::vector<int> allowedCores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cores;
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cores;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set)) cores.push_back(cpu);
  return cores;
}
}  // namespace

int allowedCoreCount() {
  const auto cores = allowedCores();
  return cores.empty() ? 1 : static_cast<int>(cores.size());
}

bool pinCurrentThreadToCores(int first, int count) {
  const auto cores = allowedCores();
  if (first < 0 || count < 1 || first + count > static_cast<int>(cores.size())) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int i = first; i < first + count; ++i) CPU_SET(cores[static_cast<size_t>(i)], &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace dl4cpp::parallel

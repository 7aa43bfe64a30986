#include <doctest/doctest.h>
#include <sched.h>

#include <thread>

#include "parallel/CpuAffinity.h"

using namespace dl4cpp::parallel;

TEST_SUITE("parallel") {
  TEST_CASE(
      "CpuAffinity: a thread pinned to one allowed core runs only there, bad ranges are refused") {
    const int cores = allowedCoreCount();
    REQUIRE(cores >= 1);
    std::thread([&] {
      REQUIRE(pinCurrentThreadToCores(cores - 1, 1));
      cpu_set_t set;
      CPU_ZERO(&set);
      REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
      CHECK(CPU_COUNT(&set) == 1);
      CHECK(sched_getcpu() >= 0);
      CHECK(CPU_ISSET(sched_getcpu(), &set));
    }).join();
    CHECK_FALSE(pinCurrentThreadToCores(cores, 1));
    CHECK_FALSE(pinCurrentThreadToCores(0, cores + 1));
    CHECK_FALSE(pinCurrentThreadToCores(-1, 1));
  }
}

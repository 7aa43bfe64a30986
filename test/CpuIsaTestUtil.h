#pragma once
// Helpers for tests whose expectations depend on the ISA level the process runs at (CpuIsa.h;
// scripts/test.sh runs the suite at every level the machine has). Such a test names the level it
// ran at, and a test that needs a higher level prints "skipped: ...", which CTest's
// SKIP_REGULAR_EXPRESSION (test/CMakeLists.txt) reports as a skip, never as a pass.
#include <doctest/doctest.h>

#include <iostream>
#include <string>

#include "nn/backend/cpu/CpuIsa.h"

namespace testutil {

// Whether the process runs at `level` or above; logs the level the test ran at.
inline bool runsAt(dl4cpp::CpuIsa level) {
  MESSAGE("ISA level: " << std::string(dl4cpp::cpuIsaName(dl4cpp::cpuIsa())));
  return dl4cpp::cpuIsa() >= level;
}

// Prints the skip line and returns true unless the process runs at `level` or above.
inline bool skippedBelow(dl4cpp::CpuIsa level, const char* what) {
  if (dl4cpp::cpuIsa() >= level) return false;
  std::cout << "skipped: " << what << " needs the " << dl4cpp::cpuIsaName(level)
            << " level; this process runs at " << dl4cpp::cpuIsaName(dl4cpp::cpuIsa()) << std::endl;
  return true;
}

}  // namespace testutil
